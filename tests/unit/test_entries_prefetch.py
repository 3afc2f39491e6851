"""``Entries.prefetch``: the facts an as-of will fold are read on a helper thread while it rebuilds
the checkpoint it folds from, so the store's round trip overlaps that. The law: whatever was
prefetched, every read gives exactly the stored facts; a prefetched stretch is read from the
store once (its fold takes the answer), and a loader's error reaches the read that uses it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.entries import Entries, Entry, MissingFacts

FIRST = 2


class Store:
    def __init__(self, n: int) -> None:
        self.facts = [Entry(FIRST + i, "Noted", 1, {"i": i}, {}) for i in range(n)]
        self.calls: list[tuple[int, int]] = []
        self.lock = threading.Lock()
        self.fail = False

    def load(self, first: int, last: int) -> list[Entry]:
        with self.lock:
            self.calls.append((first, last))
        if self.fail:
            raise MissingFacts("the store is gone")
        return [e for e in self.facts if first <= e.seq <= last]


def paged(n: int, window: int = 8, page: int = 32) -> tuple[Entries, Store]:
    store = Store(n)
    entries = Entries(FIRST)
    entries.attach(store.load, window, page=page, pages_kept=1)
    for e in store.facts:
        entries.append(e)
    return entries, store


@settings(max_examples=80, deadline=None, database=None)
@given(
    n=st.integers(1, 200),
    steps=st.lists(
        st.tuples(st.booleans(), st.integers(-5, 210), st.integers(-5, 210)), min_size=1, max_size=12
    ),
)
def test_reads_after_any_prefetches_give_exactly_the_stored_facts(
    n: int, steps: list[tuple[bool, int, int]]
) -> None:
    entries, store = paged(n)
    for prefetch, a, b in steps:
        if prefetch:
            entries.prefetch(a, b)
        else:
            assert list(entries.range(a, b)) == store.facts[max(a, 0) : max(min(b, n), 0)]


def test_a_prefetched_stretch_is_read_from_the_store_once() -> None:
    entries, store = paged(200)
    entries.prefetch(100, 120)
    assert [e.seq for e in entries.range(100, 120)] == list(range(FIRST + 100, FIRST + 120))
    assert store.calls == [(FIRST + 100, FIRST + 119)]


def test_a_prefetch_of_facts_in_memory_reads_nothing() -> None:
    entries, store = paged(200)
    entries.prefetch(195, 200)  # resident (the window)
    entries.prefetch(10, 10)  # empty
    entries.prefetch(0, 100)  # not short: the fold reads it a page at a time
    assert store.calls == []


def test_a_prefetch_left_unused_changes_no_later_read() -> None:
    entries, store = paged(200)
    entries.prefetch(100, 120)
    assert list(entries.range(40, 50)) == store.facts[40:50]
    entries.prefetch(60, 70)  # replaces the first
    assert list(entries.range(100, 120)) == store.facts[100:120]
    assert list(entries.range(60, 70)) == store.facts[60:70]


def test_the_loaders_error_reaches_the_read_that_uses_the_prefetch(monkeypatch: Any) -> None:
    entries, store = paged(200)
    store.fail = True
    entries.prefetch(100, 120)
    with pytest.raises(MissingFacts):
        list(entries.range(100, 120))
    store.fail = False
    assert list(entries.range(100, 120)) == store.facts[100:120]
