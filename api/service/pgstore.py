"""eventsourcing's PostgreSQL store with bounded waits, so an outage is answered quickly.

The library's PostgreSQL recorder retries every read and append up to 10 times on a connection
error (``@retry(..., max_attempts=10, wait=0.2)``), and each attempt may wait the whole pool
timeout for a connection: during an outage a request took 10 × ``connect_timeout`` (12 s with
``connect_timeout=1``, 52 s with 5; measured) before it failed, and an append behind a table
lock waited for ever (``lock_timeout`` 0). After the outage the pool's reconnection back-off
(doubling, up to 5 minutes) kept answering errors for tens of seconds.

Here (``PERSISTENCE_MODULE=api.service.pgstore:PostgresStore``, set by
:func:`api.service.store.persistence_env`):

- reads and appends retry connection errors only while a *retry window* lasts
  (``STORE_TIMEOUT`` seconds, ``CHRONICLE_STORE_TIMEOUT``), so a stale pooled connection after
  a restart is still replaced silently, but an outage fails after at most the window plus one
  wait for a connection (``connect_timeout``);
- every statement gives up waiting for a lock after ``STORE_TIMEOUT`` seconds (the append's
  ``LOCK TABLE`` too: ``POSTGRES_LOCK_TIMEOUT``) and runs at most
  ``POSTGRES_STATEMENT_TIMEOUT`` seconds (``CHRONICLE_STATEMENT_TIMEOUT``; 0: no limit);
- TCP keepalives and ``tcp_user_timeout`` notice a peer that vanished from the network;
- a pool slot stops its reconnection back-off after ``STORE_TIMEOUT`` seconds (at least 1),
  so new demand reconnects at once when the server is back;
- after a connection error the pool's idle connections are tested in the background, so the
  dead ones a restart or ``pg_terminate_backend`` leaves behind are replaced at once.

The limits are applied to the pool's connection parameters before its first connection. The
error the caller finally sees is the library's ``OperationalError`` (or ``InterfaceError``):
:func:`api.service.store.unavailable` recognises it and the API answers ``STORE_UNAVAILABLE``.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.persistence import InterfaceError, Notification, OperationalError, StoredEvent
from eventsourcing.postgres import (
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresFactory,
)
from eventsourcing.utils import Environment, EnvType
from psycopg.rows import tuple_row
from psycopg.sql import SQL, Identifier

__all__ = ["BoundedPostgresRecorder", "PostgresStore", "retry_catalog_races"]

STORE_TIMEOUT = "STORE_TIMEOUT"
STATEMENT_TIMEOUT = "POSTGRES_STATEMENT_TIMEOUT"
DEFAULT_STORE_TIMEOUT = 3
DEFAULT_STATEMENT_TIMEOUT = 60
RETRY_PAUSE = 0.2  # as the library's own retries
# Notice a server that vanished from the network: probe an idle connection after 10 s, give up
# after 3 unanswered probes 5 s apart; unacknowledged data for 15 s breaks the connection.
TCP = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 15_000,
}

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

# What PostgreSQL answers the loser of two concurrent ``CREATE ... IF NOT EXISTS`` of one table,
# index or type (IF NOT EXISTS is checked before the catalog row is written, not atomically):
# "tuple concurrently updated" (XX000), a unique violation in pg_type / pg_class (23505), or
# the object already existing after all (42P07 duplicate table, 42710 duplicate object).
CATALOG_RACES = frozenset({"XX000", "23505", "42P07", "42710"})
DDL_ATTEMPTS = 5
# The advisory lock that serialises table creation: two int4 keys, a key space apart from the
# campaigns' one-bigint commit locks.
DDL_LOCK = (0x4348524E, 1)  # "CHRN"


def _catalog_race(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if getattr(seen, "sqlstate", None) in CATALOG_RACES:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def retry_catalog_races(create: Callable[[], T], datastore: PostgresDatastore | None = None) -> T:
    """Run ``create`` (idempotent DDL) so that processes starting together on a new store all
    come up: replicas, workers and importers (measured: four bench writers starting at once, one
    failed with "tuple concurrently updated"; eight openers in a test, one in ten runs failed all
    five retries, the library's ``CREATE OR REPLACE FUNCTION`` racing again each time).

    With ``datastore`` the DDL is serialised across processes by an advisory lock held on a
    connection of its own while ``create`` runs (``create`` commits before the lock is let go, so
    the next holder finds everything made). Losing a race anyway (a process without the lock, a
    lock that could not be had) is retried."""
    with _ddl_lock(datastore):
        for attempt in range(DDL_ATTEMPTS):
            try:
                return create()
            except Exception as exc:
                if attempt == DDL_ATTEMPTS - 1 or not _catalog_race(exc):
                    raise
                time.sleep(RETRY_PAUSE * (attempt + 1))
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _ddl_lock(datastore: PostgresDatastore | None) -> Iterator[None]:
    if datastore is None:
        yield
        return
    with contextlib.ExitStack() as stack:
        try:
            conn = stack.enter_context(datastore.get_connection())
            conn.execute("SELECT pg_advisory_lock(%s, %s)", DDL_LOCK)
            conn.commit()
        except Exception:  # noqa: BLE001 - the retries below still bring every opener up
            stack.close()
            yield
            return
        try:
            yield
        finally:
            try:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", DDL_LOCK)
                conn.commit()
            except Exception:  # noqa: BLE001 - never hand a connection holding it back to the pool
                conn.close()


def _within_window(method: F) -> F:
    """The library method without its 10 attempts: retried on connection errors while the
    recorder's ``retry_window`` lasts (no new attempt starts after it)."""
    return _bounded(method.__wrapped__)  # type: ignore[attr-defined]  # the undecorated function


def _bounded(inner: F) -> F:
    """``inner`` retried on connection errors while the recorder's ``retry_window`` lasts."""

    @functools.wraps(inner)
    def bounded(self: BoundedPostgresRecorder, *args: Any, **kwargs: Any) -> Any:
        give_up = time.monotonic() + self.retry_window
        while True:
            try:
                return inner(self, *args, **kwargs)
            except (InterfaceError, OperationalError):
                self.sweep()
                if time.monotonic() + RETRY_PAUSE >= give_up:
                    raise
                time.sleep(RETRY_PAUSE)

    return bounded  # type: ignore[return-value]


def _range(
    originator_id: UUID | str, gt: int | None, lte: int | None, limit: int | None
) -> tuple[list[Any], tuple[bool, bool, bool]]:
    """A ranged read's parameters, and its shape (gt, lte, limit given) that picks the statement."""
    params: list[Any] = [originator_id]
    params += [v for v in (gt, lte, limit) if v is not None]
    return params, (gt is not None, lte is not None, limit is not None)


class BoundedPostgresRecorder(PostgresApplicationRecorder):
    """The library's application recorder; its reads and appends retry within a window."""

    retry_window: float = DEFAULT_STORE_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._sweeping = threading.Lock()
        super().__init__(*args, **kwargs)
        # Statements rendered once: the library composes (and psycopg renders, quoting the
        # identifiers) its statements on every call; these are plain strings from the start.
        table = SQL("{}.{}").format(Identifier(self.datastore.schema), Identifier(self.events_table_name))
        name = table.as_string(None)
        # One scan with OR, not a UNION ALL of two: the statement is prepared, and PostgreSQL's
        # generic plan for the UNION (it cannot see the versions: a few hundred rows a branch, it
        # guesses) was a Parallel Append under a Gather -- two workers started per request, about
        # 7 ms of every request at 100k facts (bench QRY: one character's HP 3.7 -> 13 ms). The OR
        # is a BitmapOr of two index scans in a single process: 0.1 ms.
        self._beside_statement = (
            f"SELECT * FROM {name} WHERE (originator_id = %s AND originator_version > %s)"
            " OR (originator_id = %s AND originator_version > %s)"
        )
        self._select_statements = {
            (gt, lte, desc, limit): "".join(
                (
                    f"SELECT * FROM {name} WHERE originator_id = %s",
                    " AND originator_version > %s" if gt else "",
                    " AND originator_version <= %s" if lte else "",
                    " ORDER BY originator_version",
                    " DESC" if desc else " ASC",
                    " LIMIT %s" if limit else "",
                )
            )
            for gt in (False, True)
            for lte in (False, True)
            for desc in (False, True)
            for limit in (False, True)
        }
        # ``select_states``: the ascending reads of ``select_events`` without the originator id
        self._states_statements = {
            key: statement.replace("SELECT * ", "SELECT originator_version, topic, state ", 1)
            for key, statement in self._select_statements.items()
            if not key[2]
        }
        # ``select_notifications``: by whether a start (and whether inclusive), a stop and topics are given
        self._notification_statements = {
            (start, inclusive, stop, topics): "".join(
                (
                    f"SELECT originator_id, originator_version, topic, state, notification_id FROM {name}",
                    " WHERE" if start or stop or topics else "",
                    (" notification_id>=%s" if inclusive else " notification_id>%s") if start else "",
                    " AND" if start and stop else "",
                    " notification_id <= %s" if stop else "",
                    " AND" if (start or stop) and topics else "",
                    " topic = ANY(%s)" if topics else "",
                    " ORDER BY notification_id LIMIT %s",
                )
            )
            for start in (False, True)
            for inclusive in (False, True)
            for stop in (False, True)
            for topics in (False, True)
        }
        self.insert_events_statement = self.insert_events_statement.as_string(None)  # type: ignore[assignment]
        self.lock_table_statements = [q.as_string(None) for q in self.lock_table_statements]  # type: ignore[attr-defined,misc]
        self.max_notification_id_statement = self.max_notification_id_statement.as_string(None)  # type: ignore[assignment]
        self._notify_statement = SQL("NOTIFY {0}").format(Identifier(self.channel_name)).as_string(None)
        # A save as ONE statement (``_append``): a function of the events table's own, made with
        # the table (``create_table``), that does what the library's pipelined transaction does.
        schema = Identifier(self.datastore.schema)
        self.append_function_name = f"{self.events_table_name}_append"
        function = Identifier(self.append_function_name)
        # The lock's timeout is the caller's (as the library's ``SET LOCAL`` is): a value written
        # into the function would be whichever process made it last, for every process.
        self._append_ddl = SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}(events {schema}.{event}[], wait_for_lock text) "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ BEGIN "
            "PERFORM set_config('lock_timeout', wait_for_lock, true); "
            "LOCK TABLE {table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "RETURN QUERY INSERT INTO {table} (originator_id, originator_version, topic, state) "
            "SELECT originator_id, originator_version, topic, state FROM unnest(events) "
            "RETURNING notification_id; "
            "END; $BODY$"
        ).format(
            schema=schema,
            function=function,
            event=Identifier(self.stored_event_type_name),
            table=table,
            channel=Identifier(self.channel_name),
        )
        self._append_call = SQL("SELECT * FROM {0}.{1}((%s), %s)").format(schema, function).as_string(None)
        self._append_lock_timeout = f"{self.datastore.lock_timeout}s"  # (SET LOCAL's, as the library's)
        self._appends = False  # the function is made (``create_table``): saves call it

    def _notify_channel(self, curs: Any) -> None:
        curs.execute(self._notify_statement)

    @_bounded
    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        """The library's ``select_events`` with its statement rendered once (``_select_statements``)."""
        params, shape = _range(originator_id, gt, lte, limit)
        statement = self._select_statements[shape[0], shape[1], desc, shape[2]]
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(statement, params, prepare=True)  # type: ignore[call-overload]
            return [
                StoredEvent(
                    originator_id=row["originator_id"],
                    originator_version=row["originator_version"],
                    topic=row["topic"],
                    state=bytes(row["state"]),
                )
                for row in curs.fetchall()
            ]

    @_bounded
    def select_states(
        self, originator_id: UUID, *, gt: int | None = None, lte: int | None = None, limit: int | None = None
    ) -> list[tuple[int, str, bytes]]:
        """``select_events`` (ascending) as plain ``(version, topic, state)`` rows: what a load
        decodes itself (``ChronicleApplication._read_facts``). Tuple rows, not the pool's dict
        rows, no originator id parsed per row, and the bytea sent in binary (the text protocol
        sends it hex-encoded, twice its size, and decodes it back): 0.6-1.3 us of CPU a fact
        instead of 5.5-6.2 us measured at 100k facts."""
        params, shape = _range(originator_id, gt, lte, limit)
        statement = self._states_statements[shape[0], shape[1], False, shape[2]]
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(statement, params, prepare=True, binary=True)  # type: ignore[call-overload]
            return curs.fetchall()  # type: ignore[no-any-return]

    def sweep(self) -> None:
        """After a connection error, test the pool's idle connections in the background
        (``ConnectionPool.check``): a server restart or ``pg_terminate_backend`` leaves every
        pooled connection dead, and without this each retry would find the next dead one. In a
        thread of its own, one at a time, so a connection that hangs cannot hold up a request."""
        if not self._sweeping.acquire(blocking=False):
            return

        def run() -> None:
            try:
                self.datastore.pool.check()
            except Exception:  # noqa: BLE001 - the pool replaces what it could not check
                pass
            finally:
                self._sweeping.release()

        threading.Thread(target=run, name="chronicle-pool-sweep", daemon=True).start()

    def create_table(self) -> None:
        retry_catalog_races(self._create_table_and_append, self.datastore)
        self._appends = not self.datastore.enable_db_functions

    def _create_table_and_append(self) -> None:
        PostgresApplicationRecorder.create_table(self)
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(self._append_ddl, prepare=False)

    def insert_events(self, stored_events: Any, **kwargs: Any) -> Any:
        """Append events: with the append function (``_append``), in one statement; else (a
        recorder that did not make the tables, a tracking record to write, nothing to append)
        as the library does (its application recorder ignores the other keywords)."""
        if not self._appends or not stored_events or kwargs.get("tracking") is not None:
            return self._insert_events_as_the_library_does(stored_events, **kwargs)
        return self._append(stored_events)

    @_bounded
    def _append(self, stored_events: Any) -> list[int]:
        """The library's save in ONE statement, in autocommit (so one transaction): the events
        table's EXCLUSIVE lock (notification ids are issued in commit order, as the library's
        ``_lock_table`` makes sure), the NOTIFY, and the insert, returning the notification
        ids. The library's pipelined transaction (BEGIN, SET LOCAL, LOCK, NOTIFY, INSERT, sync,
        COMMIT) cost about 2.5x the CPU of this (1.0 ms against 0.39 ms a save, measured) and
        two round trips. A position taken already is the same ``IntegrityError``."""
        events = [
            self.construct_pg_stored_event(e.originator_id, e.originator_version, e.topic, e.state)
            for e in stored_events
        ]
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._append_call, (events, self._append_lock_timeout), prepare=True)  # type: ignore[call-overload]
            return [row[self.append_function_name] for row in curs.fetchall()]

    @_bounded
    def select_events_beside(
        self, first: tuple[UUID, int], second: tuple[UUID, int]
    ) -> tuple[list[StoredEvent], list[StoredEvent]]:
        """The stored events of two aggregates, each after a version, in ONE statement: what a
        request reads first (its token's access record and the campaign it names, see
        ``ChronicleApplication.read_beside``). Each list in version order."""
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(
                self._beside_statement,  # type: ignore[call-overload]
                (first[0], first[1], second[0], second[1]),
                prepare=True,
            )
            rows = curs.fetchall()
        out: tuple[list[StoredEvent], list[StoredEvent]] = ([], [])
        for row in rows:
            which = out[0] if row["originator_id"] == first[0] else out[1]
            which.append(
                StoredEvent(
                    originator_id=row["originator_id"],
                    originator_version=row["originator_version"],
                    topic=row["topic"],
                    state=bytes(row["state"]),
                )
            )
        for events in out:
            events.sort(key=lambda e: e.originator_version)
        return out

    @_bounded
    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> list[Notification]:
        """The library's ``select_notifications`` (the same rows, in notification order) with its
        statement rendered once (``_notification_statements``; the library composes and renders it
        on every call, about a third of the CPU of a live worker's poll), tuple rows, and the rows
        sent in binary (the text protocol sends the ``bytea`` state hex-encoded, twice its size,
        and decodes it back: most of a catch-up's read)."""
        params: list[Any] = []
        if start is not None:
            params.append(start)
        if stop is not None:
            params.append(stop)
        if topics:
            params.append(list(topics))
        params.append(limit)
        key = (start is not None, inclusive_of_start, stop is not None, bool(topics))
        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(self._notification_statements[key], params, prepare=True, binary=True)  # type: ignore[call-overload]
            return [
                Notification(
                    id=nid, originator_id=oid, originator_version=version, topic=topic, state=bytes(state)
                )
                for oid, version, topic, state, nid in curs.fetchall()
            ]

    _insert_events_as_the_library_does = _within_window(PostgresApplicationRecorder.insert_events)
    max_notification_id = _within_window(PostgresApplicationRecorder.max_notification_id)


class PostgresStore(PostgresFactory):
    """The library's PostgreSQL factory, with the limits above on its pool and recorder."""

    application_recorder_class = BoundedPostgresRecorder

    def __init__(self, env: Environment | EnvType | None):
        super().__init__(env)
        self.store_timeout = _seconds(self.env.get(STORE_TIMEOUT), DEFAULT_STORE_TIMEOUT)
        statement = _seconds(self.env.get(STATEMENT_TIMEOUT), DEFAULT_STATEMENT_TIMEOUT)
        options = f"-c lock_timeout={int(self.store_timeout * 1000)}"
        if statement:
            options += f" -c statement_timeout={int(statement * 1000)}"
        pool = self.datastore.pool  # not opened yet: the recorder's constructor opens it
        kwargs = pool.kwargs if isinstance(pool.kwargs, dict) else {}
        pool.kwargs = {**kwargs, **TCP, "options": options}
        pool.reconnect_timeout = max(1.0, self.store_timeout)

    def application_recorder(self) -> Any:
        recorder = super().application_recorder()
        if isinstance(recorder, BoundedPostgresRecorder):
            recorder.retry_window = self.store_timeout
        return recorder


def _seconds(raw: str | None, default: float) -> float:
    if raw is None or not raw.strip():
        return default
    return float(raw)
