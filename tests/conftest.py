"""Shared fixtures: stores to run the same tests against.

- ``store``: a :class:`~api.service.settings.Settings` for a fresh, isolated store, once per kind:
  ``sqlite`` (a file in ``tmp_path``) and ``postgres`` (a fresh schema ``t_<hex>`` in the
  database named by ``CHRONICLE_TEST_DATABASE_URL``, dropped with CASCADE afterwards).
  The ``postgres`` case is skipped with a reason when that variable is unset or the server
  cannot be reached, and fails instead when ``CI=true``. ``-m "not postgres"`` deselects it.
- ``app``: a ``ChronicleApplication`` on ``store``, closed afterwards.
- ``memory_app``: a ``ChronicleApplication`` on the in-memory store (no I/O at all).

``make test`` starts a local PostgreSQL if it can and sets ``CHRONICLE_TEST_DATABASE_URL``.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from api.service.application import ChronicleApplication
from api.service.settings import ConfigError, Database, Settings, parse_database_url
from api.service.store import open_application
from domain import rulesets
from domain.core import state as core_state

TEST_DATABASE_URL = "CHRONICLE_TEST_DATABASE_URL"
ENABLE_HINT = (
    f"set {TEST_DATABASE_URL}=postgresql://USER@HOST:PORT/DBNAME "
    "(`make test` does so when PostgreSQL is installed locally)"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


@dataclass(frozen=True)
class PostgresAvailability:
    url: str | None
    database: Database | None
    problem: str | None  # None when usable


@cache
def postgres_availability() -> PostgresAvailability:
    """Whether the PostgreSQL half can run (checked once per session)."""
    url = os.environ.get(TEST_DATABASE_URL, "").strip()
    if not url:
        return PostgresAvailability(None, None, f"{TEST_DATABASE_URL} is not set")
    try:
        db = parse_database_url(url, TEST_DATABASE_URL)
    except ConfigError as exc:
        return PostgresAvailability(url, None, str(exc))
    if db.kind != "postgresql":
        return PostgresAvailability(url, None, f"{TEST_DATABASE_URL} is not a postgresql:// URL")
    try:
        with connect(db):
            pass
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())
        return PostgresAvailability(
            url, db, f"cannot reach PostgreSQL at {db.host}:{db.port}/{db.dbname}: {reason}"
        )
    return PostgresAvailability(url, db, None)


def connect(db: Database) -> psycopg.Connection[tuple[object, ...]]:
    """A plain autocommit connection to the database (not the schema) of ``db``."""
    return psycopg.connect(
        host=db.host,
        port=db.port,
        user=db.user,
        password=db.password,
        dbname=db.dbname,
        connect_timeout=5,
        autocommit=True,
    )


def with_schema(url: str, schema: str) -> str:
    """``url`` with its ``schema`` query parameter set to ``schema``."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
    query.append(("schema", schema))
    return urlunsplit(parts._replace(query=urlencode(query)))


def pytest_report_header(config: pytest.Config) -> list[str]:
    pg = postgres_availability()
    if pg.problem is None:
        assert pg.database is not None
        db = pg.database
        postgres = f"postgresql {db.user}@{db.host}:{db.port}/{db.dbname} (one fresh schema per test)"
    elif in_ci():
        postgres = f"postgresql UNAVAILABLE, tests on it will FAIL (CI=true): {pg.problem}"
    else:
        postgres = f"postgresql SKIPPED: {pg.problem}; to enable, {ENABLE_HINT}"
    return [f"chronicle stores: memory, sqlite (a file per test), {postgres}"]


@pytest.fixture(scope="session")
def postgres_database() -> tuple[str, Database]:
    """The test database URL and its parsed form, or a skip (a failure under CI=true)."""
    pg = postgres_availability()
    if pg.problem is not None:
        message = f"PostgreSQL unavailable: {pg.problem}; to enable, {ENABLE_HINT}"
        if in_ci():
            pytest.fail(f"{message} (CI=true: PostgreSQL is required)", pytrace=False)
        pytest.skip(message)
    assert pg.url is not None and pg.database is not None
    return pg.url, pg.database


@pytest.fixture
def postgres_store(postgres_database: tuple[str, Database]) -> Iterator[Settings]:
    """Settings for a fresh PostgreSQL schema, dropped (CASCADE) afterwards."""
    url, db = postgres_database
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with connect(db) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield Settings(database_url=with_schema(url, schema))
    finally:
        with connect(db) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Settings:
    """Settings for a fresh SQLite file in ``tmp_path``."""
    return Settings(database_url=f"sqlite:///{tmp_path / 'store' / 'chronicle.sqlite'}")


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite", marks=pytest.mark.sqlite),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def store(request: pytest.FixtureRequest) -> Settings:
    """A fresh isolated store, once on SQLite and once on PostgreSQL."""
    fixture = "sqlite_store" if request.param == "sqlite" else "postgres_store"
    settings: Settings = request.getfixturevalue(fixture)
    return settings


@pytest.fixture
def app(store: Settings) -> Iterator[ChronicleApplication]:
    """The application on ``store``; closed afterwards."""
    application = open_application(store)
    try:
        yield application
    finally:
        application.close()


@pytest.fixture
def memory_app() -> Iterator[ChronicleApplication]:
    """The application on the in-memory store."""
    application = open_application(Settings(database_url="memory:"))
    try:
        yield application
    finally:
        application.close()


# Every test runs with creatures that refuse to be changed while two states share them
# (copy-on-write, see domain/rulesets/stellar_winds/state.py): a handler that forgets
# ``state.own`` fails here instead of silently corrupting a checkpoint.
core_state.GUARD = True  # a handler that changes a shared creature without state.own() fails


TOY_RULESET = Path(__file__).resolve().parent / "plugins" / "toy_ruleset"


@pytest.fixture(scope="session")
def toy_ruleset_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy ruleset (tests/plugins/toy_ruleset) installed as a package of its own into a
    directory, the way pip installs any third-party ruleset: Chronicle finds it only through its
    ``chronicle.rulesets`` entry point. Put the directory on ``PYTHONPATH`` to give a server process
    the ruleset; :func:`toy_ruleset` does it for this process."""
    target = tmp_path_factory.mktemp("toy-ruleset")
    # built from a copy, so the checkout gets no build/ or egg-info and parallel sessions never
    # share a build directory
    source = shutil.copytree(
        TOY_RULESET,
        tmp_path_factory.mktemp("toy-ruleset-src") / "toy_ruleset",
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.fail(f"could not install the toy ruleset: {done.stderr[-2000:]}", pytrace=False)
    return target


@pytest.fixture
def toy_ruleset(toy_ruleset_path: Path) -> Iterator[Path]:
    """The toy ruleset installed and discoverable in this process (for this test only)."""
    sys.path.insert(0, str(toy_ruleset_path))
    importlib.invalidate_caches()
    rulesets.rediscover()
    try:
        yield toy_ruleset_path
    finally:
        sys.path.remove(str(toy_ruleset_path))
        importlib.invalidate_caches()
        rulesets.rediscover()
