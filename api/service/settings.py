"""Chronicle's configuration: one place, read from ``CHRONICLE_*`` environment variables.

===================================  ================================  =======================================
Variable                             Default                           Meaning
===================================  ================================  =======================================
CHRONICLE_DATABASE_URL               sqlite:///./var/chronicle.sqlite  the event store (forms below)
CHRONICLE_HOST                       127.0.0.1                         interface ``chronicle serve`` binds
CHRONICLE_PORT                       8000                              TCP port ``chronicle serve`` binds
CHRONICLE_LOG_LEVEL                  info                              critical, error, warning, info, debug,
                                                                       trace
CHRONICLE_GRAPHQL_INTROSPECTION      true                              GraphQL introspection on or off
CHRONICLE_GRAPHQL_MAX_DEPTH          15                                deepest GraphQL selection accepted
CHRONICLE_GRAPHQL_MAX_ALIASES        30                                most aliases in one GraphQL document
CHRONICLE_GRAPHQL_MAX_TOKENS         5000                              most tokens in one GraphQL document
CHRONICLE_GRAPHQL_MAX_COST           10000                             most fields one GraphQL operation may
                                                                       resolve (estimated before it runs,
                                                                       counted while it runs)
CHRONICLE_GRAPHQL_TIMEOUT            10                                seconds a GraphQL query may run
CHRONICLE_MAX_BODY_BYTES             1048576                           largest request body (else 413)
CHRONICLE_SUBSCRIPTION_POLL_SECONDS  1.0                               subscriptions poll the store this often
CHRONICLE_LOG_FORMAT                 json                              json (one object per line) or text
CHRONICLE_READY_MAX_LAG              1000                              /readyz: most facts the read models may
                                                                       be behind the store (0: not checked)
CHRONICLE_SHUTDOWN_TIMEOUT           20                                seconds in-flight requests get after
                                                                       SIGTERM
CHRONICLE_STORE_TIMEOUT              3                                 seconds a store call keeps retrying and
                                                                       waits for a lock (then
                                                                       STORE_UNAVAILABLE)
CHRONICLE_STATEMENT_TIMEOUT          60                                PostgreSQL: longest statement, seconds
                                                                       (0: no limit)
CHRONICLE_READY_TIMEOUT              2                                 seconds /readyz waits for the store
CHRONICLE_CACHE_MAX_FACTS            250000                            most facts the campaign cache holds in
                                                                       memory; least recently used campaigns
                                                                       beyond it are dropped
CHRONICLE_LEDGER_WINDOW              10000                             recent facts of a campaign kept in
                                                                       memory (older ones are read back)
CHRONICLE_SNAPSHOT_EVERY             5000                              new facts after which a campaign's fold
                                                                       is snapshotted (0: never)
CHRONICLE_CHECKPOINT_CACHE_MB        32                                megabytes of persisted checkpoint rows
                                                                       (their JSON) kept loaded, shared by
                                                                       every campaign (0: none)
===================================  ================================  =======================================

``CHRONICLE_DATABASE_URL`` takes one of:

- ``sqlite:///relative/path`` (relative to the working directory) or ``sqlite:////absolute/path``:
  an SQLite file, one per application; its directory is created on start;
- ``postgresql://user:password@host:port/dbname`` (``postgres://`` too), optionally with
  ``?schema=NAME`` (an existing schema; default ``public``) and ``&connect_timeout=SECONDS``
  (default 3: each connection attempt, and each wait for a pooled connection). Host defaults
  to ``localhost``, port to 5432, user (as in libpq) to the operating-system user;
  percent-escape special characters in the password;
- ``memory:``: nothing is kept (tests and demos only).

An empty value counts as unset. Every problem is reported as a :class:`ConfigError` naming the
variable, so the CLI can print one clear line instead of a traceback. ``docs/configuration.md``
is the operator-facing copy of this table; keep the two in step.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = [
    "DATABASE_URL",
    "DEFAULT_DATABASE_URL",
    "DEFAULT_HOST",
    "DEFAULT_LOG_LEVEL",
    "DEFAULT_PORT",
    "HOST",
    "LOG_LEVEL",
    "LOG_LEVELS",
    "PORT",
    "ConfigError",
    "Database",
    "Settings",
    "parse_database_url",
]

PREFIX = "CHRONICLE_"
DATABASE_URL = PREFIX + "DATABASE_URL"
HOST = PREFIX + "HOST"
PORT = PREFIX + "PORT"
LOG_LEVEL = PREFIX + "LOG_LEVEL"
GRAPHQL_INTROSPECTION = PREFIX + "GRAPHQL_INTROSPECTION"
GRAPHQL_MAX_DEPTH = PREFIX + "GRAPHQL_MAX_DEPTH"
GRAPHQL_MAX_ALIASES = PREFIX + "GRAPHQL_MAX_ALIASES"
GRAPHQL_MAX_TOKENS = PREFIX + "GRAPHQL_MAX_TOKENS"
GRAPHQL_MAX_COST = PREFIX + "GRAPHQL_MAX_COST"
GRAPHQL_TIMEOUT = PREFIX + "GRAPHQL_TIMEOUT"
MAX_BODY_BYTES = PREFIX + "MAX_BODY_BYTES"
SUBSCRIPTION_POLL_SECONDS = PREFIX + "SUBSCRIPTION_POLL_SECONDS"
LOG_FORMAT = PREFIX + "LOG_FORMAT"
READY_MAX_LAG = PREFIX + "READY_MAX_LAG"
SHUTDOWN_TIMEOUT = PREFIX + "SHUTDOWN_TIMEOUT"
STORE_TIMEOUT = PREFIX + "STORE_TIMEOUT"
STATEMENT_TIMEOUT = PREFIX + "STATEMENT_TIMEOUT"
READY_TIMEOUT = PREFIX + "READY_TIMEOUT"
CACHE_MAX_FACTS = PREFIX + "CACHE_MAX_FACTS"
LEDGER_WINDOW = PREFIX + "LEDGER_WINDOW"
SNAPSHOT_EVERY = PREFIX + "SNAPSHOT_EVERY"
CHECKPOINT_CACHE_MB = PREFIX + "CHECKPOINT_CACHE_MB"

DEFAULT_DATABASE_URL = "sqlite:///./var/chronicle.sqlite"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_LOG_LEVEL = "info"
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
DEFAULT_LOG_FORMAT = "json"
LOG_FORMATS = ("json", "text")
DEFAULT_READY_MAX_LAG = 1000
DEFAULT_SHUTDOWN_TIMEOUT = 20.0
DEFAULT_GRAPHQL_MAX_COST = 10_000
DEFAULT_GRAPHQL_TIMEOUT = 10.0
DEFAULT_STORE_TIMEOUT = 3
DEFAULT_STATEMENT_TIMEOUT = 60
DEFAULT_READY_TIMEOUT = 2.0
DEFAULT_CACHE_MAX_FACTS = 250_000
DEFAULT_LEDGER_WINDOW = 10_000
DEFAULT_SNAPSHOT_EVERY = 5_000
DEFAULT_CHECKPOINT_CACHE_MB = 32

_SCHEME_HINT = "use sqlite:///path or postgresql://..."
_POSTGRES_PARAMS = ("schema", "connect_timeout")
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")

StoreKind = Literal["sqlite", "postgresql", "memory"]


class ConfigError(Exception):
    """A configuration value is wrong; ``variable`` names it, ``problem`` says what is wrong."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem


@dataclass(frozen=True)
class Database:
    """A parsed ``CHRONICLE_DATABASE_URL``.

    ``path`` is set for SQLite; ``host``/``port``/``user``/``password``/``dbname`` and the
    optional ``schema`` and ``connect_timeout`` for PostgreSQL; nothing for ``memory:``.
    """

    kind: StoreKind
    path: str = ""
    host: str = ""
    port: int = 0
    user: str = ""
    password: str = field(default="", repr=False)
    dbname: str = ""
    schema: str = ""
    connect_timeout: int | None = None

    def describe(self) -> str:
        """A one-line description without secrets, e.g. for the startup banner and logs."""
        if self.kind == "sqlite":
            return f"sqlite {self.path}"
        if self.kind == "postgresql":
            where = f"postgresql {self.user}@{self.host}:{self.port}/{self.dbname}"
            return f"{where} schema {self.schema}" if self.schema else where
        return "memory (nothing is kept)"


def parse_database_url(url: str, variable: str = DATABASE_URL) -> Database:
    """Parse a database URL; raise :class:`ConfigError` naming ``variable`` if it is wrong."""
    url = url.strip()
    if url == "memory:":
        return Database(kind="memory")
    scheme, sep, _ = url.partition(":")
    if not sep or not scheme:
        raise ConfigError(variable, f"not a URL: {url!r} ({_SCHEME_HINT})")
    scheme = scheme.lower()
    if scheme == "sqlite":
        return _parse_sqlite(url, variable)
    if scheme in ("postgresql", "postgres"):
        return _parse_postgres(url, variable)
    raise ConfigError(variable, f"unknown store scheme {scheme!r} ({_SCHEME_HINT})")


def _parse_sqlite(url: str, variable: str) -> Database:
    # sqlite:///relative/path -> "relative/path"; sqlite:////abs/path -> "/abs/path".
    prefix = "sqlite:///"
    if url[: len(prefix)].lower() != prefix:
        raise ConfigError(
            variable,
            f"SQLite URLs look like sqlite:///relative/path or sqlite:////absolute/path, got {url!r}",
        )
    path = url[len(prefix) :]
    if "?" in path or "#" in path:
        raise ConfigError(variable, "SQLite URLs take no query string or fragment")
    if not path or path.endswith("/"):
        raise ConfigError(variable, f"SQLite URL names no database file: {url!r}")
    return Database(kind="sqlite", path=path)


def _parse_postgres(url: str, variable: str) -> Database:
    parts = urlsplit(url)
    if parts.fragment:
        raise ConfigError(variable, "PostgreSQL URLs take no fragment")
    try:
        port = parts.port or 5432
    except ValueError:
        raise ConfigError(variable, f"bad port in PostgreSQL URL: {parts.netloc!r}") from None
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname or "/" in dbname:
        raise ConfigError(
            variable, "PostgreSQL URL names no database (postgresql://user:pass@host:port/dbname)"
        )
    params: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _POSTGRES_PARAMS:
            allowed = ", ".join(_POSTGRES_PARAMS)
            raise ConfigError(variable, f"unknown PostgreSQL URL parameter {key!r} (allowed: {allowed})")
        params[key] = value
    schema = params.get("schema", "")
    if "schema" in params and not _SCHEMA_NAME.fullmatch(schema):
        raise ConfigError(variable, f"schema must be a lower-case identifier (a-z, 0-9, _), got {schema!r}")
    connect_timeout: int | None = None
    if "connect_timeout" in params:
        raw = params["connect_timeout"]
        if not raw.isdigit() or int(raw) < 1:
            raise ConfigError(variable, f"connect_timeout must be a whole number of seconds, got {raw!r}")
        connect_timeout = int(raw)
    return Database(
        kind="postgresql",
        host=parts.hostname or "localhost",
        port=port,
        # Like libpq, a URL without a user name connects as the operating-system user.
        user=unquote(parts.username) if parts.username else getpass.getuser(),
        password=unquote(parts.password or ""),
        dbname=dbname,
        schema=schema,
        connect_timeout=connect_timeout,
    )


def _parse_port(raw: str) -> int:
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise ConfigError(PORT, f"must be a TCP port number from 1 to 65535, got {raw!r}")
    return int(raw)


def _parse_bool(variable: str, raw: str) -> bool:
    value = raw.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ConfigError(variable, f"must be true or false, got {raw!r}")


def _parse_positive_int(variable: str, raw: str, maximum: int = 1 << 31) -> int:
    if not raw.strip().isdigit() or not 1 <= int(raw) <= maximum:
        raise ConfigError(variable, f"must be a whole number from 1 to {maximum}, got {raw!r}")
    return int(raw)


def _parse_seconds(variable: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.05 <= value <= 3600:
        raise ConfigError(variable, f"must be a number of seconds from 0.05 to 3600, got {raw!r}")
    return value


def _parse_log_format(raw: str) -> str:
    value = raw.strip().lower()
    if value not in LOG_FORMATS:
        raise ConfigError(LOG_FORMAT, f"unknown log format {raw!r} (use one of: {', '.join(LOG_FORMATS)})")
    return value


def _parse_lag(raw: str) -> int:
    if not raw.strip().isdigit() or int(raw) > 1 << 31:
        raise ConfigError(
            READY_MAX_LAG, f"must be a whole number from 0 (not checked) to {1 << 31}, got {raw!r}"
        )
    return int(raw)


def _parse_whole_seconds(variable: str, raw: str, minimum: int, maximum: int) -> int:
    if not raw.strip().isdigit() or not minimum <= int(raw) <= maximum:
        raise ConfigError(
            variable, f"must be a whole number of seconds from {minimum} to {maximum}, got {raw!r}"
        )
    return int(raw)


def _parse_count(variable: str, raw: str, minimum: int) -> int:
    if not raw.strip().isdigit() or not minimum <= int(raw) <= 1 << 40:
        raise ConfigError(variable, f"must be a whole number from {minimum} to {1 << 40}, got {raw!r}")
    return int(raw)


def _parse_log_level(raw: str) -> str:
    level = raw.strip().lower()
    if level not in LOG_LEVELS:
        raise ConfigError(LOG_LEVEL, f"unknown log level {raw!r} (use one of: {', '.join(LOG_LEVELS)})")
    return level


@dataclass(frozen=True)
class Settings:
    """Chronicle's whole configuration. Validated on construction; see the module docstring."""

    database_url: str = field(default=DEFAULT_DATABASE_URL, repr=False)
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    log_level: str = DEFAULT_LOG_LEVEL
    graphql_introspection: bool = True
    graphql_max_depth: int = 15
    graphql_max_aliases: int = 30
    graphql_max_tokens: int = 5000
    graphql_max_cost: int = DEFAULT_GRAPHQL_MAX_COST
    graphql_timeout: float = DEFAULT_GRAPHQL_TIMEOUT
    max_body_bytes: int = 1 << 20
    subscription_poll_seconds: float = 1.0
    log_format: str = DEFAULT_LOG_FORMAT
    ready_max_lag: int = DEFAULT_READY_MAX_LAG
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT
    store_timeout: int = DEFAULT_STORE_TIMEOUT
    statement_timeout: int = DEFAULT_STATEMENT_TIMEOUT
    ready_timeout: float = DEFAULT_READY_TIMEOUT
    cache_max_facts: int = DEFAULT_CACHE_MAX_FACTS
    ledger_window: int = DEFAULT_LEDGER_WINDOW
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY
    checkpoint_cache_mb: int = DEFAULT_CHECKPOINT_CACHE_MB
    database: Database = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "database", parse_database_url(self.database_url))
        if not self.host.strip():
            raise ConfigError(HOST, "must not be blank")
        if isinstance(self.port, bool) or not isinstance(self.port, int):
            raise ConfigError(PORT, f"must be an integer, got {self.port!r}")
        _parse_port(str(self.port))
        object.__setattr__(self, "log_level", _parse_log_level(self.log_level))
        for variable, value in (
            (GRAPHQL_MAX_DEPTH, self.graphql_max_depth),
            (GRAPHQL_MAX_ALIASES, self.graphql_max_aliases),
            (GRAPHQL_MAX_TOKENS, self.graphql_max_tokens),
            (GRAPHQL_MAX_COST, self.graphql_max_cost),
            (MAX_BODY_BYTES, self.max_body_bytes),
        ):
            _parse_positive_int(variable, str(value))
        _parse_seconds(SUBSCRIPTION_POLL_SECONDS, str(self.subscription_poll_seconds))
        _parse_seconds(GRAPHQL_TIMEOUT, str(self.graphql_timeout))
        object.__setattr__(self, "log_format", _parse_log_format(self.log_format))
        if isinstance(self.ready_max_lag, bool) or not isinstance(self.ready_max_lag, int):
            raise ConfigError(READY_MAX_LAG, f"must be an integer, got {self.ready_max_lag!r}")
        _parse_lag(str(self.ready_max_lag))
        _parse_seconds(SHUTDOWN_TIMEOUT, str(self.shutdown_timeout))
        _parse_whole_seconds(STORE_TIMEOUT, str(self.store_timeout), 1, 600)
        _parse_whole_seconds(STATEMENT_TIMEOUT, str(self.statement_timeout), 0, 86400)
        _parse_seconds(READY_TIMEOUT, str(self.ready_timeout))
        for variable, value, minimum in (
            (CACHE_MAX_FACTS, self.cache_max_facts, 1),
            (LEDGER_WINDOW, self.ledger_window, 0),
            (SNAPSHOT_EVERY, self.snapshot_every, 0),
            (CHECKPOINT_CACHE_MB, self.checkpoint_cache_mb, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(variable, f"must be an integer, got {value!r}")
            _parse_count(variable, str(value), minimum)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        """Read the ``CHRONICLE_*`` variables (unset or empty means the default)."""

        def get(name: str) -> str | None:
            value = environ.get(name)
            return value.strip() if value is not None and value.strip() else None

        port = get(PORT)
        graphql: dict[str, Any] = {}
        if (raw := get(GRAPHQL_INTROSPECTION)) is not None:
            graphql["graphql_introspection"] = _parse_bool(GRAPHQL_INTROSPECTION, raw)
        for variable, name in (
            (GRAPHQL_MAX_DEPTH, "graphql_max_depth"),
            (GRAPHQL_MAX_ALIASES, "graphql_max_aliases"),
            (GRAPHQL_MAX_TOKENS, "graphql_max_tokens"),
            (GRAPHQL_MAX_COST, "graphql_max_cost"),
            (MAX_BODY_BYTES, "max_body_bytes"),
        ):
            if (raw := get(variable)) is not None:
                graphql[name] = _parse_positive_int(variable, raw)
        if (raw := get(GRAPHQL_TIMEOUT)) is not None:
            graphql["graphql_timeout"] = _parse_seconds(GRAPHQL_TIMEOUT, raw)
        if (raw := get(SUBSCRIPTION_POLL_SECONDS)) is not None:
            graphql["subscription_poll_seconds"] = _parse_seconds(SUBSCRIPTION_POLL_SECONDS, raw)
        if (raw := get(LOG_FORMAT)) is not None:
            graphql["log_format"] = _parse_log_format(raw)
        if (raw := get(READY_MAX_LAG)) is not None:
            graphql["ready_max_lag"] = _parse_lag(raw)
        if (raw := get(SHUTDOWN_TIMEOUT)) is not None:
            graphql["shutdown_timeout"] = _parse_seconds(SHUTDOWN_TIMEOUT, raw)
        if (raw := get(STORE_TIMEOUT)) is not None:
            graphql["store_timeout"] = _parse_whole_seconds(STORE_TIMEOUT, raw, 1, 600)
        if (raw := get(STATEMENT_TIMEOUT)) is not None:
            graphql["statement_timeout"] = _parse_whole_seconds(STATEMENT_TIMEOUT, raw, 0, 86400)
        if (raw := get(READY_TIMEOUT)) is not None:
            graphql["ready_timeout"] = _parse_seconds(READY_TIMEOUT, raw)
        for variable, name, minimum in (
            (CACHE_MAX_FACTS, "cache_max_facts", 1),
            (LEDGER_WINDOW, "ledger_window", 0),
            (SNAPSHOT_EVERY, "snapshot_every", 0),
            (CHECKPOINT_CACHE_MB, "checkpoint_cache_mb", 0),
        ):
            if (raw := get(variable)) is not None:
                graphql[name] = _parse_count(variable, raw, minimum)
        return cls(
            database_url=get(DATABASE_URL) or DEFAULT_DATABASE_URL,
            host=get(HOST) or DEFAULT_HOST,
            port=_parse_port(port) if port is not None else DEFAULT_PORT,
            log_level=get(LOG_LEVEL) or DEFAULT_LOG_LEVEL,
            **graphql,
        )

    def with_overrides(self, *, host: str | None = None, port: int | None = None) -> Settings:
        """A copy with command-line overrides applied (and validated)."""
        return dataclasses.replace(
            self,
            host=self.host if host is None else host,
            port=self.port if port is None else port,
        )
