"""P5: the read models -- ``chronicle rebuild`` and the live ``chronicle worker`` -- as processes.

- Rebuild: the real ``chronicle rebuild`` (all four views, 500 events per transaction) on the
  cell's store, its progress read from the views' tracking table while it runs, its memory
  watched from outside. Floors: the decode-only read rate of the same campaign (goal: at least
  25 % of it) and raw row writes of the same row shapes (``bench.work rows``: plain
  executemany, no projector; see ``bench/readmodels.py``).
- Live follow: the real ``chronicle worker --batch-size 1`` started with the tracking just
  before the campaign's last facts, so it meets them one batch (one fact) at a time, as it
  would at a live table. Timed from its first fact (which includes loading the campaign) to
  the last. Floor: the decode-only read rate.

Over budget (time or memory) the process is killed and the rate it reached is reported as a
bound: the rebuild's rate falls as the campaign grows, so a partial rate is an upper bound.
"""

from __future__ import annotations

import contextlib
import time

from api.cli.process import start
from bench.cell import Cell
from bench.core import Context, Figure, OverBudget
from bench.procs import Watchdog, chronicle_env, logdir, work
from bench.readmodels import TrackingProbe, set_tracking
from bench.stores import scratch

DECODE = "decode-only read of the campaign's stored events (recorder + mapper), same store"


def _watch_tracking(
    views: TrackingProbe, dog: Watchdog, proc: object, target: int, deadline: float, first: int | None = None
) -> tuple[float | None, float, int, bool]:
    """Poll the tracking until ``target``: (time it reached ``first``, time it ended, position, done).

    When one poll sees both ``first`` and ``target`` reached (a worker faster than the polling),
    the time of reaching ``first`` is the poll before, the last time it was not reached: the rate
    is then a lower bound, never a division by zero."""
    began = time.perf_counter()
    t_first = began if first is None else None
    pos, before = 0, began
    while True:
        pos = views.position()
        now = time.perf_counter()
        if t_first is None and first is not None and pos >= first:
            t_first = before if pos >= target else now
        before = now
        if pos >= target:
            return t_first, now, pos, True
        if dog.killed or proc.process.poll() is not None or time.monotonic() > deadline:  # type: ignore[attr-defined]
            return t_first, now, pos, False
        time.sleep(0.02)


def rebuild(ctx: Context, cell: Cell, decode_rate: float | None) -> list[Figure]:
    store, head = cell.store, int(cell.store.info["head"])
    tag = {"store": store.kind, "size": cell.facts}
    budget = ctx.budgets.process_s
    ctx.log(f"  [{cell.label}] chronicle rebuild (budget {budget:.0f} s)")
    set_tracking(store.settings, 0)  # what the command does first; progress is read from 0
    views = TrackingProbe(store.settings)
    proc = start("rebuild", ["rebuild", "--batch-size", "500"], chronicle_env(store.url), logdir())
    began = time.perf_counter()
    dog = Watchdog(proc.process.pid, ctx.budgets.memory_mb, time.monotonic() + budget).start()
    try:
        _, ended, pos, done = _watch_tracking(views, dog, proc, head, time.monotonic() + budget + 5)
        if done:
            proc.process.wait(30)
    finally:
        dog.stop()
        with contextlib.suppress(Exception):
            proc.terminate(10)
        views.close()
    seconds = ended - began
    # back to a deployment that kept up (the server phases on SQLite follow in process)
    set_tracking(store.settings, head)
    rate = pos / seconds if seconds else 0.0
    detail = {"events": pos, "of": head, "seconds": seconds, "peak_mb": dog.peak_mb, "killed": dog.killed}
    over = None if done else (f"{ctx.budgets.memory_mb} MB" if dog.killed == "memory" else f"{budget:g} s")
    name = "read-model rebuild, chronicle rebuild, batch 500 (events/s)"
    out = [
        Figure(
            "P5",
            name,
            rate,
            decode_rate,
            "events/s",
            DECODE,
            goal=">= 0.25",
            budget=over,
            bound="<" if over else "",
            detail=detail,
            **tag,
        )
    ]
    rows = raw_rows(ctx, cell)
    if rows is not None:
        out.append(
            Figure(
                "P5",
                "read-model rebuild vs raw row writes (events/s)",
                rate,
                rows,
                "events/s",
                "the same rows written with plain executemany, 500 facts per transaction (bench.work rows)",
                budget=over,
                bound="<" if over else "",
                detail=detail,
                **tag,
            )
        )
    return out


def raw_rows(ctx: Context, cell: Cell) -> float | None:
    with scratch(ctx, cell.store.kind, "rows") as rows_store:
        try:
            out = work(
                "rows",
                {"kind": cell.store.kind, "url": rows_store.url, "path": str(cell.path)},
                seconds=3 * ctx.budgets.process_s,  # a floor: generous
                memory_mb=ctx.budgets.memory_mb,
                label=cell.label,
                inprocess=ctx.smoke,
            )
        except OverBudget as exc:
            ctx.log(f"  [{cell.label}] raw row writes over budget ({exc.what})")
            return None
    return float(out["facts"]) / float(out["seconds"])


def follow(ctx: Context, cell: Cell, decode_rate: float | None) -> list[Figure]:
    store, head = cell.store, int(cell.store.info["head"])
    n = min(ctx.plan.follow_facts, max(2, cell.facts // 10))
    start_at = head - n - 1
    set_tracking(store.settings, start_at)
    floors = cell.floors()
    budget = ctx.budgets.process_s + (1.5 * floors.full_s if floors else 0)  # it loads the campaign first
    ctx.log(f"  [{cell.label}] chronicle worker --batch-size 1: the last {n} facts (budget {budget:.0f} s)")
    views = TrackingProbe(store.settings)
    proc = start("worker", ["worker", "--batch-size", "1"], chronicle_env(store.url), logdir())
    dog = Watchdog(proc.process.pid, ctx.budgets.memory_mb, time.monotonic() + budget).start()
    try:
        t_first, ended, pos, done = _watch_tracking(
            views, dog, proc, head, time.monotonic() + budget + 5, first=start_at + 1
        )
    finally:
        dog.stop()
        with contextlib.suppress(Exception):
            proc.terminate(10)
        views.close()
    set_tracking(store.settings, head)
    followed = pos - (start_at + 1)
    seconds = (ended - t_first) if t_first is not None else None
    rate = followed / seconds if seconds and followed > 0 else None
    detail = {"facts": followed, "of": n, "seconds": seconds, "peak_mb": dog.peak_mb, "killed": dog.killed}
    over = None if done else (f"{ctx.budgets.memory_mb} MB" if dog.killed == "memory" else f"{budget:.3g} s")
    return [
        Figure(
            "P5",
            "live follow, chronicle worker, one fact per batch (facts/s)",
            rate,
            decode_rate,
            "facts/s",
            DECODE,
            goal=">= 0.25",
            budget=over,  # a partial rate is still the rate of the facts it followed: no bound
            detail=detail,
            store=store.kind,
            size=cell.facts,
        )
    ]


def run(ctx: Context, cell: Cell) -> list[Figure]:
    floors = cell.floors()
    decode_rate = None if floors is None else floors.decode_rate
    out = []
    if ctx.wants("P5"):
        out += follow(ctx, cell, decode_rate)
        out += rebuild(ctx, cell, decode_rate)
    return out
