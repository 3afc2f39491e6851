"""Reads for the GraphQL layer: synchronous, run in a worker thread, cached per operation.

The history is read from the application's ledger (the in-memory fold): each fact with its
effective (amended) payload, its status flags from ``Ledger.status``, its outcome from one
replay, and its log line (``projections.narrate``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from api.application import ChronicleApplication
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger

try:  # the projections engineer's narration; a minimal fallback keeps the API working without it
    from projections.narrate import FactStatus, narrate
except ImportError:  # pragma: no cover
    FactStatus = None  # type: ignore[assignment,misc]
    narrate = None  # type: ignore[assignment]

__all__ = ["FactRecord", "campaign_info", "changes_between", "facts_after", "history", "summary"]


@dataclass(frozen=True)
class FactRecord:
    campaign_id: UUID
    position: int
    type: str
    payload: dict[str, Any]
    original_payload: dict[str, Any]
    meta: dict[str, Any]
    recorded_at: str
    status: list[str]
    orphan_reason: str | None
    outcome: dict[str, Any] | None
    line: str


def summary(app: ChronicleApplication, campaign_id: UUID, position: int | None, view: str) -> dict[str, Any]:
    return app.summary(campaign_id, position, view)


def campaign_info(app: ChronicleApplication, campaign_id: UUID) -> dict[str, Any]:
    campaign = app.campaign(campaign_id)
    return {
        "name": campaign.name,
        "ruleset": campaign.ruleset,
        "created_at": campaign.created_on.isoformat(),
    }


def _fallback_line(entry: Entry, payload: dict[str, Any], status: list[str]) -> str:
    who = (
        payload.get("creature")
        or payload.get("target")
        or payload.get("attacker")
        or payload.get("name")
        or ""
    )
    text = f"{entry.type} {who}".strip()
    return f"~~{text}~~" if "revoked" in status else text


def _line(
    ledger: Ledger,
    entry: Entry,
    payload: dict[str, Any],
    outcome: dict[str, Any] | None,
    status: list[str],
    orphan: str | None,
    names: dict[str, str],
) -> str:
    if narrate is None or FactStatus is None:
        return _fallback_line(entry, payload, status)
    res = ledger.resolution
    revoked_at = res.revoked.get(entry.seq)
    amended_at = tuple(res.amended_by.get(entry.seq, ()))
    try:
        fs = FactStatus(
            revoked_at=revoked_at,
            revoked_reason=str(ledger.entry(revoked_at).payload.get("reason", "")) if revoked_at else "",
            amended_at=amended_at,
            amended_reasons=tuple(str(ledger.entry(s).payload.get("reason", "")) for s in amended_at),
            orphan_reason=orphan,
            overrides=res.overrides.get(entry.seq, {}),
        )
        return str(narrate(entry, payload, outcome, fs, names))
    except Exception:  # a narration bug must not break the history
        return _fallback_line(entry, payload, status)


def history(app: ChronicleApplication, campaign_id: UUID) -> list[FactRecord]:
    """Every fact of the campaign in position order (position 1, the creation, included)."""
    with app._lock(campaign_id):  # the ledger folds lazily: read it under the campaign's lock
        campaign = app._load(campaign_id)
        ledger = campaign.ledger
        outcomes: dict[int, dict[str, Any] | None] = {}

        def sink(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
            outcomes[e.seq] = outcome

        ledger.replay(sink)
        orphans = ledger.orphans
        names = (
            {cid: c.name for cid, c in ledger.state.creatures.items()}
            if hasattr(ledger.state, "creatures")
            else {}
        )
        out = [
            FactRecord(
                campaign_id,
                1,
                "CampaignCreated",
                {"name": campaign.name, "ruleset": campaign.ruleset, "flags": dict(campaign.flags)},
                {"name": campaign.name, "ruleset": campaign.ruleset, "flags": dict(campaign.flags)},
                dict(campaign.meta),
                campaign.created_on.isoformat(),
                ["active"],
                None,
                None,
                f"Campaign {campaign.name} created ({campaign.ruleset})",
            ),
        ]
        for e in ledger.entries:
            status = ledger.status(e.seq)
            payload = ledger.effective_payload(e.seq)
            out.append(
                FactRecord(
                    campaign_id,
                    e.seq,
                    e.type,
                    payload,
                    e.payload,
                    dict(e.meta),
                    e.timestamp,
                    status,
                    orphans.get(e.seq),
                    outcomes.get(e.seq),
                    _line(ledger, e, payload, outcomes.get(e.seq), status, orphans.get(e.seq), names),
                )
            )
        return out


def changes_between(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Per creature, the fields whose value differs between two creature maps."""
    out = []
    for cid in sorted(set(before) | set(after)):
        a, b = before.get(cid, {}), after.get(cid, {})
        fields = [
            {"field": k, "before": a.get(k), "after": b.get(k)}
            for k in sorted(set(a) | set(b))
            if a.get(k) != b.get(k)
        ]
        if fields:
            out.append({"creature_id": cid, "fields": fields})
    return out


def facts_after(
    app: ChronicleApplication, campaign_id: UUID, after: int, limit: int = 50
) -> list[dict[str, Any]]:
    """Facts after a position, each with its outcome as recorded and the state changes it made.

    The stream's view is ``recorded``: a fact's changes are the difference between the state
    the table saw just before it and just after it (a correction shows its effect).
    """
    with app._lock(campaign_id):
        campaign = app._load(campaign_id)
        ledger = campaign.ledger
        last = ledger.last_seq
        start = max(after + 1, ledger.first_seq)
        seqs = list(range(start, min(last, start + limit - 1) + 1))
        if not seqs:
            return []
        outcomes = ledger.outcomes_as_recorded(seqs)
        rules = ledger.ruleset
        prev_seq = seqs[0] - 1
        prev = rules.summary(ledger.state_at(prev_seq, RECORDED)[0])["creatures"] if prev_seq >= 1 else {}
        out = []
        for seq, outcome in zip(seqs, outcomes, strict=True):
            state, orphans = ledger.state_at(seq, RECORDED)
            now = rules.summary(state)["creatures"]
            e = ledger.entry(seq)
            out.append(
                {
                    "position": seq,
                    "type": e.type,
                    "payload": e.payload,
                    "meta": dict(e.meta),
                    "recorded_at": e.timestamp,
                    "outcome": outcome,
                    "orphan_reason": orphans.get(seq),
                    "changes": changes_between(prev, now),
                }
            )
            prev = now
        return out


def latest_position(app: ChronicleApplication, campaign_id: UUID) -> int:
    return app.ledger(campaign_id).last_seq


__all__ += ["CORRECTED", "RECORDED", "latest_position"]
