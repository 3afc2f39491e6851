"""What a creature may do in a round (DH-4, DH-11, DH-12, B-DH-11), from ``tables.ACTION_SETS``.

A creature's allowance is the most restrictive of its conditions (``all``, ``one`` standard
or move action, ``none``), and ``one`` in the surprise round (B-DH-11). While its own turn is
in progress (``Creature.turn``, opened and closed by the encounter hooks) each action is
counted against the sets the allowance permits; outside a turn only what no round could
ever allow is refused (a disabled creature's full-round action, a dying creature's action).
"""

from __future__ import annotations

from typing import Any

from domain.core.rules import require
from domain.rulesets.d20_house.state import Creature
from domain.rulesets.d20_house.tables import ACTION_SETS, CONDITIONS

BUDGETED = ("standard", "move", "full_round")
ORDER = {"none": 0, "one": 1, "all": 2}


def allowance(c: Creature) -> str:
    """``all``, ``one`` or ``none``: its conditions' most restrictive, and ``one`` in a
    surprise round."""
    found = "all"
    for name in c.conditions():
        limit = CONDITIONS[name].actions
        if ORDER[limit] < ORDER[found]:
            found = limit
    if c.turn is not None and c.turn.get("surprise") and ORDER[found] > ORDER["one"]:
        found = "one"
    return found


def _fits(used: dict[str, int], allowed: dict[str, int]) -> bool:
    return all(used.get(k, 0) <= allowed.get(k, 0) for k in BUDGETED)


def _refusal(c: Creature, limit: str) -> tuple[str, str]:
    if limit == "none":
        return "NOT_CONSCIOUS", f"{c.name} can take no actions (DH-12)"
    if c.band == "disabled":
        return (
            "DISABLED_ONE_ACTION",
            f"{c.name} is disabled: only a standard or a move action each round (DH-11)",
        )
    if limit == "one":
        return "SURPRISE_ROUND_ONE_ACTION", (
            f"in the surprise round {c.name} takes one standard or one move action (B-DH-11)"
        )
    return "NO_ACTION_LEFT", f"{c.name} has no action of that kind left this round (DH-4)"


def check_possible(c: Creature, action: str, ctx: Any) -> None:
    """What no round allows: any action while unable to act, a full-round action when only
    one standard or move action is allowed."""
    limit = allowance(c)
    if action == "free" and limit != "none":
        return
    sets = ACTION_SETS[limit]
    if action in BUDGETED:
        ok = any(_fits({action: 1}, s) for s in sets)
    else:  # a 5-foot step needs the creature able to act at all
        ok = bool(sets)
    if not ok:
        code, message = _refusal(c, limit)
        require(False, message, code, ctx, "action")


def spend(c: Creature, action: str, moves: bool, ctx: Any) -> dict[str, Any] | None:
    """The creature's turn record after ``action`` (None outside its turn); refuses what the
    round no longer allows. Does not change ``c``: the caller stores the result."""
    check_possible(c, action, ctx)
    turn = c.turn
    if turn is None or action == "free":
        return turn
    used = dict(turn["used"])
    out = {**turn, "used": used}
    if action == "five_foot_step":
        require(
            not turn["moved"] and not turn["stepped"],
            f"{c.name} already moved this round: no 5-foot step (DH-4)",
            "FIVE_FOOT_STEP",
            ctx,
            "action",
        )
        out["stepped"] = True
        return out
    if moves:
        require(
            not turn["stepped"],
            f"{c.name} took a 5-foot step this round: no other movement (DH-4)",
            "FIVE_FOOT_STEP",
            ctx,
            "action",
        )
        out["moved"] = True
    used[action] = used.get(action, 0) + 1
    limit = allowance(c)
    if not any(_fits(used, s) for s in ACTION_SETS[limit]):
        code, message = _refusal(c, limit)
        require(False, message, code, ctx, "action")
    return out
