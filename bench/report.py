"""``python -m bench.report RESULTS.json [...]``: the scaling table (Markdown) from results files.

One row per figure of interest, one column per (store, size); each cell is ``value (ratio to
its floor)``, with ``!`` after a MISS and ``>``/``<`` for a bound reached when the measurement ran
out of its budget. Used to write bench/README.md's table; several files are merged (later files
win for the same figure, store and size).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.core import fmt, size_label

# (row label, figure id, the start of the figure's name)
ROWS: tuple[tuple[str, str, str], ...] = (
    ("mutation p50, 1 client (ms; x the 1k campaign)", "MUT", "mutation p50, 1 client, vs"),
    ("mutation p99, 1 client (ms; x a bare save)", "MUT", "mutation latency p99, 1 client"),
    ("mutations/s, 1 client (x bare saves)", "MUT", "mutations/s, 1 client"),
    ("mutation p50, 20 clients (ms; x a bare save)", "MUT", "mutation latency p50, 20 clients"),
    ("mutation p99, 20 clients (ms; x a bare save)", "MUT", "mutation latency p99, 20 clients"),
    ("mutations/s, 20 clients (x bare saves)", "MUT", "mutations/s, 20 clients"),
    ("50 writers p99 (ms; goal < 250)", "W50", "50 writers"),
    ("one character's HP, p50 (ms; x the 1k campaign)", "QRY", "query p50: one character"),
    ("one character's HP, p99 (ms; x the 1k campaign)", "QRY", "query p99: one character"),
    ("the live encounter, p50 (ms; x the 1k campaign)", "QRY", "query p50: the live encounter"),
    ("a history page, p50 (ms; x the 1k campaign)", "QRY", "query p50: a history page (20"),
    (
        "a history page with outcomes and lines, p50 (ms; x the 1k campaign)",
        "QRY",
        "query p50: a history page with",
    ),
    ("revoke in the last 1% (s; x a full fold)", "P3", "revoke in the last 1%"),
    ("revoke at 50% (s; x a full fold)", "P3", "revoke at 50%"),
    ("revoke early #1 (s; x a full fold)", "P3", "revoke early #1"),
    ("revoke early #3 (s; x a full fold)", "P3", "revoke early #3"),
    ("as-of, corrected (s; x a full fold)", "P4", "as-of a random position, view CORRECTED"),
    ("as-of, recorded (s; x a full fold)", "P4", "as-of a random position, view RECORDED"),
    ("full fold from the store (facts/s; x decode-only)", "P2", "full fold from the store"),
    ("load + fold per fact (us; x the smallest size)", "P2", "load + fold, per fact"),
    ("load + fold CPU per fact (us; x the smallest size; diagnostic)", "P2", "load + fold, CPU per fact"),
    ("cold load, first answer (s; x read+decode+fold)", "COLD", "cold load"),
    ("rebuild (events/s; x decode-only)", "P5", "read-model rebuild, chronicle rebuild"),
    ("rebuild (events/s; x raw row writes)", "P5", "read-model rebuild vs raw row writes"),
    ("live follow, 1 writer (facts/s; x the write rate)", "P5", "live follow, facts/s projected"),
    ("live follow: worker capacity (facts/CPU-s; x decode-only)", "P5", "live follow, worker capacity"),
    ("live follow: lag p99 (s)", "P5", "live follow, lag p99"),
    ("100 active tables (facts/s; x the write rate)", "P5", "live worker, 100 active tables, facts/s"),
    ("100 active tables: capacity (facts/CPU-s; x decode-only)", "P5", "live worker, 100 active tables, w"),
    ("100 active tables: lag p99 (s)", "P5", "live worker, 100 active tables, lag p99"),
    ("JSONL export RSS growth (MB; goal < 50)", "P6", "JSONL export: process RSS growth"),
    ("JSONL import RSS growth (MB; goal < 50)", "P6", "JSONL import: process RSS growth"),
    ("server RSS growth per 100k facts (MB; x JSONL size)", "MEM", "server RSS growth"),
    ("server RSS after 3 early revokes (MB; x after load)", "MEM", "server RSS after 3 early revokes"),
)


def load(paths: list[Path]) -> list[dict[str, Any]]:
    found: dict[tuple[str, str, int | None, str], dict[str, Any]] = {}
    for path in paths:
        for f in json.loads(path.read_text())["figures"]:
            found[(f["id"], f["store"], f["size"], f["name"])] = f
    return list(found.values())


def cell(f: dict[str, Any] | None) -> str:
    if f is None:
        return ""
    bound = f.get("bound") or ""
    value = "n/a" if f["value"] is None else f"{bound}{fmt(f['value'])}"
    ratio = "" if f["ratio"] is None else f" ({bound}{f['ratio']:.2g}x)"
    if f.get("budget"):
        return f"{value}{ratio} **MISS (> budget {f['budget']})**"
    mark = " **MISS**" if f["passed"] is False else ""
    return f"{value}{ratio}{mark}"


def table(figures: list[dict[str, Any]]) -> str:
    cols = sorted(
        {(f["store"], f["size"]) for f in figures if f["size"] is not None},
        key=lambda c: (c[0] != "postgresql", c[1]),
    )
    short = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}
    head = ["figure"] + [f"{short.get(s, s)} {size_label(round(n, -3)) if n >= 1000 else n}" for s, n in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, fid, prefix in ROWS:
        row = [label]
        for store, size in cols:
            match = [
                f
                for f in figures
                if f["id"] == fid
                and f["store"] == store
                and f["size"] == size
                and f["name"].startswith(prefix)
            ]
            row.append(cell(match[-1] if match else None))
        if any(row[1:]):
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    print(table(load([Path(a) for a in argv])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
