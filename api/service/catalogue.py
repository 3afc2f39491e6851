"""Every campaign in the store, for the operator (``chronicle campaigns``).

Read from the event store itself, not from a read model, so it is right on any store with or
without a worker: the campaigns are found by their creation events in the notification log
(filtered by topic in the database, a page at a time), and each one's last event gives its
number of facts and its last activity. Loading a campaign (folding its facts) is never needed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from api.service.application import IMPORT_EXPECTS, ChronicleApplication
from domain.campaign import Campaign

__all__ = ["CampaignListing", "list_campaigns"]

PAGE = 500
CREATED = (Campaign.Started.TOPIC, Campaign.Created.TOPIC)


@dataclass(frozen=True)
class CampaignListing:
    campaign_id: UUID
    name: str
    ruleset: str
    facts: int  # facts stored (corrections included), i.e. the position minus the creation
    last_activity: datetime  # when the last fact (or the creation) was stored
    expected: int | None = None  # an import that stopped short: how many facts it was to hold

    @property
    def complete(self) -> bool:
        return self.expected is None or self.facts >= self.expected


def _created(app: ChronicleApplication) -> Iterator[Any]:
    start = 1
    while True:
        page = app.recorder.select_notifications(start, PAGE, topics=CREATED)
        for notification in page:
            yield app.mapper.to_domain_event(notification)
        if len(page) < PAGE:
            return
        start = page[-1].id + 1


def list_campaigns(app: ChronicleApplication) -> list[CampaignListing]:
    """Every campaign in the store, the most recently active first."""
    found = []
    for created in _created(app):
        last = app.recorder.select_events(created.originator_id, desc=True, limit=1)[0]
        latest = created if last.originator_version == created.originator_version else None
        if latest is None:
            latest = app.mapper.to_domain_event(last)
        expects = (getattr(created, "meta", None) or {}).get(IMPORT_EXPECTS)
        found.append(
            CampaignListing(
                campaign_id=created.originator_id,
                name=getattr(created, "name", "?"),
                ruleset=getattr(created, "ruleset", "?"),
                facts=last.originator_version - created.originator_version,
                last_activity=latest.timestamp,
                expected=None if expects is None else int(expects),
            )
        )
    found.sort(key=lambda c: c.last_activity, reverse=True)
    return found
