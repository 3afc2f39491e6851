"""Orcus mutations: planners that turn typed inputs into Orcus facts (RULES.md C4.2).

Each is a :class:`~api.graphql.planning.MutationSpec` named with the ``orcus_`` prefix and naming
the ruleset, so a campaign of another system refuses it (``WRONG_RULESET``). An attack is one
fact (``orcusAttack``: each target's d20, the damage rolled once for all, OR-13); powers,
recharge rolls, action points, effects, saves and maintain, the A4.9 placeholder pack, rests
and XP each have theirs. Dice the client does not enter are rolled by the server. Encounters,
initiative and turns are the core mutations (``startEncounter``, ``rollInitiative``,
``startTurn``, ``endTurn`` with the rolls the turn owes). Every rule is the fold's
(``domain.rulesets.orcus``): a planner only decodes ids, rolls missing dice and says who may act.
"""

from __future__ import annotations

from typing import Any

from api.graphql.errors import ChronicleError
from api.graphql.planning import ACTORS, GM_ONLY, MEMBERS, Look, MutationSpec, Plan, json_arg, one
from api.rulesets.orcus import inputs as I  # noqa: N812
from api.service.application import slug

RULESET = "orcus"


def _modifiers(value: Any, field: str = "modifiers") -> list[Any]:
    return json_arg(value, field, list) or []


def _encounter(look: Look) -> str | None:
    found = look.view.campaign().get("active_encounter")
    return str(found) if found else None


def _carrier(look: Look, effect_id: str) -> tuple[str | None, dict[str, Any] | None]:
    """Who carries the effect ``effect_id`` now, and the effect (None: the fold refuses it)."""
    for cid, c in look.state.creatures.items():
        for e in c.effects:
            if e.get("effect_id") == effect_id:
                return cid, e
    return None, None


# ------------------------------------------------------------------ effects as payloads
def duration_payload(d: I.OrcusDurationInput | None, look: Look) -> dict[str, Any] | None:
    if d is None:
        return None
    out: dict[str, Any] = {"kind": d.kind.value}
    if d.anchor_id is not None:
        out["anchor"] = look.creature(d.anchor_id, "anchorId")
    if d.action is not None:
        out["action"] = d.action.value
    return out


def effect_payload(e: I.OrcusEffectInput, look: Look) -> dict[str, Any]:
    """The effect spec as the fact has it (``domain.rulesets.orcus.effects``)."""
    out: dict[str, Any] = {
        "components": I.components(e.components),
        "duration": duration_payload(e.duration, look),
    }
    if e.name is not None:
        out["name"] = e.name
    if e.on is not None:
        out["on"] = e.on.value
    if e.aftereffect is not None:
        a = e.aftereffect
        after: dict[str, Any] = {"components": I.components(a.components)}
        if a.name is not None:
            after["name"] = a.name
        if a.duration is not None:
            after["duration"] = duration_payload(a.duration, look)
        if a.damage is not None:
            after["damage"] = {"amount": a.damage.amount, "types": list(a.damage.types)}
        out["aftereffect"] = after
    if e.first_failed_save is not None:
        f = e.first_failed_save
        rider: dict[str, Any] = {"components": I.components(f.components), "instead": f.instead}
        if f.name is not None:
            rider["name"] = f.name
        if f.duration is not None:
            rider["duration"] = duration_payload(f.duration, look)
        out["first_failed_save"] = rider
    return out


# ------------------------------------------------------------------ sheets, XP, levels
def p_register(i: I.OrcusRegisterCreatureInput, look: Look) -> Plan:
    cid = i.creature_id or slug(i.name)
    payload: dict[str, Any] = {
        "creature_id": cid,
        "name": i.name,
        "kind": i.kind.value,
        "level": i.level,
        "xp": i.xp,
        "max_hp": i.max_hp,
        "surges_per_day": i.surges_per_day,
        "defenses": i.defenses.as_payload(),
        "resist": I.typed(i.resist),
        "vuln": I.typed(i.vuln),
        "powers": [p.as_payload() for p in i.powers],
        "action_points": i.action_points,
    }
    return one("CreatureRegistered", payload, characters=[cid])


def p_update_sheet(i: I.OrcusUpdateSheetInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature_id": c, "changes": json_arg(i.changes, "changes"), "reason": i.reason}
    return one("SheetUpdated", payload, GM_ONLY, characters=[c])


def p_award_xp(i: I.OrcusAwardExperienceInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    return one("ExperienceAwarded", {"creatures": cs, "amount": i.amount, "reason": i.reason}, characters=cs)


def p_set_level(i: I.OrcusSetLevelInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("LevelSet", {"creature": c, "level": i.level}, characters=[c])


# ------------------------------------------------------------------ attacks
def p_attack(i: I.OrcusAttackInput, look: Look) -> Plan:
    attacker = look.creature(i.attacker_id, "attackerId")
    power = i.power
    spec: dict[str, Any] = {
        "name": power.name,
        "power_id": power.power_id,
        "kind": power.kind.value,
        "defense": power.defense.value,
        "attack_bonus": power.attack_bonus,
        "proficiency": power.proficiency,
        "damage": power.damage,
        "weapon": power.weapon,
        "damage_types": list(power.damage_types),
        "miss": power.miss.value,
        "effects": [effect_payload(e, look) for e in power.effects],
        "auto_hit": power.auto_hit,
    }
    targets = []
    for t in i.targets:
        entry: dict[str, Any] = {"target": look.creature(t.target_id, "targets.targetId")}
        if t.chose_to_be_hit:
            entry["chose_to_be_hit"] = True
            if t.roll is not None:
                entry["roll"] = look.roll(t.roll)  # the fold refuses it (OR-10)
        elif not power.auto_hit or t.roll is not None:
            entry["roll"] = look.roll(t.roll, "1d20")
        if t.circumstances:
            entry["circumstances"] = [
                c.circumstance.value
                if c.ruling is None
                else {"name": c.circumstance.value, "ruling": c.ruling}
                for c in t.circumstances
            ]
        if t.modifiers is not None:
            entry["modifiers"] = _modifiers(t.modifiers, "targets.modifiers")
        if t.crit_bonus is not None:
            entry["crit_bonus"] = look.roll(t.crit_bonus)
        targets.append(entry)
    damage = look.roll(i.damage, power.damage, weapon=power.weapon) if power.damage or i.damage else None
    payload = {
        "attacker": attacker,
        "power": spec,
        "targets": targets,
        "damage": damage,
        "action": i.action.value if i.action is not None else None,
    }
    shown = [attacker] + [t["target"] for t in targets if t["target"] != attacker]
    return one("AttackMade", payload, ACTORS, {attacker}, shown, _encounter(look))


# ------------------------------------------------------------------ powers, actions, action points
def p_use_power(i: I.OrcusUsePowerInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "power_id": i.power_id, "action": i.action.value if i.action else None}
    return one("PowerUsed", payload, ACTORS, {c}, [c], _encounter(look))


def p_recharge(i: I.OrcusRechargeRollInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "power_id": i.power_id, "roll": look.roll(i.roll, "1d6")}
    return one("RechargeRolled", payload, ACTORS, {c}, [c], _encounter(look))


def p_recharge_condition(i: I.OrcusRechargeConditionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "power_id": i.power_id, "trigger": i.trigger}
    return one("RechargeConditionMet", payload, GM_ONLY, characters=[c])


def p_action_point(i: I.OrcusSpendActionPointInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "ActionPointSpent", {"creature": c, "extra": i.extra.value}, ACTORS, {c}, [c], _encounter(look)
    )


def p_take_action(i: I.OrcusTakeActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    if i.gm_exception and not look.who.is_gm:
        raise ChronicleError("FORBIDDEN", "only the GM makes exceptions", "gmException")
    eid = _encounter(look)
    payload = {
        "encounter_id": eid,
        "creature": c,
        "action": i.action.value,
        "name": i.name,
        "substitutes_for": i.substitutes_for.value if i.substitutes_for else None,
        "gm_exception": i.gm_exception,
    }
    return one("ActionTaken", payload, ACTORS, {c}, [c], eid)


def p_ready(i: I.OrcusReadyActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    eid = _encounter(look)
    if eid is None:
        raise ChronicleError("NOT_IN_ENCOUNTER", "an action is readied in a running encounter", "characterId")
    payload = {"encounter_id": eid, "creature": c, "action": i.action, "trigger": i.trigger}
    return one("ActionReadied", payload, ACTORS, {c}, [c], eid)


# ------------------------------------------------------------------ effects, saves, maintain
def p_apply_effect(i: I.OrcusApplyEffectInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    if (i.source_id is None) == (i.source is None):
        raise ChronicleError(
            "INVALID_INPUT", "give sourceId (a creature) or source (anything else)", "sourceId"
        )
    source = look.creature(i.source_id, "sourceId") if i.source_id is not None else str(i.source)
    payload = {"target": c, "source": source, "effect": effect_payload(i.effect, look)}
    shown = [c] + ([source] if i.source_id is not None and source != c else [])
    return one(
        "EffectApplied",
        payload,
        ACTORS,
        {source} if i.source_id is not None else set(),
        shown,
        _encounter(look),
    )


def p_save(i: I.OrcusSavingThrowInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "effect_id": i.effect_id,
        "roll": look.roll(i.roll, "1d20"),
        "modifiers": _modifiers(i.modifiers),
    }
    return one("SavingThrowRolled", payload, ACTORS, {c}, [c], _encounter(look))


def _user(effect: dict[str, Any] | None) -> str | None:
    if effect is None:
        return None
    user = effect.get("duration", {}).get("anchor") or effect.get("source")
    return str(user) if user else None


def p_maintain(i: I.OrcusMaintainEffectInput, look: Look) -> Plan:
    carrier, effect = _carrier(look, i.effect_id)
    user = _user(effect)
    shown = [x for x in dict.fromkeys([user, carrier]) if x is not None and x in look.state.creatures]
    payload = {"effect_id": i.effect_id, "action": i.action.value}
    if user is None:
        return one("EffectMaintained", payload, MEMBERS, characters=shown, encounter=_encounter(look))
    return one("EffectMaintained", payload, ACTORS, {user}, shown, _encounter(look))


def p_end_effect(i: I.OrcusEndEffectInput, look: Look) -> Plan:
    carrier, effect = _carrier(look, i.effect_id)
    shown = [carrier] if carrier else []
    if i.by_choice:
        user = _user(effect)
        actors = {user} if user else set()
        return one("EffectEndedByChoice", {"effect_id": i.effect_id}, ACTORS, actors, shown, _encounter(look))
    return one("EffectEnded", {"effect_id": i.effect_id, "reason": i.reason}, characters=shown)


def p_end_of_turn_order(i: I.OrcusEndOfTurnOrderInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "effect_ids": list(i.effect_ids)}
    return one("EndOfTurnOrderChosen", payload, ACTORS, {c}, [c], _encounter(look))


# ------------------------------------------------------------------ the A4.9 placeholder pack
def p_deal_damage(i: I.OrcusDealDamageInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "target": c,
        "roll": look.roll(i.roll),
        "amount": i.amount,
        "types": list(i.types),
        "source": i.source,
    }
    return one("DamageApplied", payload, ACTORS, {c}, [c])


def p_heal(i: I.OrcusHealInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    payload = {
        "target": c,
        "surge_multiplier": i.surge_multiplier,
        "roll": look.roll(i.roll),
        "flat": i.flat,
        "requires_surge": i.requires_surge,
        "source": i.source,
        "healer": healer,
    }
    return one("HealingApplied", payload, ACTORS, {healer or c}, [c] + ([healer] if healer else []))


def p_temp_hp(i: I.OrcusGrantTemporaryHitPointsInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"target": c, "amount": i.amount, "roll": look.roll(i.roll), "source": i.source}
    return one("TemporaryHitPointsGranted", payload, ACTORS, {c}, [c])


def p_surge(i: I.OrcusSpendHealingSurgeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("HealingSurgeSpent", {"creature": c, "note": i.note}, ACTORS, {c}, [c])


def p_rally(i: I.OrcusRallyInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("RallyUsed", {"creature": c}, ACTORS, {c}, [c], _encounter(look))


def p_death_save(i: I.OrcusDeathSaveInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "roll": look.roll(i.roll, "1d20"), "modifiers": _modifiers(i.modifiers)}
    return one("DeathSavingThrowRolled", payload, ACTORS, {c}, [c], _encounter(look))


def p_stabilize(i: I.OrcusStabilizeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    payload = {"creature": c, "healer": healer, "roll": look.roll(i.roll), "dc": i.dc}
    return one("Stabilized", payload, ACTORS, {healer or c}, [c] + ([healer] if healer else []))


def p_declare_death(i: I.OrcusDeclareDeathInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("DeathDeclared", {"creature": c, "cause": i.cause}, characters=[c])


def _rest_who(ids: list[Any] | None, look: Look) -> tuple[list[str] | None, list[str]]:
    if ids is None:
        heroes = [cid for cid, c in look.state.creatures.items() if c.is_hero and c.life != "dead"]
        return None, heroes
    cs = look.creatures(ids, "characterIds")
    return cs, cs


def p_short_rest(i: I.OrcusShortRestInput, look: Look) -> Plan:
    given, shown = _rest_who(i.character_ids, look)
    return one("ShortRestTaken", {"participants": given, "minutes": i.minutes}, characters=shown)


def p_long_rest(i: I.OrcusLongRestInput, look: Look) -> Plan:
    given, shown = _rest_who(i.character_ids, look)
    return one("LongRestTaken", {"participants": given, "hours": i.hours}, characters=shown)


def _spec(name: str, input_cls: type[Any], planner: Any, description: str) -> MutationSpec:
    return MutationSpec(f"orcus_{name}", input_cls, planner, description, ruleset=RULESET)


MUTATIONS: list[MutationSpec] = [
    _spec("register_creature", I.OrcusRegisterCreatureInput, p_register, "Add a hero or monster (C4.1)."),
    _spec("update_sheet", I.OrcusUpdateSheetInput, p_update_sheet, "Change a sheet (ruling 3)."),
    _spec(
        "award_experience",
        I.OrcusAwardExperienceInput,
        p_award_xp,
        "XP for heroes; the level follows the A4.2 table (ruling 22, B-OR-16).",
    ),
    _spec("set_level", I.OrcusSetLevelInput, p_set_level, "Set a level explicitly (ruling 3); null unpins."),
    _spec(
        "attack",
        I.OrcusAttackInput,
        p_attack,
        "An attack: a d20 per target with the A4.6 circumstances, damage rolled once; a natural 20 is a "
        "critical hit for maximum damage (OR-11, B-OR-4, B-OR-5).",
    ),
    _spec("use_power", I.OrcusUsePowerInput, p_use_power, "Use a power that is not an attack (OR-9)."),
    _spec(
        "roll_recharge",
        I.OrcusRechargeRollInput,
        p_recharge,
        "A recharge roll (d6) for an expended 'Recharge X-Y' power (B-OR-17).",
    ),
    _spec(
        "meet_recharge_condition",
        I.OrcusRechargeConditionInput,
        p_recharge_condition,
        "A 'Recharge if ...' condition happened (OR-9).",
    ),
    _spec(
        "spend_action_point",
        I.OrcusSpendActionPointInput,
        p_action_point,
        "Spend an action point for one more action (OR-7, B-OR-3, ruling 21).",
    ),
    _spec(
        "take_action", I.OrcusTakeActionInput, p_take_action, "An action (OR-6, OR-8): swift, immediate..."
    ),
    _spec("ready_action", I.OrcusReadyActionInput, p_ready, "Ready an action with its trigger."),
    _spec("apply_effect", I.OrcusApplyEffectInput, p_apply_effect, "Put an effect on a creature (OR-17)."),
    _spec(
        "roll_saving_throw",
        I.OrcusSavingThrowInput,
        p_save,
        "A saving throw against an effect (OR-19, B-OR-12, ruling 20).",
    ),
    _spec(
        "maintain_effect",
        I.OrcusMaintainEffectInput,
        p_maintain,
        "Maintain an effect with its action on the user's turn (OR-18, B-OR-8, ruling 24).",
    ),
    _spec("end_effect", I.OrcusEndEffectInput, p_end_effect, "End an effect (by choice, or for a reason)."),
    _spec(
        "choose_end_of_turn_order",
        I.OrcusEndOfTurnOrderInput,
        p_end_of_turn_order,
        "The order of the end-of-turn resolutions (B-OR-11).",
    ),
    _spec("deal_damage", I.OrcusDealDamageInput, p_deal_damage, "Damage that is not an attack's (A4.9)."),
    _spec("heal", I.OrcusHealInput, p_heal, "Healing: surge values, dice, flat (A4.9)."),
    _spec(
        "grant_temporary_hit_points",
        I.OrcusGrantTemporaryHitPointsInput,
        p_temp_hp,
        "Temporary hit points; the larger pool stays (A4.9).",
    ),
    _spec("spend_healing_surge", I.OrcusSpendHealingSurgeInput, p_surge, "Spend a healing surge (A4.9)."),
    _spec("rally", I.OrcusRallyInput, p_rally, "Rally, once per encounter (OR-9, A4.9)."),
    _spec("roll_death_save", I.OrcusDeathSaveInput, p_death_save, "A dying hero's death save (A4.9)."),
    _spec("stabilize", I.OrcusStabilizeInput, p_stabilize, "Stabilise a dying hero (A4.9)."),
    _spec("declare_death", I.OrcusDeclareDeathInput, p_declare_death, "Declare a creature dead."),
    _spec("take_short_rest", I.OrcusShortRestInput, p_short_rest, "A short rest (OR-9, A4.9)."),
    _spec("take_long_rest", I.OrcusLongRestInput, p_long_rest, "A long rest (OR-7, OR-9, A4.9)."),
]
