"""P6: ``chronicle export --format jsonl`` and ``chronicle import`` as real processes, their memory
measured from outside.

The memory figure is the process's peak RSS (``VmHWM``, sampled every 50 ms) minus the peak of
the same command on a 100-fact campaign of the same store kind (interpreter, imports and
connection pool: what every run of the command costs). Goal: both stream, so the growth stays
under 50 MB whatever the campaign's size. Their speed is reported against the decode-only read
of the same campaign. Killed past the time or memory budget: the growth reached by then is
reported as a lower bound.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench import campaigns
from bench.cell import Cell
from bench.core import Context, Figure
from bench.procs import Run, chronicle_env, run_cli
from bench.stores import load, scratch

TINY = 100
_tiny: dict[str, dict[str, Run]] = {}  # store kind -> command -> run on the tiny campaign


def _export(ctx: Context, url: str, campaign_id: str, out: Path) -> Run:
    return run_cli(
        ["export", campaign_id, "--format", "jsonl", "-o", str(out)],
        chronicle_env(url),
        seconds=ctx.budgets.process_s,
        memory_mb=ctx.budgets.memory_mb,
    )


def _import(ctx: Context, kind: str, path: Path) -> Run:
    with scratch(ctx, kind, "import") as target:
        return run_cli(
            ["import", str(path)],
            chronicle_env(target.url),
            seconds=ctx.budgets.process_s,
            memory_mb=ctx.budgets.memory_mb,
        )


def _check(run: Run, what: str) -> None:
    if run.killed is None and run.returncode != 0:
        raise RuntimeError(f"{what} failed ({run.returncode}): {run.stderr[-2000:]}")


def tiny(ctx: Context, kind: str) -> dict[str, Run]:
    """The same commands on a 100-fact campaign: the floor every growth is measured from."""
    if kind not in _tiny:
        path = campaigns.cached(TINY, ctx.seed, ctx.cache_dir, quiet=True)
        with scratch(ctx, kind, "tiny") as store, tempfile.TemporaryDirectory() as tmp:
            load(ctx, store, TINY)
            exp = _export(ctx, store.url, store.campaign_id, Path(tmp) / "tiny.jsonl")
            _check(exp, "export of the tiny campaign")
        imp = _import(ctx, kind, path)
        _check(imp, "import of the tiny campaign")
        _tiny[kind] = {"export": exp, "import": imp}
    return _tiny[kind]


def run(ctx: Context, cell: Cell) -> list[Figure]:
    if not ctx.wants("P6"):
        return []
    kind = cell.store.kind
    tag: dict[str, Any] = {"store": kind, "size": cell.facts}
    floors = cell.floors()
    decode_rate = None if floors is None else floors.decode_rate
    base = tiny(ctx, kind)
    out: list[Figure] = []
    mb = 2**20
    file_mb = cell.path.stat().st_size / mb
    with tempfile.TemporaryDirectory() as tmp:
        ctx.log(f"  [{cell.label}] chronicle export --format jsonl")
        exp = _export(ctx, cell.store.url, cell.store.campaign_id, Path(tmp) / "campaign.jsonl")
        _check(exp, "export")
    ctx.log(f"  [{cell.label}] chronicle import")
    imp = _import(ctx, kind, cell.path)
    _check(imp, "import")
    for what, r in (("export", exp), ("import", imp)):
        over = None
        if r.killed == "memory":
            over = f"{ctx.budgets.memory_mb} MB"
        elif r.killed == "time":
            over = f"{ctx.budgets.process_s:g} s"
        growth = r.peak_mb - base[what].peak_mb
        detail = {
            "peak_mb": r.peak_mb,
            "tiny_peak_mb": base[what].peak_mb,
            "seconds": r.seconds,
            "file_mb": file_mb,
            "killed": r.killed,
        }
        out.append(
            Figure(
                "P6",
                f"JSONL {what}: process RSS growth (MB, peak vs a {TINY}-fact {what})",
                growth,
                file_mb,
                "MB",
                "the JSONL file's size",
                goal="< 50",
                goal_on="value",
                budget=over,
                bound=">" if over else "",
                detail=detail,
                **tag,
            )
        )
        out.append(
            Figure(
                "P6",
                f"JSONL {what}, whole command (facts/s)",
                cell.facts / r.seconds,
                decode_rate,
                "facts/s",
                "decode-only read of the campaign's stored events, same store",
                budget=over,
                bound="<" if over else "",
                detail=detail,
                **tag,
            )
        )
    return out
