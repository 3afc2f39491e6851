"""PostgreSQL statements are rendered once (``api.service.pgstore.BoundedPostgresRecorder``): a
request's reads and its save compose no SQL, and the rendered reads answer exactly what the
library's own composed statements answer."""

from __future__ import annotations

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


def _campaign(app: ChronicleApplication) -> Any:
    """One campaign of 8 facts per application (made once, on its first example)."""
    cid = getattr(app, "_eight_facts", None)
    if cid is None:
        cid = app.create_campaign("Eight")
        for n in range(7):
            app.advance_time(cid, n + 1)
        app._eight_facts = cid  # type: ignore[attr-defined]
    return cid
