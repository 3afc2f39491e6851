"""The event store: translate :class:`~api.service.settings.Settings` into eventsourcing's configuration.

eventsourcing is configured by its own environment keys (``PERSISTENCE_MODULE``,
``SQLITE_DBNAME``, ``POSTGRES_*``...). :func:`persistence_env` derives them from
``CHRONICLE_DATABASE_URL`` so operators only ever set Chronicle's variables.

Two library traps are handled here:

- eventsourcing also reads each key with the application's name as a prefix, and that
  prefixed form wins (``CHRONICLE_POSTGRES_DBNAME`` beats ``POSTGRES_DBNAME``). Chronicle's
  application is named ``chronicle``, so its keys share our ``CHRONICLE_`` namespace.
  :func:`open_application` passes every derived key in both forms so a stray variable in
  the process environment cannot silently redirect the store.
- ``POSTGRES_ENABLE_DB_FUNCTIONS`` is never set (the database function is named once per
  schema, so with two applications events land in the wrong table), and a process
  environment that sets it is refused.

Outages are bounded (``api.service.pgstore``): PostgreSQL goes through :class:`PostgresStore`,
whose calls retry only within ``CHRONICLE_STORE_TIMEOUT`` and whose statements give up on a
lock after that long; SQLite waits that long for a locked file. :func:`unavailable` tells the
resulting errors apart from bugs, so the API can answer ``STORE_UNAVAILABLE`` (retryable), and
:class:`Probe` runs a readiness check with its own deadline, even when the store hangs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from eventsourcing.application import Application
from eventsourcing.persistence import InterfaceError, OperationalError, PersistenceError
from eventsourcing.utils import strtobool
from psycopg import sql

# The access aggregates live in the same log as the campaigns: whoever opens the store may read
# (decode) their events, so their topics must be registered too (eventsourcing registers a topic
# when its class is defined; the worker and rebuild import nothing else that defines them).
from api.service import auth as _auth  # noqa: F401
from api.service import pgstore
from api.service.application import ChronicleApplication
from api.service.settings import DATABASE_URL, ConfigError, Database, Settings

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "Probe",
    "check_store",
    "open_application",
    "persistence_env",
    "unavailable",
]

DEFAULT_CONNECT_TIMEOUT = 3
T = TypeVar("T")
_FORBIDDEN = "POSTGRES_ENABLE_DB_FUNCTIONS"
# eventsourcing reads "<APP NAME>_<KEY>" before "<KEY>".
_APP_PREFIX = ChronicleApplication.name.upper() + "_"


def persistence_env(settings: Settings) -> dict[str, str]:
    """eventsourcing's environment for ``settings.database``.

    For SQLite the database file's parent directory is created (raising
    :class:`ConfigError` if it cannot be). Tables are created by the library on first
    start (``CREATE_TABLE``), idempotently.
    """
    db = settings.database
    if db.kind == "memory":
        return {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    if db.kind == "sqlite":
        parent = Path(db.path).parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                DATABASE_URL, f"cannot create directory {str(parent)!r}: {exc.strerror}"
            ) from None
        return {
            "PERSISTENCE_MODULE": "eventsourcing.sqlite",
            "SQLITE_DBNAME": db.path,
            "SQLITE_LOCK_TIMEOUT": str(settings.store_timeout),  # a locked file: wait this long
            "CREATE_TABLE": "y",
        }
    env = {
        "PERSISTENCE_MODULE": f"{pgstore.__name__}:{pgstore.PostgresStore.__name__}",
        "POSTGRES_DBNAME": db.dbname,
        "POSTGRES_HOST": db.host,
        "POSTGRES_PORT": str(db.port),
        "POSTGRES_USER": db.user,
        "POSTGRES_PASSWORD": db.password,
        "POSTGRES_CONNECT_TIMEOUT": str(db.connect_timeout or DEFAULT_CONNECT_TIMEOUT),
        "POSTGRES_LOCK_TIMEOUT": str(settings.store_timeout),  # the append's LOCK TABLE
        pgstore.STORE_TIMEOUT: str(settings.store_timeout),
        pgstore.STATEMENT_TIMEOUT: str(settings.statement_timeout),
        "CREATE_TABLE": "y",
    }
    if db.schema:
        env["POSTGRES_SCHEMA"] = db.schema
    return env


def open_application(settings: Settings, environ: Mapping[str, str] | None = None) -> ChronicleApplication:
    """Construct the application on the configured store (creating its tables if needed).

    A store that cannot be reached or opened raises :class:`ConfigError` naming
    ``CHRONICLE_DATABASE_URL``. ``environ`` (default: the process environment, which
    eventsourcing reads too) is only checked for settings Chronicle refuses.
    """
    _refuse_db_functions(os.environ if environ is None else environ)
    env = persistence_env(settings)
    db = settings.database
    if db.kind == "postgresql":
        _probe_postgres(db, int(env["POSTGRES_CONNECT_TIMEOUT"]))
    pinned = {**env, **{_APP_PREFIX + key: value for key, value in env.items()}}
    try:
        return ChronicleApplication(
            env=pinned,
            cache_max_facts=settings.cache_max_facts,
            ledger_window=settings.ledger_window,
            snapshot_every=settings.snapshot_every,
            checkpoint_cache_mb=settings.checkpoint_cache_mb,
        )
    except (PersistenceError, sqlite3.Error, psycopg.Error, OSError) as exc:
        raise ConfigError(DATABASE_URL, f"cannot open {_where(db)}: {_reason(exc)}") from exc


def check_store(app: Application[Any]) -> None:
    """Raise if the application's store cannot answer a cheap query (used by ``/readyz``)."""
    app.recorder.max_notification_id()


def unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the store cannot be reached or did not answer in time (an outage, a
    restart, a lock held too long, a pool with no free connection): worth retrying, not a bug.

    The library wraps the drivers' errors in its own ``OperationalError``/``InterfaceError``
    (psycopg's pool timeout, a dropped connection, ``lock_timeout``, SQLite's "database is
    locked"); code that talks to the drivers directly (the read models) raises theirs.
    """
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    for error in chain:
        if isinstance(error, sqlite3.Error):  # wrapped by the library: only a locked file is an outage
            return isinstance(error, sqlite3.OperationalError) and "locked" in str(error)
    return any(
        isinstance(
            error, (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)
        )
        for error in chain
    )


class Probe:
    """Runs checks in their own threads, each answer within a deadline even if the store hangs.

    A check that does not finish in time keeps running in its thread (a blocked database call
    cannot be interrupted); callers get :class:`TimeoutError`, and while it is still running a
    new call with the same name waits for that one instead of starting another, so a hung
    store ties up one thread per check, not one per request.
    """

    def __init__(self) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="probe")
        self._running: dict[str, concurrent.futures.Future[Any]] = {}
        self._lock = threading.Lock()

    async def run(self, name: str, check: Callable[[], T], timeout: float) -> T:
        with self._lock:
            future = self._running.get(name)
            if future is None or future.done():
                future = self._running[name] = self._executor.submit(check)
        waiting = asyncio.wrap_future(future)
        waiting.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved, even if late
        done, _ = await asyncio.wait([waiting], timeout=timeout)
        if not done:
            raise TimeoutError(f"the store did not answer within {timeout:g} s")
        result: T = future.result()
        return result

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _refuse_db_functions(environ: Mapping[str, str]) -> None:
    for key in (_FORBIDDEN, _APP_PREFIX + _FORBIDDEN):
        value = environ.get(key, "").strip()
        if not value:
            continue
        try:
            enabled = bool(strtobool(value))
        except ValueError:
            enabled = True  # not a recognisable "no": refuse rather than guess
        if enabled:
            raise ConfigError(
                key,
                "must not be set: Chronicle stores events without database functions "
                "(they are shared per schema and would route events to the wrong table)",
            )


def _probe_postgres(db: Database, connect_timeout: int) -> None:
    """Connect once, directly, so an unreachable server fails fast with libpq's reason.

    (Through eventsourcing's pool the reason is lost: it only reports a timeout.)
    """
    try:
        with psycopg.connect(
            host=db.host,
            port=db.port,
            user=db.user,
            password=db.password,
            dbname=db.dbname,
            connect_timeout=connect_timeout,
            autocommit=True,
        ) as conn:
            if db.schema:
                row = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (db.schema,)).fetchone()
                if row is None:
                    create = sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(db.schema)).as_string(conn)
                    raise ConfigError(
                        DATABASE_URL,
                        f"schema {db.schema!r} does not exist in {_where(db)} (create it first: {create})",
                    )
    except psycopg.Error as exc:
        raise ConfigError(DATABASE_URL, f"cannot reach {_where(db)}: {_reason(exc)}") from None


def _where(db: Database) -> str:
    if db.kind == "postgresql":
        return f"PostgreSQL at {db.host}:{db.port}/{db.dbname}"
    if db.kind == "sqlite":
        return f"SQLite database {db.path!r}"
    return "in-memory store"


def _reason(exc: BaseException) -> str:
    """libpq's reason on one line, without its 'connection to server at ... failed:' preamble."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    _, sep, rest = text.rpartition(" failed: ")
    if sep and rest:
        text = rest
    return " ".join(text.removeprefix("FATAL:").split())
