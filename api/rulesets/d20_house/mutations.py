"""The d20 house rules' mutations: planners that turn typed inputs into d20 facts.

Each is a :class:`~api.graphql.planning.MutationSpec` named with the ``d20_`` prefix and
naming the ruleset, so a campaign of another system refuses it (``WRONG_RULESET``). An attack
is three facts, as the table plays it: ``d20Attack`` (the d20), ``d20ConfirmCritical`` when it
threatens, ``d20RollDamage`` when it hits; the last two name the attack by its position (the
first answer's ``facts[0].position``). Dice the client does not enter are rolled by the server.
Every rule is the fold's (``domain.rulesets.d20_house``): a planner only reads the present to
choose defaults (the encounter round of a stabilisation roll, the second set of a critical's
dice) and who may act.
"""

from __future__ import annotations

from typing import Any

from api.graphql.errors import ChronicleError
from api.graphql.planning import ACTORS, MEMBERS, Look, MutationSpec, Plan, json_arg, one
from api.rulesets.d20_house import inputs as I  # noqa: N812
from api.service.application import slug

RULESET = "d20"


def _modifiers(value: Any, field: str = "modifiers") -> list[Any]:
    return json_arg(value, field, list) or []


def _encounter(look: Look) -> str | None:
    found = look.view.campaign().get("active_encounter")
    return str(found) if found else None


def p_register(i: I.D20RegisterCreatureInput, look: Look) -> Plan:
    cid = i.creature_id or slug(i.name)
    payload: dict[str, Any] = {
        "creature_id": cid,
        "name": i.name,
        "kind": i.kind.value,
        "level": i.level,
        "class": i.class_name,
        "abilities": i.abilities.as_payload(),
        "max_hp": i.max_hp,
        "bab": list(i.base_attack_bonus),
        "base_saves": {"fort": i.base_saves.fort, "ref": i.base_saves.ref, "will": i.base_saves.will},
        "armor": i.armor,
        "shield": i.shield,
        "size": i.size,
        "initiative_misc": i.initiative_misc,
        "aoo_per_round": i.attacks_of_opportunity_per_round,
        "feats": list(i.feats),
    }
    return one("CreatureRegistered", payload, characters=[cid])


def p_update_sheet(i: I.D20UpdateSheetInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature_id": c, "changes": json_arg(i.changes, "changes"), "reason": i.reason}
    return one("SheetUpdated", payload, ACTORS, {c}, [c])


def _attack(
    look: Look, attacker_gid: Any, target_gid: Any, roll: Any, weapon: I.D20WeaponInput, **rest: Any
) -> Plan:
    attacker = look.creature(attacker_gid, "attackerId")
    target = look.creature(target_gid, "targetId")
    payload: dict[str, Any] = {
        "attacker": attacker,
        "target": target,
        "roll": look.roll(roll, "1d20"),
        "weapon": weapon.as_payload(),
        **rest,
    }
    return one("AttackRolled", payload, ACTORS, {attacker}, [attacker, target], _encounter(look))


def p_attack(i: I.D20AttackInput, look: Look) -> Plan:
    return _attack(
        look,
        i.attacker_id,
        i.target_id,
        i.roll,
        i.weapon,
        vs=i.vs.value,
        iterative=i.iterative,
        full_attack=i.full_attack,
        two_weapon=i.two_weapon.value if i.two_weapon else None,
        off_hand_light=i.off_hand_light,
        double_weapon=i.double_weapon,
        range_penalty=i.range_penalty,
        modifiers=_modifiers(i.modifiers),
    )


def p_attack_of_opportunity(i: I.D20AttackOfOpportunityInput, look: Look) -> Plan:
    return _attack(
        look,
        i.attacker_id,
        i.target_id,
        i.roll,
        i.weapon,
        vs=i.vs.value,
        opportunity=True,
        modifiers=_modifiers(i.modifiers),
    )


def _open_attack(look: Look, position: int) -> dict[str, Any] | None:
    """The attack awaiting its confirmation or damage at ``position`` (None: the fold refuses)."""
    found = look.state.attacks.get(str(position))
    return dict(found) if found is not None else None


def _attack_plan(look: Look, position: int, fact_type: str, payload: dict[str, Any]) -> Plan:
    """The attacker's player may record it; an attack that awaits nothing is the fold's to refuse
    (NO_OPEN_ATTACK), for any member."""
    rec = _open_attack(look, position)
    if rec is None:
        return one(fact_type, payload, MEMBERS, encounter=_encounter(look))
    who = [rec["attacker"], rec["target"]]
    return one(fact_type, payload, ACTORS, {rec["attacker"]}, who, _encounter(look))


def p_confirm(i: I.D20ConfirmCriticalInput, look: Look) -> Plan:
    payload = {"attack": i.attack, "roll": look.roll(i.roll, "1d20")}
    return _attack_plan(look, i.attack, "CriticalConfirmationRolled", payload)


def p_damage(i: I.D20RollDamageInput, look: Look) -> Plan:
    weapon = look.roll(i.weapon)
    crit = look.roll(i.crit_weapon) if i.crit_weapon is not None else None
    rec = _open_attack(look, i.attack)
    if crit is None and rec is not None and rec.get("critical"):
        crit = look.roll(None, i.weapon.expression)  # a confirmed critical rolls the dice twice
    payload = {
        "attack": i.attack,
        "weapon": weapon,
        "crit_weapon": crit,
        "extra": [look.roll(x) for x in i.extra],
        "extra_flat": i.extra_flat,
        "modifiers": _modifiers(i.modifiers),
    }
    return _attack_plan(look, i.attack, "DamageRolled", payload)


def p_deal_damage(i: I.D20DealDamageInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"target": c, "roll": look.roll(i.roll), "amount": i.amount, "source": i.source}
    return one("DamageTaken", payload, ACTORS, {c}, [c])


def p_heal(i: I.D20HealInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    payload = {
        "target": c,
        "roll": look.roll(i.roll),
        "amount": i.amount,
        "source": i.source,
        "healer": healer,
    }
    return one("HealingApplied", payload, ACTORS, {healer or c}, [c] + ([healer] if healer else []))


def p_heal_check(i: I.D20HealCheckInput, look: Look) -> Plan:
    healer, c = look.creature(i.healer_id, "healerId"), look.creature(i.character_id)
    payload = {
        "healer": healer,
        "target": c,
        "roll": look.roll(i.roll, "1d20"),
        "modifiers": _modifiers(i.modifiers),
    }
    return one("HealCheckRolled", payload, ACTORS, {healer}, [c, healer], _encounter(look))


def p_stabilize(i: I.D20StabilizeInput, look: Look) -> Plan:
    """The round defaults to the running encounter's (one roll per round, ruling 26)."""
    c = look.creature(i.character_id)
    eid = look.encounter(i.encounter_id) if i.encounter_id is not None else _encounter(look)
    rnd = i.round
    if eid is not None and rnd is None:
        enc = look.view.encounter(eid)
        if enc is None:
            raise ChronicleError("NOT_FOUND", "no such encounter in this campaign", "encounterId")
        rnd = enc.get("round")
    payload = {
        "creature": c,
        "roll": look.roll(i.roll, "d%"),
        "encounter_id": eid if rnd is not None else None,
        "round": rnd,
    }
    return one("StabilizationRolled", payload, ACTORS, {c}, [c], eid)


def p_massive_save(i: I.D20MassiveDamageSaveInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "attack": i.attack,
        "roll": look.roll(i.roll, "1d20"),
        "modifiers": _modifiers(i.modifiers),
    }
    return one("MassiveDamageSaveRolled", payload, ACTORS, {c}, [c])


def p_saving_throw(i: I.D20SavingThrowInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "save": i.save.value,
        "roll": look.roll(i.roll, "1d20"),
        "dc": i.dc,
        "effect": i.effect,
        "modifiers": _modifiers(i.modifiers),
    }
    return one("SavingThrowRolled", payload, ACTORS, {c}, [c])


def p_damage_ability(i: I.D20DamageAbilityInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "ability": i.ability.value,
        "amount": i.amount,
        "drain": i.drain,
        "source": i.source,
    }
    return one("AbilityDamaged", payload, ACTORS, {c}, [c])


def p_recover(i: I.D20RecoverAbilitiesInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    payload = {"creatures": cs, "kind": i.kind.value, "hours": i.hours, "clean": i.clean}
    return one("AbilityRecoveredByRest", payload, ACTORS, set(cs), cs)


def p_take_action(i: I.D20TakeActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "action": i.action.value,
        "name": i.name,
        "strenuous": i.strenuous,
        "run": i.run,
        "moves": i.moves,
    }
    return one("ActionTaken", payload, ACTORS, {c}, [c], _encounter(look))


def p_cast_defensively(i: I.D20CastDefensivelyInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "spell_level": i.spell_level,
        "roll": look.roll(i.roll, "1d20"),
        "modifiers": _modifiers(i.modifiers),
    }
    return one("DefensiveCastingRolled", payload, ACTORS, {c}, [c])


def p_declare_death(i: I.D20DeclareDeathInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("DeathDeclared", {"creature": c, "cause": i.cause}, characters=[c])


def p_resurrect(i: I.D20ResurrectInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "means": i.means, "hp": i.hp, "restore_abilities": i.restore_abilities}
    return one("Resurrected", payload, characters=[c])


def _spec(name: str, input_cls: type[Any], planner: Any, description: str) -> MutationSpec:
    return MutationSpec(f"d20_{name}", input_cls, planner, description, ruleset=RULESET)


MUTATIONS: list[MutationSpec] = [
    _spec("register_creature", I.D20RegisterCreatureInput, p_register, "Add a creature with its d20 sheet."),
    _spec(
        "update_sheet", I.D20UpdateSheetInput, p_update_sheet, "Change a creature's sheet (level, max HP...)."
    ),
    _spec(
        "attack",
        I.D20AttackInput,
        p_attack,
        "An attack roll (A3.3); a hit awaits d20RollDamage, a threat d20ConfirmCritical first.",
    ),
    _spec(
        "attack_of_opportunity",
        I.D20AttackOfOpportunityInput,
        p_attack_of_opportunity,
        "An attack of opportunity (B-DH-14): one per round, none while flat-footed.",
    ),
    _spec(
        "confirm_critical",
        I.D20ConfirmCriticalInput,
        p_confirm,
        "The confirmation roll of an attack that threatens a critical (B-DH-13).",
    ),
    _spec(
        "roll_damage",
        I.D20RollDamageInput,
        p_damage,
        "An attack's damage: the weapon's dice (twice on a confirmed critical), at least 1 (B-DH-12).",
    ),
    _spec("deal_damage", I.D20DealDamageInput, p_deal_damage, "Damage that is not an attack's."),
    _spec("heal", I.D20HealInput, p_heal, "Healing; any healing stabilises a dying creature."),
    _spec("heal_check", I.D20HealCheckInput, p_heal_check, "A Heal check (DC 10 + |HP|) to stabilise."),
    _spec(
        "stabilize",
        I.D20StabilizeInput,
        p_stabilize,
        "A dying creature's d% stabilisation roll after the last turn of a round (ruling 26).",
    ),
    _spec(
        "massive_damage_save",
        I.D20MassiveDamageSaveInput,
        p_massive_save,
        "The DC 15 Fortitude save massive damage calls for (B-DH-1).",
    ),
    _spec("saving_throw", I.D20SavingThrowInput, p_saving_throw, "A saving throw (DH-15)."),
    _spec("damage_ability", I.D20DamageAbilityInput, p_damage_ability, "Ability damage or drain."),
    _spec(
        "recover_abilities",
        I.D20RecoverAbilitiesInput,
        p_recover,
        "Lost ability scores return after a clean rest (DH-14).",
    ),
    _spec("take_action", I.D20TakeActionInput, p_take_action, "An action (DH-4)."),
    _spec(
        "cast_defensively",
        I.D20CastDefensivelyInput,
        p_cast_defensively,
        "A Concentration check to cast without provoking (DH-5).",
    ),
    _spec("declare_death", I.D20DeclareDeathInput, p_declare_death, "Declare a creature dead."),
    _spec("resurrect", I.D20ResurrectInput, p_resurrect, "Bring a dead creature back (no level lost)."),
]
