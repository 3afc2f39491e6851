"""The cyclic garbage collector: paused across a burst of long-lived, acyclic allocations
(``gc_paused``), and run less often by the API server (``tune_collector``)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["SERVER_THRESHOLDS", "Pause", "gc_paused", "tune_collector"]

# The API server's collection thresholds (``gc.set_threshold``; CPython's default is 700, 10, 10).
# Every request leaves reference cycles behind (its operation's event-loop task and futures,
# GraphQL execution state) and under many writers many requests are in flight whenever the
# youngest generation is collected: their objects are promoted, die in the older generations and
# wait for the collections of those. Measured on a 100k campaign (after a cold load, 400
# mutations from 20 clients, then 3 x 100 from 50 writers), CPU spent collecting: with the
# default 0.86 s and 1.0 s in two runs (81 middle and 7-8 full collections, 0.48-0.59 s of it
# full), with 10,000 for the youngest generation 0.51 s both runs (4 middle collections, one
# full: the cold load's own), the longest pause 47 ms. Both counts include that cold load's
# full collection (about 0.16 s).
SERVER_THRESHOLDS = (10_000, 10, 10)

_gc_lock = threading.RLock()  # (re-entered by a finalizer that pauses, run by the collection below)
# pauses in progress, whether the collector was enabled before the first, whether to collect and
# freeze when the last one ends
_gc_pauses: list[int | bool] = [0, True, False]


class Pause:
    """What :func:`gc_paused` yields: set ``freeze`` inside the block to collect and freeze after it."""

    __slots__ = ("freeze",)

    def __init__(self) -> None:
        self.freeze = False


@contextmanager
def gc_paused() -> Iterator[Pause]:
    """Pause the cyclic garbage collector for a refold (a correction, an as-of).

    A refold allocates a burst of objects that live on (its state, its checkpoints, facts read
    back), and the collector answers such a burst with collections of the whole loaded heap:
    measured at 10k facts, 0.32 s of a 0.65 s revoke. The fold's objects form no reference
    cycles (a dropped ledger is freed by reference counting alone, see ``_evict``), so nothing
    waits on the collector meanwhile; it resumes when the last pause ends (nested and
    concurrent pauses are counted).

    ``pause.freeze = True`` inside the block (a correction that refolded a large campaign): the
    last pause to end collects every generation, then freezes what survives (``gc.freeze()``,
    as a cold load of a large campaign does) before the collector resumes. That collection walks
    what the refold built once, where the first collection after the pause walked it anyway;
    without the freeze it was promoted and walked again by the middle and the full collections
    that followed -- wherever they fell: measured at 100k facts, 0.25-0.37 s in the next
    correction's request, or 0.5 s of CPU in the snapshot writer's thread while the next
    correction ran (a collection holds the interpreter: no pause point inside it). The
    collection comes first so that no garbage is frozen: the reference cycles any thread dropped
    before or during the pause are freed by it. What the refold replaced is freed by reference
    counting as before; what is frozen waits for an eviction's ``gc.unfreeze()``, or for the
    frozen heap to double (``_collect_and_freeze``)."""
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            _gc_pauses[2] = False
            gc.disable()
        _gc_pauses[0] += 1
    pause = Pause()
    try:
        yield pause
    finally:
        with _gc_lock:
            if pause.freeze:
                _gc_pauses[2] = True
            collect = _gc_pauses[0] == 1 and bool(_gc_pauses[2])
            if collect:
                _gc_pauses[2] = False
            else:
                _end_pause()
        if collect:
            # Still counted, and outside the lock: a pause begun meanwhile (another thread's, or
            # a finalizer's that this collection runs) only counts, and neither waits for the
            # collection nor finds the collector already off and leaves it off when it ends.
            try:
                _collect_and_freeze()
            finally:
                with _gc_lock:
                    _end_pause()


def _end_pause() -> None:
    _gc_pauses[0] -= 1
    if _gc_pauses[0] == 0 and _gc_pauses[1]:
        gc.enable()


# The freeze count after the last collection that unfroze everything first. Whatever a freeze
# holds is collected only after an ``unfreeze``: the reference cycles of requests in flight when
# a correction's refold is frozen are garbage that waits there (a hot campaign is never evicted,
# and its eviction is what unfreezes). When the frozen heap has doubled since, it is unfrozen and
# collected whole before it is frozen again: the frozen garbage stays below the live heap.
_frozen_after_full = [0]
FROZEN_GROWTH = 2.0
FROZEN_MIN = 100_000


def _collect_and_freeze() -> None:
    gc.collect()
    gc.freeze()
    if gc.get_freeze_count() > FROZEN_GROWTH * max(_frozen_after_full[0], FROZEN_MIN):
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _frozen_after_full[0] = gc.get_freeze_count()


def tune_collector() -> None:
    """For the API server (``chronicle serve``), once it is built and before it serves: collect,
    then freeze what survives -- the modules, the schema, the application: long-lived, and
    without this walked by every full collection (as a large campaign's heap is frozen after its
    cold load, ``api.service.application``) -- and collect the youngest generation every
    ``SERVER_THRESHOLDS[0]`` net allocations instead of 700. Nothing is collected later than the
    next collection of its generation; fewer objects live long enough to be promoted."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVER_THRESHOLDS)
