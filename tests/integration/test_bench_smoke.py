"""The benchmark harness works end to end (``python -m bench --smoke``), and its budgets hold.

No timing assertions: the machine is shared and noisy. These check that every figure family
runs on both stores through real processes (server, worker, rebuild, export, import) and
reports a value against a floor with a verdict; that a measurement over its budget is killed
and reported ``MISS (> budget)`` instead of being waited for; and that the generator makes
the corrections that orphan later facts the benchmarks need.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from api.service.settings import Database
from bench.figures import IDS
from bench.generator import CampaignGenerator

REPO = Path(__file__).resolve().parents[2]
PER_CELL = {"COLD", "MEM", "QRY", "MUT", "W50", "P2", "P3", "P4", "P5", "P6"}


def _bench(url: str, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path / "result.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--smoke",
            "--database-url",
            url,
            "--out",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, f"stdout:\n{run.stdout[-4000:]}\nstderr:\n{run.stderr[-4000:]}"
    return run, json.loads(out.read_text())


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


@pytest.mark.postgres
@pytest.mark.slow
@pytest.mark.e2e
def test_smoke_mode_reports_every_figure_on_both_stores_against_a_floor(
    postgres_database: tuple[str, Database], tmp_path: Path
) -> None:
    url, _ = postgres_database
    run, result = _bench(url, tmp_path)
    assert result["mode"] == "smoke"
    assert result["failures"] == {}
    assert {"nproc", "memory", "python", "postgresql", "commit"} <= set(result["machine"])
    figures = result["figures"]
    for store, extra in (("postgresql", {"R2"}), ("sqlite", set())):  # two replicas: PostgreSQL only
        ids = {f["id"] for f in figures if f["store"] == store and f["size"] is not None}
        assert ids == PER_CELL | extra, store
    # two servers on one store: every accepted mutation stored exactly once (not a timing)
    audits = [f for f in figures if f["id"] == "R2" and f["unit"] in ("mutations", "count")]
    assert len(audits) >= 4 and all(f["value"] == 0 for f in audits), audits
    assert {f["id"] for f in figures} == set(IDS)
    for f in figures:
        if f["budget"] is None:
            assert _finite(f["value"]), f
        if f["floor"] is not None:
            assert _finite(f["floor"]) and f["floor"] > 0, f
            if f["value"] is not None:
                assert _finite(f["ratio"]), f
        assert f["passed"] in (True, False, None)
        if f["budget"] is not None:
            assert f["passed"] is False and f["verdict"].startswith("MISS (> budget"), f
        elif f["goal"] is None:
            assert f["passed"] is None and f["verdict"] == "-", f
        else:
            assert f["verdict"] == ("PASS" if f["passed"] else "MISS"), f
    goals = {f["id"] for f in figures if f["goal"] is not None}
    assert PER_CELL - {"MEM"} <= goals
    for fid in IDS:  # the printed table names every figure
        assert fid in run.stdout


@pytest.mark.sqlite
@pytest.mark.slow
@pytest.mark.e2e
def test_a_measurement_over_its_budget_is_killed_and_reported_as_a_miss(tmp_path: Path) -> None:
    """``chronicle rebuild`` and ``chronicle worker`` cannot even start within 0.2 s: both are
    killed and reported, and the run still finishes (SQLite only: no PostgreSQL needed)."""
    unused = "postgresql://nobody@127.0.0.1:1/none"
    run, result = _bench(unused, tmp_path, "--store", "sqlite", "--only", "P5", "--budget-process", "0.2")
    p5 = [f for f in result["figures"] if f["id"] == "P5"]
    assert {f["name"].split(",")[0] for f in p5} >= {"read-model rebuild", "live follow", "live worker"}
    for f in p5:
        assert f["passed"] is False and f["verdict"].startswith("MISS (> budget 0."), f
        assert f["detail"]["killed"] == "time", f
    assert "MISS (> budget 0.2 s)" in run.stdout


def test_the_generator_records_corrections_that_orphan_later_facts() -> None:
    """Bounded: no correction orphans more than its limit, the campaign no more than its share."""
    gen = CampaignGenerator(6_000, seed=3, orphan_limit=60, orphan_share=0.03)
    for _ in gen.facts():
        pass
    orphans = gen.ledger.orphans
    assert gen.stats.orphaning > 0 and orphans, "no correction orphaned anything"
    assert len(orphans) <= 0.03 * 6_000 + 60
    assert gen.stats.corrections > gen.stats.orphaning
