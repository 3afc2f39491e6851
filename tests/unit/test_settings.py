"""Settings: defaults, every accepted URL form, and one clear error per bad value."""

from __future__ import annotations

import getpass

import pytest

from api.service.settings import DEFAULT_DATABASE_URL, ConfigError, Database, Settings, parse_database_url


def test_defaults_when_nothing_is_set() -> None:
    settings = Settings.from_env({})
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite:///./var/chronicle.sqlite"
    assert settings.database == Database(kind="sqlite", path="./var/chronicle.sqlite")
    assert (settings.host, settings.port, settings.log_level) == ("127.0.0.1", 8000, "info")


def test_empty_values_count_as_unset() -> None:
    env = {
        "CHRONICLE_DATABASE_URL": "",
        "CHRONICLE_HOST": " ",
        "CHRONICLE_PORT": "",
        "CHRONICLE_LOG_LEVEL": "",
    }
    assert Settings.from_env(env) == Settings()


def test_reads_every_variable() -> None:
    settings = Settings.from_env(
        {
            "CHRONICLE_DATABASE_URL": "memory:",
            "CHRONICLE_HOST": "0.0.0.0",
            "CHRONICLE_PORT": "9001",
            "CHRONICLE_LOG_LEVEL": "DEBUG",
            "UNRELATED": "x",
        }
    )
    assert settings.database == Database(kind="memory")
    assert (settings.host, settings.port, settings.log_level) == ("0.0.0.0", 9001, "debug")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:///relative/chronicle.sqlite", "relative/chronicle.sqlite"),
        ("sqlite:///./var/x.db", "./var/x.db"),
        ("sqlite:////absolute/path/x.db", "/absolute/path/x.db"),
        ("SQLite:///x.db", "x.db"),
    ],
)
def test_sqlite_urls(url: str, path: str) -> None:
    assert parse_database_url(url) == Database(kind="sqlite", path=path)


def test_postgresql_url_with_everything() -> None:
    db = parse_database_url(
        "postgresql://alice:s%40cret@db.example:6543/chronicle?schema=tenant_1&connect_timeout=3"
    )
    assert db == Database(
        kind="postgresql",
        host="db.example",
        port=6543,
        user="alice",
        password="s@cret",
        dbname="chronicle",
        schema="tenant_1",
        connect_timeout=3,
    )
    assert "s@cret" not in repr(db) and "s@cret" not in db.describe()
    assert db.describe() == "postgresql alice@db.example:6543/chronicle schema tenant_1"


def test_postgres_scheme_alias_and_defaults() -> None:
    db = parse_database_url("postgres://bob@127.0.0.1/chronicle_test")
    assert (db.kind, db.host, db.port, db.user, db.password, db.dbname, db.schema) == (
        "postgresql",
        "127.0.0.1",
        5432,
        "bob",
        "",
        "chronicle_test",
        "",
    )
    assert db.connect_timeout is None


def test_postgresql_without_user_or_host_follows_libpq() -> None:
    db = parse_database_url("postgresql:///chronicle")
    assert (db.host, db.port, db.user) == ("localhost", 5432, getpass.getuser())


def test_memory_store() -> None:
    assert Settings(database_url="memory:").database.kind == "memory"


def test_settings_repr_hides_the_password() -> None:
    settings = Settings(database_url="postgresql://u:topsecret@h/db")
    assert "topsecret" not in repr(settings)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        (
            "mysql://root@localhost/db",
            "unknown store scheme 'mysql' (use sqlite:///path or postgresql://...)",
        ),
        ("redis://localhost", "unknown store scheme 'redis'"),
        ("chronicle.sqlite", "not a URL"),
        ("sqlite://relative.db", "SQLite URLs look like sqlite:///relative/path"),
        ("sqlite:///", "names no database file"),
        ("sqlite:///var/", "names no database file"),
        ("sqlite:///x.db?mode=ro", "no query string"),
        ("postgresql://u@h:notaport/db", "bad port"),
        ("postgresql://u@h:70000/db", "bad port"),
        ("postgresql://u@h:5432", "names no database"),
        ("postgresql://u@h/db?sslmode=require", "unknown PostgreSQL URL parameter 'sslmode'"),
        ("postgresql://u@h/db?schema=Bad-Name", "schema must be a lower-case identifier"),
        ("postgresql://u@h/db?schema=", "schema must be a lower-case identifier"),
        ("postgresql://u@h/db?connect_timeout=soon", "connect_timeout must be a whole number"),
    ],
)
def test_bad_database_url_names_the_variable(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"CHRONICLE_DATABASE_URL": url})
    assert caught.value.variable == "CHRONICLE_DATABASE_URL"
    assert problem in caught.value.problem
    assert str(caught.value).startswith("CHRONICLE_DATABASE_URL: ")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("port", ["abc", "0", "65536", "-1", "80.5"])
def test_bad_port_names_the_variable(port: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"CHRONICLE_PORT": port})
    assert caught.value.variable == "CHRONICLE_PORT"
    assert repr(port) in caught.value.problem


def test_bad_log_level_names_the_variable() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"CHRONICLE_LOG_LEVEL": "loud"})
    assert caught.value.variable == "CHRONICLE_LOG_LEVEL"
    assert "debug" in caught.value.problem


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(ConfigError, match="CHRONICLE_PORT"):
        Settings(port=0)
    with pytest.raises(ConfigError, match="CHRONICLE_HOST"):
        Settings(host="")


def test_overrides_are_validated() -> None:
    settings = Settings().with_overrides(host="0.0.0.0", port=9000)
    assert (settings.host, settings.port) == ("0.0.0.0", 9000)
    assert Settings().with_overrides() == Settings()
    with pytest.raises(ConfigError):
        Settings().with_overrides(port=70000)


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(AttributeError):
        settings.port = 1  # type: ignore[misc]


def test_store_deadlines_are_read_and_checked() -> None:
    """Outages are answered within documented bounds (docs/configuration.md, issue 13 §6)."""
    settings = Settings.from_env(
        {"CHRONICLE_STORE_TIMEOUT": "5", "CHRONICLE_STATEMENT_TIMEOUT": "0", "CHRONICLE_READY_TIMEOUT": "0.5"}
    )
    assert (settings.store_timeout, settings.statement_timeout, settings.ready_timeout) == (5, 0, 0.5)
    defaults = Settings()
    assert (defaults.store_timeout, defaults.statement_timeout, defaults.ready_timeout) == (3, 60, 2.0)
    for variable, raw in (
        ("CHRONICLE_STORE_TIMEOUT", "0"),
        ("CHRONICLE_STORE_TIMEOUT", "1.5"),
        ("CHRONICLE_STATEMENT_TIMEOUT", "-1"),
        ("CHRONICLE_READY_TIMEOUT", "never"),
    ):
        with pytest.raises(ConfigError, match=variable):
            Settings.from_env({variable: raw})
