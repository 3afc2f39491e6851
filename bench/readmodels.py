"""Read-model helpers for the benchmarks: set the tracking, and the raw row-writes floor.

``set_tracking(settings, position)`` empties the views and puts every projection's tracking at
``position`` through the product's :meth:`ViewStore.write` (an empty batch that only moves the
tracking), as if the read models had kept up to there.

The raw row-writes floor writes the rows the projector writes for a campaign -- one history
row and one log row per fact, one row per creature and per encounter -- with nothing but the
driver's ``executemany`` (psycopg with its pipeline; sqlite3), 500 facts per transaction, into
tables made by the product's own DDL (same columns, keys and indexes). The row *shapes* come
from the product's projector functions (``fact_rows``, ``creature_row``, ``encounter_row``) for
a replayed sample of the campaign's first facts, reused cyclically for the rest (each with its
own position and payload), so the floor does not pay for a full fold.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from api.service.settings import Settings
from api.service.views import open_views
from domain.checkpoints import OrphanLog
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset, narrator_for
from domain.rulesets import summary as whole_state
from projections.projector import PROJECTIONS, Batch, _read, creature_row, encounter_row, fact_rows
from projections.storage import _COLUMNS, _JSON, PostgresViews, SQLiteViews, connect_postgres, views_path

CAMPAIGN = "00000000-0000-4000-8000-0000000000be"


def set_tracking(settings: Settings, position: int, attempts: int = 3) -> None:
    """Empty the views; every projection's tracking at ``position``. Retried: on a shared
    PostgreSQL other test runs may cut connections named like the product's."""
    for attempt in range(attempts):
        try:
            views = open_views(settings)
            try:
                views.reset()
                if position > 0 and not views.write(Batch(tracking={p: (0, position) for p in PROJECTIONS})):
                    raise RuntimeError("could not move the views' tracking")
                return
            finally:
                views.close()
        except (psycopg.OperationalError, sqlite3.OperationalError):
            if attempt == attempts - 1:
                raise
            time.sleep(0.5)


class TrackingProbe:
    """Reads the views' tracking position on a connection of the bench's own (named
    ``chronicle-bench``), polled while a rebuild or a worker runs."""

    def __init__(self, settings: Settings) -> None:
        db = settings.database
        self.kind = db.kind
        if db.kind == "postgresql":
            self.table = f'"{db.schema or "public"}".view_tracking'
            self._pg = connect_postgres(db, "chronicle-bench")
        else:
            self.table = "view_tracking"
            self._lite = sqlite3.connect(str(views_path(db.path)), timeout=30)
        self.settings = settings

    def position(self) -> int:
        query = f"SELECT min(notification_id) AS n FROM {self.table}"
        if self.kind == "postgresql":
            try:
                row = self._pg.execute(query).fetchone()
            except psycopg.OperationalError:  # cut by someone else: reconnect once
                self._pg = connect_postgres(self.settings.database, "chronicle-bench")
                row = self._pg.execute(query).fetchone()
            return int(row["n"] or 0) if row else 0
        found = self._lite.execute(query).fetchone()
        return int(found[0] or 0) if found else 0

    def close(self) -> None:
        if self.kind == "postgresql":
            self._pg.close()
        else:
            self._lite.close()


@dataclass
class RowShapes:
    facts: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    creatures: list[dict[str, Any]] = field(default_factory=list)
    encounters: list[dict[str, Any]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.facts) + len(self.log) + len(self.creatures) + len(self.encounters)


def row_shapes(
    header: dict[str, Any], facts: Sequence[tuple[str, int, dict[str, Any], dict[str, Any]]], sample: int
) -> RowShapes:
    """The rows of every fact, creature and encounter of the campaign (see the module docstring)."""
    ledger = Ledger(get_ruleset(header["ruleset"]), header.get("flags") or {}, first_seq=2)
    for i, (t, v, p, m) in enumerate(facts[:sample]):
        ledger.append(Entry(i + 2, t, v, p, m))
    readings: list[Any] = []
    res = ledger.resolution  # the sample's corrections, resolved
    state = ledger.ruleset.initial_state({**ledger.base_flags, **res.retro_flags})
    orphans = OrphanLog()

    narrator = narrator_for(ledger.ruleset)

    def sink(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
        readings.append(_read(e, outcome, orphan, state, narrator, res.amended.get(e.seq, e.payload)))

    ledger._fold(state, orphans, 0, len(ledger.entries), res, sink=sink)
    summary = whole_state(ledger.ruleset, state)
    out = RowShapes()
    for i, (t, _v, p, _m) in enumerate(facts):
        fact, line = fact_rows(CAMPAIGN, ledger, res, readings[i % len(readings)], i + 2)
        fact.update(position=i + 2, fact_type=t, payload=p)
        line.update(position=i + 2, fact_type=t)
        out.facts.append(fact)
        out.log.append(line)
    creature_views = list(summary["creatures"].values())
    encounter_views = list(summary["encounters"].values())
    n_creatures = sum(1 for t, *_ in facts if t == "CreatureRegistered")
    n_encounters = sum(1 for t, *_ in facts if t == "EncounterStarted")
    last = len(facts) + 1
    for k in range(n_creatures):
        row = creature_row(CAMPAIGN, last, creature_views[k % len(creature_views)])
        row["creature_id"] = f"{row['creature_id']}-{k}"
        out.creatures.append(row)
    for k in range(n_encounters):
        row = encounter_row(CAMPAIGN, last, encounter_views[k % len(encounter_views)])
        row["encounter_id"] = f"{row['encounter_id']}-{k}"
        out.encounters.append(row)
    return out


def _values(table: str, row: dict[str, Any], dump: Any) -> tuple[Any, ...]:
    dumped = _JSON[table]
    return tuple(dump(row[c]) if c in dumped and row[c] is not None else row[c] for c in _COLUMNS[table])


def _insert(table: str, mark: str) -> str:
    cols = _COLUMNS[table]
    return f"INSERT INTO {{p}}{table} ({', '.join(cols)}) VALUES ({', '.join([mark] * len(cols))})"


def write_rows(kind: str, settings: Settings, shapes: RowShapes, batch: int) -> float:
    """Seconds to write every row with plain executemany, ``batch`` facts per transaction."""
    if kind == "postgresql":
        db = settings.database
        PostgresViews(db).close()  # the product's tables, indexes included
        prefix = f'"{db.schema or "public"}".'
        conn = connect_postgres(db, "chronicle-bench-rows")
        conn.autocommit = False
        dump: Any = Jsonb
        try:
            began = time.perf_counter()
            with conn.cursor() as cur:
                for i in range(0, len(shapes.facts), batch):
                    with conn.transaction():
                        for table, rows in (("view_facts", shapes.facts), ("view_log", shapes.log)):
                            cur.executemany(
                                _insert(table, "%s").format(p=prefix),
                                [_values(table, r, dump) for r in rows[i : i + batch]],
                            )
                with conn.transaction():
                    for table, rows in (
                        ("view_creatures", shapes.creatures),
                        ("view_encounters", shapes.encounters),
                    ):
                        cur.executemany(
                            _insert(table, "%s").format(p=prefix), [_values(table, r, dump) for r in rows]
                        )
            return time.perf_counter() - began
        finally:
            conn.close()
    path = views_path(settings.database.path)
    SQLiteViews(path).close()
    lite = sqlite3.connect(str(path), isolation_level=None)
    lite.execute("PRAGMA journal_mode=WAL")
    lite.execute("PRAGMA synchronous=NORMAL")
    encode = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode
    try:
        began = time.perf_counter()
        for i in range(0, len(shapes.facts), batch):
            lite.execute("BEGIN IMMEDIATE")
            for table, rows in (("view_facts", shapes.facts), ("view_log", shapes.log)):
                lite.executemany(
                    _insert(table, "?").format(p=""), [_values(table, r, encode) for r in rows[i : i + batch]]
                )
            lite.execute("COMMIT")
        lite.execute("BEGIN IMMEDIATE")
        for table, rows in (("view_creatures", shapes.creatures), ("view_encounters", shapes.encounters)):
            lite.executemany(_insert(table, "?").format(p=""), [_values(table, r, encode) for r in rows])
        lite.execute("COMMIT")
        return time.perf_counter() - began
    finally:
        lite.close()
