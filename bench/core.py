"""The benchmark harness: figures, the run context, budgets, timing helpers, the results table.

Every figure is a value against a floor measured in the same run (the machine is shared and
noisy, so ratios are what to read). A figure whose measurement ran out of its time or memory
budget is reported as ``MISS (> budget)`` with the bound it reached (``> 90 s``), never waited
for. Nothing here asserts on time.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.campaigns import CACHE

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/chronicle_test"
STORES = ("postgresql", "sqlite")
SIZES = (10_000, 100_000, 300_000)
# Sizes each store runs by default: 300k on PostgreSQL only (SQLite 300k: --store sqlite --size 300k).
DEFAULT_MATRIX = {"postgresql": SIZES, "sqlite": (10_000, 100_000)}


class OverBudget(Exception):
    """A measurement ran out of its time or memory budget. ``bound`` is what it had reached."""

    def __init__(self, what: str, bound: float | None = None, partial: dict[str, Any] | None = None) -> None:
        super().__init__(what)
        self.what = what  # "120 s" or "6144 MB"
        self.bound = bound
        self.partial = partial or {}


@dataclass
class Figure:
    """One measured figure against its floor.

    ``ratio`` is ``value / floor`` in the figure's unit, except for rates where the goal reads
    "at least this fraction of the floor" (then it is still value / floor: facts/s over facts/s).
    ``goal`` is checked against the ratio (``">= 0.5"``, ``"<= 1.5"``) or, with
    ``goal_on="value"``, against the value itself (``"< 50"`` MB). ``budget`` is set when the
    measurement ran out of its budget: then ``value`` is the bound it reached (``bound`` says
    which side: ``">"`` for a time or a size, ``"<"`` for a rate) and the verdict is MISS.
    """

    id: str
    name: str
    value: float | None
    floor: float | None
    unit: str
    floor_name: str
    ratio: float | None = None
    goal: str | None = None
    goal_on: str = "ratio"
    store: str = "-"
    size: int | None = None
    budget: str | None = None
    bound: str = ""
    passed: bool | None = None
    samples: int = 1
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.ratio is None and self.value is not None and self.floor:
            self.ratio = self.value / self.floor
        if self.budget is not None:
            self.passed = False  # over budget is a miss, goal or not: it was not measured to the end
            return
        if self.goal is None:
            return
        x = self.ratio if self.goal_on == "ratio" else self.value
        if x is None or not math.isfinite(x):
            self.passed = None
            return
        op, _, b = self.goal.partition(" ")
        bound = float(b)
        self.passed = {">=": x >= bound, "<=": x <= bound, "<": x < bound, ">": x > bound}[op]

    @property
    def verdict(self) -> str:
        if self.budget is not None:
            return f"MISS (> budget {self.budget})"
        return "-" if self.passed is None else ("PASS" if self.passed else "MISS")

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for k in ("value", "floor", "ratio"):
            out[k] = finite(out[k])
        out["verdict"] = self.verdict
        return out


def finite(x: Any) -> float | None:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


@dataclass
class Budgets:
    """Per-measurement limits: one request (a mutation, a query, a revoke; a fresh server's
    first answer gets three full folds if that is longer); one phase of
    requests (each client count, each query kind: it stops sending when this runs out); a
    process (rebuild, import, export; the fold floor this plus 1 ms a fact per sample, the live
    worker this plus 1.5 full folds, since it must load the campaign first); the memory of any process the
    bench starts (watched from outside, killed past it). Budgets are set well above what the
    goals allow, so running out of one is a MISS whatever the figure would have been."""

    request_s: float = 60.0
    phase_s: float = 25.0
    process_s: float = 60.0
    memory_mb: int = 6144

    @classmethod
    def smoke(cls) -> Budgets:
        return cls(request_s=30.0, phase_s=40.0, process_s=60.0, memory_mb=2048)


@dataclass
class Plan:
    """What one invocation measures: (store, size) cells, the per-request baseline size, and
    how many requests each phase sends."""

    cells: list[tuple[str, int]]
    baseline: int = 1_000  # the "same request on a 1k campaign" every per-request ratio is against
    mutations_1: int = 60  # mutations with 1 client (per sample)
    mutations_20: int = 100  # mutations from 20 clients
    writers_50: int = 100  # mutations from 50 writers (2 each)
    replica_clients: int = 20  # R2: clients, half on each of two servers
    replica_mutations: int = 200  # R2: mutations per phase (one campaign, two campaigns)
    queries: int = 30  # of each query kind
    as_of_positions: int = 5
    follow_facts: int = 60  # facts the live follower is timed on, one per batch (per-fact latency)
    live_seconds: float = 20.0  # seconds the writers write while the worker follows
    live_tables: int = 100  # active tables of the "live worker with 100 active tables" figure
    subscribers: int = 200
    sub_rounds: int = 10
    smoke: bool = False

    @classmethod
    def smoke_plan(cls, stores: tuple[str, ...]) -> Plan:
        return cls(
            cells=[(s, 600) for s in stores],
            baseline=150,
            mutations_1=12,
            mutations_20=20,
            writers_50=50,
            replica_clients=4,
            replica_mutations=20,
            queries=5,
            as_of_positions=2,
            follow_facts=30,
            live_seconds=4.0,
            live_tables=8,
            subscribers=5,
            sub_rounds=2,
            smoke=True,
        )


@dataclass
class Context:
    plan: Plan
    budgets: Budgets
    repeat: int | None = None  # None: 3 (1 in a smoke run), the same at every size
    seed: int = 1
    database_url: str = DEFAULT_DATABASE_URL
    cache_dir: Path = CACHE
    only: frozenset[str] = frozenset()
    import_mode: str = "validated"  # bench.work load: as `chronicle import` ("validated") or "plain"
    began: float = field(default_factory=time.monotonic)

    def log(self, msg: str) -> None:
        """Progress on stderr, with the minutes:seconds since the run began."""
        m, s = divmod(int(time.monotonic() - self.began), 60)
        print(f"{m:3d}:{s:02d} {msg}", file=sys.stderr, flush=True)

    @property
    def smoke(self) -> bool:
        return self.plan.smoke

    def repeats(self, size: int) -> int:
        if self.repeat is not None:
            return self.repeat
        # The same number of samples at every size: the flatness figure (P2) compares sizes, and
        # a median of 3 warm samples against one first sample (as until 2026-12-07, from 100k)
        # favoured the smaller campaign.
        return 1 if self.smoke else 3

    def wants(self, *ids: str) -> bool:
        return not self.only or any(i in self.only for i in ids)


# ---------------------------------------------------------------------------- timing
def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    out = fn()
    return time.perf_counter() - began, out


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def parse_size(text: str) -> int:
    """``10k`` -> 10000, ``1.5m`` -> 1500000, ``600`` -> 600."""
    t = text.strip().lower().replace("_", "").replace(",", "")
    mult = {"k": 1_000, "m": 1_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if mult > 1 else t) * mult)


def size_label(n: int) -> str:
    if n >= 1_000 and n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)


# ---------------------------------------------------------------------------- table
def fmt(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 0.1:
        return f"{x:.3f}"
    return f"{x:.2g}"


def table(figures: list[Figure]) -> str:
    rows = [("id", "store", "size", "figure", "value", "floor", "unit", "ratio", "goal", "result")]
    for f in figures:
        goal = "" if f.goal is None else (f"{f.goal}x" if f.goal_on == "ratio" else f"{f.goal} {f.unit}")
        ratio = "n/a" if f.ratio is None else f"{f.bound}{f.ratio:.3g}x"
        rows.append(
            (
                f.id,
                {"postgresql": "pg", "sqlite": "sqlite"}.get(f.store, f.store),
                "-" if f.size is None else size_label(f.size),
                f.name,
                f"{f.bound}{fmt(f.value)}",
                fmt(f.floor),
                f.unit,
                ratio,
                goal,
                f.verdict,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    left = {0, 1, 3, 6, 8, 9}
    lines = []
    for k, r in enumerate(rows):
        lines.append(
            "  ".join(
                c.ljust(w) if i in left else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
