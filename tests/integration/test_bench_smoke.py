"""``python -m bench --smoke`` runs every figure at tiny sizes and reports each with a ratio.

No timing assertions: the machine is shared and noisy. This only checks that the benchmark
harness works end to end (a real server process, PostgreSQL schemas, every figure present).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from api.service.settings import Database
from bench.figures import FIGURES

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.e2e]
REPO = Path(__file__).resolve().parents[2]


def test_smoke_mode_produces_every_figure_with_a_ratio(
    postgres_database: tuple[str, Database], tmp_path: Path
) -> None:
    url, _ = postgres_database
    out = tmp_path / "smoke.json"
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
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr[-4000:]}"
    result = json.loads(out.read_text())
    assert result["mode"] == "smoke"
    assert result["failures"] == {}
    assert {"nproc", "memory", "python", "postgresql"} <= set(result["machine"])
    figures = result["figures"]
    assert {f["id"] for f in figures} == set(FIGURES)
    for f in figures:
        for key in ("value", "floor", "ratio"):
            assert isinstance(f[key], (int, float)) and math.isfinite(f[key]) and f[key] > 0, f
        assert f["passed"] in (True, False, None)
        assert (f["goal"] is None) == (f["passed"] is None), f
    goals = {f["id"] for f in figures if f["goal"] is not None}
    assert {"P1", "P2", "P3", "P4", "P5", "P6"} <= goals
    # the human-readable table names every figure
    for fid in FIGURES:
        assert fid in run.stdout
