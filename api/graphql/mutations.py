"""Mutations: one per table action and correction, each with an input object and a payload.

Every payload implements ``MutationPayload``: the recorded ``facts`` (position, type, payload
with every die face, outcome), the campaign ``position`` after it, ``replayed`` (an idempotent
repeat), the affected ``campaign``, ``characters``/``character`` and ``encounter``, and
``userErrors``. Refusals (domain rules, authorization, idempotency, expectedPosition) come
back as ``userErrors`` with a ``UserErrorCode``; nothing is stored then.
"""

from __future__ import annotations

import uuid
from typing import Any
from uuid import UUID

import strawberry
from graphql import FieldNode
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import ids
from api.graphql import inputs as I  # noqa: N812
from api.graphql.errors import ChronicleError, UserError, user_error
from api.graphql.planning import ACTORS, GM_ONLY, MEMBERS, Look, MutationSpec, Plan, json_arg, one
from api.graphql.types import (
    AccessToken,
    Campaign,
    Character,
    DiceRoll,
    Encounter,
    characters_of,
    rolls_in,
)
from api.rulesets import plugins
from api.service.application import Recorded
from api.service.auth import Principal
from domain import rulesets
from domain.core.rolls import roll_purpose
from domain.errors import DomainError


# ------------------------------------------------------------------ payload types
@strawberry.type(description="A fact a mutation stored (or, replayed, had stored).")
class RecordedFact:
    position: int
    type: str
    payload: JSON
    outcome: JSON | None
    ruleset: strawberry.Private[Any] = None  # names what each roll is for (C0.3)

    @strawberry.field(description="Every die rolled, with its faces, where it is and what it is for.")
    def dice(self) -> list[DiceRoll]:
        payload = self.payload if isinstance(self.payload, dict) else {}
        return rolls_in(payload, lambda path: roll_purpose(self.ruleset, self.type, payload, path))


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


def check_policy(app: Any, campaign_id: UUID, spec: MutationSpec) -> None:
    """A player's direct command under the campaign's trust setting for it (issue 19)."""
    name = _lower_camel(spec.name)
    mode = app.proposal_mode(campaign_id, name)
    if mode == "approval":
        raise ChronicleError(
            "APPROVAL_REQUIRED", f"the GM wants {name} proposed: use submitProposal", "campaignId"
        )
    if mode == "forbidden":
        raise ChronicleError("FORBIDDEN", f"players may not use {name} in this campaign")


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
    "proposal": ("proposal_id",),
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


def _selects(info: Info, names: tuple[str, ...]) -> bool:
    """Whether the client's selection on this mutation's payload asks for any of ``names``
    (a fragment counts as asking: it is not looked into). Read off the document's own nodes:
    Strawberry's ``info.selected_fields`` converts the whole selection, every request."""
    for node in info._raw_info.field_nodes:
        for sel in node.selection_set.selections if node.selection_set else ():
            if not isinstance(sel, FieldNode) or sel.name.value in names:
                return True
    return False


async def execute(info: Info, payload_cls: type[Any], inp: Any, spec: MutationSpec) -> Any:
    """Authorise, plan and record a mutation as one table action, then answer with what changed.

    The answer shows the characters the input names and every character the facts changed
    (corrections and turn boundaries change creatures nobody named: every fact citing a ruling,
    ongoing damage at the next turn's start). Which changed is an identity test on the fold's
    copy-on-write state, so it costs the changes, not the campaign."""
    app = ctx.app_of(info)
    try:
        campaign_id, who = await _authorize(info, inp.campaign_id)
        before = await ctx.call(app.view, campaign_id)
        if spec.ruleset is not None and before.ruleset.id != spec.ruleset:
            raise ChronicleError(
                "WRONG_RULESET",
                f"{_lower_camel(spec.name)} is a {spec.ruleset} mutation; "
                f"this campaign plays {before.ruleset.id}",
                "campaignId",
            )
        look = Look(app, campaign_id, who, ctx.access_of(info))
        look.seen(before)
        plan: Plan = await ctx.call(spec.planner, inp, look)
        _check_actors(who, plan)
        if not who.is_gm and spec.proposable:
            await ctx.call(check_policy, app, campaign_id, spec)
        meta = {"recorded_by": f"{who.role}:{who.token_id}", **plan.meta}
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
    if recorded.after is not None and recorded.before is not None:
        # the campaign as the command left it and as it found it: nothing is read again
        before, after = recorded.before, recorded.after
        ctx.remember_view(info, after)
    else:  # a replay: the campaign now
        after = await ctx.view(info, campaign_id)
    characters: list[Any] = []
    if _selects(info, ("characters", "character")):  # viewing what changed costs: only if asked
        changed = [c for c in after.changed_since(before) if before.creature(c) != after.creature(c)]
        shown = list(dict.fromkeys([*plan.characters, *changed]))
        characters = characters_of(after, shown)
    enc = after.encounter(plan.encounter) if plan.encounter else None
    return payload_cls(
        user_errors=[],
        facts=[
            RecordedFact(position=p, type=f["type"], payload=f["payload"], outcome=o, ruleset=after.ruleset)
            for p, f, o in zip(recorded.positions, recorded.facts, recorded.outcomes, strict=True)
        ],
        position=after.position,
        replayed=recorded.replayed,
        campaign=Campaign(  # (it exists: the command was just checked against it)
            id=strawberry.ID(ids.campaign_gid(campaign_id)),
            campaign_id_=campaign_id,
            at_=None,
            axis_="corrected",
        ),
        characters=characters,
        character=characters[0] if characters else None,
        encounter=Encounter.build(after, enc) if enc else None,
    )


# ------------------------------------------------------------------ core planners
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
    if i.dice is not None and i.rolls is not None:
        raise ChronicleError("INVALID_INPUT", "give dice or rolls, not both", "dice")
    rolls = json_arg(i.rolls, "rolls", list) if i.dice is None else [look.roll(d) for d in i.dice]
    return one(
        "InitiativeTieBroken",
        {"encounter_id": eid, "creatures": cs, "method": i.method.value, "rolls": rolls},
        characters=cs,
        encounter=eid,
    )


def p_end_turn(i: I.EndTurnInput, look: Look) -> Plan:
    """Ruling 18: the rolls the turn owes come with their dice (``rolls``, in the order chosen) or
    are rolled by the server only when asked (``serverRolls``); otherwise ROLLS_PENDING lists them.
    All of it, and the next TurnStarted with ``startNext``, is one table action."""
    eid = look.encounter(i.encounter_id)
    enc = look.view.encounter(eid)
    current = enc.get("turn_of") if enc else None
    rolls = [
        {
            "roll": look.roll(r.roll),
            "type": r.type,
            "effect_id": r.effect_id,
            "creature": look.creature(r.character_id, "rolls.characterId") if r.character_id else None,
            "modifiers": json_arg(r.modifiers, "rolls.modifiers", list),
        }
        for r in i.rolls or []
    ]
    items = look.app.plan_end_turn(
        look.campaign_id, eid, rolls, server_rolls=i.server_rolls, start_next=i.start_next, view=look.view
    )
    return Plan(items, ACTORS, {current} if current else set(), [current] if current else [], eid)


def p_start_turn(i: I.StartTurnInput, look: Look) -> Plan:
    eid = look.encounter(i.encounter_id)
    c = look.creature(i.character_id) if i.character_id is not None else None
    enc = look.view.encounter(eid)
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


def p_time(i: I.AdvanceTimeInput, look: Look) -> Plan:
    return one("TimeAdvanced", {"minutes": i.minutes})


def p_set_time(i: I.SetTimeInput, look: Look) -> Plan:
    return one("TimeSet", {"day": i.day, "hour": i.hour, "minute": i.minute})


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
    fact_type, payload = I.correction_fact(i, look.payload_of)
    return one(fact_type, payload, MEMBERS if fact_type == "RulingContested" else GM_ONLY)


def p_record_fact(i: I.RecordFactInput, look: Look) -> Plan:
    return one(i.type, json_arg(i.payload, "payload"))


# The mutations every game system shares (its own come from its API plug-in, api.rulesets).
CORE_MUTATIONS: list[MutationSpec] = [
    MutationSpec(
        "start_encounter",
        I.StartEncounterInput,
        p_start_encounter,
        "Start an encounter with its participants.",
    ),
    MutationSpec(
        "determine_surprise", I.DetermineSurpriseInput, p_surprise, "Who is surprised (a surprise round)."
    ),
    MutationSpec("roll_initiative", I.RollInitiativeInput, p_initiative, "A creature's initiative roll."),
    MutationSpec(
        "break_initiative_tie", I.BreakInitiativeTieInput, p_tie, "Settle a tie in the initiative order."
    ),
    MutationSpec("start_turn", I.StartTurnInput, p_start_turn, "Start the next turn (ruling 18)."),
    MutationSpec(
        "end_turn",
        I.EndTurnInput,
        p_end_turn,
        "End the turn in progress, with the rolls it owes (ruling 18: no silent dice).",
    ),
    MutationSpec("delay_turn", I.EncounterCreatureInput, p_delay, "Delay a creature's turn."),
    MutationSpec(
        "take_delayed_turn",
        I.EncounterCreatureInput,
        p_delayed_turn,
        "A delaying creature takes its turn now.",
    ),
    MutationSpec(
        "trigger_readied_action",
        I.TriggerReadiedActionInput,
        p_trigger,
        "A readied action's trigger happened.",
    ),
    MutationSpec("end_encounter", I.EndEncounterInput, p_end_encounter, "End an encounter."),
    MutationSpec("advance_time", I.AdvanceTimeInput, p_time, "In-world time passes."),
    MutationSpec(
        "set_time",
        I.SetTimeInput,
        p_set_time,
        "Set the in-game clock to a day and hour; it never goes back (CLOCK_BACKWARDS).",
    ),
    MutationSpec("roll_dice", I.RollDiceInput, p_dice, "A free dice roll, kept in the log."),
    MutationSpec("add_note", I.AddNoteInput, p_note, "A note in the log."),
    MutationSpec("revoke_fact", I.RevokeFactInput, p_correction, "Correction: a fact did not happen."),
    MutationSpec("restore_fact", I.RestoreFactInput, p_correction, "Correction: cancel a revocation."),
    MutationSpec(
        "amend_fact", I.AmendFactInput, p_correction, "Correction: change a fact's inputs (JSON merge patch)."
    ),
    MutationSpec("record_ruling", I.RecordRulingInput, p_correction, "Record a GM ruling."),
    MutationSpec("contest_ruling", I.ContestRulingInput, p_correction, "Contest a ruling (players may)."),
    MutationSpec("resolve_ruling", I.ResolveRulingInput, p_correction, "Uphold or overturn a ruling."),
    MutationSpec("override_outcome", I.OverrideOutcomeInput, p_correction, "Override a derived outcome."),
    MutationSpec(
        "set_rules_flag",
        I.SetRulesFlagInput,
        p_correction,
        "Change a rules flag (from now, or retroactively).",
    ),
    MutationSpec(
        "record_fact", I.RecordFactInput, p_record_fact, "Escape hatch: record any fact by type (GM only)."
    ),
]

PAYLOADS: dict[str, type[Any]] = {}
PAYLOAD_BASES: dict[str, type[Any]] = {"start_turn": TurnPayload, "end_turn": TurnPayload}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _field(spec: MutationSpec) -> Any:
    name = spec.name
    payload_cls = PAYLOADS.get(name)
    if payload_cls is None:
        base = spec.payload_base or PAYLOAD_BASES.get(name, MutationPayload)
        payload_cls = PAYLOADS[name] = strawberry.type(
            type(_camel(name) + "Payload", (base,), {}), description=f"The result of {name}."
        )

    async def resolver(info: Info, input: Any) -> Any:  # noqa: A002 - GraphQL convention
        out = await execute(info, payload_cls, input, spec)
        if spec.answer is not None and not out.user_errors:
            out = await spec.answer(info, input, out)
        return out

    resolver.__annotations__ = {"info": Info, "input": spec.input, "return": payload_cls}
    resolver.__name__ = name
    description = spec.description if spec.ruleset is None else f"{spec.description} ({spec.ruleset} only)"
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
        flags = json_arg(input.flags, "flags")
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


def all_mutations() -> list[MutationSpec]:
    """The core mutations and every installed plug-in's (not campaign and token management)."""
    from api.graphql.proposals import proposal_mutations

    return [*CORE_MUTATIONS, *proposal_mutations(), *(m for p in plugins().values() for m in p.mutations)]


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
    for spec in all_mutations():
        if spec.name in fields:
            raise RuntimeError(
                f"two mutations are named {spec.name} (a ruleset plug-in must use its own prefix)"
            )
        fields[spec.name] = _field(spec)
    return strawberry.type(type("Mutation", (), fields), description="Table actions and corrections.")


Mutation = build_mutation_type()
