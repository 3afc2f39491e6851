"""What the read models write, counted by the database itself, and how a live worker batches.

- Row writes are counted by triggers on the real tables (SQLite and PostgreSQL): a fact writes
  the rows of what it changed and no others (an untouched creature's row is not rewritten, not
  even with the same values).
- The rows of a batch read back as ``ViewStore._values`` stores them, whatever
  the backend's write path (PostgreSQL sends a batch as JSON): text and JSON escaped, the
  typed conveniences NULL when not 32-bit integers, a rewrite keeping its notification id.
- A listening worker (PostgreSQL) is woken by the events channel, not by its poll, and projects
  what arrives within its batching window in one step.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.settings import Settings, parse_database_url
from api.service.store import open_application
from projections.projector import Batch, Failure, creature_row
from projections.runner import Follower, wait_for
from projections.storage import PostgresViews, ViewStore
from tests.conftest import connect
from tests.integration.test_projections import ABILITIES, DEFENSES, register
from tests.waiting import eventually

KEYS = {
    "view_creatures": "creature_id",
    "view_encounters": "encounter_id",
    "view_facts": "position",
    "view_log": "position",
}


def count_writes(views: ViewStore) -> None:
    """Triggers recording every row inserted or updated in the four view tables (``written``)."""
    if isinstance(views, PostgresViews):
        p = views.prefix
        views._execute(f"CREATE TABLE {p}written (tbl TEXT, k TEXT)")
        views._execute(
            f"CREATE FUNCTION {p}count_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"INSERT INTO {p}written VALUES (TG_TABLE_NAME, to_jsonb(NEW) ->> TG_ARGV[0]); "
            "RETURN NULL; END $$"
        )
        for table, key in KEYS.items():
            views._execute(
                f"CREATE TRIGGER count_{table} AFTER INSERT OR UPDATE ON {p}{table} "
                f"FOR EACH ROW EXECUTE FUNCTION {p}count_write('{key}')"
            )
        return
    views._execute("CREATE TABLE written (tbl TEXT, k TEXT)")
    for table, key in KEYS.items():
        for event in ("INSERT", "UPDATE"):
            views._execute(
                f"CREATE TRIGGER count_{table}_{event.lower()} AFTER {event} ON {table} "
                f"BEGIN INSERT INTO written VALUES ('{table}', CAST(new.{key} AS TEXT)); END"
            )


def writes(views: ViewStore) -> dict[str, list[str]]:
    """The rows written since the last call, per table (and forget them)."""
    rows = views._fetch(f"SELECT tbl, k FROM {views.prefix}written")
    views._execute(f"DELETE FROM {views.prefix}written")
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["tbl"], []).append(r["k"])
    return {t: sorted(ks) for t, ks in out.items()}


def test_a_fact_writes_only_the_rows_it_changes_counted_by_the_database(
    app: ChronicleApplication, store: Settings, views: ViewStore
) -> None:
    """Counted by triggers on the tables: a hit on one creature writes that creature's row and
    the fact's history and log rows, nothing else; a revoke rewrites the creature, its own rows
    and the revoked fact's (now struck), nothing else."""
    cid = register(app)
    count_writes(views)
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
        first = writes(views)
        assert first["view_creatures"] == ["orc", "traze", "vex"]
        hit = StellarWindsCommands(app).deal_damage(cid, "orc", amount=4).position
        follower.catch_up()
        assert writes(views) == {"view_creatures": ["orc"], "view_facts": [str(hit)], "view_log": [str(hit)]}
        undo = app.revoke(cid, hit, "wrong target").position
        follower.catch_up()
        assert writes(views) == {
            "view_creatures": ["orc"],
            "view_facts": sorted([str(hit), str(undo)]),
            "view_log": sorted([str(hit), str(undo)]),
        }
        orc = views.get_creature(str(cid), "orc")
        assert orc is not None and orc["hp"] == orc["max_hp"]
    finally:
        follower.close()


def test_one_creature_changing_among_many_writes_one_row_and_views_one(
    app: ChronicleApplication, store: Settings, views: ViewStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Among 40 creatures, a batch that hits one views that one (the fold's journal of changes)
    and writes its row alone, counted by the database; the rows equal a rebuild's."""
    from domain.rulesets.stellar_winds import StellarWinds

    cid = register(app)
    commands = StellarWindsCommands(app)
    for k in range(37):
        commands.register_creature(
            cid,
            creature_id=f"crowd{k}",
            name=f"Crowd {k}",
            kind="monster",
            level=1,
            abilities=ABILITIES,
            max_hp=10,
            surges_per_day=0,
            defenses=DEFENSES,
        )
    viewed: list[str] = []
    real = StellarWinds.creature_view

    def counting(self: StellarWinds, state: Any, creature_id: str) -> dict[str, Any]:
        viewed.append(creature_id)
        return real(self, state, creature_id)

    monkeypatch.setattr(StellarWinds, "creature_view", counting)
    count_writes(views)
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
        assert len(writes(views)["view_creatures"]) == 40
        viewed.clear()
        hit = commands.deal_damage(cid, "crowd17", amount=3).position
        follower.catch_up()
        assert viewed == ["crowd17"]
        assert writes(views) == {
            "view_creatures": ["crowd17"],
            "view_facts": [str(hit)],
            "view_log": [str(hit)],
        }
        incremental = follower.views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert follower.views.dump(written_at=False) == incremental
    finally:
        follower.close()


def test_an_encounter_starting_reviews_only_its_participants(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The active encounter changing (started, ended) re-views the creatures taking part and the
    encounters active before and after, not every creature and encounter of the campaign; a
    flag views read re-views them all."""
    from domain.rulesets.stellar_winds import StellarWinds

    cid = register(app)
    for name in ("by1", "by2"):  # bystanders: in no encounter
        StellarWindsCommands(app).register_creature(
            cid,
            creature_id=name,
            name=name,
            kind="monster",
            level=1,
            abilities=ABILITIES,
            max_hp=10,
            surges_per_day=0,
            defenses=DEFENSES,
        )
    app.record(cid, "EncounterStarted", {"encounter_id": "e0", "name": "Old", "participants": ["by1"]})
    app.record(cid, "EncounterEnded", {"encounter_id": "e0", "outcome": "done"})
    viewed: list[str] = []
    real = StellarWinds.creature_view

    def counting(self: StellarWinds, state: Any, creature_id: str) -> dict[str, Any]:
        viewed.append(creature_id)
        return real(self, state, creature_id)

    monkeypatch.setattr(StellarWinds, "creature_view", counting)
    follower = wiring.follower(store, app, batch_size=500)
    try:
        follower.catch_up()
        viewed.clear()
        app.record(
            cid, "EncounterStarted", {"encounter_id": "e1", "name": "Bridge", "participants": ["vex", "orc"]}
        )
        follower.catch_up()
        assert sorted(set(viewed)) == ["orc", "vex"]
        viewed.clear()
        app.record(cid, "EncounterEnded", {"encounter_id": "e1", "outcome": "they part"})
        follower.catch_up()
        assert sorted(set(viewed)) == ["orc", "vex"]
        viewed.clear()
        app.set_flag(cid, "xp_table", [0, 100, 200, 300, 400, 500, 600])
        follower.catch_up()
        assert sorted(set(viewed)) == ["by1", "by2", "orc", "traze", "vex"]
        incremental = follower.views.dump(written_at=False)
        wiring.rebuild(store, application=app)
        assert follower.views.dump(written_at=False) == incremental
    finally:
        follower.close()


def _batch(cid: str, rows: list[dict[str, Any]], nid: int | None, tracking: tuple[int, int]) -> Batch:
    fact = {
        "campaign_id": cid,
        "position": 2,
        "notification_id": nid,
        "fact_type": "NoteAdded\x00",
        "recorded_at": "2026-12-02T00:00:00",
        "creatures": ["a\ud800"],
        "encounter_id": None,
        "round": 2**31,  # no 32-bit integer: NULL in the typed column
        "active": True,
        "revoked": False,
        "amended": False,
        "orphaned": False,
        "overridden": False,
        "revoked_by": None,
        "orphan_reason": None,
        "payload": {"text": "nul \x00 and \ue000", "x": math.inf},
        "outcome": None,
    }
    batch = Batch(tracking={p: tracking for p in ("creatures", "encounters", "facts", "log")})
    batch.creatures[cid] = rows
    batch.facts[(cid, 2)] = fact
    return batch


@pytest.mark.parametrize("new_rows", ["upserted", "inserted new"])
def test_a_batch_reads_back_as_written_on_either_store(views: ViewStore, new_rows: str) -> None:
    """Whatever a backend's write path: escaped text and JSON read back exactly, a convenience
    that is no 32-bit integer is NULL (its ``state`` keeps it), a name that is no text is stored
    as text, and a rewrite without a notification id keeps the one the row has. ``inserted
    new``: the new fact's row goes the way of a large batch's new rows (PostgreSQL: ``COPY``)."""
    if new_rows == "inserted new":
        views.insert_new_from = 1
    cid = "6f1c1c9e-0000-4000-8000-000000000001"
    odd = creature_row(
        cid,
        2,
        {
            "id": "z\ud800",
            "name": 7,
            "level": True,
            "hit_points": {"current": 2**40, "max": 10},
            "v": -math.inf,
        },
        "rs",
    )
    assert views.write(_batch(cid, [odd], 11, (0, 11)))
    row = views.get_creature(cid, "z\ud800")
    assert row is not None
    assert (row["name"], row["level"], row["hp"], row["max_hp"]) == ("7", None, None, 10)
    assert row["state"]["hit_points"]["current"] == 2**40 and row["state"]["v"] == -math.inf
    [fact] = views.history(cid)
    assert fact["fact_type"] == "NoteAdded\x00" and fact["creatures"] == ["a\ud800"]
    assert fact["payload"] == {"text": "nul \x00 and \ue000", "x": math.inf}
    assert (fact["round"], fact["notification_id"], fact["outcome"]) == (None, 11, None)
    # a rewrite: new values, no notification id (kept), the other creature row untouched
    again = creature_row(cid, 3, {"id": "z\ud800", "name": "Zed", "level": 4}, "rs")
    assert views.write(_batch(cid, [again], None, (11, 12)))
    row = views.get_creature(cid, "z\ud800")
    assert row is not None and (row["name"], row["level"], row["hp"], row["position"]) == ("Zed", 4, None, 3)
    [fact] = views.history(cid)
    assert fact["notification_id"] == 11
    assert not views.write(_batch(cid, [again], None, (11, 13)))  # stale tracking: nothing written


@pytest.mark.postgres
def test_a_new_row_found_already_written_is_upserted_with_its_batch(postgres_store: Settings) -> None:
    """Rows past the tracking are taken to be new and copied in; one that exists after all (a
    campaign repaired ahead of the followers' tracking) fails the copy, and the batch is written
    again with every row upserted: it commits, and the row holds the batch's values."""
    views = wiring.open_views(postgres_store)
    try:
        assert isinstance(views, PostgresViews)
        views.insert_new_from = 1
        cid = "6f1c1c9e-0000-4000-8000-000000000002"
        copied: list[int] = []
        real = views._insert_new

        def spy(table: str, rows: list[dict[str, Any]]) -> None:
            copied.append(len(rows))
            real(table, rows)

        views._insert_new = spy  # type: ignore[method-assign]
        assert views.write(_batch(cid, [], 11, (0, 11)))
        assert copied == [1]
        views._execute(f"UPDATE {views.prefix}view_tracking SET notification_id = 0")
        again = _batch(cid, [], 11, (0, 11))
        again.facts[(cid, 2)]["payload"] = {"text": "again"}
        assert views.write(again)
        [fact] = views.history(cid)
        assert fact["payload"] == {"text": "again"} and fact["notification_id"] == 11
        assert views.tracking_position() == 11
    finally:
        views.close()


@pytest.mark.postgres
def test_a_live_batch_is_one_statement_that_writes_nothing_when_stale(postgres_store: Settings) -> None:
    """A live step's batch (a few rows, one tracking move) is written by one statement in
    autocommit, no transaction around it; it checks the tracking and the quarantines itself, and
    a stale batch (the tracking moved, or a campaign quarantined or lifted meanwhile) writes
    nothing at all: no row and no tracking move. A batch with a quarantine to record (or
    deletions, or a catch-up's rows) takes its transaction."""
    views = wiring.open_views(postgres_store)
    try:
        assert isinstance(views, PostgresViews)
        cid = "6f1c1c9e-0000-4000-8000-000000000003"
        row = creature_row(cid, 2, {"id": "vex", "name": "Vex"}, "rs")
        transactions: list[str] = []
        real = views._transaction

        def spy() -> Any:
            transactions.append("BEGIN")
            return real()

        views._transaction = spy  # type: ignore[method-assign]
        assert views.write(_batch(cid, [row], 11, (0, 11)))
        assert transactions == [] and views.tracking_position() == 11
        assert views.get_creature(cid, "vex") is not None and len(views.history(cid)) == 1
        other = "6f1c1c9e-0000-4000-8000-000000000004"
        row = creature_row(other, 2, {"id": "vex", "name": "Vex"}, "rs")
        stale = [
            _batch(other, [row], 12, (5, 12)),  # the tracking is elsewhere
            _batch(other, [row], 12, (11, 12)),  # a campaign quarantined meanwhile (below)
        ]
        views._execute(f"INSERT INTO {views._t('view_quarantine')} VALUES ('{cid}', 2, 11, 'bad', 'now')")
        for batch in stale:
            assert not views.write(batch)
        lifted = _batch(other, [row], 12, (11, 12))
        lifted.quarantined = frozenset({cid, other})  # one more than quarantined
        assert not views.write(lifted)
        swapped = _batch(other, [row], 12, (11, 12))
        swapped.quarantined = frozenset({other})  # as many, another campaign
        assert not views.write(swapped)
        assert transactions == [] and views.tracking_position() == 11
        assert views.history(other) == [] and views.list_creatures(other) == []
        known = _batch(other, [row], 12, (11, 12))
        known.quarantined = frozenset({cid})
        assert views.write(known) and views.tracking_position() == 12
        assert len(views.history(other)) == 1 and transactions == []
        failing = _batch(other, [], 13, (12, 13))
        failing.quarantined = frozenset({cid})
        failing.failed[other] = Failure(other, 3, 13, "ValueError: bad")
        assert views.write(failing) and transactions == ["BEGIN"]
        assert views.quarantined_ids() == {cid, other}
    finally:
        views.close()


@pytest.mark.postgres
@pytest.mark.parametrize("path", ["one statement", "transaction"])
@pytest.mark.parametrize("change", ["lifted", "quarantined"])
def test_a_move_that_waited_for_a_quarantine_change_is_stale(
    postgres_store: Settings, path: str, change: str
) -> None:
    """An operator lifts a campaign's quarantine (``chronicle rebuild --campaign``) or
    quarantines one while a follower's batch -- computed against the quarantines before --
    waits for the tracking rows: once the operator commits, the batch is stale and writes
    nothing (it left out the lifted campaign's facts: moving past them would lose them; it
    holds rows of the campaign just quarantined and emptied)."""
    operator, follower = wiring.open_views(postgres_store), wiring.open_views(postgres_store)
    try:
        assert isinstance(follower, PostgresViews)
        if path == "transaction":
            follower.insert_new_from = 0  # every batch takes the transaction (COPY)
        cid, other = "6f1c1c9e-0000-4000-8000-000000000005", "6f1c1c9e-0000-4000-8000-000000000006"
        row = creature_row(other, 2, {"id": "vex", "name": "Vex"}, "rs")
        assert follower.write(_batch(other, [row], 11, (0, 11)))
        if change == "lifted":
            operator.quarantine(Failure(cid, 2, 5, "ValueError: bad"))
        before = follower.quarantined_ids()
        batch = _batch(other, [row], 12, (11, 12))
        batch.quarantined = before
        written: list[bool] = []
        with operator.holding_tracking():
            if change == "lifted":
                operator.lift_held(cid)
            else:
                operator._record_quarantine([Failure(cid, 2, 5, "ValueError: bad")])
            waiting = threading.Thread(target=lambda: written.append(follower.write(batch)))
            waiting.start()
            assert eventually(lambda: _a_tracking_move_waits(postgres_store), timeout=10)
        waiting.join(10)
        assert written == [False]
        assert follower.tracking_position() == 11 and len(follower.history(other)) == 1
    finally:
        operator.close()
        follower.close()


def _a_tracking_move_waits(store: Settings) -> bool:
    """Whether a statement moving the tracking waits for a lock (seen from a third connection:
    a transaction sees ``pg_stat_activity`` as at its first look)."""
    with connect(parse_database_url(store.database_url)) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query LIKE '%SET notification_id%'"
        ).fetchone()
    return found is not None and found[0] > 0


@pytest.mark.postgres
def test_a_rebuild_copies_the_rows_of_new_facts_and_equals_the_live_rows(
    postgres_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild's transactions (500 notifications) carry hundreds of new history and log rows:
    they are copied in (``COPY``), not upserted, and the rows equal those the live follower wrote
    fact by fact (upserted, a few rows a transaction)."""
    app = open_application(postgres_store)
    try:
        _copied_rebuild_equals_live(app, postgres_store, monkeypatch)
    finally:
        app.close()


def _copied_rebuild_equals_live(
    app: ChronicleApplication, postgres_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    cid = register(app)
    sw = StellarWindsCommands(app)
    for k in range(80):
        sw.deal_damage(cid, ("vex", "orc", "traze")[k % 3], amount=1)
    app.revoke(cid, 10, "misread die", "fact")
    follower = wiring.follower(postgres_store, app, batch_size=1)
    try:
        follower.catch_up()
        live = follower.views.dump(written_at=False)
    finally:
        follower.close()
    copied: dict[str, int] = {}
    real = PostgresViews._insert_new

    def spy(self: PostgresViews, table: str, rows: list[dict[str, Any]]) -> None:
        copied[table] = copied.get(table, 0) + len(rows)
        real(self, table, rows)

    monkeypatch.setattr(PostgresViews, "_insert_new", spy)
    wiring.rebuild(postgres_store, application=app)
    facts = len(app.ledger(cid).entries)
    assert copied == {"view_facts": facts, "view_log": facts}
    views = wiring.open_views(postgres_store)
    try:
        assert views.dump(written_at=False) == live
    finally:
        views.close()


class _Counting(Follower):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads: list[int] = []

    def step(self, limit: int | None = None, committed: Any = None) -> int:
        n = super().step(limit, committed)
        if n:
            self.reads.append(n)
        return n


@pytest.mark.postgres
def test_a_listening_worker_is_woken_by_the_channel_and_batches_its_window(
    postgres_store: Settings,
) -> None:
    """PostgreSQL: with a fallback poll of a minute, the worker still follows at once (the
    events channel wakes it); 20 facts written within its 5-second batching window are
    projected in at most two steps (the first fact's, then the rest), not one step per fact."""
    from api.service.store import open_application

    app = open_application(postgres_store)
    cid = register(app)
    follower = _Counting(
        app,
        lambda: wiring.open_views(postgres_store),
        idle_interval=5.0,
        listen_poll=60.0,
        listen=postgres_store.database,
    )
    views = wiring.open_views(postgres_store)
    try:
        follower.catch_up()
        thread = threading.Thread(target=follower.run, daemon=True)
        thread.start()
        sw = StellarWindsCommands(app)
        follower.reads.clear()
        for _ in range(10):
            sw.deal_damage(cid, "orc", amount=1)
            sw.deal_damage(cid, "vex", amount=1)
        head = app.recorder.max_notification_id() or 0
        assert wait_for(views, head, timeout=30), "not woken: the worker waited for its poll"
        # a step commits its tracking before it returns (and is counted): wait for the count too
        assert eventually(lambda: sum(follower.reads) == 20, timeout=30), follower.reads
        assert len(follower.reads) <= 2, follower.reads
        orc = views.get_creature(str(cid), "orc")
        assert orc is not None and orc["hp"] == orc["max_hp"] - 10
    finally:
        follower.stop(timeout=70)
        follower.close()
        views.close()
        app.close()


def test_a_worker_process_collects_garbage_between_steps_not_during(
    app: ChronicleApplication, store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pause_gc`` (``chronicle worker`` and ``chronicle rebuild``): the cyclic collector waits
    while a step projects and writes, and is on again after it, an error included; a follower
    in a serving process (the default) leaves it alone."""
    import gc

    from projections.projector import Projector

    register(app)
    seen: list[bool] = []
    real = Projector.project

    def project(self: Projector, *args: Any, **kwargs: Any) -> Batch:
        seen.append(gc.isenabled())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Projector, "project", project)
    assert gc.isenabled()
    paused = wiring.follower(store, app, batch_size=500, pause_gc=True)
    try:
        paused.catch_up()
        assert seen == [False] and gc.isenabled()
        monkeypatch.setattr(Projector, "project", lambda *a, **k: 1 / 0)
        StellarWindsCommands(app).deal_damage(register(app), "orc", amount=1)
        with pytest.raises(ZeroDivisionError):
            paused.step()
        assert gc.isenabled()
    finally:
        paused.close()
    monkeypatch.setattr(Projector, "project", project)
    seen.clear()
    StellarWindsCommands(app).deal_damage(register(app), "orc", amount=1)
    serving = wiring.follower(store, app, batch_size=500)
    try:
        serving.catch_up()
        assert seen == [True]
    finally:
        serving.close()


@pytest.mark.postgres
def test_view_commits_do_not_wait_for_the_wal_but_the_event_stores_do(postgres_store: Settings) -> None:
    """Read models are derived from the log: their connection commits asynchronously (a crash
    loses the last view writes whole, rows and tracking together, and the worker projects them
    again), while the event store's connections keep PostgreSQL's synchronous commit."""
    views = wiring.open_views(postgres_store)
    app = open_application(postgres_store)
    try:
        assert isinstance(views, PostgresViews)
        [row] = views._fetch("SHOW synchronous_commit")
        assert row["synchronous_commit"] == "off"
        with app.recorder.datastore.get_connection() as conn, conn.cursor() as cur:  # type: ignore[attr-defined]
            cur.execute("SHOW synchronous_commit")
            assert cur.fetchone()["synchronous_commit"] == "on"
    finally:
        views.close()
        app.close()


@pytest.mark.postgres
def test_what_only_an_operator_writes_to_the_views_waits_for_the_wal(postgres_store: Settings) -> None:
    """The views connection commits asynchronously (the worker projects lost writes again), but
    a quarantine lifted by ``chronicle rebuild`` or ``rebuild --campaign`` is no write the
    worker makes again: those transactions commit synchronously (then every view commit before
    them is flushed too), so a crash just after the command reported success keeps its work.
    A trigger sees each statement's synchronous_commit setting."""
    views = wiring.open_views(postgres_store)
    try:
        assert isinstance(views, PostgresViews)
        seen = views._t("seen_commit")
        views._execute(f"CREATE TABLE {seen} (what TEXT, setting TEXT)")
        views._execute(
            f"CREATE FUNCTION {views.prefix}note_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"INSERT INTO {seen} VALUES (TG_ARGV[0], current_setting('synchronous_commit')); "
            "RETURN NULL; END $$"
        )
        notes = (
            ("lift", "DELETE", "view_quarantine"),
            ("reset", "UPDATE OF notification_id", "view_tracking"),
        )
        for what, event, table in notes:
            views._execute(
                f"CREATE TRIGGER note_{what} AFTER {event} ON {views._t(table)} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {views.prefix}note_commit('{what}')"
            )
        with views.holding_tracking():
            views.lift_held("00000000-0000-0000-0000-000000000001")
        views.reset(["facts"])
        rows = views._fetch(f"SELECT what, setting FROM {seen}")
        assert {(r["what"], r["setting"]) for r in rows} == {("lift", "on"), ("reset", "on")}
        [row] = views._fetch("SHOW synchronous_commit")
        assert row["synchronous_commit"] == "off"  # (SET LOCAL: the session's setting stays)
    finally:
        views.close()
