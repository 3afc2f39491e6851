"""Hero's-surge mutations: planners that turn typed inputs into hero's-surge facts (RULES.md C2.2).

Each is a :class:`~api.graphql.planning.MutationSpec` named with the ``hero_surge_`` prefix and
naming the ruleset, so a campaign of another system refuses it (``WRONG_RULESET``). Where the
system leaves a mechanic undefined, the input carries the table's ruling (ruling 4): an attempt's
success level, an initiative check's, a luck roll's result. Encounters and turns are the core
mutations (``startEncounter``, ``startTurn``, ``endTurn`` with the luck rolls a turn owes).
Every rule is the fold's (``domain.rulesets.hero_surge``): a planner only decodes ids, rolls
missing dice and says who may act.
"""

from __future__ import annotations

from typing import Any

from api.graphql.errors import ChronicleError
from api.graphql.planning import ACTORS, GM_ONLY, Look, MutationSpec, Plan, json_arg, one
from api.rulesets.hero_surge import inputs as I  # noqa: N812
from api.service.application import slug
from domain.rulesets.hero_surge.rules import luck_roll_dice, rest_participants

RULESET = "hero-surge"


def _encounter(look: Look) -> str | None:
    found = look.view.campaign().get("active_encounter")
    return str(found) if found else None


def _cites(payload: dict[str, Any], **rulings: str | None) -> dict[str, Any]:
    """Ruling 4: a field taken from a recorded ruling (``rulings``: field -> ruling id)."""
    cited = {k: v for k, v in rulings.items() if v}
    return {**payload, "rulings": cited} if cited else payload


def _opt(look: Look, gid: Any, field: str) -> str | None:
    return look.creature(gid, field) if gid is not None else None


# ------------------------------------------------------------------ sheets
def p_register(i: I.HeroSurgeRegisterCreatureInput, look: Look) -> Plan:
    cid = i.creature_id or slug(i.name)
    payload: dict[str, Any] = {
        "creature_id": cid,
        "name": i.name,
        "kind": i.kind.value,
        "hero": i.hero,
        "level": i.level,
        "con_score": i.con_score,
        "con_mod": i.con_mod,
        "hit_die": i.hit_die,
        "max_hp": i.max_hp,
        "damage_reduction": i.damage_reduction,
        "extra_blocks": i.extra_blocks,
        "hero_surges": i.hero_surges,
        "fortune_dice": i.fortune_dice,
    }
    return one("CreatureRegistered", payload, characters=[cid])


def p_update_sheet(i: I.HeroSurgeUpdateSheetInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature_id": c, "changes": json_arg(i.changes, "changes"), "reason": i.reason}
    return one("SheetUpdated", payload, GM_ONLY, characters=[c])


# ------------------------------------------------------------------ rounds
def p_check_initiative(i: I.HeroSurgeCheckInitiativeInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    payload = {
        "encounter_id": eid,
        "creature": c,
        "roll": look.roll(i.roll, "1d20"),
        "success_level": i.success_level.value,
    }
    payload = _cites(payload, success_level=i.success_level_ruling)
    return one("InitiativeRolled", payload, ACTORS, {c}, [c], eid)


def p_choose_order(i: I.HeroSurgeChooseOrderInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    cs = look.creatures(i.character_ids, "characterIds")
    payload = {"encounter_id": eid, "creatures": cs, "decided_by": i.decided_by}
    return one("InitiativeOrderChosen", payload, ACTORS, set(cs), cs, eid)


def p_take_action(i: I.HeroSurgeTakeActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    if i.gm_exception and not look.who.is_gm:
        raise ChronicleError("FORBIDDEN", "only the GM makes exceptions", "gmException")
    eid = _encounter(look)
    payload = {
        "encounter_id": eid,
        "creature": c,
        "action": i.action.value,
        "name": i.name,
        "substitutes_for": "action" if i.instead_of_action else None,
        "gm_exception": i.gm_exception,
    }
    return one("ActionTaken", payload, ACTORS, {c}, [c], eid)


def p_ready(i: I.HeroSurgeReadyActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    eid = _encounter(look)
    if eid is None:
        raise ChronicleError("NOT_IN_ENCOUNTER", "an action is readied in a running encounter", "characterId")
    payload = {"encounter_id": eid, "creature": c, "action": i.action.value, "trigger": i.trigger}
    return one("ActionReadied", payload, ACTORS, {c}, [c], eid)


def p_defend(i: I.HeroSurgeDefendInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    target = _opt(look, i.target_id, "targetId")
    payload = {"creature": c, "mode": i.mode.value, "target": target}
    return one("DefendDeclared", payload, ACTORS, {c}, [c] + ([target] if target else []), _encounter(look))


FULL_ROUND = {
    "start": "FullRoundActionStarted",
    "maintain": "FullRoundActionMaintained",
    "abort": "FullRoundActionAborted",
    "complete": "FullRoundActionCompleted",
}


def p_full_round(i: I.HeroSurgeFullRoundActionInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload: dict[str, Any] = {"creature": c}
    if i.step is I.HeroSurgeFullRoundStep.START:
        if not i.action:
            raise ChronicleError("INVALID_INPUT", "starting a full-round action names it", "action")
        payload.update(action=i.action, moved_before=i.moved_before)
    return one(FULL_ROUND[i.step.value], payload, ACTORS, {c}, [c], _encounter(look))


# ------------------------------------------------------------------ attempts
def p_attempt(i: I.HeroSurgeAttemptInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    targets = look.creatures(i.target_ids, "targetIds")
    payload = {
        "attempt_id": i.attempt_id,
        "creature": c,
        "kind": i.kind.value,
        "targets": targets,
        "roll": look.roll(i.roll, "1d20"),
        "action": i.action.value if i.action is not None else None,
        "dc": i.dc,
        "rank": i.rank,
        "success_level": i.success_level.value,
        "note": i.note,
    }
    payload = _cites(payload, success_level=i.success_level_ruling)
    shown = [c] + [t for t in targets if t != c]
    return one("AttemptRolled", payload, ACTORS, {c}, shown, _encounter(look))


def _attempt_owner(look: Look, attempt_id: str) -> str | None:
    found = look.state.attempts.get(attempt_id)
    return str(found["creature"]) if found else None


def _by_attempt(fact_type: str, payload: dict[str, Any], look: Look, more: list[str] | None = None) -> Plan:
    """A fact about an attempt: its roller acts (a player for its own hero's attempt)."""
    owner = _attempt_owner(look, payload["attempt_id"])
    shown = [x for x in dict.fromkeys([owner, *(more or [])]) if x]
    return one(fact_type, payload, ACTORS, {owner} if owner else set(), shown, _encounter(look))


def p_exchange(i: I.HeroSurgeExchangeFortuneDieInput, look: Look) -> Plan:
    return _by_attempt("FortuneDieExchanged", {"attempt_id": i.attempt_id}, look)


def p_spend_fortune(i: I.HeroSurgeSpendFortuneDieInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("FortuneDieSpent", {"creature": c, "effect": i.effect}, ACTORS, {c}, [c])


def p_devastating(i: I.HeroSurgeDevastatingEffectInput, look: Look) -> Plan:
    target = _opt(look, i.target_id, "targetId")
    payload = {"attempt_id": i.attempt_id, "option": i.option.value, "target": target, "note": i.note}
    return _by_attempt("DevastatingEffectChosen", payload, look, [target] if target else [])


def p_hampering(i: I.HeroSurgeHamperingEffectInput, look: Look) -> Plan:
    target = _opt(look, i.target_id, "targetId")
    payload = {"attempt_id": i.attempt_id, "option": i.option.value, "target": target, "note": i.note}
    return _by_attempt("HamperingEffectChosen", payload, look, [target] if target else [])


def p_rank_penalty(i: I.HeroSurgeConsumeRankPenaltyInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"target": c, "attempt_id": i.attempt_id, "penalty_ids": i.penalty_ids}
    return one("RankPenaltyConsumed", payload, ACTORS, {c}, [c], _encounter(look))


def p_resolve_defense(i: I.HeroSurgeResolveDefenseInput, look: Look) -> Plan:
    payload = {
        "defense_attempt_id": i.defense_attempt_id,
        "incoming": list(i.incoming),
        "blocked": list(i.blocked),
        "bypass_armor": list(i.bypass_armor),
        "crit": list(i.critical),
        "extra_block_sources": list(i.extra_block_sources),
    }
    owner = _attempt_owner(look, i.defense_attempt_id)
    return one(
        "MultiAttackDefenseResolved",
        payload,
        ACTORS,
        {owner} if owner else set(),
        [owner] if owner else [],
        _encounter(look),
    )


# ------------------------------------------------------------------ damage
def p_roll_damage(i: I.HeroSurgeRollDamageInput, look: Look) -> Plan:
    payload = {
        "damage_id": i.damage_id,
        "attempt_id": i.attempt_id,
        "roll": look.roll(i.roll),
        "additional_die": look.roll(i.additional_die),
    }
    if i.attempt_id is None:
        return one("DamageRolled", payload, encounter=_encounter(look))
    return _by_attempt("DamageRolled", payload, look)


def p_reroll(i: I.HeroSurgeRerollDamageDieInput, look: Look) -> Plan:
    payload = {"roll_id": i.damage_id, "die_index": i.die_index, "new_face": i.new_face, "reason": "brutal"}
    found = look.state.damage.get(i.damage_id)
    attempt = found.get("attempt") if found else None
    if attempt:
        owner = _attempt_owner(look, str(attempt))
        return one("DiceRerolled", payload, ACTORS, {owner} if owner else set(), [], _encounter(look))
    return one("DiceRerolled", payload, encounter=_encounter(look))


def p_apply_damage(i: I.HeroSurgeApplyDamageInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "target": c,
        "damage_id": i.damage_id,
        "roll": look.roll(i.roll),
        "amount": i.amount,
        "attack": i.attack,
        "bypass_dr": i.bypass_dr,
        "critical": i.critical,
        "source": i.source,
    }
    return one("DamageApplied", payload, ACTORS, {c}, [c], _encounter(look))


def p_temp_hp(i: I.HeroSurgeGrantTemporaryHitPointsInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "target": c,
        "amount": i.amount,
        "roll": look.roll(i.roll),
        "duration_minutes": i.duration_minutes,
        "source": i.source,
    }
    return one("TemporaryHitPointsGranted", payload, ACTORS, {c}, [c])


def p_heal(i: I.HeroSurgeHealInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = _opt(look, i.healer_id, "healerId")
    payload = {
        "target": c,
        "amount": i.amount,
        "roll": look.roll(i.roll),
        "source": i.source,
        "healer": healer,
    }
    return one("HealingApplied", payload, ACTORS, {healer or c}, [c] + ([healer] if healer else []))


# ------------------------------------------------------------------ dying
def p_luck(i: I.HeroSurgeLuckRollInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "context": i.context.value,
        "roll": look.roll(i.roll, luck_roll_dice(look.state, c, i.context.value)),
        "result": i.result.value if i.result is not None else None,
        "attempt_id": i.attempt_id,
        "roll_id": i.roll_id,
    }
    payload = _cites(payload, result=i.result_ruling)
    return one("LuckRollMade", payload, ACTORS, {c}, [c], _encounter(look))


def p_medical(i: I.HeroSurgeMedicalAttemptInput, look: Look) -> Plan:
    healer, c = look.creature(i.healer_id, "healerId"), look.creature(i.character_id)
    payload = {"healer": healer, "target": c, "attempt_id": i.attempt_id}
    return one("MedicalAttemptMade", payload, ACTORS, {healer}, [c, healer], _encounter(look))


def p_kit(i: I.HeroSurgeUseHealersKitInput, look: Look) -> Plan:
    healer, c = look.creature(i.healer_id, "healerId"), look.creature(i.character_id)
    return one(
        "HealersKitUsed", {"healer": healer, "target": c}, ACTORS, {healer}, [c, healer], _encounter(look)
    )


def p_instant_kill(i: I.HeroSurgeRuleInstantKillInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"target": c, "attempt_id": i.attempt_id, "luck_roll_ids": list(i.luck_roll_ids)}
    return one("InstantKillRuled", payload, GM_ONLY, characters=[c], encounter=_encounter(look))


def p_restore_life(i: I.HeroSurgeRestoreToLifeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("RestoredToLife", {"creature": c, "means": i.means, "hp": i.hp}, GM_ONLY, characters=[c])


# ------------------------------------------------------------------ hero's surges, rests, levels
def p_spend_surge(i: I.HeroSurgeSpendSurgeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "purpose": i.purpose.value, "bonus": i.bonus, "note": i.note}
    return one("HeroSurgeSpent", payload, ACTORS, {c}, [c], _encounter(look))


def p_drain(i: I.HeroSurgeDrainSurgeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("HeroSurgeDrained", {"creature": c, "source": i.source}, ACTORS, {c}, [c], _encounter(look))


def p_restore_surges(i: I.HeroSurgeRestoreSurgesInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {"creature": c, "amount": i.amount, "source": i.source.value}
    return one("HeroSurgesRestored", payload, GM_ONLY, characters=[c])


def p_rest(i: I.HeroSurgeTakeRestInput, look: Look) -> Plan:
    given = None if i.character_ids is None else look.creatures(i.character_ids, "characterIds")
    shown = rest_participants(look.state, given)
    return one("RestTaken", {"participants": given, "kind": i.kind.value, "hours": i.hours}, characters=shown)


def p_level(i: I.HeroSurgeGainLevelInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    payload = {
        "creature": c,
        "new_level": i.new_level,
        "hit_dice": look.roll(i.hit_dice),
        "con_extra": look.roll(i.con_extra),
        "swaps": json_arg(i.swaps, "swaps", list) or [],
        "rerolls": look.roll(i.rerolls),
    }
    return one("LevelGained", payload, GM_ONLY, characters=[c])


def _spec(name: str, input_cls: type[Any], planner: Any, description: str) -> MutationSpec:
    return MutationSpec(f"hero_surge_{name}", input_cls, planner, description, ruleset=RULESET)


MUTATIONS: list[MutationSpec] = [
    _spec(
        "register_creature",
        I.HeroSurgeRegisterCreatureInput,
        p_register,
        "Add a hero, NPC or monster (C2.1).",
    ),
    _spec("update_sheet", I.HeroSurgeUpdateSheetInput, p_update_sheet, "Change a sheet (DR, max HP, ...)."),
    _spec(
        "check_initiative",
        I.HeroSurgeCheckInitiativeInput,
        p_check_initiative,
        "An initiative check with its ruled success level: bands every round (HS-2, HS-3, B-HS-18).",
    ),
    _spec(
        "choose_order",
        I.HeroSurgeChooseOrderInput,
        p_choose_order,
        "The order of one side of one band: the players' or the GM's choice (HS-2, B-HS-18).",
    ),
    _spec("take_action", I.HeroSurgeTakeActionInput, p_take_action, "A move, action or free action (HS-4)."),
    _spec("ready_action", I.HeroSurgeReadyActionInput, p_ready, "Ready an action with its trigger (HS-4)."),
    _spec("defend", I.HeroSurgeDefendInput, p_defend, "Defend yourself or another, or intercept (HS-5)."),
    _spec(
        "full_round_action",
        I.HeroSurgeFullRoundActionInput,
        p_full_round,
        "Start, maintain, abort or complete a full-round action (HS-6).",
    ),
    _spec(
        "attempt",
        I.HeroSurgeAttemptInput,
        p_attempt,
        "An attempt with its dice and ruled success level (A2.3, HS-7, HS-8, B-HS-1, ruling 4).",
    ),
    _spec(
        "exchange_fortune_die",
        I.HeroSurgeExchangeFortuneDieInput,
        p_exchange,
        "Downgrade a natural 20 to a normal success for a Fortune Die (HS-7, B-HS-4).",
    ),
    _spec(
        "spend_fortune_die",
        I.HeroSurgeSpendFortuneDieInput,
        p_spend_fortune,
        "Spend a Fortune Die; its effect as ruled (B-HS-4).",
    ),
    _spec(
        "choose_devastating_effect",
        I.HeroSurgeDevastatingEffectInput,
        p_devastating,
        "A critical success's Devastating Effect (HS-8, B-HS-16, B-HS-18).",
    ),
    _spec(
        "choose_hampering_effect",
        I.HeroSurgeHamperingEffectInput,
        p_hampering,
        "A Hampering Effect (HS-8, B-HS-5, B-HS-16).",
    ),
    _spec(
        "consume_rank_penalty",
        I.HeroSurgeConsumeRankPenaltyInput,
        p_rank_penalty,
        "Use pending rank penalties on an attempt (B-HS-5).",
    ),
    _spec(
        "resolve_defense",
        I.HeroSurgeResolveDefenseInput,
        p_resolve_defense,
        "One defense roll against several attacks (HS-9, B-HS-19, B-HS-20).",
    ),
    _spec(
        "roll_damage", I.HeroSurgeRollDamageInput, p_roll_damage, "An attack's damage roll (HS-10, B-HS-16)."
    ),
    _spec(
        "reroll_damage_die",
        I.HeroSurgeRerollDamageDieInput,
        p_reroll,
        "Brutal Damage: reroll one die until higher (B-HS-16).",
    ),
    _spec(
        "apply_damage",
        I.HeroSurgeApplyDamageInput,
        p_apply_damage,
        "Damage: DR, temporary HP, HP; surge loss, dying, death (HS-10..HS-12, B-HS-6..B-HS-9).",
    ),
    _spec(
        "grant_temporary_hit_points",
        I.HeroSurgeGrantTemporaryHitPointsInput,
        p_temp_hp,
        "Temporary hit points; the larger pool stays (HS-11, B-HS-15).",
    ),
    _spec("heal", I.HeroSurgeHealInput, p_heal, "Healing from the actual value, capped (HS-17, B-HS-11)."),
    _spec(
        "luck_roll",
        I.HeroSurgeLuckRollInput,
        p_luck,
        "A luck roll: owed by a dying hero, or after a critical (HS-8, HS-14, B-HS-2, B-HS-9, ruling 25).",
    ),
    _spec(
        "medical_attempt",
        I.HeroSurgeMedicalAttemptInput,
        p_medical,
        "A medical attempt on a dying hero (HS-14).",
    ),
    _spec("use_healers_kit", I.HeroSurgeUseHealersKitInput, p_kit, "A healer's kit ends dying (HS-14)."),
    _spec(
        "rule_instant_kill",
        I.HeroSurgeRuleInstantKillInput,
        p_instant_kill,
        "The GM rules an instant kill on three natural 20s (B-HS-23).",
    ),
    _spec(
        "restore_to_life", I.HeroSurgeRestoreToLifeInput, p_restore_life, "Restore a dead creature to life."
    ),
    _spec(
        "spend_surge",
        I.HeroSurgeSpendSurgeInput,
        p_spend_surge,
        "Spend a hero's surge (HS-15, B-HS-13, B-HS-14, ruling 6).",
    ),
    _spec("drain_surge", I.HeroSurgeDrainSurgeInput, p_drain, "An involuntary surge loss (HS-16, B-HS-8)."),
    _spec(
        "restore_surges",
        I.HeroSurgeRestoreSurgesInput,
        p_restore_surges,
        "Surges restored by a spell, an ability or another source (HS-16).",
    ),
    _spec("take_rest", I.HeroSurgeTakeRestInput, p_rest, "A rest (HS-11, B-HS-12, B-HS-21)."),
    _spec(
        "gain_level",
        I.HeroSurgeGainLevelInput,
        p_level,
        "The next level with its Hit Dice (ruling 22, HS-13, HS-15, B-HS-17).",
    ),
]
