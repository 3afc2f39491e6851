"""Work beside the request path gives way to commands: :class:`CommandGate`.

A server process runs commands (mutations, corrections) on request threads and, beside them,
work nobody waits for: the snapshot writer (:class:`~api.service.snapshots.SnapshotWriter`) and,
on SQLite, the read models' follower (:class:`~projections.runner.Follower`). Both are CPU
work in the same interpreter: a far-reaching correction's refold beside another one's doubled
the command's time (bench P3). So each command runs inside :meth:`CommandGate.command`, and the
background work calls :meth:`CommandGate.give_way` at its pause points: it waits while a command
runs (and, if asked, until none has run for ``quiet_s``), within a timeout the caller sets, so
commands delay it but never starve it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["CommandGate"]


class CommandGate:
    """The commands in progress in this process, and the waits of the work that gives way to them."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0  # commands in progress
        self._ended = float("-inf")  # when the last one ended (time.monotonic)
        self.waiting = 0  # threads giving way now

    @contextmanager
    def command(self) -> Iterator[None]:
        """The block is a command: the work that gives way waits while it runs."""
        with self._cond:
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._ended = time.monotonic()
                self._cond.notify_all()

    @property
    def running(self) -> int:
        """The commands in progress."""
        return self._running

    def give_way(self, timeout: float, quiet_s: float = 0.0, stop: Callable[[], bool] | None = None) -> float:
        """Wait while a command runs, and until none has run for ``quiet_s`` seconds (so a
        client's next command, sent as soon as the last was answered, finds the interpreter
        free too) -- at most ``timeout`` seconds, or until ``stop()`` (checked at each
        :meth:`wake`). Returns the seconds waited (0: nothing to wait for). Never call it inside
        a command: it would wait for itself (the callers are threads of their own)."""
        if timeout <= 0:
            return 0.0
        with self._cond:
            began = time.monotonic()
            deadline = began + timeout
            counted = False
            try:
                while not (stop is not None and stop()):
                    now = time.monotonic()
                    until = deadline if self._running else min(deadline, self._ended + quiet_s)
                    if until <= now:
                        break
                    if not counted:
                        self.waiting += 1
                        counted = True
                    self._cond.wait(until - now)
            finally:
                if counted:
                    self.waiting -= 1
            return time.monotonic() - began if counted else 0.0

    def wake(self) -> None:
        """Wake the waits up to check their ``stop`` (a writer closing, a follower stopping)."""
        with self._cond:
            self._cond.notify_all()
