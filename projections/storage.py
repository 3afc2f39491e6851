"""Where the read models live: one small class per backend, the same interface.

- PostgreSQL (:class:`PostgresViews`): tables ``view_creatures``, ``view_encounters``,
  ``view_facts``, ``view_log`` and ``view_tracking`` in the same database and schema as
  the events (one psycopg connection, reconnected after any error).
- SQLite (:class:`SQLiteViews`): the same tables in a separate file next to the events
  file, ``<name>-views.sqlite``: eventsourcing's SQLite tables are not prefixed, so every
  application (and so every read model) gets its own file.

Exactly-once: :meth:`ViewStore.write` moves each projection's tracking position from the
value the batch was computed against to the batch's last notification id with a
conditional ``UPDATE`` (first statement of the transaction, so it also serialises
concurrent writers), then writes the rows, then commits: all or nothing. If any tracking
row is not where the batch expected (a duplicate, a replay, another worker, a rebuild),
the transaction is rolled back and ``write`` returns False.

JSON columns come back as Python objects, booleans as ``bool``, whatever the backend.

A creature row is ruleset-neutral: the columns every system shares (``ruleset``, ``name``,
``kind``, ``level``, ``life``, and ``hp`` / ``max_hp`` from the view's ``hit_points``, NULL in a
system without hit points) and the ruleset's whole creature view as JSON in ``state``, where a
system keeps its own tracks. The layout is versioned (:data:`LAYOUTS`, table ``view_layout``):
a table of an older layout is dropped and recreated when the views are opened, and its
projection's tracking set to 0, so the follower rebuilds it (``docs/upgrades.md``).

Anything the event store accepted can be written (:mod:`projections.codec`: NUL, lone
surrogates and non-finite floats are escaped on write and decoded on read). The typed
columns ``level``, ``hp``, ``max_hp`` and ``round`` are conveniences copied from the JSON
``state``: a value that is not a 32-bit integer is stored as NULL there (``state`` keeps it
exactly).

Isolation: a batch's rows are written in a savepoint; if that fails for a reason other than
the database being unavailable, each campaign's rows are retried in their own savepoint and a
campaign whose rows still fail is *quarantined* (a ``view_quarantine`` row, committed with
the batch's tracking moves) instead of stopping every campaign. The follower skips a
quarantined campaign's later facts until ``chronicle rebuild --campaign`` repairs it.
"""

from __future__ import annotations

import functools
import operator
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb, set_json_loads

from projections import codec
from projections.projector import PROJECTIONS, Batch, Failure, describe

__all__ = [
    "LAYOUTS",
    "UNAVAILABLE",
    "PostgresTarget",
    "PostgresViews",
    "SQLiteViews",
    "ViewStore",
    "views_path",
]

# Errors that mean the view database is unavailable (or busy), not that a campaign's rows are
# bad: the whole batch is retried later; nothing is quarantined for them.
UNAVAILABLE: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    psycopg.InterfaceError,
    sqlite3.OperationalError,
    sqlite3.InterfaceError,
    OSError,
    MemoryError,
)
STATUSES = ("active", "revoked", "amended", "orphaned", "overridden")
MAX_PAGE = 500

_TABLES = {
    "creatures": "view_creatures",
    "encounters": "view_encounters",
    "facts": "view_facts",
    "log": "view_log",
}
_JSON = {
    "view_creatures": ("state",),
    "view_encounters": ("state",),
    "view_facts": ("creatures", "payload", "outcome"),
    "view_log": (),
}
_COLUMNS = {
    "view_creatures": (
        "campaign_id",
        "creature_id",
        "ruleset",
        "name",
        "kind",
        "level",
        "life",
        "hp",
        "max_hp",
        "position",
        "state",
    ),
    "view_encounters": ("campaign_id", "encounter_id", "round", "turn_of", "position", "state"),
    "view_facts": (
        "campaign_id",
        "position",
        "notification_id",
        "fact_type",
        "recorded_at",
        "creatures",
        "encounter_id",
        "round",
        "active",
        "revoked",
        "amended",
        "orphaned",
        "overridden",
        "revoked_by",
        "orphan_reason",
        "payload",
        "outcome",
    ),
    "view_log": ("campaign_id", "position", "notification_id", "fact_type", "line", "struck"),
}
_KEYS = {"view_creatures": "creature_id", "view_encounters": "encounter_id"}  # with campaign_id
_BOOLS = {"active", "revoked", "amended", "orphaned", "overridden", "struck"}
_TEXT = {
    "campaign_id",
    "creature_id",
    "encounter_id",
    "ruleset",
    "name",
    "kind",
    "life",
    "turn_of",
    "fact_type",
    "recorded_at",
    "orphan_reason",
    "line",
}
# conveniences copied from `state`: NULL when not a 32-bit integer
_INT32 = {"level", "hp", "max_hp", "round"}
# how each column's value is stored (:meth:`ViewStore._values`)
_AS_IS, _DUMPED, _ESCAPED, _RANGED = range(4)
_KINDS = {
    table: tuple(
        (c, _DUMPED if c in _JSON[table] else _ESCAPED if c in _TEXT else _RANGED if c in _INT32 else _AS_IS)
        for c in cols
    )
    for table, cols in _COLUMNS.items()
}
# The layout of each projection's table. Raise a number when its columns change: opening the
# views then drops the old table, creates the new one and sets that projection's tracking to 0,
# so the follower rebuilds it from the log (nothing else is touched).
LAYOUTS: dict[str, int] = {"creatures": 2, "encounters": 1, "facts": 1, "log": 1}
_QUARANTINE_COLUMNS = ("campaign_id", "position", "notification_id", "error", "quarantined_at")


def _ddl(json_type: str, bool_type: str, big: str) -> list[str]:
    return [
        "CREATE TABLE IF NOT EXISTS {p}view_tracking (projection TEXT PRIMARY KEY, "
        f"notification_id {big} NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {p}view_layout (projection TEXT PRIMARY KEY, version INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {p}view_creatures (campaign_id TEXT NOT NULL, creature_id TEXT NOT NULL, "
        "ruleset TEXT, name TEXT, kind TEXT, level INTEGER, life TEXT, hp INTEGER, max_hp INTEGER, "
        f"position INTEGER NOT NULL, state {json_type} NOT NULL, PRIMARY KEY (campaign_id, creature_id))",
        "CREATE TABLE IF NOT EXISTS {p}view_encounters (campaign_id TEXT NOT NULL, "
        "encounter_id TEXT NOT NULL, "
        "round INTEGER, turn_of TEXT, position INTEGER NOT NULL, "
        f"state {json_type} NOT NULL, PRIMARY KEY (campaign_id, encounter_id))",
        "CREATE TABLE IF NOT EXISTS {p}view_facts (campaign_id TEXT NOT NULL, position INTEGER NOT NULL, "
        f"notification_id {big}, fact_type TEXT NOT NULL, recorded_at TEXT NOT NULL, "
        f"creatures {json_type} NOT NULL, encounter_id TEXT, round INTEGER, active {bool_type} NOT NULL, "
        f"revoked {bool_type} NOT NULL, amended {bool_type} NOT NULL, orphaned {bool_type} NOT NULL, "
        f"overridden {bool_type} NOT NULL, revoked_by INTEGER, orphan_reason TEXT, "
        f"payload {json_type} NOT NULL, "
        f"outcome {json_type}, PRIMARY KEY (campaign_id, position))",
        "CREATE INDEX IF NOT EXISTS view_facts_type ON {p}view_facts (campaign_id, fact_type, position)",
        "CREATE INDEX IF NOT EXISTS view_facts_encounter ON {p}view_facts "
        "(campaign_id, encounter_id, position)",
        "CREATE TABLE IF NOT EXISTS {p}view_log (campaign_id TEXT NOT NULL, position INTEGER NOT NULL, "
        f"notification_id {big}, fact_type TEXT NOT NULL, line TEXT NOT NULL, struck {bool_type} NOT NULL, "
        "PRIMARY KEY (campaign_id, position))",
        "CREATE TABLE IF NOT EXISTS {p}view_quarantine (campaign_id TEXT PRIMARY KEY, position INTEGER, "
        f"notification_id {big}, error TEXT NOT NULL, quarantined_at TEXT NOT NULL)",
    ]


class ViewStore:
    """The interface both backends share. Thread-safe (one connection behind a lock)."""

    placeholder = "%s"
    prefix = ""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    # -------------------------------------------------------------- to implement
    def _execute(self, query: str, params: Sequence[Any] = ()) -> int:
        raise NotImplementedError

    def _executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        raise NotImplementedError
        yield  # pragma: no cover

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """A nested transaction: rolled back alone if the block raises."""
        raise NotImplementedError
        yield  # pragma: no cover

    def _lock_tracking(self) -> None:
        """Inside a transaction: hold the tracking rows until it ends (PostgreSQL; SQLite's
        ``BEGIN IMMEDIATE`` already excludes every other writer)."""

    def _durable(self) -> None:
        """Inside a transaction: its commit waits for the WAL flush (PostgreSQL, whose views
        connection otherwise commits asynchronously): what only an operator's command writes
        (a reset, a quarantine lifted), which no follower would write again after a crash."""

    def _dump(self, value: Any) -> Any:
        raise NotImplementedError

    def _load_json(self, value: Any) -> Any:
        return value

    def _contains_creature(self) -> str:
        raise NotImplementedError

    def _creature_param(self, creature: str) -> Any:
        return codec.encode_text(creature)

    def _truncate(self, table: str) -> None:
        self._execute(f"DELETE FROM {self._t(table)}")

    def close(self) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- helpers
    def _t(self, table: str) -> str:
        return f"{self.prefix}{table}"

    def _q(self, query: str) -> str:
        return query if self.placeholder == "%s" else query.replace("%s", self.placeholder)

    def _row(self, table: str, raw: dict[str, Any]) -> dict[str, Any]:
        out = dict(raw)
        for col in _JSON[table]:
            if col in out:
                out[col] = self._load_json(out[col])
        for col in _TEXT & out.keys():
            if isinstance(out[col], str):
                out[col] = codec.decode_text(out[col])
        for col in _BOOLS & out.keys():
            out[col] = bool(out[col])
        if table == "view_facts":
            out["status"] = [s for s in STATUSES if out[s]]
        return out

    def _values(self, table: str, row: dict[str, Any]) -> list[Any]:
        """A row's values as its columns take them: JSON dumped, text escaped, conveniences
        NULL when not 32-bit integers (:data:`_KINDS`)."""
        dump, encode = self._dump, codec.encode_text
        out: list[Any] = []
        for c, kind in _KINDS[table]:
            v = row[c]
            if v is None or kind == _AS_IS:
                out.append(v)
            elif kind == _DUMPED:
                out.append(dump(v))
            elif kind == _ESCAPED:
                out.append(encode(v if isinstance(v, str) else str(v)))
            else:
                out.append(v if _int32(v) else None)
        return out

    # ------------------------------------------------------------------ schema
    def create_tables(self) -> None:
        """Create the tables and tracking rows if missing (idempotent)."""
        with self._lock, self._transaction():
            self._lock_schema()
            for statement in self._statements():
                self._execute(statement)
            if self._upgrade_layouts():
                for statement in self._statements():  # the dropped tables, in their new layout
                    self._execute(statement)
            for name in PROJECTIONS:
                self._execute(
                    self._q(
                        f"INSERT INTO {self._t('view_tracking')} (projection, notification_id) "
                        "VALUES (%s, 0) "
                        "ON CONFLICT (projection) DO NOTHING"
                    ),
                    (name,),
                )

    def _upgrade_layouts(self) -> list[str]:
        """Drop every table whose stored layout is not :data:`LAYOUTS`' and set its projection's
        tracking to 0 (the follower rebuilds it); record the current layouts. A database from
        before layouts were recorded is at layout 1 everywhere. Returns the dropped tables."""
        rows = self._fetch(f"SELECT projection, version FROM {self._t('view_layout')}")
        stored = {r["projection"]: int(r["version"]) for r in rows}
        found = dict(stored)
        if not stored and not self._fetch(f"SELECT projection FROM {self._t('view_tracking')}"):
            found = dict(LAYOUTS)  # new views (no tracking yet): the tables were just created as they are
        dropped = []
        for name, version in LAYOUTS.items():
            if found.get(name, 1) == version:
                if name not in stored:
                    self._set_layout(name, version)
                continue
            table = _TABLES[name]
            self._execute(f"DROP TABLE IF EXISTS {self._t(table)}")
            self._execute(
                self._q(f"UPDATE {self._t('view_tracking')} SET notification_id = 0 WHERE projection = %s"),
                (name,),
            )
            self._set_layout(name, version)
            dropped.append(table)
        return dropped

    def _set_layout(self, name: str, version: int) -> None:
        self._execute(
            self._q(
                f"INSERT INTO {self._t('view_layout')} (projection, version) VALUES (%s, %s) "
                "ON CONFLICT (projection) DO UPDATE SET version = excluded.version"
            ),
            (name, version),
        )

    def layouts(self) -> dict[str, int]:
        """The layout each projection's table is in (see :data:`LAYOUTS`)."""
        with self._lock:
            rows = self._fetch(f"SELECT projection, version FROM {self._t('view_layout')}")
        return {r["projection"]: int(r["version"]) for r in rows}

    def _statements(self) -> list[str]:
        raise NotImplementedError

    def _lock_schema(self) -> None:
        """Serialise concurrent table creation (PostgreSQL); nothing to do on SQLite."""

    # ---------------------------------------------------------------- tracking
    def tracking(self) -> dict[str, int]:
        """Each projection's position: the last notification id its rows include."""
        with self._lock:
            rows = self._fetch(f"SELECT projection, notification_id FROM {self._t('view_tracking')}")
        found = {r["projection"]: int(r["notification_id"]) for r in rows}
        return {p: found.get(p, 0) for p in PROJECTIONS}

    def tracking_position(self) -> int:
        """The position every projection has reached (the lowest of them)."""
        return min(self.tracking().values())

    def write(self, batch: Batch) -> bool:
        """Commit the batch's rows, quarantines and tracking moves in one transaction; False if
        the tracking rows (or the set of quarantined campaigns) were not what the batch was
        computed against (nothing is written then).

        A campaign whose rows fail to write is added to ``batch.failed`` and quarantined
        (its rows stay as they were); the other campaigns' rows and the tracking moves commit.
        Errors of :data:`UNAVAILABLE` roll everything back and propagate.
        """
        if not batch.tracking:
            return True
        for name, (expected, new) in batch.tracking.items():
            if new <= expected:
                raise ValueError(f"tracking for {name} must move forward ({expected} -> {new})")
        # one statement per distinct move (usually one for all four projections): a round
        # trip less per projection, which is most of a small batch's cost on PostgreSQL
        moves: dict[tuple[int, int], list[str]] = {}
        for name, move in sorted(batch.tracking.items()):
            moves.setdefault(move, []).append(name)
        try:
            with self._lock:
                try:  # a live step's batch: one statement where the store has one (PostgreSQL)
                    done = self._write_at_once(batch, moves)
                    if done is not None:
                        return done
                    # the common case: every row writes; no savepoint (two round trips less)
                    with self._transaction():
                        self._move_tracking(moves, batch.quarantined)
                        self._write_rows(batch, fresh=True)
                        self._record_quarantine(batch.failed.values())
                    return True
                except _Stale:
                    raise
                except UNAVAILABLE:
                    raise
                except Exception:  # some campaign's rows are bad: again, campaign by campaign
                    pass
                with self._transaction():
                    self._move_tracking(moves, batch.quarantined)
                    self._write_isolated(batch)
                    self._record_quarantine(batch.failed.values())
        except _Stale:
            return False
        return True

    def _write_at_once(self, batch: Batch, moves: dict[tuple[int, int], list[str]]) -> bool | None:
        """The whole of :meth:`write` in one statement, for a batch that fits one: True when
        written, False when stale (nothing written), None when the batch does not fit (then
        :meth:`write` takes its transaction). An error: nothing was written. None here."""
        return None

    def _move_tracking(self, moves: dict[tuple[int, int], list[str]], quarantined: frozenset[str]) -> None:
        """Inside the transaction: move each group of projections from ``expected`` to ``new``;
        :class:`_Stale` if a tracking row was elsewhere or the quarantined campaigns are not
        ``quarantined`` (then the transaction rolls back)."""
        for (expected, new), names in sorted(moves.items()):
            moved = self._execute(
                self._q(
                    f"UPDATE {self._t('view_tracking')} SET notification_id = %s "
                    f"WHERE notification_id = %s AND projection IN ({_marks(len(names))})"
                ),
                (new, expected, *names),
            )
            if moved != len(names):
                raise _Stale  # rolls the transaction back
        if self._quarantined_ids() != quarantined:
            raise _Stale  # a campaign was quarantined or repaired meanwhile

    def _write_isolated(self, batch: Batch) -> None:
        """The batch's rows campaign by campaign, each in a savepoint, quarantining each
        campaign whose rows fail (recorded in ``batch.failed``)."""
        for cid in batch.campaigns():
            try:
                with self._savepoint():
                    self._write_rows(batch.only(cid))
            except UNAVAILABLE:
                raise
            except Exception as exc:
                position, notification_id = batch.starts.get(cid, (None, None))
                batch.failed[cid] = Failure(cid, position, notification_id, describe(exc))

    def _write_rows(self, batch: Batch, fresh: bool = False) -> None:
        """The batch's deletions and rows. ``fresh``: the history and log rows of notifications
        past the batch's tracking (its new facts) are taken to be new rows and inserted
        without a conflict check where the store has a cheaper way (:meth:`_insert_new`), and so
        are the creature and encounter rows of a campaign written whole (``batch.replaced``: its
        rows are deleted first, in this transaction: a rebuild's, a campaign met anew); if
        one exists after all (``chronicle rebuild --campaign`` writes a campaign's rows ahead
        of the followers' tracking), the insert fails and :meth:`write` writes the batch again
        campaign by campaign, every row upserted. Rewrites of earlier facts are upserted."""
        self._delete("view_creatures", batch.creatures_gone, batch.replaced.get("creatures"))
        self._delete("view_encounters", batch.encounters_gone, batch.replaced.get("encounters"))
        tables = []
        for name, table, by_campaign in (
            ("creatures", "view_creatures", batch.creatures),
            ("encounters", "view_encounters", batch.encounters),
        ):
            # a campaign written whole: its rows were all deleted just above, so they are new
            whole = batch.replaced.get(name, ()) if fresh else ()
            new = [r for cid in whole for r in by_campaign.get(cid, ())]
            if len(new) < self.insert_new_from:
                tables.append((table, [r for rows in by_campaign.values() for r in rows]))
                continue
            self._insert_new(table, new)
            tables.append((table, [r for cid, rows in by_campaign.items() if cid not in whole for r in rows]))
        for name, table, rows in (("facts", "view_facts", batch.facts), ("log", "view_log", batch.log)):
            if not fresh or name not in batch.tracking:
                tables.append((table, list(rows.values())))
                continue
            past = batch.tracking[name][0]
            new = [r for r in rows.values() if (r.get("notification_id") or 0) > past]
            if len(new) < self.insert_new_from:
                tables.append((table, list(rows.values())))
                continue
            tables.append((table, [r for r in rows.values() if not (r.get("notification_id") or 0) > past]))
            self._insert_new(table, new)
        self._upsert_all(tables)

    # a table's new rows go through :meth:`_insert_new` from this many (fewer: one upsert statement)
    insert_new_from = 1 << 62

    def _insert_new(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Insert rows taken to be new (an existing key is an error); by default an upsert."""
        self._upsert(table, rows, _KEYS.get(table, "position"))

    def _delete(self, table: str, gone: dict[str, list[str]], replaced: set[str] | None) -> None:
        """The deletions of one keyed table (before its upserts): the gone rows, and every row
        of a campaign in ``replaced`` (its rows are all in the batch)."""
        key = _KEYS[table]
        if replaced:
            self._executemany(
                self._q(f"DELETE FROM {self._t(table)} WHERE campaign_id = %s"), [(cid,) for cid in replaced]
            )
        dead = [(cid, codec.encode_text(k)) for cid, keys in gone.items() for k in keys]
        if dead:
            self._executemany(
                self._q(f"DELETE FROM {self._t(table)} WHERE campaign_id = %s AND {key} = %s"), dead
            )

    def _upsert_all(self, tables: list[tuple[str, list[dict[str, Any]]]]) -> None:
        """Insert or update the rows of each table (``(table, rows)``; rows keyed by campaign and
        :data:`_KEYS`, else position)."""
        for table, rows in tables:
            self._upsert(table, rows, _KEYS.get(table, "position"))

    def _conflict_updates(self, table: str, key: str) -> str:
        """The ``ON CONFLICT ... DO UPDATE SET`` list: every column but the key; a rewrite keeps
        a row's notification id when it has none."""
        return ", ".join(
            f"{c} = COALESCE(excluded.{c}, {self._t(table)}.{c})"
            if c == "notification_id"
            else f"{c} = excluded.{c}"
            for c in _COLUMNS[table]
            if c not in ("campaign_id", key)
        )

    def _upsert(self, table: str, rows: Iterable[dict[str, Any]], key: str = "position") -> None:
        values = [self._values(table, r) for r in rows]
        if not values:
            return
        cols = _COLUMNS[table]
        self._executemany(
            self._q(
                f"INSERT INTO {self._t(table)} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))}) "
                f"ON CONFLICT (campaign_id, {key}) DO UPDATE SET {self._conflict_updates(table, key)}"
            ),
            values,
        )

    def reset(self, projections: Iterable[str] = PROJECTIONS) -> None:
        """Empty the given projections and set their tracking to 0, in one transaction.
        Resetting every projection also lifts every quarantine (everything is re-derived)."""
        names = [p for p in PROJECTIONS if p in set(projections)]
        with self._lock, self._transaction():
            self._durable()  # an operator's rebuild: a crash must not undo it after it began
            self._lock_tracking()  # (it may lift every quarantine)
            for name in names:
                self._execute(
                    self._q(
                        f"UPDATE {self._t('view_tracking')} SET notification_id = 0 WHERE projection = %s"
                    ),
                    (name,),
                )
            for name in names:
                self._truncate(_TABLES[name])
            if set(names) == set(PROJECTIONS):
                self._execute(f"DELETE FROM {self._t('view_quarantine')}")

    # -------------------------------------------------------------- quarantine
    def _quarantined_ids(self) -> frozenset[str]:
        rows = self._fetch(f"SELECT campaign_id FROM {self._t('view_quarantine')}")
        return frozenset(codec.decode_text(r["campaign_id"]) for r in rows)

    def quarantined_ids(self) -> frozenset[str]:
        """The campaigns whose projection is stopped."""
        with self._lock:
            return self._quarantined_ids()

    def quarantined(self) -> list[dict[str, Any]]:
        """Every quarantined campaign: ``campaign_id``, ``position`` (its first fact missing from
        the views), ``notification_id``, ``error`` and ``quarantined_at``, oldest first."""
        with self._lock:
            rows = self._fetch(
                f"SELECT {', '.join(_QUARANTINE_COLUMNS)} FROM {self._t('view_quarantine')} "
                "ORDER BY quarantined_at, campaign_id"
            )
        return [{k: codec.decode_text(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]

    def quarantine_count(self) -> int:
        with self._lock:
            rows = self._fetch(f"SELECT COUNT(*) AS n FROM {self._t('view_quarantine')}")
        return int(rows[0]["n"])

    def _record_quarantine(self, failures: Iterable[Failure]) -> None:
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        values = [
            [
                codec.encode_text(f.campaign_id),
                f.position,
                f.notification_id,
                codec.encode_text(f.error),
                now,
            ]
            for f in failures
        ]
        if not values:
            return
        cols = _QUARANTINE_COLUMNS
        updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c != "campaign_id")
        self._executemany(
            self._q(
                f"INSERT INTO {self._t('view_quarantine')} ({', '.join(cols)}) VALUES ({_marks(len(cols))}) "
                f"ON CONFLICT (campaign_id) DO UPDATE SET {updates}"
            ),
            values,
        )

    def quarantine(self, failure: Failure) -> None:
        """Quarantine one campaign now (or replace the reason of its quarantine)."""
        with self._lock, self._transaction():
            self._lock_tracking()
            self._record_quarantine([failure])

    # -------------------------------------------------------- one campaign
    def begin_campaign_rebuild(self, campaign_id: str, reason: str) -> None:
        """Quarantine the campaign (unless it already is) so no follower writes its rows, and
        delete all its rows, in one transaction."""
        cid = codec.encode_text(campaign_id)
        with self._lock, self._transaction():
            self._lock_tracking()
            if campaign_id not in self._quarantined_ids():
                self._record_quarantine([Failure(campaign_id, None, None, reason)])
            for table in _TABLES.values():
                self._execute(self._q(f"DELETE FROM {self._t(table)} WHERE campaign_id = %s"), (cid,))

    def write_campaign_rows(self, batch: Batch) -> None:
        """Write a batch's rows (one campaign being rebuilt) without moving any tracking."""
        with self._lock, self._transaction():
            self._write_rows(batch)

    @contextmanager
    def holding_tracking(self) -> Iterator[dict[str, int]]:
        """A transaction that holds the tracking rows (no follower commits meanwhile);
        yields the tracking positions. Use :meth:`write_campaign_rows_held` and
        :meth:`lift_held` inside it."""
        with self._lock, self._transaction():
            self._lock_tracking()
            rows = self._fetch(f"SELECT projection, notification_id FROM {self._t('view_tracking')}")
            found = {r["projection"]: int(r["notification_id"]) for r in rows}
            yield {p: found.get(p, 0) for p in PROJECTIONS}

    def write_campaign_rows_held(self, batch: Batch) -> None:
        self._write_rows(batch)

    def lift_held(self, campaign_id: str) -> None:
        # (chronicle rebuild --campaign reports the campaign rebuilt once this commits: the
        # commit, and with it every view write before it, waits for the WAL)
        self._durable()
        self._execute(
            self._q(f"DELETE FROM {self._t('view_quarantine')} WHERE campaign_id = %s"),
            (codec.encode_text(campaign_id),),
        )

    # ------------------------------------------------------------------- reads
    def get_creature(self, campaign_id: str, creature_id: str) -> dict[str, Any] | None:
        rows = self._select(
            "view_creatures",
            "campaign_id = %s AND creature_id = %s",
            [str(campaign_id), codec.encode_text(creature_id)],
        )
        return rows[0] if rows else None

    def list_creatures(self, campaign_id: str) -> list[dict[str, Any]]:
        return self._select("view_creatures", "campaign_id = %s", [str(campaign_id)], order="creature_id")

    def get_encounter(self, campaign_id: str, encounter_id: str) -> dict[str, Any] | None:
        rows = self._select(
            "view_encounters",
            "campaign_id = %s AND encounter_id = %s",
            [str(campaign_id), codec.encode_text(encounter_id)],
        )
        return rows[0] if rows else None

    def list_encounters(self, campaign_id: str) -> list[dict[str, Any]]:
        return self._select("view_encounters", "campaign_id = %s", [str(campaign_id)], order="encounter_id")

    def history(
        self,
        campaign_id: str,
        creature: str | None = None,
        encounter: str | None = None,
        fact_types: Sequence[str] | None = None,
        status: str | None = None,
        after_position: int | None = None,
        before_position: int | None = None,
        first: int = 50,
    ) -> list[dict[str, Any]]:
        """History rows in position order, filtered; ``first`` at most 500."""
        where, params = self._filters(campaign_id, encounter, fact_types, after_position, before_position)
        if creature is not None:
            where.append(self._contains_creature())
            params.append(self._creature_param(creature))
        if status is not None:
            if status not in STATUSES:
                raise ValueError(f"unknown status {status!r} (one of {', '.join(STATUSES)})")
            where.append(f"{status} = %s")
            params.append(True)
        return self._select("view_facts", " AND ".join(where), params, order="position", limit=_page(first))

    def log_lines(
        self,
        campaign_id: str,
        encounter: str | None = None,
        fact_types: Sequence[str] | None = None,
        after_position: int | None = None,
        before_position: int | None = None,
        first: int = 50,
    ) -> list[dict[str, Any]]:
        """Log lines in position order (the encounter filter goes through the history table)."""
        where, params = self._filters(campaign_id, None, fact_types, after_position, before_position)
        if encounter is not None:
            where.append(
                f"position IN (SELECT position FROM {self._t('view_facts')} "
                "WHERE campaign_id = %s AND encounter_id = %s)"
            )
            params.extend([str(campaign_id), codec.encode_text(encounter)])
        return self._select("view_log", " AND ".join(where), params, order="position", limit=_page(first))

    def _filters(
        self,
        campaign_id: str,
        encounter: str | None,
        fact_types: Sequence[str] | None,
        after: int | None,
        before: int | None,
    ) -> tuple[list[str], list[Any]]:
        where: list[str] = ["campaign_id = %s"]
        params: list[Any] = [str(campaign_id)]
        if encounter is not None:
            where.append("encounter_id = %s")
            params.append(codec.encode_text(encounter))
        if fact_types:
            where.append(f"fact_type IN ({', '.join(['%s'] * len(fact_types))})")
            params.extend(codec.encode_text(t) for t in fact_types)
        if after is not None:
            where.append("position > %s")
            params.append(after)
        if before is not None:
            where.append("position < %s")
            params.append(before)
        return where, params

    def _select(
        self, table: str, where: str, params: Sequence[Any], *, order: str = "", limit: int | None = None
    ) -> list[dict[str, Any]]:
        query = f"SELECT {', '.join(_COLUMNS[table])} FROM {self._t(table)} WHERE {where}"
        if order:
            query += f" ORDER BY {order}"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._lock:
            rows = self._fetch(self._q(query), list(params))
        return [self._row(table, r) for r in rows]

    def dump(self, written_at: bool = True) -> dict[str, list[dict[str, Any]]]:
        """Every row of every view, in key order (for tests and checks). ``written_at=False``
        leaves out the ``position`` of the creature and encounter rows: the campaign position a
        row was last written at, which depends on how the facts were batched (a row is written
        when its view changes, so one per fact and a rebuild's 500 a batch differ there)."""
        keys = {
            "view_creatures": "campaign_id, creature_id",
            "view_encounters": "campaign_id, encounter_id",
            "view_facts": "campaign_id, position",
            "view_log": "campaign_id, position",
        }
        out = {table: self._select(table, "1 = 1", [], order=keys[table]) for table in keys}
        if not written_at:
            for table in _KEYS:
                for row in out[table]:
                    del row["position"]
        return out


# What a one-statement write (PostgresViews._write_at_once) raises when the batch is stale: the
# text of a cast that fails, read back from the error (22P02)
_STALE_MARK = "chronicle: stale tracking or quarantines"


class _Stale(Exception):
    """A tracking row was not where the batch expected: roll back."""


def _int32(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31


def _json_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row as :meth:`ViewStore._values` would store it, for a JSON transport (PostgreSQL's
    ``json_populate_recordset``): the JSON columns as they are (the whole array is dumped with
    :func:`codec.dumps`, which escapes every string as :func:`codec.encode_text` does), text
    columns as text, conveniences NULL when not 32-bit integers. The row itself when it needs
    no change (the common case: no copy)."""
    fixed: dict[str, Any] | None = None
    for c in _COLUMNS[table]:
        v = row[c]
        if v is None or c in _JSON[table]:
            continue
        if c in _TEXT:
            if isinstance(v, str):
                continue
            v = str(v)
        elif c in _INT32:
            if _int32(v):
                continue
            v = None
        else:
            continue
        if fixed is None:
            fixed = {k: row[k] for k in _COLUMNS[table]}
        fixed[c] = v
    return row if fixed is None else fixed


@functools.cache
def _copy_values(table: str) -> Callable[[dict[str, Any]], list[Any]]:
    """A function giving a row's values as :meth:`ViewStore._values` stores them, JSON dumped to
    text (:func:`codec.dumps`): the columns' values taken at once (``itemgetter``), then only the
    columns that need a change are looked at (a row of ``view_facts``: 9 of 17)."""
    cols = _COLUMNS[table]
    take = operator.itemgetter(*cols)
    dumped = [i for i, (_, kind) in enumerate(_KINDS[table]) if kind == _DUMPED]
    escaped = [i for i, (_, kind) in enumerate(_KINDS[table]) if kind == _ESCAPED]
    ranged = [i for i, (_, kind) in enumerate(_KINDS[table]) if kind == _RANGED]
    dumps, encode = codec.dumps, codec.encode_text

    def values(row: dict[str, Any]) -> list[Any]:
        out = list(take(row))
        for i in dumped:
            v = out[i]
            if v is not None:
                out[i] = dumps(v)
        for i in escaped:
            v = out[i]
            if v is None:
                continue
            if v.__class__ is not str:
                out[i] = encode(str(v))
            elif not v.isascii() or "\x00" in v:  # (encode_text's own fast test, inline)
                out[i] = encode(v)
        for i in ranged:
            v = out[i]
            if v is not None and not _int32(v):
                out[i] = None
        return out

    return values


def _marks(n: int) -> str:
    return ", ".join(["%s"] * n)


def _page(first: int) -> int:
    if not 1 <= int(first) <= MAX_PAGE:
        raise ValueError(f"first must be between 1 and {MAX_PAGE}")
    return int(first)


# --------------------------------------------------------------------------- SQLite
def views_path(events_path: str) -> Path:
    """The views file beside an SQLite events file.

    ``var/chronicle.sqlite`` -> ``var/chronicle-views.sqlite``.
    """
    p = Path(events_path)
    return p.with_name(f"{p.stem}-views.sqlite")


class SQLiteViews(ViewStore):
    placeholder = "?"

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None, timeout=30
        )
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self.create_tables()

    def _statements(self) -> list[str]:
        return [s.format(p="") for s in _ddl("TEXT", "INTEGER", "INTEGER")]

    def _execute(self, query: str, params: Sequence[Any] = ()) -> int:
        return self._conn.execute(self._q(query), tuple(params)).rowcount

    def _executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        self._conn.executemany(self._q(query), [tuple(r) for r in rows])

    def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return [dict(r) for r in self._conn.execute(self._q(query), tuple(params)).fetchall()]

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        self._conn.execute("SAVEPOINT chronicle_rows")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK TO chronicle_rows")
            self._conn.execute("RELEASE chronicle_rows")
            raise
        self._conn.execute("RELEASE chronicle_rows")

    def _dump(self, value: Any) -> Any:
        return codec.dumps(value)

    def _load_json(self, value: Any) -> Any:
        return None if value is None else codec.loads(value)

    def _contains_creature(self) -> str:
        return "EXISTS (SELECT 1 FROM json_each(view_facts.creatures) WHERE json_each.value = ?)"

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# ----------------------------------------------------------------------- PostgreSQL
class PostgresTarget(Protocol):
    """Where a PostgreSQL database is (``api.service.settings.Database`` fits)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def user(self) -> str: ...
    @property
    def password(self) -> str: ...
    @property
    def dbname(self) -> str: ...
    @property
    def schema(self) -> str: ...
    @property
    def connect_timeout(self) -> int | None: ...


def connect_postgres(db: PostgresTarget, application_name: str) -> psycopg.Connection[dict[str, Any]]:
    """An autocommit connection returning rows as dicts, named ``application_name`` in
    ``pg_stat_activity`` -- followed by the process's ``PGAPPNAME`` in brackets when one is set
    (``chronicle-views (worker-2)``), so an operator tells the workers' connections apart."""
    process_name = os.environ.get("PGAPPNAME")
    if process_name:
        application_name = f"{application_name} ({process_name})"
    return psycopg.connect(
        host=db.host,
        port=db.port,
        user=db.user,
        password=db.password,
        dbname=db.dbname,
        connect_timeout=db.connect_timeout or 5,
        autocommit=True,
        row_factory=dict_row,
        application_name=application_name,
    )


# A tracking move's condition (PostgreSQL): the rows' ``quarantines`` version is the one its
# statement's snapshot saw. The quarantines a move checks are read in that snapshot too, but a
# move that waited for the tracking rows' lock (a quarantine recorded or lifted under
# :meth:`PostgresViews._lock_tracking`) re-checks only the rows it locked, as committed since:
# without a version there, it moved past a campaign lifted meanwhile (whose facts the batch
# left out: lost from the views) or wrote the rows of a campaign quarantined and emptied
# meanwhile. The subquery is evaluated once, in the snapshot; the re-check sees the new version.
_UNCHANGED = "quarantines = (SELECT max(quarantines) FROM {tracking})"


class PostgresViews(ViewStore):
    def __init__(self, db: PostgresTarget) -> None:
        super().__init__()
        self.db = db
        self.schema = db.schema or "public"
        self.prefix = sql.Identifier(self.schema).as_string(None) + "."
        self._conn: psycopg.Connection[dict[str, Any]] | None = None
        self.create_tables()

    def _connection(self) -> psycopg.Connection[dict[str, Any]]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = connect_postgres(self.db, "chronicle-views")
            set_json_loads(codec.loads, self._conn)  # decode what codec.dumps escaped
            # Read models are derived: a commit need not wait for its WAL flush. A crash can lose
            # the last few hundred milliseconds of view writes, never half of one (rows and
            # tracking commit together), and the worker projects them again from the log.
            self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def _statements(self) -> list[str]:
        return [s.format(p=self.prefix) for s in _ddl("JSONB", "BOOLEAN", "BIGINT")] + [
            f"CREATE INDEX IF NOT EXISTS view_facts_creatures ON {self.prefix}view_facts "
            "USING gin (creatures)",
            # bumped by every change of the quarantines (:meth:`_lock_tracking`; :data:`_UNCHANGED`)
            f"ALTER TABLE {self.prefix}view_tracking "
            "ADD COLUMN IF NOT EXISTS quarantines BIGINT NOT NULL DEFAULT 0",
        ]

    def _lock_schema(self) -> None:
        self._execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"chronicle-views:{self.schema}",))

    def _execute(self, query: str, params: Sequence[Any] = ()) -> int:
        with self._connection().cursor() as cur:
            cur.execute(query, tuple(params))
            return cur.rowcount

    def _executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._connection().cursor() as cur:
            cur.executemany(query, [tuple(r) for r in rows])

    def _fetch(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._connection().cursor() as cur:
            cur.execute(query, tuple(params))
            return list(cur.fetchall())

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        try:
            with self._connection().transaction():
                yield
        except psycopg.Error:
            if self._conn is not None and (self._conn.broken or self._conn.closed):
                self._conn = None
            raise

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        with self._connection().transaction():  # nested in the open transaction: a savepoint
            yield

    def _lock_tracking(self) -> None:
        """Hold the tracking rows and bump their ``quarantines`` version: whatever the
        transaction changes in the quarantines, a follower's tracking move that waited for
        these rows then finds them changed and moves nothing (:data:`_UNCHANGED`).

        The table lock first: a live step's one statement (:meth:`_write_at_once`) locks the
        view tables when it is planned, before it waits for the tracking rows, and
        :meth:`reset` truncates those tables once it holds the rows -- in that order the two
        deadlocked. Held first, the table lock makes the statement wait before it locks
        anything (it conflicts with every write of the tracking, not with reads)."""
        tracking = self._t("view_tracking")
        self._execute(
            f"LOCK TABLE {tracking} IN SHARE ROW EXCLUSIVE MODE; "
            f"UPDATE {tracking} SET quarantines = quarantines + 1"
        )

    def _durable(self) -> None:
        self._execute("SET LOCAL synchronous_commit = on")

    def _move_tracking(self, moves: dict[tuple[int, int], list[str]], quarantined: frozenset[str]) -> None:
        """As :meth:`ViewStore._move_tracking`, the quarantined campaigns read by the last move
        (one round trip for the usual single move)."""
        found: list[dict[str, Any]] = []
        for k, ((expected, new), names) in enumerate(sorted(moves.items())):
            last = k == len(moves) - 1
            found = self._fetch(
                f"UPDATE {self._t('view_tracking')} SET notification_id = %s "
                f"WHERE notification_id = %s AND projection IN ({_marks(len(names))}) "
                f"AND {_UNCHANGED.format(tracking=self._t('view_tracking'))} RETURNING "
                + (
                    f"(SELECT array_agg(campaign_id) FROM {self._t('view_quarantine')}) AS quarantined"
                    if last
                    else "projection"
                ),
                (new, expected, *names),
            )
            if len(found) != len(names):
                raise _Stale  # rolls the transaction back
        ids = frozenset(codec.decode_text(c) for c in (found[0]["quarantined"] or ()))
        if ids != quarantined:
            raise _Stale  # a campaign was quarantined or repaired meanwhile

    # A ``COPY`` of 3,000 history rows took 0.19-0.23 s where the JSON upsert below took 0.52 s
    # (min of 4, same rows, same table and indexes; the client's CPU the same); a few rows are
    # cheaper in the upsert's one statement for every table (a COPY is two round trips).
    insert_new_from = 64

    def _insert_new(self, table: str, rows: list[dict[str, Any]]) -> None:
        """``COPY`` the rows in (their values as :meth:`ViewStore._values` gives them, the JSON
        columns as the text :func:`codec.dumps` writes: ``COPY`` sends text, so a ``Jsonb``
        wrapper and its dumper per value would only add their cost; :func:`_copy_values`)."""
        cols = _COLUMNS[table]
        values = _copy_values(table)
        with self._connection().cursor() as cur:
            with cur.copy(f"COPY {self._t(table)} ({', '.join(cols)}) FROM STDIN") as copy:
                write = copy.write_row
                for row in rows:
                    write(values(row))

    def _upserts(
        self, tables: list[tuple[str, list[dict[str, Any]]]], where: str = ""
    ) -> tuple[list[str], list[str]]:
        """One ``INSERT ... ON CONFLICT DO UPDATE`` per table with rows, its rows sent as one JSON
        array (``json_populate_recordset``; ``where``: a condition on the rows' ``SELECT``), and
        their parameters."""
        parts: list[str] = []
        params: list[str] = []
        for table, rows in tables:
            if not rows:
                continue
            key = _KEYS.get(table, "position")
            cols = ", ".join(_COLUMNS[table])
            parts.append(
                f"INSERT INTO {self._t(table)} ({cols}) SELECT {cols} FROM "
                f"json_populate_recordset(NULL::{self._t(table)}, %s::json){where} "
                f"ON CONFLICT (campaign_id, {key}) DO UPDATE SET {self._conflict_updates(table, key)}"
            )
            params.append(codec.dumps([_json_row(table, r) for r in rows]))
        return parts, params

    def _upsert_all(self, tables: list[tuple[str, list[dict[str, Any]]]]) -> None:
        """Every table's rows in one statement (one ``INSERT`` per table in a ``WITH``), each
        table's rows sent as one JSON array (``json_populate_recordset``): one round trip and one
        JSON dump for the batch, not a statement and a parameter adaptation per row."""
        parts, params = self._upserts(tables)
        if not parts:
            return
        *first, last = parts
        query = last
        if first:
            query = "WITH " + ", ".join(f"w{k} AS ({p})" for k, p in enumerate(first)) + " " + last
        self._execute(query, params)

    def _write_at_once(self, batch: Batch, moves: dict[tuple[int, int], list[str]]) -> bool | None:
        """The tracking move, the check that the tracking and the quarantines are what the batch
        was computed against, and every row, in ONE statement in autocommit (a transaction of its
        own): one round trip where the transaction took four (BEGIN, the move, the rows, COMMIT).
        Each table's rows are inserted only past the check, and a failed check raises inside the
        statement (:data:`_STALE_MARK`), so nothing of a stale batch is written. For a batch with
        one move, no deletions, no quarantine to record and fewer history and log rows than
        :attr:`insert_new_from` -- a live step's, whose transaction would upsert them all (else
        None: :meth:`write` takes its transaction, which COPYs a catch-up's new rows in)."""
        if len(moves) != 1 or batch.failed or batch.creatures_gone or batch.encounters_gone:
            return None
        if any(batch.replaced.values()):
            return None
        if len(batch.facts) >= self.insert_new_from or len(batch.log) >= self.insert_new_from:
            return None
        rows = [
            ("view_creatures", [r for rows in batch.creatures.values() for r in rows]),
            ("view_encounters", [r for rows in batch.encounters.values() for r in rows]),
            ("view_facts", list(batch.facts.values())),
            ("view_log", list(batch.log.values())),
        ]
        (((expected, new), names),) = moves.items()
        quarantined = [codec.encode_text(c) for c in batch.quarantined]
        tracking, quarantine = self._t("view_tracking"), self._t("view_quarantine")
        parts, params = self._upserts(rows, " WHERE (SELECT ok FROM checked)")
        query = (
            f"WITH moved AS (UPDATE {tracking} SET notification_id = %s WHERE notification_id = %s "
            f"AND projection IN ({_marks(len(names))}) AND {_UNCHANGED.format(tracking=tracking)} "
            "RETURNING projection), "
            "checked AS (SELECT CASE WHEN (SELECT count(*) FROM moved) = %s "
            f"AND (SELECT count(*) FROM {quarantine}) = %s "
            f"AND NOT EXISTS (SELECT FROM {quarantine} WHERE NOT campaign_id = ANY(%s::text[])) "
            f"THEN true ELSE ('{_STALE_MARK} ' || (SELECT count(*) FROM moved))::boolean END AS ok)"
            + "".join(f", w{k} AS ({p})" for k, p in enumerate(parts))
            + " SELECT ok FROM checked"
        )
        try:
            self._fetch(query, (new, expected, *names, len(names), len(quarantined), quarantined, *params))
        except psycopg.errors.InvalidTextRepresentation as exc:
            if _STALE_MARK in str(exc):
                return False
            raise
        return True

    def _dump(self, value: Any) -> Any:
        return Jsonb(value, dumps=codec.dumps)

    def _contains_creature(self) -> str:
        return "creatures @> %s"

    def _creature_param(self, creature: str) -> Any:
        return Jsonb([creature], dumps=codec.dumps)  # jsonb containment: the array holds this id

    def _truncate(self, table: str) -> None:
        self._execute(f"TRUNCATE {self._t(table)}")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
