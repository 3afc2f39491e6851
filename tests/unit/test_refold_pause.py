"""``Ledger.refold(sink, pause=..., pause_every=N)`` (issue 21: the in-process read models give
way to the server's commands between facts of a refold).

The law: pausing changes nothing -- over random campaigns (with corrections that take the fold
back) cut into random batches, a ledger refolded with a pause tells its sink exactly what one
refolded without tells -- and the pause is called once per ``N`` facts folded: at least once
per ``N`` facts reported, never more often than the facts folded allow, never for a refold of
fewer than ``N``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.ledger import Entry, Ledger
from tests.unit.test_projector_journal import RULES, SETTINGS, _entries, in_batches


def _ledger() -> Ledger:
    return Ledger(RULES, {}, first_seq=2, checkpoint_every=8, full_every=4)


def _refold_in_batches(entries: list[Entry], cuts: list[int], every: int | None) -> list[list[Any]]:
    """Each batch's refold as the sink saw it, with ``"pause"`` where the pause was called."""
    ledger = _ledger()
    batches: list[list[Any]] = []
    for _, appended in in_batches(entries, cuts):
        for e in appended:
            ledger.append(e)
        seen: list[Any] = []

        def sink(e: Entry, outcome: Any, orphan: str | None, state: Any, seen: list[Any] = seen) -> None:
            seen.append((e.seq, outcome, orphan))

        if every is None:
            ledger.refold(sink)
        else:
            ledger.refold(sink, pause=lambda seen=seen: seen.append("pause"), pause_every=every)
        batches.append(seen)
    return batches


@SETTINGS
@given(
    st.integers(100, 400),
    st.integers(0, 10**6),
    st.lists(st.integers(1, 60), min_size=1, max_size=6),
    st.integers(1, 40),
)
def test_a_paused_refold_reports_what_an_unpaused_one_does(
    size: int, seed: int, cuts: list[int], every: int
) -> None:
    entries = _entries(size, seed)
    plain = _refold_in_batches(entries, cuts, None)
    paused = _refold_in_batches(entries, cuts, every)
    assert [[r for r in b if r != "pause"] for b in paused] == plain
    for batch in paused:
        reported, pauses = sum(1 for r in batch if r != "pause"), batch.count("pause")
        # (a refold taken back to a checkpoint folds facts it does not report: it may pause
        # before the first it reports)
        assert reported // every <= pauses <= len(entries) // every


def test_a_refold_of_fewer_facts_than_the_rhythm_never_pauses() -> None:
    entries = _entries(300, 5)
    paused = _refold_in_batches(entries, [299], 256)
    assert paused[0].count("pause") == 1 and paused[1].count("pause") == 0  # 299 facts, then 1
    assert all("pause" not in b for b in _refold_in_batches(entries, [10], 256))
