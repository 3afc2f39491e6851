"""P2's floor and samples (bench/README.md, round 10): the decode-only read is timed with the
collector paused, as the product's load pauses it (and once more with it running, for
comparison with earlier rounds), and every size gets the same number of samples.

No timing assertions: what is checked is how each read ran, not how long it took.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from api.service import store as store_module
from bench import work
from bench.core import Budgets, Context, Plan
from tests.stored_campaigns import generated_facts, stored_campaign

HEADER = {"name": "Fold floor", "ruleset": "stellar-winds", "flags": {}, "meta": {}}


def test_every_size_gets_the_same_number_of_fold_samples() -> None:
    ctx = Context(Plan(cells=[]), Budgets())
    assert {ctx.repeats(n) for n in (1_000, 10_000, 100_000, 300_000)} == {3}
    assert Context(Plan.smoke_plan(("sqlite",)), Budgets.smoke()).repeats(100_000) == 1
    assert Context(Plan(cells=[]), Budgets(), repeat=2).repeats(300_000) == 2


def test_the_decode_floor_reads_with_the_collector_paused_then_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'events.sqlite'}"
    _, cid = stored_campaign(url, HEADER, generated_facts(60))
    opened = store_module.open_application
    collector: list[bool] = []  # whether the collector ran during each decode-only read

    def open_application(settings: Any) -> Any:
        app = opened(settings)
        select = app.recorder.select_events

        def select_events(*args: Any, **kwargs: Any) -> Any:
            if not kwargs:  # the whole campaign: the floor's read (the product's own reads are ranged)
                collector.append(gc.isenabled())
            return select(*args, **kwargs)

        app.recorder.select_events = select_events
        return app

    monkeypatch.setattr(store_module, "open_application", open_application)
    answers: list[dict[str, Any]] = []
    assert gc.isenabled()
    work.fold(answers.append, url, str(cid), 2)
    assert gc.isenabled()
    samples = answers[-1]["samples"]
    assert len(samples) == 2
    # per sample: the floor's read (paused), then the same read with the collector running
    assert collector == [False, True, False, True]
    for s in samples:
        assert {"decode_s", "decode_cpu_s", "decode_gc_s", "fold_s", "load_s", "load_cpu_s"} <= s.keys()
        assert s["orphans"] >= 0
