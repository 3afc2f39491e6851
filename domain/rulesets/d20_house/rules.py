"""d20 house rules: one handler per fact type (sheets, hit points, dying, saves, abilities,
rests, actions). Attacks are in ``attacks.py``, the encounter hooks in ``hooks.py``.

Each handler checks every precondition *before* it changes anything (a refused command
stores nothing; an orphaned fact leaves the state as it was), then applies the fact and
returns its outcome with a breakdown. Rule ids point into RULES.md.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import check_field
from domain.core.rules import declared_modifiers, owned, peek, require
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.d20_house import actions, life
from domain.rulesets.d20_house.facts import SHEET
from domain.rulesets.d20_house.state import Creature, D20State, die, new_creature, settle
from domain.rulesets.d20_house.tables import (
    ABILITY_NAMES,
    DEFENSIVE_CASTING_DC_BASE,
    RESTS,
    SAVE_ABILITY,
    SAVE_NAMES,
)

Handler = Any


def alive(c: Creature, ctx: Any, field: str = "creature") -> None:
    require(c.dead_by is None, f"{c.name} is dead", "CREATURE_DEAD", ctx, field)


def conscious(c: Creature, ctx: Any, field: str = "creature") -> None:
    alive(c, ctx, field)
    require(c.conscious, f"{c.name} is not conscious ({c.life})", "NOT_CONSCIOUS", ctx, field)


def in_running_encounter(state: D20State, c: Creature) -> bool:
    enc = state.encounter
    return (
        enc is not None
        and getattr(enc, "state", "running") == "running"
        and c.id in getattr(enc, "participants", ())
    )


def override(ctx: Any, key: str, value: Any) -> tuple[Any, bool]:
    """A GM's ``OutcomeOverridden`` of one derived result (C0.4)."""
    if key in ctx.overrides:
        return ctx.overrides[key], True
    return value, False


# --------------------------------------------------------------- registration
def _set_sheet(c: Creature, p: dict[str, Any]) -> None:
    for key, value in p.items():
        if key in ("creature_id", "reason", "changes"):
            continue
        if key == "class":
            c.klass = value
        elif isinstance(value, dict):
            setattr(c, key, dict(value))
        elif isinstance(value, list):
            setattr(c, key, list(value))
        else:
            setattr(c, key, value)


def creature_registered(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C3.1 registration: the sheet (A3), HP at maximum, no ability damage."""
    cid = p["creature_id"]
    if cid in state.creatures:
        raise RuleViolation(f"creature {cid!r} already exists", field="creature_id", code="ALREADY_EXISTS")
    c = new_creature(cid)
    _set_sheet(c, p)
    c.hp = c.max_hp
    c.ability_damage, c.ability_drain = {}, {}
    c.stable, c.dead_by = False, None
    c.flat_footed, c.running, c.aoo_used, c.turn = False, False, 0, None
    c.massive_saves, c.last_stabilization, c.effects = [], None, []
    state.creatures[cid] = c
    return {"creature": cid, "hp": c.hp, "S": c.S, "B": c.B}


SHEET_CHANGES = set(SHEET) - {"kind"}


def sheet_updated(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C3.2 LevelChanged and any other recorded sheet change (level, BAB, saves, max HP...).
    A higher max HP adds the difference to HP; thresholds follow a new Stamina (B-DH-9)."""
    c = peek(state, p["creature_id"], "creature_id")
    unknown = set(p["changes"]) - SHEET_CHANGES
    if unknown:
        raise InvalidInput(f"cannot change {', '.join(sorted(unknown))} on a sheet", field="changes")
    if not p["changes"]:
        raise InvalidInput("a sheet update changes something", field="changes")
    checked = {k: check_field("SheetUpdated", k, SHEET[k], v) for k, v in p["changes"].items()}
    c = owned(state, c.id, "creature_id")
    before = life.snapshot(c)
    delta = checked.get("max_hp", c.max_hp) - c.max_hp
    _set_sheet(c, checked)
    if delta > 0:
        c.hp += delta
    c.hp = min(c.hp, c.max_hp)
    settle(c)
    return {"creature": c.id, "changed": sorted(checked), **life.report(before, c)}


# ------------------------------------------------------------------- hit points
def _amount(p: dict[str, Any], what: str) -> int:
    total: int = p["amount"] + (dice.roll_total(p["roll"]) if p["roll"] else 0)
    if total < 1:
        raise InvalidInput(f"{what} of at least 1 (an amount or a roll)", field="amount")
    return total


def damage_taken(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Damage that is not an attack's (a hazard, a fall): HP down, a stable creature dying
    again (B-DH-4), dead below -S (DH-10); never a massive-damage save (ruling 26)."""
    amount = _amount(p, "damage")
    c = owned(state, p["target"], "target")
    alive(c, ctx, "target")
    return {"target": c.id, "source": p["source"], **life.damage(c, amount)}


def healing_applied(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-12 / B-DH-7: any healing stabilises a dying creature; -B or better wakes it
    disabled; 1 or more makes it fully functional."""
    amount = _amount(p, "healing")
    if p["healer"] is not None:
        peek(state, p["healer"], "healer")
    c = owned(state, p["target"], "target")
    alive(c, ctx, "target")
    return {"target": c.id, "source": p["source"], **life.heal(c, amount)}


def heal_check(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-12 / B-DH-6: an ally's Heal check against 10 + |HP| stabilises a dying creature."""
    if p["healer"] == p["target"]:
        raise InvalidInput("a dying creature cannot treat itself (an ally makes the check)", field="healer")
    healer = peek(state, p["healer"], "healer")
    c = peek(state, p["target"], "target")
    alive(c, ctx, "target")
    require(c.band == "dying", f"{c.name} is not dying ({c.life})", "NOT_DYING", ctx, "target")
    require(not c.stable, f"{c.name} is already stable", "ALREADY_STABLE", ctx, "target")
    conscious(healer, ctx, "healer")
    dc = state.flags["dh.heal_check_dc_base"] + abs(c.hp)
    parts = [
        {"source": "d20", "value": dice.roll_total(p["roll"])},
        *healer.penalty("checks"),
        *declared_modifiers(p["modifiers"], ctx),
    ]
    total = sum(x["value"] for x in parts)
    success, overridden = override(ctx, "success", total >= dc)
    c = owned(state, c.id, "target")
    if success:
        c.stable = True
    return {
        "healer": healer.id,
        "target": c.id,
        "total": total,
        "parts": parts,
        "dc": dc,
        "success": bool(success),
        "overridden": ["success"] if overridden else [],
        "life_after": c.life,
    }


def stabilization(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-12 / B-DH-3 / ruling 26: a dying creature's d% roll after the last turn of a round:
    a face at most its effective Stamina stabilises it; otherwise it loses 1 HP (dead below
    -S)."""
    c = peek(state, p["creature"])
    alive(c, ctx)
    require(c.band == "dying", f"{c.name} is not dying ({c.life})", "NOT_DYING", ctx)
    require(not c.stable, f"{c.name} is already stable: it loses no more HP", "ALREADY_STABLE", ctx)
    when = [p["encounter_id"], p["round"]] if p["round"] is not None else None
    require(
        when is None or c.last_stabilization != when,
        f"{c.name} already rolled its stabilisation for round {p['round']}",
        "STABILIZATION_ROLLED",
        ctx,
        "round",
    )
    face = dice.percentile(p["roll"]) or 0
    chance = c.S
    success = face <= chance if state.flags["dh.stabilize_on"] == "at_most_stamina" else face < chance
    success, overridden = override(ctx, "success", success)
    c = owned(state, c.id)
    if when is not None:
        c.last_stabilization = when
    out: dict[str, Any] = {
        "creature": c.id,
        "face": face,
        "chance": chance,
        "success": bool(success),
        "overridden": ["success"] if overridden else [],
    }
    if success:
        c.stable = True
        out.update({"hp_after": c.hp, "life_after": c.life, "stable": True})
    else:
        out.update(life.lose_hp(c, 1))
    return out


# ---------------------------------------------------------------------- saves
def save_result(c: Creature, save: str, roll: dict[str, Any], dc: int, mods: Any, ctx: Any) -> dict[str, Any]:
    """DH-15: d20 + base save + ability modifier (+ conditions, declared modifiers) against
    the DC; a natural 1 always fails, a natural 20 always succeeds."""
    natural = dice.natural(roll)
    parts = [
        {"source": "d20", "value": dice.roll_total(roll)},
        {"source": f"base {SAVE_NAMES[save]}", "value": c.base_saves[save]},
        {"source": ABILITY_NAMES[SAVE_ABILITY[save]], "value": c.mod(SAVE_ABILITY[save])},
        *c.penalty("saves"),
        *declared_modifiers(mods, ctx),
    ]
    parts = [x for x in parts if x["value"] or x["source"] == "d20"]
    total = sum(x["value"] for x in parts)
    success = natural == 20 or (natural != 1 and total >= dc)
    success, overridden = override(ctx, "success", success)
    return {
        "save": save,
        "natural": natural,
        "total": total,
        "parts": parts,
        "dc": dc,
        "success": bool(success),
        "overridden": ["success"] if overridden else [],
    }


def saving_throw(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-15. The effect's consequences are the table's to record (the fact says what it was)."""
    c = peek(state, p["creature"])
    alive(c, ctx)
    return {
        "creature": c.id,
        "effect": p["effect"],
        **save_result(c, p["save"], p["roll"], p["dc"], p["modifiers"], ctx),
    }


# ------------------------------------------------------------------ abilities
def ability_damaged(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """B-DH-9 / ruling 26: S and B recomputed at once, HP unchanged; dead when HP < -S or
    Stamina reaches 0 (DH-13)."""
    c = owned(state, p["creature"])
    alive(c, ctx)
    before = life.snapshot(c)
    ability, amount = p["ability"], p["amount"]
    score_before = c.score(ability)
    if p["drain"]:
        c.ability_drain = {**c.ability_drain, ability: c.ability_drain.get(ability, 0) + amount}
    else:
        c.ability_damage = {**c.ability_damage, ability: c.ability_damage.get(ability, 0) + amount}
    settle(c)
    return {
        "creature": c.id,
        "ability": ability,
        "drain": p["drain"],
        "score_before": score_before,
        "score_after": c.score(ability),
        "S_before": before["S"],
        "S_after": c.S,
        "B_before": before["B"],
        "B_after": c.B,
        **life.report(before, c),
    }


def ability_recovery(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-14 house rule: lost ability scores (damage and drain) return after at least 4 hours
    of sleep or 8 hours of rest without spells, skills or combat. The rest takes its time."""
    rest = RESTS[p["kind"]]
    if not p["creatures"] or len(set(p["creatures"])) != len(p["creatures"]):
        raise InvalidInput("name each resting creature once", field="creatures")
    who = [peek(state, cid, "creatures") for cid in p["creatures"]]
    require(
        p["hours"] >= rest.min_hours,
        f"ability scores return after {rest.label}; {p['hours']} hour(s) is too short (DH-14)",
        "REST_TOO_SHORT",
        ctx,
        "hours",
    )
    require(
        p["clean"],
        "ability scores return only after a rest without spells, skills or combat (DH-14)",
        "REST_NOT_CLEAN",
        ctx,
        "clean",
    )
    for c in who:
        alive(c, ctx, "creatures")
        require(
            not in_running_encounter(state, c),
            f"{c.name} is in a running encounter: no rest in combat (DH-14)",
            "ENCOUNTER_RUNNING",
            ctx,
            "creatures",
        )
    results = {}
    for c in who:
        c = owned(state, c.id, "creatures")
        before = life.snapshot(c)
        restored = {
            a: c.ability_damage.get(a, 0) + c.ability_drain.get(a, 0)
            for a in sorted(set(c.ability_damage) | set(c.ability_drain))
        }
        c.ability_damage, c.ability_drain = {}, {}
        settle(c)
        results[c.id] = {"restored": restored, "S_after": c.S, "B_after": c.B, **life.report(before, c)}
    state.minutes += p["hours"] * 60
    return {"kind": p["kind"], "hours": p["hours"], "creatures": results, "clock": state.minutes}


# ---------------------------------------------------------------- death, life
def death_declared(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = owned(state, p["creature"])
    alive(c, ctx)
    die(c, "declared")
    return {"creature": c.id, "cause": p["cause"], "dead_by": c.dead_by}


def resurrected(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-14 house rule: brought back to life, a character loses no levels; the rest follows
    the spell or power (the fact's ``hp`` and ``restore_abilities``)."""
    c = peek(state, p["creature"])
    require(c.dead_by is not None, f"{c.name} is not dead", "NOT_DEAD", ctx)
    hp = min(p["hp"], c.max_hp)
    damage = {} if p["restore_abilities"] else c.ability_damage
    drain = {} if p["restore_abilities"] else c.ability_drain
    lost = damage.get("stamina", 0) + drain.get("stamina", 0)
    s = max(0, c.abilities["stamina"] - lost)
    require(
        s > 0 and hp >= -s,
        f"{c.name} would still be dead (Stamina {s}, HP {hp}): restore its abilities or give more HP",
        "STILL_DEAD",
        ctx,
    )
    c = owned(state, c.id)
    cause = c.dead_by
    c.dead_by, c.hp, c.stable = None, hp, False
    c.ability_damage, c.ability_drain = dict(damage), dict(drain)
    c.massive_saves, c.flat_footed, c.aoo_used = [], False, 0
    return {
        "creature": c.id,
        "means": p["means"],
        "was_dead_by": cause,
        "hp": c.hp,
        "level": c.level,
        "life_after": c.life,
    }


# -------------------------------------------------------------------- actions
def action_taken(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-4 actions; DH-11: a disabled creature takes one standard or move action a round and
    a strenuous one (running included) costs it 1 HP after the action (B-DH-8)."""
    action, run = p["action"], p["run"]
    if run and action != "full_round":
        raise InvalidInput("running is a full-round action (DH-4)", field="run")
    c = peek(state, p["creature"])
    conscious(c, ctx)
    moves = p["moves"] if p["moves"] is not None else (action == "move" or run)
    turn = actions.spend(c, action, moves, ctx)
    c = owned(state, c.id)
    c.turn = turn
    if run and turn is not None:
        c.running = True  # loses Agility to AC until its next turn (DH-4), unless the Run feat
    out: dict[str, Any] = {"creature": c.id, "action": action, "name": p["name"], "run": run}
    strenuous = p["strenuous"] or run
    out.update(strenuous_cost(state, c, strenuous))
    return out


def strenuous_cost(state: D20State, c: Creature, strenuous: bool) -> dict[str, Any]:
    """B-DH-8: after a strenuous action a disabled creature loses 1 HP (it may start dying)."""
    if not strenuous or c.band != "disabled":
        return {}
    return {"strenuous": life.damage(c, state.flags["dh.strenuous_hp_loss"])}


def defensive_casting(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """DH-5: casting defensively is a Concentration check against 15 + spell level (Combat
    Casting +4); success avoids the attack of opportunity."""
    c = peek(state, p["creature"])
    conscious(c, ctx)
    dc = DEFENSIVE_CASTING_DC_BASE + p["spell_level"]
    feat = sum(f.concentration for f in c.feat_effects())
    parts = [
        {"source": "d20", "value": dice.roll_total(p["roll"])},
        *([{"source": "Combat Casting", "value": feat}] if feat else []),
        *c.penalty("checks"),
        *declared_modifiers(p["modifiers"], ctx),
    ]
    total = sum(x["value"] for x in parts)
    success, overridden = override(ctx, "success", total >= dc)
    return {
        "creature": c.id,
        "total": total,
        "parts": parts,
        "dc": dc,
        "success": bool(success),
        "provokes": not success,
        "overridden": ["success"] if overridden else [],
    }


def time_advanced(state: D20State, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    state.minutes += p["minutes"]
    return {"clock": state.minutes}


HANDLERS: dict[str, Handler] = {
    "CreatureRegistered": creature_registered,
    "SheetUpdated": sheet_updated,
    "DamageTaken": damage_taken,
    "HealingApplied": healing_applied,
    "HealCheckRolled": heal_check,
    "StabilizationRolled": stabilization,
    "SavingThrowRolled": saving_throw,
    "AbilityDamaged": ability_damaged,
    "AbilityRecoveredByRest": ability_recovery,
    "DeathDeclared": death_declared,
    "Resurrected": resurrected,
    "ActionTaken": action_taken,
    "DefensiveCastingRolled": defensive_casting,
    "TimeAdvanced": time_advanced,
}
