"""Waiting for another thread in tests, without asserting any timing."""

from __future__ import annotations

import threading
from collections.abc import Callable


def eventually(pred: Callable[[], object], timeout: float) -> bool:
    """Whether ``pred()`` holds within ``timeout`` seconds (checked every 10 ms): a bound for a
    busy machine, not a timing the test asserts."""
    tick = threading.Event()
    for _ in range(max(1, int(timeout / 0.01))):
        if pred():
            return True
        tick.wait(0.01)
    return bool(pred())
