"""The in-process broadcaster that wakes subscriptions when a fact is saved.

It carries no data: a woken subscription reads the facts after its last position from the
ledger (fast-forwarded from the store), so nothing is missed or sent twice. Facts written by
another process arrive through the subscription's periodic poll.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from uuid import UUID


class Broadcaster:
    def __init__(self) -> None:
        self._waiters: dict[UUID, set[asyncio.Event]] = defaultdict(set)

    def subscribe(self, campaign_id: UUID) -> asyncio.Event:
        event = asyncio.Event()
        self._waiters[campaign_id].add(event)
        return event

    def unsubscribe(self, campaign_id: UUID, event: asyncio.Event) -> None:
        waiters = self._waiters.get(campaign_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                self._waiters.pop(campaign_id, None)

    def notify(self, campaign_id: UUID) -> None:
        """Call on the event loop after a save."""
        for event in list(self._waiters.get(campaign_id, ())):
            event.set()
