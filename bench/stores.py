"""Scratch stores for the benchmarks: a fresh PostgreSQL schema or SQLite file per use.

``scratch(ctx, kind, label)`` yields a :class:`Store` and removes it afterwards (schema dropped
with CASCADE, SQLite directory deleted; SIGTERM unwinds too, see ``bench.__main__``).
``loaded(ctx, kind, size)`` is a scratch store holding one generated campaign, imported from the
cache with the product's import (``ChronicleApplication.import_campaign``, as ``chronicle
import`` stores it), a GM token for it, and the read models' tracking set to the store's head:
a deployment whose read models kept up. (On SQLite the server follows the log in process; with
the tracking at 0 it would spend the whole session rebuilding. The rebuild is a figure of its own.)
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from api.service.settings import Settings, parse_database_url
from bench import campaigns
from bench.core import Context, OverBudget, size_label
from bench.procs import work


@dataclass
class Store:
    kind: str  # "postgresql" | "sqlite"
    url: str  # CHRONICLE_DATABASE_URL
    label: str
    info: dict[str, Any] = field(default_factory=dict)  # what ``loaded`` put there

    @property
    def settings(self) -> Settings:
        return Settings(database_url=self.url)

    @property
    def campaign_id(self) -> str:
        return str(self.info["campaign_id"])

    @property
    def token(self) -> str:
        return str(self.info["token"])

    @property
    def facts(self) -> int:
        return int(self.info["facts"])


def with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
    query.append(("schema", schema))
    return urlunsplit(parts._replace(query=urlencode(query)))


def connect(url: str) -> psycopg.Connection[Any]:
    db = parse_database_url(url)
    return psycopg.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, dbname=db.dbname, autocommit=True
    )


def postgres_version(url: str) -> str:
    try:
        with connect(url) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]) if row else "?"
    except psycopg.Error as exc:
        return f"unavailable ({' '.join(str(exc).split())[:80]})"


@contextlib.contextmanager
def scratch(ctx: Context, kind: str, label: str) -> Iterator[Store]:
    """An empty store of ``kind`` for the block."""
    tag = f"{label}_{uuid.uuid4().hex[:8]}".lower()
    if kind == "postgresql":
        schema = f"bench_{tag}"
        with connect(ctx.database_url) as conn:
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            yield Store(kind, with_schema(ctx.database_url, schema), tag)
        finally:
            with connect(ctx.database_url) as conn:
                conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    elif kind == "sqlite":
        folder = Path(tempfile.mkdtemp(prefix=f"chronicle-bench-{tag}-"))
        try:
            yield Store(kind, f"sqlite:///{folder / 'events.sqlite'}", tag)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        raise ValueError(f"unknown store {kind!r}")


def load(ctx: Context, store: Store, size: int) -> dict[str, Any]:
    """Import the cached campaign of ``size`` facts into ``store`` (a fresh process)."""
    path = campaigns.cached(size, ctx.seed, ctx.cache_dir)
    ctx.log(f"  loading {size_label(size)} facts into {store.kind} ({store.label})")
    try:
        info = work(
            "load",
            {"url": store.url, "path": str(path), "validate": ctx.import_mode == "validated"},
            # loading is no figure: a generous budget (the validation folds fact by fact, each
            # correction refolding from its reach: 100k took over 1,000 s on the busy machine)
            seconds=max(900.0, size / (25 if ctx.import_mode == "validated" else 300)),
            memory_mb=ctx.budgets.memory_mb,
            label=store.label,
            inprocess=ctx.smoke,
        )
    except OverBudget as exc:
        raise RuntimeError(
            f"could not load the {size_label(size)} campaign within budget: {exc.what}"
        ) from None
    store.info.update(info, generated=campaigns.stats(path))
    return info


@contextlib.contextmanager
def loaded(ctx: Context, kind: str, size: int) -> Iterator[Store]:
    with scratch(ctx, kind, f"{size_label(size)}") as store:
        load(ctx, store, size)
        yield store
