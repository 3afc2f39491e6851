"""Keeping the read models current: :class:`Follower`, :func:`rebuild`, :func:`wait_for`.

The follower reads the store's notification log (``recorder.select_notifications``) from
the lowest tracking position, projects a batch (:mod:`projections.projector`) and commits
the batch's rows with the tracking moves in one transaction (:mod:`projections.storage`).
It catches up in full batches back to back, then polls every ``idle_interval`` seconds.
On PostgreSQL it also LISTENs on the events table's channel, so a new event wakes it at
once; the poll stays the source of truth (a lost LISTEN connection costs latency, never
events). Any error is logged; the follower forgets its in-memory ledgers, waits with
exponential backoff, reconnects and resumes from the stored tracking positions. It only
stops when asked (:meth:`Follower.stop`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql

from projections.projector import PROJECTIONS, Projector, Source
from projections.storage import PostgresTarget, ViewStore, connect_postgres

__all__ = ["Follower", "RebuildResult", "rebuild", "wait_for"]

logger = logging.getLogger("chronicle.projections")

DEFAULT_BATCH = 500


class Follower:
    """Catches up, then follows the notification log; never dies of a database error.

    ``source`` is the application to read the log through: either one the caller owns
    (the API's, in process) or a factory, called again after errors to reconnect.
    ``views`` likewise. ``listen``: a PostgreSQL database whose events channel wakes the
    follower up early (``None``: poll only).
    """

    def __init__(
        self,
        source: Source | Callable[[], Source],
        views: ViewStore | Callable[[], ViewStore],
        *,
        batch_size: int = DEFAULT_BATCH,
        idle_interval: float = 0.05,
        max_backoff: float = 5.0,
        listen: PostgresTarget | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.idle_interval = idle_interval
        self.max_backoff = max_backoff
        self.listen = listen
        self._open_app = source if callable(source) else None
        self._app: Any = None if callable(source) else source
        self._owns_app = callable(source)
        self._open_views = views if callable(views) else None
        self._views: ViewStore | None = None if callable(views) else views
        self._owns_views = callable(views)
        self._projector: Projector | None = None
        self._positions: dict[str, int] | None = None
        self._listener: psycopg.Connection[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0  # database errors survived (for tests and health reporting)
        self.events = 0  # notifications projected since start

    # ---------------------------------------------------------------- plumbing
    @property
    def application(self) -> Any:
        if self._app is None:
            assert self._open_app is not None
            self._app = self._open_app()
        return self._app

    @property
    def views(self) -> ViewStore:
        if self._views is None:
            assert self._open_views is not None
            self._views = self._open_views()
        return self._views

    @property
    def projector(self) -> Projector:
        if self._projector is None:
            self._projector = Projector(self.application)
        return self._projector

    def _disconnect(self) -> None:
        """Forget everything in memory and drop the connections this follower owns."""
        self._positions = None
        if self._projector is not None:
            self._projector.reset()
        for close in (self._close_listener, self._close_views, self._close_app):
            try:
                close()
            except Exception:  # closing a broken connection may fail too; it is being dropped
                logger.debug("error while closing", exc_info=True)

    def _close_app(self) -> None:
        if self._owns_app and self._app is not None:
            app, self._app, self._projector = self._app, None, None
            app.close()

    def _close_views(self) -> None:
        if self._owns_views and self._views is not None:
            views, self._views = self._views, None
            views.close()

    def _close_listener(self) -> None:
        if self._listener is not None:
            listener, self._listener = self._listener, None
            listener.close()

    def close(self) -> None:
        self.stop()
        self._disconnect()

    # -------------------------------------------------------------------- steps
    def positions(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = self.views.tracking()
            self.projector.reset()  # in-memory ledgers must match the position we read from
        return self._positions

    def step(self, limit: int | None = None) -> int:
        """Project one batch; return how many notifications it read (0: nothing new)."""
        positions = self.positions()
        start = min(positions.values())
        notifications = self.application.recorder.select_notifications(
            start, limit or self.batch_size, inclusive_of_start=False
        )
        if not notifications:
            return 0
        try:
            batch = self.projector.project(notifications, positions)
            written = self.views.write(batch)
        except BaseException:
            self._positions = None  # the ledgers may be ahead of the views now
            raise
        if not written:
            logger.info("tracking moved under this follower (another worker or a rebuild): resyncing")
            self._positions = None
            return len(notifications)
        for name, (_, new) in batch.tracking.items():
            positions[name] = new
        self.events += batch.events
        return len(notifications)

    def catch_up(self, progress: Callable[[int], None] | None = None) -> int:
        """Project batches until the log is exhausted; return the notifications read."""
        total = 0
        while True:
            n = self.step()
            if n == 0:
                return total
            total += n
            if progress is not None:
                progress(min(self.positions().values()))

    # --------------------------------------------------------------------- loop
    def run(self) -> None:
        """Follow until :meth:`stop`. Errors are logged and survived."""
        backoff = 0.0
        while not self._stop.is_set():
            try:
                n = self.step()
                backoff = 0.0
                if n < self.batch_size:
                    self._idle()
            except Exception as exc:
                self.errors += 1
                backoff = min(self.max_backoff, max(0.05, backoff * 2))
                logger.warning(
                    "projection follower: %s: %s; retrying in %.2fs",
                    type(exc).__name__,
                    " ".join(str(exc).split()),
                    backoff,
                )
                self._disconnect()
                self._stop.wait(backoff)
        self._disconnect()

    def _idle(self) -> None:
        """Wait for the next poll, or less if PostgreSQL notifies us of a new event."""
        if self.listen is None:
            self._stop.wait(self.idle_interval)
            return
        try:
            listener = self._listen()
            for _ in listener.notifies(timeout=self.idle_interval, stop_after=1):
                break
        except psycopg.Error as exc:
            logger.info("projection follower: LISTEN connection lost (%s); polling", exc)
            self._listener = None
            self._stop.wait(self.idle_interval)

    def _listen(self) -> psycopg.Connection[Any]:
        if self._listener is None or self._listener.closed or self._listener.broken:
            assert self.listen is not None
            conn = connect_postgres(self.listen, "chronicle-listen")
            channel = getattr(self.application.recorder, "channel_name", None)
            if channel:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            self._listener = conn
        return self._listener

    def start(self, name: str = "chronicle-projections") -> threading.Thread:
        """Run in a daemon thread."""
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=name, daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
            self._thread = None

    @property
    def stopping(self) -> threading.Event:
        return self._stop


@dataclass(frozen=True)
class RebuildResult:
    projections: tuple[str, ...]
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds else float("inf")


def rebuild(
    source: Source | Callable[[], Source],
    views: ViewStore | Callable[[], ViewStore],
    projections: Iterable[str] = PROJECTIONS,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> RebuildResult:
    """Drop the given projections and rebuild them from the log, ``batch_size`` events per
    transaction. Other projections keep their rows and are only brought up to date.

    Each batch commits with its tracking position, so an interrupted rebuild is resumed
    by the next follower (or rebuild) where it stopped. ``progress(done, total)`` is
    called after each batch, in notification ids.
    """
    wanted = set(projections)
    names = tuple(p for p in PROJECTIONS if p in wanted)
    unknown = wanted - set(PROJECTIONS)
    if unknown:
        raise ValueError(f"unknown projection(s) {', '.join(sorted(unknown))}; use {', '.join(PROJECTIONS)}")
    follower = Follower(source, views, batch_size=batch_size)
    try:
        follower.views.reset(names)
        total = follower.application.recorder.max_notification_id() or 0
        began = time.perf_counter()
        events = follower.catch_up(None if progress is None else (lambda done: progress(done, total)))
        return RebuildResult(names, events, time.perf_counter() - began)
    finally:
        follower.close()


def wait_for(views: ViewStore, position: int, timeout: float = 5.0, interval: float = 0.005) -> bool:
    """Wait until every projection includes notification ``position``; False on timeout.

    Checks at once, then every ``interval`` seconds (no 100 ms first sleep). Note that the
    API's mutations return the aggregate's state directly, so a client rarely needs this.
    """
    deadline = time.monotonic() + timeout
    while True:
        if views.tracking_position() >= position:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
