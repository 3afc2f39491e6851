"""Players propose, the GM decides (issue 19): the proposal mutations, the preview, the events.

Any mutation of the API (the core's or a ruleset's: every one is a :class:`MutationSpec` with
a planner) can be proposed instead of done: ``submitProposal(mutation: "attack", input: {...})``
checks the input against that mutation's GraphQL input type, runs its planner as the proposer
(so a player proposes only what names their own character) and tries it on the present
(refused now: refused with the command's own error), then stores ``ProposalSubmitted`` with the
exact input and the dice the server rolled. ``approveProposal`` runs the same planner again on
the present, as the GM, with those same dice (or the GM's changes, a JSON merge patch over the
input) and stores ``ProposalDecided`` and the command's facts in one append; the facts cite the
proposal in their envelope (``proposal``, ``proposed_by``, ``proposer``, ``decision``). A
command the present refuses is refused with its own typed error and the proposal stays pending.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from api.graphql import context as ctx
from api.graphql import ids
from api.graphql.enums import ProposalEventKind, ProposalMode
from api.graphql.errors import ChronicleError
from api.graphql.inputs import MutationInput
from api.graphql.planning import GM_ONLY, MEMBERS, Look, MutationSpec, Plan, json_arg
from api.graphql.types import (
    CharacterChange,
    Proposal,
    ProposalPreview,
    ProposalRefusal,
    character_changes,
)
from domain.core import proposals as book
from domain.core.catalogue import merge_patch
from domain.errors import DomainError, NotFound

# Input fields that belong to the request, not to the command.
REQUEST_FIELDS = ("idempotencyKey", "expectedPosition")


# ------------------------------------------------------------------ inputs
@strawberry.input(description="Propose a command instead of doing it; the GM decides.")
class SubmitProposalInput(MutationInput):
    mutation: str = strawberry.field(description="The mutation's name, e.g. `attack` or `d20Attack`.")
    input: JSON = strawberry.field(
        description="Its input, exactly as the mutation takes it (`campaignId` may be left out)."
    )
    note: str = strawberry.field(default="", description="A word for the GM.")


@strawberry.input(description="Approve a pending proposal: its command is applied now, citing it.")
class ApproveProposalInput(MutationInput):
    proposal_id: strawberry.ID
    changes: JSON | None = strawberry.field(
        default=None,
        description="Approve with changes: a JSON merge patch over the proposed input (RFC 7396).",
    )
    reason: str = ""


@strawberry.input(description="Reject a pending proposal with a reason.")
class RejectProposalInput(MutationInput):
    proposal_id: strawberry.ID
    reason: str


@strawberry.input(description="Take back one's own pending proposal.")
class WithdrawProposalInput(MutationInput):
    proposal_id: strawberry.ID
    reason: str = ""


@strawberry.input(description="The campaign's trust setting for players for one command (GM only).")
class SetProposalPolicyInput(MutationInput):
    mutation: str
    mode: ProposalMode


# ------------------------------------------------------------------ the proposed command
def _specs() -> dict[str, MutationSpec]:
    from api.graphql.mutations import _lower_camel, all_mutations

    return {_lower_camel(s.name): s for s in all_mutations() if s.proposable}


def _spec(name: str, look: Look) -> MutationSpec:
    spec = _specs().get(name)
    if spec is None:
        raise ChronicleError("INVALID_INPUT", f"{name!r} is not a mutation that can be proposed", "mutation")
    if spec.ruleset is not None and look.view.ruleset.id != spec.ruleset:
        raise ChronicleError(
            "WRONG_RULESET",
            f"{name} is a {spec.ruleset} mutation; this campaign plays {look.view.ruleset.id}",
            "mutation",
        )
    return spec


def command_input(spec: MutationSpec, raw: dict[str, Any], campaign_gid: str) -> Any:
    """The mutation's input object from its JSON, checked as GraphQL checks a variable."""
    from graphql import GraphQLNonNull
    from graphql.utilities.validate_input_value import validate_input_value
    from strawberry.types.arguments import convert_argument

    from api.graphql.served import schema

    value = {k: v for k, v in raw.items() if k not in REQUEST_FIELDS}
    value["campaignId"] = campaign_gid
    gtype = GraphQLNonNull(schema._schema.get_type(spec.input.__strawberry_definition__.name))
    problems: list[tuple[list[Any], Any]] = []
    validate_input_value(value, gtype, lambda err, path: problems.append((list(path), err)))
    if problems:
        path, err = problems[0]
        where = ".".join(["input", *(str(p) for p in path)])
        raise ChronicleError("INVALID_INPUT", str(getattr(err, "message", err)), where)
    from graphql import coerce_input_value

    coerced = coerce_input_value(value, gtype)
    return convert_argument(coerced, spec.input, schema.schema_converter.scalar_registry, schema.config)


class ProposalLook(Look):
    """A Look that keeps the dice the server rolls (at submission) or rolls those again (at approval)."""

    def __init__(self, base: Look, replay: list[dict[str, Any]] | None = None) -> None:
        super().__init__(base.app, base.campaign_id, base.who, base.access)
        self._view = base._view
        self.rolled: list[dict[str, Any]] = []
        self.replay = [dict(r) for r in replay or []]

    def roll(self, dice: Any, default: str | None = None, weapon: str | None = None) -> dict[str, Any] | None:
        if dice is None and default is not None:
            for i, r in enumerate(self.replay):
                if r.get("dice") == default and r.get("weapon") == weapon:
                    return dict(self.replay.pop(i)["roll"])
            out = super().roll(dice, default, weapon)
            self.rolled.append({"dice": default, "weapon": weapon, "roll": out})
            return out
        return super().roll(dice, default, weapon)


def _may_propose(who: Any, plan: Plan) -> str | None:
    """Whether this principal may propose the plan; the character it is for."""
    from api.graphql.mutations import _check_actors

    named = [*sorted(plan.actors), *plan.characters]
    if who.is_gm:
        return named[0] if named else None
    if plan.who == GM_ONLY:
        # a GM-only command (a condition suffered, a rest...) for the player's own character
        if plan.characters and plan.characters[0] in who.characters:
            return plan.characters[0]
        raise ChronicleError("FORBIDDEN", "a player proposes only for their own characters")
    _check_actors(who, plan)
    own = [c for c in named if c in who.characters]
    return own[0] if own else None


def _proposal(look: Look, gid: Any) -> book.Proposal:
    _, cid, local = ids.decode(gid, "Proposal", "proposalId")
    if cid != look.campaign_id or not local.isdigit():
        raise ChronicleError("NOT_FOUND", "no such proposal in this campaign", "proposalId")
    found = look.app.proposal(look.campaign_id, int(local))
    if found is None:
        raise NotFound(f"no proposal at position {local}", field="proposalId")
    return found


def _pending(p: book.Proposal) -> None:
    if not p.pending:
        raise DomainError(
            f"proposal {p.position} is already {p.status.replace('_', ' ')}",
            field="proposalId",
            code="PROPOSAL_NOT_PENDING",
        )


def _label(look: Look) -> str:
    who = look.who
    if who.is_gm:
        return ""
    tokens = look.access.tokens(look.campaign_id) if look.access is not None else []
    label = next((t.get("label") for t in tokens if t.get("token_id") == who.token_id), "")
    return str(label or "")


def _in_input(err: Any, inner: Any) -> Any:
    """The command's refusal, its field named inside the proposal's ``input`` (``input.characterId``)."""
    from api.graphql.mutations import input_field

    name = input_field(err.field, inner)
    if name and not name.startswith("input"):
        err.field = f"input.{name}"
    return err


def _replaying(look: Look, i: Any) -> bool:
    """Whether this request repeats one stored under its idempotency key (the ledger replays it)."""
    key = getattr(i, "idempotency_key", None)
    return bool(key) and look.app.key_used(look.campaign_id, key)


def _gm_only(look: Look) -> None:
    if not look.who.is_gm:
        raise ChronicleError("FORBIDDEN", "only the GM decides proposals")


def rebase(value: Any, campaign_id: UUID) -> Any:
    """The input with every global ID of another campaign re-encoded for this one: a proposal
    stored in a campaign that was exported and imported (a new campaign id) names the same
    characters and encounters. (At submission the IDs were checked against the campaign.)"""
    if isinstance(value, dict):
        return {k: rebase(v, campaign_id) for k, v in value.items()}
    if isinstance(value, list):
        return [rebase(v, campaign_id) for v in value]
    if isinstance(value, str) and len(value) > 40:
        try:
            type_name, cid, local = ids.decode(value)
        except ChronicleError:
            return value
        if cid != campaign_id:
            return ids.encode(type_name, campaign_id, campaign_id if type_name == "Campaign" else local)
    return value


def _command(look: Look, p: book.Proposal, raw: dict[str, Any]) -> tuple[MutationSpec, Plan]:
    """The proposal's command planned on the present; ``raw`` is its input as stored, or as the
    GM changed it: only the stored input is rebased (a proposal imported with its campaign names
    the old campaign's ids), ids in the GM's changes are checked like any other input."""
    spec = _spec(p.mutation, look)
    inner = command_input(spec, raw, ids.campaign_gid(look.campaign_id))
    plan = spec.planner(inner, ProposalLook(look, p.rolls))
    return spec, plan


# ------------------------------------------------------------------ planners
def p_submit(i: SubmitProposalInput, look: Look) -> Plan:
    raw = json_arg(i.input, "input")
    if raw is None:
        raise ChronicleError("INVALID_INPUT", "input must be a JSON object", "input")
    spec = _spec(i.mutation, look)
    if not look.who.is_gm and look.app.proposal_mode(look.campaign_id, i.mutation) == "forbidden":
        raise ChronicleError("FORBIDDEN", f"players may not use {i.mutation} in this campaign")
    inner = command_input(spec, raw, str(i.campaign_id))
    plook = ProposalLook(look)
    try:
        plan = spec.planner(inner, plook)
    except (ChronicleError, DomainError) as err:
        raise _in_input(err, inner) from None
    character = _may_propose(look.who, plan)
    if not _replaying(look, i):  # a repeat answers what was stored, whatever the present says
        refusal = look.app.preview(look.campaign_id, [plan.items])["refusals"][0]
        if refusal is not None:
            raise _in_input(refusal, inner)
    proposed = {**{k: v for k, v in raw.items() if k not in REQUEST_FIELDS}, "campaignId": str(i.campaign_id)}
    payload = {
        "mutation": i.mutation,
        "input": proposed,
        "character": character,
        "characters": list(dict.fromkeys(plan.characters)),
        "proposed_by": f"{look.who.role}:{look.who.token_id}",
        "proposer": _label(look),
        "note": i.note,
        "rolls": plook.rolled,
    }
    return Plan([("ProposalSubmitted", payload)], MEMBERS, set(), list(plan.characters), plan.encounter)


def p_approve(i: ApproveProposalInput, look: Look) -> Plan:
    _gm_only(look)
    p = _proposal(look, i.proposal_id)
    if not _replaying(look, i):
        _pending(p)
    changes = json_arg(i.changes, "changes")
    fixed = sorted(k for k in changes or {} if k in (*REQUEST_FIELDS, "campaignId"))
    if fixed:
        why = f"changes may not touch {', '.join(fixed)}: they belong to the request, not the command"
        raise ChronicleError("INVALID_INPUT", why, "changes")
    stored = rebase(p.input, look.campaign_id)
    raw = merge_patch(stored, changes) if changes else stored
    _, plan = _command(look, p, raw)
    decision = "approved_with_changes" if changes and raw != stored else "approved"
    decided = {
        "proposal": p.position,
        "decision": decision,
        "reason": i.reason,
        "input": raw if decision == "approved_with_changes" else None,
        "changed": book.diff(p.input, raw) if decision == "approved_with_changes" else [],
        "facts": len(plan.items),
    }
    meta = {
        "proposal": p.position,
        "proposed_by": p.proposed_by,
        "proposer": p.proposer,
        "decision": decision,
    }
    return Plan(
        [("ProposalDecided", decided), *plan.items],
        GM_ONLY,
        set(),
        list(plan.characters),
        plan.encounter,
        meta,
    )


def p_reject(i: RejectProposalInput, look: Look) -> Plan:
    _gm_only(look)
    p = _proposal(look, i.proposal_id)
    decided = {"proposal": p.position, "decision": "rejected", "reason": i.reason}
    return Plan(
        [("ProposalDecided", decided)], GM_ONLY, set(), list(p.characters), None, {"proposal": p.position}
    )


def p_withdraw(i: WithdrawProposalInput, look: Look) -> Plan:
    p = _proposal(look, i.proposal_id)
    who = look.who
    own = p.proposed_by == f"{who.role}:{who.token_id}" or (
        p.character is not None and p.character in who.characters
    )
    if not (who.is_gm or own):
        raise ChronicleError("FORBIDDEN", "only the proposer withdraws a proposal")
    return Plan(
        [("ProposalWithdrawn", {"proposal": p.position, "reason": i.reason})],
        MEMBERS,
        set(),
        list(p.characters),
        None,
        {"proposal": p.position},
    )


def p_policy(i: SetProposalPolicyInput, look: Look) -> Plan:
    if i.mutation not in _specs():
        raise ChronicleError(
            "INVALID_INPUT", f"{i.mutation!r} is not a mutation that can be proposed", "mutation"
        )
    return Plan([("ProposalPolicySet", {"mutation": i.mutation, "mode": i.mode.value})], GM_ONLY)


# ------------------------------------------------------------------ answers
def _make_payload_base() -> type[Any]:
    from api.graphql.mutations import MutationPayload

    @strawberry.type(description="What a proposal mutation answers: the proposal as it stands now.")
    class ProposalPayload(MutationPayload):
        proposal: Proposal | None = None

    return ProposalPayload


async def _answer(info: Info, inp: Any, out: Any) -> Any:
    _, campaign_id, _ = ids.decode(inp.campaign_id, "Campaign", "campaignId")
    if isinstance(inp, SubmitProposalInput):
        position = out.facts[0].position if out.facts else None
    else:
        position = int(ids.decode(inp.proposal_id, "Proposal", "proposalId")[2])
    found = await ctx.call(ctx.app_of(info).proposal, campaign_id, position or 0)
    out.proposal = None if found is None else Proposal.build(campaign_id, found)
    return out


@functools.cache
def proposal_mutations() -> list[MutationSpec]:
    base = _make_payload_base()

    def spec(name: str, inp: type[Any], planner: Any, description: str, answer: bool = True) -> MutationSpec:
        return MutationSpec(
            name,
            inp,
            planner,
            description,
            payload_base=base if answer else None,
            answer=_answer if answer else None,
            proposable=False,
        )

    return [
        spec(
            "submit_proposal",
            SubmitProposalInput,
            p_submit,
            "Propose any mutation (by name, with its input) for the GM to decide; nothing is applied yet.",
        ),
        spec(
            "approve_proposal",
            ApproveProposalInput,
            p_approve,
            "GM: apply a pending proposal now (optionally with changes), citing it.",
        ),
        spec(
            "reject_proposal", RejectProposalInput, p_reject, "GM: reject a pending proposal with a reason."
        ),
        spec(
            "withdraw_proposal",
            WithdrawProposalInput,
            p_withdraw,
            "The proposer takes back a pending proposal.",
        ),
        spec(
            "set_proposal_policy",
            SetProposalPolicyInput,
            p_policy,
            "GM: whether players do a command directly, must propose it, or may not (per campaign).",
            answer=False,
        ),
    ]


# ------------------------------------------------------------------ preview
async def preview(info: Info, campaign_id: UUID, proposal_ids: list[strawberry.ID]) -> ProposalPreview:
    """The present if these pending proposals were approved as proposed, in this order."""
    who = await ctx.reader(info, campaign_id)
    if not proposal_ids or len(proposal_ids) > 50:
        raise ChronicleError("INVALID_INPUT", "give 1 to 50 proposals", "proposalIds")
    app = ctx.app_of(info)
    look = Look(app, campaign_id, who, ctx.access_of(info))

    def run() -> tuple[dict[str, Any], list[book.Proposal], list[DomainError | None]]:
        found: list[book.Proposal] = []
        actions: list[list[tuple[str, dict[str, Any]]]] = []
        early: list[DomainError | None] = []
        for gid in proposal_ids:
            try:
                p = _proposal(look, gid)
            except DomainError as err:
                raise ChronicleError.from_domain(err) from None
            found.append(p)
            try:
                _pending(p)
                _, plan = _command(look, p, rebase(p.input, look.campaign_id))
            except (DomainError, ChronicleError) as err:
                early.append(err if isinstance(err, DomainError) else DomainError(err.message, code=err.code))
                actions.append([])
                continue
            early.append(None)
            # as approving stores it: the decision first, then the command's facts (their positions
            # name what they create, e.g. effect ids)
            decided = {"proposal": p.position, "decision": "approved", "facts": len(plan.items)}
            actions.append([("ProposalDecided", decided), *plan.items])
        result = app.preview(campaign_id, [a for a in actions if a])
        late = iter(result["refusals"])
        refusals = [e if e is not None or not a else next(late) for e, a in zip(early, actions, strict=True)]
        return result, found, refusals

    result, found, refusals = await ctx.call(run)
    return ProposalPreview(
        view_=result["view"],
        position=result["view"].position,
        changes=_changes(result["changes"]),
        applied=[p.position for p, r in zip(found, refusals, strict=True) if r is None],
        refusals=[
            ProposalRefusal(
                proposal_id=strawberry.ID(ids.encode("Proposal", campaign_id, p.position)),
                position=p.position,
                code=r.code,
                message=r.message,
                field=r.field,
            )
            for p, r in zip(found, refusals, strict=True)
            if r is not None
        ],
    )


def _changes(changes: dict[str, dict[str, tuple[Any, Any]]]) -> list[CharacterChange]:
    return character_changes(
        [
            {
                "creature_id": cid,
                "fields": [{"field": k, "before": v[0], "after": v[1]} for k, v in f.items()],
            }
            for cid, f in changes.items()
        ]
    )


def events(raw: list[dict[str, Any]]) -> Iterator[tuple[int, str, int]]:
    """The proposal events among streamed facts: (position, kind, proposal position)."""
    for r in raw:
        if r["type"] == book.SUBMITTED:
            yield r["position"], "submitted", r["position"]
        elif r["type"] == book.DECIDED:
            yield r["position"], "decided", r["payload"]["proposal"]
        elif r["type"] == book.WITHDRAWN:
            yield r["position"], "withdrawn", r["payload"]["proposal"]


@strawberry.type(description="A proposal arrived, was decided or withdrawn (`campaignProposals`).")
class ProposalEvent:
    position: int = strawberry.field(description="The position of the fact that made the event.")
    kind: ProposalEventKind
    proposal: Proposal = strawberry.field(description="The proposal as it stands now.")


def build_events(campaign_id: UUID, raw: list[dict[str, Any]], current: book.Book) -> list[ProposalEvent]:
    out = []
    for position, kind, at in events(raw):
        p = current.proposals.get(at)
        if p is not None:
            out.append(
                ProposalEvent(
                    position=position, kind=ProposalEventKind(kind), proposal=Proposal.build(campaign_id, p)
                )
            )
    return out
