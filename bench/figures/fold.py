"""P2: the full fold from the store vs the decode-only read of the same events.

Measured in a fresh process (``bench.work fold``), interleaved ``--repeat`` times: the
product's load (``ChronicleApplication.campaign``: read, decode, append to the ledger and fold
as it reads, checkpoints included) plus ``ledger.state`` (nothing left to fold), against reading and decoding
the campaign's stored events with the library's recorder and mapper, no rules. Also the fold's
cost per fact against the same at the smallest size measured on this store (the goal: flat from
10k to 300k).
"""

from __future__ import annotations

from bench.cell import Cell
from bench.core import Context, Figure

# per store: (facts, load + fold us per fact, the same in CPU) of the smallest size measured so far
_smallest: dict[str, tuple[int, float, float]] = {}


def run(ctx: Context, cell: Cell) -> list[Figure]:
    tag = {"store": cell.store.kind, "size": cell.facts}
    floors = cell.floors()
    if floors is None:
        exc = cell.floors_error()
        assert exc is not None
        return [
            Figure(
                "P2",
                "full fold from the store (facts/s)",
                None,
                None,
                "facts/s",
                "read + decode the same stored events (recorder + mapper), no rules",
                goal=">= 0.8",
                budget=exc.what,
                detail=exc.partial,
                **tag,
            )
        ]
    n = floors.facts
    full = floors.full_s
    per_fact = floors.fold_s / n * 1e6
    detail = {
        "decode_us_per_fact": floors.decode_s / n * 1e6,
        "load_us_per_fact": floors.load_s / n * 1e6,
        "fold_only_us_per_fact": per_fact,
        "full_s": full,
        "decode_s": floors.decode_s,
        "decode_gc_s": floors.decode_gc_s,
        "decode_gc_us_per_fact": floors.decode_gc_s / n * 1e6,
        "decode_cpu_us_per_fact": floors.decode_cpu_s / n * 1e6,
        "load_cpu_us_per_fact": floors.load_cpu_s / n * 1e6,
        "ratio_cpu": floors.decode_cpu_s / floors.load_cpu_s,
        "ratio_decode_gc": floors.decode_gc_s / full,
        "orphans": floors.orphans,
        "peak_mb": floors.peak_mb,
        "samples": floors.samples,
    }
    out = [
        Figure(
            "P2",
            "full fold from the store: load + fold (facts/s)",
            n / full,
            n / floors.decode_s,
            "facts/s",
            "read + decode the same stored events (recorder + mapper), no rules",
            goal=">= 0.8",
            samples=len(floors.samples),
            detail=detail,
            **tag,
        )
    ]
    # Flatness is judged on load + fold: the product folds inside the load (Ledger.load, each
    # fact read once); ``fold_s`` is the fold alone, in memory (a detail here, P3/P4's floor).
    full_per_fact = full / n * 1e6
    cpu_per_fact = floors.load_cpu_s / n * 1e6
    first = _smallest.setdefault(cell.store.kind, (n, full_per_fact, cpu_per_fact))
    if first[0] < n:
        out.append(
            Figure(
                "P2",
                f"load + fold, per fact, vs the same at {first[0]:,} facts (us/fact)",
                full_per_fact,
                first[1],
                "us/fact",
                f"load + fold cost per fact of the {first[0]:,}-fact campaign, same store, same run",
                goal="<= 1.2",
                samples=len(floors.samples),
                **tag,
            )
        )
        # The same in CPU time of the loading process (its read-ahead thread included, the
        # store's own work not): what other processes on a shared machine move least. A
        # diagnostic, not the figure judged: the store's own work is the part most likely to
        # grow with the campaign, and it is left out here.
        out.append(
            Figure(
                "P2",
                f"load + fold, CPU per fact, vs the same at {first[0]:,} facts (us/fact)",
                cpu_per_fact,
                first[2],
                "CPU-us/fact",
                f"load + fold CPU per fact of the {first[0]:,}-fact campaign, same store, same run",
                samples=len(floors.samples),
                **tag,
            )
        )
    return out
