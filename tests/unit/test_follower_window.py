"""A live follower's batching window widens after a costly step (``Follower.window``), within
``max_window``, and its loop waits for the window its last step earned."""

from __future__ import annotations

from typing import Any

import pytest

from projections import runner
from projections.runner import WINDOW_PER_STEP, Follower


def test_the_window_is_the_idle_interval_after_a_cheap_step_and_widens_after_a_costly_one() -> None:
    follower = Follower(object(), object(), idle_interval=0.05, max_window=0.25)  # type: ignore[arg-type]
    assert follower.window(0.001) == 0.05
    assert follower.window(0.03) == pytest.approx(WINDOW_PER_STEP * 0.03)
    assert follower.window(10.0) == 0.25
    assert Follower(object(), object(), idle_interval=0.5, max_window=0.1).window(1.0) == 0.5  # type: ignore[arg-type]


def test_the_loop_waits_for_the_window_its_last_step_earned(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(runner.time, "monotonic", lambda: clock[0])
    follower = Follower(object(), object(), idle_interval=0.05, max_window=0.25)  # type: ignore[arg-type]
    waits: list[tuple[float, Any]] = []

    def step(*_: Any) -> int:
        clock[0] += 0.04  # a step of 40 ms
        return 1

    def idle(began: float, window: Any = None) -> None:
        waits.append((began, window))
        follower.stopping.set()

    monkeypatch.setattr(follower, "step", step)
    monkeypatch.setattr(follower, "_idle", idle)
    monkeypatch.setattr(follower, "_disconnect", lambda: None)
    follower.run()
    assert waits == [(100.0, pytest.approx(WINDOW_PER_STEP * 0.04))]
