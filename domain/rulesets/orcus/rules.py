"""Orcus handlers for sheets, XP, powers, action points, the placeholder HP pack and rests.

One handler per fact type. Each checks every precondition *before* it changes anything (a
refused command stores nothing; during a refold the same refusal orphans the fact, and a GM's
``orphan = keep`` override waives the waivable ones), then applies the fact and returns its
outcome with a breakdown. Rule ids in the docstrings point into RULES.md.

Creature dicts (``powers``, ``expended`` ...) are replaced, never changed in place: clones
of a creature share them (copy-on-write, ``domain/core/state.py``).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core import xp
from domain.core.catalogue import check_field
from domain.core.encounters import running_for
from domain.core.rules import declared_modifiers, owned, require
from domain.errors import InvalidInput, RuleViolation
from domain.rulesets.orcus import effects, life
from domain.rulesets.orcus.facts import FACTS
from domain.rulesets.orcus.state import (
    Creature,
    OrcusState,
    current_level,
    new_creature,
    surge_value,
    xp_level,
    xp_thresholds,
)
from domain.rulesets.orcus.tables import DEFENSES, FREQUENCIES, RESTS, SAVE_DC

Handler = Any


def not_dead(c: Creature, ctx: Any, field: str = "creature") -> None:
    require(c.life != "dead", f"{c.name} is dead", "CREATURE_DEAD", ctx, field)


def started_turn(enc: Any, cid: str) -> int:
    """The number of ``cid``'s last turn start in ``enc`` (0: none yet)."""
    return int(getattr(enc, "turn_started", {}).get(cid, 0))


def own_turn(state: OrcusState, c: Creature, ctx: Any, what: str) -> Any:
    """The running encounter if it is ``c``'s turn; refused otherwise (OR-6, OR-7, B-OR-17)."""
    enc = running_for(state, c.id)
    if enc is None:
        raise RuleViolation(
            f"{what} during {c.name}'s turn in an encounter", field="creature", code="NO_TURN"
        )
    if enc.current is None:
        require(False, f"{what} during {c.name}'s own turn (no turn is in progress)", "NO_TURN", ctx)
    else:
        require(
            enc.current == c.id,
            f"{what} during {c.name}'s own turn (it is {enc.current}'s turn)",
            "NOT_YOUR_TURN",
            ctx,
        )
    return enc


# --------------------------------------------------------------- sheets
def _check_defenses(value: Any) -> dict[str, int]:
    if set(value) != set(DEFENSES):
        raise InvalidInput("defenses must give exactly ac, fort, ref and will", field="defenses")
    return dict(value)


def _check_typed(state: OrcusState, key: str, value: dict[str, int]) -> dict[str, int]:
    known = [*effects.damage_types(state), "all"]
    bad = [t for t in value if t not in known]
    if bad:
        raise InvalidInput(
            f"{key}: unknown damage type(s) {', '.join(bad)}; known: {', '.join(known)}", field=key
        )
    if any(v < 0 for v in value.values()):
        raise InvalidInput(f"{key} values must not be negative", field=key)
    return dict(value)


def check_powers(value: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Powers on a sheet (OR-9): ``{id, name?, frequency, recharge?: [d6 faces], condition?}``."""
    out: dict[str, dict[str, Any]] = {}
    for p in value:
        unknown = set(p) - {"id", "name", "frequency", "recharge", "condition"}
        if unknown:
            raise InvalidInput(f"a power has unknown field(s) {', '.join(sorted(unknown))}", field="powers")
        pid = p.get("id")
        if not isinstance(pid, str) or not pid or pid in out:
            raise InvalidInput("each power has a distinct id", field="powers")
        freq = p.get("frequency")
        if freq not in FREQUENCIES:
            raise InvalidInput(
                f"a power's frequency is one of {', '.join(FREQUENCIES)} (OR-9)", field="powers"
            )
        faces = p.get("recharge")
        if freq == "recharge":
            if (
                not isinstance(faces, list)
                or not faces
                or not all(isinstance(f, int) and not isinstance(f, bool) and 1 <= f <= 6 for f in faces)
                or len(set(faces)) != len(faces)
            ):
                raise InvalidInput(
                    f"power {pid}: 'Recharge X-Y' lists the d6 faces that recharge it, e.g. [5, 6] (OR-9)",
                    field="powers",
                )
        elif faces is not None:
            raise InvalidInput(f"power {pid}: only a recharge power lists recharge faces", field="powers")
        name = p.get("name") or pid
        entry: dict[str, Any] = {"name": str(name), "frequency": freq}
        if freq == "recharge":
            entry["recharge"] = sorted(faces or [])
        if freq == "recharge_if":
            entry["condition"] = str(p.get("condition") or "")
        out[pid] = entry
    return out


def creature_registered(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """C4.1 CreatureRegistered: a hero's level follows its XP (rulings 9, 22); a hero starts with
    1 action point (ruling 21); monsters, elites and bosses keep their stat block's level and
    action points (ruling 9, OR-7)."""
    cid, rank = p["creature_id"], p["kind"]
    if cid in state.creatures:
        raise RuleViolation(f"creature {cid!r} already exists", field="creature_id", code="ALREADY_EXISTS")
    defenses = _check_defenses(p["defenses"])
    resist, vuln = _check_typed(state, "resist", p["resist"]), _check_typed(state, "vuln", p["vuln"])
    powers = check_powers(p["powers"])
    table = xp_thresholds(state.flags)
    if rank == "hero":
        if p["xp"] is not None:
            level = xp.level_for_xp(p["xp"], table)
            if p["level"] is not None and p["level"] != level:
                raise InvalidInput(
                    f"a hero's level follows its XP (ruling 22): {p['xp']} XP is level {level}; "
                    "give one of them, or set a level with LevelSet",
                    field="level",
                )
            hero_xp = p["xp"]
        else:
            level = p["level"] or 1
            hero_xp = xp.threshold(level, table)  # ruling 9: the threshold of its level
        ap = 1 if p["action_points"] is None else p["action_points"]
    else:
        if p["xp"] is not None:
            raise InvalidInput(f"a {rank} tracks no XP (ruling 9): give its level", field="xp")
        if p["level"] is None:
            raise InvalidInput(f"a {rank} needs its stat block's level", field="level")
        level, hero_xp = p["level"], None
        ap = p["action_points"] or 0
    c = new_creature(cid)
    c.name, c.rank, c.level = p["name"], rank, level
    c.defenses, c.max_hp, c.surges_per_day = defenses, p["max_hp"], p["surges_per_day"]
    c.resist, c.vuln, c.powers, c.ap_stat = resist, vuln, powers, ap
    c.hp, c.temp_hp, c.surges, c.life, c.death_fails = c.max_hp, 0, c.surges_per_day, "active", 0
    c.ap, c.ap_spent, c.encounters_since_long_rest = ap, None, 0
    c.xp, c.level_pinned = hero_xp, None
    c.expended, c.recharge_rolled, c.rally_used = {}, {}, None
    c.effects = []
    state.creatures[cid] = c
    return {"creature": cid, "kind": c.kind, "rank": rank, "level": current_level(c, state.flags)}


SHEET_CHANGES = {
    "name",
    "level",
    "defenses",
    "max_hp",
    "surges_per_day",
    "resist",
    "vuln",
    "powers",
    "action_points",
}


def sheet_updated(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A recorded sheet update (ruling 3: numbers that depend on class and level change only this
    way). A higher max HP adds the difference to current HP; a hero's level is set with LevelSet."""
    c = owned(state, p["creature_id"], "creature_id")
    unknown = set(p["changes"]) - SHEET_CHANGES
    if unknown:
        raise InvalidInput(f"cannot change {', '.join(sorted(unknown))} on a sheet", field="changes")
    schema = FACTS["CreatureRegistered"]
    checked = {k: check_field("SheetUpdated", k, schema[k], v) for k, v in p["changes"].items()}
    if "level" in checked and c.is_hero:
        raise InvalidInput("a hero's level follows its XP (ruling 22): use LevelSet", field="changes")
    if "level" in checked and checked["level"] is None:
        raise InvalidInput("a level is a whole number", field="changes")
    if "defenses" in checked:
        checked["defenses"] = _check_defenses(checked["defenses"])
    for key in ("resist", "vuln"):
        if key in checked:
            checked[key] = _check_typed(state, key, checked[key])
    if "powers" in checked:
        checked["powers"] = check_powers(checked["powers"])
    if checked.get("action_points") is None:
        checked.pop("action_points", None)
    grow = checked.get("max_hp", c.max_hp) - c.max_hp
    for key, value in checked.items():
        setattr(c, "ap_stat" if key == "action_points" else key, value)
    if "powers" in checked:
        c.expended = {k: v for k, v in c.expended.items() if k in c.powers}
    if grow > 0:
        c.hp += grow
    c.hp = min(c.hp, c.max_hp)
    c.surges = min(c.surges, c.surges_per_day)
    life.settle(state, c)
    return {"creature": c.id, "changed": sorted(checked)}


def xp_awarded(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-2, ruling 22: XP for heroes; the level follows from the A4.2 table, capped at 30 with the
    XP above 826,500 kept (B-OR-16). Monsters track no XP (ruling 9)."""
    if len(set(p["creatures"])) != len(p["creatures"]):
        raise InvalidInput("a creature is listed twice", field="creatures")
    who = [owned(state, cid, "creatures") for cid in p["creatures"]]
    for c in who:
        if not c.is_hero:
            raise RuleViolation(
                f"{c.name} is a {c.rank}: only heroes track XP (ruling 9)",
                field="creatures",
                code="NOT_ALLOWED",
            )
    levels = {}
    for c in who:
        before = current_level(c, state.flags)
        c.xp = (c.xp or 0) + p["amount"]
        levels[c.id] = {
            "xp": c.xp,
            "xp_level": xp_level(c, state.flags),
            "level_before": before,
            "level_after": current_level(c, state.flags),
        }
    return {"amount": p["amount"], "creatures": levels}


def level_set(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Ruling 3: a GM may set a level explicitly; null returns a hero to the level its XP earns."""
    c = owned(state, p["creature"])
    if c.is_hero:
        c.level_pinned = p["level"]
    else:
        if p["level"] is None:
            raise InvalidInput(f"a {c.rank} needs a level", field="level")
        c.level = p["level"]
    return {"creature": c.id, "level": current_level(c, state.flags), "xp_level": xp_level(c, state.flags)}


# --------------------------------------------------------------- powers (OR-9, B-OR-17)
def power_of(c: Creature, pid: str) -> dict[str, Any]:
    power = c.powers.get(pid)
    if power is None:
        known = ", ".join(sorted(c.powers)) or "none"
        raise InvalidInput(f"{c.name} has no power {pid!r} (its powers: {known})", field="power_id")
    return power


def check_usable(c: Creature, pid: str, ctx: Any) -> dict[str, Any]:
    """OR-9: an expended power cannot be used until it recharges."""
    power = power_of(c, pid)
    require(
        pid not in c.expended,
        f"{c.name}'s {power['name']} is expended until it recharges ({power['frequency'].replace('_', ' ')})",
        "POWER_EXPENDED",
        ctx,
        "power_id",
    )
    return power


def expend(state: OrcusState, c: Creature, pid: str) -> bool:
    """Mark a used power expended (at-will powers never are); when and where it was used."""
    if c.powers[pid]["frequency"] == "at_will":
        return False
    enc = running_for(state, c.id)
    when = {
        "encounter": enc.id if enc else None,
        "turn": int(enc.turn_log.get("turn_no", 0)) if enc else None,
    }
    c.expended = {**c.expended, pid: when}
    return True


def power_used(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-9: using an encounter, daily or recharge power expends it."""
    c = owned(state, p["creature"])
    not_dead(c, ctx)
    check_usable(c, p["power_id"], ctx)
    expended = expend(state, c, p["power_id"])
    return {"creature": c.id, "power_id": p["power_id"], "expended": expended}


def recharge_rolled(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-9 "Recharge X-Y", B-OR-17, ruling 24: a d6 at the start of each of the creature's turns
    after the one it used the power in, only while the power is expended; the power recharges on
    one of its faces."""
    c = owned(state, p["creature"])
    pid = p["power_id"]
    power = power_of(c, pid)
    face = dice.single_face(p["roll"], 6)
    if face is None:
        raise InvalidInput("a recharge roll is a single d6", field="roll")
    require(
        power["frequency"] == "recharge",
        f"{power['name']} has no 'Recharge X-Y' ({power['frequency'].replace('_', ' ')})",
        "WRONG_FREQUENCY",
        ctx,
        "power_id",
    )
    used = c.expended.get(pid)
    require(
        used is not None,
        f"{power['name']} is not expended: nothing to recharge (ruling 24)",
        "NOT_EXPENDED",
        ctx,
        "power_id",
    )
    not_dead(c, ctx)
    enc = own_turn(state, c, ctx, "a recharge roll is made at the start of the creature's turn:")
    turn = int(enc.turn_log.get("turn_no", 0))
    started = started_turn(enc, c.id)
    used_turn = used.get("turn") if used else None
    require(
        used is None or used.get("encounter") != enc.id or used_turn is None or int(used_turn) < started,
        f"{power['name']} was used this turn: its recharge is rolled from the start of "
        f"{c.name}'s next turn (B-OR-17)",
        "NOT_YET",
        ctx,
        "power_id",
    )
    require(
        c.recharge_rolled.get(pid) != turn,
        f"{c.name} already rolled to recharge {power['name']} this turn",
        "ALREADY_ROLLED",
        ctx,
        "power_id",
    )
    recharged = face in power["recharge"]
    c.recharge_rolled = {**c.recharge_rolled, pid: turn}
    if recharged:
        c.expended = {k: v for k, v in c.expended.items() if k != pid}
    return {
        "creature": c.id,
        "power_id": pid,
        "face": face,
        "recharge_on": power["recharge"],
        "recharged": recharged,
    }


def recharge_condition_met(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-9 "Recharge if ...": the power recharges when its condition happens (the table says so)."""
    c = owned(state, p["creature"])
    pid = p["power_id"]
    power = power_of(c, pid)
    require(
        power["frequency"] == "recharge_if",
        f"{power['name']} has no 'Recharge if' condition",
        "WRONG_FREQUENCY",
        ctx,
        "power_id",
    )
    require(
        pid in c.expended,
        f"{power['name']} is not expended: nothing to recharge",
        "NOT_EXPENDED",
        ctx,
        "power_id",
    )
    c.expended = {k: v for k, v in c.expended.items() if k != pid}
    return {"creature": c.id, "power_id": pid, "trigger": p["trigger"], "recharged": True}


# --------------------------------------------------------------- action points (OR-7, B-OR-3, ruling 21)
def action_point_spent(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-7 / B-OR-3 / ruling 21: on its own turn, never in the surprise round (B-OR-6), a free
    action for one more standard, move or swift action; a hero at most once per encounter, an
    elite or boss at most once per round."""
    c = owned(state, p["creature"])
    not_dead(c, ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    require(c.ap > 0, f"{c.name} has no action point", "NO_ACTION_POINT", ctx)
    enc = own_turn(state, c, ctx, "an action point is spent")
    require(
        not enc.surprise_round,
        "no action points in the surprise round (OR-4, OR-7)",
        "SURPRISE_ROUND",
        ctx,
    )
    spent = c.ap_spent or {}
    if c.is_hero:
        require(
            spent.get("encounter") != enc.id,
            f"{c.name} has already spent an action point in this encounter (OR-7)",
            "ACTION_POINT_SPENT_THIS_ENCOUNTER",
            ctx,
        )
    else:
        require(
            (spent.get("encounter"), spent.get("round")) != (enc.id, enc.round),
            f"{c.name} has already spent an action point this round (OR-7)",
            "ACTION_POINT_SPENT_THIS_ROUND",
            ctx,
        )
    c.ap -= 1
    c.ap_spent = {"encounter": enc.id, "round": enc.round}
    extra = dict(enc.turn_log.get("extra", {}))
    extra[p["extra"]] = extra.get(p["extra"], 0) + 1
    enc.turn_log["extra"] = extra
    return {"creature": c.id, "extra": p["extra"], "action_points_left": c.ap}


def encounter_count(state: OrcusState, participants: list[str]) -> list[str]:
    """OR-7 / B-OR-3: at the end of an encounter each living hero counts it; every second one
    since its last long rest gains it an action point (capped by ``or.action_point_cap``)."""
    cap = state.flags["or.action_point_cap"]
    gained = []
    for cid in participants:
        c = state.creatures.get(cid)
        if c is None or not c.is_hero or c.life == "dead":
            continue
        c = state.own(cid)
        c.encounters_since_long_rest += 1
        if c.encounters_since_long_rest % 2 == 0:
            c.ap = c.ap + 1 if cap is None else min(cap, c.ap + 1)
            gained.append(cid)
    return gained


# --------------------------------------------------------------- the placeholder HP pack (A4.9)
def damage_applied(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Damage that is not an attack's (a hazard, an aftereffect the table records ...): types,
    resistance and vulnerability, then the HP placeholder."""
    types = effects.check_types(state, p["types"], "types")
    c = owned(state, p["target"], "target")
    not_dead(c, ctx, "target")
    raw = (dice.roll_total(p["roll"]) if p["roll"] else 0) + p["amount"]
    amount, steps = life.modify(c, raw, types)
    return {"target": c.id, "types": types, "steps": steps, **life.deliver(state, c, amount)}


def healing_applied(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A4.9 Healing (4e): surge values, dice and flat healing; ruling 6: a healing that requires
    its target to spend a surge it does not have restores nothing."""
    c = owned(state, p["target"], "target")
    not_dead(c, ctx, "target")
    life.can_heal(c)
    if p["healer"] is not None:
        owned(state, p["healer"], "healer")
    if p["requires_surge"] and c.surges <= 0:
        return {
            "target": c.id,
            "surge_spent": False,
            "hp_healed": 0,
            "note": f"{c.name} has no healing surge left: the healing restores nothing (ruling 6)",
        }
    spent = False
    if p["requires_surge"]:
        c.surges -= 1
        spent = True
    value = surge_value(c, state.flags)
    parts = [
        {"source": f"{p['surge_multiplier']} x surge value {value}", "value": value * p["surge_multiplier"]},
        {"source": "dice", "value": dice.roll_total(p["roll"]) if p["roll"] else 0},
        {"source": "flat", "value": p["flat"]},
    ]
    parts = [x for x in parts if x["value"] or (x["source"] == "dice" and p["roll"])]
    healed = life.heal(state, c, max(0, sum(x["value"] for x in parts)))
    return {"target": c.id, "surge_spent": spent, "parts": parts, **healed}


def temporary_hp(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A4.9 Hit points (4e): temporary HP do not add up; the larger pool stays."""
    c = owned(state, p["target"], "target")
    not_dead(c, ctx, "target")
    amount = p["amount"] + (dice.roll_total(p["roll"]) if p["roll"] else 0)
    before = c.temp_hp
    c.temp_hp = max(c.temp_hp, amount)
    return {"target": c.id, "granted": amount, "temp_hp_before": before, "temp_hp_after": c.temp_hp}


def _spend_surge(state: OrcusState, c: Creature, ctx: Any) -> dict[str, Any]:
    require(c.surges > 0, f"{c.name} has no healing surge left (ruling 6)", "NO_HEALING_SURGE", ctx)
    require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    life.can_heal(c)
    c.surges -= 1
    return {"surges_left": c.surges, **life.heal(state, c, surge_value(c, state.flags))}


def surge_spent(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A4.9 Healing (4e): a hero spends a healing surge on its own to regain its value, out of an
    encounter (a short rest; ``or.placeholder.short_rest``); refused with none (rulings 6, 20)."""
    c = owned(state, p["creature"])
    not_dead(c, ctx)
    if state.flags["or.placeholder.short_rest"] == "4e":
        require(
            running_for(state, c.id) is None,
            f"{c.name} is in a running encounter: surges are spent on their own only out of combat "
            "(in combat: Rally or a power)",
            "ENCOUNTER_RUNNING",
            ctx,
        )
    return {"creature": c.id, **_spend_surge(state, c, ctx)}


def rally_used(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """OR-9: Rally is usable once per encounter (RULE); what it does is the A4.9 placeholder
    (``or.placeholder.rally``: spend a healing surge and regain its value). Out of an encounter
    it is usable once until a rest."""
    c = owned(state, p["creature"])
    not_dead(c, ctx)
    enc = running_for(state, c.id)
    key = enc.id if enc is not None else ""
    require(
        c.rally_used != key,
        f"{c.name} has already rallied "
        + ("in this encounter (OR-9)" if enc is not None else "since the last rest"),
        "RALLY_USED",
        ctx,
    )
    out: dict[str, Any] = {"creature": c.id}
    if state.flags["or.placeholder.rally"] == "surge":
        out.update(_spend_surge(state, c, ctx))
    else:
        require(c.conscious, f"{c.name} is not conscious", "NOT_CONSCIOUS", ctx)
    c.rally_used = key
    return out


def _holds(mods: list[dict[str, Any]], ctx: Any) -> int:
    return sum(m["value"] for m in declared_modifiers(mods, ctx))


def death_save(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A4.9 0 HP or below (4e): at the end of its turn a dying hero rolls d20: below 10 a failure
    (the third before a rest kills it), 20 or higher spends a healing surge and heals its value;
    with no surge left a 20 is recorded and changes nothing (rulings 6, 20)."""
    c = owned(state, p["creature"])
    require(c.life == "dying", f"{c.name} is not dying", "NOT_DYING", ctx)
    natural = dice.natural(p["roll"])
    if natural is None:
        raise InvalidInput("a death saving throw is a single d20 (plus modifiers)", field="roll")
    enc = running_for(state, c.id)
    if enc is not None and state.flags["or.enforce_turns"]:
        own_turn(state, c, ctx, "a death saving throw is rolled at the end of the creature's turn:")
        require(
            not enc.turn_log.get("death_save"),
            f"{c.name} has already rolled its death save this turn",
            "ALREADY_ROLLED",
            ctx,
        )
    total = dice.roll_total(p["roll"]) + _holds(p["modifiers"], ctx)
    out: dict[str, Any] = {"creature": c.id, "natural": natural, "total": total}
    if total < SAVE_DC:
        c.death_fails += 1
        out["result"] = "failure"
        if c.death_fails >= state.flags["or.placeholder.death_save_failures"]:
            c.life = "dead"
    elif total < 20:
        out["result"] = "no change"
    elif c.surges > 0:
        c.surges -= 1
        out["result"] = "spends a healing surge"
        out.update(life.heal(state, c, surge_value(c, state.flags)))
    else:
        out["result"] = "20 or higher, but no healing surge left: no change"
    if enc is not None:
        enc.turn_log["death_save"] = True
    out["death_save_failures"] = c.death_fails
    out["life_after"] = c.life
    return out


def stabilized(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """A4.9 0 HP or below (4e): a check (DC ``or.placeholder.stabilize_dc``) stops the death saves;
    without a roll the fact is the table's ruling that it worked."""
    c = owned(state, p["creature"])
    require(c.life == "dying", f"{c.name} is not dying", "NOT_DYING", ctx)
    if p["healer"] is not None:
        h = owned(state, p["healer"], "healer")
        require(h.conscious, f"{h.name} is not conscious", "NOT_CONSCIOUS", ctx, "healer")
    dc = p["dc"] if p["dc"] is not None else state.flags["or.placeholder.stabilize_dc"]
    total = dice.roll_total(p["roll"]) if p["roll"] else None
    success = total is None or total >= dc
    if success:
        c.life = "stabilized"
    return {"creature": c.id, "total": total, "dc": dc, "success": success, "life_after": c.life}


def death_declared(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
    c = owned(state, p["creature"])
    not_dead(c, ctx)
    c.life = "dead"
    return {"creature": c.id, "cause": p["cause"], "life_after": "dead"}


# --------------------------------------------------------------- rests (OR-7, OR-9, A4.9)
def _is_hero(c: Any) -> bool:
    return bool(c.is_hero)


def _rest(kind: str) -> Handler:
    rest = RESTS[kind]

    def handler(state: OrcusState, p: dict[str, Any], ctx: Any) -> dict[str, Any]:
        """OR-9: a short rest recharges encounter and recharge powers, a long rest daily powers too;
        OR-7: a long rest resets a hero's action points to 1 and its count of encounters; the
        rest is the A4.9 placeholder (``or.placeholder.short_rest`` / ``long_rest``)."""
        enc = state.encounter
        require(
            enc is None or getattr(enc, "state", None) == "ended",
            "an encounter is running; end it before resting",
            "ENCOUNTER_RUNNING",
            ctx,
        )
        if p["participants"] is None:
            creatures = state.creatures  # (heroes stay heroes: only those registered since are read)
            heroes = state.registered("heroes", _is_hero)
            who = [state.own(cid) for cid in heroes if creatures[cid].life != "dead"]
        else:
            if len(set(p["participants"])) != len(p["participants"]):
                raise InvalidInput("a creature is listed twice", field="participants")
            who = [owned(state, cid, "participants") for cid in p["participants"]]
        for c in who:
            not_dead(c, ctx, "participants")
            require(
                c.life != "dying",
                f"{c.name} is dying; stabilise or heal it first",
                "CREATURE_DYING",
                ctx,
                "participants",
            )
        placeholder = state.flags[f"or.placeholder.{kind}_rest"] == "4e"
        report = {}
        for c in who:
            report[c.id] = restore(state, c, rest, placeholder)
        state.minutes += p["minutes"] if kind == "short" else p["hours"] * 60
        return {"participants": [c.id for c in who], "recharged": report, "clock": state.minutes}

    return handler


def restore(state: OrcusState, c: Creature, rest: Any, placeholder: bool) -> list[str]:
    """What one rest does for one creature (tables.RESTS; the placeholder parts by flag)."""
    recharged = sorted(pid for pid in c.expended if c.powers[pid]["frequency"] in rest.recharges)
    if recharged:
        c.expended = {k: v for k, v in c.expended.items() if k not in recharged}
    c.recharge_rolled = {}
    c.rally_used = None
    if rest.resets_action_points:
        c.ap = 1 if c.is_hero else c.ap_stat  # OR-7, ruling 21
        c.ap_spent = None
    if rest.resets_encounter_count:
        c.encounters_since_long_rest = 0
    if placeholder:
        c.temp_hp = 0
        c.death_fails = 0
        if rest.restores_hit_points:
            c.hp = c.max_hp
            life.settle(state, c)
        if rest.restores_surges:
            c.surges = c.surges_per_day
    return recharged


HANDLERS: dict[str, Handler] = {
    "CreatureRegistered": creature_registered,
    "SheetUpdated": sheet_updated,
    "ExperienceAwarded": xp_awarded,
    "LevelSet": level_set,
    "PowerUsed": power_used,
    "RechargeRolled": recharge_rolled,
    "RechargeConditionMet": recharge_condition_met,
    "ActionPointSpent": action_point_spent,
    "DamageApplied": damage_applied,
    "HealingApplied": healing_applied,
    "TemporaryHitPointsGranted": temporary_hp,
    "HealingSurgeSpent": surge_spent,
    "RallyUsed": rally_used,
    "DeathSavingThrowRolled": death_save,
    "Stabilized": stabilized,
    "DeathDeclared": death_declared,
    "ShortRestTaken": _rest("short"),
    "LongRestTaken": _rest("long"),
}
