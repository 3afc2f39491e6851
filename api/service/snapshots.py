"""Persisted snapshots of the fold, in the event store's own database (issue 21).

A snapshot row holds, for one campaign, the state after a position folded under a stated
resolution: the ruleset and its ``version``, a fingerprint of the rules, flags and
corrections it was folded under, and the ledger's indexes (corrections, rulings, idempotency
keys, correlation and causation, each correction's reach), zlib-compressed JSON written by
:meth:`domain.ledger.Capture.to_json`. A fresh process loads the newest valid snapshot and
only the facts after it (:meth:`ChronicleApplication._load`); a snapshot that does not fit
(other rules or flags, a mismatching fingerprint, a corrupt row) is deleted and the
campaign is folded from its facts instead. A snapshot is derived data: dropping the table
loses nothing but time.

Beside the fold snapshots the table holds the ledger's checkpoints of both series
(``corrected``, and ``recorded``: what the table believed), as full states and deltas from the
checkpoint before, each row with the digest of the rules and flags it was folded under and, for
a corrected one, the newest correction it took into account (``through``), so that a restored
ledger adopts only those that still read like its own (``Ledger.adopt_stored``).

The table, ``chronicle_snapshots``, is created like the library creates its own (``CREATE
TABLE IF NOT EXISTS`` when the application starts with ``CREATE_TABLE``), schema-qualified
on PostgreSQL like the events; the in-memory store keeps snapshots in a dictionary.

Writing happens off the request path (:class:`SnapshotWriter`, one daemon thread): a
command only notes that a campaign moved on; the writer takes a cheap capture under the
campaign's lock (a clone of the state and copies of the indexes), then dumps, compresses
and stores it without holding anything. A crash mid-write loses only the snapshot.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from api.service import observability
from api.service.gcpause import gc_paused
from api.service.giveway import CommandGate
from api.service.jsonio import loads_exact
from domain.checkpoints import (
    Delta,
    LoadedRow,
    OrphanLog,
    PointLoader,
    load_row,
    partial_state,
    rebuild_loaded,
)
from domain.core.state import slot_names
from domain.ledger import MissingFacts

log = logging.getLogger(__name__)

__all__ = [
    "CHECKPOINT_CACHE_MB",
    "CORRECTED",
    "CheckpointRows",
    "FOLD",
    "RECORDED",
    "MemorySnapshots",
    "SnapshotRow",
    "SnapshotStore",
    "SnapshotWriter",
    "decode",
    "encode",
    "point_loader",
    "snapshot_store",
]

TABLE = "chronicle_snapshots"
FOLD = "fold"
CORRECTED, RECORDED = "corrected", "recorded"  # the two checkpoint series
KEEP = 2  # fold snapshots kept per campaign (the newest, and one before it should it be unreadable)


@dataclass(frozen=True)
class SnapshotRow:
    """One row: a fold snapshot (``kind`` ``fold``), or one persisted checkpoint of the
    ``corrected`` or ``recorded`` series (``base``: a full state, else a delta from the
    checkpoint before it; ``through``: the newest correction the fold that made it took into
    account)."""

    campaign_id: UUID
    kind: str
    position: int
    ruleset: str
    ruleset_version: str
    fingerprint: str
    written_at: str
    data: bytes
    through: int = 0
    base: bool = True

    def decode(self) -> dict[str, Any]:
        """The row's JSON data (raises ValueError/zlib.error on a corrupt row)."""
        return decode(self.data)


ENCODE_DEPTH = 3  # containers opened piece by piece by ``encode`` (below: one ``json.dumps`` each)
ENCODE_CHUNK = 1 << 16  # characters of JSON gathered before each call of the compressor
_DUMP = json.JSONEncoder(separators=(",", ":")).encode  # (C-accelerated, like json.dumps)


def encode(data: dict[str, Any], pause: Callable[[], object] | None = None) -> bytes:
    """``zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)`` -- the same JSON,
    compressed -- without the whole JSON text in memory: the outer containers (down to
    ``ENCODE_DEPTH``: a snapshot's sections, its state's creatures and encounters) are written
    item by item, each item dumped on its own, and the text is compressed a chunk at a time
    (a snapshot of a 100k-fact campaign is tens of megabytes of JSON: +22 MB at once).

    ``pause``: called after each chunk (the snapshot writer's pause point: a fold snapshot or a
    full checkpoint row of a 100k campaign took up to 0.6 s of CPU to encode, and a command
    that started meanwhile shared the interpreter with all of it)."""
    out: list[bytes] = []
    z = zlib.compressobj(6)
    buf: list[str] = []
    size = 0
    for piece in json_pieces(data, ENCODE_DEPTH):
        buf.append(piece)
        size += len(piece)
        if size >= ENCODE_CHUNK:
            out.append(z.compress("".join(buf).encode()))
            buf.clear()
            size = 0
            if pause is not None:
                pause()
    out.append(z.compress("".join(buf).encode()))
    out.append(z.flush())
    return b"".join(out)


class Streamed:
    """A JSON object that :func:`encode` writes member by member, each member's value made only
    as it is written: ``members()`` yields ``(key, value)`` pairs (called once per write)."""

    __slots__ = ("members",)

    def __init__(self, members: Callable[[], Iterable[tuple[str, Any]]]) -> None:
        self.members = members


_TABLE_KEYS = ("table", "creatures", "encounters")


def streamed_state(dump_state: Callable[[Any], Any], state: Any) -> Any:
    """``dump_state(state)`` as :func:`encode` writes it, one creature and encounter dumped at a
    time: a whole state's JSON data is never in memory at once (a 100k-fact campaign's present is
    thousands of creatures and encounters; its data as plain dictionaries took more memory than
    the state itself, at the peak of an import). Each is dumped through ``dump_state`` as the
    part of a state holding only it -- the ruleset's contract, which checkpoint deltas rely on
    too -- so the bytes are those of the whole dump. A state that is not a table of creatures
    and encounters, or a ruleset whose dump is not ``{"table", "creatures", "encounters"}``, is
    dumped whole."""
    cls = type(state)
    creatures, encounters = getattr(state, "creatures", None), getattr(state, "encounters", None)
    if type(creatures) is not dict or type(encounters) is not dict:
        return dump_state(state)
    derived = getattr(state, "DERIVED", ())
    slots = {
        n: getattr(state, n)
        for n in slot_names(cls)
        if n not in ("creatures", "encounters") and n not in derived and hasattr(state, n)
    }

    def part(cs: dict[str, Any], es: dict[str, Any]) -> Any:
        return dump_state(partial_state(cls, Delta(cs, es, slots)))

    head = part({}, {})
    if not isinstance(head, dict) or tuple(head) != _TABLE_KEYS or head["creatures"] or head["encounters"]:
        return dump_state(state)

    def members() -> Iterator[tuple[str, Any]]:
        yield "table", head["table"]
        yield (
            "creatures",
            Streamed(lambda: ((k, part({k: c}, {})["creatures"][k]) for k, c in creatures.items())),
        )
        yield (
            "encounters",
            Streamed(lambda: ((k, part({}, {k: e})["encounters"][k]) for k, e in encounters.items())),
        )

    return Streamed(members)


def json_pieces(value: Any, depth: int) -> Iterator[str]:
    """``json.dumps(value, separators=(",", ":"))`` in pieces: the dictionaries and lists down to
    ``depth`` levels are opened here, everything below them is one piece each. A
    :class:`Streamed` object is opened at any depth (its members are made as they are written)."""
    if type(value) is Streamed:
        sep = "{"
        for k, v in value.members():
            yield sep + _DUMP(k) + ":"
            yield from json_pieces(v, depth - 1)
            sep = ","
        yield "{}" if sep == "{" else "}"
        return
    if depth <= 0 or not value or type(value) not in (dict, list):
        yield _DUMP(value)
    elif type(value) is dict:
        sep = "{"
        for k, v in value.items():
            # (a key that is not a string is written as json.dumps writes it: from a dictionary)
            yield sep + (_DUMP(k) + ":" if type(k) is str else _DUMP({k: 0})[1:-2])
            yield from json_pieces(v, depth - 1)
            sep = ","
        yield "}"
    else:
        sep = "["
        for v in value:
            yield sep
            yield from json_pieces(v, depth - 1)
            sep = ","
        yield "]"


POINTS_KEPT = 2  # checkpoints kept rebuilt per loader, to rebuild later ones from
CHECKPOINT_CACHE_MB = 32  # CHRONICLE_CHECKPOINT_CACHE_MB: the loaded rows one application keeps


class CheckpointRows:
    """Loaded checkpoint rows (:func:`domain.checkpoints.load_row`), least recently used first,
    shared by every point loader of an application -- every campaign's, both series' -- and
    bounded by the size of their JSON (``budget`` bytes; a loaded row takes about three times
    its JSON in memory): a history page at a random position rebuilds its checkpoint from the
    rows it shares with those loaded before (the full state and the deltas of its stretch),
    decoding only the others, whichever loader loaded them. A row is keyed by its ruleset,
    position, form (full or delta) and bytes: a rebuilt state is a function of its rows, and a loaded row is
    never changed by a rebuild (``rebuild_loaded``), so reusing it gives what decoding gives.
    Thread-safe (the snapshot writer rebuilds checkpoints beside the requests)."""

    def __init__(self, budget: int = CHECKPOINT_CACHE_MB * 1_000_000) -> None:
        self.budget = budget
        self._rows: OrderedDict[tuple[Any, int, bool, bytes], tuple[LoadedRow, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.size = 0  # JSON bytes of the rows kept
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: tuple[Any, int, bool, bytes]) -> LoadedRow | None:
        with self._lock:
            hit = self._rows.get(key)
            if hit is None:
                self.misses += 1
                return None
            self.hits += 1
            self._rows.move_to_end(key)
            return hit[0]

    def put(self, key: tuple[Any, int, bool, bytes], row: LoadedRow, size: int) -> None:
        """Keep ``row`` (its JSON ``size`` bytes), letting the least recently used go beyond the
        budget; a row larger than the whole budget is not kept (budget 0: nothing is)."""
        if size > self.budget:
            return
        with self._lock:
            if key in self._rows:
                return
            self._rows[key] = (row, size)
            self.size += size
            while self.size > self.budget:
                self.size -= self._rows.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self.size = 0


def _decoded(data: bytes) -> tuple[dict[str, Any], int]:
    """:func:`decode`, and the size of the row's JSON."""
    raw = zlib.decompress(data)
    out = loads_exact(raw)  # (orjson where exact: a stored checkpoint is megabytes of JSON)
    if not isinstance(out, dict):
        raise ValueError("a snapshot is a JSON object")
    return out, len(raw)


def decode(data: bytes) -> dict[str, Any]:
    return _decoded(data)[0]


def point_loader(
    rules: Any,
    every: int,
    chain: Callable[[int], list[tuple[int, bool, bytes]]],
    rows: CheckpointRows | None = None,
) -> PointLoader:
    """How a ledger rebuilds a persisted checkpoint of one series: ``chain(position)`` gives its
    rows (position, full, data), from the last full state at or before it up to it; the rows
    loaded are kept in ``rows``, the application's cache (by default one of the loader's own)."""
    # Checkpoints rebuilt lately, each with the rows it was rebuilt from: a later checkpoint of
    # the same chain starts from the newest one whose rows are a prefix of its own (same
    # positions, same bytes: a rebuilt state is a function of its rows), so it decodes only
    # the deltas after it instead of the full state and up to 127 deltas again.
    kept: list[tuple[list[tuple[int, bytes]], Any, list[tuple[int, str]]]] = []
    cache = CheckpointRows() if rows is None else rows

    def loaded(position: int, full: bool, data: bytes) -> LoadedRow:
        # the ruleset object itself (held by the key, so never mistaken for a later one at its address)
        key = (rules, position, full, data)
        row = cache.get(key)
        if row is None:
            raw, size = _decoded(data)
            row = load_row(rules, full, raw)
            cache.put(key, row, size)
        return row

    def load(position: int) -> Any:
        rows = chain(position)
        if (
            not rows
            or rows[-1][0] != position
            or any(b[0] - a[0] != every for a, b in zip(rows, rows[1:], strict=False))
        ):
            raise MissingFacts(f"the stored checkpoint at {position} is incomplete")
        key = [(p, bytes(data)) for p, _, data in rows]
        start, k = None, 0
        for prefix, state, orphans in kept:
            m = len(prefix)
            if k < m <= len(key) and key[m - 1] == prefix[-1] and key[:m] == prefix:
                start, k = (state, orphans), m
        try:
            # megabytes of JSON decoded into a burst of acyclic objects: the collector would walk
            # the whole loaded heap for them, several times
            with gc_paused():
                todo = [loaded(p, full, d) for (p, d), (_, full, _) in zip(key[k:], rows[k:], strict=True)]
                state, orphans = rebuild_loaded(todo, None if start is None else (start[0].clone(), start[1]))
        except (ValueError, KeyError, TypeError, zlib.error) as exc:
            raise MissingFacts(f"the stored checkpoint at {position} is unreadable: {exc}") from None
        if k < len(key):
            kept.append((key, state, orphans))
            del kept[:-POINTS_KEPT]
        return state.clone(), OrphanLog(orphans).view()

    return load


class SnapshotStore:
    """Rows of ``chronicle_snapshots`` (the interface every backend shares)."""

    def create_table(self) -> None:
        raise NotImplementedError

    def write(self, row: SnapshotRow) -> None:
        """Store a fold snapshot (replacing one at the same position) and keep only the newest
        ``KEEP`` of the campaign's."""
        raise NotImplementedError

    def write_points(self, rows: list[SnapshotRow]) -> None:
        """Store checkpoint rows (replacing any at the same kind and position), in one go."""
        raise NotImplementedError

    def latest(self, campaign_id: UUID, kind: str = FOLD) -> list[SnapshotRow]:
        """The campaign's rows of ``kind``, newest (highest position) first."""
        raise NotImplementedError

    def points(self, campaign_id: UUID) -> list[tuple[str, int, int, bool, str]]:
        """The campaign's checkpoint rows, without their data: (kind, position, through, base,
        fingerprint -- for a checkpoint, the digest of the rules and flags it was folded under)."""
        raise NotImplementedError

    def chain(self, campaign_id: UUID, kind: str, position: int) -> list[tuple[int, bool, bytes]]:
        """The rows needed to rebuild the checkpoint at ``position``: the newest full one at or
        before it and every row after that up to it, oldest first (position, base, data)."""
        raise NotImplementedError

    def delete(
        self, campaign_id: UUID, kind: str | None = None, position: int | None = None, *, since: bool = False
    ) -> None:
        """Delete the campaign's rows (of ``kind``; at ``position``, or from it on with ``since``)."""
        raise NotImplementedError

    def count(self) -> int:
        raise NotImplementedError


class MemorySnapshots(SnapshotStore):
    """For the in-memory event store (tests, demos)."""

    def __init__(self) -> None:
        self._rows: dict[tuple[UUID, str, int], SnapshotRow] = {}
        self._lock = threading.Lock()

    def create_table(self) -> None:
        pass

    def write(self, row: SnapshotRow) -> None:
        with self._lock:
            self._rows[(row.campaign_id, row.kind, row.position)] = row
            mine = sorted(
                (k for k in self._rows if k[:2] == (row.campaign_id, row.kind)), key=lambda k: -k[2]
            )
            for k in mine[KEEP:]:
                del self._rows[k]

    def write_points(self, rows: list[SnapshotRow]) -> None:
        with self._lock:
            for row in rows:
                self._rows[(row.campaign_id, row.kind, row.position)] = row

    def latest(self, campaign_id: UUID, kind: str = FOLD) -> list[SnapshotRow]:
        with self._lock:
            rows = [r for k, r in self._rows.items() if k[:2] == (campaign_id, kind)]
        return sorted(rows, key=lambda r: -r.position)

    def points(self, campaign_id: UUID) -> list[tuple[str, int, int, bool, str]]:
        with self._lock:
            return [
                (r.kind, r.position, r.through, r.base, r.fingerprint)
                for k, r in self._rows.items()
                if k[0] == campaign_id and k[1] != FOLD
            ]

    def chain(self, campaign_id: UUID, kind: str, position: int) -> list[tuple[int, bool, bytes]]:
        with self._lock:
            rows = sorted(
                (r for k, r in self._rows.items() if k[:2] == (campaign_id, kind) and k[2] <= position),
                key=lambda r: r.position,
            )
        bases = [i for i, r in enumerate(rows) if r.base]
        return [(r.position, r.base, r.data) for r in rows[bases[-1] :]] if bases else []

    def delete(
        self, campaign_id: UUID, kind: str | None = None, position: int | None = None, *, since: bool = False
    ) -> None:
        with self._lock:
            for k in [
                k
                for k in self._rows
                if k[0] == campaign_id
                and kind in (None, k[1])
                and (position is None or (k[2] >= position if since else k[2] == position))
            ]:
                del self._rows[k]

    def count(self) -> int:
        return len(self._rows)


_COLUMNS = (
    "campaign_id, kind, position, ruleset, ruleset_version, fingerprint, written_at, data, through, base"
)


class _SQLSnapshots(SnapshotStore):
    """Shared SQL for SQLite and PostgreSQL (``%s`` placeholders, rewritten for SQLite)."""

    placeholder = "%s"

    def __init__(self, datastore: Any) -> None:
        self.datastore = datastore
        self._rendered: dict[str, str] = {}  # each statement rendered once

    @contextmanager
    def _cursor(self, commit: bool) -> Iterator[Any]:
        with self.datastore.transaction(commit=commit) as curs:
            yield curs

    def _table(self) -> str:
        return TABLE

    def _select(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        """The rows of one read-only statement."""
        with self._cursor(False) as c:
            c.execute(self._q(query), params)
            return list(c.fetchall())

    def _q(self, query: str) -> str:
        rendered = self._rendered.get(query)
        if rendered is None:
            rendered = query.replace("{table}", self._table())
            if self.placeholder != "%s":
                rendered = rendered.replace("%s", self.placeholder)
            self._rendered[query] = rendered
        return rendered

    def _ddl(self) -> str:
        raise NotImplementedError

    def create_table(self) -> None:
        with self._cursor(True) as c:
            c.execute(self._q(self._ddl()))

    @staticmethod
    def _values(row: SnapshotRow) -> tuple[Any, ...]:
        return (
            str(row.campaign_id),
            row.kind,
            row.position,
            row.ruleset,
            row.ruleset_version,
            row.fingerprint,
            row.written_at,
            row.data,
            row.through,
            bool(row.base),
        )

    def _insert(self, c: Any, row: SnapshotRow) -> None:
        # an upsert: another replica (or thread) may write the same row at the same time
        updates = ", ".join(f"{n} = excluded.{n}" for n in _COLUMNS.split(", ")[3:])
        c.execute(
            self._q(
                f"INSERT INTO {{table}} ({_COLUMNS}) VALUES ({', '.join(['%s'] * 10)}) "
                f"ON CONFLICT (campaign_id, kind, position) DO UPDATE SET {updates}"
            ),
            self._values(row),
        )

    def write(self, row: SnapshotRow) -> None:
        with self._cursor(True) as c:
            self._insert(c, row)
            c.execute(
                self._q(
                    "DELETE FROM {table} WHERE campaign_id = %s AND kind = %s AND position NOT IN "
                    "(SELECT position FROM {table} WHERE campaign_id = %s AND kind = %s "
                    f"ORDER BY position DESC LIMIT {KEEP})"
                ),
                (str(row.campaign_id), row.kind, str(row.campaign_id), row.kind),
            )

    def write_points(self, rows: list[SnapshotRow]) -> None:
        if not rows:
            return
        with self._cursor(True) as c:
            for row in rows:
                self._insert(c, row)

    @staticmethod
    def _get(r: Any, i: int, name: str) -> Any:
        return r[name] if isinstance(r, dict) else r[i]

    def latest(self, campaign_id: UUID, kind: str = FOLD) -> list[SnapshotRow]:
        with self._cursor(False) as c:
            c.execute(
                self._q(
                    f"SELECT {_COLUMNS} FROM {{table}} WHERE campaign_id = %s AND kind = %s "
                    "ORDER BY position DESC"
                ),
                (str(campaign_id), kind),
            )
            raw = c.fetchall()
        names = [n.strip() for n in _COLUMNS.split(",")]
        out = []
        for r in raw:
            v = [self._get(r, i, n) for i, n in enumerate(names)]
            out.append(
                SnapshotRow(
                    UUID(str(v[0])),
                    v[1],
                    int(v[2]),
                    v[3],
                    v[4],
                    v[5],
                    v[6],
                    bytes(v[7]),
                    int(v[8]),
                    bool(v[9]),
                )
            )
        return out

    def points(self, campaign_id: UUID) -> list[tuple[str, int, int, bool, str]]:
        with self._cursor(False) as c:
            c.execute(
                self._q(
                    "SELECT kind, position, through, base, fingerprint FROM {table} "
                    "WHERE campaign_id = %s AND kind <> %s"
                ),
                (str(campaign_id), FOLD),
            )
            raw = c.fetchall()
        names = ("kind", "position", "through", "base", "fingerprint")
        return [
            (str(v[0]), int(v[1]), int(v[2]), bool(v[3]), str(v[4]))
            for v in ([self._get(r, i, n) for i, n in enumerate(names)] for r in raw)
        ]

    def chain(self, campaign_id: UUID, kind: str, position: int) -> list[tuple[int, bool, bytes]]:
        cid = str(campaign_id)
        raw = self._select(
            "SELECT position, base, data FROM {table} WHERE campaign_id = %s AND kind = %s "
            "AND position <= %s AND position >= (SELECT MAX(position) FROM {table} "
            "WHERE campaign_id = %s AND kind = %s AND base = %s AND position <= %s) ORDER BY position",
            (cid, kind, position, cid, kind, True, position),
        )
        names = ("position", "base", "data")
        return [
            (int(v[0]), bool(v[1]), bytes(v[2]))
            for v in ([self._get(r, i, n) for i, n in enumerate(names)] for r in raw)
        ]

    def delete(
        self, campaign_id: UUID, kind: str | None = None, position: int | None = None, *, since: bool = False
    ) -> None:
        query, params = "DELETE FROM {table} WHERE campaign_id = %s", [str(campaign_id)]
        if kind is not None:
            query, params = query + " AND kind = %s", [*params, kind]
        if position is not None:
            query, params = (
                query + (" AND position >= %s" if since else " AND position = %s"),
                [*params, position],
            )
        with self._cursor(True) as c:
            c.execute(self._q(query), tuple(params))

    def count(self) -> int:
        with self._cursor(False) as c:
            c.execute(self._q("SELECT COUNT(*) AS n FROM {table}"))
            row = c.fetchone()
        return int(row["n"] if isinstance(row, dict) else row[0])


class SQLiteSnapshots(_SQLSnapshots):
    placeholder = "?"

    def _ddl(self) -> str:
        return (
            "CREATE TABLE IF NOT EXISTS {table} (campaign_id TEXT NOT NULL, kind TEXT NOT NULL, "
            "position INTEGER NOT NULL, ruleset TEXT NOT NULL, ruleset_version TEXT NOT NULL, "
            "fingerprint TEXT NOT NULL, written_at TEXT NOT NULL, data BLOB NOT NULL, "
            "through INTEGER NOT NULL, base BOOLEAN NOT NULL, PRIMARY KEY (campaign_id, kind, position))"
        )


class PostgresSnapshots(_SQLSnapshots):
    def _table(self) -> str:
        from psycopg import sql

        return (
            sql.SQL("{}.{}").format(sql.Identifier(self.datastore.schema), sql.Identifier(TABLE)).as_string()
        )

    def _select(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        """One statement on a pooled connection as it is (autocommit): no transaction around
        it, so one round trip to the server instead of three (BEGIN, the statement, ROLLBACK);
        prepared, and rows in binary (a row's ``data`` is not sent hex-encoded, twice its size).
        An as-of reads a stored checkpoint's rows so (``chain``): measured at 10k facts, the
        transaction's BEGIN and ROLLBACK were about half of the chain query's time in process."""
        from psycopg.rows import tuple_row

        with self.datastore.get_connection() as conn, conn.cursor(row_factory=tuple_row) as curs:
            curs.execute(self._q(query), params, prepare=True, binary=True)
            return curs.fetchall()

    def _ddl(self) -> str:
        return (
            "CREATE TABLE IF NOT EXISTS {table} (campaign_id TEXT NOT NULL, kind TEXT NOT NULL, "
            "position BIGINT NOT NULL, ruleset TEXT NOT NULL, ruleset_version TEXT NOT NULL, "
            "fingerprint TEXT NOT NULL, written_at TEXT NOT NULL, data BYTEA NOT NULL, "
            "through BIGINT NOT NULL, base BOOLEAN NOT NULL, PRIMARY KEY (campaign_id, kind, position))"
        )


def snapshot_store(recorder: Any, create_table: bool) -> SnapshotStore:
    """The snapshot table beside the application's events (``recorder``: its recorder)."""
    # By the library class it derives from: PostgreSQL recorders are api.service.pgstore's.
    modules = {cls.__module__ for cls in type(recorder).__mro__}
    store: SnapshotStore
    if "eventsourcing.sqlite" in modules:
        store = SQLiteSnapshots(recorder.datastore)
    elif "eventsourcing.postgres" in modules:
        store = PostgresSnapshots(recorder.datastore)
    else:
        store = MemorySnapshots()
    if create_table:
        if isinstance(store, PostgresSnapshots):
            from api.service.pgstore import retry_catalog_races

            retry_catalog_races(store.create_table, recorder.datastore)
        else:
            store.create_table()
    return store


def now() -> str:
    return datetime.now(UTC).isoformat()


# ------------------------------------------------------------------------------ the writer
GIVE_WAY_S = 30.0  # the longest one snapshot write gives way to commands, in all


class SnapshotWriter:
    """One daemon thread writing snapshots of the campaigns it is asked to (newest request wins).

    ``write(campaign_id, campaign)`` is the application's: it takes the cheap capture under the
    campaign's lock, then dumps, compresses and stores the rows without holding it.

    The writer gives way to commands: a command runs inside :meth:`giving_way`, and the writer,
    at each :meth:`pause_point` (before a write, between the rows it stores), waits while any
    command is in progress -- for at most ``give_way_s`` seconds in all per write, so a
    stream of commands delays a snapshot but never starves it. (Measured: after an early
    correction the snapshot it asked for was dumped while the next correction refolded, and
    the two shared one interpreter.)
    """

    def __init__(
        self,
        write: Callable[[UUID, Any], bool],
        give_way_s: float = GIVE_WAY_S,
        gate: CommandGate | None = None,
    ) -> None:
        self._write = write
        self._pending: OrderedDict[UUID, Any] = OrderedDict()
        self._cond = threading.Condition()
        self._busy = False
        self._stopped = False
        self._closing = False
        self.gate = gate if gate is not None else CommandGate()  # the commands (the application's)
        self._yield_left = give_way_s  # of the write in progress
        self.give_way_s = give_way_s
        self.written = 0
        self.failed = 0
        self.paused_s = 0.0  # time spent giving way, in all
        self.waiting = False  # the writer is giving way now
        self._thread: threading.Thread | None = None  # started on the first request

    def giving_way(self) -> contextlib.AbstractContextManager[None]:
        """Hold the writer at its next pause point while the block (a command) runs
        (:meth:`CommandGate.command` of its gate)."""
        return self.gate.command()

    @property
    def commands(self) -> int:
        """The commands in progress (inside :meth:`giving_way`)."""
        return self.gate.running

    def pause_point(self) -> None:
        """On the writer's thread: wait while a command is in progress (within the write's
        budget of ``give_way_s``). Elsewhere (``write_snapshot`` on a request's thread): nothing."""
        if threading.current_thread() is not self._thread:
            return
        if not self.gate.running or self._yield_left <= 0 or self._stopped:
            return
        self.waiting = True
        try:
            waited = self.gate.give_way(self._yield_left, stop=lambda: self._stopped)
        finally:
            self.waiting = False
        self._yield_left -= waited
        self.paused_s += waited

    def request(self, campaign_id: UUID, campaign: Any) -> None:
        with self._cond:
            if self._stopped:
                return
            self._pending[campaign_id] = campaign
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="chronicle-snapshots", daemon=True)
                self._thread.start()
            self._cond.notify()

    def cut_short(self, campaign_id: UUID) -> bool:
        """Whether the write in progress should stop after its fold snapshot (its checkpoint rows
        left): a newer snapshot of the campaign waits (it writes them from its newer capture),
        or the writer is closing (the time left goes to the fold snapshots still pending)."""
        with self._cond:
            return self._closing or campaign_id in self._pending

    def pending(self) -> int:
        with self._cond:
            return len(self._pending) + (1 if self._busy else 0)

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every requested snapshot is written (True) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def close(self, timeout: float = 10.0) -> None:
        """Write what is pending (up to ``timeout``; 0: drop it), then stop. While closing, each
        write stores its fold snapshot and leaves its checkpoint rows (see :meth:`cut_short`)."""
        with self._cond:
            self._closing = True
        if timeout > 0:
            self.flush(timeout)
        with self._cond:
            self._stopped = True
            self._pending.clear()
            self._cond.notify_all()
        self.gate.wake()
        if self._thread is not None and timeout > 0:
            self._thread.join(timeout=1.0)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                campaign_id, campaign = self._pending.popitem(last=False)
                self._busy = True
                self._yield_left = self.give_way_s
            try:
                self.pause_point()
                if self._write(campaign_id, campaign):
                    self.written += 1
                    observability.SNAPSHOTS.labels("written").inc()
            except Exception:  # a snapshot is an optimisation: never take the process down
                self.failed += 1
                observability.SNAPSHOTS.labels("failed").inc()
                log.exception("writing the snapshot of campaign %s failed", campaign_id)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
