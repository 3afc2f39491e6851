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

# per store: (facts, fold-only us per fact) of the smallest size measured so far in this run
_smallest: dict[str, tuple[int, float]] = {}


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
    first = _smallest.setdefault(cell.store.kind, (n, full_per_fact))
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
    return out
