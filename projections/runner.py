"""Keeping the read models current: :class:`Follower`, :func:`rebuild`, :func:`wait_for`.

The follower reads the store's notification log (``recorder.select_notifications``) from
the lowest tracking position, projects a batch (:mod:`projections.projector`) and commits
the batch's rows with the tracking moves in one transaction (:mod:`projections.storage`).
It catches up in full batches back to back, then polls every ``idle_interval`` seconds.
On PostgreSQL it LISTENs on the events table's channel instead: it sleeps until an event is
notified (or ``listen_poll`` seconds pass: the poll stays the source of truth, so a lost
notification or LISTEN connection costs latency, never events), then gathers what the writers
append until ``idle_interval`` after its last step began, and projects it in one batch. A live
worker so pays its per-batch costs (a transaction, the tracking) once per ``idle_interval`` at
most, not once per event, and nothing while no one writes. Any error is logged; the follower
forgets its in-memory ledgers, waits with exponential backoff, reconnects and resumes from the
stored tracking positions. It only stops when asked (:meth:`Follower.stop`).

A campaign whose facts cannot be projected or whose rows cannot be written is quarantined
(``view_quarantine``, committed with the batch) and logged with its campaign and position;
the follower keeps serving every other campaign and skips that campaign's later facts until
:func:`rebuild_campaign` (``chronicle rebuild --campaign``) re-derives its rows and lifts it.
"""

from __future__ import annotations

import concurrent.futures
import gc
import logging
import queue
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import psycopg
from psycopg import sql

from domain.campaign import Campaign
from projections.projector import PROJECTIONS, Batch, Failure, Projector, Source, describe
from projections.storage import UNAVAILABLE, PostgresTarget, ViewStore, connect_postgres

__all__ = [
    "CampaignRebuildResult",
    "Follower",
    "RebuildFailed",
    "RebuildResult",
    "rebuild",
    "rebuild_campaign",
    "wait_for",
]

logger = logging.getLogger("chronicle.projections")

DEFAULT_BATCH = 500
# Notifications a follower reads and folds at once when the log has that many pending (a
# catch-up, a rebuild): committed ``batch_size`` at a time, but folded in one go, so a
# correction that reaches far back refolds once per look-ahead, not once per batch. Their rows
# are held until committed: about 2 MB per 1,000 (a 100k rebuild on SQLite: 608 MB peak RSS at
# 100,000, 476 MB at 20,000, which folded 2.9 facts per fact instead of 1.0 and took 2x the CPU),
# except in an overlapped step of one campaign, which streams them and reads on (Follower).
DEFAULT_LOOKAHEAD = 100_000
# A follower in a server's process (SQLite) gives way to the server's commands (``give_way``):
# each pause waits at most GIVE_WAY_S for them, and a step gives way PATIENCE_S in all at most,
# then goes on without pausing (a stream of commands delays the read models, never starves them).
GIVE_WAY_S = 5.0
PATIENCE_S = 120.0
# The interpreter's switch interval while a writer thread commits beside the fold (the default is
# 5 ms): each of the writer's round trips to the database waits for the fold to yield the GIL.
SWITCH_INTERVAL = 0.0005
# A listening follower's batching window after a step of ``s`` seconds: at least its
# ``idle_interval``, at least WINDOW_PER_STEP * s, at most ``max_window`` -- a step that costs
# much (many campaigns, each refolded and viewed once a step however few facts it has) is
# followed by a wider window, so the worker steps at most a fifth of the time while it keeps up
WINDOW_PER_STEP = 4.0
# Notifications read per query by a follower that overlaps (the first page; the rest of a
# look-ahead is read a page ahead of the fold, on a thread)
READ_PAGE = 10_000


class Follower:
    """Catches up, then follows the notification log; never dies of a database error.

    ``source`` is the application to read the log through: either one the caller owns
    (the API's, in process) or a factory, called again after errors to reconnect.
    ``views`` likewise. ``listen``: a PostgreSQL database whose events channel wakes the
    follower up (``None``: poll every ``idle_interval`` seconds). Listening, it polls every
    ``listen_poll`` seconds when nothing is notified, and steps at most every ``idle_interval``
    seconds: what is written meanwhile waits for the next step (the batching window). A step
    that took long widens the next window to :data:`WINDOW_PER_STEP` times its duration, at
    most ``max_window`` (:meth:`window`): a step's cost is mostly per campaign it touches (a
    refold, the views of what changed, whatever the facts), so with many active tables a wider
    window projects more facts per campaign for the same cost (bench P5, 100 tables).

    Each step takes whatever is pending, up to ``lookahead`` notifications (at least
    ``batch_size``), folds it at once and commits it ``batch_size`` notifications per
    transaction (:meth:`Batch.split`): a live follower takes every fact written since its last
    step in one batch; a catch-up folds ``lookahead`` facts per refold. An overlapped step
    (``overlap``) of one campaign with ``read_on`` (a rebuild's) reads on past ``lookahead`` to
    the log's end while every notification it reads is of that campaign: its rows stream to the
    writer and only the notification ids are kept, so the look-ahead bounds no memory there, and
    a step boundary in a long campaign costs a refold from the earliest fact the next step's corrections reach
    (a ruling overturned sessions later: the generated 100k campaign folded in steps of 34,000
    refolded 98,000 facts more, 15.2 vs 9.3 CPU-s).

    ``pause_gc``: the cyclic garbage collector waits while a step projects and writes, and
    runs between steps -- for a process of its own (``chronicle worker``, ``chronicle
    rebuild``), not one that serves requests meanwhile. A step keeps what it folds and the rows
    it has not written yet, and every collection of the oldest generation walks all of it
    (and the campaigns held): rebuilding the generated 100k campaign spent 12 such collections
    and about half its CPU in the collector (21.3 vs 11.7 CPU-s, the same 667 MB peak).

    ``give_way(timeout) -> seconds waited``: for a follower in a server's process (SQLite), the
    server's :meth:`~api.service.application.ChronicleApplication.give_way`. A step pauses every
    ``PAUSE_EVERY`` facts it refolds or derives rows of (``Ledger.refold``'s ``pause``), and
    between the transactions it commits, and waits there while the server runs a command (and
    briefly after): at most ``give_way_s`` per pause and ``patience_s`` per step, then it goes
    on. A far-reaching correction's refold of the projector's own copy otherwise ran beside the
    next correction's on the request path, in one interpreter (bench P3 on SQLite: early revokes
    1.6-2.4x a full fold). A step of fewer facts than ``PAUSE_EVERY`` never pauses.

    ``digest_new``: see :class:`~projections.projector.Projector` (False for :func:`rebuild`).

    ``read_on`` (:func:`rebuild`'s follower): a step of one campaign reads on past the look-ahead
    (see :func:`_read_ahead`). A live worker keeps to the look-ahead: its steps end, so its
    creature and encounter rows commit and a stop is answered between them.

    ``overlap``: a step of more than ``batch_size`` notifications commits its transactions on a
    thread of its own (:class:`_Writer`) while the step folds on: the projector hands out each
    ``batch_size`` part as soon as the fold has passed it (:meth:`Projector.project` with
    ``emit``), so the database writes one part while the next is folded (on PostgreSQL, in
    the server's process: the other core). A step of one campaign so commits its history and
    log rows part by part, those projections' tracking with them, and the creature and encounter
    rows with their tracking in its last transaction (:meth:`Projector.project`); a step of
    several campaigns commits the parts :meth:`Batch.split` cuts, in order, on the writer. A
    failed or refused write stops the writer (nothing after it is written) and the step raises
    the error or resyncs when the fold is done. For a
    process of its own (``chronicle rebuild``, ``chronicle worker``), not one that gives way.
    Such a step also reads the log in pages of ``read_page`` (at least ``batch_size`` + 1), the
    next page on a thread while the projector decodes and applies the one before.
    """

    def __init__(
        self,
        source: Source | Callable[[], Source],
        views: ViewStore | Callable[[], ViewStore],
        *,
        batch_size: int = DEFAULT_BATCH,
        lookahead: int = DEFAULT_LOOKAHEAD,
        idle_interval: float = 0.05,
        max_window: float = 0.25,
        listen_poll: float = 1.0,
        max_backoff: float = 5.0,
        listen: PostgresTarget | None = None,
        on_quarantine: Callable[[Failure], None] | None = None,
        pause_gc: bool = False,
        give_way: Callable[[float], float] | None = None,
        give_way_s: float = GIVE_WAY_S,
        patience_s: float = PATIENCE_S,
        overlap: bool = False,
        read_page: int = READ_PAGE,
        digest_new: bool = True,
        read_on: bool = False,
    ) -> None:
        self.batch_size = batch_size
        self.digest_new = digest_new  # see Projector
        self.read_on = read_on
        self.overlap = overlap
        self.read_page = read_page
        self.pause_gc = pause_gc
        self.give_way = give_way
        self.give_way_s = give_way_s
        self.patience_s = patience_s
        self._patience_left = patience_s  # of the step in progress
        self.lookahead = max(batch_size, lookahead)
        self.idle_interval = idle_interval
        self.max_window = max(idle_interval, max_window)
        self.listen_poll = max(idle_interval, listen_poll)
        self.max_backoff = max_backoff
        self.listen = listen
        self.on_quarantine = on_quarantine
        self._open_app = source if callable(source) else None
        self._app: Any = None if callable(source) else source
        self._owns_app = callable(source)
        self._open_views = views if callable(views) else None
        self._views: ViewStore | None = None if callable(views) else views
        self._owns_views = callable(views)
        self._projector: Projector | None = None
        self._positions: dict[str, int] | None = None
        self._quarantined: frozenset[str] = frozenset()
        self._listener: psycopg.Connection[Any] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors = 0  # database errors survived (for tests and health reporting)
        self.events = 0  # notifications projected since start
        self.quarantined = 0  # campaigns this follower quarantined since start
        self.paused_s = 0.0  # time spent giving way to commands (give_way), in all
        self.pauses = 0  # pauses that waited

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
            self._projector = Projector(
                self.application,
                pause=self._pause if self.give_way is not None else None,
                digest_new=self.digest_new,
            )
        return self._projector

    def _pause(self) -> None:
        """A pause point of a step: give way to the commands in progress (``give_way``), in
        slices (a stop is seen within half a second), within the pause's and the step's budgets."""
        give_way = self.give_way
        if give_way is None:
            return
        left = min(self.give_way_s, self._patience_left)
        waited = 0.0
        while left > 0 and not self._stop.is_set():
            w = give_way(min(left, 0.5))
            if w <= 0:
                break
            waited += w
            left -= w
        if waited:
            self.pauses += 1
            self.paused_s += waited
            self._patience_left -= waited

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
            self._quarantined = self.views.quarantined_ids()
            self.projector.reset()  # in-memory ledgers must match the position we read from
        return self._positions

    def step(self, limit: int | None = None, committed: Callable[[int], None] | None = None) -> int:
        """Project what is pending, up to ``limit`` (default ``lookahead``) notifications, in
        transactions of ``batch_size``; return how many notifications it read (0: nothing new).
        ``committed(position)`` is called after each transaction with the lowest tracking position."""
        self._patience_left = self.patience_s
        with self._collector_paused():
            return self._step(limit, committed)

    @contextmanager
    def _collector_paused(self) -> Iterator[None]:
        if not self.pause_gc or not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.enable()

    def _step(self, limit: int | None, committed: Callable[[int], None] | None) -> int:
        positions = self.positions()
        start = min(positions.values())
        want = limit or self.lookahead
        if self.overlap:  # the first page; a full one is followed by the rest, read ahead
            page = max(self.read_page, self.batch_size + 1)
            first = self.application.recorder.select_notifications(
                start, min(want, page), inclusive_of_start=False
            )
            if len(first) > self.batch_size:
                # a step of one campaign reads on past the look-ahead (``limit`` not given): see above
                sole = limit is None and self.read_on
                more = len(first) == page and (want > page or sole)
                return self._step_overlapped(first, want if more else 0, positions, committed, sole)
            notifications = first
        else:
            notifications = self.application.recorder.select_notifications(
                start, want, inclusive_of_start=False
            )
        if not notifications:
            return 0
        try:
            batch = self.projector.project(notifications, positions, self._quarantined)
            for k, part in enumerate(batch.split([n.id for n in notifications], self.batch_size)):
                if k:
                    self._pause()
                if not self.views.write(part):
                    logger.info(
                        "tracking or quarantine changed under this follower (another worker, a "
                        "rebuild or a repair): resyncing"
                    )
                    self._positions = None
                    return len(notifications)
                for name, (_, new) in part.tracking.items():
                    positions[name] = new
                self.events += part.events
                if committed is not None:
                    committed(min(positions.values()))
                if part.failed:
                    self._quarantined = self._quarantined | set(part.failed)
                    for failure in part.failed.values():
                        self._report(failure)
        except BaseException:
            self._positions = None  # the ledgers may be ahead of the views now
            raise
        return len(notifications)

    def _step_overlapped(
        self,
        first: list[Any],
        want: int,
        positions: dict[str, int],
        committed: Callable[[int], None] | None,
        sole: bool = False,
    ) -> int:
        """:meth:`_step` with its transactions committed by a :class:`_Writer` while it folds;
        ``first``: the first page of notifications, followed (``want``: up to that many in all,
        0: none; ``sole``: and on, while every notification read is of one campaign) by the
        next pages, each read on a thread while the one before is applied."""
        ids: array[int] = array("q")  # the notification ids read (the notifications are not kept)
        pages = _read_ahead(self.application.recorder, first, want, sole)
        writer = _Writer(self.views, dict(positions), committed)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            try:
                read = (n for page in pages for n in _kept(page, ids))
                batch = self.projector.project(
                    read, dict(positions), self._quarantined, emit=writer.put, size=self.batch_size
                )
                for part in batch.split(ids, self.batch_size):
                    writer.put(part)
            finally:
                pages.close()  # (a page being read is waited for)
                writer.finish()
                sys.setswitchinterval(interval)
            for part in writer.written:
                for name, (_, new) in part.tracking.items():
                    positions[name] = new
                self.events += part.events
                if part.failed:
                    self._quarantined = self._quarantined | set(part.failed)
                    for failure in part.failed.values():
                        self._report(failure)
            if writer.error is not None:
                raise writer.error
            if writer.stale:
                logger.info(
                    "tracking or quarantine changed under this follower (another worker, a "
                    "rebuild or a repair): resyncing"
                )
                self._positions = None
        except BaseException as exc:
            self._positions = None  # the ledgers may be ahead of the views now
            if writer.error is not None and writer.error is not exc:
                # the fold failed too: its error is raised, the writer's is not lost
                logger.error("writing the read models failed while the fold failed: %r", writer.error)
            raise
        return len(ids)

    def _report(self, failure: Failure) -> None:
        self.quarantined += 1
        try:
            self.projector.forget(failure.campaign_id)
        except ValueError:
            pass
        logger.error(
            "read models of campaign %s stopped at position %s (notification %s): %s; the other "
            "campaigns go on. Repair with: chronicle rebuild --campaign %s",
            failure.campaign_id,
            failure.position,
            failure.notification_id,
            failure.error,
            failure.campaign_id,
            extra={
                "campaign_id": failure.campaign_id,
                "position": failure.position,
                "notification_id": failure.notification_id,
                "error": failure.error,
            },
        )
        if self.on_quarantine is not None:
            self.on_quarantine(failure)

    def catch_up(self, progress: Callable[[int], None] | None = None) -> int:
        """Project batches until the log is exhausted; return the notifications read."""
        total = 0
        while True:
            n = self.step(committed=progress)
            if n == 0:
                return total
            total += n

    # --------------------------------------------------------------------- loop
    def run(self) -> None:
        """Follow until :meth:`stop`. Errors are logged and survived."""
        backoff = 0.0
        while not self._stop.is_set():
            try:
                self._listening()  # before the step: nothing committed after it goes unnotified
                began = time.monotonic()
                n = self.step()
                backoff = 0.0
                if n < self.lookahead:
                    self._idle(began, self.window(time.monotonic() - began))
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

    def _listening(self) -> psycopg.Connection[Any] | None:
        """The LISTEN connection (opened if needed); None when not listening or it cannot be had."""
        if self.listen is None:
            return None
        try:
            return self._listen()
        except psycopg.Error as exc:
            logger.info("projection follower: LISTEN connection lost (%s); polling", exc)
            self._listener = None
            return None

    def window(self, spent: float) -> float:
        """The batching window after a step of ``spent`` seconds (:data:`WINDOW_PER_STEP`):
        ``idle_interval`` after a cheap step, wider after a costly one, at most ``max_window``."""
        return min(self.max_window, max(self.idle_interval, WINDOW_PER_STEP * spent))

    def _idle(self, began: float, window: float | None = None) -> None:
        """Wait for the next step: polling, ``idle_interval`` (at least: until ``window`` after
        ``began``); listening, until an event is notified (at most ``listen_poll``), then until
        ``window`` (default ``idle_interval``) after ``began`` (the last step's start), so what
        is written meanwhile is projected in one batch. The notifications received by then are
        consumed: the next step reads their events."""
        window = self.idle_interval if window is None else window
        listener = self._listening()
        if listener is None:
            self._stop.wait(max(self.idle_interval, began + window - time.monotonic()))
            return
        try:
            deadline = time.monotonic() + self.listen_poll
            woken = False
            while not woken and not self._stop.is_set():  # in slices: a stop is seen within 0.5 s
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                for _ in listener.notifies(timeout=min(left, 0.5), stop_after=1):
                    woken = True
            rest = began + window - time.monotonic()
            if rest > 0:
                self._stop.wait(rest)
            # already here: the next step reads their events (drained from libpq directly: a
            # writer's every commit notifies, and psycopg's notifies() makes a Notify of each)
            pgconn = listener.pgconn
            pgconn.consume_input()
            while pgconn.notifies() is not None:
                pass
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


def _kept(page: list[Any], ids: array[int]) -> list[Any]:
    ids.extend([n.id for n in page])
    return page


def _read_ahead(recorder: Any, first: list[Any], want: int, sole: bool = False) -> Iterator[list[Any]]:
    """``first``, then (``want`` > 0) the notifications after it, ``len(first)`` a page, up to
    ``want`` in all -- and on past ``want`` to the log's end (``sole``) while every notification
    read is of ``first``'s campaign: each page is read on a thread while the caller applies the
    one before (on PostgreSQL the server reads and sends the next page meanwhile)."""
    yield first
    size = len(first)
    read, last = size, first[-1].id
    if not want:
        return
    one = first[0].originator_id
    sole = sole and _all_of(first, one)
    if read >= want and not sole:
        return
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="chronicle-read-ahead") as ahead:

        def fetch(after: int) -> Any:
            n = size if sole else min(size, want - read)
            return ahead.submit(recorder.select_notifications, after, n, inclusive_of_start=False)

        pending = fetch(last)
        while pending is not None:
            page = pending.result()
            if sole and not _all_of(page, one):
                # the step stays one campaign's past the look-ahead: of a page that mixes in
                # another campaign, only what is within the look-ahead or of the campaign
                # before the first other notification, then the step ends (it would hold all
                # it read on as one batch otherwise)
                cut = next(k for k, n in enumerate(page) if n.originator_id != one)
                page = page[: max(cut, want - read)]
                if page:
                    yield page
                return
            read += len(page)
            pending = fetch(page[-1].id) if len(page) == size and (read < want or sole) else None
            if page:
                yield page


def _all_of(page: list[Any], campaign: Any) -> bool:
    """Whether every notification of ``page`` is of ``campaign`` (its originator)."""
    return all(n.originator_id == campaign for n in page)


WRITER_QUEUE = 4  # parts a step's writer holds queued at most


class _Writer:
    """Commits a step's batches (:meth:`ViewStore.write`), in the order given, on a thread of its
    own (:attr:`Follower.overlap`). After a write that fails (:attr:`error`) or is refused
    (:attr:`stale`: the tracking or the quarantines changed) it writes nothing more; the
    batches it committed are in :attr:`written`. ``committed(position)`` is called (on its
    thread) after each commit with the lowest tracking position."""

    def __init__(
        self, views: ViewStore, positions: dict[str, int], committed: Callable[[int], None] | None
    ) -> None:
        self.views = views
        self.positions = positions
        self.committed = committed
        self.written: list[Batch] = []
        self.error: BaseException | None = None
        self.stale = False
        # bounded: a fold that runs ahead of the database waits here instead of holding every
        # part it made (a step that reads on has no length); ``_run`` drains after any failure
        self._queue: queue.Queue[Batch | None] = queue.Queue(maxsize=WRITER_QUEUE)
        self._thread = threading.Thread(target=self._run, name="chronicle-views-writer", daemon=True)
        self._thread.start()

    def put(self, batch: Batch) -> None:
        """Queue a batch (waits while :data:`WRITER_QUEUE` are queued; never raises)."""
        self._queue.put(batch)

    def finish(self) -> None:
        """Wait until every batch queued is written (or skipped after a failure)."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            if self.error is not None or self.stale:
                continue  # the step fails or resyncs: nothing after a failed write commits
            try:
                if not self.views.write(batch):
                    self.stale = True
                    continue
                # what the step needs of it, not its rows (a catch-up's rows would all be held)
                self.written.append(Batch(tracking=batch.tracking, events=batch.events, failed=batch.failed))
                for name, (_, new) in batch.tracking.items():
                    self.positions[name] = new
                if self.committed is not None:
                    self.committed(min(self.positions.values()))
            except BaseException as exc:  # handed to the step, which raises it
                self.error = exc


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
    lookahead: int = DEFAULT_LOOKAHEAD,
    progress: Callable[[int, int], None] | None = None,
    pause_gc: bool = False,
    overlap: bool = True,
) -> RebuildResult:
    """Drop the given projections and rebuild them from the log, ``batch_size`` events per
    transaction. Other projections keep their rows and are only brought up to date.
    ``pause_gc``: see :class:`Follower` (a process of its own: ``chronicle rebuild``);
    ``overlap``: the transactions are committed while the fold goes on (:class:`Follower`).

    Each batch commits with its tracking position, so an interrupted rebuild is resumed
    by the next follower (or rebuild) where it stopped. ``progress(done, total)`` is
    called after each batch, in notification ids.
    """
    wanted = set(projections)
    names = tuple(p for p in PROJECTIONS if p in wanted)
    unknown = wanted - set(PROJECTIONS)
    if unknown:
        raise ValueError(f"unknown projection(s) {', '.join(sorted(unknown))}; use {', '.join(PROJECTIONS)}")
    # (a rebuild folds each fact once, unless a correction reaches back across its steps: the
    # rows of new positions are written without their digests, which only a later refold reads)
    follower = Follower(
        source,
        views,
        batch_size=batch_size,
        lookahead=lookahead,
        pause_gc=pause_gc,
        overlap=overlap,
        digest_new=False,
        read_on=True,
    )
    try:
        follower.views.reset(names)
        total = follower.application.recorder.max_notification_id() or 0
        began = time.perf_counter()
        events = follower.catch_up(None if progress is None else (lambda done: progress(done, total)))
        return RebuildResult(names, events, time.perf_counter() - began)
    finally:
        follower.close()


class RebuildFailed(Exception):
    """The campaign's facts still cannot be projected; it stays quarantined with this failure."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(
            f"campaign {failure.campaign_id} still fails at position {failure.position}: {failure.error}"
        )
        self.failure = failure


@dataclass(frozen=True)
class CampaignRebuildResult:
    campaign_id: str
    facts: int  # events of the campaign projected
    seconds: float


def rebuild_campaign(
    source: Source | Callable[[], Source],
    views: ViewStore | Callable[[], ViewStore],
    campaign_id: UUID | str,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> CampaignRebuildResult:
    """Re-derive one campaign's rows from the log and lift its quarantine.

    1. The campaign is quarantined (if it is not already) and all its rows are deleted, in one
       transaction: from then on no follower writes them.
    2. The log is read up to its head, and the campaign's events are projected and written
       ``batch_size`` notifications at a time (the followers keep serving the other campaigns).
    3. Holding the tracking rows (followers wait), the rest of the campaign's events up to the
       furthest tracking position are projected and written and the quarantine is lifted, in
       one transaction; a follower that computed a batch without the campaign notices the
       change and resyncs, so it picks the campaign up from its tracking position.

    If a fact still fails, the campaign stays quarantined with the new reason (rows up to that
    fact are in place) and :class:`RebuildFailed` is raised. ``ValueError``: no such campaign.
    """
    cid = UUID(str(campaign_id))
    key = str(cid)
    owner = Follower(source, views, batch_size=batch_size)
    try:
        app, store = owner.application, owner.views
        first = app.recorder.select_events(cid, limit=1)
        if not first or first[0].topic != Campaign.Started.TOPIC:
            raise ValueError(f"no campaign {key} in the store")
        store.begin_campaign_rebuild(key, "being rebuilt (chronicle rebuild --campaign)")
        projector = Projector(app)
        began = time.perf_counter()
        read = 0
        facts = 0
        head = app.recorder.max_notification_id() or 0
        everything = dict.fromkeys(PROJECTIONS, 0)

        def project_until(stop: int, write: Callable[[Batch], None]) -> None:
            nonlocal read, facts
            while read < stop:
                page = app.recorder.select_notifications(
                    read, batch_size, stop=stop, inclusive_of_start=False
                )
                if not page:
                    return
                read = page[-1].id
                mine = [n for n in page if n.originator_id == cid]
                if mine:
                    batch = projector.project(mine, everything)
                    if batch.failed:
                        raise RebuildFailed(batch.failed[key])
                    try:
                        write(batch)
                    except UNAVAILABLE:
                        raise
                    except Exception as exc:
                        position, nid = batch.starts.get(key, (None, None))
                        raise RebuildFailed(Failure(key, position, nid, describe(exc))) from exc
                    facts += len(mine)
                if progress is not None:
                    progress(read, max(stop, head))

        try:
            project_until(head, store.write_campaign_rows)
            with store.holding_tracking() as tracking:
                project_until(max(tracking.values()), store.write_campaign_rows_held)
                store.lift_held(key)
        except RebuildFailed as failed:
            store.quarantine(failed.failure)
            raise
        return CampaignRebuildResult(key, facts, time.perf_counter() - began)
    finally:
        owner.close()


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
