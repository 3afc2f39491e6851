"""The API server runs the garbage collector with its own thresholds (api.service.gcpause)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest
import uvicorn
from typer.testing import CliRunner

from api.cli.main import app
from api.cli.process import free_port
from api.service import gcpause
from api.service.gcpause import SERVER_THRESHOLDS, tune_collector


@pytest.fixture
def thresholds() -> Any:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
    gc.unfreeze()


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_tune_collector_sets_the_server_thresholds_and_freezes_what_the_server_built(
    thresholds: None,
) -> None:
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    built = {"schema": [object()]}  # long-lived, as the server's modules and schema
    was = gc.isenabled()
    gc.disable()
    try:
        dropped = weakref.ref(Node())  # garbage only the collector frees
        tune_collector()
    finally:
        if was:
            gc.enable()
    assert gc.get_threshold() == SERVER_THRESHOLDS
    assert SERVER_THRESHOLDS[0] > 700  # the youngest generation less often than CPython's default
    assert gc.get_freeze_count() > 0
    assert not any(o is built for o in gc.get_objects()), "what the server built is still walked"
    assert dropped() is None, "garbage was frozen with it"


def test_serve_runs_with_the_server_thresholds(thresholds: None, monkeypatch: pytest.MonkeyPatch) -> None:
    gc.set_threshold(700, 10, 10)
    seen: list[tuple[int, ...]] = []

    def run(self: uvicorn.Server, sockets: Any = None) -> None:  # the server as it would start serving
        seen.append(gc.get_threshold())

    monkeypatch.setattr(uvicorn.Server, "run", run)
    CliRunner().invoke(
        app,
        ["serve", "--host", "127.0.0.1", "--port", str(free_port())],
        env={"CHRONICLE_DATABASE_URL": "memory:"},
    )
    assert seen == [SERVER_THRESHOLDS]


class PausesWhenFreed:
    """A finalizer that pauses (as ``ChronicleApplication.__del__`` may), in a reference cycle so
    that only the collection at the end of a freezing pause runs it."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        with gcpause.gc_paused():
            pass


def test_a_finalizer_that_pauses_during_the_freezing_collection_leaves_the_collector_on(
    thresholds: None,
) -> None:
    assert gc.isenabled()
    with gcpause.gc_paused() as pause:
        PausesWhenFreed()  # garbage at once: freed by the collection below
        pause.freeze = True
    assert gc.isenabled(), "the nested pause found the collector off and left it off"
    assert gcpause._gc_pauses[0] == 0


def test_the_frozen_heap_is_collected_whole_once_it_has_doubled(
    thresholds: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cycles dropped while frozen are garbage that only an unfreeze lets the collector see; a
    freezing pause unfreezes and collects everything once the frozen heap has grown past
    ``FROZEN_GROWTH`` times what it was after the last such collection."""
    gc.collect()
    gc.freeze()
    monkeypatch.setattr(gcpause, "FROZEN_MIN", 1)
    monkeypatch.setattr(gcpause, "_frozen_after_full", [gc.get_freeze_count()])
    kept = [Node() for _ in range(10)]
    with gcpause.gc_paused() as pause:
        pause.freeze = True  # frozen: the ten nodes
    dropped = weakref.ref(kept[0])
    del kept  # ten cycles, frozen: not collected while frozen
    gc.collect()
    assert dropped() is not None
    grow = [[object()] for _ in range(2 * gc.get_freeze_count())]  # the live heap doubles
    with gcpause.gc_paused() as pause:
        pause.freeze = True
    assert dropped() is None, "the frozen garbage was never collected"
    assert not any(o is grow for o in gc.get_objects()), "the live heap is frozen again"
