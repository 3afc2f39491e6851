"""The in-process broadcaster that wakes subscriptions when a fact is saved.

It carries no data: a woken subscription reads the facts after its last position from the
ledger (fast-forwarded from the store), so nothing is missed or sent twice. Facts written by
another process arrive through the subscription's periodic poll.

Subscriptions wait on the server's event loop, while mutations run on worker threads
(``api.graphql.schema``): ``notify`` may be called from any thread and wakes each waiter on
its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from uuid import UUID


class Broadcaster:
    def __init__(self) -> None:
        self._waiters: dict[UUID, dict[asyncio.Event, asyncio.AbstractEventLoop]] = defaultdict(dict)
        self._lock = threading.Lock()

    def subscribe(self, campaign_id: UUID) -> asyncio.Event:
        """Call on the event loop the subscription waits on."""
        event = asyncio.Event()
        with self._lock:
            self._waiters[campaign_id][event] = asyncio.get_running_loop()
        return event

    def unsubscribe(self, campaign_id: UUID, event: asyncio.Event) -> None:
        with self._lock:
            waiters = self._waiters.get(campaign_id)
            if waiters is not None:
                waiters.pop(event, None)
                if not waiters:
                    self._waiters.pop(campaign_id, None)

    def notify(self, campaign_id: UUID) -> None:
        """Call after a save, from any thread."""
        with self._lock:
            waiters = list(self._waiters.get(campaign_id, {}).items())
        try:
            here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        for event, loop in waiters:
            if loop is here:
                event.set()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(event.set)
