"""Stellar Winds encounters: its hooks into the core encounter engine, durations and saves.

The core engine (``domain/core/encounters.py``) folds encounters, initiative, turn boundaries,
delay / ready and the action economy for every ruleset. Stellar Winds supplies:

* its action table (SW-8 budgets and substitutions, SW-9 triggered actions, SW-5 surprise
  round: ``tables.SW_ACTIONS``) and the condition limits of A1.10 (``action_limit``);
* initiative: d20 + half level + Dex modifier + misc (SW-3), ranked by score then bonus, a die
  or a coin for equal bonuses (SW-4); fixed for the encounter (SW-2);
* the start of a turn (SW-7): (a) ongoing damage (SW-47), (b) regeneration (SW-39, B-SW-22),
  (c) the effects that end at the start of this creature's turn;
* the end of a turn (SW-10): the saves were facts (owed before the turn can end: a save against
  each save-ends effect, a dying creature's death save, B-SW-8); aftereffects begin (SW-46);
  unsustained effects lapse; the effects that end at the end of this creature's turn;
* a new round: the surprise round's Surprised condition ends (B-SW-19); "end of the
  encounter" and sustained effects end after the round limit (SW-44);
* delaying: not while dazed or unable to act; beneficial "until the end of your next turn"
  effects end (SW-11); the end of the encounter (B-SW-24, B-SW-18 milestones).

Durations. Each effect records the encounter's turn number when it was applied
(``duration["applied_turn"]``); "until the start / end of X's next turn" (SW-44, anchor per
B-X-2) means the first turn of X that *starts after* that (``core.next_turn_passed``). An
effect applied during X's own turn therefore lasts through X's following turn (4e).

Every handler checks all of its preconditions before it changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from domain import dice
from domain.core import effects as core_effects
from domain.core import encounters as core
from domain.core.encounters import ActionLimit, Encounter
from domain.core.state import PENDING
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.stellar_winds import bonuses, effects, overrides
from domain.rulesets.stellar_winds import damage as dmg
from domain.rulesets.stellar_winds.rules import _holds, creature, in_turn, not_dead, require
from domain.rulesets.stellar_winds.state import Creature, SWState, initiative_bonus
from domain.rulesets.stellar_winds.tables import ACTION_LIMITS, CONDITIONS, SW_ACTIONS, conditions_where

Handler = Callable[[SWState, dict[str, Any], Any], dict[str, Any]]
SAVE_DC = 10  # SW-45


class StellarWindsEncounters(core.Rules):
    """The hooks Stellar Winds gives the core encounter engine."""

    actions = SW_ACTIONS
    reroll_each_round = False
    owed_rolls = {
        "SavingThrowRolled": ("saving throw", "1d20"),
        "DeathSavingThrowRolled": ("death saving throw", "1d20"),
    }
    skip_texts = {"dead": "dead (adopted ruling 8)", "surprised": "surprised (SW-5)"}

    def initiative_entry(
        self, state: Any, enc: Encounter, creatures: list[str], payload: dict[str, Any], ctx: Any
    ) -> dict[str, Any]:
        """SW-3: the roll holds the d20 (and any situational modifier); the sheet bonus (half
        level + Dex modifier + misc) is added here. A group uses its first creature's bonus."""
        roll = payload["roll"]
        natural = dice.natural(roll)
        if natural is None:
            raise InvalidInput("an initiative roll is a single d20 (plus modifiers)", field="roll")
        bonus = initiative_bonus(state.creatures[creatures[0]], state.flags)
        score = dice.roll_total(roll) + bonus
        return {"score": score, "bonus": bonus, "natural": natural, "rank": [score, bonus]}

    def cannot_delay(self, state: Any, enc: Encounter, cid: str) -> str | None:
        c = state.creatures[cid]
        blocking = sorted(n for n in c.conditions() if n in CONDITIONS and CONDITIONS[n].cannot_delay)
        return ", ".join(blocking) + " (SW-11)" if blocking else None

    def action_limit(self, state: Any, enc: Encounter | None, cid: str) -> tuple[ActionLimit, str | None]:
        name, why = action_limit(state.creatures[cid])
        return ACTION_LIMITS[name], why

    def enforce_turns(self, state: Any) -> bool:
        return bool(state.flags["sw.enforce_turns"])

    def surprised_take_turns(self, state: Any) -> bool:
        """B-SW-19 / SW-5: surprised creatures get no turn in the surprise round (flag
        ``sw.surprised_turn``; 'free_actions': a turn of free actions only, the Surprised condition's)."""
        return bool(state.flags["sw.surprised_turn"] == "free_actions")

    def triggered_window(self, state: Any) -> str:
        """B-SW-31 (SW-9): when an immediate action is open again (flag ``sw.immediate_window``)."""
        return str(state.flags["sw.immediate_window"])

    def rolls_owed_at_turn_end(self, state: Any, enc: Encounter, cid: str) -> list[core.Owed]:
        """SW-10 step a, B-SW-8: a saving throw against each save-ends effect not yet saved
        against this turn, and a dying creature's death save."""
        c = state.creatures[cid]
        if c.life == "dead":
            return []
        saved = enc.turn_log.get("saved", ())
        owed: list[core.Owed] = (
            [
                ("SavingThrowRolled", {"creature": cid, "effect_id": e["effect_id"]})
                for e in c.effects
                if e["duration"].get("kind") == "save_ends"
                and not e.get("pending")
                and e["effect_id"] not in saved
            ]
            if c.effects  # (no effect: no save owed; every turn end asks)
            else []
        )
        if (
            c.life == "dying"
            and c.makes_death_saves
            and state.flags["sw.death_save_timing"] == "end_of_own_turn"
            and not enc.turn_log.get("death_save")
        ):
            owed.append(("DeathSavingThrowRolled", {"creature": cid}))
        return owed

    def surprise_determined(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """B-SW-19: the Surprised condition lasts until the surprise round ends."""
        for c in state.holding("surprise_round"):
            _drop(state, c, lambda e: e["duration"].get("kind") == "surprise_round")
        for cid in enc.surprised:
            effects.apply(
                state,
                state.own(cid),
                {
                    "name": "surprised",
                    "components": [{"condition": "surprised"}],
                    "duration": {"kind": "surprise_round"},
                },
                source=cid,
                ctx=ctx,
            )
        return {}

    def round_started(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """The surprise round is over once round 1 starts (SW-5); SW-44: "until the end of the
        encounter" ends after 5 minutes (the round limit), and a sustained effect can be
        sustained for at most 5 minutes."""
        if enc.round == 1:
            for c in state.holding("surprise_round"):
                _drop(state, c, lambda e: e["duration"].get("kind") == "surprise_round")
        limit = int(state.flags["sw.end_of_encounter_rounds"])
        ended: list[dict[str, Any]] = []
        for c in state.holding("end_of_encounter", "sustained"):  # (no other holder has one to end)
            ended += _drop(
                state,
                c,
                lambda e: (
                    e["duration"].get("kind") in ("end_of_encounter", "sustained")
                    and e["duration"].get("applied_round") is not None
                    and enc.round - e["duration"]["applied_round"] >= limit
                ),
            )
        return {"ended": ended}

    def turn_started(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        """SW-7: (a) ongoing damage, (b) regeneration, (c) end 'until the start of <cid>'s next turn'."""
        c = state.own(cid)
        out: dict[str, Any] = {}
        ongoing = _ongoing(state, c)
        if ongoing:
            out["ongoing_damage"] = ongoing
        regen = _regenerate(c, state.flags["sw.regeneration_at_0_hp"])
        if regen:
            out["regeneration"] = regen
        ended = []
        for other in state.anchored(cid):
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

    def turn_ended(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        """SW-10: saves were facts; aftereffects begin (SW-46); unsustained effects lapse; expiries."""
        number = enc.turn_no
        out: dict[str, Any] = {}
        c = state.creatures[cid]
        started = _start_pending(state, c)
        if started:
            out["aftereffects_began"] = started
        lapsed: list[dict[str, Any]] = []
        ended: list[dict[str, Any]] = []
        for other in state.anchored(cid):  # both kinds below end only effects anchored to its turn
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

    def turn_delayed(self, state: Any, enc: Encounter, cid: str, ctx: Any) -> dict[str, Any]:
        """SW-11: beneficial "until the end of your next turn" effects end at the moment you delay."""
        ended: list[dict[str, Any]] = []
        for other in state.anchored(cid):  # (an effect due at the end of cid's turn is anchored to it)
            ended += _drop(state, other, lambda e: bool(e.get("beneficial")) and _due_at_end(e, cid, enc))
        return {"effects_ended": ended}

    def encounter_ended(self, state: Any, enc: Encounter, ctx: Any) -> dict[str, Any]:
        """B-SW-24: end-of-encounter effects end; B-SW-18: every 2nd encounter is a milestone (+1 AP).
        Adopted ruling 16: a sustained effect outlives the encounter. It lasts while sustained: its
        turn bookkeeping starts afresh, so in a later encounter it lapses at the end of its
        sustainer's first turn without a sustain (SW-44); a rest stays refused meanwhile."""
        ended: list[dict[str, Any]] = []
        kept: list[dict[str, Any]] = []
        gone = (
            "end_of_encounter",
            "surprise_round",
            *(k for k in effects.TURN_DURATIONS if k != "sustained"),
        )
        # (a holder with no pending effect and none of these kinds has nothing to change)
        for c in state.holding(PENDING, *gone, "sustained"):
            _start_pending(state, c)
            ended += _drop(state, c, lambda e: e["duration"].get("kind") in gone)
            if any(e["duration"].get("kind") == "sustained" for e in c.effects):
                owned = state.own(c.id)
                owned.effects = [
                    _outlive(e) if e["duration"].get("kind") == "sustained" else e for e in owned.effects
                ]
                kept += [
                    core_effects.report(e) for e in owned.effects if e["duration"].get("kind") == "sustained"
                ]
        every = int(state.flags["sw.milestone_every_encounters"])
        milestones = []
        for cid in enc.participants:
            c = state.own(cid)
            if c.is_pc and c.life != "dead":
                c.encounters_since_rest += 1
                if c.encounters_since_rest % every == 0:
                    c.ap += 1
                    milestones.append(cid)
        out: dict[str, Any] = {"effects_ended": ended, "milestone": milestones}
        if kept:
            out["sustained_kept"] = kept  # ruling 16
        return out


def _outlive(e: dict[str, Any]) -> dict[str, Any]:
    """A sustained effect leaving its encounter (ruling 16): the encounter's turn and round
    numbers no longer mean anything."""
    duration = {**e["duration"], "applied_round": None, "applied_turn": None}
    return {**{k: v for k, v in e.items() if k != "sustained_turn"}, "duration": duration}


RULES = StellarWindsEncounters()
"""The Stellar Winds hooks of the core encounter engine."""


def unresolved_ties(enc: Encounter) -> list[list[str]]:
    return core.unresolved_ties(enc.initiative, enc.participants)


def with_action(handler: Handler, *, field: str, fixed: str | None = None) -> Handler:
    """A Stellar Winds handler that uses an action in a running encounter (``core.with_action``)."""
    return core.with_action(RULES, handler, field=field, fixed=fixed)


def pending_rolls(state: SWState) -> list[core.Owed]:
    """The rolls the table owes now (SW-10 step a, B-SW-8): each is a fact recorded with its dice."""
    return core.pending_rolls(state, RULES)


# ------------------------------------------------------------ turn-boundary steps
def _active(e: dict[str, Any]) -> bool:
    return not e.get("pending")


def _ongoing(state: SWState, c: Creature) -> list[dict[str, Any]]:
    """SW-47, adopted ruling 7: per type only the highest amount; each type separately; never wounding."""
    worst = core_effects.highest_per_type(c, "ongoing")
    out = []
    for kind in sorted(worst):
        if c.life == "dead":
            break
        amount, eid = worst[kind]
        taken, steps = dmg.modify(
            c, amount, [] if kind == "untyped" else [kind], ongoing=True, flags=state.flags
        )
        out.append({"type": kind, "effect_id": eid, "steps": steps, **dmg.deliver(state, c, taken)})
    return out


def _regenerate(c: Creature, at_0_hp: bool = False) -> dict[str, Any] | None:
    """SW-39, B-SW-22, adopted ruling 10: the largest source; HP only; not at 0 HP (unless the flag
    ``sw.regeneration_at_0_hp`` lets a creature with wounds above 0 regenerate); capped at max."""
    if not c.effects:  # (no effect: the sheet's own regeneration; every turn start asks)
        amount = c.regeneration
    else:
        sources = [
            int(comp["regeneration"])
            for e in c.effects
            if _active(e)
            for comp in e["components"]
            if "regeneration" in comp
        ]
        amount = max([c.regeneration, *sources])
    if amount <= 0 or c.life == "dead" or c.hp <= 0 and not (at_0_hp and c.wounds > 0):
        return None
    healed = min(amount, c.max_hp - c.hp)
    c.hp += healed
    return {"amount": amount, "hp_healed": healed}


# The duration kinds timed by an anchor's turns (SW-44, B-X-2), for ``core_effects.due``.
TIMINGS = {
    "until_start_of_turn": core_effects.Timing(core_effects.START),
    "until_end_of_turn": core_effects.Timing(core_effects.END),
    "sustained": core_effects.Timing(kept_up=True),
}


def _due_at_end(e: dict[str, Any], cid: str, enc: Encounter) -> bool:
    """An 'until the end of <cid>'s [next] turn' effect ends now (see the module docstring)."""
    return core_effects.due(e, cid, core_effects.END, TIMINGS, int(enc.turn_started.get(cid, 0)))


_start_pending = core_effects.begin_pending


def _drop(state: SWState, c: Creature, pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [core_effects.report(e) for e in core_effects.drop(state, c, pred)]


# ----------------------------------------------------------- action economy
_LIMIT_RANK = {name: rank for rank, name in enumerate(ACTION_LIMITS)}  # the table's order: strictness
LIMITING = conditions_where(lambda c: c.actions != "all")  # the conditions that limit actions


def action_limit(c: Creature) -> tuple[str, str | None]:
    """The strictest action limit among its conditions (A1.10), and the condition imposing it."""
    conds = c.conditions()
    if LIMITING.isdisjoint(conds):  # the usual creature: no limit (what the loop below gives)
        return "all", None
    worst, why = "all", None
    for name in sorted(conds):
        spec = CONDITIONS.get(name)
        if spec and _LIMIT_RANK[spec.actions] > _LIMIT_RANK[worst]:
            worst, why = spec.actions, name
    return worst, why


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
    enc = core.running_for(state, sustainer.id)
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
        note = core.check_action(state, enc, RULES, sustainer.id, p["action"], ctx)
        core.commit_action(enc, RULES, sustainer.id, p["action"])
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
    if e["duration"].get("kind") != "save_ends":  # (the message is built only when it is needed)
        require(
            False,
            f"a saving throw cannot end {e.get('name', 'this effect')}",
            "NOT_SAVE_ENDS",
            ctx,
            "effect_id",
        )
    enc = core.running_for(state, c.id)
    if enc is not None and state.flags["sw.enforce_turns"]:
        in_turn(state, c, ctx, "a saving throw is rolled at the end of the creature's own turn (SW-10):")
        require(
            e["effect_id"] not in enc.turn_log.get("saved", ()),
            "one saving throw per effect per turn",
            "ALREADY_SAVED",
            ctx,
            "effect_id",
        )
    parts = bonuses.declared(p["modifiers"], lambda m: _holds(m, ctx), state.flags)  # SW-17
    mods = bonuses.total(parts)
    total = dice.roll_total(p["roll"]) + mods
    success = total >= SAVE_DC
    fiat, given = overrides.value(ctx, "success")  # C0.4
    if given:
        success = bool(fiat)
    if enc is not None:
        enc.turn_log["saved"] = [*enc.turn_log.get("saved", ()), e["effect_id"]]
    out: dict[str, Any] = {
        "creature": c.id,
        "effect_id": e["effect_id"],
        "natural": natural,
        "total": total,
        "success": success,
    }
    if any(x.get("does_not_stack") for x in parts):
        out["modifiers"] = parts
    if success:
        effects.remove(c, {e["effect_id"]})
        if e.get("aftereffect") is not None:
            after = effects.apply(state, c, e["aftereffect"], source=e["source"], ctx=ctx)
            if enc is not None:  # SW-46: it begins after all the saves, when the turn ends
                c.effects = [
                    {**x, "pending": True} if x["effect_id"] == after["effect_id"] else x for x in c.effects
                ]
                state.hold(c.id, next(x for x in c.effects if x["effect_id"] == after["effect_id"]))
            out["aftereffect"] = {**after, "pending": enc is not None}
    return out


HANDLERS: dict[str, Handler] = {
    **core.handlers(RULES),
    "EffectApplied": effect_applied,
    "EffectSustained": effect_sustained,
    "EffectEnded": effect_ended,
    "SavingThrowRolled": saving_throw,
}
