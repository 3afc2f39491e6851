"""Imports are written in batches, and a campaign is served only once its import is complete."""

from __future__ import annotations

import io
from typing import Any

import pytest

import api.service.application as application_module
from api.exports import jsonl, service
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import NotFound


def _export(app: ChronicleApplication) -> str:
    cid = create_demo(app)
    return "".join(service.export(app, cid, "jsonl"))


def test_a_batched_import_gives_the_same_campaign(
    app: ChronicleApplication, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _export(app)
    monkeypatch.setattr(application_module, "IMPORT_BATCH", 7)  # many batches for 74 facts
    checked = jsonl.read_export(io.BytesIO(text.encode()))
    new = app.import_campaign(checked.header, checked.facts)
    assert "".join(service.export(app, new, "jsonl")) == text


def test_an_import_cut_short_is_never_served(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _export(app)
    checked = jsonl.read_export(io.BytesIO(text.encode()))
    monkeypatch.setattr(application_module, "IMPORT_BATCH", 10)
    saves: list[Any] = []
    real_save = ChronicleApplication.save

    def crash_after_two_batches(self: ChronicleApplication, *objs: Any, **kw: Any) -> Any:
        if len(saves) == 2:
            raise ConnectionError("the database went away")
        saves.append(objs)
        return real_save(self, *objs, **kw)

    monkeypatch.setattr(ChronicleApplication, "save", crash_after_two_batches)
    with pytest.raises(ConnectionError):
        app.import_campaign(checked.header, checked.facts)
    monkeypatch.setattr(ChronicleApplication, "save", real_save)
    partial = saves[0][0].id
    fresh = open_application(store)  # a process that never saw the import
    try:
        with pytest.raises(NotFound, match="not completely imported"):
            fresh.campaign(partial)
        with pytest.raises(NotFound, match="not completely imported"):
            AccessControl(fresh).grant_gm(partial)  # no token for it either
    finally:
        fresh.close()


def test_the_gm_token_of_an_import_is_granted_without_loading_the_campaign(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``chronicle import`` grants a token right after storing: loading the campaign for it
    # would fold (or restore) the whole of it again, only to learn that it exists
    checked = jsonl.read_export(io.BytesIO(_export(app).encode()))
    cid = app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    loads: list[object] = []
    real_load = ChronicleApplication._load

    def loading(self: ChronicleApplication, *args: Any, **kwargs: Any) -> Any:
        loads.append(args)
        return real_load(self, *args, **kwargs)

    monkeypatch.setattr(ChronicleApplication, "_load", loading)
    fresh = open_application(store)  # a process that never saw the import (nothing cached)
    try:
        token = AccessControl(fresh).grant_gm(cid)
        assert loads == []
        principal = AccessControl(fresh).authenticate(token)
        assert principal is not None and principal.is_gm
    finally:
        fresh.close()


def test_an_imported_snapshot_pins_the_dry_runs_facts_with_the_times_they_were_stored(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the snapshot pins the corrections (and the facts they point at) as stored, with the time
    # each was stored: only those times are read back, the dry run's payloads are the ones kept
    checked = jsonl.read_export(io.BytesIO(_export(app).encode()))
    assert checked.ledger is not None
    dry = dict(checked.ledger._pinned)
    written: list[Any] = []
    real = ChronicleApplication._store_capture

    def storing(self: ChronicleApplication, campaign_id: Any, ledger: Any, capture: Any) -> None:
        written.append(capture)
        real(self, campaign_id, ledger, capture)

    monkeypatch.setattr(ChronicleApplication, "_store_capture", storing)
    cid = app.import_campaign(checked.header, checked.facts, folded=checked.ledger)
    pinned = written[0].pinned
    assert pinned and [e.seq for e in pinned] == sorted(dry)
    assert all(e.payload is dry[e.seq].payload and e.meta is dry[e.seq].meta for e in pinned)
    fresh = open_application(store)
    try:
        ledger = fresh.ledger(cid)
        assert fresh.cache_stats["from_snapshot"] == 1
        stored = {e.seq: e for e in fresh.fact_reader(cid)(pinned[0].seq, pinned[-1].seq)}
        for e in pinned:
            s, restored = stored[e.seq], ledger._pinned[e.seq]
            assert e.timestamp and e.timestamp == s.timestamp == restored.timestamp
            assert (e.type, e.version, e.payload, e.meta) == (s.type, s.version, s.payload, s.meta)
            assert (restored.payload, restored.meta) == (s.payload, s.meta)
    finally:
        fresh.close()
