"""P5: the read models -- ``chronicle rebuild`` and the live ``chronicle worker`` -- as processes.

- Rebuild: the real ``chronicle rebuild`` (all four views, 500 events per transaction) on the
  cell's store, its progress read from the views' tracking table while it runs, its memory
  watched from outside. Floors: the decode-only read rate of the same campaign (goal: at least
  25 % of it) and raw row writes of the same row shapes (``bench.work rows``: plain
  executemany, no projector; see ``bench/readmodels.py``).
- Live follow (the cell's last figures, :func:`run_live`): the real ``chronicle worker`` (default
  batch size) following while writer processes (``bench.work write``) append through the
  product's application for ``live_seconds``: one writer on the cell's campaign, then
  ``live_tables`` new campaigns shared by ``LIVE_WRITERS`` writers (4; 1 on SQLite). Figures:
  facts/s projected (from the writers' first fact until the worker caught up) vs the writers'
  rate; the worker's facts per CPU-second vs the decode-only read rate; the lag p99 (store head
  to tracking, per notification, polled every 50 ms).

Over budget (time or memory) the process is killed and the rate it reached is reported as a
bound: the rebuild's rate falls as the campaign grows, so a partial rate is an upper bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from typing import Any

from api.cli.process import start
from bench.cell import Cell
from bench.core import Context, Figure, OverBudget, percentile
from bench.procs import REPO, Watchdog, chronicle_env, logdir, work
from bench.readmodels import TrackingProbe, set_tracking
from bench.stores import scratch

DECODE = "decode-only read of the campaign's stored events (recorder + mapper), same store"
# writer processes sharing the active tables: on SQLite one (its deployment is one process writing
# one file; several writer processes lock each other out)
LIVE_WRITERS = {"postgresql": 4, "sqlite": 1}


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


# ------------------------------------------------------------------ live follow under writers
def _cpu_s(pid: int) -> float | None:
    """A process's CPU time so far (user + system), from ``/proc/PID/stat``."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _lags(samples: list[tuple[float, int, int]], first: int, last: int) -> list[float]:
    """Per notification in (first, last]: when the worker's tracking reached it minus when the
    store's head did, from the polled (time, head, tracking) samples (resolution: the poll)."""
    out: list[float] = []
    hi = ti = 0
    for n in range(first + 1, last + 1):
        while hi < len(samples) and samples[hi][1] < n:
            hi += 1
        while ti < len(samples) and samples[ti][2] < n:
            ti += 1
        if hi < len(samples) and ti < len(samples):
            out.append(max(0.0, samples[ti][0] - samples[hi][0]))
    return out


def live(ctx: Context, cell: Cell, decode_rate: float | None, tables: int) -> list[Figure]:
    """The real ``chronicle worker`` (default batch size) following while writer processes
    (``bench.work write``) append through the product's application: ``tables == 0``: one writer
    on the cell's campaign; else ``tables`` new campaigns shared by ``LIVE_WRITERS`` writers."""
    from api.service.settings import Settings
    from api.service.store import open_application

    store = cell.store
    seconds = ctx.plan.live_seconds
    n_writers = LIVE_WRITERS.get(store.kind, 1)
    what = "the cell's campaign, 1 writer" if not tables else f"{tables} tables, {n_writers} writer(s)"
    app = open_application(Settings(database_url=store.url, snapshot_every=0))
    probe = TrackingProbe(store.settings)
    folder = logdir()
    go = folder / "go"
    writers: list[subprocess.Popen[str]] = []
    proc: Any = None
    dog: Watchdog | None = None
    try:
        head0 = app.recorder.max_notification_id() or 0
        set_tracking(store.settings, head0)
        floors = cell.floors()
        budget = ctx.budgets.process_s + (1.5 * floors.full_s if floors and not tables else 0)
        ctx.log(f"  [{cell.label}] live follow: chronicle worker, {what}, {seconds:g} s of writing")
        proc = start("worker", ["worker"], chronicle_env(store.url), logdir())
        deadline = time.monotonic() + budget  # to start, meet the writers' set-up and catch up
        dog = Watchdog(
            proc.process.pid, ctx.budgets.memory_mb, time.monotonic() + budget + 3 * seconds
        ).start()
        if tables:
            share = [tables // n_writers + (1 if k < tables % n_writers else 0) for k in range(n_writers)]
            specs = [[f"new:{n}"] for n in share if n]
        else:
            specs = [[store.campaign_id]]
        for k, spec in enumerate(specs):
            args = {"url": store.url, "campaigns": spec, "seconds": seconds, "tag": f"w{k}", "go": str(go)}
            writers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "bench.work", "write", json.dumps(args)],
                    cwd=REPO,
                    env={k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")},
                    stdout=subprocess.PIPE,
                    stderr=(folder / f"writer-{k}.err").open("w"),
                    text=True,
                )
            )
        for w in writers:  # every writer has set up its tables
            assert w.stdout is not None
            line = w.stdout.readline()
            if not line.startswith("{"):
                err = (folder / f"writer-{writers.index(w)}.err").read_text()[-2000:]
                raise RuntimeError(f"a writer failed to set up ({w.wait()}): {err}")
        # the worker meets the set-up facts first (and loads the cell's campaign): wait until it
        # has caught up, so the figure starts from a worker that kept up
        head_go = app.recorder.max_notification_id() or 0
        while probe.position() < head_go:
            if dog.killed or proc.process.poll() is not None or time.monotonic() > deadline:
                late = {"stage": "catching up with the set-up", "killed": dog.killed or "time"}
                return _live_figures(ctx, cell, tables, len(writers), decode_rate, budget, late)
            time.sleep(0.05)
        cpu0 = _cpu_s(proc.process.pid)
        go.touch()
        t_go = time.perf_counter()
        samples: list[tuple[float, int, int]] = []
        writing = True
        head_end = None
        t_stop = None
        while True:
            now = time.perf_counter()
            head = app.recorder.max_notification_id() or 0
            samples.append((now, head, probe.position()))
            if writing and all(w.poll() is not None for w in writers):
                writing, t_stop = False, now
                head_end = app.recorder.max_notification_id() or 0
            if not writing and head_end is not None and samples[-1][2] >= head_end:
                break
            if dog.killed or proc.process.poll() is not None or now - t_go > seconds + budget:
                break
            time.sleep(0.05)
        cpu1 = _cpu_s(proc.process.pid)
        results = []
        for w in writers:
            out = w.communicate()[0]
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            results.append(json.loads(lines[-1]) if lines else {})
    finally:
        if dog is not None:
            dog.stop()
        if proc is not None:
            with contextlib.suppress(Exception):
                proc.terminate(10)
        for w in writers:
            if w.poll() is None:
                w.kill()
                w.wait()
        probe.close()
        app.close()
    final = samples[-1][2]
    head_end = head_end or samples[-1][1]
    done = final >= head_end
    t_end = samples[-1][0]
    written = head_end - head_go
    write_s = (t_stop or t_end) - t_go
    lags = _lags(samples, head_go, min(final, head_end))
    worker_cpu = None if cpu0 is None or cpu1 is None else cpu1 - cpu0
    set_tracking(store.settings, head_end)
    store.info["head"] = head_end  # the writers appended to the store
    detail = {
        "writers": len(writers),
        "tables": tables or 1,
        "facts_written": written,
        "write_seconds": write_s,
        "write_rate": written / write_s if write_s else None,
        "refused": sum(int(r.get("refused", 0)) for r in results),
        "projected_rate": (final - head_go) / (t_end - t_go) if t_end > t_go else None,
        "caught_up_after_writers_s": (t_end - t_stop) if done and t_stop else None,
        "lag_p50_s": percentile(lags, 50),
        "lag_p99_s": percentile(lags, 99),
        "lag_max_s": max(lags) if lags else None,
        "worker_cpu_s": worker_cpu,
        "poll_s": 0.05,
        "peak_mb": dog.peak_mb,
        "killed": dog.killed,
    }
    return _live_figures(ctx, cell, tables, len(writers), decode_rate, None if done else budget, detail)


def _live_figures(
    ctx: Context,
    cell: Cell,
    tables: int,
    writers: int,
    decode_rate: float | None,
    over_budget: float | None,
    detail: dict[str, Any],
) -> list[Figure]:
    over = None if over_budget is None else f"{over_budget:.3g} s"
    tag = {"store": cell.store.kind, "size": cell.facts}
    label = "live follow" if not tables else f"live worker, {tables} active tables"
    cpu, written = detail.get("worker_cpu_s"), detail.get("facts_written")
    capacity = written / cpu if cpu and written else None
    return [
        Figure(
            "P5",
            f"{label}, facts/s projected while {writers} writer(s) append (floor: the write rate)",
            detail.get("projected_rate"),
            detail.get("write_rate"),
            "facts/s",
            "facts/s the writers appended (bench.work write, through ChronicleApplication.record)",
            goal=">= 0.95",
            budget=over,
            detail=detail,
            **tag,
        ),
        Figure(
            "P5",
            f"{label}, worker capacity: facts per worker CPU-second",
            capacity,
            decode_rate,
            "facts/s",
            DECODE,
            goal=">= 0.25",
            budget=over,
            detail=detail,
            **tag,
        ),
        Figure(
            "P5",
            f"{label}, lag p99: store head to view tracking (s; p50 and max in the JSON)",
            detail.get("lag_p99_s"),
            None,
            "s",
            "(reported; polled every 50 ms)",
            budget=over,
            detail=detail,
            **tag,
        ),
    ]


def run(ctx: Context, cell: Cell) -> list[Figure]:
    floors = cell.floors()
    decode_rate = None if floors is None else floors.decode_rate
    out = []
    if ctx.wants("P5"):
        out += rebuild(ctx, cell, decode_rate)
    return out


def run_live(ctx: Context, cell: Cell) -> list[Figure]:
    """The live figures, the cell's last: their writers append to the campaign (and add
    campaigns to the store), which the other figures must not see."""
    floors = cell.floors()
    decode_rate = None if floors is None else floors.decode_rate
    out = []
    if ctx.wants("P5"):
        out += live(ctx, cell, decode_rate, 0)
        out += live(ctx, cell, decode_rate, ctx.plan.live_tables)
    return out
