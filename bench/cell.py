"""One (store, size) cell of the benchmark: a loaded store and the floors its figures share.

The floors are measured once per cell, in the same run as the figures that use them, in a
fresh process (``bench.work fold``): the decode-only read of the campaign's stored events
(recorder + the library's mapper, no rules) and the product's load + full fold. P2 is those two
side by side; the full fold is the floor of revokes (P3), as-of (P4) and the cold load; the
decode-only rate is the floor of the read models' rebuild and live follow (P5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import campaigns
from bench.core import Context, OverBudget, median, size_label
from bench.procs import work
from bench.stores import Store

REVOCABLE = ("DamageTaken", "HealingApplied", "AttackMade", "ExperienceAwarded", "TemporaryHitPointsGranted")


@dataclass
class Floors:
    facts: int
    decode_s: float  # the floor: read + decode, the collector paused as in the product's load
    load_s: float
    fold_s: float
    decode_gc_s: float  # the same read with the collector running (the floor until 2026-12-07)
    decode_cpu_s: float  # CPU time (this process, its threads included) of the floor read (decode_s)
    load_cpu_s: float
    orphans: int
    samples: list[dict[str, float]]
    peak_mb: float

    @property
    def full_s(self) -> float:
        """A cold process's work without snapshots: read, decode, append, fold (the product's
        load folds as it reads; ``fold_s`` is the fold alone, in memory)."""
        return self.load_s

    @property
    def decode_rate(self) -> float:
        return self.facts / self.decode_s


@dataclass
class Cell:
    ctx: Context
    store: Store
    size: int
    path: Path
    _floors: Floors | None = None
    _floors_error: OverBudget | None = None
    _index: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.store.kind} {size_label(self.size)}"

    @property
    def facts(self) -> int:
        return self.store.facts

    def floors(self) -> Floors | None:
        """The fold and decode-only floors (measured on first use; None if over budget)."""
        if self._floors is None and self._floors_error is None:
            ctx = self.ctx
            repeat = ctx.repeats(self.size)
            ctx.log(f"  [{self.label}] floors: decode-only read and full fold, {repeat} sample(s)")
            try:
                out = work(
                    "fold",
                    {"url": self.store.url, "campaign_id": self.store.campaign_id, "repeat": repeat},
                    # a floor, and P2 itself: budget it by size on top of the process budget, 2 ms a
                    # fact per sample (a sample folds twice: the product's load and the fold floor)
                    seconds=(ctx.budgets.process_s + self.size / 500) * repeat,
                    memory_mb=ctx.budgets.memory_mb,
                    label=self.label,
                    inprocess=ctx.smoke,
                )
            except OverBudget as exc:
                self._floors_error = exc
                ctx.log(f"  [{self.label}] the fold ran out of its budget ({exc.what})")
                return None
            s = out["samples"]
            self._floors = Floors(
                facts=self.facts,
                decode_s=median([x["decode_s"] for x in s]),
                load_s=median([x["load_s"] for x in s]),
                fold_s=median([x["fold_s"] for x in s]),
                decode_gc_s=median([x["decode_gc_s"] for x in s]),
                decode_cpu_s=median([x["decode_cpu_s"] for x in s]),
                load_cpu_s=median([x["load_cpu_s"] for x in s]),
                orphans=int(s[-1]["orphans"]),
                samples=s,
                peak_mb=out["peak_mb"],
            )
        return self._floors

    def floors_error(self) -> OverBudget | None:
        self.floors()
        return self._floors_error

    def index(self) -> dict[str, Any]:
        """Positions by fact type and the revoked positions of the generated campaign (for choosing
        what to revoke), read once from the cached export."""
        if not self._index:
            types: list[str] = []
            revoked: set[int] = set()
            with self.path.open("rb") as fh:
                next(fh)
                for raw in fh:
                    obj = json.loads(raw)
                    if obj.get("trailer"):
                        break
                    types.append(obj["type"])
                    if obj["type"] == "FactRevoked":
                        revoked.add(int(obj["payload"]["target"]))
            self._index = {"types": types, "revoked": revoked}
        return self._index

    def revocable(self, start: int, stop: int, types: tuple[str, ...] = REVOCABLE) -> list[int]:
        """Positions in [start, stop] of generated facts of ``types`` that are not revoked."""
        idx = self.index()
        t, revoked = idx["types"], idx["revoked"]
        lo, hi = max(2, start), min(stop, len(t) + 1)
        return [p for p in range(lo, hi + 1) if t[p - 2] in types and p not in revoked]

    def bytes_per_100k(self) -> float:
        return self.path.stat().st_size / self.facts * 100_000


def open_cell(ctx: Context, store: Store, size: int) -> Cell:
    return Cell(ctx, store, size, campaigns.cache_path(size, ctx.seed, ctx.cache_dir))
