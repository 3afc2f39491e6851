"""Mutations: one per table action and correction, each with an input object and a payload.

Every payload implements ``MutationPayload``: the recorded ``facts`` (position, type, payload
with every die face, outcome), the campaign ``position`` after it, ``replayed`` (an idempotent
repeat), the affected ``campaign``, ``characters``/``character`` and ``encounter``, and
``userErrors``. Refusals (domain rules, authorization, idempotency, expectedPosition) come
back as ``userErrors`` with a ``UserErrorCode``; nothing is stored then.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import ids
from api.graphql import inputs as I  # noqa: N812
from api.graphql.errors import ChronicleError, UserError, user_error
from api.graphql.types import AccessToken, Campaign, Character, DiceRoll, Encounter, load_campaign, rolls_in
from api.service.application import ChronicleApplication, Recorded
from api.service.auth import Principal
from domain import rulesets
from domain.errors import DomainError

GM_ONLY, ACTORS, MEMBERS = "gm", "actors", "members"


# ------------------------------------------------------------------ payload types
@strawberry.type(description="A fact a mutation stored (or, replayed, had stored).")
class RecordedFact:
    position: int
    type: str
    payload: JSON
    outcome: JSON | None

    @strawberry.field(description="Every die rolled, with its faces.")
    def dice(self) -> list[DiceRoll]:
        return rolls_in(self.payload)


@strawberry.interface(description="What every mutation answers.")
class MutationPayload:
    user_errors: list[UserError]
    facts: list[RecordedFact]
    position: int | None = strawberry.field(description="The campaign's position after the mutation.")
    replayed: bool = strawberry.field(description="True: an idempotent repeat; nothing new was stored.")
    campaign: Campaign | None
    characters: list[Character]
    character: Character | None
    encounter: Encounter | None


@strawberry.type(description="A roll the table owes before it can go on (RULES.md ruling 18).")
class PendingRoll:
    type: str = strawberry.field(description="The fact that records it, e.g. SavingThrowRolled.")
    kind: str = strawberry.field(description="What it is, in words: saving throw, death saving throw...")
    character_id: str | None = strawberry.field(description="The creature that rolls (local id).")
    effect_id: str | None = strawberry.field(description="The effect it is against, if any.")
    dice: str = strawberry.field(description="The dice to roll, e.g. 1d20.")

    @classmethod
    def build(cls, owed: dict[str, Any]) -> PendingRoll:
        return cls(
            type=owed["type"],
            kind=owed["kind"],
            character_id=owed.get("creature"),
            effect_id=owed.get("effect_id"),
            dice=owed["dice"],
        )


@strawberry.type(description="What a turn boundary answers.")
class TurnPayload(MutationPayload):
    pending_rolls: list[PendingRoll] = strawberry.field(
        default_factory=list,
        description="With ROLLS_PENDING: the rolls still owed (give their dice, or ask `serverRolls`).",
    )


def _empty(cls: type[Any], errors: list[UserError]) -> Any:
    return cls(
        user_errors=errors,
        facts=[],
        position=None,
        replayed=False,
        campaign=None,
        characters=[],
        character=None,
        encounter=None,
    )


# ------------------------------------------------------------------ planning
@dataclass
class Plan:
    items: list[tuple[str, dict[str, Any]]]
    who: str = GM_ONLY
    actors: set[str] = field(default_factory=set)
    characters: list[str] = field(default_factory=list)
    encounter: str | None = None


class Look:
    """What a planner may use: ID decoding within the campaign, dice, a lazy state."""

    def __init__(self, app: ChronicleApplication, campaign_id: UUID, who: Principal) -> None:
        self.app, self.campaign_id, self.who = app, campaign_id, who
        self._state: dict[str, Any] | None = None

    def creature(self, gid: Any, field_name: str = "characterId") -> str:
        _, cid, local = ids.decode(gid, "Character", field_name)
        if cid != self.campaign_id:
            raise ChronicleError("NOT_FOUND", "no such character in this campaign", field_name)
        return local

    def creatures(self, gids: list[Any] | None, field_name: str) -> list[str]:
        return [self.creature(g, field_name) for g in gids or []]

    def encounter(self, gid: Any, field_name: str = "encounterId") -> str:
        _, cid, local = ids.decode(gid, "Encounter", field_name)
        if cid != self.campaign_id:
            raise ChronicleError("NOT_FOUND", "no such encounter in this campaign", field_name)
        return local

    def roll(
        self, dice: I.DiceInput | None, default: str | None = None, weapon: str | None = None
    ) -> dict[str, Any] | None:
        if dice is None:
            if default is None:
                return None
            return self.app.roll(default, weapon=weapon)
        return self.app.roll(dice.expression, weapon=weapon, faces=dice.faces)

    @property
    def state(self) -> dict[str, Any]:
        if self._state is None:
            self._state = self.app.summary(self.campaign_id)
        return self._state

    def effect_source(self, effect_id: str) -> tuple[str | None, str | None]:
        for cid, c in self.state["creatures"].items():
            for e in c["effects"]:
                if e.get("effect_id") == effect_id:
                    return e.get("source"), cid
        raise ChronicleError("NOT_FOUND", f"no effect {effect_id!r}", "effectId")


def _json(value: Any, field_name: str, kind: type = dict) -> Any:
    if value is not None and not isinstance(value, kind):
        raise ChronicleError("INVALID_INPUT", f"{field_name} must be a JSON {kind.__name__}", field_name)
    return value


Planner = Callable[[Any, Look], Plan]


# ------------------------------------------------------------------ the executor
async def _authorize(info: Info, campaign_gid: Any) -> tuple[UUID, Principal]:
    _, campaign_id, _ = ids.decode(campaign_gid, "Campaign", "campaignId")
    who = await ctx.principal(info)
    if who is None:
        raise ChronicleError("UNAUTHENTICATED", ctx.NO_TOKEN)
    if who.campaign_id != campaign_id:
        raise ChronicleError("NOT_FOUND", "no such campaign", "campaignId")
    if who.role == "viewer":
        raise ChronicleError("FORBIDDEN", "viewers only read")
    return campaign_id, who


def _check_actors(who: Principal, plan: Plan) -> None:
    if who.is_gm:
        return
    if plan.who == MEMBERS:
        if plan.actors and not plan.actors <= who.characters:
            raise ChronicleError("FORBIDDEN", "a player acts only for their own characters")
        return
    if plan.who == GM_ONLY:
        raise ChronicleError("FORBIDDEN", "only the GM may do this")
    if not who.may_act_for(plan.actors):
        raise ChronicleError("FORBIDDEN", "a player acts only for their own characters")


# Domain fields are payload names; a userError names the mutation's input field instead, so
# a companion app can attach it to the right control. Candidates are tried in order.
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "target": ("character_id", "position"),
    "creature": ("character_id",),
    "creature_id": ("creature_id", "character_id"),
    "creatures": ("character_ids",),
    "participants": ("participant_ids", "character_ids"),
    "surprised": ("character_ids",),
    "healer": ("healer_id",),
    "attacker": ("attacker_id",),
    "revocation": ("revocation_position",),
    "damage": ("damage_roll",),
    "source": ("source_character_id", "source"),
    "encounter_id": ("encounter_id",),
}
NESTED_ALIASES = {"target": "character_id", "roll": "attack_roll", "damage": "damage_roll"}


def _lower_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def input_field(field: str | None, inp: Any) -> str | None:
    """The input field (camelCase, dotted for nested inputs) a domain error's field stands for."""
    if not field:
        return None
    head, _, rest = field.partition(".")
    for candidate in (*FIELD_ALIASES.get(head, ()), head):
        if hasattr(inp, candidate):
            name = _lower_camel(candidate)
            break
    else:
        return ".".join(_lower_camel(part) for part in field.split("."))
    if rest:
        return f"{name}.{_lower_camel(NESTED_ALIASES.get(rest, rest))}"
    return name


RIPPLES = frozenset(
    {
        "FactRevoked",
        "FactRestored",
        "FactAmended",
        "RulingResolved",
        "OutcomeOverridden",
        "RulesFlagSet",
        "TurnStarted",
        "TurnEnded",
        "TurnDelayed",
        "DelayedTurnTaken",
        "EncounterEnded",
        "ShortRestTaken",
        "ExtendedRestTaken",
    }
)


async def execute(info: Info, payload_cls: type[Any], inp: Any, planner: Planner) -> Any:
    app = ctx.app_of(info)
    try:
        campaign_id, who = await _authorize(info, inp.campaign_id)
        look = Look(app, campaign_id, who)
        plan: Plan = await ctx.call(planner, inp, look)
        _check_actors(who, plan)
        # Corrections and turn boundaries change creatures the input does not name (every fact
        # citing a ruling, ongoing damage at the next turn's start): show whoever changed.
        widen = any(t in RIPPLES for t, _ in plan.items)
        before = (await ctx.call(app.summary, campaign_id))["creatures"] if widen else {}
        meta = {"recorded_by": f"{who.role}:{who.token_id}"}
        recorded: Recorded = await ctx.call(
            lambda: app.record_many(
                campaign_id,
                plan.items,
                meta=meta,
                expected_position=inp.expected_position,
                idempotency_key=inp.idempotency_key,
            )
        )
    except (ChronicleError, DomainError) as err:
        refused = _empty(payload_cls, [user_error(err, input_field(err.field, inp))])
        owed = (getattr(err, "details", None) or {}).get("owed")
        if owed and hasattr(refused, "pending_rolls"):
            refused.pending_rolls = [PendingRoll.build(o) for o in owed]
        return refused
    ctx.forget(info)
    if not recorded.replayed:
        ctx.broadcaster_of(info).notify(campaign_id)
    summary = await ctx.summary(info, campaign_id)
    changed = [c for c, view in summary["creatures"].items() if widen and before.get(c) != view]
    characters = [
        Character.build(campaign_id, summary["creatures"][c], summary["position"], "corrected")
        for c in dict.fromkeys([*plan.characters, *changed])
        if c in summary["creatures"]
    ]
    enc = summary["encounters"].get(plan.encounter) if plan.encounter else None
    return payload_cls(
        user_errors=[],
        facts=[
            RecordedFact(position=p, type=f["type"], payload=f["payload"], outcome=o)
            for p, f, o in zip(recorded.positions, recorded.facts, recorded.outcomes, strict=True)
        ],
        position=summary["position"],
        replayed=recorded.replayed,
        campaign=await load_campaign(info, campaign_id),
        characters=characters,
        character=characters[0] if characters else None,
        encounter=Encounter.build(campaign_id, enc, summary, summary["position"], "corrected")
        if enc
        else None,
    )


# ------------------------------------------------------------------ planners
def one(
    fact_type: str,
    payload: dict[str, Any],
    who: str = GM_ONLY,
    actors: set[str] | None = None,
    characters: list[str] | None = None,
    encounter: str | None = None,
) -> Plan:
    return Plan([(fact_type, payload)], who, set(actors or ()), list(characters or ()), encounter)


def p_register(i: I.RegisterCreatureInput, look: Look) -> Plan:
    from api.service.application import _slug

    cid = i.creature_id or _slug(i.name)
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
        "resist": _json(i.resist, "resist") or {},
        "vuln": _json(i.vuln, "vuln") or {},
        "regeneration": i.regeneration,
        "crit_min": i.crit_min,
        "heroic": i.heroic,
        "xp": i.xp,
        "initiative_misc": i.initiative_misc,
        "max_wounds": i.max_wounds,
        "second_wind": i.second_wind,
    }
    return one("CreatureRegistered", payload, characters=[cid])


def p_update_sheet(i: I.UpdateSheetInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "SheetUpdated",
        {"creature_id": c, "changes": _json(i.changes, "changes"), "reason": i.reason},
        ACTORS,
        {c},
        [c],
    )


def p_start_encounter(i: I.StartEncounterInput, look: Look) -> Plan:
    eid = i.encounter_id or f"enc-{uuid.uuid4().hex[:8]}"
    parts = look.creatures(i.participant_ids, "participantIds")
    return one(
        "EncounterStarted",
        {"encounter_id": eid, "name": i.name, "participants": parts},
        characters=parts,
        encounter=eid,
    )


def p_surprise(i: I.DetermineSurpriseInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    s = look.creatures(i.surprised_ids, "surprisedIds")
    return one("SurpriseDetermined", {"encounter_id": eid, "surprised": s}, characters=s, encounter=eid)


def p_initiative(i: I.RollInitiativeInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    return one(
        "InitiativeRolled",
        {"encounter_id": eid, "creature": c, "roll": look.roll(i.roll, "1d20")},
        ACTORS,
        {c},
        [c],
        eid,
    )


def p_tie(i: I.BreakInitiativeTieInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    cs = look.creatures(i.character_ids, "characterIds")
    return one(
        "InitiativeTieBroken",
        {
            "encounter_id": eid,
            "creatures": cs,
            "method": i.method.value,
            "rolls": _json(i.rolls, "rolls", list),
        },
        characters=cs,
        encounter=eid,
    )


def p_end_turn(i: I.EndTurnInput, look: Look) -> Plan:
    """Ruling 18: the rolls the turn owes come with their dice (``rolls``, in the order chosen) or
    are rolled by the server only when asked (``serverRolls``); otherwise ROLLS_PENDING lists them.
    All of it, and the next TurnStarted with ``startNext``, is one table action."""
    eid = look.encounter(i.encounter_id)
    enc = look.state["encounters"].get(eid)
    current = enc.get("turn_of") if enc else None
    rolls = [
        {
            "roll": look.roll(r.roll),
            "type": r.type,
            "effect_id": r.effect_id,
            "creature": look.creature(r.character_id, "rolls.characterId") if r.character_id else None,
            "modifiers": _json(r.modifiers, "rolls.modifiers", list),
        }
        for r in i.rolls or []
    ]
    items = look.app.plan_end_turn(
        look.campaign_id, eid, rolls, server_rolls=i.server_rolls, start_next=i.start_next
    )
    return Plan(items, ACTORS, {current} if current else set(), [current] if current else [], eid)


def p_start_turn(i: I.StartTurnInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    c = look.creature(i.character_id) if i.character_id is not None else None
    enc = look.state["encounters"].get(eid)
    nxt = enc.get("next_turn_of") if enc else None
    return Plan(
        [("TurnStarted", {"encounter_id": eid, "creature": c})], ACTORS, {nxt} if nxt else set(), [], eid
    )


def p_delay(i: I.EncounterCreatureInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    return one("TurnDelayed", {"encounter_id": eid, "creature": c}, ACTORS, {c}, [c], eid)


def p_delayed_turn(i: I.EncounterCreatureInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    return one("DelayedTurnTaken", {"encounter_id": eid, "creature": c}, ACTORS, {c}, [c], eid)


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


def p_trigger(i: I.TriggerReadiedActionInput, look: Look) -> Plan:
    eid, c = look.encounter(i.encounter_id), look.creature(i.character_id)
    t = look.creature(i.trigger_character_id, "triggerCharacterId")
    return one(
        "ReadiedActionTriggered",
        {"encounter_id": eid, "creature": c, "trigger_creature": t},
        ACTORS,
        {c},
        [c, t],
        eid,
    )


def p_end_encounter(i: I.EndEncounterInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    return one("EncounterEnded", {"encounter_id": eid, "outcome": i.outcome}, encounter=eid)


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
        "effects": _json(i.power.effects, "power.effects", list) or [],
    }
    if not i.targets:
        raise ChronicleError("INVALID_INPUT", "an attack needs at least one target", "targets")
    if len(i.targets) > 50:
        raise ChronicleError("INVALID_INPUT", "at most 50 targets", "targets")
    targets, names = [], []
    per_target = bool(power["damage"]) and power["kind"] in ("melee", "ranged")
    for t in i.targets:
        tid = look.creature(t.character_id, "targets.characterId")
        names.append(tid)
        entry: dict[str, Any] = {"target": tid, "roll": look.roll(t.attack_roll, "1d20")}
        if per_target:
            entry["damage"] = look.roll(t.damage_roll, power["damage"], weapon=power["weapon"])
        if t.circumstances is not None:
            entry["circumstances"] = _json(t.circumstances, "targets.circumstances", list)
        if t.modifiers is not None:
            entry["modifiers"] = _json(t.modifiers, "targets.modifiers", list)
        targets.append(entry)
    payload: dict[str, Any] = {
        "attacker": attacker,
        "power": power,
        "targets": targets,
        "nonlethal": i.nonlethal,
        "coup_de_grace": i.coup_de_grace,
    }
    if i.action is not None:
        payload["action"] = i.action
    if power["damage"] and power["kind"] in ("close", "area"):
        payload["damage"] = look.roll(i.damage_roll, power["damage"], weapon=power["weapon"])
    enc = look.state.get("active_encounter")
    return one("AttackMade", payload, ACTORS, {attacker}, [attacker, *names], enc)


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


def p_second_wind(i: I.CharacterInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("SecondWindUsed", {"creature": c}, ACTORS, {c}, [c])


def p_death_save(i: I.DeathSaveInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "DeathSavingThrowRolled",
        {
            "creature": c,
            "roll": look.roll(i.roll, "1d20"),
            "modifiers": _json(i.modifiers, "modifiers", list) or [],
        },
        ACTORS,
        {c},
        [c],
    )


def p_stabilize(i: I.StabilizeInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    healer = look.creature(i.healer_id, "healerId") if i.healer_id is not None else None
    return one(
        "StabilizationAttempted",
        {"target": c, "healer": healer, "roll": look.roll(i.check), "dc": i.dc},
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
        "components": _json(i.effect.components, "effect.components", list),
    }
    if i.effect.duration is not None:
        spec["duration"] = _json(i.effect.duration, "effect.duration")
    if i.effect.aftereffect is not None:
        spec["aftereffect"] = _json(i.effect.aftereffect, "effect.aftereffect")
    if i.effect.beneficial:
        spec["beneficial"] = True
    source = src or i.source or "gm"
    return one(
        "EffectApplied",
        {"target": c, "source": source, "effect": spec},
        ACTORS,
        {src} if src else set(),
        [c] + ([src] if src else []),
    )


def p_sustain(i: I.SustainEffectInput, look: Look) -> Plan:
    source, target = look.effect_source(i.effect_id)
    return one(
        "EffectSustained",
        {"effect_id": i.effect_id, "action": i.action.value},
        ACTORS,
        {source} if source in look.state["creatures"] else set(),
        [x for x in (source, target) if x in look.state["creatures"]],
    )


def p_end_effect(i: I.EndEffectInput, look: Look) -> Plan:
    source, target = look.effect_source(i.effect_id)
    return one(
        "EffectEnded",
        {"effect_id": i.effect_id, "reason": i.reason},
        ACTORS,
        {source} if source in look.state["creatures"] else set(),
        [target] if target else [],
    )


def p_save(i: I.SavingThrowInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one(
        "SavingThrowRolled",
        {
            "creature": c,
            "effect_id": i.effect_id,
            "roll": look.roll(i.roll, "1d20"),
            "modifiers": _json(i.modifiers, "modifiers", list) or [],
        },
        ACTORS,
        {c},
        [c],
    )


def p_action_point(i: I.SpendActionPointInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("ActionPointSpent", {"creature": c, "use": i.use}, ACTORS, {c}, [c])


def p_milestone(i: I.CharactersInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    return one("MilestoneReached", {"creatures": cs}, characters=cs)


def p_xp(i: I.AwardExperienceInput, look: Look) -> Plan:
    cs = look.creatures(i.character_ids, "characterIds")
    return one("ExperienceAwarded", {"creatures": cs, "amount": i.amount, "reason": i.reason}, characters=cs)


def p_level(i: I.SetLevelInput, look: Look) -> Plan:
    c = look.creature(i.character_id)
    return one("LevelSet", {"creature": c, "level": i.level}, characters=[c])


def p_short_rest(i: I.ShortRestInput, look: Look) -> Plan:
    ps = look.creatures(i.participant_ids, "participantIds") if i.participant_ids is not None else None
    return one("ShortRestTaken", {"participants": ps, "minutes": i.minutes}, ACTORS, set(ps or ()), ps or [])


def p_extended_rest(i: I.ExtendedRestInput, look: Look) -> Plan:
    ps = look.creatures(i.participant_ids, "participantIds") if i.participant_ids is not None else None
    return one("ExtendedRestTaken", {"participants": ps, "hours": i.hours}, ACTORS, set(ps or ()), ps or [])


def p_time(i: I.AdvanceTimeInput, look: Look) -> Plan:
    return one("TimeAdvanced", {"minutes": i.minutes})


def p_dice(i: I.RollDiceInput, look: Look) -> Plan:
    c = look.creature(i.character_id) if i.character_id is not None else None
    return one(
        "DiceRolled",
        {"roll": look.roll(i.roll), "purpose": i.purpose, "creature": c},
        MEMBERS,
        {c} if c else set(),
        [c] if c else [],
    )


def p_note(i: I.AddNoteInput, look: Look) -> Plan:
    return one("NoteAdded", {"text": i.text}, MEMBERS)


def p_correction(i: Any, look: Look) -> Plan:
    fact_type, payload = I.correction_fact(i)
    return one(fact_type, payload, MEMBERS if fact_type == "RulingContested" else GM_ONLY)


def p_record_fact(i: I.RecordFactInput, look: Look) -> Plan:
    return one(i.type, _json(i.payload, "payload"))


# (name, input class, planner, description)
ACTIONS: list[tuple[str, type[Any], Planner, str]] = [
    (
        "register_creature",
        I.RegisterCreatureInput,
        p_register,
        "Add a creature (PC, monster, NPC) with its sheet.",
    ),
    ("update_sheet", I.UpdateSheetInput, p_update_sheet, "Change a creature's sheet."),
    (
        "start_encounter",
        I.StartEncounterInput,
        p_start_encounter,
        "Start an encounter with its participants.",
    ),
    ("determine_surprise", I.DetermineSurpriseInput, p_surprise, "Who is surprised (a surprise round)."),
    ("roll_initiative", I.RollInitiativeInput, p_initiative, "A creature's initiative roll."),
    ("break_initiative_tie", I.BreakInitiativeTieInput, p_tie, "Settle a tie in the initiative order."),
    ("start_turn", I.StartTurnInput, p_start_turn, "Start the next turn (ruling 18)."),
    (
        "end_turn",
        I.EndTurnInput,
        p_end_turn,
        "End the turn in progress, with the rolls it owes (ruling 18: no silent dice).",
    ),
    ("delay_turn", I.EncounterCreatureInput, p_delay, "Delay a creature's turn."),
    (
        "take_delayed_turn",
        I.EncounterCreatureInput,
        p_delayed_turn,
        "A delaying creature takes its turn now.",
    ),
    ("ready_action", I.ReadyActionInput, p_ready, "Ready an action with a trigger."),
    (
        "trigger_readied_action",
        I.TriggerReadiedActionInput,
        p_trigger,
        "A readied action's trigger happened.",
    ),
    ("end_encounter", I.EndEncounterInput, p_end_encounter, "End an encounter."),
    ("take_action", I.TakeActionInput, p_action, "Record an action (action economy)."),
    ("attack", I.AttackInput, p_attack, "An attack with a power against one or more targets."),
    ("deal_damage", I.DealDamageInput, p_damage, "Damage to a creature."),
    ("heal", I.HealInput, p_heal, "Healing (with or without a surge)."),
    ("grant_temporary_hit_points", I.GrantTemporaryHitPointsInput, p_temp_hp, "Temporary hit points."),
    ("spend_healing_surge", I.SpendHealingSurgeInput, p_surge, "Spend a healing surge."),
    ("use_second_wind", I.CharacterInput, p_second_wind, "Second wind."),
    ("roll_death_save", I.DeathSaveInput, p_death_save, "A dying creature's death saving throw."),
    ("attempt_stabilization", I.StabilizeInput, p_stabilize, "Try to stabilise a dying creature."),
    ("restore_wounds", I.RestoreWoundsInput, p_restore_wounds, "Restore wounds (magic, medical, care)."),
    ("declare_death", I.DeclareDeathInput, p_death, "Declare a creature dead."),
    ("raise_creature", I.RaiseCreatureInput, p_raise, "Raise a dead creature."),
    (
        "apply_effect",
        I.ApplyEffectInput,
        p_apply_effect,
        "Put an effect (conditions, ongoing damage, ...) on a creature.",
    ),
    ("sustain_effect", I.SustainEffectInput, p_sustain, "Sustain an effect."),
    ("end_effect", I.EndEffectInput, p_end_effect, "End an effect."),
    ("roll_saving_throw", I.SavingThrowInput, p_save, "A saving throw against an effect."),
    ("spend_action_point", I.SpendActionPointInput, p_action_point, "Spend an action point."),
    ("reach_milestone", I.CharactersInput, p_milestone, "A milestone (an action point)."),
    ("award_experience", I.AwardExperienceInput, p_xp, "Award experience points."),
    ("set_level", I.SetLevelInput, p_level, "Pin (or unpin) a creature's level."),
    ("take_short_rest", I.ShortRestInput, p_short_rest, "A short rest."),
    ("take_extended_rest", I.ExtendedRestInput, p_extended_rest, "An extended rest."),
    ("advance_time", I.AdvanceTimeInput, p_time, "In-world time passes."),
    ("roll_dice", I.RollDiceInput, p_dice, "A free dice roll, kept in the log."),
    ("add_note", I.AddNoteInput, p_note, "A note in the log."),
    ("revoke_fact", I.RevokeFactInput, p_correction, "Correction: a fact did not happen."),
    ("restore_fact", I.RestoreFactInput, p_correction, "Correction: cancel a revocation."),
    ("amend_fact", I.AmendFactInput, p_correction, "Correction: change a fact's inputs (JSON merge patch)."),
    ("record_ruling", I.RecordRulingInput, p_correction, "Record a GM ruling."),
    ("contest_ruling", I.ContestRulingInput, p_correction, "Contest a ruling (players may)."),
    ("resolve_ruling", I.ResolveRulingInput, p_correction, "Uphold or overturn a ruling."),
    ("override_outcome", I.OverrideOutcomeInput, p_correction, "Override a derived outcome."),
    (
        "set_rules_flag",
        I.SetRulesFlagInput,
        p_correction,
        "Change a rules flag (from now, or retroactively).",
    ),
    ("record_fact", I.RecordFactInput, p_record_fact, "Escape hatch: record any fact by type (GM only)."),
]

PAYLOADS: dict[str, type[Any]] = {}
PAYLOAD_BASES: dict[str, type[Any]] = {"start_turn": TurnPayload, "end_turn": TurnPayload}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _field(name: str, input_cls: type[Any], planner: Planner, description: str) -> Any:
    base = PAYLOAD_BASES.get(name, MutationPayload)
    payload_cls = strawberry.type(
        type(_camel(name) + "Payload", (base,), {}), description=f"The result of {name}."
    )
    PAYLOADS[name] = payload_cls

    async def resolver(info: Info, input: Any) -> Any:  # noqa: A002 - GraphQL convention
        return await execute(info, payload_cls, input, planner)

    resolver.__annotations__ = {"info": Info, "input": input_cls, "return": payload_cls}
    resolver.__name__ = name
    return strawberry.mutation(resolver=resolver, description=description)


# ------------------------------------------------------------------ campaign and access
@strawberry.type
class CreateCampaignPayload:
    user_errors: list[UserError]
    campaign: Campaign | None = None
    gm_token: str | None = strawberry.field(
        default=None, description="The GM's bearer token. Keep it secret."
    )
    replayed: bool = False


@strawberry.type
class IssueAccessTokenPayload:
    user_errors: list[UserError]
    access_token: AccessToken | None = None
    token: str | None = strawberry.field(default=None, description="The bearer token (shown here only).")
    replayed: bool = False


@strawberry.type
class RevokeAccessTokenPayload:
    user_errors: list[UserError]
    access_token: AccessToken | None = None
    replayed: bool = False


async def create_campaign(info: Info, input: I.CreateCampaignInput) -> CreateCampaignPayload:  # noqa: A002
    try:
        flags = _json(input.flags, "flags")
        ruleset = input.ruleset or await ctx.call(rulesets.default_ruleset)
        campaign_id, token, replayed = await ctx.call(
            ctx.access_of(info).create_campaign, input.name, ruleset, flags, input.idempotency_key
        )
    except (ChronicleError, DomainError) as err:
        return CreateCampaignPayload(user_errors=[user_error(err)])
    info.context.setdefault(ctx.CACHE, {})[("principal", token)] = _done(
        await ctx.call(ctx.access_of(info).authenticate, token)
    )
    campaign = Campaign(
        id=strawberry.ID(ids.campaign_gid(campaign_id)), campaign_id_=campaign_id, at_=None, axis_="corrected"
    )
    return CreateCampaignPayload(user_errors=[], campaign=campaign, gm_token=token, replayed=replayed)


def _done(value: Any) -> Any:
    import asyncio

    fut = asyncio.get_running_loop().create_future()
    fut.set_result(value)
    return fut


async def issue_access_token(info: Info, input: I.IssueAccessTokenInput) -> IssueAccessTokenPayload:  # noqa: A002
    try:
        campaign_id, who = await _authorize(info, input.campaign_id)
        if not who.is_gm:
            raise ChronicleError("FORBIDDEN", "only the GM issues tokens")
        look = Look(ctx.app_of(info), campaign_id, who)
        characters = look.creatures(input.character_ids, "characterIds")
        access = ctx.access_of(info)
        issued = await ctx.call(
            access.issue, campaign_id, input.role.value, characters, input.label, input.idempotency_key
        )
        tokens = await ctx.call(access.tokens, campaign_id)
    except (ChronicleError, DomainError) as err:
        return IssueAccessTokenPayload(user_errors=[user_error(err)])
    entry = next(t for t in tokens if t["token_id"] == issued.token_id)
    return IssueAccessTokenPayload(
        user_errors=[],
        access_token=AccessToken.build(campaign_id, entry),
        token=issued.token,
        replayed=issued.replayed,
    )


async def revoke_access_token(info: Info, input: I.RevokeAccessTokenInput) -> RevokeAccessTokenPayload:  # noqa: A002
    try:
        _, campaign_id, token_id = ids.decode(input.access_token_id, "AccessToken", "accessTokenId")
        _, who = await _authorize(info, ids.campaign_gid(campaign_id))
        if not who.is_gm:
            raise ChronicleError("FORBIDDEN", "only the GM revokes tokens")
        entry, replayed = await ctx.call(ctx.access_of(info).revoke, campaign_id, token_id)
    except (ChronicleError, DomainError) as err:
        return RevokeAccessTokenPayload(user_errors=[user_error(err)])
    ctx.forget(info)
    info.context.get(ctx.CACHE, {}).clear()
    return RevokeAccessTokenPayload(
        user_errors=[], access_token=AccessToken.build(campaign_id, entry), replayed=replayed
    )


def build_mutation_type() -> type[Any]:
    fields: dict[str, Any] = {
        "create_campaign": strawberry.mutation(
            resolver=create_campaign, description="A new campaign; answers the GM's token."
        ),
        "issue_access_token": strawberry.mutation(
            resolver=issue_access_token,
            description="GM: a token for a player (bound to characters) or a viewer.",
        ),
        "revoke_access_token": strawberry.mutation(
            resolver=revoke_access_token, description="GM: revoke a token."
        ),
    }
    for name, input_cls, planner, description in ACTIONS:
        fields[name] = _field(name, input_cls, planner, description)
    return strawberry.type(type("Mutation", (), fields), description="Table actions and corrections.")


Mutation = build_mutation_type()
