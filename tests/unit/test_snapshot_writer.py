"""The snapshot writer gives way to commands (issue 21, bench P3).

A command runs inside ``SnapshotWriter.giving_way()``; the writer, at each ``pause_point``
(before a write, between the rows it stores), waits while any command is in progress -- within
a budget per write, so commands delay a snapshot but never starve it -- and loses nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest

from api.service.snapshots import SnapshotWriter
from tests.waiting import eventually

WAIT = 10.0  # the most any step here may take on a busy machine (no timing is asserted)


class Rows:
    """A write of three rows with a pause point between each; records what it stored."""

    def __init__(self) -> None:
        self.stored: list[tuple[UUID, Any, int]] = []
        self.started = threading.Event()
        self.writer: SnapshotWriter | None = None

    def __call__(self, cid: UUID, campaign: Any) -> bool:
        assert self.writer is not None
        for row in range(3):
            self.stored.append((cid, campaign, row))
            self.started.set()
            self.writer.pause_point()
        return True


@pytest.fixture
def rows() -> Iterator[Rows]:
    r = Rows()
    r.writer = SnapshotWriter(r)
    yield r
    r.writer.close(timeout=WAIT)


def _until(pred: Any) -> bool:
    return eventually(pred, WAIT)


def test_the_writer_waits_while_a_command_runs_and_writes_everything_after(rows: Rows) -> None:
    writer = rows.writer
    assert writer is not None
    a, b = uuid4(), uuid4()
    with writer.giving_way():
        writer.request(a, "campaign a")
        assert _until(lambda: writer.waiting)  # at its first pause point, before any row
        assert rows.stored == []
        writer.request(b, "campaign b")  # asked for while it gives way: kept
        assert not writer.flush(timeout=0.2)
        assert rows.stored == [] and writer.waiting
    assert writer.flush(timeout=WAIT)
    assert rows.stored == [(a, "campaign a", i) for i in range(3)] + [(b, "campaign b", i) for i in range(3)]
    assert writer.written == 2 and writer.failed == 0 and not writer.waiting


def test_a_command_that_starts_mid_write_holds_the_rows_after_the_pause_point(rows: Rows) -> None:
    writer = rows.writer
    assert writer is not None
    cid = uuid4()
    entered, gate = threading.Event(), threading.Event()
    real = rows.__call__

    def first_row_then_wait(c: UUID, campaign: Any) -> bool:
        entered.set()
        gate.wait(WAIT)  # the command starts before the write gets past its first row
        return real(c, campaign)

    writer._write = first_row_then_wait
    writer.request(cid, "x")
    assert entered.wait(WAIT)  # the write began before any command
    with writer.giving_way():
        gate.set()
        assert _until(lambda: writer.waiting)
        assert [r for _, _, r in rows.stored] == [0]  # one row, then it gave way
    assert writer.flush(timeout=WAIT)
    assert [r for _, _, r in rows.stored] == [0, 1, 2]


def test_commands_that_never_stop_delay_a_write_by_its_budget_only() -> None:
    r = Rows()
    r.writer = writer = SnapshotWriter(r, give_way_s=0.2)
    try:
        with writer.giving_way():
            writer.request(uuid4(), "x")
            assert writer.flush(timeout=WAIT)  # written although the command is still running
        assert len(r.stored) == 3 and writer.paused_s > 0
    finally:
        writer.close(timeout=WAIT)


def test_pause_points_off_the_writer_thread_do_not_wait(rows: Rows) -> None:
    """``write_snapshot`` writes on the request's own thread: it must not wait for itself."""
    writer = rows.writer
    assert writer is not None
    with writer.giving_way():
        assert rows(uuid4(), "inline")
    assert len(rows.stored) == 3 and writer.paused_s == 0


def test_a_failed_command_gives_way_no_longer(rows: Rows) -> None:
    writer = rows.writer
    assert writer is not None
    with pytest.raises(RuntimeError), writer.giving_way():
        raise RuntimeError("refused")
    writer.request(uuid4(), "x")
    assert writer.flush(timeout=WAIT) and len(rows.stored) == 3


def test_a_write_in_progress_can_tell_that_a_newer_snapshot_of_its_campaign_waits(rows: Rows) -> None:
    writer = rows.writer
    assert writer is not None
    a, b = uuid4(), uuid4()
    with writer.giving_way():  # the write of a starts, then gives way at its first row
        writer.request(a, "first")
        assert _until(lambda: writer.waiting)
        assert not writer.cut_short(a)
        writer.request(b, "other")
        assert not writer.cut_short(a)  # another campaign's snapshot is no reason to stop
        writer.request(a, "newer")
        assert writer.cut_short(a)
    assert writer.flush(WAIT)
    assert not writer.cut_short(a)
    assert [(cid, c) for cid, c, row in rows.stored if row == 0] == [(a, "first"), (b, "other"), (a, "newer")]


def test_a_closing_writer_still_writes_what_is_pending_but_cuts_each_write_short() -> None:
    """On shutdown the time left goes to the fold snapshots pending: each write is told to leave
    its checkpoint rows (``cut_short``), and none is dropped."""
    seen: list[tuple[UUID, bool]] = []
    writer: SnapshotWriter | None = None

    def write(cid: UUID, campaign: Any) -> bool:
        assert writer is not None
        seen.append((cid, writer.cut_short(cid)))
        return True

    writer = SnapshotWriter(write)
    a, b = uuid4(), uuid4()
    with writer.giving_way():  # a command in progress: both requests wait
        writer.request(a, "a")
        writer.request(b, "b")
        assert _until(lambda: writer.waiting)
        closing = threading.Thread(target=writer.close, kwargs={"timeout": WAIT})
        closing.start()
        assert _until(lambda: writer._closing)
    closing.join(WAIT)
    assert seen == [(a, True), (b, True)]
    assert writer.written == 2
