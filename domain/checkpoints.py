"""Checkpoints of the fold that share what did not change.

Two structures keep a long campaign's checkpoints small:

* :class:`OrphanLog`: the fold produces orphans in position order, so the orphans of one
  reading form an append-only list, and a checkpoint needs only its length (an
  :class:`Orphans` view), never a copy. Forking a log (a refold from a checkpoint) shares
  every full chunk with the original and copies only the partial last one.
* :class:`Series`: a checkpoint every ``every`` facts, each stored as a :class:`Delta` from
  the one before (the creatures and encounters whose object changed -- copy-on-write makes
  that an identity test -- and the other slots of the state), with a full state only every
  ``full_every`` checkpoints and at the newest one. Any checkpoint is rebuilt from the full
  state before it plus the deltas after that: dense checkpoints at the memory cost of sparse
  ones.
* A series given a :class:`Spill` (``Series.spill``) puts the deltas of all but its newest
  ``keep`` checkpoints there (a :class:`Spilled` handle stays in the point) and reads them back
  when a checkpoint is rebuilt: the deltas, most of a long fold's checkpoints, then take no
  memory (its full states, one every ``full_every`` checkpoints, stay).
"""

from __future__ import annotations

import bisect
import functools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from domain.core import state as core_state
from domain.core.state import slot_names

__all__ = [
    "Delta",
    "LoadedRow",
    "OrphanLog",
    "Orphans",
    "Point",
    "PointLoader",
    "Series",
    "Spill",
    "Spilled",
    "Values",
    "alike_states",
    "apply_delta",
    "delta_between",
    "delta_of_state",
    "orphan_delta",
    "partial_state",
    "rebuild",
    "load_row",
    "rebuild_loaded",
    "rebuild_rows",
    "reshare",
    "unspilled",
]

CHUNK = 256


class OrphanLog:
    """The orphans of one reading, in position order: append-only, forked copy-on-write."""

    __slots__ = ("_seqs", "_reasons", "_firsts", "_n")

    def __init__(self, items: Iterable[tuple[int, str]] = ()) -> None:
        self._seqs: list[list[int]] = []
        self._reasons: list[list[str]] = []
        self._firsts: list[int] = []
        self._n = 0
        for seq, reason in items:
            self.append(seq, reason)

    def __len__(self) -> int:
        return self._n

    def append(self, seq: int, reason: str) -> None:
        seqs = self._seqs
        if not seqs or len(seqs[-1]) == CHUNK:
            if seqs and seq <= seqs[-1][-1]:
                raise AssertionError(f"orphan {seq} after {seqs[-1][-1]}: not in position order")
            seqs.append([seq])
            self._reasons.append([reason])
            self._firsts.append(seq)
        else:
            last = seqs[-1]
            if seq <= last[-1]:
                raise AssertionError(f"orphan {seq} after {last[-1]}: not in position order")
            last.append(seq)
            self._reasons[-1].append(reason)
        self._n += 1

    def view(self, n: int | None = None) -> Orphans:
        """The first ``n`` orphans (all by default), frozen: later appends do not show."""
        return Orphans(self, self._n if n is None else n)

    def fork(self, n: int | None = None) -> OrphanLog:
        """A new log holding the first ``n`` orphans; full chunks are shared, not copied."""
        n = self._n if n is None else n
        out = OrphanLog()
        full, rest = divmod(n, CHUNK)
        out._seqs = self._seqs[:full]
        out._reasons = self._reasons[:full]
        out._firsts = self._firsts[:full]
        if rest:
            out._seqs.append(self._seqs[full][:rest])
            out._reasons.append(self._reasons[full][:rest])
            out._firsts.append(self._firsts[full])
        out._n = n
        return out


class Orphans(Mapping[int, str]):
    """A frozen view of the first ``n`` orphans of a log: position -> reason, in position order."""

    __slots__ = ("_log", "_n")

    def __init__(self, log: OrphanLog, n: int) -> None:
        self._log = log
        self._n = n

    def __len__(self) -> int:
        return self._n

    def _where(self, seq: int) -> tuple[int, int] | None:
        log = self._log
        k = bisect.bisect_right(log._firsts, seq) - 1
        if k < 0:
            return None
        chunk = log._seqs[k]
        i = bisect.bisect_left(chunk, seq)
        if i < len(chunk) and chunk[i] == seq and k * CHUNK + i < self._n:
            return k, i
        return None

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, int) and self._where(seq) is not None

    def __getitem__(self, seq: int) -> str:
        found = self._where(seq) if isinstance(seq, int) else None
        if found is None:
            raise KeyError(seq)
        return self._log._reasons[found[0]][found[1]]

    def __iter__(self) -> Iterator[int]:
        left = self._n
        for chunk in self._log._seqs:
            if left <= 0:
                return
            yield from chunk[:left] if left < len(chunk) else chunk
            left -= len(chunk)

    def pairs(self, start: int = 0) -> Iterator[tuple[int, str]]:
        """(position, reason) of the orphans, in order, from the ``start``-th one (counted from
        0): only the chunks from there on are walked (every chunk but the last holds ``CHUNK``)."""
        left = self._n - start
        if left <= 0:
            return
        k, skip = divmod(start, CHUNK)
        log = self._log
        for seqs, reasons in zip(log._seqs[k:], log._reasons[k:], strict=True):
            take = min(left, len(seqs) - skip)
            yield from zip(seqs[skip : skip + take], reasons[skip : skip + take], strict=True)
            left -= take
            skip = 0
            if left <= 0:
                return

    def since(self, seq: int) -> list[int]:
        """The orphaned positions at or after ``seq``."""
        return [s for s in self if s >= seq] if self._n else []

    def fork(self) -> OrphanLog:
        return self._log.fork(self._n)

    def __repr__(self) -> str:
        return f"Orphans({dict(self.pairs())!r})"


# ------------------------------------------------------------------------------ checkpoints
@dataclass(slots=True)
class Delta:
    """What changed between two checkpoints of one fold."""

    creatures: dict[str, Any]  # creatures whose object changed (or appeared), by id
    encounters: dict[str, Any]
    slots: dict[str, Any]  # every other slot of the state (shared with the previous delta when equal)
    gone: tuple[str, ...] = ()  # creature ids no longer present
    gone_encounters: tuple[str, ...] = ()


@dataclass(slots=True)
class Point:
    """A checkpoint: the state after ``n`` entries (the last at position ``seq``)."""

    seq: int
    n: int
    orphans: Orphans | None  # None only for a point known from storage alone
    # from the checkpoint ``every`` entries before (None: not a delta; Spilled: in the series' spill)
    delta: Delta | Spilled | None
    full: Any | None  # the whole state (never changed once taken), or None (rebuild it)
    through: int = 0  # the newest correction the fold that made it took into account
    stored: bool = False  # persisted by the ledger's owner: the series' loader can rebuild it


class Spill(Protocol):
    """Where a series puts what its older checkpoints hold (injected by the ledger's owner: a
    temporary file, say). ``put`` keeps a value (a :class:`Delta`) and returns its key;
    ``get(key)`` gives back a value equal to it (a copy of its own each time, in which the
    objects the value shared are shared alike)."""

    def put(self, value: Any) -> Any: ...

    def get(self, key: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Spilled:
    """A checkpoint's delta kept in a :class:`Spill`, not in memory."""

    spill: Spill
    key: Any

    def load(self) -> Any:
        return self.spill.get(self.key)


def unspilled(value: Any) -> Any:
    """``value`` itself, or the value a :class:`Spilled` handle stands for (read back)."""
    return value.load() if type(value) is Spilled else value


class Values:
    """One object per value among what the checkpoints of a fold hold and nobody changes any
    more: a creature two states share (copy-on-write: its owner copies it before changing it,
    and a copy shares every slot but ``effects``, so no slot's value is ever changed in place),
    the values inside its effects, an ended encounter's slots. A long fold holds thousands of
    equal dictionaries, lists and strings -- every monster of one kind its own ``abilities``
    and ``defenses`` with their own key strings, every ended encounter's initiative entries --
    each decoded from its own fact; :meth:`share_objects` gives each creature and ended
    encounter the table's object for every value it already holds an equal one of (equal with
    the same types, in the same order: ``True`` is not ``1``, ``-0.0`` is not ``0.0``), so each
    value is held once. What any state reads is unchanged, by value.

    The table keeps up to ``limit`` values (then it starts again: values shared before stay
    shared); it keeps the values it holds alive, so it belongs to one fold (an import's dry run)."""

    __slots__ = ("_table", "limit", "shared")

    LIMIT = 1 << 16
    LONG = 64  # strings longer than this are left as they are (rarely repeated)

    def __init__(self, limit: int = LIMIT) -> None:
        self._table: dict[Any, Any] = {}
        self.limit = limit
        self.shared = 0  # objects replaced by the table's (a measure)

    def __len__(self) -> int:
        return len(self._table)

    def share(self, value: Any) -> Any:
        """The table's object equal to ``value`` (``value`` itself, or a copy of it holding the
        table's objects, kept as the table's from now on)."""
        return self._share(value)[0]

    def _share(self, v: Any) -> tuple[Any, Any]:
        """(the shared object, its key), or (``v``, None) for a value it cannot key."""
        t = type(v)
        if t is str:
            if len(v) > self.LONG:
                return v, None
            got = self._table.get(v)
            if got is None:
                self._put(v, v)
                return v, v
            if got is not v:
                self.shared += 1
            return got, got
        if t is int or v is None:
            return v, v
        if t is bool:
            return v, _TRUE if v else _FALSE
        if t is float:
            return v, (_FLOAT, repr(v))
        if t is dict:
            parts: list[Any] = [_DICT]
            same = True
            items = []
            for k, x in v.items():
                ck, kk = self._share(k)
                cx, kx = self._share(x)
                if kk is None or kx is None:
                    return v, None
                parts.append(kk)
                parts.append(kx)
                items.append((ck, cx))
                same = same and ck is k and cx is x
            key = hash(tuple(parts))
            got = self._table.get(key)
            if got is not None and type(got) is dict and len(got) == len(items):
                pairs = zip(got.items(), items, strict=True)
                if all(_same(gk, ck) and _same(gx, cx) for (gk, gx), (ck, cx) in pairs):
                    if got is not v:
                        self.shared += 1
                    return got, key
            return self._canon(v if same else dict(items), key, got)
        if t is list or t is tuple:
            parts = [_LIST if t is list else _TUPLE]
            same = True
            out = []
            for x in v:
                cx, kx = self._share(x)
                if kx is None:
                    return v, None
                parts.append(kx)
                out.append(cx)
                same = same and cx is x
            key = hash(tuple(parts))
            got = self._table.get(key)
            if got is not None and type(got) is t and len(got) == len(out):
                if all(_same(g, c) for g, c in zip(got, out, strict=True)):
                    if got is not v:
                        self.shared += 1
                    return got, key
            return self._canon(v if same else (out if t is list else tuple(out)), key, got)
        return v, None

    def _canon(self, mine: Any, key: int, got: Any) -> tuple[Any, Any]:
        """``mine`` (holding the table's objects) as the table's object for its value, under
        ``key``: the hash of its type and its parts' keys (the values inside a value are the
        table's, so its parts are compared by identity: only the hash is kept, not a key as big
        as the value). Another value with that hash (``got``) keeps its place: this one is left
        unshared."""
        if got is None:
            self._put(key, mine)
        return mine, key

    def _put(self, key: Any, value: Any) -> None:
        table = self._table
        if len(table) >= self.limit:
            table.clear()
        table[key] = value

    def _share_items(self, d: dict[str, Any]) -> dict[str, Any]:
        """``d`` itself, or a dictionary like it holding the table's values (not kept)."""
        out = None
        for k, x in d.items():
            shared = self.share(x)
            if shared is not x:
                if out is None:
                    out = dict(d)
                out[k] = shared
        return d if out is None else out

    def share_objects(self, creatures: Iterable[Any], encounters: Iterable[Any]) -> None:
        """Give these creatures (only those marked shared: nobody changes them) and encounters
        (only ended ones) the table's objects for the values they hold (see the class)."""
        put = object.__setattr__
        for c in creatures:
            if not getattr(c, "shared", False):
                continue
            for name in slot_names(type(c)):
                if name in ("id", "shared"):
                    continue
                value = getattr(c, name, _MISSING)
                if value is _MISSING:
                    continue
                if name == "effects" and type(value) is list:
                    # each state's copy of a creature copies its effects' dictionaries (and may
                    # change those): what they hold is shared, not the dictionaries themselves
                    effects = [self._share_items(e) if type(e) is dict else e for e in value]
                    if any(a is not b for a, b in zip(effects, value, strict=True)):
                        put(c, name, effects)
                    continue
                shared = self.share(value)
                if shared is not value:
                    put(c, name, shared)
        for e in encounters:
            if not _ended(e):
                continue
            for name in slot_names(type(e)):
                value = getattr(e, name, _MISSING)
                if value is _MISSING:
                    continue
                shared = self.share(value)
                if shared is not value:
                    put(e, name, shared)


_TRUE, _FALSE, _FLOAT, _DICT, _LIST, _TUPLE = (object() for _ in range(6))  # keys' tags


def _same(a: Any, b: Any) -> bool:
    """Two parts of values the table holds are the same: the same object (strings, dictionaries
    and lists the table shares), or a number equal with its type (``True`` is not ``1``, and a
    float's ``repr`` tells ``-0.0`` from ``0.0``)."""
    if a is b:
        return True
    t = type(a)
    if t is not type(b):
        return False
    if t is int:
        return bool(a == b)
    return t is float and repr(a) == repr(b)


PointLoader = Callable[[int], tuple[Any, Orphans]]
"""Rebuilds a stored checkpoint: position -> (a private copy of its state, its orphans)."""


_TABLE = ("creatures", "encounters")


def delta_between(before: Any, after: Any, shared_slots: Delta | None = None) -> Delta | None:
    """The delta from ``before`` to ``after`` (two checkpoints of one fold), or None when a
    delta cannot reproduce ``after`` exactly (something was removed: dictionary order)."""
    bc, ac = before.creatures, after.creatures
    be, ae = before.encounters, after.encounters
    # ``after`` may know which creatures and encounters it changed since ``before`` was cloned
    # (TableState.changed_since): then only those are compared, not the whole campaign
    changed = getattr(after, "changed_since", None)
    known = changed(getattr(before, "_token", 0)) if changed is not None else None
    if known is None:
        cids, eids = ac, ae
    else:
        cids, eids = known
        if core_state.GUARD:
            _check_known(before, after, cids, eids)
    get = bc.get
    # identity first (copy-on-write: most creatures are the very same object), by value after
    creatures = _changed(ac, get, cids)
    creatures = {cid: c for cid, c in creatures.items() if not _alike(get(cid), c)}
    new = sum(1 for cid in creatures if cid not in bc)
    if len(ac) - new != len(bc):
        return None
    get = be.get
    encounters = _changed(ae, get, eids)
    encounters = {eid: e for eid, e in encounters.items() if not _alike(get(eid), e)}
    new = sum(1 for eid in encounters if eid not in be)
    if len(ae) - new != len(be):
        return None
    slots: dict[str, Any] = {}
    skip = getattr(type(after), "TRACKING", ())
    for name in slot_names(type(after)):
        if name in _TABLE or name in skip:
            continue
        value = getattr(after, name)
        if shared_slots is not None and name in shared_slots.slots:
            old = shared_slots.slots[name]
            # (equal dictionaries in another order are not the same value: ``holders`` lists
            # the creatures in the order reports follow)
            if old is value or (
                type(old) is type(value)
                and old == value
                and (type(old) is not dict or list(old) == list(value))
            ):
                value = old
        slots[name] = value
    return Delta(creatures, encounters, slots)


def _changed(objs: dict[str, Any], get: Callable[[str], Any], ids: Iterable[str]) -> dict[str, Any]:
    """The objects of ``objs`` among ``ids`` that are not what ``get`` gives, in ``objs``' order
    for the ones ``get`` does not know (new ones: their order is the dictionary's)."""
    if ids is objs:
        return {k: o for k, o in objs.items() if get(k) is not o}
    out: dict[str, Any] = {}
    for k in ids:
        o = objs.get(k)
        if o is not None and get(k) is not o:
            out[k] = o
    return out


def _check_known(before: Any, after: Any, cids: list[str], eids: list[str]) -> None:
    """Under GUARD: what ``after`` says it changed covers every object that differs."""
    for name, ids in (("creatures", cids), ("encounters", eids)):
        a, b = getattr(after, name), getattr(before, name)
        listed = set(ids)
        for k, o in a.items():
            if b.get(k) is not o and k not in listed:
                raise AssertionError(f"{name} {k!r} changed since the clone but was not tracked")


Memo = dict[int, tuple[Any, Any, bool]]  # id(b) -> (b, a, whether _alike(a, b)): see _alike_known


def reshare(old: Any, new: Any, memo: Memo | None = None) -> int:
    """After a refold: give ``new`` the very objects of ``old`` for the creatures that came out
    equal by value, marked shared (copy-on-write), and for the ended encounters that came out
    equal (nothing changes an ended encounter: it is shared as it is), so that "which creatures
    changed" stays an identity test across a correction (payloads, read models, checkpoint
    deltas) and one value is held once. A refold folds from a checkpoint -- a clone, one
    rebuilt from storage or from a spill (copies) -- so without this every creature would look
    changed, and every checkpoint kept whole would hold copies of its own of what the present
    holds. Returns how many objects were reshared. ``memo``: see :func:`_alike_known`."""
    if old is None or old is new:
        return 0
    n = _share_alike(old, new.creatures, getattr(new, "encounters", None), memo)
    if n and hasattr(new, "untrack"):
        new.untrack()  # creatures replaced outside a handler: the next clone checks them all
    return n


def _share_alike(
    canon: Any, creatures: dict[str, Any], encounters: dict[str, Any] | None, memo: Memo | None = None
) -> int:
    """Put in ``creatures`` and ``encounters`` (a state's, or a delta's) the objects of the
    state ``canon`` that read alike: creatures marked shared (copy-on-write: ``canon`` copies
    one before changing it), ended encounters as they are. Returns how many were replaced."""
    oc = canon.creatures
    n = 0
    alike = _alike if memo is None else functools.partial(_alike_known, memo)
    for cid, c in creatures.items():
        o = oc.get(cid)
        if o is not None and o is not c and alike(o, c):
            if not o.shared:
                object.__setattr__(o, "shared", True)
            creatures[cid] = o
            n += 1
    oe = getattr(canon, "encounters", None)
    if type(oe) is dict and type(encounters) is dict:
        for eid, e in encounters.items():
            o = oe.get(eid)
            if o is not None and o is not e and _ended(o) and _ended(e) and alike(o, e):
                encounters[eid] = o
                n += 1
    return n


def _alike_known(memo: Memo, a: Any, b: Any) -> bool:
    """:func:`_alike`, remembered by the pair's identity in ``memo``. After a refold the same
    pair is compared again and again: the refold's object for a creature (or an ended
    encounter) that no later fact changed is in the present, in every checkpoint kept whole
    after it and in one delta, and :func:`reshare` puts the old present's object in its place
    when the two read alike -- so :meth:`Series.reshare_kept` meets that very pair in each of
    them (a deep comparison, about 4 us a creature: most of its time at 100k facts). Objects of
    a state or a checkpoint never change (copy-on-write), so the answer holds while both live
    (the memo keeps them alive: an id is never reused meanwhile)."""
    hit = memo.get(id(b))
    if hit is not None and hit[0] is b and hit[1] is a:
        return hit[2]
    same = _alike(a, b)
    memo[id(b)] = (b, a, same)
    return same


def _ended(e: Any) -> bool:
    """An ended encounter: never changed again, so states share it as it is (an open one is
    each state's own copy)."""
    return getattr(e, "state", None) == "ended"


def _alike(a: Any, b: Any) -> bool:
    """The same object, or two objects of one class with equal slots (copy-on-write makes
    identity the rule; after a refold, objects of two folds are compared by value)."""
    if a is b:
        return True
    if a is None or type(a) is not type(b):
        return False
    for name in slot_names(type(a)):
        if name == "shared":
            continue
        x, y = getattr(a, name, _MISSING), getattr(b, name, _MISSING)
        if x is not y and (type(x) is not type(y) or x != y):
            return False
    return True


_MISSING = object()


def alike_states(a: Any, b: Any) -> bool:
    """Two states of one fold read alike: every creature and encounter alike (:func:`_alike`),
    in the same order, and every other slot and attribute equal -- except the derived ones
    (``DERIVED``: bookkeeping rebuilt from the rest, which no rule reads differently). A value
    without equality of its own compares by identity: unlike, never wrongly alike."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    derived = getattr(a, "DERIVED", ())
    names = [n for n in slot_names(type(a)) if n not in derived]
    for name in names:
        x, y = getattr(a, name, _MISSING), getattr(b, name, _MISSING)
        if name in _TABLE and isinstance(x, dict) and isinstance(y, dict):
            if x is y:
                continue
            if len(x) != len(y) or list(x) != list(y):
                return False
            if not all(_alike_object(v, y[k]) for k, v in x.items()):
                return False
        elif not _equal(x, y):
            return False
    da, db = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    if da is not None or db is not None:
        if da is None or db is None or da.keys() != db.keys():
            return False
        return all(k in derived or _equal(v, db[k]) for k, v in da.items())
    return True


def _equal(x: Any, y: Any) -> bool:
    return x is y or (type(x) is type(y) and x == y)


def _alike_object(a: Any, b: Any) -> bool:
    """:func:`_alike`, and the attributes of an object that has a ``__dict__`` equal too."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if not slot_names(type(a)) and not hasattr(a, "__dict__"):
        return bool(a == b)  # a plain value (a dict, a tuple...)
    if not _alike(a, b):
        return False
    da, db = getattr(a, "__dict__", None), getattr(b, "__dict__", None)
    return (da is None and db is None) or (da is not None and db is not None and da == db)


def apply_delta(state: Any, d: Delta, clone_open: bool = True) -> None:
    """Bring a private copy of the checkpoint before ``d`` to the checkpoint after it (without
    ``clone_open``, its open encounters are the delta's own objects: the caller clones those
    still there before anyone changes the state)."""
    state.creatures.update(d.creatures)
    for cid in d.gone:
        del state.creatures[cid]
    encounters = state.encounters
    for eid, e in d.encounters.items():
        encounters[eid] = e if not clone_open or getattr(e, "state", None) == "ended" else e.clone()
    for eid in d.gone_encounters:
        del encounters[eid]
    for name, value in d.slots.items():
        if isinstance(value, dict):
            value = dict(value)
        elif isinstance(value, list):
            value = list(value)
        setattr(state, name, value)
    if hasattr(state, "untrack"):
        state.untrack()  # changed outside a handler: the next clone checks everything


class Series:
    """The checkpoints of one reading of the log, every ``every`` entries.

    ``points[j]`` is the checkpoint after ``(j + 1) * every`` entries (None where there is
    none). Full states are kept every ``full_every`` checkpoints and at the newest; the others
    are rebuilt from deltas (:meth:`restore`), or through ``load`` from the ledger owner's
    storage when they were persisted. Points are never changed once added (a series is copied
    cheaply for a refold that may be abandoned), only replaced.

    With a ``spill``, every checkpoint but the newest ``keep`` (by index) has its delta put there
    as it falls behind (:meth:`add`); :meth:`restore` reads them back. What is spilled is never
    changed (a point keeps its :class:`Spilled` handle, copies of the series share it), so a
    checkpoint rebuilt from the spill is the one a delta kept in memory would have given, by
    value. The oldest checkpoint kept in memory holds its full state, so that a refold from a
    recent checkpoint (most corrections) reads nothing back.
    """

    __slots__ = (
        "every",
        "full_every",
        "points",
        "tip",
        "load",
        "rebuilt_kept",
        "_rebuilt",
        "spill",
        "keep",
        "_unspilled",
        "_last",
        "values",
    )
    REBUILT_KEPT = 4  # stored checkpoints kept rebuilt (as-of queries near a few places)
    SPILL_KEEP = 8  # with a spill: the newest checkpoints kept in memory (a correction's refold starts there)

    def __init__(
        self,
        every: int,
        full_every: int = 64,
        load: PointLoader | None = None,
        rebuilt_kept: int | None = None,
        spill: Spill | None = None,
        keep: int | None = None,
        values: Values | None = None,
    ) -> None:
        self.every = every
        # with a table of values: the objects each checkpoint's delta holds share its values
        self.values = values
        # each rebuilt checkpoint is a whole state of objects of its own (nothing shared)
        self.rebuilt_kept = self.REBUILT_KEPT if rebuilt_kept is None else rebuilt_kept
        self.full_every = max(1, full_every)
        self.points: list[Point | None] = []
        # (index, state) of the newest checkpoint added, to compute the next delta from
        self.tip: tuple[int, Any] | None = None
        self.load = load
        self._rebuilt: OrderedDict[int, tuple[Any, Orphans]] = OrderedDict()  # by position
        self.spill = spill
        self.keep = max(1, self.SPILL_KEEP if keep is None else keep)
        self._unspilled = 0  # with a spill: no point before this index holds anything in memory
        # with a spill: (index, state) of the checkpoint last rebuilt from it (the next one after
        # it is rebuilt from there: a refold compares its checkpoints one after another)
        self._last: tuple[int, Any] | None = None

    def __len__(self) -> int:
        return sum(1 for p in self.points if p is not None)

    def __bool__(self) -> bool:
        return any(p is not None for p in self.points)

    def __iter__(self) -> Iterator[Point]:
        return (p for p in self.points if p is not None)

    def copy(self) -> Series:
        out = Series(
            self.every, self.full_every, self.load, self.rebuilt_kept, self.spill, self.keep, self.values
        )
        out.points = list(self.points)
        out.tip = self.tip
        out._unspilled = self._unspilled
        out._last = self._last  # (never changed: a copy may rebuild on from it too)
        # Each copy caches its own rebuilt checkpoints (the states themselves are never changed,
        # so both hold the same objects): the copy may drop and refold a position whose reading
        # changed while the other is still read there (a refold compared with the present, an
        # abandoned what-if), and a cache shared by position would hand one the other's reading.
        out._rebuilt = OrderedDict(self._rebuilt)
        return out

    def has(self, n: int) -> bool:
        j = n // self.every - 1
        return 0 <= j < len(self.points) and self.points[j] is not None

    def index(self, n: int) -> int:
        return n // self.every - 1

    def add(
        self,
        seq: int,
        n: int,
        state: Any,
        orphans: Orphans,
        base: tuple[int, Any] | None = None,
        through: int = 0,
    ) -> None:
        """Add the checkpoint after ``n`` entries (``state`` is a clone nobody changes).

        Its delta is taken from ``base`` (the index and state of the checkpoint before it in
        the same fold) or, by default, from this series' newest checkpoint when that is the
        one just before."""
        j = n // self.every - 1
        prev = base if base is not None else self.tip
        delta = None
        if prev is not None and prev[0] == j - 1:
            before = self.points[j - 1] if 0 <= j - 1 < len(self.points) else None
            # (the delta before shares its equal slots with this one: memory only, so a spilled
            # one is not read back for it)
            shared = before.delta if before is not None and type(before.delta) is Delta else None
            delta = delta_between(prev[1], state, shared)
            if delta is not None and self.values is not None:
                # (the creatures a checkpoint holds are shared: nobody changes them any more)
                self.values.share_objects(delta.creatures.values(), delta.encounters.values())
        points = self.points
        if len(points) <= j:
            points.extend([None] * (j + 1 - len(points)))
        points[j] = Point(seq, n, orphans, delta, state, through)
        self._last = None
        self.tip = (j, state)
        self.settle(j - 1)
        if self.spill is not None:
            self._spill_upto(j - self.keep)

    def _spill_upto(self, last: int) -> None:
        """Put the deltas of the checkpoints up to index ``last`` in the spill.

        The oldest checkpoint left in memory is given its full state first (its delta applied to
        a copy of the one before it), so that the checkpoints kept in memory rebuild from memory
        alone; the one spilled keeps its full state only where it would have kept it anyway
        (:meth:`settle`: the full_every rhythm)."""
        points, spill = self.points, self.spill
        assert spill is not None
        last = min(last, len(points) - 1)
        for k in range(self._unspilled, last + 1):
            p = points[k]
            if p is None:
                continue
            nxt = points[k + 1] if k + 1 < len(points) else None
            if (
                nxt is not None
                and nxt.full is None
                and type(nxt.delta) is Delta
                and p.full is not None
                and type(p.full) is not Spilled
            ):
                _, state, _ = self.restore(k + 1)
                points[k + 1] = Point(nxt.seq, nxt.n, nxt.orphans, nxt.delta, state, nxt.through, nxt.stored)
            self.settle(k)
            p = points[k]
            assert p is not None
            if p.delta is not None and type(p.delta) is not Spilled:
                delta = Spilled(spill, spill.put(p.delta))
                points[k] = Point(p.seq, p.n, p.orphans, delta, p.full, p.through, p.stored)
        self._unspilled = max(self._unspilled, last + 1)

    def reshare_kept(self, present: Any, old: Series | None = None, memo: Memo | None = None) -> int:
        """After a refold: what this series keeps in memory that ``old`` (the series it was
        copied from) does not -- the refold's own whole states and deltas -- takes the objects
        of ``present`` that read alike (:func:`reshare`), so that a checkpoint holds only what
        differs from the present, not a copy of it (a refold folds on from objects rebuilt from
        a spill or from storage, and :func:`reshare` gives the present the objects it had before
        the refold, not the refold's). Every checkpoint reads as before, by value; a state
        changed here forgets what its clones changed (``untrack``: the next delta from it
        compares every creature). Returns how many objects were reshared. ``memo``: the pairs
        compared already (:func:`_alike_known`; pass the one :func:`reshare` was given)."""
        before = old.points if old is not None else []
        memo = {} if memo is None else memo
        n = 0
        for j, p in enumerate(self.points):
            if p is None:
                continue
            q = before[j] if j < len(before) else None
            if p.full is not None and p.full is not present and (q is None or q.full is not p.full):
                n += reshare(present, p.full, memo)
            if type(p.delta) is Delta and (q is None or q.delta is not p.delta):
                n += _share_alike(present, p.delta.creatures, p.delta.encounters, memo)
        return n

    def settle(self, k: int) -> None:
        """A checkpoint followed by another lets its full state go, but at the full_every rhythm
        (and whenever the deltas before it cannot rebuild it). ``add`` settles the one before
        the checkpoint it adds; a refold that rejoins the present fold settles the last one it
        added itself (the present fold's checkpoints follow it)."""
        points = self.points
        if self._last is not None and self._last[0] > k:
            self._last = None  # (the points after k may have been replaced: a refold rejoined)
        if 0 <= k < len(points):
            p = points[k]
            if (
                p is not None
                and p.full is not None
                and (p.delta is not None or p.stored)
                and (k + 1) % self.full_every
                and (p.stored or (k > 0 and self._restorable(k - 1)))
            ):
                points[k] = Point(p.seq, p.n, p.orphans, p.delta, None, p.through, p.stored)

    def add_stored(self, seq: int, n: int, through: int) -> None:
        """A checkpoint known only from storage (rebuilt through ``load`` when needed)."""
        j = n // self.every - 1
        points = self.points
        if len(points) <= j:
            points.extend([None] * (j + 1 - len(points)))
        if points[j] is None:
            points[j] = Point(seq, n, None, None, None, through, True)

    def mark_stored(self, seqs: set[int] | frozenset[int], keep_recent: int = 8) -> None:
        """The owner persisted the checkpoints at these positions: older ones keep no state in
        memory any more (the newest ``keep_recent`` and the full_every rhythm keep theirs)."""
        points = self.points
        last = len(points) - keep_recent
        for j, p in enumerate(points):
            if p is None or p.seq not in seqs:
                continue
            if j >= last or (p.full is not None and (j + 1) % self.full_every == 0):
                if not p.stored:
                    points[j] = Point(p.seq, p.n, p.orphans, p.delta, p.full, p.through, True)
            elif p.delta is not None or p.full is not None or not p.stored:
                points[j] = Point(p.seq, p.n, p.orphans, None, None, p.through, True)

    def forget(self, j: int) -> None:
        """Forget one checkpoint (its storage failed to rebuild it)."""
        self._last = None
        if 0 <= j < len(self.points):
            p = self.points[j]
            if p is not None:
                self._rebuilt.pop(p.seq, None)
            self.points[j] = None

    def drop_from(self, seq: int) -> None:
        """Forget the checkpoints at or after position ``seq`` (their reading changed)."""
        points = self.points
        j = len(points)
        while j > 0 and (points[j - 1] is None or points[j - 1].seq >= seq):  # type: ignore[union-attr]
            j -= 1
        del points[j:]
        while points and points[-1] is None:
            points.pop()
        self._unspilled = min(self._unspilled, len(points))
        if self._last is not None and self._last[0] >= len(points):
            self._last = None
        if self.tip is not None and self.tip[0] >= len(points):
            self.tip = None
        for stale in [
            k for k in self._rebuilt if k >= seq
        ]:  # a checkpoint rebuilt there reads differently now
            del self._rebuilt[stale]

    def latest_before(
        self, seq: int, upto_n: int | None = None, ok: Callable[[Point], bool] | None = None
    ) -> int | None:
        """Index of the newest restorable checkpoint strictly before position ``seq``."""
        points = self.points
        j = len(points) - 1
        while j >= 0:
            p = points[j]
            if p is not None and p.seq < seq and (upto_n is None or p.n <= upto_n) and (ok is None or ok(p)):
                if self._restorable(j):
                    return j
            j -= 1
        return None

    def _anchor(self, j: int) -> int | None:
        """The newest checkpoint at or before ``j`` that stands on its own (a full state, or a
        stored one), with only deltas between it and ``j``; None if the chain is broken. A
        stored checkpoint still holding its delta is passed over for the chain in memory:
        rebuilding from storage decodes a whole state (and keeps it, nothing shared)."""
        points, stored = self.points, None
        while j >= 0:
            p = points[j]
            if p is None:
                return stored
            if p.full is not None:
                return j
            if stored is None and p.stored and self.load is not None:
                stored = j  # the nearest one storage rebuilds, should the chain in memory break
            if p.delta is None:
                return stored
            j -= 1
        return stored

    def _restorable(self, j: int) -> bool:
        return self._anchor(j) is not None

    def restore(self, j: int) -> tuple[Point, Any, Orphans]:
        """The checkpoint at index ``j``, its state -- the kept object itself (never change it:
        clone it first) when it is kept whole, else a private copy rebuilt from a full state or
        from storage and the deltas after it -- and its orphans."""
        points = self.points
        p = points[j]
        assert p is not None
        k = self._anchor(j)
        assert k is not None, f"checkpoint {p.seq} cannot be rebuilt"
        anchor = points[k]
        assert anchor is not None
        last = self._last
        if last is not None and k <= last[0] <= j and not (k == j and anchor.full is not None):
            # on from the checkpoint last rebuilt from the spill (the same chain: k is its anchor)
            k, state = last
            if k == j:
                assert p.orphans is not None
                return p, state, p.orphans
            state = state.clone()
            orphans = p.orphans
        elif anchor.full is not None:
            if k == j:
                assert p.orphans is not None
                return p, anchor.full, p.orphans
            state = anchor.full.clone()
            orphans = anchor.orphans
        else:
            assert self.load is not None
            hit = self._rebuilt.get(anchor.seq)
            if hit is None:
                hit = self.load(anchor.seq)
                self._rebuilt[anchor.seq] = hit
                while len(self._rebuilt) > self.rebuilt_kept:
                    self._rebuilt.popitem(last=False)
            else:
                self._rebuilt.move_to_end(anchor.seq)
            state, orphans = hit[0].clone(), hit[1]
        spilled = False
        for i in range(k + 1, j + 1):
            d = points[i].delta  # type: ignore[union-attr]
            if type(d) is Spilled:
                d, spilled = d.load(), True
            assert isinstance(d, Delta)
            apply_delta(state, d)
        if spilled or self._last is not None:
            self._last = (j, state)  # (dropped at the next checkpoint added: memory stays flat)
        out = p.orphans if p.orphans is not None else orphans
        assert out is not None
        return p, state, out


# ------------------------------------------------------------------------------ persisted form
def partial_state(cls: type, d: Delta) -> Any:
    """A state of class ``cls`` holding only what ``d`` changed (to dump a checkpoint delta)."""
    state: Any = object.__new__(cls)
    for name, value in d.slots.items():
        setattr(state, name, value)
    state.creatures = dict(d.creatures)
    state.encounters = dict(d.encounters)
    return state


def delta_of_state(part: Any, gone: Iterable[str] = (), gone_encounters: Iterable[str] = ()) -> Delta:
    """The delta a loaded partial state stands for (the inverse of :func:`partial_state`)."""
    derived = getattr(part, "DERIVED", ())
    slots = {n: getattr(part, n) for n in slot_names(type(part)) if n not in _TABLE and n not in derived}
    return Delta(dict(part.creatures), dict(part.encounters), slots, tuple(gone), tuple(gone_encounters))


def orphan_delta(before: Orphans, after: Orphans) -> tuple[int, list[tuple[int, str]]]:
    """How ``after`` differs from ``before``: (length of their common prefix, what follows it)."""
    a, b = before._log, after._log
    limit = min(len(before), len(after))
    keep = 0
    if a is b:
        keep = limit
    else:
        for i in range(min(len(a._seqs), len(b._seqs))):
            if keep >= limit:
                break
            ca, cb = a._seqs[i], b._seqs[i]
            if ca is cb and a._reasons[i] is b._reasons[i]:
                keep = min(limit, keep + len(ca))
                continue
            ra, rb = a._reasons[i], b._reasons[i]
            m = 0
            while m < len(ca) and m < len(cb) and keep < limit and ca[m] == cb[m] and ra[m] == rb[m]:
                m += 1
                keep += 1
            if m < CHUNK:
                break
    # only what follows the common prefix is walked (after an early correction the prefix is
    # tens of thousands of orphans, and every checkpoint after it is written as a delta:
    # walking it from the start was 15 of 27 s of a snapshot write at 100k facts)
    return keep, list(after.pairs(keep))


def rebuild(
    ruleset: Any,
    rows: Iterable[tuple[bool, dict[str, Any]]],
    start: tuple[Any, list[tuple[int, str]]] | None = None,
) -> tuple[Any, Orphans]:
    """A persisted checkpoint from its rows, oldest first: a full state, then the deltas after
    it up to the checkpoint (as ``Capture.point_rows`` wrote them) -- or, with ``start`` (a
    private state and its orphans, rebuilt from the rows before these), only the deltas after
    it. Returns a private copy of the state and its orphans."""
    state, orphans = rebuild_rows(ruleset, rows, start)
    return state, OrphanLog(orphans).view()


@dataclass(frozen=True, slots=True)
class LoadedRow:
    """One persisted checkpoint row, loaded: a full state and every orphan before it, or a
    delta and the orphans it adds after the first ``keep``. Rebuilding never changes it (a
    full state is cloned, a delta's objects are shared, as a series' own deltas are), so the
    owner may keep it and rebuild from it again."""

    full: bool
    state: Any  # the full state (derived slots rebuilt), or None for a delta
    delta: Delta | None
    orphans: tuple[tuple[int, str], ...]
    keep: int = 0


def load_row(ruleset: Any, full: bool, data: dict[str, Any]) -> LoadedRow:
    """A persisted checkpoint row (as ``Capture.point_rows`` wrote it), loaded."""
    part = ruleset.load_state(data["state"])
    if full:
        return LoadedRow(True, part, None, tuple((int(s), str(r)) for s, r in data["orphans"]))
    delta = delta_of_state(part, data.get("gone", ()), data.get("gone_encounters", ()))
    added = tuple((int(s), str(r)) for s, r in data["orphans"]["add"])
    return LoadedRow(False, None, delta, added, int(data["orphans"]["keep"]))


def rebuild_rows(
    ruleset: Any,
    rows: Iterable[tuple[bool, dict[str, Any]]],
    start: tuple[Any, list[tuple[int, str]]] | None = None,
) -> tuple[Any, list[tuple[int, str]]]:
    """:func:`rebuild`, the orphans as a list (to rebuild a later checkpoint from this one)."""
    return rebuild_loaded((load_row(ruleset, full, data) for full, data in rows), start)


def rebuild_loaded(
    rows: Iterable[LoadedRow], start: tuple[Any, list[tuple[int, str]]] | None = None
) -> tuple[Any, list[tuple[int, str]]]:
    """:func:`rebuild_rows` from loaded rows (:func:`load_row`), which it leaves unchanged: a
    private state and its orphans as a list."""
    state: Any = None
    orphans: list[tuple[int, str]] = []
    if start is not None:
        state, orphans = start
    # encounters a delta set, still its own objects: most are replaced by a later delta, so only
    # those open in the end are cloned (an open encounter changes in every delta)
    lent: set[str] = set()
    for row in rows:
        if row.full:
            state, orphans = row.state.clone(), list(row.orphans)
            lent.clear()
            continue
        if state is None:
            raise ValueError("a checkpoint delta without the full state before it")
        assert row.delta is not None
        apply_delta(state, row.delta, clone_open=False)
        lent.update(row.delta.encounters)
        orphans = orphans[: row.keep] + list(row.orphans)
    if state is None:
        raise ValueError("no rows")
    encounters = state.encounters
    for eid in lent:
        e = encounters.get(eid)
        if e is not None and getattr(e, "state", None) != "ended":
            encounters[eid] = e.clone()
    if hasattr(state, "derive"):
        state.derive()  # the deltas persisted no derived slot: rebuild them for the whole state
    return state, orphans
