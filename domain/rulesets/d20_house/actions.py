"""What a creature may do in a round (DH-4, DH-11, DH-12, B-DH-11), from ``tables.ACTION_SETS``.

A creature's allowance is the most restrictive of its conditions: ``all``, ``one`` standard or
move action, ``none``. In a running encounter the core encounter engine counts actions against
it (``hooks.D20Encounters.action_limit``, ``tables.D20_ACTIONS``: own turn, budgets, the
surprise round's one action); outside one only what no round could ever allow is refused (a
disabled creature's full-round action, a dying creature's action). What the engine's table
cannot say is here: a 5-foot step and any other movement exclude each other in a round (DH-4),
and the attacks of one full attack (DH-8), kept in the turn's bookkeeping
(``Encounter.turn_log["d20"]``).
"""

from __future__ import annotations

from typing import Any

from domain.core import encounters as core
from domain.core.rules import require
from domain.rulesets.d20_house.state import Creature
from domain.rulesets.d20_house.tables import ACTION_SETS, CONDITIONS

BUDGETED = ("standard", "move", "full_round")
ORDER = {"none": 0, "one": 1, "all": 2}


def allowance(c: Creature) -> str:
    """``all``, ``one`` or ``none``: the most restrictive of its conditions."""
    found = "all"
    for name in c.conditions():
        limit = CONDITIONS[name].actions
        if ORDER[limit] < ORDER[found]:
            found = limit
    return found


def refusal(c: Creature, limit: str) -> tuple[str, str]:
    if limit == "none":
        return "NOT_CONSCIOUS", f"{c.name} can take no actions (DH-12)"
    return "DISABLED_ONE_ACTION", f"{c.name} is disabled: only a standard or a move action each round (DH-11)"


def check_possible(c: Creature, action: str, ctx: Any) -> None:
    """What no round allows: any action while unable to act, a full-round action when only
    one standard or move action is allowed."""
    limit = allowance(c)
    if action in ("free", "readied") and limit != "none":
        return
    sets = ACTION_SETS[limit]
    if action in BUDGETED:
        ok = any(s.get(action, 0) >= 1 for s in sets)
    else:  # a 5-foot step needs the creature able to act at all
        ok = bool(sets)
    if not ok:
        code, message = refusal(c, limit)
        require(False, message, code, ctx, "action")


def own_turn(state: Any, cid: str) -> core.Encounter | None:
    """The running encounter whose turn in progress is ``cid``'s, if any."""
    enc = core.running_for(state, cid)
    return enc if enc is not None and enc.current == cid else None


def turn_record(enc: core.Encounter) -> dict[str, Any]:
    """This turn's d20 bookkeeping: ``moved``, ``stepped``, ``full_attack`` (None or
    ``{"iteratives": [...], "off_hand": bool}``)."""
    found = enc.turn_log.get("d20")
    return dict(found) if found else {"moved": False, "stepped": False, "full_attack": None}


def movement(
    c: Creature, enc: core.Encounter | None, action: str, moves: bool, ctx: Any
) -> dict[str, Any] | None:
    """DH-4: a 5-foot step only when the creature made no other movement this round, and no
    movement after one. Returns the turn's new record (None outside its own turn); the caller
    stores it (``enc.turn_log["d20"]``) once every other check has passed."""
    if enc is None:
        return None
    rec = turn_record(enc)
    if action == "five_foot_step":
        require(
            not rec["moved"] and not rec["stepped"],
            f"{c.name} already moved this round: no 5-foot step (DH-4)",
            "FIVE_FOOT_STEP",
            ctx,
            "action",
        )
        return {**rec, "stepped": True}
    if moves:
        require(
            not rec["stepped"],
            f"{c.name} took a 5-foot step this round: no other movement (DH-4)",
            "FIVE_FOOT_STEP",
            ctx,
            "action",
        )
        return {**rec, "moved": True}
    return rec
