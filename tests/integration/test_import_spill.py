"""An import's dry run spills its checkpoints to a temporary file as it folds (issue 21, P6:
``api.exports.spill``), keeping only the newest few in memory; the import copies the rows into
the snapshot table. What it stores and answers is what an import that kept every checkpoint in
memory stores and answers, on SQLite and PostgreSQL. (Memory itself is measured by the bench.)"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from api.exports import jsonl
from api.exports import spill as spill_module
from api.exports.spill import SpilledPoints
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.snapshots import point_loader
from api.service.store import open_application
from domain.ledger import Ledger
from domain.rulesets import get_ruleset
from tests.integration.test_streaming_exports import generated, lines

SIZE = 2600
RULES = get_ruleset("stellar-winds")


@pytest.fixture
def opened(store: Settings) -> Iterator[Any]:
    apps: list[ChronicleApplication] = []

    def open_(**overrides: Any) -> ChronicleApplication:
        app = open_application(dataclasses.replace(store, **overrides))
        apps.append(app)
        return app

    yield open_
    for app in apps:
        app.close()


def stored_points(app: ChronicleApplication, cid: UUID) -> dict[tuple[str, int], tuple[int, Any, list[Any]]]:
    """Every persisted checkpoint of the campaign, rebuilt: (kind, position) -> (through, the
    state as JSON data, its orphans)."""
    out = {}
    for kind, position, through, _full, _digest in app.snapshots.points(cid):
        if kind == "fold":
            continue
        load = point_loader(RULES, 256, lambda p, kind=kind: app.snapshots.chain(cid, kind, p))
        state, orphans = load(position)
        out[kind, position] = (through, RULES.dump_state(state), list(orphans.pairs()))
    return out


def fold_snapshot(app: ChronicleApplication, cid: UUID) -> dict[str, Any]:
    data = app.snapshots.latest(cid)[0].decode()
    data.pop("pinned")  # the stored facts, with the time each import stored them
    return data


def test_an_import_that_spills_its_checkpoints_stores_and_answers_as_one_that_keeps_them(
    opened: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, gen = generated(SIZE, 3)
    app = opened()
    checked_spills = 0
    spill = SpilledPoints.spill

    def checked(self: SpilledPoints, ledger: Ledger) -> None:
        """After each spill, every checkpoint the ledger keeps in storage only has its row (a
        refold that rejoined the fold took stored ones back as they were: their rows stay)."""
        nonlocal checked_spills
        spill(self, ledger)
        for kind, series in (("corrected", ledger._checkpoints), ("recorded", ledger._recorded)):
            assert {p.seq for p in series if p.stored} <= set(self.rows[kind]), (kind, ledger.last_seq)
        checked_spills += 1

    monkeypatch.setattr(SpilledPoints, "spill", checked)
    monkeypatch.setattr(spill_module, "KEEP_RECENT", 0)  # all in storage: refolds take stored ones
    spilled = jsonl.read_export(lines(data), window=50, spill_every=300)
    kept = jsonl.read_export(lines(data), window=50, spill_every=None)
    assert spilled.ledger is not None and spilled.points is not None and kept.points is None
    assert spilled.ledger.converged, "a correction's refold rejoined the fold: its stored rows were kept"
    in_memory = sum(
        1
        for series in (spilled.ledger._checkpoints, spilled.ledger._recorded)
        for p in series
        if p.full is not None or p.delta is not None
    )
    assert len(spilled.points) > 2 * 8 and in_memory <= 2 * 2  # the newest, and the full rhythm
    assert checked_spills > 5
    a = app.import_campaign(spilled.header, spilled.facts, folded=spilled.ledger, spilled=spilled.points)
    b = app.import_campaign(kept.header, kept.facts, folded=kept.ledger)
    spilled.close()
    kept.close()
    assert stored_points(app, a) == stored_points(app, b)
    assert fold_snapshot(app, a) == fold_snapshot(app, b)
    fresh = opened()
    last = gen.ledger.last_seq
    for p in (None, 300, 1111, 2000, last - 3):
        for view in ("corrected", "recorded"):
            assert fresh.summary(a, p, view) == fresh.summary(b, p, view), (p, view)
    assert fresh.cache_stats["from_snapshot"] == 2


def test_an_import_given_a_spilled_fold_without_its_rows_folds_from_the_store(opened: Any) -> None:
    """The dry run's ledger rebuilds spilled checkpoints from its file: without the rows
    (``spilled``) it is not the campaign's snapshot -- its stored checkpoints would be missing."""
    data, _ = generated(800, 7)
    app = opened()
    checked = jsonl.read_export(lines(data), window=50, spill_every=100)
    cid = app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    checked.close()
    assert not app.snapshots.latest(cid)
    assert opened().summary(cid) == app.summary(cid)
