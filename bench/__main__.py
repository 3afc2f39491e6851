"""``python -m bench``: run the benchmarks, print a table, write ``bench/results/latest.json``.

    python -m bench                      # every figure at full size (PostgreSQL needed)
    python -m bench --smoke              # every figure at tiny sizes (CI; well under a minute)
    python -m bench --only P2,P3 --repeat 5 --size 50000

The database is ``--database-url``, else ``$CHRONICLE_BENCH_DATABASE_URL``, else
``$CHRONICLE_TEST_DATABASE_URL``, else postgresql://postgres@127.0.0.1:5432/chronicle_test.
Each figure runs in its own fresh schema ``bench_*``, dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.campaigns import CACHE, RESULTS
from bench.core import DEFAULT_DATABASE_URL, Context, Figure, Sizes, postgres_version
from bench.figures import FIGURES


def machine(database_url: str) -> dict[str, Any]:
    mem = ""
    try:
        with open("/proc/meminfo") as fh:
            kb = int(fh.readline().split()[1])
            mem = f"{kb / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "?"

    return {
        "nproc": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "postgresql": postgres_version(database_url),
        "eventsourcing": ver("eventsourcing"),
        "strawberry-graphql": ver("strawberry-graphql"),
    }


def _fmt(x: float | None) -> str:
    if x is None:
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 0.1:
        return f"{x:.3f}"
    return f"{x:.2g}"


def table(figures: list[Figure]) -> str:
    rows = [("id", "figure", "value", "floor", "unit", "ratio", "goal", "result")]
    for f in figures:
        goal = "" if f.goal is None else (f"{f.goal}x" if f.goal_on == "ratio" else f"{f.goal} {f.unit}")
        rows.append((f.id, f.name, _fmt(f.value), _fmt(f.floor), f.unit, f"{f.ratio:.3g}x", goal, f.verdict))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        lines.append(
            "  ".join(
                c.ljust(w) if i in (0, 1, 4, 6, 7) else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--smoke", action="store_true", help="every figure at tiny sizes (CI)")
    ap.add_argument("--size", type=int, help="facts in the campaign for P2, P3, P4 and P6 (default 100000)")
    ap.add_argument("--only", help=f"comma-separated figures to run ({','.join(FIGURES)})")
    ap.add_argument("--repeat", type=int, help="samples per figure; medians are reported (default 3)")
    ap.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    ap.add_argument("--database-url", help="PostgreSQL database to create bench schemas in")
    ap.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="JSON results file")
    ap.add_argument("--cache-dir", type=Path, default=CACHE, help="where generated campaigns are cached")
    args = ap.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: server processes are stopped and bench schemas dropped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    sizes = Sizes.smoke() if args.smoke else Sizes()
    if args.size:
        sizes.fold = args.size
    repeat = args.repeat or (1 if args.smoke else 3)
    url = (
        args.database_url
        or os.environ.get("CHRONICLE_BENCH_DATABASE_URL")
        or os.environ.get("CHRONICLE_TEST_DATABASE_URL")
        or DEFAULT_DATABASE_URL
    )
    wanted = [w.strip().upper() for w in args.only.split(",")] if args.only else list(FIGURES)
    unknown = [w for w in wanted if w not in FIGURES]
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    ctx = Context(
        sizes, repeat=repeat, seed=args.seed, database_url=url, cache_dir=args.cache_dir, smoke=args.smoke
    )
    info = machine(url)
    print(
        f"Chronicle benchmarks ({'smoke' if args.smoke else 'full'}; repeat {repeat}) on "
        f"{info['nproc']} cores, {info['memory']}, Python {info['python']}, "
        f"PostgreSQL {info['postgresql']}",
        file=sys.stderr,
    )
    figures: list[Figure] = []
    failures: dict[str, str] = {}
    timings: dict[str, float] = {}
    for name in wanted:
        print(f"{name} ...", file=sys.stderr, flush=True)
        began = time.perf_counter()
        try:
            figures.extend(FIGURES[name](ctx))
        except Exception as exc:  # one broken figure must not hide the others
            failures[name] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        timings[name] = round(time.perf_counter() - began, 1)
        print(f"{name} done in {timings[name]:.1f} s", file=sys.stderr, flush=True)
    print(table(figures))
    for name, why in failures.items():
        print(f"{name} FAILED: {why}")
    result = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "smoke" if args.smoke else "full",
        "argv": sys.argv[1:] if argv is None else argv,
        "repeat": repeat,
        "sizes": vars(sizes),
        "machine": info,
        "seconds": timings,
        "figures": [f.as_json() for f in figures],
        "failures": failures,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
