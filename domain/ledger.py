"""The ledger: a campaign's facts, its corrections, and the one fold.

Ruleset-neutral. It keeps every fact in position order and derives:

* the *resolution* of all corrections: which facts are revoked (with their
  cascades), the effective (amended) inputs of each fact, the current value
  of each ruling, the GM's overrides and retroactive rules flags;
* the state, by folding the surviving facts in order through the ruleset.
  A fact whose preconditions no longer hold is *orphaned*: skipped, listed
  with its reason, never silently changed.

Corrections never rewrite anything: each is a new fact. When one arrives the
ledger works out the earliest position whose treatment changed and refolds
from the nearest checkpoint before it, so a correction near the end of a long
campaign costs little. The same checkpoints serve *as-of* queries, in both
time axes: ``corrected`` (what we now know) and ``recorded`` (what the table
believed at that position, i.e. with only the corrections made by then).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from domain.core.catalogue import META_TYPES, merge_patch
from domain.errors import DomainError, InvalidInput, NotFound, RuleViolation

INF = 1 << 62
CORRECTED = "corrected"
RECORDED = "recorded"

# Correction facts: they change how earlier facts are read.
REVOCATIONS = frozenset({"FactRevoked", "FactRestored"})
NOT_AMENDABLE = frozenset({"FactRevoked", "FactRestored", "FactAmended"})


@dataclass(slots=True)
class Entry:
    """One stored fact at its position (``seq``) in the campaign."""

    seq: int
    type: str
    version: int
    payload: dict[str, Any]
    meta: dict[str, Any]
    timestamp: str = ""


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


class Ledger:
    """All facts of one campaign and the state they fold to."""

    def __init__(
        self,
        ruleset: Any,
        flags: dict[str, Any] | None = None,
        *,
        first_seq: int = 1,
        checkpoint_every: int = 256,
    ) -> None:
        self.ruleset = ruleset
        self.catalogue = ruleset.catalogue
        self.base_flags: dict[str, Any] = dict(ruleset.flag_defaults)
        for name, value in (flags or {}).items():
            self.base_flags[name] = ruleset.validate_flag(name, value)
        self.first_seq = first_seq
        self.checkpoint_every = checkpoint_every
        self.entries: list[Entry] = []
        # indexes
        self._by_correlation: dict[str, list[int]] = {}
        self._children: dict[int, list[int]] = {}
        self._citations: dict[str, list[int]] = {}
        self._rulings_recorded: dict[str, int] = {}
        self._corrections: list[int] = []  # seqs of meta facts that reinterpret others
        self._amend_cache: dict[tuple[int, tuple[int, ...]], dict[str, Any]] = {}
        self._idempotency: dict[str, list[int]] = {}
        # folded state (corrected axis)
        self._res = Resolution()
        self._state: Any = None
        self._orphans: dict[int, str] = {}
        self._folded = 0  # number of entries folded into _state
        self._checkpoints: list[tuple[int, int, Any, dict[int, str]]] = []  # (seq, n entries, state, orphans)
        self._dirty_corrections = False
        self._prepared: tuple[int, Any, dict[int, str], Resolution, list[Any]] | None = None
        # True once the present state object was handed out (``state``): the ledger then never
        # changes that object again, it folds on a copy-on-write clone instead.
        self._lent = False
        self._reset_state()

    # ------------------------------------------------------------------ basics
    @property
    def last_seq(self) -> int:
        return self.entries[-1].seq if self.entries else self.first_seq - 1

    @property
    def next_seq(self) -> int:
        return self.last_seq + 1

    def entry(self, seq: int) -> Entry:
        i = seq - self.first_seq
        if 0 <= i < len(self.entries):
            e = self.entries[i]
            if e.seq == seq:
                return e
        raise NotFound(f"no fact at position {seq}", field="target")

    def has(self, seq: int) -> bool:
        i = seq - self.first_seq
        return 0 <= i < len(self.entries)

    def _reset_state(self) -> None:
        self._state = self.ruleset.initial_state({**self.base_flags, **self._res.retro_flags})
        self._orphans = {}
        self._folded = 0
        self._checkpoints = []

    # ---------------------------------------------------------------- appending
    def append(self, entry: Entry) -> None:
        """Add a stored fact. Folding is lazy: it happens on the next read."""
        if entry.seq != self.next_seq:
            raise AssertionError(f"fact at {entry.seq} appended after {self.last_seq}")
        entry.payload = self.catalogue.upcast(entry.type, entry.version, entry.payload)
        self.entries.append(entry)
        self._index(entry)
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0] == entry.seq and self._folded == len(self.entries) - 1:
            _, state, orphans, res, checkpoints = prepared
            self._adopt(state, orphans, res, checkpoints)
            return
        # A recorded ruling changes the resolution too (its value is read by the facts citing it).
        if entry.type in META_TYPES and (self._reinterprets(entry) or entry.type == "RulingRecorded"):
            self._dirty_corrections = True

    def _adopt(self, state: Any, orphans: dict[int, str], res: Resolution, checkpoints: list[Any]) -> None:
        self._state, self._orphans, self._res, self._checkpoints = state, orphans, res, checkpoints
        self._folded = len(self.entries)
        self._dirty_corrections = False
        self._maybe_checkpoint()

    def _reinterprets(self, entry: Entry) -> bool:
        t = entry.type
        return (
            t in REVOCATIONS
            or t in {"FactAmended", "RulingResolved", "OutcomeOverridden"}
            or (t == "RulesFlagSet" and bool(entry.payload.get("retroactive")))
        )

    def _index(self, entry: Entry) -> None:
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
        for rid in _cited_rulings(entry.payload):
            self._citations.setdefault(rid, []).append(entry.seq)
        if entry.type == "RulingRecorded":
            self._rulings_recorded[entry.payload["ruling_id"]] = entry.seq
        if self._reinterprets(entry) or entry.type in {"RulingRecorded", "RulingContested", "RulesFlagSet"}:
            self._corrections.append(entry.seq)

    # ---------------------------------------------------------------- resolving
    def resolve(self, upto: int | None = None, extra: Iterable[Entry] = ()) -> Resolution:
        """Resolve the corrections made up to position ``upto`` (all by default)."""
        limit = INF if upto is None else upto
        seqs = [s for s in self._corrections if s <= limit]
        entries = [self.entry(s) for s in seqs] + list(extra)
        res = Resolution()
        # 1. Revocations, latest first: a revocation (or restore) that is itself
        #    revoked has no effect, and only later facts can revoke earlier ones.
        inactive: set[int] = set()
        for e in reversed(entries):
            if e.type not in REVOCATIONS or e.seq in inactive or e.seq in res.revoked:
                continue
            if e.type == "FactRevoked":
                for s in self.cascade(e.payload["target"], e.payload["cascade"], before=e.seq):
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
                base = res.amended.get(target, self.entry(target).payload if self.has(target) else {})
                res.amended_by.setdefault(target, []).append(e.seq)
                res.amended[target] = self._amended(target, base, p["patch"], tuple(res.amended_by[target]))
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

    def _amended(self, target: int, base: dict[str, Any], patch: Any, key: tuple[int, ...]) -> dict[str, Any]:
        """The effective payload after a chain of amendments, normalised (cached per chain)."""
        cached = self._amend_cache.get((target, key))
        if cached is None:
            merged = merge_patch(base, patch)
            try:
                cached = self.catalogue.validate(self.entry(target).type, merged)
            except DomainError:
                cached = merged  # checked when the amendment was recorded; keep what it says
            self._amend_cache[(target, key)] = cached
        return cached

    def _payload(self, seq: int, res: Resolution) -> dict[str, Any]:
        return res.amended.get(seq) or self.entry(seq).payload

    def cascade(self, target: int, mode: str, *, before: int = INF) -> list[int]:
        """The facts a revocation of ``target`` takes with it."""
        result = [target]
        if mode == "action":
            corr = self.entry(target).meta.get("correlation_id")
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
        for s in set(old.revoked).symmetric_difference(new.revoked):
            first = min(first, s)
        for s in set(old.amended) | set(new.amended):
            if old.amended.get(s) != new.amended.get(s):
                first = min(first, s)
                if self.has(s) and self.entry(s).type == "RulingRecorded":
                    rid = self.entry(s).payload["ruling_id"]
                    first = min([first, *self._citations.get(rid, [])])
        for rid in set(old.ruling_values) | set(new.ruling_values):
            if old.ruling_values.get(rid) != new.ruling_values.get(rid):
                first = min([first, *self._citations.get(rid, [])])
        for s in set(old.overrides) | set(new.overrides):
            if old.overrides.get(s) != new.overrides.get(s):
                first = min(first, s)
        return first

    # ------------------------------------------------------------------ folding
    def _fold(
        self,
        state: Any,
        orphans: dict[int, str],
        start: int,
        stop: int,
        res: Resolution,
        *,
        checkpoints: list[Any] | None = None,
        sink: Sink | None = None,
    ) -> None:
        """Fold entries[start:stop] into ``state`` (in place)."""
        apply = self.ruleset.apply
        meta_types = META_TYPES
        revoked, amended, overrides = res.revoked, res.amended, res.overrides
        ctx = _Ctx(res.ruling_values)
        every = self.checkpoint_every
        entries = self.entries
        for i in range(start, stop):
            e = entries[i]
            s = e.seq
            if s in revoked:
                if sink:
                    sink(e, None, None)
            elif e.type in meta_types:
                if e.type == "RulesFlagSet":
                    p = amended.get(s, e.payload)
                    if not p.get("retroactive"):
                        state.flags[p["flag"]] = p["value"]
                if sink:
                    sink(e, None, None)
            else:
                payload = amended.get(s, e.payload)
                if "rulings" in payload:
                    payload = _with_rulings(payload, res.ruling_values)
                ctx.seq = s
                ctx.meta = e.meta
                ctx.overrides = overrides.get(s, _EMPTY)
                ctx.waived = ctx.overrides.get("orphan") == "keep"
                try:
                    outcome = apply(state, e.type, payload, ctx)
                except DomainError as err:
                    orphans[s] = err.message
                    if sink:
                        sink(e, None, err.message)
                else:
                    if sink:
                        sink(e, outcome, None)
            if checkpoints is not None and (i + 1) % every == 0:
                checkpoints.append((s, i + 1, state.clone(), dict(orphans)))

    def _start_point(self, before_seq: int, upto_index: int | None = None) -> tuple[int, Any, dict[int, str]]:
        """The latest checkpoint strictly before ``before_seq`` (cloned)."""
        keys = [c[0] for c in self._checkpoints]
        k = bisect.bisect_left(keys, before_seq) - 1
        while k >= 0:
            seq, n, state, orphans = self._checkpoints[k]
            if upto_index is None or n <= upto_index:
                return n, state.clone(), dict(orphans)
            k -= 1
        return 0, self.ruleset.initial_state({**self.base_flags, **self._res.retro_flags}), {}

    def _catch_up(self) -> None:
        if self._dirty_corrections:
            new = self.resolve()
            first = self._first_difference(self._res, new)
            if new.retro_flags != self._res.retro_flags:
                self._res = new
                self._reset_state()
            else:
                self._res = new
                if first < INF and first <= self.entries[self._folded - 1].seq if self._folded else False:
                    keys = [c[0] for c in self._checkpoints]
                    k = bisect.bisect_left(keys, first)
                    del self._checkpoints[k:]
                    n, state, orphans = self._start_point(first)
                    self._state, self._orphans, self._folded = state, orphans, n
            self._dirty_corrections = False
        if self._folded < len(self.entries):
            self._fold_forward()

    def _own_state(self) -> None:
        """Before folding into the present in place: if it was handed out, fold into a clone."""
        if self._lent:
            self._state, self._orphans, self._lent = self._state.clone(), dict(self._orphans), False

    def _fold_forward(self) -> None:
        self._own_state()
        start = self._folded
        self._fold(
            self._state, self._orphans, start, len(self.entries), self._res, checkpoints=self._checkpoints
        )
        self._folded = len(self.entries)

    def _maybe_checkpoint(self) -> None:
        n = len(self.entries)
        if n % self.checkpoint_every == 0 and (not self._checkpoints or self._checkpoints[-1][1] < n):
            self._checkpoints.append((self.entries[-1].seq, n, self._state.clone(), dict(self._orphans)))

    def refold(self, sink: StateSink) -> int:
        """Fold the facts appended since the last read, telling ``sink`` how every fact reads
        whose reading may have changed: the new facts and, after a correction, every fact from
        the earliest one it affects (its outcome, status or annotation). Used by projections to
        re-derive their rows from the fold. Returns that earliest position (``next_seq`` when
        nothing was folded).

        ``sink(entry, outcome, orphan_reason, state)`` sees the live state just after the fact:
        read it at once, never keep or change it.
        """
        first_new = self.entries[self._folded].seq if self._folded < len(self.entries) else self.next_seq
        start, old, reset = first_new, self._res, False
        if self._dirty_corrections:
            new = self.resolve()
            start = min(start, self._first_difference(old, new))
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
            self._res, self._dirty_corrections = new, False
        if start > self.last_seq:
            return start
        if reset:
            self._reset_state()
            n, state, orphans = 0, self._state, self._orphans
        elif start >= first_new:
            self._own_state()
            n, state, orphans = self._folded, self._state, self._orphans
        else:
            keys = [c[0] for c in self._checkpoints]
            del self._checkpoints[bisect.bisect_left(keys, start) :]
            n, state, orphans = self._start_point(start)

        def report(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
            if e.seq >= start:
                sink(e, outcome, orphan, state)

        stop = len(self.entries)
        self._fold(state, orphans, n, stop, self._res, checkpoints=self._checkpoints, sink=report)
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

    @property
    def orphans(self) -> dict[int, str]:
        self._catch_up()
        return dict(self._orphans)

    @property
    def resolution(self) -> Resolution:
        self._catch_up()
        return self._res

    def state_at(self, position: int, view: str = CORRECTED) -> tuple[Any, dict[int, str]]:
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
            res, first_diff = self._res, INF
        elif view == RECORDED:
            res = self.resolve(upto=position)
            first_diff = self._first_difference(res, self._res)
        else:
            raise InvalidInput(f"unknown view {view!r}: use corrected or recorded", field="view")
        if res.retro_flags != self._res.retro_flags:
            start, state = 0, self.ruleset.initial_state({**self.base_flags, **res.retro_flags})
            orphans: dict[int, str] = {}
        else:
            start, state, orphans = self._start_point(min(first_diff, position + 1), upto_index=stop)
        self._fold(state, orphans, start, stop, res)
        return state, orphans

    def replay(self, sink: Sink, *, upto: int | None = None, view: str = CORRECTED) -> Any:
        """Fold from the start, telling ``sink`` each fact's outcome (for logs and exports)."""
        self._catch_up()
        stop = len(self.entries) if upto is None else max(0, upto - self.first_seq + 1)
        res = self._res if view == CORRECTED else self.resolve(upto=upto)
        state = self.ruleset.initial_state({**self.base_flags, **res.retro_flags})
        orphans: dict[int, str] = {}
        self._fold(state, orphans, 0, stop, res, sink=sink)
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
        state = self.ruleset.initial_state({**self.base_flags, **res.retro_flags})
        orphans: dict[int, str] = {}
        found: list[tuple[Entry, dict[str, Any] | None, str | None]] = []
        for i in range(stop):
            self._fold(state, orphans, i, i + 1, res, sink=lambda e, o, r: found.append((e, o, r)))
            entry, outcome, orphan = found.pop()
            yield entry, outcome, orphan, state

    # ----------------------------------------------------------------- commands
    def prepare(self, fact_type: str, payload: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        """Check a new fact against the present; return its outcome without storing it.

        Raises a typed DomainError (nothing changes) if the fact is refused. The
        work done here is adopted by the following ``append`` of the same fact.
        """
        self._catch_up()
        entry = Entry(self.next_seq, fact_type, self.catalogue.version(fact_type), payload, meta)
        if fact_type in META_TYPES:
            self.check_reference(entry)
            res = (
                self.resolve(extra=[entry])
                if self._reinterprets(entry) or fact_type in {"RulingRecorded", "RulingContested"}
                else self._res
            )
            state, orphans, checkpoints = self._refold_with(res, extra=entry)
            before = set(self._orphans)
            outcome = {
                "orphaned": sorted(set(orphans) - before),
                "no_longer_orphaned": sorted(before - set(orphans)),
            }
        else:
            state = self._state.clone()
            ctx = _Ctx(self._res.ruling_values)
            ctx.seq, ctx.meta = entry.seq, meta
            if "rulings" in payload:
                self._check_citations(payload)
                payload = _with_rulings(payload, self._res.ruling_values)
            for rid in _cited_rulings(payload):
                if rid not in self._res.ruling_status:
                    raise NotFound(f"no ruling {rid!r} has been recorded", field="ruling")
            outcome = self.ruleset.apply(state, fact_type, payload, ctx)
            orphans, res, checkpoints = dict(self._orphans), self._res, list(self._checkpoints)
        self._prepared = (entry.seq, state, orphans, res, checkpoints)
        return outcome

    def _check_citations(self, payload: dict[str, Any]) -> None:
        for rid in payload.get("rulings", {}).values():
            if rid not in self._res.ruling_status:
                raise NotFound(f"no ruling {rid!r} has been recorded", field="rulings")

    def _refold_with(
        self, res: Resolution, extra: Entry | None = None
    ) -> tuple[Any, dict[int, str], list[Any]]:
        """The present under another resolution, without touching the ledger."""
        if res is self._res:
            state, orphans, checkpoints = self._state.clone(), dict(self._orphans), list(self._checkpoints)
        elif res.retro_flags != self._res.retro_flags:
            state = self.ruleset.initial_state({**self.base_flags, **res.retro_flags})
            orphans, checkpoints = {}, []
            self._fold(state, orphans, 0, len(self.entries), res, checkpoints=checkpoints)
        else:
            first = self._first_difference(self._res, res)
            if first > self.last_seq:
                state, orphans, checkpoints = (
                    self._state.clone(),
                    dict(self._orphans),
                    list(self._checkpoints),
                )
            else:
                keys = [c[0] for c in self._checkpoints]
                checkpoints = self._checkpoints[: bisect.bisect_left(keys, first)]
                n, state, orphans = self._start_point(first)
                self._fold(state, orphans, n, len(self.entries), res, checkpoints=checkpoints)
        if extra is not None and extra.type == "RulesFlagSet" and not extra.payload.get("retroactive"):
            state.flags[extra.payload["flag"]] = extra.payload["value"]
        return state, orphans, checkpoints

    def check_reference(self, entry: Entry) -> None:
        """Refuse a correction that points at nothing sensible."""
        p, t = entry.payload, entry.type
        res = self._res
        if t == "FactRevoked":
            target = self.entry(p["target"])
            if target.seq in res.revoked:
                raise RuleViolation(
                    f"fact {target.seq} is already revoked", field="target", code="ALREADY_REVOKED"
                )
        elif t == "FactRestored":
            rev = self.entry(p["revocation"])
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
            target = self.entry(p["target"])
            if target.type in NOT_AMENDABLE:
                raise InvalidInput(f"a {target.type} cannot be amended; revoke it instead", field="target")
            if target.seq in res.revoked:
                raise RuleViolation(
                    f"fact {target.seq} is revoked; restore it first", field="target", code="ALREADY_REVOKED"
                )
            current = res.amended.get(target.seq, target.payload)
            self.catalogue.validate(target.type, merge_patch(current, p["patch"]))
        elif t == "OutcomeOverridden":
            target = self.entry(p["target"])
            if target.type in META_TYPES:
                raise InvalidInput(f"a {target.type} has no derived outcome to override", field="target")
        elif t == "RulingRecorded":
            if p["ruling_id"] in self._rulings_recorded:
                raise InvalidInput(f"ruling {p['ruling_id']!r} already exists", field="ruling_id")
        elif t in ("RulingContested", "RulingResolved"):
            if p["ruling_id"] not in res.ruling_status:
                raise NotFound(f"no ruling {p['ruling_id']!r} has been recorded", field="ruling_id")
        elif t == "RulesFlagSet":
            p["value"] = self.ruleset.validate_flag(p["flag"], p["value"])

    def what_if(self, proposals: list[tuple[str, dict[str, Any]]]) -> tuple[Any, dict[int, str]]:
        """Fold the present as it would be after the proposed corrections. Stores nothing."""
        self._catch_up()
        extra: list[Entry] = []
        for offset, (fact_type, payload) in enumerate(proposals):
            if fact_type not in META_TYPES or fact_type in {"NoteAdded", "DiceRolled"}:
                raise InvalidInput(f"{fact_type} is not a correction", field="corrections")
            payload = self.catalogue.validate(fact_type, payload)
            e = Entry(self.next_seq + offset, fact_type, 1, payload, {})
            self.check_reference(e)
            extra.append(e)
        res = self.resolve(extra=extra)
        state, orphans, _ = self._refold_with(res)
        for e in extra:
            if e.type == "RulesFlagSet" and not e.payload.get("retroactive"):
                state.flags[e.payload["flag"]] = e.payload["value"]
        return state, orphans

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
        if seq in self._orphans:
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
        if view == CORRECTED:
            res = self._res
            n, state, orphans = self._start_point(start)
            self._fold(state, orphans, n, i0, res)
        elif view == RECORDED:
            state, orphans = self.state_at(start - 1, RECORDED)
            res = self.resolve(upto=start - 1)
        else:
            raise InvalidInput(f"unknown view {view!r}: use corrected or recorded", field="view")
        got: list[tuple[dict[str, Any] | None, str | None]] = []

        def sink(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
            got.append((outcome, orphan))

        for i in range(i0, stop - self.first_seq + 1):
            e = self.entries[i]
            if (
                view == RECORDED
                and e.type in META_TYPES
                and (self._reinterprets(e) or e.type in ("RulingRecorded", "RulingContested"))
            ):
                # a correction changes what the table believed from here on
                state, orphans = self.state_at(e.seq, RECORDED)
                res = self.resolve(upto=e.seq)
                yield e, None, None, state
                continue
            got.clear()
            self._fold(state, orphans, i, i + 1, res, sink=sink)
            outcome, orphan = got[0] if got else (None, None)
            yield e, outcome, orphan, state

    def payload_as_read(self, seq: int) -> dict[str, Any]:
        """A fact's effective (amended) payload under the resolution being folded now: safe to call
        from a fold's sink (it does not catch up)."""
        return self._payload(seq, self._res)

    def effective_payload(self, seq: int) -> dict[str, Any]:
        return self._payload(seq, self.resolution)


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
