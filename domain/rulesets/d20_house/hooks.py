"""The d20 house rules' part of encounter sequencing: the hooks of the core encounter engine.

The engine (``domain/core/encounters.py``) owns encounters, initiative order, the surprise
round, turn boundaries as facts, delay / ready, the action economy and skipping the dead
(ruling 20). :class:`D20Encounters` tells it what differs in this system:

* :meth:`~D20Encounters.initiative_entry` (DH-3, B-DH-10): d20 + Agility modifier + initiative
  modifiers; equal scores go by the higher modifier (``rank = [score, bonus]``), equal
  modifiers roll off (a recorded ``InitiativeTieBroken``).
* the action table (``tables.D20_ACTIONS``: DH-4 budgets, B-DH-11 the surprise round's one
  standard or move action) and the condition limits (DH-11 disabled, DH-12 dying:
  ``tables.ACTION_LIMITS``).
* :meth:`~D20Encounters.encounter_started` (DH-2): every participant flat-footed until its
  first turn.
* :meth:`~D20Encounters.round_started` (B-DH-14 with ``dh.aoo_reset = round_start``).
* :meth:`~D20Encounters.turn_started` (DH-2, B-DH-14, DH-4): no longer flat-footed; its count
  of attacks of opportunity starts again; running ends.
* :meth:`~D20Encounters.rolls_owed_between_rounds` (ruling 26, DH-12, B-DH-3): right after the
  last turn of a round, one ``StabilizationRolled`` (d%) for each participant dying and not
  stable at that moment that has not rolled for this round; the next round cannot start
  before (``ROLLS_PENDING``). Also every massive-damage save owed (B-DH-1), which a turn owes
  before it ends too (:meth:`~D20Encounters.rolls_owed_at_turn_end`).
* :meth:`~D20Encounters.encounter_ended`: nobody is flat-footed any more.

Each hook changes only this ruleset's creatures, through ``state.own``, and reports what it
did (merged into the turn fact's outcome; the narrator tells it).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import encounters as core
from domain.core.encounters import ActionLimit, Encounter
from domain.errors import InvalidInput
from domain.rulesets.d20_house import actions
from domain.rulesets.d20_house.state import Creature, D20State
from domain.rulesets.d20_house.tables import ACTION_LIMITS, D20_ACTIONS


def _alive_participants(state: D20State, enc: Encounter) -> list[str]:
    return [
        cid for cid in enc.participants if cid in state.creatures and state.creatures[cid].dead_by is None
    ]


def massive_saves_owed(state: D20State) -> list[core.Owed]:
    """B-DH-1: every massive-damage save a creature owes now (rolled at once, before the turn
    ends)."""
    owed: list[core.Owed] = []
    for cid in sorted(state.creatures):
        for s in state.creatures[cid].massive_saves:
            owed.append(("MassiveDamageSaveRolled", {"creature": cid, "attack": s["attack"]}))
    return owed


def stabilization_owed(state: D20State, enc: Encounter) -> list[core.Owed]:
    """Ruling 26: one roll for each participant dying (and not stable) right after the last turn
    of the round, including one that began dying this round, unless it already rolled for it."""
    owed: list[core.Owed] = []
    for cid in enc.participants:
        c = state.creatures.get(cid)
        if c is None or c.band != "dying" or c.stable or c.last_stabilization == [enc.id, enc.round]:
            continue
        owed.append(("StabilizationRolled", {"creature": cid, "encounter_id": enc.id, "round": enc.round}))
    return owed


def round_is_over(state: D20State, enc: Encounter) -> bool:
    """Between the last turn of a round and the first of the next (the moment of ruling 26)."""
    return enc.state == core.RUNNING and enc.current is None and core.peek(state, enc, RULES)[1]


class D20Encounters(core.Rules):
    """The hooks the d20 house rules give the core encounter engine."""

    actions = D20_ACTIONS
    reroll_each_round = False
    owed_rolls = {
        "StabilizationRolled": ("stabilisation roll", "d%"),
        "MassiveDamageSaveRolled": ("massive-damage save", "1d20"),
    }
    skip_texts = {"dead": "dead (ruling 20)", "surprised": "surprised: no turn in the surprise round (DH-1)"}

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        """DH-3 / B-DH-10: the roll holds the d20 (and any situational modifier); the sheet's
        bonus (Agility modifier + initiative modifiers) is added here. A group uses its first
        creature's bonus."""
        roll = payload["roll"]
        natural = dice.natural(roll)
        if natural is None:
            raise InvalidInput("an initiative roll is a single d20 (plus modifiers)", field="roll")
        bonus = state.creatures[creatures[0]].initiative_bonus()
        score = dice.roll_total(roll) + bonus
        return {"score": score, "bonus": bonus, "natural": natural, "rank": [score, bonus]}

    def is_dead(self, state: Any, cid: str) -> bool:
        return state.creatures[cid].dead_by is not None

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]:
        """DH-11 / DH-12: what its conditions allow (the surprise round is the table's)."""
        c: Creature = state.creatures[cid]
        limit = actions.allowance(c)
        return ACTION_LIMITS[limit], (c.life if limit != "all" else None)

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[core.Owed]:
        return massive_saves_owed(state)

    def rolls_owed_between_rounds(self, state: Any, enc: Encounter) -> list[core.Owed]:
        return massive_saves_owed(state) + stabilization_owed(state, enc)

    def encounter_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """DH-2: all characters are flat-footed until their first turns."""
        flat = []
        for cid in _alive_participants(state, enc):
            c: Creature = state.own(cid)
            c.flat_footed, c.aoo_used, c.running = True, 0, False
            flat.append(cid)
        return {"flat_footed": flat}

    def round_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """B-DH-14 when a table counts attacks of opportunity from each round's start."""
        if state.flags["dh.aoo_reset"] != "round_start":
            return {}
        reset = []
        for cid in enc.participants:
            if cid in state.creatures and state.creatures[cid].aoo_used:
                state.own(cid).aoo_used = 0
                reset.append(cid)
        return {"aoo_reset": reset} if reset else {}

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        """DH-2: flat-footed ends at the creature's first turn; B-DH-14: its count of attacks of
        opportunity starts again (``dh.aoo_reset``); DH-4: running ends."""
        c: Creature = state.creatures[cid]
        reset = state.flags["dh.aoo_reset"] == "own_turn_start" and c.aoo_used > 0
        if not (c.flat_footed or c.running or reset):
            return {"surprise_round": True} if enc.round == 0 else {}
        c = state.own(cid)
        out: dict[str, Any] = {}
        if c.flat_footed:
            c.flat_footed = False
            out["no_longer_flat_footed"] = True
        if reset:
            c.aoo_used = 0
        c.running = False
        if enc.round == 0:
            out["surprise_round"] = True
        return out

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        """Ruling 26: when this was the round's last turn, the stabilisation rolls it now owes."""
        after = enc.clone()  # the moment right after this turn (the engine sets it once we return)
        after.phase = core.BETWEEN
        wraps = core.peek(state, after, self)[1]
        owed = stabilization_owed(state, enc) if wraps else []
        return {"stabilization_owed": [p["creature"] for _, p in owed]} if owed else {}

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """Nobody is flat-footed or running once the encounter is over."""
        for cid in enc.participants:
            c = state.creatures.get(cid)
            if c is not None and (c.flat_footed or c.running or c.aoo_used):
                c = state.own(cid)
                c.flat_footed, c.running, c.aoo_used = False, False, 0
        return {}


RULES = D20Encounters()
"""The d20 hooks of the core encounter engine."""


def pending_rolls(state: D20State) -> list[core.Owed]:
    """What the table owes now: in a running encounter the engine's answer (massive-damage saves
    before a turn ends; between rounds those and the stabilisation rolls); otherwise any
    massive-damage save owed."""
    return core.pending_rolls(state, RULES) or massive_saves_owed(state)
