"""How CHRONICLE_DATABASE_URL becomes eventsourcing's own configuration (no store is opened)."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.service.settings import ConfigError, Settings
from api.service.store import open_application, persistence_env


def test_memory() -> None:
    assert persistence_env(Settings(database_url="memory:")) == {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def test_sqlite_creates_the_parent_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "chronicle.sqlite"
    env = persistence_env(Settings(database_url=f"sqlite:///{path}"))
    assert env == {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": "3",
        "CREATE_TABLE": "y",
    }
    assert path.parent.is_dir()
    assert not path.exists()


def test_sqlite_parent_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="CHRONICLE_DATABASE_URL: cannot create directory"):
        persistence_env(Settings(database_url=f"sqlite:///{blocker}/x.sqlite"))


def test_postgresql() -> None:
    env = persistence_env(Settings(database_url="postgresql://u:p%2Fw@db:6543/chronicle"))
    assert env == {
        "PERSISTENCE_MODULE": "api.service.pgstore:PostgresStore",
        "POSTGRES_DBNAME": "chronicle",
        "POSTGRES_HOST": "db",
        "POSTGRES_PORT": "6543",
        "POSTGRES_USER": "u",
        "POSTGRES_PASSWORD": "p/w",
        "POSTGRES_CONNECT_TIMEOUT": "3",
        "POSTGRES_LOCK_TIMEOUT": "3",
        "STORE_TIMEOUT": "3",
        "POSTGRES_STATEMENT_TIMEOUT": "60",
        "CREATE_TABLE": "y",
    }


def test_store_timeouts_come_from_the_settings(tmp_path: Path) -> None:
    settings = Settings(database_url="postgresql://u@db/chronicle", store_timeout=7, statement_timeout=0)
    env = persistence_env(settings)
    assert env["POSTGRES_LOCK_TIMEOUT"] == env["STORE_TIMEOUT"] == "7"
    assert env["POSTGRES_STATEMENT_TIMEOUT"] == "0"
    sqlite = Settings(database_url=f"sqlite:///{tmp_path / 'c.sqlite'}", store_timeout=7)
    assert persistence_env(sqlite)["SQLITE_LOCK_TIMEOUT"] == "7"


def test_postgresql_schema_and_timeout() -> None:
    env = persistence_env(Settings(database_url="postgres://u@db/chronicle?schema=play&connect_timeout=2"))
    assert env["POSTGRES_SCHEMA"] == "play"
    assert env["POSTGRES_CONNECT_TIMEOUT"] == "2"


def test_database_functions_are_never_enabled() -> None:
    for url in ("memory:", "postgresql://u@db/chronicle", "postgresql://u@db/chronicle?schema=s"):
        assert not any("ENABLE_DB_FUNCTIONS" in key for key in persistence_env(Settings(database_url=url)))


@pytest.mark.parametrize("key", ["POSTGRES_ENABLE_DB_FUNCTIONS", "CHRONICLE_POSTGRES_ENABLE_DB_FUNCTIONS"])
def test_an_environment_enabling_database_functions_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match=key):
        open_application(Settings(database_url="memory:"), environ={key: "yes"})


def test_an_environment_disabling_database_functions_is_fine() -> None:
    app = open_application(Settings(database_url="memory:"), environ={"POSTGRES_ENABLE_DB_FUNCTIONS": "no"})
    try:
        cid = app.create_campaign("Still works")
        assert app.campaign(cid).name == "Still works"
    finally:
        app.close()


def test_prefixed_eventsourcing_variables_cannot_redirect_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # eventsourcing reads CHRONICLE_<KEY> before <KEY>; CHRONICLE_DATABASE_URL must still win.
    monkeypatch.setenv("CHRONICLE_PERSISTENCE_MODULE", "eventsourcing.popo")
    path = tmp_path / "pinned.sqlite"
    app = open_application(Settings(database_url=f"sqlite:///{path}"))
    try:
        app.create_campaign("Pinned")
    finally:
        app.close()
    assert path.exists()
