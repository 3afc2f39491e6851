"""The orphan log's views: walking from the middle, and the delta between two checkpoints.

A snapshot written after an early correction stores each later checkpoint's orphans as a delta
from the one before (``orphan_delta``: the length of their common prefix and what follows it);
the prefix can be tens of thousands of orphans, so what follows it is read from the prefix's end
(``Orphans.pairs(start)``), not found by walking from the first orphan.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from domain.checkpoints import CHUNK, OrphanLog, orphan_delta


def _log(n: int, first: int = 10) -> OrphanLog:
    return OrphanLog((first + 3 * i, f"r{i % 7}") for i in range(n))


@given(n=st.integers(0, 3 * CHUNK + 5), cut=st.integers(0, 3 * CHUNK + 5), start=st.integers(0, 4 * CHUNK))
def test_pairs_from_a_start_are_the_tail_of_all_pairs(n: int, cut: int, start: int) -> None:
    view = _log(n).fork(min(cut, n)).view()  # the first orphans of a longer log
    assert list(view.pairs(start)) == list(view.pairs())[start:]


@given(
    shared=st.integers(0, 3 * CHUNK),
    before_more=st.integers(0, CHUNK + 3),
    after_more=st.integers(0, 2 * CHUNK + 3),
)
def test_the_prefix_and_what_follows_rebuild_the_later_orphans(
    shared: int, before_more: int, after_more: int
) -> None:
    common = _log(shared)
    before = common.fork()
    for i in range(before_more):  # the earlier reading's own orphans after the shared ones
        before.append(100_000 + i, "earlier")
    after = common.fork()
    for i in range(after_more):
        after.append(200_000 + i, "later")
    b, a = before.view(), after.view()
    keep, added = orphan_delta(b, a)
    assert keep == shared
    assert list(b.pairs())[:keep] + added == list(a.pairs())


def test_a_later_view_of_one_log_adds_only_its_tail() -> None:
    log = _log(5 * CHUNK)
    early, late = log.fork(2 * CHUNK + 7).view(), log.view()
    keep, added = orphan_delta(early, late)
    assert keep == 2 * CHUNK + 7
    assert added == list(late.pairs())[keep:]
    assert len(added) == 3 * CHUNK - 7
