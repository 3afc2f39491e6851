"""Stellar Winds' mutations: planners that turn typed inputs into Stellar Winds facts.

Each is a :class:`~api.graphql.planning.MutationSpec` naming the ruleset, so a campaign of
another system refuses it (``WRONG_RULESET``). The names stay unprefixed (``attack``,
``dealDamage``...): Stellar Winds was the first system and its clients keep working; every
other system's mutations carry its prefix.
"""

from __future__ import annotations

from typing import Any

from api.graphql import inputs as core
from api.graphql.errors import ChronicleError
from api.graphql.planning import ACTORS, Look, MutationSpec, Plan, json_arg, one
from api.rulesets.stellar_winds import inputs as I  # noqa: N812
from api.service.application import slug

RULESET = "stellar-winds"


def effect_source(look: Look, effect_id: str) -> tuple[str | None, str | None]:
    """Who created an effect and who carries it (read-only: the state is the present's own)."""
    state = look.state
    for cid in state.holders:
        c = state.creatures.get(cid)
        for e in getattr(c, "effects", ()) or ():
            if e.get("effect_id") == effect_id:
                return e.get("source"), cid
    raise ChronicleError("NOT_FOUND", f"no effect {effect_id!r}", "effectId")


def modifiers_of(i: Any, field_name: str = "modifiers") -> list[Any] | None:
    """The declared modifiers as the facts keep them (``{source, value, type?, ruling?}``): from
    the typed ``typedModifiers`` or the JSON ``modifiers``, not both."""
    if i.typed_modifiers is None:
        return json_arg(i.modifiers, field_name, list)
    if i.modifiers is not None:
        raise ChronicleError("INVALID_INPUT", "give modifiers or typedModifiers, not both", field_name)
    return [
        {
            "source": m.source,
            "value": m.value,
            **({"type": m.type.value} if m.type is not I.BonusType.UNTYPED else {}),
            **({"ruling": m.ruling} if m.ruling is not None else {}),
        }
        for m in i.typed_modifiers
    ]


def p_register(i: I.RegisterCreatureInput, look: Look) -> Plan:
    cid = i.creature_id or slug(i.name)
    payload: dict[str, Any] = {
        "creature_id": cid,
        "name": i.name,
        "kind": i.kind.value,
        "level": i.level,
        "abilities": i.abilities.as_payload(),
        "max_hp": i.max_hp,
        "surges_per_day": i.surges_per_day,
        "defenses": {
            "ac": i.defenses.ac,
            "fort": i.defenses.fort,
            "ref": i.defenses.ref,
            "will": i.defenses.will,
        },
        "speed": i.speed,
        "resist": json_arg(i.resist, "resist") or {},
        "vuln": json_arg(i.vuln, "vuln") or {},
        "regeneration": i.regeneration,
        "crit_min": i.crit_min,
        "heroic": i.heroic,
        "xp": i.xp,
        "initiative_misc": i.initiative_misc,
        "max_wounds": i.max_wounds,
        "second_wind": i.second_wind,
        "powers": [x.as_payload() for x in i.powers],
        "action_points": i.action_points,
        "action_points_per_encounter": i.action_points_per_encounter,
        "ammo": {a.weapon_id: a.rounds for a in i.ammo},
    }
    return one("CreatureRegistered", payload, characters=[cid])


def p_update_sheet(i: I.UpdateSheetInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "SheetUpdated",
        {"creature_id": c, "changes": json_arg(i.changes, "changes"), "reason": i.reason},
        ACTORS,
        {c},
        [c],
    )


def p_ready(i: I.ReadyActionInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    return one(
        "ActionReadied",
        {"encounter_id": eid, "creature": c, "action": i.action.value, "trigger": i.trigger},
        ACTORS,
        {c},
        [c],
        eid,
    )


def p_action(i: I.TakeActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    eid = look.encounter(i.encounter_id) if i.encounter_id is not None else None
    if i.gm_exception and not look.who.is_gm:
        raise ChronicleError("FORBIDDEN", "only the GM makes exceptions", "gmException")
    return one(
        "ActionTaken",
        {
            "encounter_id": eid,
            "creature": c,
            "action": i.action.value,
            "name": i.name,
            "substitutes_for": i.substitutes_for.value if i.substitutes_for else None,
            "gm_exception": i.gm_exception,
        },
        ACTORS,
        {c},
        [c],
        eid,
    )


def p_attack(i: I.AttackInput, look: Look) -> Plan:
    attacker = look.creature(i.attacker_id, "attackerId")
    power = {
        "name": i.power.name,
        "kind": i.power.kind.value,
        "defense": i.power.defense.value,
        "attack_bonus": i.power.attack_bonus,
        "damage_types": list(i.power.damage_types),
        "miss": i.power.miss.value,
        "damage": i.power.damage,
        "weapon": i.power.weapon,
        "effects": json_arg(i.power.effects, "power.effects", list) or [],
    }
    for key, value in (
        ("power_id", i.power.power_id),
        ("weapon_id", i.power.weapon_id),
        ("rounds", i.power.rounds),
    ):
        if value is not None:
            power[key] = value
    if not i.targets:
        raise ChronicleError("INVALID_INPUT", "an attack needs at least one target", "targets")
    if len(i.targets) > 50:
        raise ChronicleError("INVALID_INPUT", "at most 50 targets", "targets")
    look.allow_rerolls("DiceRerolled", attacker)  # C0.3: in-game rerolls of its dice
    targets, names = [], []
    per_target = bool(power["damage"]) and power["kind"] in ("melee", "ranged")
    for t in i.targets:
        tid = look.creature(t.character_id, "targets.characterId")
        names.append(tid)
        entry: dict[str, Any] = {"target": tid, "roll": look.roll(t.attack_roll, "1d20")}
        if per_target:
            entry["damage"] = look.roll(t.damage_roll, power["damage"], weapon=power["weapon"])
        if t.circumstances is not None:
            entry["circumstances"] = json_arg(t.circumstances, "targets.circumstances", list)
        mods = modifiers_of(t, "targets.modifiers")
        if mods is not None:
            entry["modifiers"] = mods
        if t.adjacent is not None:
            entry["adjacent"] = t.adjacent
        targets.append(entry)
    payload: dict[str, Any] = {
        "attacker": attacker,
        "power": power,
        "targets": targets,
        "nonlethal": i.nonlethal,
        "coup_de_grace": i.coup_de_grace,
    }
    if i.action is not None:
        payload["action"] = None if i.action == "none" else i.action
    if power["damage"] and power["kind"] in ("close", "area"):
        payload["damage"] = look.roll(i.damage_roll, power["damage"], weapon=power["weapon"])
    enc = look.view.campaign().get("active_encounter")
    return look.rerolls_first(one("AttackMade", payload, ACTORS, {attacker}, [attacker, *names], enc))


def p_damage(i: I.DealDamageInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "DamageTaken",
        {
            "target": c,
            "roll": look.roll(i.roll),
            "amount": i.amount,
            "types": i.types,
            "wounding": i.wounding,
            "source": i.source,
            "nonlethal": i.nonlethal,
            "half": i.half,
        },
        ACTORS,
        {c},
        [c],
    )


def p_heal(i: I.HealInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    return one(
        "HealingApplied",
        {
            "target": c,
            "surge_multiplier": i.surge_multiplier,
            "roll": look.roll(i.roll),
            "flat": i.flat,
            "magical": i.magical,
            "requires_surge": i.requires_surge,
            "source": i.source,
            "healer": healer,
        },
        ACTORS,
        {healer or c},
        [c] + ([healer] if healer else []),
    )


def p_temp_hp(i: I.GrantTemporaryHitPointsInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "TemporaryHitPointsGranted",
        {"target": c, "amount": i.amount, "roll": look.roll(i.roll), "source": i.source},
        ACTORS,
        {c},
        [c],
    )


def p_surge(i: I.SpendHealingSurgeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "cause": i.cause.value, "note": i.note}
    return one("HealingSurgeSpent", payload, ACTORS, {c}, [c])


def p_second_wind(i: core.CharacterInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("SecondWindUsed", {"creature": c}, ACTORS, {c}, [c])


def p_death_save(i: I.DeathSaveInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    look.allow_rerolls("DiceRerolled", c)
    return look.rerolls_first(
        one(
            "DeathSavingThrowRolled",
            {
                "creature": c,
                "roll": look.roll(i.roll, "1d20"),
                "modifiers": modifiers_of(i) or [],
            },
            ACTORS,
            {c},
            [c],
        )
    )


def p_stabilize(i: I.StabilizeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    return one(
        "StabilizationAttempted",
        {
            "target": c,
            "healer": healer,
            "roll": look.roll(i.check),
            "dc": i.dc,
            **({"action": None if i.action == "none" else i.action} if i.action is not None else {}),
        },
        ACTORS,
        {healer} if healer else set(),
        [c] + ([healer] if healer else []),
    )


def p_restore_wounds(i: I.RestoreWoundsInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    care = look.creature(i.caregiver_id, "caregiverId") if i.caregiver_id is not None else None
    return one(
        "WoundsRestored",
        {"target": c, "amount": i.amount, "method": i.method.value, "caregiver": care},
        characters=[c],
    )


def p_death(i: I.DeclareDeathInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("DeathDeclared", {"creature": c, "cause": i.cause}, characters=[c])


def p_raise(i: I.RaiseCreatureInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "CreatureRaised", {"creature": c, "means": i.means, "hp": i.hp, "wounds": i.wounds}, characters=[c]
    )


def p_apply_effect(i: I.ApplyEffectInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    src = (
        look.creature(i.source_character_id, "sourceCharacterId")
        if i.source_character_id is not None
        else None
    )
    spec: dict[str, Any] = {
        "name": i.effect.name,
        "components": json_arg(i.effect.components, "effect.components", list),
    }
    if i.effect.duration is not None:
        spec["duration"] = json_arg(i.effect.duration, "effect.duration")
    if i.effect.aftereffect is not None:
        spec["aftereffect"] = json_arg(i.effect.aftereffect, "effect.aftereffect")
    if i.effect.beneficial:
        spec["beneficial"] = True
    if i.effect.key is not None:
        spec["key"] = i.effect.key
    source = src or i.source or "gm"
    return one(
        "EffectApplied",
        {"target": c, "source": source, "effect": spec},
        ACTORS,
        {src} if src else set(),
        [c] + ([src] if src else []),
    )


def p_sustain(i: I.SustainEffectInput, look: Look) -> Plan:
    source, target = effect_source(look, i.effect_id)
    return one(
        "EffectSustained",
        {"effect_id": i.effect_id, "action": i.action.value},
        ACTORS,
        {source} if source and look.view.has_creature(source) else set(),
        [x for x in (source, target) if x and look.view.has_creature(x)],
    )


def p_end_effect(i: I.EndEffectInput, look: Look) -> Plan:
    source, target = effect_source(look, i.effect_id)
    return one(
        "EffectEnded",
        {"effect_id": i.effect_id, "reason": i.reason},
        ACTORS,
        {source} if source and look.view.has_creature(source) else set(),
        [target] if target else [],
    )


def p_save(i: I.SavingThrowInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    look.allow_rerolls("DiceRerolled", c)
    return look.rerolls_first(
        one(
            "SavingThrowRolled",
            {
                "creature": c,
                "effect_id": i.effect_id,
                "roll": look.roll(i.roll, "1d20"),
                "modifiers": modifiers_of(i) or [],
            },
            ACTORS,
            {c},
            [c],
        )
    )


def p_action_point(i: I.SpendActionPointInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("ActionPointSpent", {"creature": c, "use": i.use}, ACTORS, {c}, [c])


def p_milestone(i: core.CharactersInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    return one("MilestoneReached", {"creatures": cs}, characters=cs)


def p_xp(i: I.AwardExperienceInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    return one("ExperienceAwarded", {"creatures": cs, "amount": i.amount, "reason": i.reason}, characters=cs)


def p_level(i: I.SetLevelInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("LevelSet", {"creature": c, "level": i.level}, characters=[c])


def p_short_rest(i: I.ShortRestInput, look: Look) -> Plan:
    """The rest, then each creature's surge spends (SW-49), in one append: all or nothing."""
    ps = look.creatures(i.participant_ids, "participantIds") if i.participant_ids is not None else None
    items: list[tuple[str, dict[str, Any]]] = [("ShortRestTaken", {"participants": ps, "minutes": i.minutes})]
    spenders: list[str] = []
    for s in i.surge_spends or []:
        c = look.creature(s.character_id, "surgeSpends")
        if s.surges < 0:
            raise ChronicleError("INVALID_INPUT", "a creature spends 0 or more surges", "surgeSpends")
        if ps is not None and c not in ps:
            raise ChronicleError("INVALID_INPUT", f"{c} does not take part in this rest", "surgeSpends")
        if c in spenders:
            raise ChronicleError("INVALID_INPUT", f"{c} is named twice", "surgeSpends")
        spenders.append(c)
        items += [
            ("HealingSurgeSpent", {"creature": c, "cause": "short_rest", "note": ""}) for _ in range(s.surges)
        ]
    actors = set(ps or ()) | set(spenders)
    return Plan(items, ACTORS, actors, list(dict.fromkeys([*(ps or []), *spenders])))


def p_extended_rest(i: I.ExtendedRestInput, look: Look) -> Plan:
    ps = look.creatures(i.participant_ids, "participantIds") if i.participant_ids is not None else None
    return one("ExtendedRestTaken", {"participants": ps, "hours": i.hours}, ACTORS, set(ps or ()), ps or [])


def _table_action(name: str) -> Any:
    """A table action of the creature itself (SW-13, A1.10): the engine derives its effect and action."""

    def plan(i: core.CharacterInput, look: Look) -> Plan:
        c = look.creature(i.character_id)
        enc = look.view.campaign().get("active_encounter")
        return one("TableActionTaken", {"creature": c, "name": name}, ACTORS, {c}, [c], enc)

    return plan


def p_knock_prone(i: I.KnockProneInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    src = (
        look.creature(i.source_character_id, "sourceCharacterId")
        if i.source_character_id is not None
        else None
    )
    return one(
        "TableActionTaken",
        {"creature": c, "name": "knock_prone", "source": src},
        ACTORS,
        {src} if src else set(),
        [c] + ([src] if src else []),
    )


def p_explosive_save(i: I.ExplosiveSaveInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "ExplosiveSaveRolled",
        {
            "target": c,
            "roll": look.roll(i.roll, "1d20"),
            "dc": i.dc,
            "damage": look.roll(i.damage_roll),
            "amount": i.amount,
            "types": i.types,
            "explosive": i.explosive,
            "modifiers": modifiers_of(i) or [],
        },
        ACTORS,
        {c},
        [c],
    )


def _spec(name: str, input_cls: type[Any], planner: Any, description: str) -> MutationSpec:
    return MutationSpec(name, input_cls, planner, description, ruleset=RULESET)


MUTATIONS: list[MutationSpec] = [
    _spec(
        "register_creature",
        I.RegisterCreatureInput,
        p_register,
        "Add a creature (PC, monster, NPC) with its sheet.",
    ),
    _spec("update_sheet", I.UpdateSheetInput, p_update_sheet, "Change a creature's sheet."),
    _spec("ready_action", I.ReadyActionInput, p_ready, "Ready an action with a trigger."),
    _spec("take_action", I.TakeActionInput, p_action, "Record an action (action economy)."),
    _spec("attack", I.AttackInput, p_attack, "An attack with a power against one or more targets."),
    _spec("deal_damage", I.DealDamageInput, p_damage, "Damage to a creature."),
    _spec("heal", I.HealInput, p_heal, "Healing (with or without a surge)."),
    _spec("grant_temporary_hit_points", I.GrantTemporaryHitPointsInput, p_temp_hp, "Temporary hit points."),
    _spec("spend_healing_surge", I.SpendHealingSurgeInput, p_surge, "Spend a healing surge."),
    _spec("use_second_wind", core.CharacterInput, p_second_wind, "Second wind."),
    _spec("roll_death_save", I.DeathSaveInput, p_death_save, "A dying creature's death saving throw."),
    _spec("attempt_stabilization", I.StabilizeInput, p_stabilize, "Try to stabilise a dying creature."),
    _spec("restore_wounds", I.RestoreWoundsInput, p_restore_wounds, "Restore wounds (magic, medical, care)."),
    _spec("declare_death", I.DeclareDeathInput, p_death, "Declare a creature dead."),
    _spec("raise_creature", I.RaiseCreatureInput, p_raise, "Raise a dead creature."),
    _spec(
        "apply_effect",
        I.ApplyEffectInput,
        p_apply_effect,
        "Put an effect (conditions, ongoing damage, ...) on a creature.",
    ),
    _spec("sustain_effect", I.SustainEffectInput, p_sustain, "Sustain an effect."),
    _spec("end_effect", I.EndEffectInput, p_end_effect, "End an effect."),
    _spec("roll_saving_throw", I.SavingThrowInput, p_save, "A saving throw against an effect."),
    _spec("spend_action_point", I.SpendActionPointInput, p_action_point, "Spend an action point."),
    _spec("reach_milestone", core.CharactersInput, p_milestone, "A milestone (an action point)."),
    _spec("award_experience", I.AwardExperienceInput, p_xp, "Award experience points."),
    _spec("set_level", I.SetLevelInput, p_level, "Pin (or unpin) a creature's level."),
    _spec("take_short_rest", I.ShortRestInput, p_short_rest, "A short rest."),
    _spec("take_extended_rest", I.ExtendedRestInput, p_extended_rest, "An extended rest."),
    _spec(
        "total_defense",
        core.CharacterInput,
        _table_action("total_defense"),
        "Total defense (SW-13): a standard action, +2 to all defenses until the creature's next turn.",
    ),
    _spec(
        "drop_prone", core.CharacterInput, _table_action("drop_prone"), "Drop prone: a minor action (A1.10)."
    ),
    _spec(
        "stand_up",
        core.CharacterInput,
        _table_action("stand_up"),
        "Stand up: a move action that ends prone (A1.10).",
    ),
    _spec(
        "roll_explosive_save",
        I.ExplosiveSaveInput,
        p_explosive_save,
        "A planted explosive: the target's save for half damage (B-SW-20; flag sw.explosive_save).",
    ),
    _spec(
        "knock_prone",
        I.KnockProneInput,
        p_knock_prone,
        "A creature is knocked prone (by a power, a shove or the GM's ruling): no action of its own.",
    ),
]
