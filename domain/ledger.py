"""The ledger: a campaign's facts, its corrections, and the one fold.

Ruleset-neutral. It keeps every fact in position order and derives:

* the *resolution* of all corrections: which facts are revoked (with their
  cascades), the effective (amended) inputs of each fact, the current value
  of each ruling, the GM's overrides and retroactive rules flags;
* the state, by folding the surviving facts in order through the ruleset.
  A fact whose preconditions no longer hold is *orphaned*: skipped, listed
  with its reason, never silently changed.

Corrections never rewrite anything: each is a new fact. When one arrives the
ledger works out the earliest position whose treatment changed (the
correction's *reach*) and refolds from the nearest checkpoint before it, so a
correction near the end of a long campaign costs little. The same checkpoints
serve *as-of* queries, in both time axes: ``corrected`` (what we now know) and
``recorded`` (what the table believed at that position, i.e. with only the
corrections made by then).

Scale (issue 21). Memory does not grow with the whole campaign:

* facts are held in :class:`~domain.entries.Entries`: with an injected loader
  (:meth:`Ledger.attach`) only a window of recent facts stays in memory and
  older ones are read back a page at a time when a fold or a lookup needs them;
  corrections (and the facts they point at) stay pinned, so resolving never
  reads the log;
* orphans are an append-only :class:`~domain.checkpoints.OrphanLog`; a
  checkpoint holds a view (a length), never a copy;
* checkpoints (every ``checkpoint_every`` facts) are deltas from the one before,
  with a full state only every ``full_every`` checkpoints
  (:class:`~domain.checkpoints.Series`);
* a second series, the *recorded* checkpoints, keeps what the table believed at
  each checkpoint. Those states never change once the table has moved on, so
  they survive every later correction and answer ``state_at(p, "recorded")``
  from nearby. The live fold makes them for free as the table plays; a
  checkpoint of another fold is one too when no correction between it and that
  fold's resolution reaches back before it (each correction's reach is kept).

A ledger can also start from a persisted snapshot (:meth:`Ledger.capture`,
:meth:`Ledger.restore`): the state at a position, the orphans, the indexes and
the corrections, checked against a fingerprint of the rules, flags and
corrections it was folded under.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import islice
from typing import Any

from domain.checkpoints import (
    Delta,
    Memo,
    OrphanLog,
    Orphans,
    Point,
    PointLoader,
    Series,
    Spill,
    Values,
    alike_states,
    orphan_delta,
    partial_state,
    reshare,
    unspilled,
)
from domain.core import proposals as book
from domain.core.catalogue import META_TYPES, merge_patch
from domain.entries import Entries, Entry, EntryLoader, MissingFacts
from domain.errors import DomainError, InvalidInput, NotFound, RuleViolation

__all__ = [
    "CORRECTED",
    "INDEXED",
    "INF",
    "Capture",
    "RECORDED",
    "Entry",
    "EntryLoader",
    "Ledger",
    "MissingFacts",
    "Orphans",
    "Resolution",
    "Savepoint",
    "SnapshotMismatch",
]

INF = 1 << 62
CORRECTED = "corrected"
RECORDED = "recorded"
# Ledger.load: the fold trails the newest fact appended by this many facts at most (corrections
# within it are resolved before the facts they reinterpret are folded; the window bounds it),
# and without a window folds every LOAD_FOLD_EVERY facts.
LOOKAHEAD = 1 << 62
LOAD_FOLD_EVERY = 8192
PAUSE_EVERY = 256  # Ledger.refold: facts folded between two calls of its ``pause``
FULL_ROWS_MIN, FULL_ROWS_MAX = 4, 256  # bounds of ``Points.full_rhythm`` (checkpoints per stored full row)
FULL_ROWS_DELTA = 16  # creatures and encounters a delta is taken to hold when none is in memory
SNAPSHOT_FORMAT = 2  # the persisted form (bump when it changes: older rows are rebuilt)

# Correction facts: they change how earlier facts are read.
REVOCATIONS = frozenset({"FactRevoked", "FactRestored"})
NOT_AMENDABLE = frozenset({"FactRevoked", "FactRestored", "FactAmended"}) | book.TYPES
# Correction facts as indexed: they change the resolution (or may: RulesFlagSet, RulingContested).
INDEXED = frozenset(
    {
        "FactRevoked",
        "FactRestored",
        "FactAmended",
        "RulingRecorded",
        "RulingContested",
        "RulingResolved",
        "OutcomeOverridden",
        "RulesFlagSet",
    }
)


_INDEXED_ANY = INDEXED | book.TYPES  # the fact types ``Ledger._index`` does more for


@dataclass(slots=True)
class Resolution:
    """How a set of corrections makes the log read."""

    revoked: dict[int, int] = field(default_factory=dict)  # fact seq -> revoking seq
    amended: dict[int, dict[str, Any]] = field(default_factory=dict)  # seq -> effective payload
    amended_by: dict[int, list[int]] = field(default_factory=dict)
    ruling_values: dict[str, Any] = field(default_factory=dict)
    ruling_status: dict[str, str] = field(default_factory=dict)
    overrides: dict[int, dict[str, Any]] = field(default_factory=dict)
    retro_flags: dict[str, Any] = field(default_factory=dict)
    through: int = 0  # the position of the latest correction taken into account


class SnapshotMismatch(Exception):
    """A persisted snapshot does not fit this ledger (rules, flags, corrections, or its shape)."""


class _Ctx:
    """The context a rule handler sees for one fact."""

    __slots__ = ("seq", "meta", "overrides", "waived", "_rulings")

    def __init__(self, rulings: dict[str, Any]) -> None:
        self.seq = 0
        self.meta: dict[str, Any] = {}
        self.overrides: dict[str, Any] = {}
        self.waived = False
        self._rulings = rulings

    def ruling_holds(self, ruling_id: str) -> bool:
        return bool(self._rulings.get(ruling_id, False))

    def ruling_value(self, ruling_id: str) -> Any:
        return self._rulings.get(ruling_id)


_EMPTY: dict[str, Any] = {}
Sink = Callable[[Entry, dict[str, Any] | None, str | None], None]
StateSink = Callable[[Entry, dict[str, Any] | None, str | None, Any], None]
Base = tuple[int, Any]  # (checkpoint index, its state) a delta is taken from


@dataclass
class _Prepared:
    seq: int
    state: Any
    orphans: OrphanLog
    res: Resolution
    series: Series
    tip: Base | None
    reach: int  # the first position the new fact changes the reading of (INF: none)


@dataclass(slots=True)
class Savepoint:
    """The ledger before facts were staged (see :meth:`Ledger.savepoint`)."""

    count: int
    corrections: int
    state: Any
    lent: bool
    orphans: OrphanLog
    orphan_count: int
    res: Resolution
    res_n: int
    tip: Base | None
    folded: int
    refolded_from: int
    checkpoints: Series
    checkpoints_tip: tuple[int, Any] | None
    recorded: Series
    recorded_tip: tuple[int, Any] | None
    rulings_recorded: int  # how many rulings were recorded (the index only grows: see rollback)


class Ledger:
    """All facts of one campaign and the state they fold to."""

    def __init__(
        self,
        ruleset: Any,
        flags: dict[str, Any] | None = None,
        *,
        first_seq: int = 1,
        checkpoint_every: int = 128,
        full_every: int = 128,
    ) -> None:
        self.ruleset = ruleset
        self.catalogue = ruleset.catalogue
        self.flags: dict[str, Any] = dict(flags or {})
        self.base_flags: dict[str, Any] = dict(ruleset.flag_defaults)
        for name, value in (flags or {}).items():
            self.base_flags[name] = ruleset.validate_flag(name, value)
        self.first_seq = first_seq
        self.checkpoint_every = checkpoint_every
        self.full_every = full_every
        # (a function of the catalogue, not a bound method: no reference cycle through the ledger,
        # so a dropped ledger is freed by reference counting alone)
        self.entries: Entries = Entries(first_seq, partial(_upcast, self.catalogue))
        # indexes
        self._pinned: dict[int, Entry] = {}  # corrections, rulings and the facts corrections point at
        self._by_correlation: dict[str, list[int]] = {}
        self._children: dict[int, list[int]] = {}
        self._citations: dict[str, list[int]] = {}
        self._rulings_recorded: dict[str, int] = {}
        self._corrections: list[int] = []  # seqs of meta facts that (may) reinterpret others
        self._reach: dict[int, int] = {}  # correction seq -> first position it changed (INF: none)
        self._amend_cache: dict[tuple[int, tuple[int, ...]], dict[str, Any]] = {}
        self._idempotency: dict[str, list[int]] = {}
        self.proposals = book.Book()  # proposals and trust settings (their facts are pinned)
        self._res_cache: OrderedDict[int, Resolution] = OrderedDict()  # by number of corrections
        # folded state (corrected axis)
        self._res = Resolution()
        self._res_n = 0  # corrections taken into account by _res
        self._state: Any = None
        self._orphans = OrphanLog()
        self._folded = 0  # number of entries folded into _state
        self._tip: Base | None = None  # the live fold's newest checkpoint (for the next delta)
        self._loaders: dict[str, PointLoader] = {}  # rebuild persisted checkpoints, by series
        self._spill: Spill | None = None  # where older checkpoints go (``spill_checkpoints``)
        self._spill_keep: int | None = None
        self._values: Values | None = None  # values shared by the checkpoints (``share_values``)
        self._checkpoints = Series(checkpoint_every, full_every)
        self._recorded = Series(checkpoint_every, full_every)  # what the table believed
        self._dirty_corrections = False
        self._prepared: _Prepared | None = None
        self.refolded_from = INF  # earliest position refolded since the owner last looked
        self.converged = 0  # refolds that rejoined the present fold early (``_fold_converging``)
        # True once the present state object was handed out (``state``): the ledger then never
        # changes that object again, it folds on a copy-on-write clone instead.
        self._lent = False
        self._reset_state()
        self.refolded_from = INF

    # ------------------------------------------------------------------ basics
    def attach(self, loader: EntryLoader, window: int, *, page: int = 512, pages_kept: int = 4) -> None:
        """Keep about ``window`` recent facts in memory; read older ones through ``loader``."""
        self.entries.attach(loader, window, page=page, pages_kept=pages_kept)

    @property
    def last_seq(self) -> int:
        return self.first_seq + len(self.entries) - 1

    @property
    def next_seq(self) -> int:
        return self.last_seq + 1

    def entry(self, seq: int) -> Entry:
        pinned = self._pinned.get(seq)
        if pinned is not None:
            return pinned
        i = seq - self.first_seq
        if 0 <= i < len(self.entries):
            return self.entries.point(i)
        raise NotFound(f"no fact at position {seq}", field="target")

    def _target(self, seq: int) -> Entry:
        """A fact a correction points at, kept in memory from now on (resolving reads it often)."""
        e = self.entry(seq)
        self._pinned[seq] = e
        return e

    def has(self, seq: int) -> bool:
        i = seq - self.first_seq
        return 0 <= i < len(self.entries)

    def _upcast(self, entry: Entry) -> Entry:
        return _upcast(self.catalogue, entry)

    def _initial(self, res: Resolution) -> Any:
        return self.ruleset.initial_state({**self.base_flags, **res.retro_flags})

    def _reset_state(self) -> None:
        self._state = self._initial(self._res)
        self._lent = False
        self._orphans = OrphanLog()
        self._folded = 0
        self._tip = (-1, self._state.clone())
        self._checkpoints = self._series(self._loaders.get(CORRECTED))
        self.refolded_from = min(self.refolded_from, self.first_seq)

    def _series(self, load: PointLoader | None = None) -> Series:
        return Series(
            self.checkpoint_every,
            self.full_every,
            load,
            spill=self._spill,
            keep=self._spill_keep,
            values=self._values,
        )

    def spill_checkpoints(self, spill: Spill | None, keep: int | None = None) -> None:
        """Keep only the newest ``keep`` checkpoints of both series in memory (by default
        ``Series.SPILL_KEEP``), the others in ``spill`` (read back when one is rebuilt:
        :class:`~domain.checkpoints.Series`). For a long fold whose checkpoints are all kept
        until the end -- an import's dry run, whose checkpoints become the campaign's stored
        ones -- memory then stays flat. None: keep them all in memory. Call it before folding."""
        self._spill, self._spill_keep = spill, keep
        for series in (self._checkpoints, self._recorded):
            series.spill = spill
            series.keep = max(1, Series.SPILL_KEEP if keep is None else keep)

    def share_values(self, values: Values | None) -> None:
        """Give the creatures and ended encounters of each new checkpoint the objects of
        ``values`` for the values they hold (:class:`~domain.checkpoints.Values`: one object per
        value, by value nothing changes), or stop (None). For a long fold whose every state is
        kept until the end (an import's dry run); the table lives as long as the ledger keeps it.
        Call it before folding."""
        self._values = values
        self._checkpoints.values = values

    @property
    def footprint(self) -> int:
        """Facts held in memory (resident entries and pinned ones): a cache's measure."""
        return self.entries.resident + len(self._pinned)

    # ---------------------------------------------------------------- appending
    def append(self, entry: Entry) -> None:
        """Add a stored fact. Folding is lazy: it happens on the next read."""
        entries = self.entries
        if entry.seq != self.first_seq + len(entries):
            raise AssertionError(f"fact at {entry.seq} appended after {self.last_seq}")
        current = self.catalogue.versions.get(entry.type, entry.version) == entry.version
        if not current:
            _upcast(self.catalogue, entry)
        entries.append(entry)
        self._index(entry, current)
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared.seq == entry.seq and self._folded == len(self.entries) - 1:
            self._adopt(prepared)
            return
        # A recorded ruling changes the resolution too (its value is read by the facts citing it).
        if entry.type in META_TYPES and (self._reinterprets(entry) or entry.type == "RulingRecorded"):
            self._dirty_corrections = True

    def load(
        self,
        entries: Iterable[Entry],
        *,
        lookahead: int = LOOKAHEAD,
        corrections: Iterable[Entry] | None = None,
        lookup: Callable[[list[int]], Iterable[Entry]] | None = None,
    ) -> int:
        """Append stored facts (in position order) and fold them as they come, so that each
        is read once. Returns how many were appended.

        With ``corrections`` (the correction facts among ``entries``, read first: a cheap query)
        and ``lookup`` (reads the facts at some positions: the ones corrections point at and
        the causes of corrections), a ledger that holds no fact yet knows the campaign's final
        resolution before the first fact is folded, and folds every fact once, in order, under
        it: no rewind, nothing read back (``_load_resolved``). Otherwise, as follows.

        Appending a long campaign first and folding it afterwards reads every fact the window
        no longer holds twice: once to append (and index), once to fold. Here the fold trails
        the newest fact appended by ``lookahead`` facts (at most three quarters of the window)
        and never falls further behind than the window holds, so what it folds is still in
        memory. A correction that follows what it reinterprets by less than that is resolved
        before those facts are folded; one that reaches further back rewinds the fold, as any
        appended correction does -- while what it reaches is still in memory. Once a
        correction reaches back past the facts held (an overturned ruling cited long ago),
        the load only appends: the one fold at the end starts from the earliest position the
        corrections reach (reading back from there), instead of refolding again for each such
        correction. The result is the same either way: the one fold, under the resolution of
        every correction appended."""
        window = self.entries.window
        every = LOAD_FOLD_EVERY if window is None else max(1, window)
        if corrections is not None and lookup is not None and not len(self.entries) and not self._folded:
            return self._load_resolved(entries, list(corrections), lookup, every)
        trail = max(0, min(lookahead, every - max(1, every // 4)))
        n = 0
        entries_ = self.entries
        folding = True
        for entry in entries:
            self.append(entry)
            n += 1
            if folding and len(entries_) - self._folded >= every:
                folding = not self._reaches_past_memory()
                if folding:
                    self._catch_up(len(entries_) - trail)
        self._catch_up()
        return n

    def _load_resolved(
        self,
        entries: Iterable[Entry],
        corrections: list[Entry],
        lookup: Callable[[list[int]], Iterable[Entry]],
        every: int,
    ) -> int:
        """``load`` with the corrections known first: resolve them up front, then append and
        fold each fact once, in order, under that resolution.

        What a revocation takes with it (its cascade) depends on facts not read yet: the facts
        of the target's action (its correlation id) and the target's consequences (causation
        ids, each naming an earlier fact). The resolution is made from the corrections, the
        facts they point at and the causes of corrections (so whether a correction is itself
        revoked is known), and the rest of each cascade is filled in as the facts arrive,
        before they are folded. At the end the resolution is made again the usual way, from
        the facts appended; should the two differ (a correction the store's query missed, a
        cause that is not an earlier fact), the usual machinery refolds from the first
        difference, so the result is the same either way."""
        known: dict[int, Entry] = {}
        for e in corrections:
            if e.seq >= self.next_seq and e.seq not in known:
                known[e.seq] = self._upcast(e)
        ks = sorted(s for s, e in known.items() if e.type in INDEXED)
        # the facts corrections point at (read once), and the causes of corrections (to the root)
        wanted: set[int] = set()
        for s in ks:
            p = known[s].payload
            target = p.get("target", p.get("revocation"))
            if isinstance(target, int):
                wanted.add(target)
        targets = frozenset(wanted)  # pinned as they are appended (resolving reads them)
        frontier = [known[s] for s in ks]
        while True:
            for e in frontier:
                cause = e.meta.get("causation_id")
                if isinstance(cause, int):
                    wanted.add(cause)
            wanted -= known.keys()
            if not wanted:
                break
            frontier = [self._upcast(e) for e in lookup(sorted(wanted)) if e.seq not in known]
            for e in frontier:
                known[e.seq] = e
            if not frontier:
                break
            wanted = set()
        by_corr: dict[str, list[int]] = {}
        children: dict[int, list[int]] = {}
        for s in sorted(known):
            meta = known[s].meta
            corr = meta.get("correlation_id")
            if corr:
                by_corr.setdefault(corr, []).append(s)
            cause = meta.get("causation_id")
            if isinstance(cause, int):
                children.setdefault(cause, []).append(s)
        active: list[tuple[int, int, str]] = []  # (revocation, target, cascade), latest first

        def cascade(target: int, mode: str, *, before: int = INF) -> list[int]:
            # as ``cascade``, over the facts known so far; records the revocation as active
            active.append((before, target, mode))
            result = [target]
            if mode == "action":
                found = known.get(target)
                corr = found.meta.get("correlation_id") if found is not None else None
                if corr:
                    result = [s for s in by_corr.get(corr, [target]) if s < before]
            elif mode == "consequences":
                stack, seen = [target], {target}
                while stack:
                    for child in children.get(stack.pop(), []):
                        if child < before and child not in seen:
                            seen.add(child)
                            stack.append(child)
                result = sorted(seen)
            return result

        res = self._resolve([known[s] for s in ks], cascade, known.get)
        revoked = res.revoked
        # the rest of each active revocation's cascade, decided as each fact arrives
        by_target: dict[int, int] = {}
        by_action: dict[str, list[int]] = {}
        descends: dict[int, list[int]] = {}
        for r, target, mode in active:
            by_target[target] = max(by_target.get(target, 0), r)
            found = known.get(target)
            if mode == "action" and found is not None and found.meta.get("correlation_id"):
                by_action.setdefault(found.meta["correlation_id"], []).append(r)
            elif mode == "consequences":
                descends.setdefault(target, []).append(r)

        before_load = self.refolded_from
        self._res, self._res_n = res, len(ks)
        self._reset_state()
        if not res.retro_flags:
            self.refolded_from = before_load  # a load is no refold
        recorded = self._recorded_ok(res, self.first_seq - 1, corrections=ks)
        entries_ = self.entries
        n = 0
        for entry in entries:
            self.append(entry)
            n += 1
            s = entry.seq
            if s in targets:
                self._pinned[s] = entry
            best = by_target.get(s, 0)
            if by_action or descends:
                meta = entry.meta
                if by_action:
                    corr = meta.get("correlation_id")
                    if corr:
                        for r in by_action.get(corr, ()):
                            if s < r and r > best:
                                best = r
                if descends:
                    cause = meta.get("causation_id")
                    mine = [r for r in descends.get(cause, ()) if s < r] if isinstance(cause, int) else None
                    if mine:
                        descends.setdefault(s, []).extend(mine)
                        best = max(best, *mine)
            if best and s not in revoked:
                revoked[s] = best
            if len(entries_) - self._folded >= every:
                self._fold_resolved(len(entries_), recorded)
        self._fold_resolved(len(entries_), recorded)
        # the resolution made the usual way, from the facts appended: the same, unless the
        # store's query missed a correction or a cascade could not be followed as it came
        self._dirty_corrections = False
        final = self._resolve([self.entry(s) for s in self._corrections])
        if self._corrections == ks and _same_resolution(final, res):
            self._res = final
            self._cache_res(len(ks), final)
        else:
            self._recorded = self._series()  # folded under a guess
            self._res_n, self._dirty_corrections = -1, True
            self._catch_up()
        return n

    def _fold_resolved(self, stop: int, recorded: Callable[[int], bool]) -> None:
        if self._folded < stop:
            self._own_state()
            self._tip = self._fold(
                self._state,
                self._orphans,
                self._folded,
                stop,
                self._res,
                series=self._checkpoints,
                base=self._tip,
                recorded=recorded,
            )
            self._folded = stop

    def _reaches_past_memory(self) -> bool:
        """Whether the corrections appended since the last fold change the reading of a folded
        fact the window no longer holds (a rewind would read facts back)."""
        if not self._dirty_corrections or not self._folded:
            return False
        new = self._resolve_n(len(self._corrections))
        if new.retro_flags != self._res.retro_flags:
            first = self.first_seq
        else:
            first = self._first_difference(self._res, new)
        return first <= self.first_seq + self._folded - 1 and not self.entries.holds(first - self.first_seq)

    def _adopt(self, p: _Prepared) -> None:
        res = p.res
        n = len(self._corrections)
        if n and self._corrections[-1] == p.seq:
            if res.through != p.seq:  # a correction that changes no reading (a rules flag from now on)
                res = replace(res, through=p.seq)
            self._reach[p.seq] = p.reach
            self._cache_res(n, res)
        self._lent = False  # the prepared state is a clone nobody was given
        self._state, self._orphans, self._res, self._res_n, self._checkpoints, self._tip = (
            p.state,
            p.orphans,
            res,
            n,
            p.series,
            p.tip,
        )
        if p.reach <= self.last_seq:
            self.refolded_from = min(self.refolded_from, p.reach)
        self._folded = len(self.entries)
        self._dirty_corrections = False
        self._maybe_checkpoint()

    # ----------------------------------------------------------------- staging
    def savepoint(self) -> Savepoint:
        """Mark the present before appending facts the store may yet refuse (a commit checks
        its facts with :meth:`prepare` and appends them, then saves them): if the save fails,
        :meth:`rollback` forgets them and the ledger is as it was here, without a reload.

        Appending after the mark changes nothing the mark holds in place: each prepared state
        is a clone, a correction refolds into copies of the series and a forked orphan log; only
        checkpoints are added to the series in place, and the rollback drops those again. The
        indexes grow in place too and the rollback takes out what the dropped facts added (the
        mark copies none of them: a commit's cost must not grow with the campaign's rulings)."""
        self._catch_up()
        return Savepoint(
            count=len(self.entries),
            corrections=len(self._corrections),
            state=self._state,
            lent=self._lent,
            orphans=self._orphans,
            orphan_count=len(self._orphans),
            res=self._res,
            res_n=self._res_n,
            tip=self._tip,
            folded=self._folded,
            refolded_from=self.refolded_from,
            checkpoints=self._checkpoints,
            checkpoints_tip=self._checkpoints.tip,
            recorded=self._recorded,
            recorded_tip=self._recorded.tip,
            rulings_recorded=len(self._rulings_recorded),
        )

    def rollback(self, sp: Savepoint) -> bool:
        """Forget the facts appended since ``sp`` (never stored): indexes, corrections, fold and
        checkpoints are as they were at ``sp``. False (and nothing changed) when that cannot be
        done exactly -- the facts left memory, or they were proposal facts (the proposal book
        is changed in place): then the caller drops the ledger and loads it again."""
        dropped = self.entries.tail(sp.count)
        rulings = self._rulings_recorded
        # the rulings recorded since the mark: the index's newest keys (it is not copied at the
        # mark: thousands of rulings on a long campaign, for every commit)
        added = list(islice(reversed(rulings), max(0, len(rulings) - sp.rulings_recorded)))
        if (
            dropped is None
            or any(e.type in book.TYPES for e in dropped)
            or len(sp.orphans) != sp.orphan_count
            or len(rulings) < sp.rulings_recorded
            or any(  # a staged fact that recorded a ruling id again (never checked, stored only)
                e.type == "RulingRecorded"
                and e.payload["ruling_id"] not in added
                and rulings.get(e.payload["ruling_id"]) == e.seq
                for e in dropped
            )
        ):
            return False
        mark = self.first_seq + sp.count - 1  # the last position kept
        for e in reversed(dropped):
            meta = e.meta
            cause = meta.get("causation_id")
            _unindex(self._idempotency, meta.get("idempotency_key"), e.seq)
            _unindex(self._by_correlation, meta.get("correlation_id"), e.seq)
            _unindex(self._children, cause if isinstance(cause, int) else None, e.seq)
            for rid in _cited_rulings(e.payload):
                _unindex(self._citations, rid, e.seq)
            self._pinned.pop(e.seq, None)
        self.entries.truncate(sp.count)
        del self._corrections[sp.corrections :]
        for rid in added:
            del rulings[rid]
        # caches keyed by what the staged facts were: another fact may take their place
        for seq in [s for s in self._reach if s > mark]:
            del self._reach[seq]
        for n in [n for n in self._res_cache if n > sp.corrections]:
            del self._res_cache[n]
        for key in [k for k in self._amend_cache if k[0] > mark or any(s > mark for s in k[1])]:
            del self._amend_cache[key]
        for series, tip in ((sp.checkpoints, sp.checkpoints_tip), (sp.recorded, sp.recorded_tip)):
            series.drop_from(mark + 1)
            series.tip = tip
        self._checkpoints, self._recorded = sp.checkpoints, sp.recorded
        self._state, self._lent, self._orphans = sp.state, sp.lent, sp.orphans
        self._res, self._res_n, self._tip, self._folded = sp.res, sp.res_n, sp.tip, sp.folded
        self.refolded_from = sp.refolded_from
        self._dirty_corrections = False
        self._prepared = None
        return True

    def _reinterprets(self, entry: Entry) -> bool:
        t = entry.type
        return (
            t in REVOCATIONS
            or t in {"FactAmended", "RulingResolved", "OutcomeOverridden"}
            or (t == "RulesFlagSet" and bool(entry.payload.get("retroactive")))
        )

    def _index(self, entry: Entry, current: bool | None = None) -> None:
        """Index an appended fact; ``current``: whether it was stored at its type's current
        version (as :meth:`append` found; None: look)."""
        meta = entry.meta
        key = meta.get("idempotency_key")
        if key:
            self._idempotency.setdefault(key, []).append(entry.seq)
        corr = meta.get("correlation_id")
        if corr:
            self._by_correlation.setdefault(corr, []).append(entry.seq)
        cause = meta.get("causation_id")
        if isinstance(cause, int):
            self._children.setdefault(cause, []).append(entry.seq)
        known = entry.cites
        if current is None:
            current = self.catalogue.versions.get(entry.type, entry.version) == entry.version
        cites = known if known is not None and current else _cited_rulings(entry.payload)
        for rid in cites:
            self._citations.setdefault(rid, []).append(entry.seq)
        t = entry.type
        if t not in _INDEXED_ANY:  # the usual fact: nothing more to index
            return
        if t == "RulingRecorded":
            self._rulings_recorded[entry.payload["ruling_id"]] = entry.seq
            self._pinned[entry.seq] = entry
        if t in book.TYPES:
            self.proposals.add(entry.seq, entry.type, entry.payload, meta)
            self._pinned[entry.seq] = entry
        if t in INDEXED:
            self._corrections.append(entry.seq)
            self._pinned[entry.seq] = entry
            # the fact it points at is usually recent: pin it while it is still in memory
            target = entry.payload.get("target", entry.payload.get("revocation"))
            if isinstance(target, int) and target not in self._pinned:
                i = target - self.first_seq
                if self.entries.holds(i):
                    self._pinned[target] = self.entries[i]

    # ---------------------------------------------------------------- resolving
    def resolve(self, upto: int | None = None, extra: Iterable[Entry] = ()) -> Resolution:
        """Resolve the corrections made up to position ``upto`` (all by default)."""
        n = len(self._corrections) if upto is None else bisect.bisect_right(self._corrections, upto)
        extra = list(extra)
        if not extra:
            return self._resolve_n(n)
        return self._resolve([self.entry(s) for s in self._corrections[:n]] + extra)

    def _resolve_n(self, n: int) -> Resolution:
        """The resolution of the first ``n`` corrections (cached: a resolution never changes)."""
        if n == self._res_n:
            return self._res
        res = self._res_cache.get(n)
        if res is None:
            res = self._resolve([self.entry(s) for s in self._corrections[:n]])
            self._cache_res(n, res)
        else:
            self._res_cache.move_to_end(n)
        return res

    def _cache_res(self, n: int, res: Resolution) -> None:
        self._res_cache[n] = res
        while len(self._res_cache) > 4:
            self._res_cache.popitem(last=False)

    def _resolve(
        self,
        entries: list[Entry],
        cascade: Callable[..., list[int]] | None = None,
        lookup: Callable[[int], Entry | None] | None = None,
    ) -> Resolution:
        """The resolution of ``entries`` (corrections, in order). ``cascade`` and ``lookup`` (the
        fact at a position, None if unknown) stand in for the ledger's own when the facts are
        not appended yet (``_load_resolved``)."""
        cascade = self.cascade if cascade is None else cascade
        res = Resolution(through=max((e.seq for e in entries), default=0))
        # 1. Revocations, latest first: a revocation (or restore) that is itself
        #    revoked has no effect, and only later facts can revoke earlier ones.
        inactive: set[int] = set()
        for e in reversed(entries):
            if e.type not in REVOCATIONS or e.seq in inactive or e.seq in res.revoked:
                continue
            if e.type == "FactRevoked":
                for s in cascade(e.payload["target"], e.payload["cascade"], before=e.seq):
                    res.revoked.setdefault(s, e.seq)
                    inactive.add(s)
            else:  # FactRestored cancels a revocation
                inactive.add(e.payload["revocation"])
        # 2. In order: rulings take their latest decision, amendments compose,
        #    overrides apply; then retroactive flags from effective payloads.
        recorded_at: dict[str, int] = {}
        for e in entries:
            if e.seq in res.revoked:
                continue
            p = e.payload
            if e.type == "RulingRecorded":
                recorded_at[p["ruling_id"]] = e.seq
                res.ruling_values[p["ruling_id"]] = p.get("value", True)
                res.ruling_status[p["ruling_id"]] = "recorded"
            elif e.type == "FactAmended":
                target = p["target"]
                if lookup is None:
                    found = self._target(target) if self.has(target) else None
                else:
                    found = lookup(target)
                base = res.amended.get(target, found.payload if found is not None else {})
                res.amended_by.setdefault(target, []).append(e.seq)
                res.amended[target] = self._amended(
                    target, base, p["patch"], tuple(res.amended_by[target]), found
                )
                rid = res.amended[target].get("ruling_id")
                if (
                    rid is not None
                    and recorded_at.get(rid) == target
                    and res.ruling_status[rid] in ("recorded", "contested")
                ):
                    res.ruling_values[rid] = res.amended[target].get("value", True)
            elif e.type == "RulingContested":
                if p["ruling_id"] in res.ruling_status:
                    res.ruling_status[p["ruling_id"]] = "contested"
            elif e.type == "RulingResolved":
                rid = p["ruling_id"]
                if rid in res.ruling_status:
                    res.ruling_status[rid] = p["outcome"]
                    if "value" in p:
                        res.ruling_values[rid] = p["value"]
                    elif p["outcome"] == "overturned":
                        res.ruling_values[rid] = False
            elif e.type == "OutcomeOverridden":
                res.overrides.setdefault(p["target"], {})[p["field"]] = p["value"]
        for e in entries:
            if e.type == "RulesFlagSet" and e.seq not in res.revoked:
                p = res.amended.get(e.seq, e.payload)
                if p.get("retroactive"):
                    res.retro_flags[p["flag"]] = p["value"]
        return res

    def _amended(
        self,
        target: int,
        base: dict[str, Any],
        patch: Any,
        key: tuple[int, ...],
        found: Entry | None = None,
    ) -> dict[str, Any]:
        """The effective payload after a chain of amendments, normalised (cached per chain)."""
        cached = self._amend_cache.get((target, key))
        if cached is None:
            merged = merge_patch(base, patch)
            try:
                cached = self.catalogue.validate((found or self._target(target)).type, merged)
            except DomainError:
                cached = merged  # checked when the amendment was recorded; keep what it says
            self._amend_cache[(target, key)] = cached
        return cached

    def _payload(self, seq: int, res: Resolution, entry: Entry | None = None) -> dict[str, Any]:
        return res.amended.get(seq) or (self.entry(seq) if entry is None else entry).payload

    def cascade(self, target: int, mode: str, *, before: int = INF) -> list[int]:
        """The facts a revocation of ``target`` takes with it."""
        result = [target]
        if mode == "action":
            corr = self._target(target).meta.get("correlation_id")
            if corr:
                result = [s for s in self._by_correlation.get(corr, [target]) if s < before]
        elif mode == "consequences":
            stack, seen = [target], {target}
            while stack:
                for child in self._children.get(stack.pop(), []):
                    if child < before and child not in seen:
                        seen.add(child)
                        stack.append(child)
            result = sorted(seen)
        return result

    def _first_difference(self, old: Resolution, new: Resolution) -> int:
        """The earliest position whose reading differs between two resolutions."""
        first = INF
        if old.retro_flags != new.retro_flags:
            return self.first_seq
        if old.revoked is not new.revoked:
            for s in set(old.revoked).symmetric_difference(new.revoked):
                first = min(first, s)
        if old.amended is not new.amended:
            for s in set(old.amended) | set(new.amended):
                if old.amended.get(s) != new.amended.get(s):
                    first = min(first, s)
                    if self.has(s) and self.entry(s).type == "RulingRecorded":
                        rid = self.entry(s).payload["ruling_id"]
                        first = min([first, *self._citations.get(rid, [])])
        if old.ruling_values is not new.ruling_values:
            for rid in set(old.ruling_values) | set(new.ruling_values):
                if old.ruling_values.get(rid) != new.ruling_values.get(rid):
                    first = min([first, *self._citations.get(rid, [])])
        if old.overrides is not new.overrides:
            for s in set(old.overrides) | set(new.overrides):
                if old.overrides.get(s) != new.overrides.get(s):
                    first = min(first, s)
        return first

    def _last_difference(self, old: Resolution, new: Resolution) -> int:
        """The latest position whose reading differs between two resolutions (-1: none; INF:
        every position, the retroactive flags differ). The counterpart of ``_first_difference``:
        the same positions, the other end."""
        last = -1
        if old.retro_flags != new.retro_flags:
            return INF
        if old.revoked is not new.revoked:
            for s in set(old.revoked).symmetric_difference(new.revoked):
                last = max(last, s)
        if old.amended is not new.amended:
            for s in set(old.amended) | set(new.amended):
                if old.amended.get(s) != new.amended.get(s):
                    last = max(last, s)
                    if self.has(s) and self.entry(s).type == "RulingRecorded":
                        rid = self.entry(s).payload["ruling_id"]
                        last = max([last, *self._citations.get(rid, [])])
        if old.ruling_values is not new.ruling_values:
            for rid in set(old.ruling_values) | set(new.ruling_values):
                if old.ruling_values.get(rid) != new.ruling_values.get(rid):
                    last = max([last, *self._citations.get(rid, [])])
        if old.overrides is not new.overrides:
            for s in set(old.overrides) | set(new.overrides):
                if old.overrides.get(s) != new.overrides.get(s):
                    last = max(last, s)
        return last

    def reach(self, seq: int) -> int:
        """The first position whose reading the correction at ``seq`` changed (INF: none)."""
        found = self._reach.get(seq)
        if found is None:
            i = bisect.bisect_left(self._corrections, seq)
            if i >= len(self._corrections) or self._corrections[i] != seq:
                return INF
            found = self._first_difference(self._resolve_n(i), self._resolve_n(i + 1))
            self._reach[seq] = found
        return found

    def _recorded_ok(
        self, res: Resolution, after: int, *, compute: int = 0, corrections: list[int] | None = None
    ) -> Callable[[int], bool]:
        """Which checkpoints (by position) of a fold under ``res`` that starts after position
        ``after`` are also what the table believed then: no correction taken into account
        after the checkpoint reaches back to it or before. Unknown reaches count as reaching
        everything, unless there are at most ``compute`` of them (then they are worked out)."""
        seqs = self._corrections if corrections is None else corrections
        lo = bisect.bisect_right(seqs, after)
        hi = bisect.bisect_right(seqs, res.through)
        ks = seqs[lo:hi]
        if not ks:
            return _always
        unknown = sum(1 for k in ks if k not in self._reach)
        reach = self.reach if unknown <= compute else (lambda k: self._reach.get(k, self.first_seq))
        mins = [0] * len(ks)
        m = INF
        for i in range(len(ks) - 1, -1, -1):
            m = min(m, reach(ks[i]))
            mins[i] = m

        def ok(c: int) -> bool:
            i = bisect.bisect_right(ks, c)
            return i == len(ks) or mins[i] > c

        return ok

    # ------------------------------------------------------------------ folding
    def _steps(
        self, state: Any, orphans: OrphanLog, start: int, stop: int, res: Resolution
    ) -> Iterator[tuple[Entry, dict[str, Any] | None, str | None]]:
        """Fold entries[start:stop] into ``state`` (in place), yielding each fact's outcome."""
        apply = self.ruleset.apply
        meta_types = META_TYPES
        revoked, amended, overrides = res.revoked, res.amended, res.overrides
        ctx = _Ctx(res.ruling_values)
        for e in self.entries.range(start, stop):
            s = e.seq
            if s in revoked:
                yield e, None, None
            elif e.type in meta_types:
                if e.type == "RulesFlagSet":
                    p = amended.get(s, e.payload)
                    if not p.get("retroactive"):
                        state.flags[p["flag"]] = p["value"]
                yield e, None, None
            else:
                payload = amended.get(s, e.payload)
                if "rulings" in payload:
                    payload = _with_rulings(payload, res.ruling_values)
                ctx.seq = s
                ctx.meta = e.meta
                given = overrides.get(s) if overrides else None
                if given is None:  # the usual fact: no override
                    ctx.overrides, ctx.waived = _EMPTY, False
                else:
                    ctx.overrides, ctx.waived = given, given.get("orphan") == "keep"
                try:
                    outcome = apply(state, e.type, payload, ctx)
                except DomainError as err:
                    orphans.append(s, err.message)
                    yield e, None, err.message
                else:
                    yield e, outcome, None

    def _fold(
        self,
        state: Any,
        orphans: OrphanLog,
        start: int,
        stop: int,
        res: Resolution,
        *,
        series: Series | None = None,
        base: Base | None = None,
        recorded: Callable[[int], bool] | None = None,
        rec_base: Base | None = None,
        sink: Sink | None = None,
    ) -> Base | None:
        """Fold entries[start:stop] into ``state`` (in place).

        With ``series``, add a checkpoint to it every ``checkpoint_every`` entries (each a
        delta from the one before; ``base`` is the checkpoint the fold starts from). With
        ``recorded``, the checkpoints whose position it accepts are recorded checkpoints too
        (``rec_base``: the recorded checkpoint the fold starts from, if it is one).
        Returns the last checkpoint made (or ``base``)."""
        every = self.checkpoint_every
        i = start
        for e, outcome, orphan in self._steps(state, orphans, start, stop, res):
            if sink is not None:
                sink(e, outcome, orphan)
            i += 1
            if i % every == 0 and (series is not None or recorded is not None):
                j = i // every - 1
                wanted = recorded is not None and recorded(e.seq)
                if series is None and not wanted:
                    rec_base = None
                    continue
                cp = state.clone()
                view = orphans.view()
                if series is not None and not (series.has(i) and series.points[j].seq == e.seq):  # type: ignore[union-attr]
                    series.add(e.seq, i, cp, view, base, res.through)
                base = (j, cp)
                if wanted and self._record(e.seq, i, cp, view, rec_base):
                    rec_base = (j, cp)
                else:
                    rec_base = None
        return base

    def _record(self, seq: int, n: int, state: Any, orphans: Orphans, base: Base | None) -> bool:
        """Keep a checkpoint of what the table believed after ``n`` entries; say whether the
        recorded series has one there now."""
        rec = self._recorded
        if rec.has(n):
            return True
        j = n // self.checkpoint_every - 1
        if (
            base is None
            and rec.tip is not None
            and rec.tip[0] == j - 1
            and rec.has(n - self.checkpoint_every)
        ):
            base = rec.tip
        chained = base is not None and base[0] == j - 1
        # a checkpoint that cannot be a delta is kept whole: only at the full_every rhythm, or
        # when it extends the series (then the ones after it chain from it)
        if chained or (j + 1) % rec.full_every == 0 or j >= len(rec.points):
            rec.add(seq, n, state, orphans, base if chained else None)
            return True
        return False

    def _start_point(
        self, before_seq: int, upto_index: int | None = None, series: Series | None = None
    ) -> tuple[int, Base | None, Any, OrphanLog]:
        """The latest checkpoint strictly before ``before_seq``: (entries folded, the
        checkpoint as a delta base, a private copy of its state, its orphans)."""
        series = self._checkpoints if series is None else series
        while True:
            j = series.latest_before(before_seq, upto_index)
            if j is None:
                state = self._initial(self._res)
                return 0, (-1, state.clone()), state, OrphanLog()
            if upto_index is not None:  # the facts to fold from it: read while it is rebuilt
                self.entries.prefetch(series.points[j].n, upto_index)  # type: ignore[union-attr]
            got = _restored(series, j)
            if got is not None:
                p, cp, orphans = got
                return p.n, (j, cp), cp.clone(), orphans.fork()

    def _catch_up(self, stop: int | None = None) -> None:
        """Resolve the corrections appended since the last fold (rewinding the fold from the
        earliest position whose reading they change) and fold the entries up to index ``stop``
        (all by default)."""
        if self._dirty_corrections:
            n = len(self._corrections)
            new = self._resolve_n(n)
            first = self._first_difference(self._res, new)
            if n == self._res_n + 1:
                self._reach.setdefault(self._corrections[-1], first)
            old_flags = self._res.retro_flags
            self._res, self._res_n = new, n
            self._cache_res(n, new)
            if new.retro_flags != old_flags:
                self._reset_state()
            elif first < INF and self._folded and first <= self.first_seq + self._folded - 1:
                self._rewind(first)
            self._dirty_corrections = False
        stop = len(self.entries) if stop is None else min(stop, len(self.entries))
        if self._folded < stop:
            self._fold_forward(stop)

    def _rewind(self, first: int) -> None:
        """Forget the fold from position ``first`` on (its reading changed)."""
        self._checkpoints.drop_from(first)
        n, base, state, orphans = self._start_point(first)
        self._state, self._orphans, self._folded, self._tip = state, orphans, n, base
        self._lent = False
        self.refolded_from = min(self.refolded_from, first)

    def _own_state(self) -> None:
        """Before folding into the present in place: if it was handed out, fold into a clone
        (orphans need nothing: what was handed out of them is a frozen view)."""
        if self._lent:
            self._state, self._lent = self._state.clone(), False

    def _fold_forward(self, stop: int) -> None:
        self._own_state()
        start = self._folded
        self._tip = self._fold(
            self._state,
            self._orphans,
            start,
            stop,
            self._res,
            series=self._checkpoints,
            base=self._tip,
            recorded=self._recorded_ok(self._res, self.first_seq + start - 1),
        )
        self._folded = stop

    def _maybe_checkpoint(self) -> None:
        n = len(self.entries)
        every = self.checkpoint_every
        if n % every == 0 and not self._checkpoints.has(n):
            seq = self.last_seq
            cp = self._state.clone()
            view = self._orphans.view()
            self._checkpoints.add(seq, n, cp, view, self._tip, self._res.through)
            self._tip = (n // every - 1, cp)
            if self._res.through <= seq:
                self._record(seq, n, cp, view, None)

    def refold(
        self, sink: StateSink, pause: Callable[[], object] | None = None, pause_every: int = PAUSE_EVERY
    ) -> int:
        """Fold the facts appended since the last read, telling ``sink`` how every fact reads
        whose reading may have changed: the new facts and, after a correction, every fact from
        the earliest one it affects (its outcome, status or annotation). Used by projections to
        re-derive their rows from the fold. Returns that earliest position (``next_seq`` when
        nothing was folded).

        ``sink(entry, outcome, orphan_reason, state)`` sees the live state just after the fact:
        read it at once, never keep or change it.

        ``pause``: called after every ``pause_every`` facts folded (never before the first, so
        a refold of fewer facts never calls it), between two facts; it may block (a reader that
        gives way to others, such as a server's in-process read models), and must leave this
        ledger alone meanwhile.
        """
        first_new = self.first_seq + self._folded if self._folded < len(self.entries) else self.next_seq
        start, old, reset = first_new, self._res, False
        if self._dirty_corrections:
            n = len(self._corrections)
            new = self._resolve([self.entry(s) for s in self._corrections])
            first = self._first_difference(old, new)
            if n == self._res_n + 1:
                self._reach.setdefault(self._corrections[-1], first)
            start = min(start, first)
            for s in set(old.revoked) | set(new.revoked):
                if old.revoked.get(s) != new.revoked.get(s):
                    start = min(start, s)
            for s in set(old.amended_by) | set(new.amended_by):
                if old.amended_by.get(s) != new.amended_by.get(s):
                    start = min(start, s)
            for rid in set(old.ruling_status) | set(new.ruling_status):
                if old.ruling_status.get(rid) != new.ruling_status.get(rid) and rid in self._rulings_recorded:
                    start = min(start, self._rulings_recorded[rid])
            reset = new.retro_flags != old.retro_flags
            self._res, self._res_n, self._dirty_corrections = new, n, False
            self._cache_res(n, new)
        if start > self.last_seq:
            return start
        if reset:
            self._reset_state()
            n0, state, orphans, base = 0, self._state, self._orphans, self._tip
        elif start >= first_new:
            self._own_state()
            n0, state, orphans, base = self._folded, self._state, self._orphans, self._tip
        else:
            self._checkpoints.drop_from(start)
            n0, base, state, orphans = self._start_point(start)
            self.refolded_from = min(self.refolded_from, start)

        folded = 0
        every = max(1, pause_every)

        def report(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
            nonlocal folded
            if e.seq >= start:
                sink(e, outcome, orphan, state)
            if pause is not None:
                folded += 1
                if folded % every == 0:
                    pause()

        stop = len(self.entries)
        self._tip = self._fold(
            state,
            orphans,
            n0,
            stop,
            self._res,
            series=self._checkpoints,
            base=base,
            recorded=self._recorded_ok(self._res, self.first_seq + n0 - 1),
            sink=report,
        )
        self._state, self._orphans, self._folded = state, orphans, len(self.entries)
        return start

    # ------------------------------------------------------------------- reading
    @property
    def state(self) -> Any:
        """The present, as corrected now: an object the ledger will not change any more (later
        facts fold into a copy-on-write clone), so a reader may keep it after the campaign moves on."""
        self._catch_up()
        self._lent = True
        return self._state

    def present(self) -> Any:
        """The present, as corrected now, *not* handed out: the ledger folds the next facts into
        this very object, so read it at once and keep nothing of it (what :attr:`state` gives
        may be kept, at the cost of a copy-on-write clone before the next fold). The read
        models read it so, and follow what changed with the state's journal of changes."""
        self._catch_up()
        return self._state

    @property
    def orphans(self) -> Orphans:
        """The orphans now (position -> reason), a frozen view."""
        self._catch_up()
        return self._orphans.view()

    @property
    def resolution(self) -> Resolution:
        self._catch_up()
        return self._res

    def state_at(self, position: int, view: str = CORRECTED) -> tuple[Any, Orphans]:
        """State and orphans after the fact at ``position``, in either time axis."""
        self._catch_up()
        if position < self.first_seq - 1 or position > self.last_seq:
            raise InvalidInput(
                f"position {position} is outside this campaign (1..{self.last_seq})",
                field="position",
                code="POSITION_OUT_OF_RANGE",
            )
        stop = position - self.first_seq + 1
        if view == CORRECTED:
            n, base, state, orphans = self._start_point(position + 1, upto_index=stop)
            # fill the corrected checkpoints on the way (a restored ledger has few old ones)
            self._fold(state, orphans, n, stop, self._res, series=self._checkpoints, base=base)
            return state, orphans.view()
        if view != RECORDED:
            raise InvalidInput(f"unknown view {view!r}: use corrected or recorded", field="view")
        res = self.resolve(upto=position)
        n, state, orphans, base = self._recorded_start(position, res)
        ok = self._recorded_ok(res, self.first_seq + n - 1, compute=64)
        self._fold(state, orphans, n, stop, res, recorded=ok, rec_base=base)
        return state, orphans.view()

    def _recorded_start(self, position: int, res: Resolution) -> tuple[int, Any, OrphanLog, Base | None]:
        """Where to start folding what the table believed at ``position`` (under ``res``): the
        newest checkpoint, corrected or recorded, whose reading up to it agrees with ``res``
        (and, as a delta base, that checkpoint when it is a recorded one)."""
        stop = position - self.first_seq + 1
        best_n = -1
        best: tuple[Series, int] | None = None
        if res.retro_flags == self._res.retro_flags:
            d = self._first_difference(res, self._res)
            j = self._checkpoints.latest_before(min(d, position + 1), stop)
            if j is not None:
                best_n, best = self._checkpoints.points[j].n, (self._checkpoints, j)  # type: ignore[union-attr]
        rec = self._recorded
        # the newest recorded checkpoint no correction after it (up to ``position``) reaches past
        ks = self._corrections[: bisect.bisect_right(self._corrections, res.through)]
        m, i = INF, len(ks)

        def ok(p: Point) -> bool:
            nonlocal m, i
            while i > 0 and ks[i - 1] > p.seq:
                i -= 1
                m = min(m, self.reach(ks[i]))
            return m > p.seq

        j = rec.latest_before(position + 1, stop, ok=lambda p: p.n > best_n and ok(p))
        if j is not None:
            best = (rec, j)
        if best is None:
            state = self._initial(res)
            return 0, state, OrphanLog(), None
        series, j = best
        self.entries.prefetch(series.points[j].n, stop)  # type: ignore[union-attr]  # (read while it is rebuilt)
        got = _restored(series, j)
        if got is None:  # its storage failed: look again without it
            return self._recorded_start(position, res)
        p, cp, orphans = got
        return p.n, cp.clone(), orphans.fork(), (j, cp) if series is rec else None

    def replay(self, sink: Sink, *, upto: int | None = None, view: str = CORRECTED) -> Any:
        """Fold from the start, telling ``sink`` each fact's outcome (for logs and exports)."""
        self._catch_up()
        stop = len(self.entries) if upto is None else max(0, upto - self.first_seq + 1)
        res = self._res if view == CORRECTED else self.resolve(upto=upto)
        state = self._initial(res)
        self._fold(state, OrphanLog(), 0, stop, res, sink=sink)
        return state

    def replay_iter(
        self, *, upto: int | None = None, view: str = CORRECTED
    ) -> Iterator[tuple[Entry, dict[str, Any] | None, str | None, Any]]:
        """``replay`` as a generator (for streaming exports): yields each fact with its outcome
        (None when revoked, orphaned or a meta fact), its orphan reason, and the state after it.

        The state is the live fold object, changed by the next step: read it before advancing.
        """
        self._catch_up()
        stop = len(self.entries) if upto is None else max(0, upto - self.first_seq + 1)
        res = self._res if view == CORRECTED else self.resolve(upto=upto)
        state = self._initial(res)
        for entry, outcome, orphan in self._steps(state, OrphanLog(), 0, stop, res):
            yield entry, outcome, orphan, state

    # ----------------------------------------------------------------- commands
    def prepare(self, fact_type: str, payload: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        """Check a new fact against the present; return its outcome without storing it.

        Raises a typed DomainError (nothing changes) if the fact is refused. The
        work done here is adopted by the following ``append`` of the same fact.
        """
        return self._prepare(fact_type, payload, meta)

    def prepared_reach(self) -> int:
        """The first position whose reading the fact last prepared changes (INF: none, or none
        prepared): a correction prepared refolds every fact from there on."""
        p = self._prepared
        return INF if p is None else p.reach

    def _prepare(
        self, fact_type: str, payload: dict[str, Any], meta: dict[str, Any], converge: bool = False
    ) -> dict[str, Any]:
        self._catch_up()
        entry = Entry(self.next_seq, fact_type, self.catalogue.version(fact_type), payload, meta)
        if fact_type in META_TYPES:
            self.check_reference(entry)
            res = (
                self.resolve(extra=[entry])
                if self._reinterprets(entry) or fact_type in {"RulingRecorded", "RulingContested"}
                else self._res
            )
            state, orphans, series, tip, first = self._refold_with(res, extra=entry, converge=converge)
            before = self._orphans.view()
            now = orphans.view()
            old, new = set(before.since(first)), set(now.since(first))
            outcome = {"orphaned": sorted(new - old), "no_longer_orphaned": sorted(old - new)}
        else:
            state = self._state.clone()
            outcome = self._apply_new(state, entry)
            orphans, res, series, tip, first = self._orphans, self._res, self._checkpoints, self._tip, INF
        self._prepared = _Prepared(entry.seq, state, orphans, res, series, tip, first)
        return outcome

    def _apply_new(self, state: Any, entry: Entry) -> dict[str, Any]:
        """Apply a new (not meta) fact to ``state`` under the present resolution, as the fold
        will; raise a DomainError if the present refuses it."""
        payload = entry.payload
        ctx = _Ctx(self._res.ruling_values)
        ctx.seq, ctx.meta = entry.seq, entry.meta
        if "rulings" in payload:
            self._check_citations(payload)
            payload = _with_rulings(payload, self._res.ruling_values)
        for rid in _cited_rulings(payload):
            if rid not in self._res.ruling_status:
                raise NotFound(f"no ruling {rid!r} has been recorded", field="ruling")
        return self.ruleset.apply(state, entry.type, payload, ctx)  # type: ignore[no-any-return]

    def append_checked(self, entry: Entry) -> dict[str, Any]:
        """``prepare`` then ``append`` of a new fact, folding it into the present in place.

        ``prepare`` folds into a copy of the present (the request path must leave the present
        untouched when a fact is refused), and copying the present costs one step per creature
        ever registered, for every fact. A caller that gives the ledger up at the first refusal
        -- an import's dry-run validation -- needs no copy: this applies the fact to the present
        itself. Raises what ``prepare`` raises, and then the fact is not appended but the
        present may be part-changed: drop the ledger. Corrections take the ``prepare`` path.
        Returns the fact's outcome."""
        if entry.seq != self.next_seq:
            raise AssertionError(f"fact at {entry.seq} appended after {self.last_seq}")
        if entry.type in META_TYPES:
            outcome = self._prepare(entry.type, entry.payload, entry.meta, converge=True)
            self.append(entry)
            return outcome
        self._catch_up()
        self._prepared = None
        self._upcast(entry)
        self._own_state()
        outcome = self._apply_new(self._state, entry)
        self.entries.append(entry)
        self._index(entry)
        self._folded = len(self.entries)
        self._maybe_checkpoint()
        return outcome

    def _check_citations(self, payload: dict[str, Any]) -> None:
        for rid in payload.get("rulings", {}).values():
            if rid not in self._res.ruling_status:
                raise NotFound(f"no ruling {rid!r} has been recorded", field="rulings")

    def _refold_with(
        self, res: Resolution, extra: Entry | None = None, converge: bool = False
    ) -> tuple[Any, OrphanLog, Series, Base | None, int]:
        """The present under another resolution, without touching the ledger: state, orphans,
        checkpoints, the newest checkpoint, and the first position whose reading changed."""
        first = INF
        if res is self._res:
            state, orphans, series, tip = self._state.clone(), self._orphans, self._checkpoints, self._tip
        elif res.retro_flags != self._res.retro_flags:
            first = self.first_seq
            state = self._initial(res)
            orphans, series = OrphanLog(), self._series()
            tip = self._fold(
                state, orphans, 0, len(self.entries), res, series=series, base=(-1, state.clone())
            )
        else:
            first = self._first_difference(self._res, res)
            if first > self.last_seq:
                state, orphans, series, tip = self._state.clone(), self._orphans, self._checkpoints, self._tip
            else:
                series = self._checkpoints.copy()
                series.drop_from(first)
                n, base, state, orphans = self._start_point(first, series=series)
                if converge:
                    state, orphans, tip = self._fold_converging(state, orphans, n, res, series, base)
                else:
                    tip = self._fold(state, orphans, n, len(self.entries), res, series=series, base=base)
        if first <= self.last_seq:
            memo: Memo = {}  # (the pairs reshare compared are met again in the checkpoints)
            reshare(self._state, state, memo)  # what the correction did not change keeps its identity
            # and the refold's checkpoints kept whole hold the present's objects, not copies
            series.reshare_kept(state, self._checkpoints, memo)
        if extra is not None and extra.type == "RulesFlagSet" and not extra.payload.get("retroactive"):
            state.flags[extra.payload["flag"]] = extra.payload["value"]
        return state, orphans, series, tip, first

    def _fold_converging(
        self, state: Any, orphans: OrphanLog, n: int, res: Resolution, series: Series, base: Base | None
    ) -> tuple[Any, OrphanLog, Base | None]:
        """``_fold`` of entries[n:] under ``res`` into ``state``, ``orphans`` and ``series`` (a
        copy of the present checkpoints up to ``n``), that stops where it rejoins the present
        fold: at the first checkpoint after every position ``res`` reads differently from the
        present resolution where the state and the orphans are alike the present fold's
        checkpoint there. The fold from there on is the present fold's -- the same facts, read
        alike, from alike states -- so it is taken as it is: its checkpoints (marked as folded
        under ``res``), its orphans and its present. Returns (state, orphans, newest checkpoint).

        A correction reaching far back (a ruling decided long after it was cited) then costs
        the stretch until the fold forgets it (the encounter's end, a rest), not the rest of the
        campaign. Used where the ledger is given up at the first refusal (``append_checked``)."""
        old, every, stop = self._checkpoints, self.checkpoint_every, len(self.entries)
        last = self._last_difference(self._res, res)
        start_seq = self.first_seq + n - 1
        i = n
        while i < stop:
            nxt = min(stop, (i // every + 1) * every)
            base = self._fold(state, orphans, i, nxt, res, series=series, base=base)
            i = nxt
            seq = self.first_seq + i - 1
            if i == stop or seq <= last or last >= INF:
                continue
            j = i // every - 1
            p = old.points[j] if j < len(old.points) else None
            if p is None or p.seq != seq or p.orphans is None or not old._restorable(j):
                continue
            _, was, was_orphans = old.restore(j)
            if not alike_states(was, state):
                continue
            if [o for o in was_orphans.pairs() if o[0] > start_seq] != [
                o for o in orphans.view().pairs() if o[0] > start_seq
            ]:
                continue
            # rejoined: the present fold's checkpoints after this one, as folded under ``res``
            series.points[j + 1 :] = [
                None if q is None else replace(q, through=res.through) for q in old.points[j + 1 :]
            ]
            series.tip = old.tip
            # the checkpoint it rejoined at is followed now: its full state may go (else each
            # rejoin kept one whole state for good: 44 in the 100k import's dry run, not 7)
            series.settle(j)
            self.converged += 1
            return self._state.clone(), self._orphans, self._tip
        return state, orphans, base

    def check_reference(self, entry: Entry) -> None:
        """Refuse a correction that points at nothing sensible."""
        p, t = entry.payload, entry.type
        res = self._res
        if t in book.TYPES:
            self.proposals.check(t, p)
        elif t == "FactRevoked":
            target = self._target(p["target"])
            if target.type in book.TYPES:
                raise InvalidInput(
                    f"a {target.type} is not revoked: a proposal is withdrawn or rejected, a trust "
                    "setting set again",
                    field="target",
                )
            if target.seq in res.revoked:
                raise RuleViolation(
                    f"fact {target.seq} is already revoked", field="target", code="ALREADY_REVOKED"
                )
        elif t == "FactRestored":
            rev = self._target(p["revocation"])
            if rev.type != "FactRevoked":
                raise InvalidInput(f"fact {rev.seq} is a {rev.type}, not a revocation", field="revocation")
            restored = any(
                self.entry(s).type == "FactRestored"
                and self.entry(s).payload["revocation"] == rev.seq
                and s not in res.revoked
                for s in self._corrections
            )
            if rev.seq in res.revoked or restored:
                raise RuleViolation(
                    f"revocation {rev.seq} is no longer in force", field="revocation", code="NOT_REVOKED"
                )
        elif t == "FactAmended":
            target = self._target(p["target"])
            if target.type in NOT_AMENDABLE:
                raise InvalidInput(f"a {target.type} cannot be amended; revoke it instead", field="target")
            if target.seq in res.revoked:
                raise RuleViolation(
                    f"fact {target.seq} is revoked; restore it first", field="target", code="ALREADY_REVOKED"
                )
            current = res.amended.get(target.seq, target.payload)
            self.catalogue.validate(target.type, merge_patch(current, p["patch"]))
        elif t == "OutcomeOverridden":
            target = self._target(p["target"])
            if target.type in META_TYPES:
                raise InvalidInput(f"a {target.type} has no derived outcome to override", field="target")
            # C0.4: a ruleset that lists what its fold reads refuses any other field (keeping an
            # orphan is the ledger's own and always allowed)
            check_override = getattr(self.ruleset, "check_override", None)
            if p["field"] != "orphan" and check_override is not None:
                payload = res.amended.get(target.seq, target.payload)
                p["value"] = check_override(target.type, payload, p["field"], p["value"])
        elif t == "RulingRecorded":
            if p["ruling_id"] in self._rulings_recorded:
                raise InvalidInput(f"ruling {p['ruling_id']!r} already exists", field="ruling_id")
        elif t in ("RulingContested", "RulingResolved"):
            if p["ruling_id"] not in res.ruling_status:
                raise NotFound(f"no ruling {p['ruling_id']!r} has been recorded", field="ruling_id")
        elif t == "RulesFlagSet":
            p["value"] = self.ruleset.validate_flag(p["flag"], p["value"])

    def what_if(self, proposals: list[tuple[str, dict[str, Any]]]) -> tuple[Any, Orphans]:
        """Fold the present as it would be after the proposed corrections. Stores nothing."""
        self._catch_up()
        extra: list[Entry] = []
        for offset, (fact_type, payload) in enumerate(proposals):
            if fact_type not in META_TYPES or fact_type in {"NoteAdded", "DiceRolled"} | book.TYPES:
                raise InvalidInput(f"{fact_type} is not a correction", field="corrections")
            payload = self.catalogue.validate(fact_type, payload)
            e = Entry(self.next_seq + offset, fact_type, 1, payload, {})
            self.check_reference(e)
            extra.append(e)
        res = self.resolve(extra=extra)
        state, orphans, _, _, _ = self._refold_with(res)
        for e in extra:
            if e.type == "RulesFlagSet" and not e.payload.get("retroactive"):
                state.flags[e.payload["flag"]] = e.payload["value"]
        return state, orphans.view()

    def simulate(
        self, actions: list[list[tuple[str, dict[str, Any]]]]
    ) -> tuple[Any, list[DomainError | None]]:
        """The present as it would be after these table actions (each a list of facts, in order),
        and for each action the refusal it would get there (None: applied). A refused action
        changes nothing, the later ones are tried without it. Stores nothing. Corrections and
        rulings are not table actions: refused (preview them with :meth:`what_if`)."""
        self._catch_up()
        state = self._state.clone()
        seq = self.next_seq
        refusals: list[DomainError | None] = []
        for items in actions:
            trial, start = state.clone(), seq
            try:
                for fact_type, payload in items:
                    payload = self.catalogue.validate(fact_type, payload)
                    if fact_type in META_TYPES:
                        if fact_type in INDEXED and fact_type != "RulingContested":
                            raise InvalidInput(
                                f"{fact_type} is a correction, not a table action", field="type"
                            )
                        seq += 1
                        continue
                    ctx = _Ctx(self._res.ruling_values)
                    ctx.seq, ctx.meta = seq, {}
                    if "rulings" in payload:
                        self._check_citations(payload)
                        payload = _with_rulings(payload, self._res.ruling_values)
                    self.ruleset.apply(trial, fact_type, payload, ctx)
                    seq += 1
            except DomainError as err:
                refusals.append(err)
                seq = start
                continue
            state = trial
            refusals.append(None)
        return state, refusals

    # ------------------------------------------------------------------ history
    def status(self, seq: int) -> list[str]:
        """A fact's status flags: revoked, amended, orphaned, overridden, or active."""
        self._catch_up()
        res = self._res
        flags = []
        if seq in res.revoked:
            flags.append("revoked")
        if seq in res.amended:
            flags.append("amended")
        if seq in self._orphans.view():
            flags.append("orphaned")
        if seq in res.overrides:
            flags.append("overridden")
        return flags or ["active"]

    def by_idempotency_key(self, key: str) -> list[Entry]:
        """The facts a command with this idempotency key stored (empty if none)."""
        return [self.entry(s) for s in self._idempotency.get(key, [])]

    def outcomes_as_recorded(self, seqs: list[int]) -> list[dict[str, Any] | None]:
        """Each fact's outcome as it was when it was recorded (for idempotent replays)."""
        found = {e.seq: outcome for e, outcome, _, _ in self.walk(min(seqs), max(seqs), RECORDED)}
        return [found.get(s) for s in seqs]

    def walk(
        self, start: int, stop: int, view: str = CORRECTED
    ) -> Iterator[tuple[Entry, dict[str, Any] | None, str | None, Any]]:
        """Facts ``start``..``stop`` (inclusive), each with its outcome, its orphan reason and
        the state after it (the live fold object: read it before advancing).

        It folds from the nearest checkpoint, so reading a page of history or catching a
        subscriber up costs the page, not the campaign. In the ``recorded`` view each fact's
        outcome is the one the table saw when it was recorded: folded with only the
        corrections made up to it.
        """
        self._catch_up()
        start, stop = max(start, self.first_seq), min(stop, self.last_seq)
        if start > stop:
            return
        i0 = start - self.first_seq
        orphans: OrphanLog
        if view == CORRECTED:
            res = self._res
            n, base, state, orphans = self._start_point(start)
            self._fold(state, orphans, n, i0, res, series=self._checkpoints, base=base)
        elif view == RECORDED:
            res = self.resolve(upto=start - 1)
            n, state, orphans, _ = self._recorded_start(start - 1, res)
            self._fold(state, orphans, n, i0, res)
        else:
            raise InvalidInput(f"unknown view {view!r}: use corrected or recorded", field="view")
        i = i0
        end = stop - self.first_seq + 1
        while i < end:
            # in the recorded view a correction changes what the table believed from there on,
            # so the walk goes one stretch between corrections at a time
            seg_end = end
            if view == RECORDED:
                k = bisect.bisect_right(self._corrections, self.first_seq + i - 1)
                while k < len(self._corrections) and self._corrections[k] <= self.first_seq + end - 1:
                    e = self.entry(self._corrections[k])
                    if self._reinterprets(e) or e.type in ("RulingRecorded", "RulingContested"):
                        seg_end = e.seq - self.first_seq
                        break
                    k += 1
            if seg_end > i:
                for e, outcome, orphan in self._steps(state, orphans, i, seg_end, res):
                    yield e, outcome, orphan, state
                i = seg_end
            if i < end and view == RECORDED:
                e = self.entries[i]
                state, orphans_view = self.state_at(e.seq, RECORDED)
                orphans = orphans_view.fork()
                res = self.resolve(upto=e.seq)
                yield e, None, None, state
                i += 1

    def payload_as_read(self, seq: int) -> dict[str, Any]:
        """A fact's effective (amended) payload under the resolution being folded now: safe to call
        from a fold's sink (it does not catch up)."""
        return self._payload(seq, self._res)

    def resolution_as_read(self) -> Resolution:
        """The resolution being folded now (inside :meth:`refold`, the one :attr:`resolution`
        gives once the fold is done): safe to call from a fold's sink (it does not catch up)."""
        return self._res

    def effective_payload(self, seq: int, entry: Entry | None = None) -> dict[str, Any]:
        """The fact's payload as amended (``entry``: the fact itself, when the caller holds it)."""
        return self._payload(seq, self.resolution, entry)

    def entries_between(self, first: int, last: int) -> list[Entry]:
        """The facts at positions ``first``..``last`` that exist, in order: a stretch not in
        memory is read from the store at once (a page of the history), not fact by fact."""
        i, j = max(first, self.first_seq) - self.first_seq, min(last, self.last_seq) - self.first_seq + 1
        return list(self.entries.range(i, j)) if i < j else []

    # ---------------------------------------------------------------- snapshots
    def rules_digest(self) -> str:
        """What any fold of this campaign depends on besides its facts: the ruleset and its
        version, the effective starting flags and the fact catalogue's versions."""
        return _digest(
            {
                "format": SNAPSHOT_FORMAT,
                "ruleset": self.ruleset.id,
                "version": str(self.ruleset.version),
                "flags": self.base_flags,
                "catalogue": dict(sorted(self.catalogue.versions.items())),
            }
        )

    def fingerprint(self, upto: int | None = None) -> str:
        """What a fold up to ``upto`` (all by default) depends on besides the facts themselves:
        the ruleset and its version, the effective starting flags, the fact catalogue's
        versions and the corrections made by then (each fact, payload included)."""
        limit = self.last_seq if upto is None else upto
        corrections = [
            [e.seq, e.type, e.version, e.payload]
            for e in (self.entry(s) for s in self._corrections if s <= limit)
        ]
        return _digest(
            {
                "ruleset": self.ruleset.id,
                "version": str(self.ruleset.version),
                "flags": self.base_flags,
                "catalogue": dict(sorted(self.catalogue.versions.items())),
                "corrections": corrections,
            }
        )

    def capture(self) -> Capture:
        """The present and the indexes, frozen for a snapshot: cheap (call it under the
        campaign's lock), the expensive part (:meth:`Capture.to_json`) runs on any thread."""
        self._catch_up()
        watermark, self.refolded_from = self.refolded_from, INF
        return Capture(
            ruleset=self.ruleset,
            position=self.last_seq,
            count=len(self.entries),
            last=_entry_digest(self.entries[-1]) if len(self.entries) else "",
            state=self._state.clone(),
            orphans=self._orphans.view(),
            fingerprint=self.fingerprint(),
            pinned=[self._pinned[s] for s in sorted(self._pinned)],
            reach={k: v for k, v in self._reach.items()},
            idempotency={k: list(v) for k, v in self._idempotency.items()},
            correlation={k: list(v) for k, v in self._by_correlation.items()},
            children={k: list(v) for k, v in self._children.items()},
            citations={k: list(v) for k, v in self._citations.items()},
            refolded_from=watermark,
            series={CORRECTED: self._checkpoints.copy(), RECORDED: self._recorded.copy()},
            state_cls=type(self._state),
        )

    # ------------------------------------------------------- persisted checkpoints
    def adopt_stored(self, kind: str, rows: Iterable[tuple[int, int, bool]], load: PointLoader) -> list[int]:
        """Checkpoints the owner persisted, as ``(position, through, full)``: each becomes a
        point of the ``kind`` series (``corrected`` or ``recorded``) rebuilt through ``load``
        when needed. Returns the positions that do not fit (folded under a reading a later
        correction changed, or cut off from their full state) for the owner to delete; rows
        folded under corrections this ledger does not know yet are left alone."""
        series = self._checkpoints if kind == CORRECTED else self._recorded
        series.load = load
        self._loaders[kind] = load
        known = self._corrections[-1] if self._corrections else 0
        every = self.checkpoint_every
        usable: set[int] = set()
        bad: list[int] = []
        for seq, through, full in sorted(rows):
            n = seq - self.first_seq + 1
            if n <= 0 or n % every or n > len(self.entries):
                bad.append(seq)
                continue
            if kind == CORRECTED:
                if through > known:
                    continue
                if not self._reads_alike(seq, through):
                    bad.append(seq)
                    continue
            if not full and (seq - every) not in usable:
                bad.append(seq)
                continue
            usable.add(seq)
            series.add_stored(seq, n, through)
        return bad

    def _reads_alike(self, seq: int, through: int) -> bool:
        """Whether a fold that took the corrections up to position ``through`` into account
        reads every position up to ``seq`` as this ledger does now."""
        lo = bisect.bisect_right(self._corrections, through)
        return all(self.reach(k) > seq for k in self._corrections[lo:])

    def mark_stored(self, kind: str, seqs: set[int] | frozenset[int], keep_recent: int = 8) -> None:
        """The owner persisted these checkpoints (of its last :meth:`capture`): the older ones
        need not stay in memory (but the newest ``keep_recent``). Corrected checkpoints at or
        after a position refolded since that capture are not the ones persisted (the owner
        writes outside the campaign's lock, and a correction may have refolded meanwhile):
        they stay as they are, and the next capture's ``refolded_from`` replaces their rows."""
        if kind == CORRECTED:
            if self.refolded_from < INF:
                seqs = {s for s in seqs if s < self.refolded_from}
            self._checkpoints.mark_stored(seqs, keep_recent)
        else:
            self._recorded.mark_stored(seqs, keep_recent)

    @classmethod
    def restore(
        cls,
        ruleset: Any,
        flags: dict[str, Any] | None,
        data: Mapping[str, Any],
        loader: EntryLoader,
        *,
        first_seq: int = 1,
        window: int = 4096,
        checkpoint_every: int = 128,
        full_every: int = 128,
    ) -> Ledger:
        """A ledger that has folded the facts up to the snapshot's position, reading them
        through ``loader`` when it needs them. Raises :class:`SnapshotMismatch` when the
        snapshot was folded under other rules, flags or corrections, or is malformed."""
        ledger = cls(
            ruleset, flags, first_seq=first_seq, checkpoint_every=checkpoint_every, full_every=full_every
        )
        try:
            if data.get("format") != SNAPSHOT_FORMAT:
                raise SnapshotMismatch(f"snapshot format {data.get('format')!r}")
            if data["ruleset"] != ruleset.id or data["ruleset_version"] != str(ruleset.version):
                folded = f"{data['ruleset']} {data['ruleset_version']}"
                raise SnapshotMismatch(f"folded by {folded}, not {ruleset.id} {ruleset.version}")
            position, count = int(data["position"]), int(data["count"])
            if position != first_seq + count - 1:
                raise SnapshotMismatch("position and count disagree")
            for raw in data["pinned"]:
                e = ledger._upcast(Entry(int(raw[0]), raw[1], int(raw[2]), raw[3], raw[4], raw[5]))
                ledger._pinned[e.seq] = e
                if e.type in INDEXED:
                    ledger._corrections.append(e.seq)
                if e.type == "RulingRecorded":
                    ledger._rulings_recorded[e.payload["ruling_id"]] = e.seq
            for seq in sorted(ledger._pinned):
                e = ledger._pinned[seq]
                if e.type in book.TYPES:
                    ledger.proposals.add(e.seq, e.type, e.payload, e.meta)
            ledger._corrections.sort()
            idx = data["index"]
            ledger._idempotency = {k: [int(s) for s in v] for k, v in idx["idempotency"].items()}
            ledger._by_correlation = {k: [int(s) for s in v] for k, v in idx["correlation"].items()}
            ledger._children = {int(k): [int(s) for s in v] for k, v in idx["children"].items()}
            ledger._citations = {k: [int(s) for s in v] for k, v in idx["citations"].items()}
            ledger._reach = {int(k): int(v) for k, v in idx["reach"].items()}
            ledger.entries.attach(loader, window)
            ledger.entries.skip_to(count)
            if ledger.fingerprint() != data["fingerprint"]:
                raise SnapshotMismatch("fingerprint mismatch: folded under other rules, flags or corrections")
            if count:
                try:
                    last = [ledger._upcast(e) for e in loader(position, position)]
                except MissingFacts:
                    last = []
                if len(last) != 1 or last[0].seq != position or _entry_digest(last[0]) != data["last"]:
                    raise SnapshotMismatch(
                        f"the store does not hold the fact at {position} the snapshot folded"
                    )
            ledger._res = ledger._resolve([ledger._pinned[s] for s in ledger._corrections])
            ledger._res_n = len(ledger._corrections)
            state = ruleset.load_state(data["state"])
            orphans = OrphanLog((int(s), str(r)) for s, r in data["orphans"])
        except SnapshotMismatch:
            raise
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            IndexError,
            AssertionError,
            DomainError,
        ) as exc:
            raise SnapshotMismatch(f"malformed snapshot: {type(exc).__name__}: {exc}") from None
        ledger._state, ledger._orphans, ledger._folded = state, orphans, count
        ledger._tip = None
        ledger.refolded_from = INF
        return ledger


@dataclass
class Points:
    """A ledger's two checkpoint series, frozen to be persisted (the part of a :class:`Capture`
    that ``point_rows`` writes)."""

    ruleset: Any
    refolded_from: int  # earliest position refolded since the previous capture (INF: none)
    series: dict[str, Series]
    state_cls: type

    def full_rhythm(self, series: Series) -> int:
        """How many checkpoints a stored full state covers (itself and the deltas after it): about
        as many as it takes for the deltas to weigh what a full state does, so rebuilding a stored
        checkpoint decodes at most about two full states' worth of rows, whatever the campaign's
        size. Weights are counted in creatures and encounters (what the rows hold): the state now
        (a :class:`Capture`'s present) against the deltas the series holds in memory
        (``FULL_ROWS_DELTA`` each when it holds none). A power of two between ``FULL_ROWS_MIN``
        and ``FULL_ROWS_MAX``, so a longer rhythm (a grown campaign) keeps the full rows a
        shorter one put down."""
        state = getattr(self, "state", None)  # a Capture's present
        if state is None:
            return FULL_ROWS_MAX
        full = len(getattr(state, "creatures", ())) + len(getattr(state, "encounters", ())) + 1
        deltas = [p.delta for p in series.points if p is not None and type(p.delta) is Delta]
        each = (
            sum(len(d.creatures) + len(d.encounters) + 1 for d in deltas) / len(deltas)
            if deltas
            else FULL_ROWS_DELTA
        )
        rhythm = FULL_ROWS_MIN
        while rhythm * 2 <= min(full / each, FULL_ROWS_MAX):
            rhythm *= 2
        return rhythm

    def point_rows(
        self,
        kind: str,
        have: set[int],
        full_every: int | None = None,
        dump: Callable[[Any], Any] | None = None,
    ) -> Iterator[tuple[int, int, bool, dict[str, Any]]]:
        """The checkpoints of the ``kind`` series still to persist, oldest first, as
        ``(position, through, full, data)``: a delta from the one before when that one is
        persisted (``have``: positions persisted, updated as rows are produced), else the full
        state, and a full state every ``full_every`` checkpoints (rebuilding one reads the full
        state before it and the deltas after it; by default :meth:`full_rhythm`). ``have`` must
        not hold positions whose reading changed (see ``refolded_from``). A checkpoint the
        ledger knows only from storage is persisted already (by this process or another): never
        written again. ``dump`` writes a full state (default: the ruleset's ``dump_state``; the
        snapshot writer's streams it)."""
        series = self.series[kind]
        if full_every is None:
            full_every = self.full_rhythm(series)
        dump_part = self.ruleset.dump_state
        dump_whole = dump or dump_part
        points = series.points
        for j, p in enumerate(points):
            if p is None or p.seq in have:
                continue
            if p.stored and p.delta is None and p.full is None:
                have.add(p.seq)
                continue
            pred = points[j - 1] if j > 0 else None
            chained = (
                p.delta is not None
                and pred is not None
                and pred.seq in have
                and pred.orphans is not None
                and p.orphans is not None
            )
            if chained and (j + 1) % full_every:
                d = unspilled(p.delta)
                assert (
                    d is not None and pred is not None and p.orphans is not None and pred.orphans is not None
                )
                keep, added = orphan_delta(pred.orphans, p.orphans)
                data: dict[str, Any] = {
                    "state": dump_part(partial_state(self.state_cls, d)),
                    "gone": list(d.gone),
                    "gone_encounters": list(d.gone_encounters),
                    "orphans": {"keep": keep, "add": [[s, r] for s, r in added]},
                }
                full = False
            else:
                if not series._restorable(j):
                    continue
                _, state, orphans = series.restore(j)
                data = {"state": dump_whole(state), "orphans": [[s, r] for s, r in orphans.pairs()]}
                full = True
            have.add(p.seq)
            yield p.seq, p.through, full, data


@dataclass
class Capture(Points):
    """A frozen copy of a ledger's present and indexes (see :meth:`Ledger.capture`)."""

    position: int
    count: int
    last: str  # digest of the fact at ``position``: the store must still hold that very fact
    state: Any
    orphans: Orphans
    fingerprint: str
    pinned: list[Entry]
    reach: dict[int, int]
    idempotency: dict[str, list[int]]
    correlation: dict[str, list[int]]
    children: dict[int, list[int]]
    citations: dict[str, list[int]]

    def to_json(self, dump: Callable[[Any], Any] | None = None) -> dict[str, Any]:
        """The snapshot as JSON data (``Ledger.restore`` reads it back); ``dump`` writes the
        state (default: the ruleset's ``dump_state``)."""
        return {
            "format": SNAPSHOT_FORMAT,
            "ruleset": self.ruleset.id,
            "ruleset_version": str(self.ruleset.version),
            "position": self.position,
            "count": self.count,
            "last": self.last,
            "fingerprint": self.fingerprint,
            "state": (dump or self.ruleset.dump_state)(self.state),
            "orphans": [[s, r] for s, r in self.orphans.pairs()],
            "pinned": [[e.seq, e.type, e.version, e.payload, e.meta, e.timestamp] for e in self.pinned],
            "index": {
                "idempotency": self.idempotency,
                "correlation": self.correlation,
                "children": {str(k): v for k, v in self.children.items()},
                "citations": self.citations,
                "reach": {str(k): v for k, v in self.reach.items()},
            },
        }


def _same_resolution(a: Resolution, b: Resolution) -> bool:
    return (
        a.revoked == b.revoked
        and a.amended == b.amended
        and a.amended_by == b.amended_by
        and a.ruling_values == b.ruling_values
        and a.ruling_status == b.ruling_status
        and a.overrides == b.overrides
        and a.retro_flags == b.retro_flags
        and a.through == b.through
    )


def _digest(value: Any) -> str:
    body = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _upcast(catalogue: Any, entry: Entry) -> Entry:
    entry.payload = catalogue.upcast(entry.type, entry.version, entry.payload)
    return entry


def _restored(series: Series, j: int) -> tuple[Point, Any, Orphans] | None:
    """A checkpoint rebuilt, or None (and forgotten) when its storage cannot give it back."""
    try:
        return series.restore(j)
    except (LookupError, ValueError):
        series.forget(j)
        return None


def _unindex(index: dict[Any, list[int]], key: Any, seq: int) -> None:
    """Take ``seq`` (the newest position indexed) out of ``index[key]``."""
    if key is None or key == "":
        return
    seqs = index.get(key)
    if seqs and seqs[-1] == seq:
        seqs.pop()
        if not seqs:
            del index[key]


def _entry_digest(e: Entry) -> str:
    return _digest([e.seq, e.type, e.version, e.payload, e.meta])


def _always(_: int) -> bool:
    return True


def _with_rulings(payload: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    out = dict(payload)
    for field_name, rid in payload["rulings"].items():
        if rid in values:
            out[field_name] = values[rid]
    return out


def _cited_rulings(payload: dict[str, Any]) -> list[str]:
    """Ruling ids a payload relies on: its top-level ``rulings`` map (field -> ruling id), and
    every object anywhere in the payload that cites one with a ``ruling`` key (a modifier, an
    attack circumstance...). Ruleset-neutral: which of those a ruleset honours is its business;
    indexing one it ignores only makes a refold start a little earlier."""
    found = list(payload["rulings"].values()) if isinstance(payload.get("rulings"), dict) else []
    stack: list[Any] = [v for k, v in payload.items() if k != "rulings"]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("ruling"), str):
                found.append(item["ruling"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
