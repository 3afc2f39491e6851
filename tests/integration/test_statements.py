"""PostgreSQL statements are rendered once (``api.service.pgstore.BoundedPostgresRecorder``): a
request's reads and its save compose no SQL, and the rendered reads answer exactly what the
library's own composed statements answer."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.postgres import PostgresAggregateRecorder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg import sql

from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from tests.conftest import connect


@pytest.fixture
def pg(store: Settings) -> Iterator[ChronicleApplication]:
    if store.database.kind != "postgresql":
        pytest.skip("PostgreSQL statements")
    app = open_application(store)
    try:
        yield app
    finally:
        app.close()


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SQL composition psycopg renders from now on."""
    seen: list[str] = []
    for cls in (sql.Composed, sql.SQL, sql.Identifier):
        original = cls.as_bytes

        def spy(self: Any, context: Any = None, _original: Any = original) -> bytes:
            seen.append(type(self).__name__)
            return _original(self, context)  # type: ignore[no-any-return]

        monkeypatch.setattr(cls, "as_bytes", spy)
    return seen


def test_a_request_s_statements_are_rendered_once(pg: ChronicleApplication, rendered: list[str]) -> None:
    cid = pg.create_campaign("Statements")
    pg.advance_time(cid, 1)
    rendered.clear()
    pg.advance_time(cid, 2)  # the save: lock, notify, insert
    pg.recorder.select_events(cid, gt=1)
    pg.recorder.select_events(cid, gt=1, lte=3, desc=True, limit=2)
    pg.recorder.select_events_beside((uuid4(), 0), (cid, 1))  # type: ignore[attr-defined]
    assert rendered == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    gt=st.none() | st.integers(0, 8),
    lte=st.none() | st.integers(0, 8),
    desc=st.booleans(),
    limit=st.none() | st.integers(1, 8),
)
def test_rendered_reads_answer_what_the_library_s_answer(
    pg: ChronicleApplication, gt: int | None, lte: int | None, desc: bool, limit: int | None
) -> None:
    cid = _campaign(pg)
    ours = pg.recorder.select_events(cid, gt=gt, lte=lte, desc=desc, limit=limit)
    library = PostgresAggregateRecorder.select_events.__wrapped__  # type: ignore[attr-defined]
    theirs = library(pg.recorder, cid, gt=gt, lte=lte, desc=desc, limit=limit)
    assert ours == theirs


def test_a_save_is_one_statement_and_takes_the_events_table_s_lock(
    pg: ChronicleApplication, store: Settings
) -> None:
    """A save calls the events table's append function: one statement that takes the table's
    EXCLUSIVE lock (so notification ids are issued in commit order, as the library's pipelined
    save makes sure), notifies and inserts. While another transaction has written the table
    (ROW EXCLUSIVE: a plain insert would not wait for it) the save waits for it, then lands."""
    cid = pg.create_campaign("One statement")
    statements: list[str] = []
    with pg.recorder.datastore.get_connection() as conn:  # type: ignore[attr-defined]
        cursor_type = type(conn.cursor())
    original = cursor_type.execute

    def execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(query if isinstance(query, str) else "composed")
        return original(self, query, *args, **kwargs)

    recorder: Any = pg.recorder
    table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
    with connect(store.database) as other:
        other.autocommit = False
        other.execute(
            f"INSERT INTO {table} (originator_id, originator_version, topic, state) VALUES (%s, 1, 'x', '')",
            (uuid4(),),
        )  # uncommitted: this transaction holds the table's ROW EXCLUSIVE lock
        done: list[Any] = []
        saving = threading.Thread(target=lambda: done.append(pg.advance_time(cid, 1)))
        cursor_type.execute = execute  # type: ignore[method-assign]
        try:
            saving.start()
            waited = False
            for _ in range(500):  # the save's backend waits for the EXCLUSIVE lock on the table
                waited = bool(
                    other.execute(
                        "SELECT 1 FROM pg_locks WHERE NOT granted AND mode = 'ExclusiveLock' "
                        "AND relation = %s::regclass",
                        (table,),
                    ).fetchall()
                )
                if waited or not saving.is_alive():
                    break
                time.sleep(0.01)
            other.rollback()
            saving.join()
        finally:
            cursor_type.execute = original  # type: ignore[method-assign]
    assert waited, "the save did not wait for the table's lock"
    assert done and pg.view(cid).position == done[0].position
    reads = ("pg_locks", "WHERE originator_id")  # (this test's polls, the command's catch-up)
    assert [q for q in statements if not any(r in q for r in reads)] == [recorder._append_call]


def test_a_save_waits_for_the_table_s_lock_as_long_as_its_own_process_is_configured_to(
    store: Settings,
) -> None:
    """Each process bounds its saves' wait for the events table's lock by its own
    ``CHRONICLE_STORE_TIMEOUT`` (the library's save sets it per transaction): another process
    on the same store configured otherwise (a CLI import with a long timeout, a worker) changes
    nothing about this one's. Seen from inside the save's transaction by a trigger."""
    if store.database.kind != "postgresql":
        pytest.skip("PostgreSQL statements")
    mine = open_application(dataclasses.replace(store, store_timeout=2))
    try:
        cid = mine.create_campaign("Own timeout")
        other = open_application(dataclasses.replace(store, store_timeout=9))  # opened later
        other.close()
        recorder: Any = mine.recorder
        table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
        seen = f'"{recorder.datastore.schema}".seen_lock_timeout'
        with connect(store.database) as conn:
            conn.execute(f"CREATE TABLE {seen} (setting text)")
            conn.execute(
                f"CREATE FUNCTION {seen}_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                f"INSERT INTO {seen} VALUES (current_setting('lock_timeout')); RETURN NULL; END $$"
            )
            conn.execute(
                f"CREATE TRIGGER note_lock_timeout AFTER INSERT ON {table} "
                f"FOR EACH STATEMENT EXECUTE FUNCTION {seen}_note()"
            )
            mine.advance_time(cid, 1)
            assert [r[0] for r in conn.execute(f"SELECT setting FROM {seen}").fetchall()] == ["2s"]
    finally:
        mine.close()


def _campaign(app: ChronicleApplication) -> Any:
    """One campaign of 8 facts per application (made once, on its first example)."""
    cid = getattr(app, "_eight_facts", None)
    if cid is None:
        cid = app.create_campaign("Eight")
        for n in range(7):
            app.advance_time(cid, n + 1)
        app._eight_facts = cid  # type: ignore[attr-defined]
    return cid
