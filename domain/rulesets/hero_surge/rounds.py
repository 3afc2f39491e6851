"""Rounds, initiative bands and turn boundaries (RULES.md A2.1, HS-2, HS-3, B-HS-9, B-HS-18).

Initiative is checked every round (HS-2); the table rules each check's success level (B-HS-1)
and the order follows in bands: critical successes first, critical failures last; inside a
band heroes act before foes (HS-2), then the higher die, then a recorded choice
(``InitiativeOrderChosen``; B-HS-18). A Devastating "knock initiative back" moves the target one
band down this round if it has not acted yet, else on its next round's check (B-HS-18).

The core encounter engine sequences rounds and turns (``encounter.py`` gives it this system's
hooks); this module holds the hero's-surge part, each changing ``state`` in place and returning a
report for the outcome:

* :func:`initiative_entry` ``(state, enc, creatures, payload, ctx)``: a check's entry, with its
  ``rank`` (higher acts first): ``[band from the bottom, hero, die]`` (HS-2, B-HS-18);
* :func:`knock_back`: one band down in this round's entries (the rest of the round re-sorted), or
  in the next round's check (B-HS-18); :func:`bands`: the order by band, for the views;
* :func:`round_started` ``(state, enc, ctx)``: rank penalties of earlier rounds lapse (B-HS-5);
* :func:`turn_started` ``(state, enc, creature_id, ctx)``: defend ends (HS-5), a dying hero owes
  a luck roll (B-HS-9, ruling 25), per-turn limits reset (B-HS-13);
* :func:`turn_ended` ``(state, enc, creature_id, ctx)``: nothing of its own;
* :func:`rolls_owed_at_turn_end` ``(state, enc, creature_id)``: the luck rolls still owed
  (``ROLLS_PENDING`` until recorded);
* :func:`encounter_ended` ``(state, enc, ctx)``: combat-only marks are cleared;
* :func:`luck_owed` ``(state)``: every luck roll owed now.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import encounters as core
from domain.core.rules import owned, peek, require
from domain.errors import InvalidInput
from domain.rulesets.hero_surge import vitality as vit
from domain.rulesets.hero_surge.state import HSState
from domain.rulesets.hero_surge.tables import BAND, LOWEST_BAND, SUCCESS_LEVELS


# ------------------------------------------------------------------ initiative in the engine
def initiative_entry(
    state: HSState, enc: Any, creatures: list[str], payload: dict[str, Any], ctx: Any
) -> dict[str, Any]:
    """A check's place in the order (pure; the engine's ``initiative_entry``): its band (the ruled
    level, one lower per knock-back waiting for it), heroes before foes, then the higher die
    (HS-2, B-HS-18). The rank compares item by item, higher first; equal ranks are a tie the
    table settles by a recorded choice (``InitiativeOrderChosen``)."""
    level = payload.get("success_level")
    if level not in BAND:
        raise InvalidInput(
            "a hero's-surge initiative check carries the success level the table ruled (B-HS-1)",
            field="success_level",
        )
    c = state.creatures[creatures[0]]
    die = dice.natural(payload["roll"])
    if die is None:
        die = dice.roll_total(payload["roll"])
    band = min(LOWEST_BAND, BAND[level] + c.knockback_pending)
    return {
        "rank": rank(band, c.hero, die),
        "success_level": level,
        "band": SUCCESS_LEVELS[band],
        "die": die,
        "knocked_back": c.knockback_pending,
    }


def rank(band: int, hero: bool, die: int) -> list[int]:
    """HS-2 / B-HS-18 as a rank compared item by item, higher first: the band (critical successes
    first), heroes before foes in a band, then the higher die."""
    return [LOWEST_BAND - band, 1 if hero else 0, die]


def _lowered(entry: dict[str, Any], hero: bool) -> dict[str, Any]:
    """An entry one band down (B-HS-18); a recorded order inside its old band no longer applies."""
    band = min(LOWEST_BAND, BAND[entry["band"]] + 1)
    out = {k: v for k, v in entry.items() if k not in ("tie_rank", "tie_with", "tie_method", "chosen")}
    return {
        **out,
        "band": SUCCESS_LEVELS[band],
        "rank": rank(band, hero, int(entry["die"])),
        "knocked_back": int(entry.get("knocked_back", 0)) + 1,
    }


def knock_back(state: HSState, target: str, by: str, ctx: Any) -> dict[str, Any]:
    """B-HS-18: one band down this round if the target has not acted yet (the rest of the round is
    re-sorted), else on its next round's check (lowered at once if that check is recorded)."""
    t = peek(state, target, "target")
    require(not t.dead, f"{t.name} is dead", "CREATURE_DEAD", ctx, "target")
    enc = state.encounter
    in_play = enc is not None and enc.state in (core.SETUP, core.RUNNING) and target in enc.participants
    if in_play:
        acted = t.acted_round == [enc.id, enc.round] and enc.state == core.RUNNING
        if not acted and target in enc.initiative:
            enc.initiative[target] = _lowered(enc.initiative[target], t.hero)
            if enc.state == core.RUNNING:
                core.resort_remaining(enc)
            return {
                "target": target,
                "by": by,
                "applies": "this_round",
                "round": enc.round,
                "band": enc.initiative[target]["band"],
            }
        if acted and target in enc.upcoming:
            enc.upcoming[target] = _lowered(enc.upcoming[target], t.hero)
            return {
                "target": target,
                "by": by,
                "applies": "next_round",
                "round": enc.round + 1,
                "band": enc.upcoming[target]["band"],
            }
    c = owned(state, target, "target")
    c.knockback_pending += 1
    return {"target": c.id, "by": by, "applies": "next_round", "pending": c.knockback_pending}


def bands(state: HSState, enc: Any, entries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The order by band (HS-2): per success level, the heroes, then the foes, as they act."""
    order = core.sort_order(entries, enc.participants)
    out: list[dict[str, Any]] = []
    for level in SUCCESS_LEVELS:
        members = [cid for cid in order if cid in entries and entries[cid]["band"] == level]
        if not members:
            continue
        heroes = [cid for cid in members if state.creatures[cid].hero]
        out.append(
            {
                "success_level": level,
                "heroes": heroes,
                "foes": [cid for cid in members if cid not in heroes],
            }
        )
    return out


def round_started(state: HSState, encounter: Any, ctx: Any) -> dict[str, Any]:
    """C2.2 RoundStarted: rank penalties whose last round has passed lapse (B-HS-5: "before the end
    of the next round")."""
    expired: dict[str, list[str]] = {}
    for cid in encounter.participants:
        c = state.creatures.get(cid)
        if c is None or not c.rank_penalties:
            continue
        keep = [
            x
            for x in c.rank_penalties
            if x["until_round"] is None
            or x["until_round"][0] != encounter.id
            or x["until_round"][1] >= encounter.round
        ]
        if len(keep) != len(c.rank_penalties):
            mine = state.own(cid)
            expired[cid] = [x["id"] for x in c.rank_penalties if x not in keep]
            mine.rank_penalties = keep
    return {"rank_penalties_expired": expired} if expired else {}


def turn_started(state: HSState, encounter: Any, creature_id: str, ctx: Any) -> dict[str, Any]:
    """At the start of a creature's own turn: its defend ends (HS-5); a heroism surge is allowed
    again (B-HS-13); a full-round action's movement forfeit ends; a dying hero owes a luck roll
    (HS-14, B-HS-9, ruling 25: only a hero dying at the start of its own turn)."""
    c = state.creatures.get(creature_id)
    if c is None or c.dead:
        return {}
    c = state.own(creature_id)
    report: dict[str, Any] = {}
    if c.defend is not None:
        report["defend_ended"] = True
        c.defend = None
    c.heroism_used = False
    c.movement_forfeited = False
    c.acted_round = [encounter.id, encounter.round]
    if c.full_round is not None:
        report["full_round_action"] = dict(c.full_round)  # HS-6: it completes, or is maintained, now
    if c.hero and c.dying:
        events: list[dict[str, Any]] = []
        vit.owe_luck(c, "dying_turn_start", ctx.seq, events)
        report["luck_roll_owed"] = "dying_turn_start"
    return report


def turn_ended(state: HSState, encounter: Any, creature_id: str, ctx: Any) -> dict[str, Any]:
    """Nothing happens at the end of a turn in this system; rolls still owed block it (pending_rolls)."""
    return {}


def rolls_owed_at_turn_end(state: HSState, enc: Any, creature_id: str) -> list[tuple[str, dict[str, Any]]]:
    """A turn cannot end while a participant owes a luck roll (HS-14: "you must make a luck roll")."""
    return [
        ("LuckRollMade", {"creature": cid, "context": owed["context"]})
        for cid in enc.participants
        if cid in state.creatures
        for owed in state.creatures[cid].luck_owed
    ]


def encounter_ended(state: HSState, enc: Any, ctx: Any) -> dict[str, Any]:
    """Combat-only marks end with the encounter: defend, rank penalties, knock-backs waiting for a
    check, broken-up attacks, the heroism mark. The records of the encounter's attempts, damage
    rolls, resolved attacks and luck rolls are dropped (nothing after the fight cites
    them; a correction refolds from before it), so the state does not grow with the campaign."""
    cleared = []
    for cid in enc.participants:
        c = state.creatures.get(cid)
        if c is None:
            continue
        if c.defend or c.rank_penalties or c.knockback_pending or c.broken_up or c.heroism_used:
            mine = state.own(cid)
            mine.defend, mine.rank_penalties, mine.knockback_pending = None, [], 0
            mine.broken_up = mine.heroism_used = False
            cleared.append(cid)
    since = int(getattr(enc, "started_at", 0))
    for records in (state.attempts, state.damage, state.incoming, state.luck_rolls):
        for key in [k for k, r in records.items() if r["seq"] >= since]:
            del records[key]
    return {"cleared": cleared} if cleared else {}


def luck_owed(state: HSState) -> list[tuple[str, dict[str, Any]]]:
    """The luck rolls dying heroes owe (B-HS-9), one fact each, without dice."""
    out = []
    for cid, c in state.creatures.items():
        for owed in c.luck_owed:
            out.append(("LuckRollMade", {"creature": cid, "context": owed["context"]}))
    return out
