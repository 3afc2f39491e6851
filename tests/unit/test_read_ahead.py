"""A long stretch of facts not in memory is read one span ahead (issue 21, bench P3).

A refold after an early correction reads most of the campaign back from the store; the next
span is read on a helper thread while the fold works through this one. The law: the stream is
the stored facts in order, whatever the span sizes; the reads ahead happen off the folding
thread; a stream given up half-way leaves nothing running and reads correctly afterwards.
"""

from __future__ import annotations

import threading

from domain import entries as entries_module
from domain.entries import Entries, Entry


class Store:
    def __init__(self, count: int) -> None:
        self.facts = [Entry(s, "NoteAdded", 1, {"text": str(s)}, {}, f"t{s}") for s in range(2, 2 + count)]
        self.threads: list[str] = []
        self.lock = threading.Lock()

    def load(self, first: int, last: int) -> list[Entry]:
        with self.lock:
            self.threads.append(threading.current_thread().name)
        return [
            Entry(e.seq, e.type, e.version, dict(e.payload), {}, e.timestamp)
            for e in self.facts[first - 2 : last - 1]
        ]


def paged(store: Store, window: int = 10) -> Entries:
    entries = Entries(2)
    entries.attach(store.load, window, page=4, pages_kept=2)  # streamed 16 facts a read
    for e in store.facts:
        entries.append(Entry(e.seq, e.type, e.version, dict(e.payload), {}, e.timestamp))
    return entries


def test_a_long_stretch_streams_the_stored_facts_read_ahead_off_the_folding_thread() -> None:
    store = Store(200)
    entries = paged(store)
    got = [e.seq for e in entries.range(0, 190)]
    assert got == [e.seq for e in store.facts[:190]]
    me = threading.current_thread().name
    assert len(store.threads) == 12  # 190 facts, 16 a read
    assert all(name != me for name in store.threads)  # every read ahead of the fold


def test_a_stream_given_up_half_way_leaves_nothing_running() -> None:
    store = Store(200)
    entries = paged(store)
    stream = entries.range(0, 190)
    first = [next(stream).seq for _ in range(20)]
    stream.close()  # the read in flight is waited for and dropped
    assert first == list(range(2, 22))
    assert not [t for t in threading.enumerate() if t.name.startswith("chronicle-read-ahead")]
    assert [e.seq for e in entries.range(0, 190)] == [e.seq for e in store.facts[:190]]


def test_without_read_ahead_the_stream_is_the_same() -> None:
    store = Store(200)
    saved = entries_module.READ_AHEAD
    entries_module.READ_AHEAD = False
    try:
        plain = [e.seq for e in paged(store).range(0, 190)]
    finally:
        entries_module.READ_AHEAD = saved
    assert set(store.threads) == {threading.current_thread().name}
    assert plain == [e.seq for e in paged(Store(200)).range(0, 190)]
