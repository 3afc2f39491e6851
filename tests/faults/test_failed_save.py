"""A failed save leaves nothing behind (issue 13 §1), on SQLite and PostgreSQL.

A store failure is injected at the append in every way it can fail: a fact the transcoder
cannot encode, a lock held by another session until the lock timeout, the connection lost, an
error that outlasts the retries, and an append retried after its answer was lost. After each,
the next command lands at the next position, a retry with the same idempotency key is applied
(never "replayed" for a fact that was not stored), and a fresh application — what a new
process sees — loads the campaign. Before the fix the cached campaign kept the unsaved fact:
the next command was stored one position further, and the campaign could not be loaded again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from uuid import UUID

import pytest
from eventsourcing.persistence import OperationalError

from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import InvalidInput
from tests.faults.conftest import table_lock
from tests.faults.proxy import Proxy

T = TypeVar("T")


@pytest.fixture
def app(store: Settings) -> Iterator[ChronicleApplication]:
    application = open_application(store)
    try:
        yield application
    finally:
        application.close()


def stored(settings: Settings, cid: UUID) -> list[tuple[int, str]]:
    """(position, note text or type) of every fact, as a fresh process loads them."""
    fresh = open_application(settings)
    try:
        with fresh.reading(cid) as campaign:
            return [(e.seq, e.payload.get("text", e.type)) for e in campaign.ledger.entries]
    finally:
        fresh.close()


def finishes(call: Callable[[], T], guard: float = 120) -> T | BaseException:
    """``call()``'s result or exception; fails the test if it has not returned after ``guard``
    seconds (a liveness guard: a request must end, however the store misbehaves)."""
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(guard)
    assert box, f"the call did not return within {guard} s"
    return box[0]  # type: ignore[no-any-return]


def fail_appends(app: ChronicleApplication, times: int = 1) -> None:
    """The next ``times`` appends fail as a store error that outlasted the retries would."""
    original = app.recorder.insert_events
    left = [times]

    def failing(*args: Any, **kwargs: Any) -> Any:
        if left[0] > 0:
            left[0] -= 1
            raise OperationalError("injected: the store failed at the append")
        return original(*args, **kwargs)

    app.recorder.insert_events = failing  # type: ignore[method-assign]


def nested(levels: int) -> Any:
    value: Any = "deep"
    for _ in range(levels):
        value = [value]
    return value


POISON = [
    pytest.param({"text": "\ud800"}, "text", id="lone-surrogate"),
    pytest.param({"text": "a\x00b"}, "text", id="nul"),
    pytest.param({"text": "bell\x07"}, "text", id="control-character"),
]


@pytest.mark.parametrize(("payload", "field"), POISON)
def test_a_fact_the_store_cannot_keep_is_refused_and_changes_nothing(
    store: Settings, app: ChronicleApplication, payload: dict[str, Any], field: str
) -> None:
    cid = app.create_campaign("Poison")
    app.record(cid, "NoteAdded", {"text": "first"})
    with pytest.raises(InvalidInput) as refused:
        app.record(cid, "NoteAdded", payload, idempotency_key="k-poison")
    assert refused.value.field == field
    assert app.record(cid, "NoteAdded", {"text": "second"}).position == 3
    fixed = app.record(cid, "NoteAdded", {"text": "fixed"}, idempotency_key="k-poison")
    assert (fixed.position, fixed.replayed) == (4, False)  # the refused request stored nothing
    assert stored(store, cid) == [(2, "first"), (3, "second"), (4, "fixed")]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(10**5000, id="5000-digit-integer"),
        pytest.param("x" * 900_000, id="900-KB-string"),
        pytest.param(nested(31), id="31-levels"),
    ],
)
def test_a_ruling_value_beyond_the_limits_is_refused(
    store: Settings, app: ChronicleApplication, value: Any
) -> None:
    cid = app.create_campaign("Rulings")
    ruling = {"ruling_id": "r1", "question": "q", "decision": "d", "value": value}
    with pytest.raises(InvalidInput) as refused:
        app.record(cid, "RulingRecorded", ruling)
    assert refused.value.field is not None and refused.value.field.startswith("value")
    assert app.record(cid, "NoteAdded", {"text": "still fine"}).position == 2
    assert stored(store, cid) == [(2, "still fine")]


def test_a_store_error_at_the_append_leaves_nothing_behind(
    store: Settings, app: ChronicleApplication
) -> None:
    cid = app.create_campaign("Store error")
    app.record(cid, "NoteAdded", {"text": "first"})
    fail_appends(app)
    with pytest.raises(OperationalError):
        app.record(cid, "NoteAdded", {"text": "lost"}, idempotency_key="k-lost")
    assert app.ledger(cid).last_seq == 2  # the API does not show the fact that was not stored
    retried = app.record(cid, "NoteAdded", {"text": "lost"}, idempotency_key="k-lost")
    assert (retried.position, retried.replayed) == (3, False)  # a replay only answers for a stored fact
    assert app.record(cid, "NoteAdded", {"text": "next"}).position == 4
    assert stored(store, cid) == [(2, "first"), (3, "lost"), (4, "next")]


def test_a_retried_append_whose_answer_was_lost_is_stored_once(
    store: Settings, app: ChronicleApplication
) -> None:
    """The connection broke after the commit: the library retries the append, which now clashes
    with our own facts. The command succeeded once; it must not be recorded a second time."""
    cid = app.create_campaign("Lost answer")
    original = app.recorder.insert_events
    calls: list[int] = []

    def commit_then_retry(*args: Any, **kwargs: Any) -> Any:
        if not calls:
            calls.append(1)
            original(*args, **kwargs)  # committed; the answer never arrives
        return original(*args, **kwargs)  # the retry

    app.recorder.insert_events = commit_then_retry  # type: ignore[method-assign]
    result = app.record(cid, "NoteAdded", {"text": "once"})
    app.recorder.insert_events = original  # type: ignore[method-assign]
    assert result.position == 2
    assert stored(store, cid) == [(2, "once")]


def test_a_failed_token_issue_leaves_the_campaign_s_tokens_working(
    store: Settings, app: ChronicleApplication
) -> None:
    access = AccessControl(app)
    campaign_id, gm, _ = access.create_campaign("Tokens", "stellar-winds", None, None)
    fail_appends(app)
    with pytest.raises(OperationalError):
        access.issue(campaign_id, "viewer", [], "lost", None)
    viewer = access.issue(campaign_id, "viewer", [], "second try", None)
    fresh = open_application(store)
    try:
        again = AccessControl(fresh)  # a new process: loads the tokens from the store
        assert again.authenticate(gm) is not None
        assert again.authenticate(viewer.token) is not None
        assert [t["label"] for t in again.tokens(campaign_id)] == ["GM", "second try"]
    finally:
        fresh.close()


@pytest.mark.postgres
def test_an_append_behind_a_held_table_lock_ends_and_leaves_nothing_behind(postgres_store: Settings) -> None:
    app = open_application(postgres_store)
    try:
        cid = app.create_campaign("Locked")
        app.record(cid, "NoteAdded", {"text": "first"})
        with table_lock(postgres_store):
            outcome = finishes(
                lambda: app.record(cid, "NoteAdded", {"text": "blocked"}, idempotency_key="k-blocked")
            )
            assert isinstance(outcome, OperationalError), outcome  # the lock timeout, not a hang
        retried = app.record(cid, "NoteAdded", {"text": "blocked"}, idempotency_key="k-blocked")
        assert (retried.position, retried.replayed) == (3, False)
        assert stored(postgres_store, cid) == [(2, "first"), (3, "blocked")]
    finally:
        app.close()


@pytest.mark.postgres
def test_an_append_whose_connection_is_lost_ends_and_leaves_nothing_behind(
    postgres_store: Settings, pg_proxy: tuple[Settings, Proxy]
) -> None:
    settings, proxy = pg_proxy
    app = open_application(settings)
    try:
        cid = app.create_campaign("Cut")
        app.record(cid, "NoteAdded", {"text": "first"})
        original = app.recorder.insert_events

        def cut_then_insert(*args: Any, **kwargs: Any) -> Any:
            proxy.down()  # every connection to the server is cut, new ones refused
            return original(*args, **kwargs)

        app.recorder.insert_events = cut_then_insert  # type: ignore[method-assign]
        outcome = finishes(lambda: app.record(cid, "NoteAdded", {"text": "cut"}, idempotency_key="k-cut"))
        assert isinstance(outcome, OperationalError), outcome
        app.recorder.insert_events = original  # type: ignore[method-assign]
        proxy.up()
        # As a client does with a retryable error: the same request, the same key, until it lands.
        retried = retrying(lambda: app.record(cid, "NoteAdded", {"text": "cut"}, idempotency_key="k-cut"))
        assert (retried.position, retried.replayed) == (3, False)
        assert app.record(cid, "NoteAdded", {"text": "next"}).position == 4
    finally:
        app.close()
    assert stored(postgres_store, cid) == [(2, "first"), (3, "cut"), (4, "next")]


def retrying(call: Callable[[], T], attempts: int = 5) -> T:
    for _ in range(attempts - 1):
        try:
            return call()
        except OperationalError:
            continue
    return call()


def test_an_append_behind_a_locked_sqlite_file_ends_and_leaves_nothing_behind(sqlite_store: Settings) -> None:
    app = open_application(sqlite_store)
    try:
        cid = app.create_campaign("Locked file")
        app.record(cid, "NoteAdded", {"text": "first"})
        other = sqlite3.connect(sqlite_store.database.path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # another process writing (a backup, a second server)
            outcome = finishes(
                lambda: app.record(cid, "NoteAdded", {"text": "waited"}, idempotency_key="k-w")
            )
            assert isinstance(outcome, OperationalError), outcome  # "database is locked", in time
        finally:
            other.execute("ROLLBACK")
            other.close()
        retried = app.record(cid, "NoteAdded", {"text": "waited"}, idempotency_key="k-w")
        assert (retried.position, retried.replayed) == (3, False)
    finally:
        app.close()
    assert stored(sqlite_store, cid) == [(2, "first"), (3, "waited")]
    from api.service.store import unavailable

    assert unavailable(outcome)  # so the API answers STORE_UNAVAILABLE (retryable)
