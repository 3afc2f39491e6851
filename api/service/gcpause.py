"""Pausing the cyclic garbage collector across a burst of long-lived, acyclic allocations."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_gc_lock = threading.Lock()
_gc_pauses = [0, True]  # pauses in progress, whether the collector was enabled before the first


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a refold (a correction, an as-of).

    A refold allocates a burst of objects that live on (its state, its checkpoints, facts read
    back), and the collector answers such a burst with collections of the whole loaded heap:
    measured at 10k facts, 0.32 s of a 0.65 s revoke. The fold's objects form no reference
    cycles (a dropped ledger is freed by reference counting alone, see ``_evict``), so nothing
    waits on the collector meanwhile; it resumes when the last pause ends (nested and
    concurrent pauses are counted)."""
    with _gc_lock:
        if _gc_pauses[0] == 0:
            _gc_pauses[1] = gc.isenabled()
            gc.disable()
        _gc_pauses[0] += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses[0] -= 1
            if _gc_pauses[0] == 0 and _gc_pauses[1]:
                gc.enable()
