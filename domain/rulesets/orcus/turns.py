"""Orcus turns: the derived steps at turn boundaries, the rolls a turn owes, and the effect
facts (saves, maintain, ending effects).

The boundary steps are shaped for the core encounter engine's hooks: ``(state, encounter,
creature_id, ctx) -> report`` for a turn, ``(state, encounter, ctx) -> report`` for the
encounter. They read the engine's encounter (``id``, ``participants``, ``round``,
``turn_log["turn_no"]``, ``turn_started``, ``current``, ``surprise_round``) and change only
Orcus creature state (through ``state.own``). The engine checks every precondition of a
boundary fact before it calls them.

* :func:`turn_started` (OR-6): persistent damage (ruling 20: per type the highest amount,
  ``or.placeholder.persistent_damage``), then the effects that end at the start of this
  creature's turn (OR-17), whose aftereffects begin (ruling 23). Recharge rolls are owed from
  now (B-OR-17).
* :func:`turn_ended` (OR-6, OR-18, OR-19, B-OR-8, B-OR-11, B-OR-13, rulings 23, 24): the saves
  were facts recorded before the end (in the order the player chose); the aftereffects of the
  effects they ended begin now, after all of them (so no save against them this turn); then,
  in the order the player chose (``EndOfTurnOrderChosen``) and otherwise the order they were
  applied, the effects that end without a roll: maintained effects not maintained this turn,
  and effects that end at the end of this creature's turn; their aftereffects begin.
* :func:`rolls_owed_at_turn_end`: a recharge roll per expended "Recharge X-Y" power used before
  this turn (B-OR-17), a save per save-ends effect (OR-19), a dying hero's death save (A4.9).
* :func:`encounter_ended`: waiting aftereffects begin; effects timed by turns end
  (``or.encounter_end_effects``); every second encounter gives a hero an action point (OR-7).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import effects as core
from domain.core.encounters import running_for
from domain.core.rules import declared_modifiers, owned, require
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.orcus import effects, life
from domain.rulesets.orcus.rules import encounter_count, not_dead, started_turn
from domain.rulesets.orcus.state import Creature, OrcusState
from domain.rulesets.orcus.tables import DURATIONS, SAVE_DC, TURN_TIMED

Owed = tuple[str, dict[str, Any]]


def turn_no(enc: Any) -> int:
    return int(enc.turn_log.get("turn_no", 0))


def _order_key(eid: str) -> tuple[int, int]:
    """Effect ids ``e57`` / ``e57.2`` in the order the facts created them."""
    head, _, tail = eid[1:].partition(".")
    return int(head), int(tail or 1)


# --------------------------------------------------------------- aftereffects (OR-19, ruling 23)
def begin_aftereffect(
    state: OrcusState, c: Creature, spec: dict[str, Any], source: str, *, pending: bool
) -> dict[str, Any]:
    """An aftereffect begins on ``c``: its components as a new effect, its one-off damage now.
    ``pending``: it waits for the end of the turn's saves (B-OR-13), damage included."""
    c = state.own(c.id)
    if pending:
        record = {k: v for k, v in spec.items() if k != "on"}
        out = effects.apply(
            state, c, {**record, "components": record.get("components", [])}, source=source, pending=True
        )
        if not out:  # damage only: keep it waiting as a component-less effect
            added = core.add(
                state,
                c,
                {
                    "source": source,
                    "name": spec.get("name", "aftereffect"),
                    "components": [],
                    "duration": {"kind": "until_removed"},
                    "damage": spec["damage"],
                    "pending": True,
                },
            )
            out = {"effect_id": added["effect_id"], "target": c.id, "name": added["name"], "pending": True}
        elif spec.get("damage"):
            _, e = core.find(state, out["effect_id"])
            e["damage"] = spec["damage"]
        return out
    out = effects.apply(state, c, spec, source=source) if spec.get("components") else {}
    if spec.get("damage"):
        out = {**out, "damage": _one_off(state, c, spec["damage"])}
    return out


def _one_off(state: OrcusState, c: Creature, damage: dict[str, Any]) -> dict[str, Any]:
    if c.life == "dead":
        return {"amount": 0, "note": f"{c.name} is dead"}
    amount, steps = life.modify(c, int(damage["amount"]), list(damage.get("types", [])))
    return {"types": list(damage.get("types", [])), "steps": steps, **life.deliver(state, c, amount)}


def begin_pending(state: OrcusState, c: Creature) -> list[dict[str, Any]]:
    """The aftereffects waiting on ``c`` begin (B-OR-13): one-off damage lands, and an aftereffect
    that was only damage is gone."""
    waiting = [e for e in c.effects if e.get("pending")]
    if not waiting:
        return []
    c = state.own(c.id)
    out = []
    for e in waiting:
        started: dict[str, Any] = {"effect_id": e["effect_id"], "name": e.get("name", "aftereffect")}
        if e.get("damage"):
            started["damage"] = _one_off(state, c, e["damage"])
        out.append(started)
    done = {e["effect_id"] for e in waiting if not e["components"]}
    c.effects = [
        {k: v for k, v in e.items() if k not in ("pending", "damage")}
        for e in c.effects
        if e["effect_id"] not in done
    ]
    return out


def _end(state: OrcusState, found: list[tuple[Creature, dict[str, Any]]], why: str) -> list[dict[str, Any]]:
    """End effects (in the given order) and begin their aftereffects (ruling 23)."""
    out = []
    for holder, e in found:
        c = state.own(holder.id)
        if not any(x["effect_id"] == e["effect_id"] for x in c.effects):
            continue
        core.remove(c, {e["effect_id"]})
        item: dict[str, Any] = {**core.report(e), "why": why}
        if e.get("aftereffect") is not None:
            item["aftereffect"] = begin_aftereffect(state, c, e["aftereffect"], e["source"], pending=False)
        out.append(item)
    return out


# --------------------------------------------------------------- boundary hooks
def persistent_damage(state: OrcusState, c: Creature) -> list[dict[str, Any]]:
    """OR-6 / ruling 20 (A4.9 placeholder): at the start of its turn a creature takes its
    persistent damage: per type the highest amount (or, flag ``sum``, every one)."""
    if state.flags["or.placeholder.persistent_damage"] == "highest_per_type":
        per_type = [(t, amount, [eid]) for t, (amount, eid) in core.highest_per_type(c, "persistent").items()]
    else:
        summed: dict[str, tuple[int, list[str]]] = {}
        for e, v in core.components(c, "persistent"):
            kind = v.get("type") or "untyped"
            total, ids = summed.get(kind, (0, []))
            summed[kind] = (total + int(v["amount"]), [*ids, e["effect_id"]])
        per_type = [(t, amount, ids) for t, (amount, ids) in summed.items()]
    out = []
    for kind, amount, ids in sorted(per_type):
        if c.life == "dead":
            break
        taken, steps = life.modify(c, amount, [] if kind == "untyped" else [kind])
        out.append({"type": kind, "effect_ids": ids, "steps": steps, **life.deliver(state, c, taken)})
    return out


def turn_started(state: OrcusState, enc: Any, cid: str, ctx: Any) -> dict[str, Any]:
    """OR-6: persistent damage first, then effects ending at the start of this turn (OR-17)."""
    c = state.own(cid)
    out: dict[str, Any] = {}
    taken = persistent_damage(state, c)
    if taken:
        out["persistent_damage"] = taken
    started = started_turn(enc, cid)
    found = [
        (holder, e)
        for holder in state.anchored(cid)
        for e in holder.effects
        if core.due(e, cid, core.START, DURATIONS, started)
    ]
    ended = _end(state, found, "its duration ended at the start of the turn")
    if ended:
        out["effects_ended"] = ended
    return out


def _lapses(e: dict[str, Any], cid: str, number: int, on_creation: bool) -> bool:
    """OR-18 / B-OR-8 / ruling 24: a maintained effect not maintained this turn ends (on its
    creation turn too, unless ``or.maintain_on_creation_turn`` is false)."""
    d = e["duration"]
    if d.get("kind") != "maintain" or d.get("anchor") != cid or e.get("pending"):
        return False
    if e.get("maintained_turn") == number:
        return False
    return not (d.get("applied_turn") == number and not on_creation)


def turn_ended(state: OrcusState, enc: Any, cid: str, ctx: Any) -> dict[str, Any]:
    """OR-6 end of turn (see the module docstring for the order)."""
    out: dict[str, Any] = {}
    c = state.creatures[cid]
    begun = begin_pending(state, c)
    if begun:
        out["aftereffects_began"] = begun
    number = turn_no(enc)
    on_creation = bool(state.flags["or.maintain_on_creation_turn"])
    started = started_turn(enc, cid)
    found: list[tuple[Creature, dict[str, Any], str]] = []
    for holder in state.anchored(cid):
        for e in holder.effects:
            if _lapses(e, cid, number, on_creation):
                found.append((holder, e, "not maintained this turn (OR-18)"))
            elif core.due(e, cid, core.END, DURATIONS, started):
                found.append((holder, e, "its duration ended at the end of the turn"))
    chosen = list(enc.turn_log.get("order", ()))
    found.sort(
        key=lambda x: (
            chosen.index(x[1]["effect_id"]) if x[1]["effect_id"] in chosen else len(chosen),
            _order_key(x[1]["effect_id"]),
        )
    )
    ended = []
    for holder, e, why in found:
        ended += _end(state, [(holder, e)], why)
    if ended:
        out["effects_ended"] = ended
    return out


def encounter_ended(state: OrcusState, enc: Any, ctx: Any) -> dict[str, Any]:
    """Waiting aftereffects begin; effects timed by turns end (``or.encounter_end_effects``); OR-7
    / B-OR-3: every second encounter since a long rest gives a hero an action point."""
    out: dict[str, Any] = {}
    begun = []
    for holder in state.with_effects():
        begun += begin_pending(state, holder)
    if begun:
        out["aftereffects_began"] = begun
    if state.flags["or.encounter_end_effects"] == "turn_timed":
        ended = []
        for holder in state.with_effects():
            ended += [
                {**core.report(e), "why": "the encounter ended"}
                for e in core.drop(state, holder, lambda e: e["duration"].get("kind") in TURN_TIMED)
            ]
        if ended:
            out["effects_ended"] = ended
    out["action_point_gained"] = encounter_count(state, list(enc.participants))
    return out


def rolls_owed_at_turn_end(state: OrcusState, enc: Any, cid: str) -> list[Owed]:
    """What the turn owes before it ends: recharge rolls (B-OR-17), saves (OR-19), a dying
    hero's death save (A4.9). Each is a fact the table records with its dice."""
    c = state.creatures[cid]
    if c.life == "dead":
        return []
    number = turn_no(enc)
    started = started_turn(enc, cid)
    owed: list[Owed] = []
    for pid, used in c.expended.items():
        power = c.powers[pid]
        if power["frequency"] != "recharge" or c.recharge_rolled.get(pid) == number:
            continue
        if used.get("encounter") == enc.id and used.get("turn") is not None and int(used["turn"]) >= started:
            continue  # used this turn: it rolls from the next one (B-OR-17)
        owed.append(("RechargeRolled", {"creature": cid, "power_id": pid}))
    saved = enc.turn_log.get("saved", ())
    owed += [
        ("SavingThrowRolled", {"creature": cid, "effect_id": e["effect_id"]})
        for e in c.effects
        if DURATIONS[e["duration"]["kind"]].save_ends and not e.get("pending") and e["effect_id"] not in saved
    ]
    if (
        c.life == "dying"
        and c.is_hero
        and state.flags["or.placeholder.dying"] == "4e"
        and not enc.turn_log.get("death_save")
    ):
        owed.append(("DeathSavingThrowRolled", {"creature": cid}))
    return owed


# --------------------------------------------------------------- effect facts
def effect_applied(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-17 / OR-18: put an effect on a creature (durations anchored to the target or the user)."""
    target = owned(state, p["target"], "target")
    not_dead(target, ctx, "target")
    spec = effects.check_spec(p["effect"], state, "effect")
    if "on" in p["effect"]:
        raise InvalidInput("'on' belongs to an attack's effects", field="effect.on")
    effects.needs_user(spec, p["source"], state, "effect")
    return effects.apply(state, target, spec, source=p["source"])


def saving_throw(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-19: d20 + bonuses, 10 or higher ends the effect (one save per effect: rulings 7, 20),
    at the end of the creature's own turn in an encounter (OR-6). Its aftereffect begins after
    all the turn's saves (B-OR-13, ruling 23). The first failed save applies a First Failed
    Save rider once, keeping the effect and its id (B-OR-12, ruling 23)."""
    c = owned(state, p["creature"])
    carrier, e = core.find(state, p["effect_id"])
    if carrier.id != c.id:
        raise RuleViolation(
            f"effect {e['effect_id']} is on {carrier.name}, not {c.name}",
            field="effect_id",
            code="NOT_AFFECTED",
        )
    if e.get("pending"):
        raise RuleViolation(
            "an aftereffect is not saved against on the turn it begins (B-OR-13)",
            field="effect_id",
            code="NOT_ACTIVE",
        )
    natural = dice.natural(p["roll"])
    if natural is None:
        raise InvalidInput("a saving throw is a single d20 (plus bonuses)", field="roll")
    not_dead(c, ctx)
    require(
        DURATIONS[e["duration"]["kind"]].save_ends,
        f"a saving throw does not end {e.get('name', 'this effect')} "
        f"({e['duration']['kind'].replace('_', ' ')})",
        "NOT_SAVE_ENDS",
        ctx,
        "effect_id",
    )
    enc = running_for(state, c.id)
    if enc is not None and state.flags["or.enforce_turns"]:
        require(
            enc.current == c.id,
            f"saving throws are made at the end of {c.name}'s own turn (OR-6)",
            "NOT_YOUR_TURN",
            ctx,
        )
        require(
            e["effect_id"] not in enc.turn_log.get("saved", ()),
            "one saving throw per effect per turn (ruling 20)",
            "ALREADY_SAVED",
            ctx,
            "effect_id",
        )
    total = dice.roll_total(p["roll"]) + sum(m["value"] for m in declared_modifiers(p["modifiers"], ctx))
    success = total >= SAVE_DC
    if enc is not None:
        enc.turn_log["saved"] = [*enc.turn_log.get("saved", ()), e["effect_id"]]
    out: dict[str, Any] = {
        "creature": c.id,
        "effect_id": e["effect_id"],
        "natural": natural,
        "total": total,
        "success": success,
    }
    if success:
        core.remove(c, {e["effect_id"]})
        if e.get("aftereffect") is not None:
            out["aftereffect"] = begin_aftereffect(
                state, c, e["aftereffect"], e["source"], pending=enc is not None
            )
    elif e.get("first_failed_save") is not None:
        changed = effects.first_failed_save(state, e)
        c.effects = [changed if x["effect_id"] == e["effect_id"] else x for x in c.effects]
        state.hold(c.id, changed)  # its rider's duration may name a new anchor
        out["first_failed_save"] = {
            "instead": e["first_failed_save"]["instead"],
            "components": changed["components"],
            "duration": changed["duration"]["kind"],
        }
    return out


def end_of_turn_order(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-OR-11 / OR-6: the player chooses the order of the end-of-turn resolutions without a roll."""
    c = owned(state, p["creature"])
    enc = running_for(state, c.id)
    if enc is None:
        raise RuleViolation(
            "the end-of-turn order is chosen during an encounter turn", field="creature", code="NO_TURN"
        )
    require(enc.current == c.id, f"it is not {c.name}'s turn", "NOT_YOUR_TURN", ctx)
    ids = p["effect_ids"]
    if len(set(ids)) != len(ids):
        raise InvalidInput("an effect is listed twice", field="effect_ids")
    for eid in ids:
        core.find(state, eid)
    enc.turn_log["order"] = list(ids)
    return {"creature": c.id, "order": list(ids)}


def maintainer(state: OrcusState, e: dict[str, Any], field: str = "effect_id") -> Creature:
    if e["duration"].get("kind") != "maintain":
        raise RuleViolation(f"effect {e['effect_id']} is not maintained", field=field, code="NOT_MAINTAINED")
    user: Creature = owned(state, e["duration"].get("anchor") or e["source"], field)
    return user


def effect_maintained(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-18 / B-OR-8: on its own turn the user pays the stated action; the effect then lasts to
    the end of its next turn (where it must be maintained again)."""
    carrier, e = core.find(state, p["effect_id"])
    user = maintainer(state, e)
    not_dead(user, ctx)
    action = e["duration"].get("action", "swift")
    require(
        p["action"] == action,
        f"this effect is maintained with a {action} action",
        "WRONG_ACTION",
        ctx,
        "action",
    )
    enc = running_for(state, user.id)
    if enc is None:
        raise RuleViolation(
            "an effect is maintained on its user's turn in an encounter", field="effect_id", code="NO_TURN"
        )
    require(enc.current == user.id, f"{user.name} maintains it on its own turn (OR-18)", "NOT_YOUR_TURN", ctx)
    number = turn_no(enc)
    require(
        e.get("maintained_turn") != number,
        "this effect is already maintained this turn",
        "ALREADY_MAINTAINED",
        ctx,
        "effect_id",
    )
    _, e = core.find(state, p["effect_id"])
    e["maintained_turn"] = number
    return {"effect_id": e["effect_id"], "target": carrier.id, "maintained_by": user.id, "action": action}


def effect_ended_by_choice(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-18: the user ends a maintained effect at any time, as a free action (no aftereffect:
    it neither expired nor was saved against)."""
    carrier, e = core.find(state, p["effect_id"])
    user = maintainer(state, e)
    core.remove(carrier, {e["effect_id"]})
    return {"effect_id": e["effect_id"], "target": carrier.id, "ended_by": user.id}


def effect_ended(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """An effect ends for a reason the fold cannot derive (the grappler lets go, the target
    escapes, a power dispels it, the GM): no aftereffect."""
    carrier, e = core.find(state, p["effect_id"])
    core.remove(carrier, {e["effect_id"]})
    return {"effect_id": e["effect_id"], "target": carrier.id, "reason": p["reason"]}


HANDLERS = {
    "EffectApplied": effect_applied,
    "SavingThrowRolled": saving_throw,
    "EndOfTurnOrderChosen": end_of_turn_order,
    "EffectMaintained": effect_maintained,
    "EffectEndedByChoice": effect_ended_by_choice,
    "EffectEnded": effect_ended,
}
