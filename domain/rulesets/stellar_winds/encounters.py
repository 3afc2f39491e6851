"""Stellar Winds encounters: initiative, turns, the action economy and durations.

Facts record only what happened at the table: who is in the encounter, the
surprise ruling, each initiative d20, tie-breaks, "this turn is over", delays,
readied actions, actions taken, effects applied / sustained / ended, saving
throws. The turn boundaries are *derived* by the fold (RULES.md C0.6): when a
``TurnEnded`` is folded, the fold runs the end-of-turn steps of the creature
whose turn it was (SW-10), finds the next creature that takes a turn (dead
creatures are skipped, adopted ruling 8; surprised creatures get no turn in
the surprise round, SW-5 / B-SW-19), wraps the round (SW-1 step 6) and runs
that creature's start-of-turn steps (SW-7): ongoing damage (SW-47), then
regeneration (SW-39, B-SW-22), then the effects that end at the start of its
turn. Correcting an earlier fact therefore corrects every derived tick.

Turn counting. The encounter numbers turns as they start (``turn_log["turn_no"]``).
Each effect records the number current when it was applied
(``duration["applied_turn"]``), and each creature the number of the turn it
last started (``initiative[c]["turn_started"]``). "Until the start / end of
X's next turn" (SW-44, anchor per B-X-2) then means exactly: the first turn
of X that *starts after* the effect was applied. An effect applied during X's
own turn therefore lasts through X's following turn (4e).

Every handler checks all of its preconditions before it changes anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from domain import dice
from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets.stellar_winds import damage as dmg
from domain.rulesets.stellar_winds import effects
from domain.rulesets.stellar_winds.rules import _holds, creature, in_turn, not_dead, require
from domain.rulesets.stellar_winds.state import Creature, Encounter, SWState, initiative_bonus
from domain.rulesets.stellar_winds.tables import (
    ACTION_KINDS,
    ACTION_LIMITS,
    ACTION_SETS,
    CONDITIONS,
    SUBSTITUTIONS,
    SURPRISE_ROUND_LIMIT,
    TURN_ACTIONS,
    ActionLimit,
)

Handler = Callable[[SWState, dict[str, Any], Any], dict[str, Any]]

# Refusal codes for the condition-driven action limits (A1.10).
LIMIT_CODES = {"one": "DAZED_ONE_ACTION", "free_only": "FREE_ACTIONS_ONLY", "none": "CANNOT_ACT"}
SAVE_DC = 10  # SW-45


# ------------------------------------------------------------------ lookups
def _encounter(state: SWState, eid: str, *, running: bool = False) -> Encounter:
    enc = state.encounters.get(eid)
    if enc is None:
        raise NotFound(f"no encounter {eid!r} in this campaign", field="encounter_id")
    if enc.state == "ended" or state.active_encounter != eid:
        raise RuleViolation(
            f"encounter {enc.name or eid!r} has ended", field="encounter_id", code="ENCOUNTER_ENDED"
        )
    if running and enc.state != "running":
        raise RuleViolation(
            f"encounter {enc.name or eid!r} has not started its turns: every participant needs an initiative "
            f"roll and every tie a tie-break (unresolved: {unresolved_ties(enc) or 'none'})",
            field="encounter_id",
            code="ENCOUNTER_NOT_RUNNING",
        )
    return enc


def _participant(state: SWState, enc: Encounter, cid: str, field: str = "creature") -> Creature:
    c = creature(state, cid, field)
    if cid not in enc.participants:
        raise RuleViolation(
            f"{c.name} is not in encounter {enc.name or enc.id!r}", field=field, code="NOT_IN_ENCOUNTER"
        )
    return c


def _running(state: SWState, c: Creature) -> Encounter | None:
    """The running encounter this creature takes part in, if any."""
    enc = state.encounter
    if enc is None or enc.state != "running" or c.id not in enc.participants:
        return None
    return enc


def _active(e: dict[str, Any]) -> bool:
    return not e.get("pending")


# ------------------------------------------------------- encounter and order
def encounter_started(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-1: the encounter begins; it is set up until every initiative is known."""
    eid, who = p["encounter_id"], p["participants"]
    if eid in state.encounters:
        raise RuleViolation(f"encounter {eid!r} already exists", field="encounter_id", code="ALREADY_EXISTS")
    if state.active_encounter is not None:
        raise RuleViolation(
            f"encounter {state.active_encounter!r} is still running; end it first",
            field="encounter_id",
            code="ENCOUNTER_RUNNING",
        )
    if not who:
        raise InvalidInput("an encounter needs participants", field="participants")
    if len(set(who)) != len(who):
        raise InvalidInput("a creature takes part in an encounter only once", field="participants")
    for cid in who:
        creature(state, cid, "participants")
    enc = Encounter.__new__(Encounter)
    enc.id, enc.name, enc.participants = eid, p["name"], list(who)
    enc.initiative, enc.order, enc.round, enc.turn_index = {}, [], 0, 0
    enc.surprised, enc.surprise_round, enc.delayed, enc.readied = [], False, [], {}
    enc.state, enc.turn_log, enc.started_at = "setup", {"turn_no": 0}, ctx.seq
    state.encounters[eid] = enc
    state.active_encounter = eid
    return {"encounter_id": eid, "participants": list(who), "state": enc.state}


def surprise_determined(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-5 / B-SW-19: the GM's surprise ruling. Surprised creatures get no turn in round 0."""
    enc = _encounter(state, p["encounter_id"])
    if enc.state != "setup":
        raise RuleViolation(
            "surprise is determined before the first turn (SW-1)", field="surprised", code="ENCOUNTER_RUNNING"
        )
    surprised = p["surprised"]
    if len(set(surprised)) != len(surprised):
        raise InvalidInput("a creature is listed twice", field="surprised")
    who = [_participant(state, enc, cid, "surprised") for cid in surprised]
    for c in _with_effects(state):
        _drop(state, c, lambda e: e["duration"].get("kind") == "surprise_round")
    enc.surprised = list(surprised)
    enc.surprise_round = bool(surprised)
    for c in who:
        effects.apply(
            state,
            c,
            {
                "name": "surprised",
                "components": [{"condition": "surprised"}],
                "duration": {"kind": "surprise_round"},
            },
            source=c.id,
            ctx=ctx,
        )
    return {"encounter_id": enc.id, "surprised": list(surprised), "surprise_round": enc.surprise_round}


def initiative_rolled(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-2, SW-3: one d20 per creature per encounter, plus its initiative bonus.

    The roll holds the d20 (and any situational modifier); the sheet bonus
    (half level + Dex modifier + misc) is added by the fold.
    """
    enc = _encounter(state, p["encounter_id"])
    c = _participant(state, enc, p["creature"])
    if enc.state != "setup":
        raise RuleViolation(
            "initiative is rolled once, at the start of the encounter (SW-2)",
            field="creature",
            code="ENCOUNTER_RUNNING",
        )
    if c.id in enc.initiative:
        raise RuleViolation(
            f"{c.name} has already rolled initiative; amend that fact to correct it",
            field="creature",
            code="ALREADY_ROLLED",
        )
    roll = p["roll"]
    natural = dice.natural(roll)
    if natural is None:
        raise InvalidInput("an initiative roll is a single d20 (plus modifiers)", field="roll")
    bonus = initiative_bonus(c, state.flags)
    score = dice.roll_total(roll) + bonus
    enc.initiative[c.id] = {"score": score, "bonus": bonus, "natural": natural}
    started = _try_start(state, enc, ctx)
    return {"creature": c.id, "natural": natural, "bonus": bonus, "score": score, **started}


def _groups(enc: Encounter) -> list[list[str]]:
    """Creatures with the same score and the same bonus (SW-4: only these need a tie-break)."""
    by: dict[tuple[int, int], list[str]] = {}
    for cid in enc.participants:
        entry = enc.initiative.get(cid)
        if entry is not None:
            by.setdefault((entry["score"], entry["bonus"]), []).append(cid)
    return [g for g in by.values() if len(g) > 1]


def unresolved_ties(enc: Encounter) -> list[list[str]]:
    return [
        sorted(g) for g in _groups(enc) if any(enc.initiative[cid].get("tie_with") != sorted(g) for cid in g)
    ]


def initiative_tie_broken(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-4: equal scores go by the higher bonus; equal bonuses by a die or a coin, recorded here."""
    enc = _encounter(state, p["encounter_id"])
    if enc.state != "setup":
        raise RuleViolation(
            "the order is fixed once turns have begun (SW-2)", field="creatures", code="ENCOUNTER_RUNNING"
        )
    names = p["creatures"]
    if len(names) < 2 or len(set(names)) != len(names):
        raise InvalidInput("a tie-break orders two or more different creatures", field="creatures")
    for cid in names:
        _participant(state, enc, cid, "creatures")
        if cid not in enc.initiative:
            raise RuleViolation(f"{cid} has not rolled initiative", field="creatures", code="NOT_ROLLED")
    entries = [enc.initiative[cid] for cid in names]
    if len({e["score"] for e in entries}) != 1:
        raise RuleViolation(
            "these creatures do not have the same initiative", field="creatures", code="NOT_TIED"
        )
    bonuses = [e["bonus"] for e in entries]
    if p["method"] == "bonus":
        if any(a <= b for a, b in zip(bonuses, bonuses[1:], strict=False)):
            raise RuleViolation(
                "by bonus, the higher initiative bonus goes first and equal bonuses need a die "
                "or a coin (SW-4)",
                field="creatures",
                code="TIE_ORDER_WRONG",
            )
    else:
        if len(set(bonuses)) != 1:
            raise RuleViolation(
                "the higher initiative bonus goes first (SW-4): no die or coin is needed",
                field="method",
                code="BONUS_DECIDES",
            )
        group = sorted(
            cid
            for cid in enc.participants
            if cid in enc.initiative
            and (enc.initiative[cid]["score"], enc.initiative[cid]["bonus"])
            == (entries[0]["score"], bonuses[0])
        )
        if sorted(names) != group:
            raise InvalidInput(f"the tie is among {', '.join(group)}: order all of them", field="creatures")
        if p["rolls"] is not None:
            if p["method"] != "die" or len(p["rolls"]) != len(names):
                raise InvalidInput(
                    "rolls: one die roll per creature, in the same order, for method 'die'", field="rolls"
                )
            totals = [dice.roll_total(dice.validate_roll(r)) for r in p["rolls"]]
            if any(a <= b for a, b in zip(totals, totals[1:], strict=False)):
                raise RuleViolation(
                    "the order does not follow the tie-break rolls (highest first, no ties)",
                    field="rolls",
                    code="TIE_ORDER_WRONG",
                )
    if p["method"] != "bonus":
        for rank, cid in enumerate(names):
            enc.initiative[cid] = {
                **enc.initiative[cid],
                "tie_rank": rank,
                "tie_with": sorted(names),
                "tie_method": p["method"],
            }
    started = _try_start(state, enc, ctx)
    return {"creatures": list(names), "method": p["method"], **started}


def _sorted_order(enc: Encounter) -> list[str]:
    init = enc.initiative
    return sorted(
        enc.participants,
        key=lambda cid: (-init[cid]["score"], -init[cid]["bonus"], init[cid].get("tie_rank", 0)),
    )


def _try_start(state: SWState, enc: Encounter, ctx: Any) -> dict[str, Any]:
    """Once every initiative is known and no tie is open, the first turn starts (derived)."""
    if any(cid not in enc.initiative for cid in enc.participants):
        return {"waiting_for": [cid for cid in enc.participants if cid not in enc.initiative]}
    open_ties = unresolved_ties(enc)
    if open_ties:
        return {"unresolved_ties": open_ties}
    enc.order = _sorted_order(enc)
    enc.state = "running"
    enc.round = 0 if enc.surprised else 1
    enc.surprise_round = bool(enc.surprised)
    enc.turn_index = -1
    report: dict[str, Any] = {"turns": []}
    _advance(state, enc, report)
    return {"order": list(enc.order), "round": enc.round, "turn_of": enc.current, **report}


# ------------------------------------------------------------ turn boundaries
def _advance(state: SWState, enc: Encounter, report: dict[str, Any]) -> None:
    """Pass the turn to the next creature that takes one and run its start of turn (SW-1, SW-7)."""
    n = len(enc.order)
    for _ in range(2 * n + 2):
        i = enc.turn_index + 1
        if i >= n:
            _new_round(state, enc, report)
            i = 0
        enc.turn_index = i
        cid = enc.order[i]
        c = state.own(cid)
        entry = enc.initiative[cid]
        resume = bool(entry.pop("resume", False))
        if c.life == "dead":
            report["turns"].append({"creature": cid, "skipped": "dead (adopted ruling 8)"})
            continue
        if enc.round == 0 and cid in enc.surprised:
            report["turns"].append({"creature": cid, "skipped": "surprised (SW-5)"})
            continue
        if cid in enc.delayed:  # SW-11: its old count came round; the delayed turn is lost
            enc.delayed = [d for d in enc.delayed if d != cid]
            lost = _end_steps(state, enc, cid)
            report["turns"].append({"creature": cid, "lost_delayed_turn": True, **lost})
        start = _begin_turn(state, enc, cid, resume)
        report["turns"].append(start)
        if c.life == "dead":
            continue  # it died at the start of its turn: the turn is over
        return
    enc.turn_index = n  # nobody can take a turn


def _new_round(state: SWState, enc: Encounter, report: dict[str, Any]) -> None:
    """SW-1 step 6; the surprise round (0) ends once every aware creature has acted (SW-5)."""
    if enc.round == 0:
        for c in _with_effects(state):
            _drop(state, c, lambda e: e["duration"].get("kind") == "surprise_round")
        enc.surprise_round = False
    enc.round += 1
    limit = int(state.flags["sw.end_of_encounter_rounds"])
    ended: list[dict[str, Any]] = []
    for c in _with_effects(state):
        ended += _drop(
            state,
            c,
            lambda e: (
                # SW-44: "until the end of the encounter" ends after 5 minutes, and a sustained
                # effect can be sustained for at most 5 minutes
                e["duration"].get("kind") in ("end_of_encounter", "sustained")
                and e["duration"].get("applied_round") is not None
                and enc.round - e["duration"]["applied_round"] >= limit
            ),
        )
    report.setdefault("rounds", []).append({"round": enc.round, "ended": ended})


def _begin_turn(state: SWState, enc: Encounter, cid: str, resume: bool) -> dict[str, Any]:
    """SW-7: (a) ongoing damage, (b) regeneration, (c) end 'until the start of <cid>'s next turn'."""
    old = enc.turn_log
    number = int(old.get("turn_no", 0)) + 1
    immediate = {k: v for k, v in old.get("immediate", {}).items() if resume or k != cid}
    enc.turn_log = {"turn_no": number, "creature": cid, "immediate": immediate}
    if resume:
        return {"creature": cid, "round": enc.round, "resumed_delayed_turn": True}
    enc.initiative[cid]["turn_started"] = number  # B-SW-31: its immediate-action window reopens (above)
    enc.readied.pop(cid, None)  # SW-12 (4E-DEFAULT): an untriggered readied action is lost
    c = state.own(cid)
    out: dict[str, Any] = {"creature": cid, "round": enc.round}
    ongoing = _ongoing(state, c)
    if ongoing:
        out["ongoing_damage"] = ongoing
    regen = _regenerate(c)
    if regen:
        out["regeneration"] = regen
    ended = []
    for other in _with_effects(state):
        if not _anchored_to(other, cid):
            continue
        ended += _drop(
            state,
            other,
            lambda e: (
                e["duration"].get("kind") == "until_start_of_turn" and e["duration"].get("anchor") == cid
            ),
        )
    if ended:
        out["effects_ended"] = ended
    return out


def _ongoing(state: SWState, c: Creature) -> list[dict[str, Any]]:
    """SW-47, adopted ruling 7: per type only the highest amount; each type separately; never wounding."""
    worst: dict[str, tuple[int, str]] = {}
    for e in c.effects:
        if not _active(e):
            continue
        for comp in e["components"]:
            og = comp.get("ongoing")
            if og:
                kind = og.get("type") or "untyped"
                if og["amount"] > worst.get(kind, (-1, ""))[0]:
                    worst[kind] = (og["amount"], e["effect_id"])
    out = []
    for kind in sorted(worst):
        if c.life == "dead":
            break
        amount, eid = worst[kind]
        taken, steps = dmg.modify(c, amount, [] if kind == "untyped" else [kind], ongoing=True)
        out.append({"type": kind, "effect_id": eid, "steps": steps, **dmg.deliver(state, c, taken)})
    return out


def _regenerate(c: Creature) -> dict[str, Any] | None:
    """SW-39, B-SW-22, adopted ruling 10: the largest source; HP only; not at 0 HP; capped at max."""
    sources = [
        int(comp["regeneration"])
        for e in c.effects
        if _active(e)
        for comp in e["components"]
        if "regeneration" in comp
    ]
    amount = max([c.regeneration, *sources])
    if amount <= 0 or c.life == "dead" or c.hp <= 0:
        return None
    healed = min(amount, c.max_hp - c.hp)
    c.hp += healed
    return {"amount": amount, "hp_healed": healed}


def _due_at_end(e: dict[str, Any], cid: str, enc: Encounter) -> bool:
    """An 'until the end of <cid>'s [next] turn' effect ends now (see the module docstring)."""
    d = e["duration"]
    if d.get("kind") != "until_end_of_turn" or d.get("anchor") != cid:
        return False
    if not d.get("next", True):
        return True
    applied = d.get("applied_turn")
    return int(enc.initiative[cid].get("turn_started", 0)) > (-1 if applied is None else int(applied))


def _end_steps(state: SWState, enc: Encounter, cid: str) -> dict[str, Any]:
    """SW-10: saves were facts; aftereffects begin (SW-46); unsustained effects lapse; expiries."""
    number = enc.turn_log.get("turn_no")
    out: dict[str, Any] = {}
    c = state.own(cid)
    started = _start_pending(state, c)
    if started:
        out["aftereffects_began"] = started
    lapsed: list[dict[str, Any]] = []
    ended: list[dict[str, Any]] = []
    for other in _with_effects(state):
        if not _anchored_to(other, cid):
            continue  # both kinds below end only effects anchored to this creature's turn
        lapsed += _drop(
            state,
            other,
            lambda e: (
                e["duration"].get("kind") == "sustained"
                and e["duration"].get("anchor") == cid
                and number not in (e["duration"].get("applied_turn"), e.get("sustained_turn"))
            ),
        )
        ended += _drop(state, other, lambda e: _due_at_end(e, cid, enc))
    if lapsed:
        out["sustained_lapsed"] = lapsed
    if ended:
        out["effects_ended"] = ended
    return out


def _start_pending(state: SWState, c: Creature) -> list[str]:
    started = [e["effect_id"] for e in c.effects if e.get("pending")]
    if started:
        c = state.own(c.id)
        c.effects = [{k: v for k, v in e.items() if k != "pending"} for e in c.effects]
    return started


def _with_effects(state: SWState) -> list[Creature]:
    """The living creatures that carry any effect (scanning only these keeps turns cheap in a long
    campaign; effects on the dead no longer matter, and raising a creature clears them)."""
    return state.with_effects()


def _anchored_to(c: Creature, cid: str) -> bool:
    """Whether any of ``c``'s effects is timed by ``cid``'s turns (a cheap pre-check: in a long
    campaign most creatures holding effects are not anchored to the creature whose turn it is)."""
    for e in c.effects:
        if e["duration"].get("anchor") == cid:
            return True
    return False


def _drop(state: SWState, c: Creature, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    ids = {e["effect_id"] for e in c.effects if pred(e)} if c.effects else set()
    if ids:
        c = state.own(c.id)
    return (
        [
            {"effect_id": e["effect_id"], "target": c.id, "name": e.get("name", "effect")}
            for e in effects.remove(c, ids)
        ]
        if ids
        else []
    )


def pending_rolls(state: SWState) -> list[tuple[str, dict[str, Any]]]:
    """The rolls still owed at the end of the current turn (SW-10 step a, B-SW-8): a saving
    throw against each save-ends effect not yet saved against this turn, and a dying
    creature's death save. Each is a fact the table records before ``TurnEnded``."""
    enc = state.encounter
    if enc is None or enc.current is None:
        return []
    cid = enc.current
    c = state.creatures[cid]
    if c.life == "dead":
        return []
    saved = enc.turn_log.get("saved", ())
    owed: list[tuple[str, dict[str, Any]]] = [
        ("SavingThrowRolled", {"creature": cid, "effect_id": e["effect_id"]})
        for e in c.effects
        if e["duration"].get("kind") == "save_ends" and not e.get("pending") and e["effect_id"] not in saved
    ]
    if (
        c.life == "dying"
        and c.makes_death_saves
        and state.flags["sw.death_save_timing"] == "end_of_own_turn"
        and not enc.turn_log.get("death_save")
    ):
        owed.append(("DeathSavingThrowRolled", {"creature": cid}))
    return owed


def turn_ended(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-10 for the creature whose turn it is, then the next creature's start of turn (SW-7).

    The turn cannot end while a roll it owes is missing (C1.2: TurnEnded validates that every
    save-ends effect received its save; B-SW-8: the dying creature's death save)."""
    enc = _encounter(state, p["encounter_id"], running=True)
    cid = enc.current
    if cid is None:
        raise RuleViolation("no creature has a turn now", field="encounter_id", code="NO_TURN")
    owed = pending_rolls(state)
    require(
        not owed,
        "the turn still owes "
        + ", ".join(
            f"a saving throw against {x['effect_id']}" if t == "SavingThrowRolled" else "a death save"
            for t, x in owed
        )
        + " (SW-10)",
        "ROLLS_PENDING",
        ctx,
        "encounter_id",
    )
    out: dict[str, Any] = {"ended": cid, "round": enc.round, **_end_steps(state, enc, cid)}
    report: dict[str, Any] = {"turns": []}
    _advance(state, enc, report)
    return {**out, **report, "turn_of": enc.current, "round_now": enc.round}


# -------------------------------------------------------------- delay, ready
def _move(enc: Encounter, cid: str, index_of: Callable[[list[str]], int]) -> None:
    """Move ``cid`` in the order; the creature whose turn it is keeps its turn."""
    current = enc.current
    order = [x for x in enc.order if x != cid]
    order.insert(index_of(order), cid)
    enc.order = order
    if current is not None:
        enc.turn_index = order.index(current)


def turn_delayed(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-11: delay before acting; start-of-turn steps already happened; the next creature goes."""
    enc = _encounter(state, p["encounter_id"], running=True)
    c = _participant(state, enc, p["creature"])
    if enc.current != c.id:
        raise RuleViolation(
            f"{c.name} can delay only at the start of its own turn (it is {enc.current}'s turn)",
            field="creature",
            code="NOT_YOUR_TURN",
        )
    require(
        not enc.turn_log.get("acted"),
        f"{c.name} has already acted this turn and cannot delay (SW-11)",
        "ALREADY_ACTED",
        ctx,
        "creature",
    )
    blocking = sorted(n for n in c.conditions() if n in CONDITIONS and CONDITIONS[n].cannot_delay)
    require(
        not blocking,
        f"{c.name} cannot delay while {', '.join(blocking)} (SW-11)",
        "CANNOT_DELAY",
        ctx,
        "creature",
    )
    ended: list[dict[str, Any]] = []
    for other in _with_effects(state):  # SW-11: beneficial "end of your next turn" effects end now
        ended += _drop(state, other, lambda e: bool(e.get("beneficial")) and _due_at_end(e, c.id, enc))
    enc.delayed = [*enc.delayed, c.id]
    report: dict[str, Any] = {"turns": []}
    _advance(state, enc, report)
    return {"creature": c.id, "effects_ended": ended, **report, "turn_of": enc.current}


def delayed_turn_taken(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-11 (4E-DEFAULT): re-enter after the current creature's turn; that becomes its initiative."""
    enc = _encounter(state, p["encounter_id"], running=True)
    c = _participant(state, enc, p["creature"])
    if c.id not in enc.delayed:
        raise RuleViolation(f"{c.name} is not delaying", field="creature", code="NOT_DELAYED")
    not_dead(c, ctx)
    current = enc.current
    if current is None:
        raise RuleViolation("no creature has a turn now", field="encounter_id", code="NO_TURN")
    enc.delayed = [d for d in enc.delayed if d != c.id]
    enc.initiative[c.id]["resume"] = True

    def after_current(order: list[str]) -> int:
        i = order.index(current) + 1
        while i < len(order) and enc.initiative[order[i]].get("resume"):
            i += 1  # several re-entries after one turn keep the order they were recorded in
        return i

    _move(enc, c.id, after_current)
    return {"creature": c.id, "acts_after": current, "order": list(enc.order)}


def action_readied(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-12: readying is a standard action on your own turn."""
    enc = _encounter(state, p["encounter_id"], running=True)
    c = _participant(state, enc, p["creature"])
    not_dead(c, ctx)
    note = _check_action(state, enc, c, "standard", ctx, gm_exception=False)
    _commit_action(enc, c, "standard")
    enc.readied[c.id] = {"action": p["action"], "trigger": p["trigger"], "turn_no": enc.turn_log["turn_no"]}
    return {"creature": c.id, "readied": p["action"], "trigger": p["trigger"], **note}


def readied_action_triggered(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-12 (4E-DEFAULT): the readied action is an immediate action; initiative moves before the trigger."""
    enc = _encounter(state, p["encounter_id"], running=True)
    c = _participant(state, enc, p["creature"])
    trigger = _participant(state, enc, p["trigger_creature"], "trigger_creature")
    not_dead(c, ctx)
    if c.id not in enc.readied:
        raise RuleViolation(f"{c.name} has no readied action", field="creature", code="NOTHING_READIED")
    if trigger.id == c.id or enc.current == c.id:
        raise RuleViolation(
            "a readied action is triggered by another creature, on another turn",
            field="trigger_creature",
            code="OWN_TURN",
        )
    note = _check_action(state, enc, c, "immediate", ctx, gm_exception=False)
    _commit_action(enc, c, "immediate")
    readied = enc.readied.pop(c.id)
    _move(enc, c.id, lambda order: order.index(trigger.id))
    return {
        "creature": c.id,
        "action": readied["action"],
        "acts_before": trigger.id,
        "order": list(enc.order),
        **note,
    }


# ----------------------------------------------------------- action economy
def action_limit(c: Creature) -> tuple[str, str | None]:
    """The strictest action limit among its conditions (A1.10), and the condition imposing it."""
    ranks = list(ACTION_LIMITS)
    worst, why = "all", None
    for name in sorted(c.conditions()):
        spec = CONDITIONS.get(name)
        if spec and ranks.index(spec.actions) > ranks.index(worst):
            worst, why = spec.actions, name
    return worst, why


def _problem(state: SWState, enc: Encounter, c: Creature, action: str) -> tuple[str, str] | None:
    """Why this action is not allowed now (SW-5, SW-8, SW-9, A1.10, B-SW-31), or None."""
    name, why = action_limit(c)
    limit: ActionLimit = ACTION_LIMITS[name]
    if action == "free":
        return None if limit.free else (f"{c.name} is {why} and cannot act", LIMIT_CODES[name])
    if action in ("immediate", "opportunity"):
        if not limit.triggered:
            return (f"{c.name} is {why}: no immediate or opportunity actions", LIMIT_CODES[name])
        if action == "immediate" and enc.turn_log.get("immediate", {}).get(c.id):
            return (
                f"{c.name} has already taken an immediate action since the start of its last turn "
                "(SW-9, B-SW-31)",
                "IMMEDIATE_USED",
            )
        if action == "opportunity":
            if enc.current == c.id:
                return ("opportunity actions are taken on other combatants' turns (SW-9)", "OWN_TURN")
            if c.id in enc.turn_log.get("opportunity", ()):
                return (
                    f"{c.name} has already taken an opportunity action this turn (SW-9)",
                    "OPPORTUNITY_USED",
                )
        return None
    if enc.current != c.id:
        return (
            f"{c.name} can take a {action} action only on its own turn (it is {enc.current}'s turn)",
            "NOT_YOUR_TURN",
        )
    taken = Counter([*enc.turn_log.get("actions", ()), action])
    extra = enc.turn_log.get("extra", {})
    count = sum(taken.values())
    if enc.round == 0 and count > (SURPRISE_ROUND_LIMIT.turn_actions or 0):
        return (
            "in the surprise round a creature takes one action: standard, move or minor (SW-5)",
            "SURPRISE_ROUND_ONE_ACTION",
        )
    if limit.turn_actions is not None:
        allowed = limit.turn_actions + (sum(extra.values()) if limit.turn_actions else 0)
        if count > allowed:
            return (f"{c.name} is {why}: {_limit_text(name)}", LIMIT_CODES[name])
        return None
    if not any(all(taken[k] <= s.get(k, 0) + extra.get(k, 0) for k in TURN_ACTIONS) for s in ACTION_SETS):
        return (
            f"{c.name} has no {action} action left this turn (SW-8: standard, move and minor; a move or "
            "minor instead of the standard, a minor instead of the move)",
            "NO_ACTION_LEFT",
        )
    return None


def _limit_text(name: str) -> str:
    return {
        "one": "one standard, move or minor action per turn",
        "free_only": "free actions only",
        "none": "no actions",
    }.get(name, "")


def _check_action(
    state: SWState, enc: Encounter, c: Creature, action: str, ctx: Any, *, gm_exception: bool
) -> dict[str, Any]:
    """Refuse an action the economy does not allow, unless the GM makes an exception (recorded)."""
    problem = _problem(state, enc, c, action)
    if problem is None:
        return {}
    message, code = problem
    if not state.flags["sw.enforce_turns"]:
        return {"not_enforced": message}
    if gm_exception:
        return {"gm_exception": message}
    require(False, message, code, ctx, "action")
    return {"waived": message}


def _before_turns(state: SWState, c: Creature, action: str, ctx: Any, *, gm_exception: bool) -> None:
    """Standard, move and minor actions need a turn: none before the order is settled (SW-4)."""
    enc = state.encounter
    if enc is None or enc.state != "setup" or c.id not in enc.participants or action not in TURN_ACTIONS:
        return
    if gm_exception or not state.flags["sw.enforce_turns"]:
        return
    require(
        False,
        f"encounter {enc.name or enc.id!r} has no turns yet: initiative or a tie-break is missing "
        f"(unresolved: {unresolved_ties(enc) or 'none'})",
        "ENCOUNTER_NOT_RUNNING",
        ctx,
        "action",
    )


def _commit_action(enc: Encounter, c: Creature, action: str) -> None:
    log = enc.turn_log
    if action in TURN_ACTIONS:
        log["actions"] = (*log.get("actions", ()), action)
    if enc.current == c.id:
        log["acted"] = True
    if action == "immediate":
        log["immediate"] = {**log.get("immediate", {}), c.id: True}
    if action == "opportunity":
        log["opportunity"] = (*log.get("opportunity", ()), c.id)


def action_taken(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 ActionTaken: budget checks (SW-5, SW-8, SW-9, A1.10); a GM exception is recorded in the fact."""
    c = creature(state, p["creature"])
    not_dead(c, ctx)
    action, sub = p["action"], p["substitutes_for"]
    if sub is not None and sub not in SUBSTITUTIONS.get(action, ()):
        raise InvalidInput(
            f"a {action} action cannot be taken instead of a {sub} action (SW-8)", field="substitutes_for"
        )
    if p["encounter_id"] is not None:
        _participant(state, _encounter(state, p["encounter_id"]), c.id)
    _before_turns(state, c, action, ctx, gm_exception=p["gm_exception"])
    enc = _running(state, c)
    note: dict[str, Any] = {}
    if enc is not None:
        note = _check_action(state, enc, c, action, ctx, gm_exception=p["gm_exception"])
        _commit_action(enc, c, action)
    return {
        "creature": c.id,
        "action": action,
        "name": p["name"],
        **note,
        **(
            {"actions_this_turn": list(enc.turn_log.get("actions", ()))}
            if enc and enc.current == c.id
            else {}
        ),
    }


def with_action(handler: Handler, *, field: str, fixed: str | None = None) -> Handler:
    """Wrap a handler so that, inside a running encounter, it consumes an action through the economy.

    The check runs before the handler and the budget changes only after it
    succeeds, so a refused or orphaned fact changes nothing.
    """

    def wrapped(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        action = fixed or p.get("action")
        c = state.creatures.get(p.get(field, ""))
        enc = _running(state, c) if c is not None and action is not None else None
        note: dict[str, Any] = {}
        if action is not None and action not in ACTION_KINDS:
            raise InvalidInput(f"action must be one of {', '.join(ACTION_KINDS)}", field="action")
        if c is not None and action is not None:
            _before_turns(state, c, action, ctx, gm_exception=False)
        if enc is not None and c is not None and action is not None:
            not_dead(c, ctx, field)
            note = _check_action(state, enc, c, action, ctx, gm_exception=False)
        if c is not None and action is None and state.flags["sw.enforce_turns"]:
            limit, why = action_limit(c)  # A1.10: whatever kind it was, it was an action
            if not ACTION_LIMITS[limit].free:
                require(False, f"{c.name} is {why} and cannot act", LIMIT_CODES[limit], ctx, field)
        result = handler(state, p, ctx)
        if enc is not None and c is not None and action is not None:
            _commit_action(enc, c, action)
            result = {**result, "action": action, **note}
        return result

    wrapped.__doc__ = handler.__doc__
    return wrapped


# ------------------------------------------------------------------ effects
def effect_applied(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A1.11: put an effect on a creature (components, duration with an explicit anchor, B-X-2)."""
    target = creature(state, p["target"], "target")
    not_dead(target, ctx, "target")
    spec = effects.check_spec(p["effect"], state, "effect")
    duration = spec.get("duration", {"kind": "until_removed"})
    if duration["kind"] == "surprise_round":
        raise InvalidInput("the Surprised condition comes from SurpriseDetermined", field="effect.duration")
    needs_anchor = duration["kind"] in effects.TURN_DURATIONS and "anchor" not in duration
    if (
        needs_anchor
        and p["source"] not in state.creatures
        and state.flags["sw.duration_default_anchor"] == "creator"
    ):
        raise InvalidInput(
            "the source is not a creature: name the duration's anchor", field="effect.duration.anchor"
        )
    if "next" in duration and not isinstance(duration["next"], bool):
        raise InvalidInput(
            "duration.next is true (the anchor's next turn) or false (its current turn)",
            field="effect.duration.next",
        )
    return effects.apply(state, target, spec, source=p["source"], ctx=ctx)


def effect_sustained(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-44: sustained with its action, from the turn after it was created, at most once per turn."""
    carrier, e = effects.find(state, p["effect_id"])
    d = e["duration"]
    if d.get("kind") != "sustained":
        raise RuleViolation(
            f"effect {e['effect_id']} is not sustained", field="effect_id", code="NOT_SUSTAINED"
        )
    sustainer = creature(state, d.get("anchor") or e["source"], "effect_id")
    not_dead(sustainer, ctx)
    require(
        p["action"] == d.get("action", "minor"),
        f"this effect is sustained with a {d.get('action', 'minor')} action",
        "WRONG_ACTION",
        ctx,
        "action",
    )
    enc = _running(state, sustainer)
    note: dict[str, Any] = {}
    number = enc.turn_log.get("turn_no") if enc else None
    if enc is not None:
        require(
            d.get("applied_turn") != number,
            "an effect is sustained from the turn after it is created (SW-44)",
            "NOT_YET",
            ctx,
            "effect_id",
        )
        require(
            e.get("sustained_turn") != number,
            "this effect has already been sustained this turn",
            "ALREADY_SUSTAINED",
            ctx,
            "effect_id",
        )
        note = _check_action(state, enc, sustainer, p["action"], ctx, gm_exception=False)
        _commit_action(enc, sustainer, p["action"])
    e["sustained_turn"] = number
    return {"effect_id": e["effect_id"], "target": carrier.id, "sustained_by": sustainer.id, **note}


def effect_ended(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C1.2 EffectEnded: for reasons the fold cannot derive (escape, teleport, dispelled, voluntary, GM)."""
    carrier, e = effects.find(state, p["effect_id"])
    effects.remove(carrier, {e["effect_id"]})
    return {"effect_id": e["effect_id"], "target": carrier.id, "reason": p["reason"]}


def saving_throw(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """SW-45: d20 + save modifiers, 10 or higher ends the whole effect (adopted ruling 7), at the end of
    the creature's own turn (SW-10); an aftereffect begins after all its saves, at TurnEnded (SW-46)."""
    c = creature(state, p["creature"])
    carrier, e = effects.find(state, p["effect_id"])
    if carrier.id != c.id:
        raise RuleViolation(
            f"effect {e['effect_id']} is on {carrier.name}, not {c.name}",
            field="effect_id",
            code="NOT_AFFECTED",
        )
    if e.get("pending"):
        raise RuleViolation(
            "an aftereffect cannot be saved against on the turn it begins (SW-46)",
            field="effect_id",
            code="NOT_ACTIVE",
        )
    natural = dice.natural(p["roll"])
    if natural is None:
        raise InvalidInput("a saving throw is a single d20 (plus modifiers)", field="roll")
    not_dead(c, ctx)
    require(
        e["duration"].get("kind") == "save_ends",
        f"a saving throw cannot end {e.get('name', 'this effect')}",
        "NOT_SAVE_ENDS",
        ctx,
        "effect_id",
    )
    enc = _running(state, c)
    if enc is not None and state.flags["sw.enforce_turns"]:
        in_turn(state, c, ctx, "a saving throw is rolled at the end of the creature's own turn (SW-10):")
        require(
            e["effect_id"] not in enc.turn_log.get("saved", ()),
            "one saving throw per effect per turn",
            "ALREADY_SAVED",
            ctx,
            "effect_id",
        )
    mods = sum(int(m.get("value", 0)) for m in p["modifiers"] if _holds(m, ctx))
    total = dice.roll_total(p["roll"]) + mods
    success = total >= SAVE_DC
    if enc is not None:
        enc.turn_log["saved"] = (*enc.turn_log.get("saved", ()), e["effect_id"])
    out: dict[str, Any] = {
        "creature": c.id,
        "effect_id": e["effect_id"],
        "natural": natural,
        "total": total,
        "success": success,
    }
    if success:
        effects.remove(c, {e["effect_id"]})
        if e.get("aftereffect") is not None:
            after = effects.apply(state, c, e["aftereffect"], source=e["source"], ctx=ctx)
            if enc is not None:  # SW-46: it begins after all the saves, when the turn ends
                c.effects = [
                    {**x, "pending": True} if x["effect_id"] == after["effect_id"] else x for x in c.effects
                ]
            out["aftereffect"] = {**after, "pending": enc is not None}
    return out


def encounter_ended(state: SWState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-SW-24: end-of-encounter effects end; B-SW-18: every 2nd encounter is a milestone (+1 AP)."""
    enc = _encounter(state, p["encounter_id"])
    enc.state = "ended"
    state.active_encounter = None
    ended: list[dict[str, Any]] = []
    gone = ("end_of_encounter", "surprise_round", *effects.TURN_DURATIONS)
    for c in _with_effects(state):
        _start_pending(state, c)
        ended += _drop(state, c, lambda e: e["duration"].get("kind") in gone)
    every = int(state.flags["sw.milestone_every_encounters"])
    milestones = []
    for cid in enc.participants:
        c = state.own(cid)
        if c.is_pc and c.life != "dead":
            c.encounters_since_rest += 1
            if c.encounters_since_rest % every == 0:
                c.ap += 1
                milestones.append(cid)
    return {
        "encounter_id": enc.id,
        "outcome": p["outcome"],
        "rounds": enc.round,
        "effects_ended": ended,
        "milestone": milestones,
    }


HANDLERS: dict[str, Handler] = {
    "EncounterStarted": encounter_started,
    "SurpriseDetermined": surprise_determined,
    "InitiativeRolled": initiative_rolled,
    "InitiativeTieBroken": initiative_tie_broken,
    "TurnEnded": turn_ended,
    "TurnDelayed": turn_delayed,
    "DelayedTurnTaken": delayed_turn_taken,
    "ActionReadied": action_readied,
    "ReadiedActionTriggered": readied_action_triggered,
    "ActionTaken": action_taken,
    "EffectApplied": effect_applied,
    "EffectSustained": effect_sustained,
    "EffectEnded": effect_ended,
    "SavingThrowRolled": saving_throw,
    "EncounterEnded": encounter_ended,
}
