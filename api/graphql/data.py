"""Reads for the GraphQL layer: synchronous, run in a worker thread, cached per operation.

The history is read from the application's ledger (the in-memory fold): each fact with its
effective (amended) payload, its status flags from ``Ledger.status``, its outcome from one
replay, and its log line (``projections.narrate``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication
from domain import rulesets
from domain.core.narration import Narrator
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger
from domain.rulesets import narrator_for
from projections.narrate import FactStatus, narrate

log = logging.getLogger(__name__)

__all__ = [
    "FactRecord",
    "campaign_info",
    "changes_between",
    "facts_after",
    "fill",
    "history",
    "history_records",
    "summary",
]


@dataclass
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
    outcome: dict[str, Any] | None  # filled for the facts a response shows (``fill``)
    line: str
    filled: bool = False
    ruleset: Any = None  # the campaign's ruleset (names the purpose of each roll, C0.3)
    # the records shown together (a page): the first outcome or line asked for fills them all
    page: list[FactRecord] | None = field(default=None, repr=False, compare=False)


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
    narrator: Narrator,
    entry: Entry,
    payload: dict[str, Any],
    outcome: dict[str, Any] | None,
    status: list[str],
    orphan: str | None,
    state: Any,
) -> str:
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
        return narrate(narrator, entry.type, payload, outcome, fs, state)
    except Exception:  # a narration bug must not break the history, but it is reported
        log.exception("narrating fact %s (%s) failed", entry.seq, entry.type)
        return _fallback_line(entry, payload, status)


def history(app: ChronicleApplication, campaign_id: UUID) -> list[FactRecord]:
    """Every fact of the campaign in position order (position 1, the creation, included).

    Payloads and statuses only (the outcomes and narrated lines of the facts a response shows
    are added by ``fill``, which folds just that stretch), but it costs the campaign: a filter
    on content needs it; a page by position asks :func:`history_records` for its positions.
    """
    with app.reading(campaign_id) as campaign:
        ledger = campaign.ledger
        orphans = ledger.orphans
        return [_created(campaign, campaign_id)] + [
            _record(campaign_id, ledger, orphans, e) for e in ledger.entries
        ]


def history_records(app: ChronicleApplication, campaign_id: UUID, positions: range) -> list[FactRecord]:
    """The records of these positions only (those that exist), in order: what a page of the
    history costs is its own facts, whatever the campaign's length."""
    if positions.step != 1:
        raise ValueError("history_records reads a stretch of consecutive positions")
    with app.reading(campaign_id) as campaign:
        ledger = campaign.ledger
        orphans = ledger.orphans
        created = [_created(campaign, campaign_id)] if 1 in positions and ledger.last_seq >= 1 else []
        # the page's facts in one read of the store (a page far back is not in memory)
        return created + [
            _record(campaign_id, ledger, orphans, e)
            for e in ledger.entries_between(max(positions.start, 2), positions.stop - 1)
        ]


def _created(campaign: Any, campaign_id: UUID) -> FactRecord:
    created = {"name": campaign.name, "ruleset": campaign.ruleset, "flags": dict(campaign.flags)}
    return FactRecord(
        campaign_id,
        1,
        "CampaignCreated",
        created,
        created,
        dict(campaign.meta),
        campaign.created_on.isoformat(),
        ["active"],
        None,
        None,
        f"Campaign {campaign.name} created ({campaign.ruleset})",
        filled=True,
    )


def _record(campaign_id: UUID, ledger: Ledger, orphans: Any, e: Entry) -> FactRecord:
    return FactRecord(
        campaign_id,
        e.seq,
        e.type,
        ledger.effective_payload(e.seq, e),
        e.payload,
        dict(e.meta),
        e.timestamp,
        ledger.status(e.seq),
        orphans.get(e.seq),
        None,
        "",
        ruleset=ledger.ruleset,
    )


def fill(app: ChronicleApplication, campaign_id: UUID, records: list[FactRecord]) -> None:
    """Give these records their outcomes and narrated lines, folding only the stretch they span."""
    todo = {r.position: r for r in records if not r.filled}
    if not todo:
        return
    with app.reading(campaign_id) as campaign:
        ledger = campaign.ledger
        narrator = narrator_for(ledger.ruleset)
        for e, outcome, orphan, state in ledger.walk(min(todo), max(todo)):
            r = todo.get(e.seq)
            if r is not None:
                r.outcome = outcome
                r.line = _line(ledger, narrator, e, r.payload, outcome, r.status, orphan, state)
                r.filled = True


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
    the table saw just before it and just after it (a correction shows its effect). The walk
    starts from the nearest checkpoint, so catching up costs the facts sent, not the campaign.
    """
    with app.reading(campaign_id) as campaign:
        ledger = campaign.ledger
        start = max(after + 1, ledger.first_seq)
        stop = min(ledger.last_seq, start + limit - 1)
        if start > stop:
            return []
        # What the table saw at a position never changes (later corrections are later facts),
        # so one computation serves every subscriber at the same place in the stream.
        key = (id(app), campaign_id, start, stop)
        with _STREAM_LOCK:
            hit = _STREAM_CACHE.get(key)
            if hit is not None:
                _STREAM_CACHE.move_to_end(key)
                return hit
        out = _facts_after(ledger, start, stop)
        with _STREAM_LOCK:
            _STREAM_CACHE[key] = out
            while len(_STREAM_CACHE) > 256:
                _STREAM_CACHE.popitem(last=False)
        return out


_STREAM_CACHE: OrderedDict[tuple[int, UUID, int, int], list[dict[str, Any]]] = OrderedDict()
_STREAM_LOCK = threading.Lock()


def _facts_after(ledger: Any, start: int, stop: int) -> list[dict[str, Any]]:
    """The facts start..stop as the table saw them, with the changes each made (for the stream).

    Each step folds into the live walk state; a copy-on-write clone taken before the step keeps
    the previous state, so the changes are found by identity and only changed creatures are
    viewed."""
    rules = ledger.ruleset
    out = []
    prev = None
    for e, outcome, orphan, state in ledger.walk(start, stop, RECORDED):
        if prev is None:
            prev = ledger.state_at(start - 1, RECORDED)[0]
        diff = rulesets.diff_views(rules, prev, state)
        out.append(
            {
                "position": e.seq,
                "type": e.type,
                "payload": e.payload,
                "meta": dict(e.meta),
                "recorded_at": e.timestamp,
                "outcome": outcome,
                "orphan_reason": orphan,
                "changes": [
                    {
                        "creature_id": cid,
                        "fields": [{"field": k, "before": v[0], "after": v[1]} for k, v in fields.items()],
                    }
                    for cid, fields in diff.items()
                ],
            }
        )
        prev = state.clone()
    return out


def latest_position(app: ChronicleApplication, campaign_id: UUID) -> int:
    return app.ledger(campaign_id).last_seq


__all__ += ["CORRECTED", "RECORDED", "latest_position"]
