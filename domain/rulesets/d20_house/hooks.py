"""The d20 house rules' part of encounter sequencing, shaped for the core encounter engine's
hooks (SEAM.md "Coming"): the engine owns initiative order, the surprise round, turns and
rounds; at each boundary it calls these functions, which change only this ruleset's
creature state (through ``state.own``) and report what they did.

Hooks take ``(state, encounter, creature_id, ctx)`` for a turn boundary and
``(state, encounter, ctx)`` for an encounter or round boundary. ``encounter`` is the
engine's encounter object; the hooks read only ``id``, ``participants``, ``round`` and
``surprise_round`` from it (read with defaults, so any encounter shape with those works).

* :func:`initiative_bonus` (DH-3): Agility modifier + initiative modifiers.
* :func:`on_encounter_started` (DH-2): every participant flat-footed until its first turn.
* :func:`on_round_started` (B-DH-14 with ``dh.aoo_reset = round_start``).
* :func:`on_turn_started` (DH-2, B-DH-14, B-DH-11, DH-4): no longer flat-footed; the count of
  attacks of opportunity starts again; running ends; the turn's action record opens (one
  standard or move action in the surprise round).
* :func:`on_turn_ended`: the turn's action record closes.
* :func:`owed_between_rounds` (ruling 26, DH-12, B-DH-3): right after the last turn of a round,
  one ``StabilizationRolled`` (without its d%) for each participant dying and not stable
  at that moment.
* :func:`on_encounter_ended`: nobody is flat-footed or in a turn any more.
* :func:`action_sets` (DH-4, DH-11, B-DH-11): the action sets the creature's round allows.
"""

from __future__ import annotations

from typing import Any

from domain.rulesets.d20_house import actions
from domain.rulesets.d20_house.state import Creature, D20State
from domain.rulesets.d20_house.tables import ACTION_SETS


def _participants(state: D20State, encounter: Any) -> list[str]:
    return [cid for cid in getattr(encounter, "participants", ()) if cid in state.creatures]


def initiative_bonus(state: D20State, creature_id: str) -> int:
    """DH-3: d20 + Agility modifier + initiative modifiers (effective Agility: damage counts)."""
    return state.creatures[creature_id].initiative_bonus()


def on_encounter_started(state: D20State, encounter: Any, ctx: Any = None) -> dict[str, Any]:
    """DH-2: all characters are flat-footed until their first turns."""
    flat = []
    for cid in _participants(state, encounter):
        c: Creature = state.own(cid)
        c.flat_footed, c.aoo_used, c.turn, c.running = c.dead_by is None, 0, None, False
        if c.flat_footed:
            flat.append(cid)
    return {"flat_footed": flat}


def on_round_started(state: D20State, encounter: Any, ctx: Any = None) -> dict[str, Any]:
    """B-DH-14 when a table counts attacks of opportunity per round from the round's start."""
    if state.flags["dh.aoo_reset"] != "round_start":
        return {}
    reset = []
    for cid in _participants(state, encounter):
        if state.creatures[cid].aoo_used:
            state.own(cid).aoo_used = 0
            reset.append(cid)
    return {"aoo_reset": reset}


def on_turn_started(state: D20State, encounter: Any, creature_id: str, ctx: Any = None) -> dict[str, Any]:
    """DH-2: flat-footed ends at the creature's first turn; B-DH-14: its count of attacks of
    opportunity starts again (``dh.aoo_reset``); DH-4: running ends; B-DH-11: in the surprise
    round the turn allows one standard or one move action."""
    c: Creature = state.own(creature_id)
    was_flat = c.flat_footed
    c.flat_footed = False
    if state.flags["dh.aoo_reset"] == "own_turn_start":
        c.aoo_used = 0
    c.running = False
    surprise = bool(getattr(encounter, "surprise_round", False))
    c.turn = {
        "round": getattr(encounter, "round", 0),
        "surprise": surprise,
        "used": {},
        "moved": False,
        "stepped": False,
        "full_attack": None,
    }
    return {
        "creature": creature_id,
        "no_longer_flat_footed": was_flat,
        "actions": actions.allowance(c),
        "surprise_round": surprise,
    }


def on_turn_ended(state: D20State, encounter: Any, creature_id: str, ctx: Any = None) -> dict[str, Any]:
    c: Creature = state.own(creature_id)
    used = dict(c.turn["used"]) if c.turn else {}
    c.turn = None
    return {"creature": creature_id, "actions_used": used}


def owed_between_rounds(state: D20State, encounter: Any) -> list[tuple[str, dict[str, Any]]]:
    """Ruling 26: the stabilisation rolls owed right after the last turn of the round, one for
    each participant dying (and not stable) at that moment, including one that began dying
    this round. Facts without their dice: the table adds each d% face."""
    eid = getattr(encounter, "id", None)
    rnd = getattr(encounter, "round", None)
    owed = []
    for cid in _participants(state, encounter):
        c = state.creatures[cid]
        if c.band == "dying" and not c.stable:
            owed.append(("StabilizationRolled", {"creature": cid, "encounter_id": eid, "round": rnd}))
    return owed


def on_encounter_ended(state: D20State, encounter: Any, ctx: Any = None) -> dict[str, Any]:
    for cid in _participants(state, encounter):
        c: Creature = state.creatures[cid]
        if c.flat_footed or c.turn is not None or c.running or c.aoo_used:
            c = state.own(cid)
            c.flat_footed, c.turn, c.running, c.aoo_used = False, None, False, 0
    return {}


def action_sets(state: D20State, encounter: Any, creature_id: str) -> tuple[dict[str, int], ...]:
    """DH-4 / DH-11 / DH-12 / B-DH-11: the action sets this creature's round may use
    (free actions are never counted; a 5-foot step goes with any set when it did not move)."""
    c = state.creatures[creature_id]
    limit = actions.allowance(c)
    if bool(getattr(encounter, "surprise_round", False)) and limit == "all":
        limit = "one"
    return ACTION_SETS[limit]


HOOKS = {
    "initiative_bonus": initiative_bonus,
    "on_encounter_started": on_encounter_started,
    "on_round_started": on_round_started,
    "on_turn_started": on_turn_started,
    "on_turn_ended": on_turn_ended,
    "owed_between_rounds": owed_between_rounds,
    "on_encounter_ended": on_encounter_ended,
    "action_sets": action_sets,
}
