"""Proposals: players propose, the GM decides (issue 19). Ruleset-neutral.

A proposal is a fact of its own: ``ProposalSubmitted`` records who proposed which command
(the API's mutation name and its exact input), for which character, and the dice the server
rolled for it (so approving applies the dice the GM saw). ``ProposalDecided`` approves it
(the command's facts are stored in the same append, citing the proposal in their envelope),
approves it with changes (the amended input is in the fact, the difference visible) or
rejects it with a reason; ``ProposalWithdrawn`` is the proposer taking it back. A proposal is
decided or withdrawn once. ``ProposalPolicySet`` is the GM's per-command trust setting for
players: ``direct`` (today's behaviour, the default), ``approval`` (a player must propose) or
``forbidden`` (a player may neither do nor propose it).

The ledger keeps a :class:`Book` of these facts (they are pinned, so snapshots keep them);
nothing here is folded into the ruleset's state. The commands' meaning stays the ruleset's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from domain.errors import InvalidInput, NotFound, RuleViolation

SUBMITTED, DECIDED, WITHDRAWN, POLICY = (
    "ProposalSubmitted",
    "ProposalDecided",
    "ProposalWithdrawn",
    "ProposalPolicySet",
)
TYPES = frozenset({SUBMITTED, DECIDED, WITHDRAWN, POLICY})
DECISIONS = ("approved", "approved_with_changes", "rejected")
MODES = ("direct", "approval", "forbidden")
DEFAULT_MODE = "direct"

PENDING = "pending"


@dataclass
class Proposal:
    """One proposal as the facts so far tell it."""

    position: int
    mutation: str
    input: dict[str, Any]
    character: str | None
    characters: list[str]
    proposed_by: str  # "<role>:<token id>"
    proposer: str  # the proposer's name for people (the token's label, else the role)
    note: str
    rolls: list[dict[str, Any]]
    submitted_at: str
    status: str = PENDING  # pending | approved | approved_with_changes | rejected | withdrawn
    decided_at: int | None = None  # position of the ProposalDecided / ProposalWithdrawn
    decided_by: str | None = None
    reason: str = ""
    amended_input: dict[str, Any] | None = None
    applied: list[int] = field(default_factory=list)  # positions of the facts it became (same append)

    @property
    def pending(self) -> bool:
        return self.status == PENDING


@dataclass
class Book:
    """Every proposal and the trust settings, in the order their facts were recorded."""

    proposals: dict[int, Proposal] = field(default_factory=dict)
    policies: dict[str, str] = field(default_factory=dict)  # mutation name -> mode

    def add(self, seq: int, fact_type: str, payload: dict[str, Any], meta: dict[str, Any]) -> None:
        """Take a stored proposal fact into account."""
        if fact_type == SUBMITTED:
            self.proposals[seq] = Proposal(
                position=seq,
                mutation=payload["mutation"],
                input=payload["input"],
                character=payload.get("character"),
                characters=list(payload.get("characters") or []),
                proposed_by=payload["proposed_by"],
                proposer=payload.get("proposer") or payload["proposed_by"].split(":")[0],
                note=payload.get("note") or "",
                rolls=list(payload.get("rolls") or []),
                submitted_at=str(meta.get("recorded_at", "")),
            )
        elif fact_type in (DECIDED, WITHDRAWN):
            p = self.proposals.get(payload["proposal"])
            if p is not None:
                p.status = payload["decision"] if fact_type == DECIDED else "withdrawn"
                p.decided_at = seq
                p.decided_by = str(meta.get("recorded_by", "")) or None
                p.reason = payload.get("reason") or ""
                p.amended_input = payload.get("input") if fact_type == DECIDED else None
                p.applied = list(range(seq + 1, seq + 1 + int(payload.get("facts") or 0)))
        elif fact_type == POLICY:
            if payload["mode"] == DEFAULT_MODE:
                self.policies.pop(payload["mutation"], None)
            else:
                self.policies[payload["mutation"]] = payload["mode"]

    def check(self, fact_type: str, payload: dict[str, Any]) -> None:
        """Refuse a decision or withdrawal of something that is not a pending proposal."""
        if fact_type not in (DECIDED, WITHDRAWN):
            return
        n = payload["proposal"]
        p = self.proposals.get(n)
        if p is None:
            raise NotFound(f"no proposal at position {n}", field="proposal")
        if not p.pending:
            raise RuleViolation(
                f"proposal {n} is already {p.status.replace('_', ' ')}",
                field="proposal",
                code="PROPOSAL_NOT_PENDING",
            )
        if fact_type == DECIDED:
            changed = payload.get("input") is not None
            if payload["decision"] == "approved_with_changes" and not changed:
                raise InvalidInput("an approval with changes gives the amended input", field="input")
            if payload["decision"] != "approved_with_changes" and changed:
                raise InvalidInput("only an approval with changes gives an input", field="input")
            # ``changed`` restates the two inputs for the log: it must say what they say
            if list(payload.get("changed") or []) != diff(p.input, payload.get("input") or p.input):
                raise InvalidInput("changed must list exactly how the input differs", field="changed")

    def pending(self) -> list[Proposal]:
        return [p for p in self.proposals.values() if p.pending]

    def mode(self, mutation: str) -> str:
        return self.policies.get(mutation, DEFAULT_MODE)


def diff(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """Where two JSON inputs differ: ``[{"field": "targets.0.damageRoll.faces.0", "before": 5,
    "after": 2}]`` (dotted paths, list items by index while the lists keep their length)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[dict[str, Any]] = []
        for k in sorted(set(before) | set(after), key=str):
            out.extend(diff(before.get(k), after.get(k), f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d for i, (b, a) in enumerate(zip(before, after, strict=True)) for d in diff(b, a, f"{path}.{i}")
        ]
    return [] if before == after else [{"field": path, "before": before, "after": after}]


DECISION_WORDS = {
    "approved": "approved",
    "approved_with_changes": "approved with changes",
    "rejected": "rejected",
    "withdrawn": "withdrawn",
}


def who(proposed_by: str, proposer: str) -> str:
    """``Ana (player)``: the name and the role of whoever proposed."""
    role = proposed_by.split(":", 1)[0] or "player"
    if role == "gm":
        return "the GM"
    return f"{proposer} ({role})" if proposer and proposer != role else role


def provenance(meta: dict[str, Any], esc: Callable[[str], str] = str) -> str | None:
    """How a fact came to be, from its envelope: ``proposed by Ana (player), approved with
    changes by the GM`` for a fact an approved proposal became; None for any other fact."""
    if not isinstance(meta.get("proposal"), int) or "proposed_by" not in meta:
        return None
    decision = DECISION_WORDS.get(str(meta.get("decision", "approved")), "approved")
    return (
        f"proposed by {esc(who(str(meta['proposed_by']), str(meta.get('proposer', ''))))}, "
        f"{decision} by the GM (proposal #{meta['proposal']})"
    )
