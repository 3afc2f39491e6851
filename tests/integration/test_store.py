"""The event store, on SQLite and PostgreSQL: what the application writes is in the tables.

These tests read the tables directly, bypassing eventsourcing, to pin down where events
live: SQLite keeps them in ``stored_events`` (one file per application); PostgreSQL in
``<application name>_events``, i.e. ``chronicle_events``, inside the configured schema.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

import pytest
from psycopg import sql

from api.service.application import ChronicleApplication
from api.service.settings import ConfigError, Database, Settings
from api.service.store import check_store, open_application
from domain.campaign import Campaign
from tests.conftest import connect, with_schema

SQLITE_EVENTS_TABLE = "stored_events"
POSTGRES_EVENTS_TABLE = "chronicle_events"


@dataclass(frozen=True)
class Row:
    originator_id: UUID
    originator_version: int
    topic: str


def tables(settings: Settings) -> set[str]:
    db = settings.database
    if db.kind == "sqlite":
        with sqlite3.connect(db.path) as conn:
            return {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    with connect(db) as conn:
        cur = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (db.schema,)
        )
        return {str(name) for (name,) in cur.fetchall()}


def stored_rows(settings: Settings, originator_id: UUID) -> list[Row]:
    db = settings.database
    if db.kind == "sqlite":
        # eventsourcing's SQLite recorder stores UUIDs as 32 hex digits, without dashes.
        with sqlite3.connect(db.path) as conn:
            cursor = conn.execute(
                f"SELECT originator_id, originator_version, topic FROM {SQLITE_EVENTS_TABLE} "
                "WHERE originator_id = ? ORDER BY originator_version",
                (originator_id.hex,),
            )
            return [Row(UUID(i), int(v), str(t)) for i, v, t in cursor.fetchall()]
    query = sql.SQL(
        "SELECT originator_id, originator_version, topic FROM {}.{} WHERE originator_id = %s "
        "ORDER BY originator_version"
    ).format(sql.Identifier(db.schema), sql.Identifier(POSTGRES_EVENTS_TABLE))
    with connect(db) as conn:
        rows = conn.execute(query, (originator_id,)).fetchall()
    return [Row(UUID(str(i)), int(str(v)), str(t)) for i, v, t in rows]


def test_tables_are_created_on_first_open(store: Settings, app: ChronicleApplication) -> None:
    expected = SQLITE_EVENTS_TABLE if store.database.kind == "sqlite" else POSTGRES_EVENTS_TABLE
    assert expected in tables(store)


def test_a_new_campaign_is_a_started_fact_in_the_table(store: Settings, app: ChronicleApplication) -> None:
    campaign_id = app.create_campaign("The Shattered Reach")

    rows = stored_rows(store, campaign_id)

    assert rows == [Row(campaign_id, 1, "chronicle:Campaign.Started")]
    campaign: Campaign = app.repository.get(campaign_id)
    assert (campaign.name, campaign.ruleset) == ("The Shattered Reach", "stellar-winds")


def test_opening_twice_is_idempotent_and_sees_earlier_facts(store: Settings) -> None:
    first = open_application(store)
    try:
        campaign_id = first.create_campaign("Twice Opened")
    finally:
        first.close()

    second = open_application(store)  # the tables exist already
    third = open_application(store)  # and two open at once is fine too
    try:
        assert second.repository.get(campaign_id).name == "Twice Opened"
        other_id = third.create_campaign("Another")
        assert second.repository.get(other_id).name == "Another"
    finally:
        second.close()
        third.close()
    assert len(stored_rows(store, campaign_id)) == 1


def test_check_store_passes_on_an_open_store(app: ChronicleApplication) -> None:
    check_store(app)


def test_check_store_raises_once_the_store_is_gone(store: Settings) -> None:
    app = open_application(store)
    app.close()
    with pytest.raises(Exception):  # noqa: B017 - whatever the driver raises on a closed store
        check_store(app)


def test_a_missing_postgres_schema_is_a_config_error(postgres_database: tuple[str, Database]) -> None:
    url, _ = postgres_database
    with pytest.raises(ConfigError) as caught:
        open_application(Settings(database_url=with_schema(url, "no_such_schema_here")))
    assert caught.value.variable == "CHRONICLE_DATABASE_URL"
    assert "schema 'no_such_schema_here' does not exist" in caught.value.problem


def test_a_missing_postgres_database_is_a_config_error(postgres_database: tuple[str, Database]) -> None:
    url, _ = postgres_database
    bad = urlunsplit(urlsplit(url)._replace(path="/chronicle_no_such_db"))
    with pytest.raises(ConfigError) as caught:
        open_application(Settings(database_url=bad))
    assert 'database "chronicle_no_such_db" does not exist' in caught.value.problem


def test_an_unreachable_postgres_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        open_application(Settings(database_url="postgresql://postgres@127.0.0.1:1/chronicle"))
    assert str(caught.value).startswith(
        "CHRONICLE_DATABASE_URL: cannot reach PostgreSQL at 127.0.0.1:1/chronicle: "
    )


def test_an_unopenable_sqlite_file_is_a_config_error(tmp_path: Path) -> None:
    directory = tmp_path / "is-a-directory.sqlite"
    directory.mkdir()
    with pytest.raises(ConfigError) as caught:
        open_application(Settings(database_url=f"sqlite:///{directory}"))
    assert caught.value.variable == "CHRONICLE_DATABASE_URL"
    assert caught.value.problem.startswith(f"cannot open SQLite database '{directory}': ")


def test_processes_starting_together_on_a_new_postgresql_store_all_open_it(postgres_store: Settings) -> None:
    """Replicas, workers and importers may start at the same moment on a store with no tables yet.
    PostgreSQL's ``CREATE ... IF NOT EXISTS`` is not atomic against a concurrent creator (the loser
    gets "tuple concurrently updated" or a unique violation in pg_type): each opener must still
    come up, with the tables created once."""
    openers = 8
    barrier = threading.Barrier(openers)
    errors: list[BaseException] = []
    apps: list[ChronicleApplication] = []

    def start() -> None:
        barrier.wait()
        try:
            apps.append(open_application(postgres_store))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(openers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == [], errors
        assert len(apps) == openers
        assert {POSTGRES_EVENTS_TABLE, "chronicle_snapshots"} <= tables(postgres_store)
        cid = apps[0].create_campaign("Together")
        assert apps[-1].campaign(cid).name == "Together"
    finally:
        for a in apps:
            a.close()


@pytest.mark.postgres
def test_the_notification_log_reads_as_the_librarys_on_postgresql(postgres_store: Settings) -> None:
    """``select_notifications`` (statements rendered once, binary rows) returns what the
    library's own returns, for every combination of start (inclusive or not), stop, topics
    and limit: the same notifications (ids, originators, versions, topics, state bytes), in order."""
    from eventsourcing.postgres import PostgresApplicationRecorder

    app = open_application(postgres_store)
    try:
        for k in range(3):
            app.create_campaign(f"Log {k}")
        recorder = app.recorder
        head = recorder.max_notification_id()
        assert head >= 3
        topics = sorted({n.topic for n in recorder.select_notifications(None, 100)})
        calls = 0
        for start in (None, 0, 1, 2, head):
            for inclusive in (True, False):
                for stop in (None, 1, 2, head):
                    for chosen in ((), topics[:1], ["no such topic"]):
                        for limit in (1, 2, 100):
                            args = (start, limit, stop, chosen)
                            ours = recorder.select_notifications(*args, inclusive_of_start=inclusive)
                            theirs = PostgresApplicationRecorder.select_notifications(
                                recorder, *args, inclusive_of_start=inclusive
                            )
                            assert ours == theirs, (args, inclusive)
                            assert all(type(n.state) is bytes for n in ours)
                            calls += bool(ours)
        assert calls > 50  # (most combinations read something)
    finally:
        app.close()
