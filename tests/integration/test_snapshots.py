"""Persisted snapshots of the fold, on SQLite and PostgreSQL (issue 21).

A fresh process answers on a campaign by loading its newest valid snapshot and only the facts
after it; a snapshot that disagrees with the log (a later correction reaching back before
it, another ruleset version, other flags than it was folded under, a corrupt row, a row that
belongs to another campaign) is discarded, and in every case the campaign reads exactly as a
fold from scratch by a process that never saw a snapshot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest

from api.service import application as application_module
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.snapshots import CORRECTED as CORRECTED_POINTS
from api.service.snapshots import FOLD, SnapshotRow, encode, point_loader
from api.service.snapshots import RECORDED as RECORDED_POINTS
from api.service.store import open_application
from bench.generator import CampaignGenerator
from domain.ledger import INF, Capture
from domain.rulesets import get_ruleset
from domain.rulesets.stellar_winds import STELLAR_WINDS
from tests.waiting import eventually

HEADER = {"name": "Snapshots", "ruleset": "stellar-winds", "flags": {}, "meta": {}}


def facts(size: int, seed: int) -> list[tuple[str, int, dict[str, Any], dict[str, Any]]]:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    rules = get_ruleset("stellar-winds")
    return [(t, rules.catalogue.version(t), p, m) for t, p, m in gen.facts()]


@pytest.fixture
def opened(store: Settings) -> Iterator[Any]:
    """``opened(**settings)``: an application on the test store (closed afterwards)."""
    apps: list[ChronicleApplication] = []

    def open_(**overrides: Any) -> ChronicleApplication:
        app = open_application(dataclasses.replace(store, **overrides))
        apps.append(app)
        return app

    yield open_
    for app in apps:
        app.close()


def everything(app: ChronicleApplication, cid: UUID) -> dict[str, Any]:
    """The whole present, orphans included, and a stretch of history as the table saw it."""
    out = app.summary(cid)
    ledger = app.ledger(cid)
    mid = (ledger.first_seq + ledger.last_seq) // 2
    out["as_of"] = app.summary(cid, mid, "recorded")
    return out


def scratch(opened: Any, cid: UUID) -> dict[str, Any]:
    """The campaign folded from scratch by a process that reads no snapshot."""
    return everything(opened(snapshot_every=0), cid)


def seeded(opened: Any, size: int = 700, seed: int = 3) -> tuple[ChronicleApplication, UUID]:
    app = opened()
    cid = app.import_campaign(HEADER, facts(size, seed))
    app.write_snapshot(cid)
    return app, cid


def test_a_fresh_process_loads_the_snapshot_and_only_the_facts_after_it(opened: Any) -> None:
    app, cid = seeded(opened)
    at = app.ledger(cid).last_seq
    for minutes in (10, 20, 30):
        app.advance_time(cid, minutes)
    fresh = opened(ledger_window=5000)
    got = everything(fresh, cid)
    assert fresh.cache_stats["from_snapshot"] == 1
    ledger = fresh.ledger(cid)
    assert ledger.entries.resident <= 3 + ledger.entries._page  # the three new facts (and a page read back)
    assert ledger.entries._count == at + 3 - 1
    assert got == scratch(opened, cid)


def test_a_snapshot_then_a_correction_reaching_back_before_it_refolds_like_from_scratch(opened: Any) -> None:
    app, cid = seeded(opened)
    early = next(e.seq for e in app.ledger(cid).entries if e.type == "AttackMade")
    app.revoke(cid, early, "that attack never happened", cascade="fact")
    fresh = opened()
    got = everything(fresh, cid)
    assert fresh.cache_stats["from_snapshot"] == 1
    assert fresh.ledger(cid).refolded_from <= early  # the restored fold was redone from before it
    assert got == scratch(opened, cid)
    # the next snapshot is folded under the new reading
    fresh.write_snapshot(cid)
    again = opened()
    assert everything(again, cid) == got
    assert again.cache_stats["from_snapshot"] == 1


def test_a_correction_that_refolds_far_back_is_snapshotted_so_a_fresh_process_starts_after_it(
    opened: Any,
) -> None:
    """A correction that refolds more than ``snapshot_every`` facts asks for a snapshot at once: a
    fresh process (a replica, a restart) then restores the corrected fold and refolds nothing."""
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    app.write_snapshot(cid)
    early = next(e.seq for e in app.ledger(cid).entries if e.type == "AttackMade")
    assert app.ledger(cid).last_seq - early >= 200
    revoked = app.revoke(cid, early, "that attack never happened", cascade="fact").position
    assert app.snapshot_writer is not None and app.snapshot_writer.flush(60)
    assert app.snapshots.latest(cid, FOLD)[0].position == revoked
    fresh = opened()
    ledger = fresh.ledger(cid)
    assert fresh.cache_stats["from_snapshot"] == 1
    assert ledger.refolded_from == INF  # restored under the revocation: nothing refolded
    assert everything(fresh, cid) == scratch(opened, cid)


def test_the_snapshot_writer_gives_way_to_a_command_and_then_stores_what_it_did(opened: Any) -> None:
    """A snapshot write that would start while a command is in progress waits for it (the
    correction and the dump would share one interpreter), then stores the present after it."""
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    app.write_snapshot(cid)
    writer = app.snapshot_writer
    assert writer is not None and writer.flush(60)  # nothing else in progress
    before = app.snapshots.latest(cid, FOLD)[0].position
    late = app.ledger(cid).last_seq - 5
    done: list[int] = []
    lock = app._lock(cid)
    with lock:  # the command below is in progress, waiting for the campaign
        worker = threading.Thread(target=lambda: done.append(app.revoke(cid, late, "no").position))
        worker.start()
        assert _until(lambda: writer.commands == 1)
        writer.request(cid, app._campaigns[cid])
        assert _until(lambda: writer.waiting)  # gave way before capturing anything
        assert app.snapshots.latest(cid, FOLD)[0].position == before
    worker.join(60)
    assert done and writer.flush(60)
    assert app.snapshots.latest(cid, FOLD)[0].position == done[0]  # captured after the command
    assert writer.failed == 0 and writer.paused_s > 0


def test_a_correction_near_the_head_asks_for_no_snapshot(opened: Any) -> None:
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    app.write_snapshot(cid)
    # what the import and the load asked for is written first (the writer gives way to commands:
    # a request still pending would be written after the revoke, at its position)
    assert app.snapshot_writer is not None and app.snapshot_writer.flush(60)
    before = app.snapshots.latest(cid, FOLD)[0].position
    late = app.ledger(cid).last_seq - 5
    app.revoke(cid, late, "not that one", cascade="fact")
    assert app.snapshot_writer is not None and app.snapshot_writer.flush(60)
    assert app.snapshots.latest(cid, FOLD)[0].position == before


def _until(pred: Any) -> bool:
    return eventually(pred, 10.0)


def _rewrite(app: ChronicleApplication, cid: UUID, **changes: Any) -> None:
    row = app.snapshots.latest(cid, FOLD)[0]
    app.snapshots.write(dataclasses.replace(row, **changes))


@pytest.mark.parametrize("case", ["ruleset version", "flags", "fingerprint", "corrupt row", "other campaign"])
def test_a_snapshot_that_does_not_fit_is_discarded_and_the_fold_is_the_same(
    opened: Any, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app, cid = seeded(opened)
    rules = get_ruleset("stellar-winds")
    if case == "ruleset version":
        monkeypatch.setattr(type(rules), "version", "999")  # the rules changed since it was folded
    elif case == "flags":  # a flag's default changed: the starting flags differ
        monkeypatch.setattr(
            type(rules), "flag_defaults", {**rules.flag_defaults, "sw.first_aid_stabilize_dc": 12}
        )
    elif case == "fingerprint":
        import json
        import zlib

        data = json.loads(zlib.decompress(app.snapshots.latest(cid, FOLD)[0].data))
        data["fingerprint"] = "f" * 64
        _rewrite(app, cid, data=zlib.compress(json.dumps(data).encode()))
    elif case == "corrupt row":
        _rewrite(app, cid, data=b"\x00 not a snapshot")
    else:
        other = app.import_campaign(HEADER, facts(300, 9))
        app.write_snapshot(other)
        row = app.snapshots.latest(other, FOLD)[0]
        app.snapshots.delete(cid)
        app.snapshots.write(dataclasses.replace(row, campaign_id=cid))
    fresh = opened()
    got = everything(fresh, cid)
    assert fresh.cache_stats["from_snapshot"] == 0
    assert fresh.cache_stats["discarded"] == 1
    assert fresh.snapshots.latest(cid, FOLD) == []  # the misfit is gone
    assert got == scratch(opened, cid)


def test_writing_snapshots_while_commands_run_loses_no_fact(opened: Any) -> None:
    """The writer snapshots after every fact while four threads record: every fact is stored
    once, and the campaign (and a process loading its last snapshot) reads as from scratch."""
    app, cid = seeded(opened, size=300)
    app.snapshot_every = 1
    start = app.ledger(cid).last_seq
    errors: list[BaseException] = []

    def play(n: int) -> None:
        try:
            for k in range(15):
                app.advance_time(cid, 1 + n * 100 + k)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert app.snapshot_writer is not None and app.snapshot_writer.flush(60)
    assert app.snapshot_writer.failed == 0 and app.snapshot_writer.written > 0
    ledger = app.ledger(cid)
    assert ledger.last_seq == start + 60
    added = sorted(e.payload["minutes"] for e in ledger.entries[start - 1 :])
    assert added == sorted(1 + n * 100 + k for n in range(4) for k in range(15))
    fresh = opened()
    assert everything(fresh, cid) == everything(app, cid) == scratch(opened, cid)
    assert fresh.cache_stats["from_snapshot"] == 1


def test_the_snapshot_table_sits_beside_the_events(app: ChronicleApplication, store: Settings) -> None:
    cid = app.import_campaign(HEADER, facts(120, 2))
    app.write_snapshot(cid)
    assert app.snapshots.count() == 1
    row = app.snapshots.latest(cid, FOLD)[0]
    assert isinstance(row, SnapshotRow)
    assert (row.ruleset, row.ruleset_version, row.position) == (
        "stellar-winds",
        STELLAR_WINDS.version,
        app.ledger(cid).last_seq,
    )
    if store.database.kind == "postgresql":  # schema-qualified like the events
        from tests.conftest import connect

        with connect(store.database) as conn:
            found = conn.execute(
                "SELECT table_schema FROM information_schema.tables WHERE table_name = 'chronicle_snapshots'"
            ).fetchall()
        assert (store.database.schema,) in found


def lived(opened: Any, size: int, seed: int) -> tuple[ChronicleApplication, UUID]:
    """A campaign played command by command (so its recorded checkpoints exist), snapshotted."""
    app = opened()
    cid = app.create_campaign("Lived")
    for fact_type, _version, payload, meta in facts(size, seed):
        app.record(cid, fact_type, payload, meta=meta)
    app.write_snapshot(cid)
    return app, cid


def test_after_a_restart_as_of_and_early_corrections_start_from_persisted_checkpoints(opened: Any) -> None:
    app, cid = lived(opened, 1100, 4)
    rows = app.snapshots.points(cid)
    assert {kind for kind, *_ in rows} == {"corrected", "recorded"}
    assert any(not base for *_, base, _ in rows), "checkpoints after the first are stored as deltas"
    fresh = opened()
    ledger = fresh.ledger(cid)
    fresh.summary(cid)
    assert any(p.stored for p in ledger._checkpoints) and any(p.stored for p in ledger._recorded)
    reference = opened(snapshot_every=0)
    positions = [300, 555, 700, 1000]
    for p in positions:
        for view in ("corrected", "recorded"):
            assert fresh.summary(cid, p, view) == reference.summary(cid, p, view), (p, view)
    early = next(e.seq for e in ledger.entries if e.type == "AttackMade")
    fresh.revoke(cid, early, "never happened")
    assert everything(fresh, cid) == scratch(opened, cid)
    fresh.write_snapshot(cid)  # the corrected checkpoints after the revoked fact are rewritten
    after = opened(snapshot_every=0)
    for p in positions:  # no checkpoint rebuilt before the revocation is used after it
        assert fresh.summary(cid, p) == after.summary(cid, p), p
    again = opened()
    assert everything(again, cid) == everything(fresh, cid)


def test_an_import_is_served_from_the_snapshot_its_validation_folded(opened: Any) -> None:
    """The import's dry run went through the campaign fact by fact, as the table did: its fold
    (what the table believed at every checkpoint included) becomes the new campaign's first
    snapshot, so the imported campaign answers like the original without a refold."""
    from api.exports import service

    app, cid = lived(opened, 900, 6)
    text = "".join(service.export(app, cid, "jsonl"))
    new = service.import_lines(app, text.splitlines(keepends=True))
    rows = app.snapshots.points(new)
    assert app.snapshots.latest(new) and any(kind == "recorded" for kind, *_ in rows)
    fresh = opened()
    for p in (None, 300, 650, 880):
        for view in ("corrected", "recorded"):
            got, want = fresh.summary(new, p, view), app.summary(cid, p, view)
            assert got == want, (p, view)
    assert fresh.cache_stats["from_snapshot"] == 1
    assert "".join(service.export(fresh, new, "jsonl")).splitlines()[1:] == text.splitlines()[1:]


def test_facts_read_back_are_the_facts_the_library_decodes(app: ChronicleApplication) -> None:
    """A paged ledger's loader decodes stored rows itself: it must give exactly the entries the
    library's own event objects give (payloads, envelopes, timestamps)."""
    cid = app.import_campaign(HEADER, facts(200, 7))
    ours = app._loader(cid)(2, app.ledger(cid).last_seq)
    theirs = [e.entry() for e in app.events.get(cid, gt=1)]  # type: ignore[attr-defined]
    assert ours == theirs and len(ours) == app.ledger(cid).last_seq - 1


def test_two_processes_snapshotting_one_campaign_at_once_both_succeed(opened: Any) -> None:
    """Replicas write the same campaign's snapshot rows concurrently: upserts, no conflict."""
    first, cid = seeded(opened, size=700)
    first.advance_time(cid, 5)
    apps = [opened(), opened(), opened()]
    for app in apps:
        app.campaign(cid)
        app._points_have.pop(cid, None)  # as if nothing were stored yet: every row is written
    errors: list[BaseException] = []

    def write(app: ChronicleApplication) -> None:
        try:
            app.write_snapshot(cid)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(app,)) for app in apps]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert everything(opened(), cid) == scratch(opened, cid)


def test_a_stored_checkpoint_rebuilt_from_one_rebuilt_before_it_is_the_same(opened: Any) -> None:
    """The point loader rebuilds a checkpoint from the newest one it rebuilt lately whose rows
    are a prefix of its own: in any order, every stored checkpoint comes out exactly as a
    loader that rebuilds it from its full state and every delta after it."""
    import random

    app, cid = lived(opened, 2200, 5)
    ledger = app.ledger(cid)
    rules = ledger.ruleset
    for kind in ("corrected", "recorded"):
        positions = sorted(p for k, p, *_ in app.snapshots.points(cid) if k == kind)
        assert len(positions) > 3, kind
        order = positions + positions[::-1] + random.Random(7).sample(positions, len(positions))
        warm = app._point_loader(cid, kind, ledger)
        for p in order:
            state, orphans = warm(p)
            # (a loader keeping its own rows: the application's loaders share theirs)
            cold = point_loader(
                rules,
                ledger.checkpoint_every,
                lambda q: app.snapshots.chain(cid, kind, q),  # noqa: B023
            )
            cold_state, cold_orphans = cold(p)
            assert rules.dump_state(state) == rules.dump_state(cold_state), (kind, p)
            assert dict(orphans) == dict(cold_orphans), (kind, p)
            state.creatures.clear()  # a private copy: changing it changes no later answer


@pytest.mark.parametrize("cache_mb", [32, 0])
def test_a_reloaded_campaign_rebuilds_stored_checkpoints_from_rows_kept(opened: Any, cache_mb: int) -> None:
    """The stored checkpoint rows an application loaded are kept for all its campaigns' point
    loaders (CHRONICLE_CHECKPOINT_CACHE_MB): after the campaign is dropped from memory and
    loaded again (new loaders), an as-of far back rebuilds its checkpoint without decoding a
    row; with the setting at 0 nothing is kept and each rebuild decodes its rows again."""
    _, cid = lived(opened, 1100, 4)
    fresh = opened(checkpoint_cache_mb=cache_mb)
    rows = fresh.checkpoint_rows
    assert fresh.summary(cid, 300) and fresh.summary(cid, 555, "recorded")
    decoded = rows.misses
    assert decoded > 0
    fresh._forget(cid)
    assert fresh.summary(cid, 300) and fresh.summary(cid, 555, "recorded")
    if cache_mb:
        assert rows.misses == decoded and rows.hits >= decoded
        assert 0 < rows.size <= cache_mb * 1_000_000
    else:
        assert rows.misses == 2 * decoded and len(rows) == 0


def _revoke_early(app: ChronicleApplication, cid: UUID) -> int:
    early = next(e.seq for e in app.ledger(cid).entries if e.type == "AttackMade")
    assert app.ledger(cid).last_seq - early >= app.snapshot_every
    return app.revoke(cid, early, "that attack never happened", cascade="fact").position


def test_the_fold_snapshot_of_a_far_reaching_correction_is_stored_before_its_checkpoints(opened: Any) -> None:
    """After an early correction every later checkpoint is written again (hundreds of rows in a
    long campaign). The fold snapshot goes first: a process stopped while the checkpoints are
    written still leaves a snapshot under the correction, and a fresh process starts from it."""
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    app.write_snapshot(cid)
    writer = app.snapshot_writer
    assert writer is not None and writer.flush(60)

    def stopped(rows: list[SnapshotRow]) -> None:  # the process stops before any checkpoint row
        raise RuntimeError("stopped")

    app.snapshots.write_points = stopped  # type: ignore[method-assign]
    revoked = _revoke_early(app, cid)
    assert writer.flush(60) and writer.failed == 1
    assert app.snapshots.latest(cid, FOLD)[0].position == revoked
    fresh = opened()
    got = everything(fresh, cid)  # as-of included: the missing checkpoints are folded around
    assert fresh.cache_stats["from_snapshot"] == 1
    assert fresh.ledger(cid).refolded_from == INF  # restored under the revocation: nothing refolded
    assert got == scratch(opened, cid)


def test_a_newer_snapshot_of_the_campaign_takes_over_the_checkpoints_left(
    opened: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a snapshot's checkpoints are written, a newer snapshot of the same campaign is
    asked for: the write in progress stops after its batch, and the newer one (its fold first)
    writes the rest from its own capture. Nothing is lost: every checkpoint ends up stored."""
    monkeypatch.setattr(application_module, "POINTS_BATCH", 1)
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    app.write_snapshot(cid)
    writer = app.snapshot_writer
    assert writer is not None and writer.flush(60)
    order: list[str] = []
    write_points, write = app.snapshots.write_points, app.snapshots.write

    def points(rows: list[SnapshotRow]) -> None:
        if not any(what.startswith("corrected") for what in order):  # the first after the correction
            writer.request(cid, app._campaigns[cid])
        order.extend(f"{r.kind}@{r.position}" for r in rows)
        write_points(rows)

    def fold(row: SnapshotRow) -> None:
        order.append(f"fold@{row.position}")
        write(row)

    app.snapshots.write_points = points  # type: ignore[method-assign]
    app.snapshots.write = fold  # type: ignore[method-assign]
    _revoke_early(app, cid)
    assert writer.flush(60) and writer.failed == 0
    folds = [i for i, what in enumerate(order) if what.startswith("fold@")]
    assert order[0].startswith("fold@") and order[1].startswith("corrected@"), order
    assert folds[:2] == [0, 2], order  # one checkpoint row, then the newer snapshot's fold
    ledger = app.ledger(cid)
    stored = {(kind, p) for kind, p, *_ in app.snapshots.points(cid)}
    for kind, series in ((CORRECTED_POINTS, ledger._checkpoints), (RECORDED_POINTS, ledger._recorded)):
        assert {(kind, p.seq) for p in series.points if p is not None} <= stored
    assert everything(opened(), cid) == scratch(opened, cid)


def test_a_command_that_starts_while_the_fold_snapshot_is_dumped_holds_its_encoding_and_write(
    opened: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fold snapshot's dump, its encoding and its write are steps of seconds each in a long
    campaign; a command that starts between them (the next correction) runs alone."""
    app = opened(snapshot_every=200)
    cid = app.import_campaign(HEADER, facts(700, 3))
    writer = app.snapshot_writer
    assert writer is not None and writer.flush(60)
    command = contextlib.ExitStack()
    dumped = threading.Event()
    to_json = Capture.to_json

    def dump_then_a_command_starts(capture: Capture, *args: Any) -> dict[str, Any]:
        out = to_json(capture, *args)
        command.enter_context(writer.giving_way())
        dumped.set()
        return out

    monkeypatch.setattr(Capture, "to_json", dump_then_a_command_starts)
    before = app.snapshots.latest(cid, FOLD)[0].position
    app.advance_time(cid, 10)
    writer.request(cid, app._campaigns[cid])
    assert dumped.wait(60) and _until(lambda: writer.waiting)
    assert app.snapshots.latest(cid, FOLD)[0].position == before  # held while the command runs
    command.close()
    assert writer.flush(60) and app.snapshots.latest(cid, FOLD)[0].position == app.ledger(cid).last_seq


def test_checkpoints_stored_at_another_spacing_are_discarded_and_rewritten_at_the_current_one(
    opened: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoints persisted by a version that spaced them differently (twice as far apart
    here) do not chain at the current spacing: a fresh process drops the rows that cannot be
    rebuilt, reads exactly as a fold from scratch, and the next snapshot stores its checkpoints
    at the current spacing."""
    from domain.ledger import Ledger

    now = Ledger.__init__.__kwdefaults__["checkpoint_every"]  # type: ignore[index]
    old = 2 * now
    for method in (Ledger.__init__, Ledger.restore.__func__):  # type: ignore[attr-defined]
        monkeypatch.setitem(method.__kwdefaults__, "checkpoint_every", old)
    _, cid = lived(opened, 1100, 4)
    stored = opened().snapshots.points(cid)
    assert stored and all((p - 1) % old == 0 for _, p, *_ in stored), "stored at the old spacing"
    monkeypatch.undo()

    fresh = opened()
    assert fresh.ledger(cid).checkpoint_every == now
    assert everything(fresh, cid) == scratch(opened, cid)
    kept = fresh.snapshots.points(cid)
    assert len(kept) < len(stored), "the deltas that do not chain at the current spacing are dropped"
    reference = opened(snapshot_every=0)
    for p in (200, 300, 555, 700, 1000):
        for view in ("corrected", "recorded"):
            assert fresh.summary(cid, p, view) == reference.summary(cid, p, view), (p, view)
    fresh.write_snapshot(cid)
    rows = fresh.snapshots.points(cid)
    positions = {p for _, p, *_ in rows}
    assert any((p - 1) % old for p in positions), "the new checkpoints are at the current spacing"
    again = opened()
    assert everything(again, cid) == everything(fresh, cid)


def test_as_of_from_stored_rows_reads_as_a_fold_from_scratch_at_and_between_every_checkpoint(
    opened: Any,
) -> None:
    """A fresh process answers an as-of from the stored checkpoint before the position -- its full
    row and the deltas after it, at the stored rhythm (``Points.full_rhythm``) -- and the facts
    after it (read while the checkpoint is rebuilt): at every stored checkpoint and on the last
    position before the next one, in both views, it reads as a process folding from scratch."""
    app, cid = lived(opened, 1100, 4)
    rows = app.snapshots.points(cid)
    assert sum(base for *_, base, _ in rows) >= 4, "more than one full row per series"
    fresh = opened()
    reference = opened(snapshot_every=0)
    ledger = fresh.ledger(cid)
    every = ledger.checkpoint_every
    for kind in ("corrected", "recorded"):
        for p in sorted(p for k, p, *_ in rows if k == kind):
            for q in (p, min(p + every - 1, ledger.last_seq)):
                assert fresh.summary(cid, q, kind) == reference.summary(cid, q, kind), (kind, q)
    assert fresh.checkpoint_rows.misses > 0, "the checkpoints were rebuilt from their rows"


def test_a_checkpoint_row_written_again_at_its_position_is_read_again_not_served_from_the_cache(
    opened: Any,
) -> None:
    """Loaded checkpoint rows are kept for every loader of the application (``CheckpointRows``),
    and a warm rebuild decodes none. A row written again at the same position -- as a
    correction's refold does, or another replica -- is another row: the next rebuild, by the
    warm loader or a new one, reads it, and never answers with the row it replaced."""
    app, cid = lived(opened, 700, 4)
    ledger = app.ledger(cid)
    rules = ledger.ruleset
    row = next(r for r in app.snapshots.latest(cid, CORRECTED_POINTS) if not r.base)
    load = app._point_loader(cid, CORRECTED_POINTS, ledger)
    before, _ = load(row.position)
    decoded = app.checkpoint_rows.misses
    again, _ = load(row.position)
    assert app.checkpoint_rows.misses == decoded, "a warm rebuild decodes nothing"
    assert rules.dump_state(again) == rules.dump_state(before)

    data = row.decode()
    name, creature = next(iter(data["state"]["creatures"].items()))
    creature["hp"] = creature["hp"] + 1000
    app.snapshots.write_points([dataclasses.replace(row, data=encode(data))])
    for loader in (load, app._point_loader(cid, CORRECTED_POINTS, ledger)):  # the warm one, a new one
        after, _ = loader(row.position)
        assert after.creatures[name].hp == before.creatures[name].hp + 1000, "the row written again is read"
    assert load(row.position)[0].creatures[name].hp == before.creatures[name].hp + 1000
