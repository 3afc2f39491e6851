"""The rebuilt-checkpoint cache of a ``Series`` (``domain/checkpoints.py``) and its copies.

A refold works on a copy of the checkpoints (``Series.copy``) that may be adopted or abandoned;
the copy drops the checkpoints whose reading changed and folds new ones at the same positions.
A stored checkpoint rebuilt through the series' loader is cached by position, so the cache must
never hand one copy a state rebuilt under another copy's reading of that position.
"""

from __future__ import annotations

from typing import Any

from domain.checkpoints import OrphanLog, Orphans, Series


class Reading:
    """A stand-in state: which reading of the log it was folded under."""

    def __init__(self, name: str) -> None:
        self.name = name

    def clone(self) -> Reading:
        return Reading(self.name)


class Storage:
    """The owner's persisted checkpoints: position -> the reading stored there now."""

    def __init__(self) -> None:
        self.rows: dict[int, str] = {}
        self.loads = 0

    def load(self, position: int) -> tuple[Any, Orphans]:
        self.loads += 1
        if position not in self.rows:
            raise LookupError(position)
        return Reading(self.rows[position]), OrphanLog().view()


def stored_series(storage: Storage) -> Series:
    """A series of one checkpoint (after 4 entries, at position 5), known from storage only."""
    storage.rows[5] = "old"
    series = Series(4, load=storage.load)
    series.add_stored(5, 4, through=0)
    return series


def test_a_copy_never_reads_a_state_the_other_rebuilt_under_its_own_reading() -> None:
    """The present series and a refold's copy of it (a correction changed the reading from
    position 5 on): the present is still read while the refold runs (``_fold_converging``
    compares the two folds checkpoint by checkpoint), so it rebuilds its stored checkpoint at 5
    under the old reading. The refold folds its own checkpoint at 5, the owner persists it
    and the refold keeps it only in storage from then on: rebuilt, it is the new reading."""
    storage = Storage()
    present = stored_series(storage)
    assert present.restore(0)[1].name == "old"
    refold = present.copy()
    refold.drop_from(5)
    assert present.restore(0)[1].name == "old"  # the present, read during the refold
    refold.add(5, 4, Reading("new"), OrphanLog().view(), through=9)
    storage.rows[5] = "new"  # the refold adopted, its checkpoint persisted (the old row replaced)
    refold.mark_stored({5}, keep_recent=0)
    assert refold.points[0] is not None and refold.points[0].full is None  # storage only now
    assert refold.restore(0)[1].name == "new"


def test_an_abandoned_refold_leaves_the_present_its_rebuilt_checkpoints() -> None:
    """A refold that drops a position's rebuilt checkpoint (its reading changed) and is then
    abandoned (a refused correction, a what-if) takes nothing from the present's cache."""
    storage = Storage()
    present = stored_series(storage)
    present.restore(0)
    loads = storage.loads
    what_if = present.copy()
    what_if.drop_from(5)
    what_if.forget(0)
    assert present.restore(0)[1].name == "old"
    assert storage.loads == loads, "the present rebuilt its checkpoint again"
