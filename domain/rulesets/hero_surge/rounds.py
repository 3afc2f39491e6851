"""Rounds, initiative bands and turn boundaries (RULES.md A2.1, HS-2, HS-3, B-HS-9, B-HS-18).

Initiative is checked every round (HS-2); the table rules each check's success level (B-HS-1)
and the order follows in bands: critical successes first, critical failures last; inside a
band heroes act before foes (HS-2), then the higher die, then a recorded choice
(``InitiativeOrderChosen``; B-HS-18). A Devastating "knock initiative back" moves the target one
band down this round if it has not acted yet, else on its next round's check (B-HS-18).

The core encounter engine sequences rounds and turns. Until it is on main, the hero's-surge
part of its hooks are plain functions here, named and shaped as the engine's hook protocol
(``EncounterRules``), each changing ``state`` in place and returning a report for the outcome:

* :func:`initiative_entry` ``(state, enc, creatures, payload, ctx)``: a check's entry, with its
  ``rank`` (higher acts first): ``[band from the bottom, hero, die]`` (HS-2, B-HS-18);
* :func:`initiative_order` ``(state, encounter_id, round, participants)``: the round's order,
  with unresolved ties and the participants that have not checked yet (what the engine's
  rank sort gives, for the facts recorded before the engine lands);
* :func:`round_started` ``(state, enc, ctx)``: rank penalties of earlier rounds lapse (B-HS-5);
* :func:`turn_started` ``(state, enc, creature_id, ctx)``: defend ends (HS-5), a dying hero owes
  a luck roll (B-HS-9, ruling 25), per-turn limits reset (B-HS-13);
* :func:`turn_ended` ``(state, enc, creature_id, ctx)``: nothing of its own;
* :func:`rolls_owed_at_turn_end` ``(state, enc, creature_id)``: the luck rolls still owed
  (``ROLLS_PENDING`` until recorded);
* :func:`encounter_ended` ``(state, enc, ctx)``: combat-only marks are cleared;
* :func:`pending_rolls` ``(state)``: every luck roll owed now.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.rules import owned, peek, require
from domain.errors import RuleViolation
from domain.rulesets.hero_surge import vitality as vit
from domain.rulesets.hero_surge.state import HSState, current_round
from domain.rulesets.hero_surge.tables import BAND, LOWEST_BAND, SUCCESS_LEVELS

Handler = Any


def _key(encounter_id: str | None, round_no: int, band: int, side: str) -> str:
    return f"{encounter_id or ''}:{round_no}:{band}:{side}"


def _record(c: Any, encounter_id: str | None, round_no: int) -> dict[str, Any] | None:
    """The creature's initiative check for this round, if it made one."""
    rec: dict[str, Any] | None = c.initiative
    if rec is not None and rec["encounter"] == encounter_id and rec["round"] == round_no:
        return rec
    return None


def _checked(c: Any, encounter_id: str | None, round_no: int) -> bool:
    return _record(c, encounter_id, round_no) is not None


# ------------------------------------------------------------------ facts
def initiative_check_rolled(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-2 / HS-3: a check every round (the surprise round is round 0); its ruled level is its band,
    one lower per knock-back waiting for this check (B-HS-18)."""
    who = peek(state, p["creature"])
    require(not who.dead, f"{who.name} is dead", "CREATURE_DEAD", ctx)
    if _checked(who, p["encounter_id"], p["round"]):
        raise RuleViolation(
            f"{who.name} already checked initiative for round {p['round']}",
            field="creature",
            code="ALREADY_ROLLED",
        )
    entry = initiative_entry(state, None, [who.id], p, ctx)
    c = owned(state, who.id)
    knocked = entry["knocked_back"]
    band = BAND[entry["band"]]
    die = entry["die"]
    c.initiative = {
        "encounter": p["encounter_id"],
        "round": p["round"],
        "level": p["success_level"],
        "band": band,
        "die": die,
        "knocked_back": knocked,
        "rank": entry["rank"],
    }
    c.knockback_pending = 0
    return {
        "creature": c.id,
        "round": p["round"],
        "success_level": p["success_level"],
        "band": SUCCESS_LEVELS[band],
        "die": die,
        "knocked_back": knocked,
    }


def initiative_order_chosen(state: HSState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """HS-2 / B-HS-18: the heroes decide between themselves, the GM orders the foes, inside one band."""
    enc, rnd, band, side = p["encounter_id"], p["round"], BAND[p["success_level"]], p["side"]
    order = p["order"]
    if len(set(order)) != len(order) or not order:
        raise RuleViolation("name each creature once", field="order", code="TIE_ORDER_WRONG")
    for cid in order:
        c = peek(state, cid, "order")
        if not _checked(c, enc, rnd):
            raise RuleViolation(
                f"{c.name} has not checked initiative for round {rnd}", field="order", code="NOT_ROLLED"
            )
    members = _side_in_band(state, enc, rnd, band, side)
    require(
        set(order) == set(members),
        f"the {side} in the {p['success_level'].replace('_', ' ')} band of round {rnd} are {sorted(members)}",
        "TIE_ORDER_WRONG",
        ctx,
        "order",
    )
    state.initiative_orders[_key(enc, rnd, band, side)] = list(order)
    return {"round": rnd, "band": p["success_level"], "side": side, "order": list(order)}


def _side_in_band(state: HSState, enc: str | None, rnd: int, band: int, side: str) -> list[str]:
    hero = side == "heroes"
    return [
        cid
        for cid, c in state.creatures.items()
        if (rec := _record(c, enc, rnd)) is not None and rec["band"] == band and c.hero == hero
    ]


def knock_back(state: HSState, target: str, by: str, ctx: Any) -> dict[str, Any]:
    """B-HS-18: one band down this round if the target has not acted yet, else on its next check."""
    t = peek(state, target, "target")
    require(not t.dead, f"{t.name} is dead", "CREATURE_DEAD", ctx, "target")
    c = owned(state, target, "target")
    rec = c.initiative
    now = current_round(state)
    this_round = (
        rec is not None
        and (now is None or [rec["encounter"], rec["round"]] == now)
        and c.acted_round != [rec["encounter"], rec["round"]]
    )
    if this_round:
        assert rec is not None
        band = min(LOWEST_BAND, rec["band"] + 1)
        c.initiative = {
            **rec,
            "band": band,
            "knocked_back": rec["knocked_back"] + 1,
            "rank": rank(band, c.hero, rec["die"]),
        }
        return {
            "target": c.id,
            "by": by,
            "applies": "this_round",
            "round": rec["round"],
            "band": SUCCESS_LEVELS[band],
        }
    c.knockback_pending += 1
    return {"target": c.id, "by": by, "applies": "next_round", "pending": c.knockback_pending}


# ------------------------------------------------------------------ hooks for the encounter engine
def initiative_order(
    state: HSState, encounter_id: str | None, round_no: int, participants: list[str]
) -> dict[str, Any]:
    """The round's order (HS-2, B-HS-18): by band; heroes, then foes; then the higher die, unless a
    recorded choice orders that side of the band. Ties no choice settles are reported, in the
    order they stand (by id), for the table to resolve with ``InitiativeOrderChosen``."""
    order: list[str] = []
    bands: list[dict[str, Any]] = []
    ties: list[dict[str, Any]] = []
    missing = []
    rows: dict[int, dict[str, list[tuple[list[int], str]]]] = {}
    for cid in participants:
        c = state.creatures.get(cid)
        if c is None or c.dead:
            continue
        rec = _record(c, encounter_id, round_no)
        if rec is None:
            missing.append(cid)
            continue
        side = "heroes" if c.hero else "foes"
        rows.setdefault(rec["band"], {"heroes": [], "foes": []})[side].append((rec["rank"], cid))
    for band in sorted(rows):
        entry: dict[str, Any] = {"success_level": SUCCESS_LEVELS[band]}
        for side in ("heroes", "foes"):
            members = sorted(rows[band][side], key=lambda m: ([-x for x in m[0]], m[1]))
            chosen = state.initiative_orders.get(_key(encounter_id, round_no, band, side))
            if chosen is not None and set(chosen) == {cid for _, cid in members}:
                ranked = list(chosen)
            else:
                ranked = [cid for _, cid in members]
                by_rank: dict[tuple[int, ...], list[str]] = {}
                for r, cid in members:
                    by_rank.setdefault(tuple(r), []).append(cid)
                for key, tied in by_rank.items():
                    if len(tied) > 1:
                        ties.append(
                            {
                                "success_level": SUCCESS_LEVELS[band],
                                "side": side,
                                "die": key[-1],
                                "creatures": tied,
                            }
                        )
            entry[side] = ranked
            order.extend(ranked)
        bands.append(entry)
    return {"order": order, "bands": bands, "ties": ties, "missing": missing}


def rank(band: int, hero: bool, die: int) -> list[int]:
    """HS-2 / B-HS-18 as a rank compared item by item, higher first: the band (critical successes
    first), heroes before foes in a band, then the higher die."""
    return [LOWEST_BAND - band, 1 if hero else 0, die]


def initiative_entry(
    state: HSState, enc: Any, creatures: list[str], payload: dict[str, Any], ctx: Any
) -> dict[str, Any]:
    """A check's place in the order (pure): its band (the ruled level, one lower per knock-back
    waiting for it), heroes before foes, then the higher die (HS-2, B-HS-18). The rank compares
    item by item, higher first; equal ranks are a tie the table settles by a recorded choice."""
    c = state.creatures[creatures[0]]
    die = dice.natural(payload["roll"])
    if die is None:
        die = dice.roll_total(payload["roll"])
    band = min(LOWEST_BAND, BAND[payload["success_level"]] + c.knockback_pending)
    return {
        "rank": rank(band, c.hero, die),
        "success_level": payload["success_level"],
        "band": SUCCESS_LEVELS[band],
        "die": die,
        "knocked_back": c.knockback_pending,
    }


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
    rolls, resolved attacks, luck rolls and band orders are dropped (nothing after the fight cites
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
    for key in [k for k in state.initiative_orders if k.startswith(f"{enc.id}:")]:
        del state.initiative_orders[key]
    return {"cleared": cleared} if cleared else {}


def pending_rolls(state: HSState) -> list[tuple[str, dict[str, Any]]]:
    """The luck rolls dying heroes owe (B-HS-9), one fact each, without dice."""
    out = []
    for cid, c in state.creatures.items():
        for owed in c.luck_owed:
            out.append(("LuckRollMade", {"creature": cid, "context": owed["context"]}))
    return out


HANDLERS: dict[str, Handler] = {
    "InitiativeCheckRolled": initiative_check_rolled,
    "InitiativeOrderChosen": initiative_order_chosen,
}
