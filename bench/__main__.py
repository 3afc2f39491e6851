"""``python -m bench``: Chronicle's benchmarks at campaign scale; a table, and ``bench/results/latest.json``.

    python -m bench                                  # 10k/100k on both stores, 300k on PostgreSQL
    python -m bench --smoke                          # every figure at tiny sizes (make test)
    python -m bench --size 100k --store sqlite --only MUT,QRY --repeat 3
    python -m bench --prepare --size 300k            # only generate (cache) the campaigns

Figures (``--only``): COLD MEM QRY MUT W50 R2 P2 P3 P4 P5 P6 SUB (see bench/README.md). Each is
printed as value, floor (measured in the same run), ratio, goal and PASS/MISS; a measurement
that runs out of its time or memory budget is killed and printed ``MISS (> budget ...)``.

PostgreSQL is ``--database-url``, else ``$CHRONICLE_BENCH_DATABASE_URL``, else
``$CHRONICLE_TEST_DATABASE_URL``, else postgresql://postgres@127.0.0.1:5432/chronicle_test; each
store lives in a fresh schema ``bench_*`` (SQLite: a temporary directory), dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import campaigns
from bench.cell import open_cell
from bench.core import (
    DEFAULT_DATABASE_URL,
    DEFAULT_MATRIX,
    STORES,
    Budgets,
    Context,
    Figure,
    Plan,
    parse_size,
    size_label,
    table,
)
from bench.figures import IDS, SERVER_IDS, exports, fold, readmodels, replicas, requests, subscriptions
from bench.stores import loaded, postgres_version

REPO = Path(__file__).resolve().parents[1]


def machine(database_url: str) -> dict[str, Any]:
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(fh.readline().split()[1])
            mem = f"{kb / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    from importlib.metadata import PackageNotFoundError, version

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "?"

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True
        ).stdout
        commit += "+dirty" if dirty.strip() else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "?"
    return {
        "nproc": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgresql": postgres_version(database_url),
        "eventsourcing": ver("eventsourcing"),
        "strawberry-graphql": ver("strawberry-graphql"),
        "commit": commit,
        "load_average": os.getloadavg(),
    }


def _stores(text: str | None) -> tuple[str, ...]:
    if not text:
        return STORES
    names = {"postgres": "postgresql", "postgresql": "postgresql", "pg": "postgresql", "sqlite": "sqlite"}
    out = []
    for part in text.split(","):
        if part.strip().lower() not in names:
            raise SystemExit(f"unknown store {part!r}: use postgres or sqlite")
        out.append(names[part.strip().lower()])
    return tuple(dict.fromkeys(out))


def build_plan(args: argparse.Namespace) -> Plan:
    stores = _stores(args.store)
    if args.smoke:
        plan = Plan.smoke_plan(stores)
        if args.size:
            plan.cells = [(s, parse_size(x)) for s in stores for x in args.size.split(",")]
    else:
        if args.size:
            sizes = [parse_size(x) for x in args.size.split(",")]
            cells = [(s, n) for s in stores for n in sizes]
        else:
            cells = [(s, n) for s in stores for n in DEFAULT_MATRIX[s]]
        plan = Plan(cells=cells)
    if args.baseline:
        plan.baseline = parse_size(args.baseline)
    plan.cells.sort(key=lambda c: (STORES.index(c[0]), c[1]))
    return plan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--smoke", action="store_true", help="every figure at tiny sizes (make test)")
    ap.add_argument("--size", help="campaign sizes, comma-separated: 10k,100k,300k (default: all)")
    ap.add_argument("--store", help="postgres, sqlite or both (comma-separated; default both)")
    ap.add_argument("--only", help=f"figures to run, comma-separated ({','.join(IDS)})")
    ap.add_argument("--repeat", type=int, help="floor samples per cell (default 3 at every size)")
    ap.add_argument("--baseline", help="size of the per-request baseline campaign (default 1k)")
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    ap.add_argument("--database-url", help="PostgreSQL database to create bench schemas in")
    ap.add_argument("--out", type=Path, default=campaigns.RESULTS / "latest.json", help="JSON results file")
    ap.add_argument("--cache-dir", type=Path, default=campaigns.CACHE, help="generated campaigns (JSONL)")
    ap.add_argument("--budget-request", type=float, help="seconds one request may take (default 90)")
    ap.add_argument("--budget-phase", type=float, help="seconds one phase of requests may take (default 150)")
    ap.add_argument(
        "--budget-process",
        type=float,
        help="seconds a rebuild/follow/import/export/fold may take (default 180)",
    )
    ap.add_argument("--mem-budget", type=int, help="MB any measured process may reach (default 6144)")
    ap.add_argument("--prepare", action="store_true", help="only generate the campaigns the plan needs")
    ap.add_argument(
        "--import",
        dest="import_mode",
        choices=("validated", "plain"),
        default="validated",
        help="store campaigns as `chronicle import` does (validated, with recorded checkpoints; "
        "default) or plain (no validation fold: faster to load, no recorded checkpoints)",
    )
    args = ap.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: processes are stopped, schemas dropped, directories removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    plan = build_plan(args)
    budgets = Budgets.smoke() if args.smoke else Budgets()
    for name, value in (
        ("request_s", args.budget_request),
        ("phase_s", args.budget_phase),
        ("process_s", args.budget_process),
        ("memory_mb", args.mem_budget),
    ):
        if value is not None:
            setattr(budgets, name, value)
    only = frozenset(w.strip().upper() for w in args.only.split(",")) if args.only else frozenset()
    unknown = only - set(IDS)
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(sorted(unknown))}; choose from {', '.join(IDS)}")
    url = (
        args.database_url
        or os.environ.get("CHRONICLE_BENCH_DATABASE_URL")
        or os.environ.get("CHRONICLE_TEST_DATABASE_URL")
        or DEFAULT_DATABASE_URL
    )
    ctx = Context(
        plan,
        budgets,
        repeat=args.repeat,
        seed=args.seed,
        database_url=url,
        cache_dir=args.cache_dir,
        only=only,
        import_mode=args.import_mode,
    )
    log = ctx.log
    began_all = time.perf_counter()

    sizes = sorted({n for _, n in plan.cells} | {plan.baseline, exports.TINY})
    for n in sizes:
        campaigns.cached(n, ctx.seed, ctx.cache_dir)
    if args.prepare:
        log(f"campaigns ready in {ctx.cache_dir}: {', '.join(size_label(n) for n in sizes)}")
        return 0

    info = machine(url)
    log(
        f"Chronicle benchmarks ({'smoke' if ctx.smoke else 'full'}) at commit {info['commit']} on "
        f"{info['nproc']} cores, {info['memory']}, Python {info['python']}, PostgreSQL {info['postgresql']}; "
        f"cells: {', '.join(f'{s} {size_label(n)}' for s, n in plan.cells)}"
    )
    figures: dict[str, list[Figure]] = {}  # per store, in the order measured
    failures: dict[str, str] = {}
    seconds: dict[str, float] = {}
    stores = list(dict.fromkeys(s for s, _ in plan.cells))
    needs_server = not only or bool(only & SERVER_IDS)
    needs_baseline = not only or bool(only & {"QRY", "MUT"})

    def attempt(out: list[Figure], key: str, fn: Callable[..., list[Figure]], *args: Any) -> None:
        try:
            out.extend(fn(*args))
        except Exception as exc:  # one broken family must not hide the others
            failures[key] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()

    def run_store(kind: str) -> None:
        """The store's 1k baseline, then its cells, smallest first."""
        out = figures.setdefault(kind, [])
        baseline = requests.Baseline(size=plan.baseline)
        if needs_baseline:
            t0 = time.perf_counter()
            log(f"{kind} {size_label(plan.baseline)} (per-request baseline)")
            try:
                with loaded(ctx, kind, plan.baseline) as store:
                    baseline.size = store.facts
                    requests.run(ctx, open_cell(ctx, store, plan.baseline), baseline, record=True)
            except Exception as exc:
                failures[f"{kind} baseline"] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            seconds[f"{kind} baseline {size_label(plan.baseline)}"] = round(time.perf_counter() - t0, 1)
        for size in (n for k, n in plan.cells if k == kind):
            key = f"{kind} {size_label(size)}"
            t0 = time.perf_counter()
            log(key)
            try:
                with loaded(ctx, kind, size) as store:
                    cell = open_cell(ctx, store, size)
                    if ctx.wants("P2"):
                        attempt(out, f"{key} P2", fold.run, ctx, cell)
                    attempt(out, f"{key} P5", readmodels.run, ctx, cell)
                    attempt(out, f"{key} P6", exports.run, ctx, cell)
                    if needs_server:
                        attempt(out, f"{key} server", requests.run, ctx, cell, baseline)
                    if kind == "postgresql" and ctx.wants("R2"):
                        attempt(out, f"{key} R2", replicas.run, ctx, cell)
                    # last: the writers append to the campaign and add campaigns to the store
                    attempt(out, f"{key} P5 live", readmodels.run_live, ctx, cell)
            except Exception as exc:
                failures[key] = f"{type(exc).__name__}: {exc}"
                traceback.print_exc()
            seconds[key] = round(time.perf_counter() - t0, 1)
            log(f"{key} done in {seconds[key]:.0f} s")

    if only != {"SUB"}:
        if ctx.smoke:
            # smoke figures mean nothing, so the stores run side by side (process start-up dominates)
            threads = [threading.Thread(target=run_store, args=(k,), name=f"bench-{k}") for k in stores]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            for kind in stores:  # measured one at a time: nothing else of ours on the two cores
                run_store(kind)

    if ctx.wants("SUB") and "postgresql" in stores:
        t0 = time.perf_counter()
        attempt(figures.setdefault("postgresql", []), "SUB", subscriptions.run, ctx)
        seconds["SUB"] = round(time.perf_counter() - t0, 1)

    every = [f for kind in stores for f in figures.get(kind, [])]
    print(table(every))
    for key, why in failures.items():
        print(f"{key} FAILED: {why}")
    total = round(time.perf_counter() - began_all, 1)
    missed = [f for f in every if f.passed is False]
    print(f"{len(every)} figures, {len(missed)} MISS, {len(failures)} failed, in {total:.0f} s")
    result = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "smoke" if ctx.smoke else "full",
        "argv": sys.argv[1:] if argv is None else argv,
        "plan": {k: v for k, v in vars(plan).items()},
        "budgets": vars(budgets),
        "repeat": args.repeat,
        "machine": info,
        "seconds": {**seconds, "total": total},
        "campaigns": {
            size_label(n): campaigns.stats(campaigns.cache_path(n, ctx.seed, ctx.cache_dir)) for n in sizes
        },
        "figures": [f.as_json() for f in every],
        "failures": failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
