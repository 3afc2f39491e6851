"""The benchmark harness: figures, run context, timing, PostgreSQL schemas, a server process.

Every figure is a ratio against a floor measured in the same run (the machine is shared and
noisy). With ``--repeat K`` each figure takes K paired samples (the measured path and its
floor, interleaved) and reports the medians; the ratio is the median of the per-sample
ratios. Nothing here asserts on time.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import psycopg
from psycopg import sql

from api.service.settings import Settings, parse_database_url
from bench.campaigns import CACHE

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/chronicle_test"


@dataclass
class Figure:
    """One measured figure against its floor.

    ``ratio`` is ``value / floor`` (same unit). ``goal`` is checked against the ratio
    (``">= 0.5"``, ``"<= 0.1"``) or, with ``goal_on="value"``, against the value itself
    (``"< 50"`` MB). ``passed`` is None when the figure has no goal (reported only).
    """

    id: str
    name: str
    value: float
    floor: float
    unit: str
    floor_name: str
    ratio: float
    goal: str | None = None
    goal_on: str = "ratio"
    passed: bool | None = None
    samples: int = 1
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.goal is not None:
            op, _, bound = self.goal.partition(" ")
            x = self.ratio if self.goal_on == "ratio" else self.value
            b = float(bound)
            self.passed = {">=": x >= b, "<=": x <= b, "<": x < b, ">": x > b}[op]

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for k in ("value", "floor", "ratio"):
            out[k] = _finite(out[k])
        return out

    @property
    def verdict(self) -> str:
        return "-" if self.passed is None else ("pass" if self.passed else "MISS")


def _finite(x: float) -> float | None:
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


@dataclass
class Sizes:
    p1_requests: int = 600  # mutations per client-count setting (1 client, then 20)
    fold: int = 100_000  # P2, P3, P4, P6
    p4_positions: int = 20
    p5: int = 2_000
    subscribers: int = 200
    sub_rounds: int = 10

    @classmethod
    def smoke(cls) -> Sizes:
        return cls(p1_requests=40, fold=1_500, p4_positions=5, p5=150, subscribers=10, sub_rounds=3)


@dataclass
class Context:
    sizes: Sizes
    repeat: int = 3
    seed: int = 1
    database_url: str = DEFAULT_DATABASE_URL
    cache_dir: Path = CACHE
    smoke: bool = False
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------- timing
def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    began = time.perf_counter()
    out = fn()
    return time.perf_counter() - began, out


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def percentile(xs: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def paired(
    ctx: Context, measure: Callable[[], float], floor: Callable[[], float]
) -> tuple[float, float, float, list[tuple[float, float]]]:
    """Run ``floor`` and ``measure`` alternately ``ctx.repeat`` times.

    Returns (median value, median floor, median of per-pair value/floor, the pairs).
    """
    pairs = []
    for i in range(ctx.repeat):
        if i % 2 == 0:
            f = floor()
            v = measure()
        else:
            v = measure()
            f = floor()
        pairs.append((v, f))
    ratios = [v / f for v, f in pairs if f]
    return median([v for v, _ in pairs]), median([f for _, f in pairs]), median(ratios), pairs


# ------------------------------------------------------------------------ PostgreSQL
def with_schema(url: str, schema: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "schema"]
    query.append(("schema", schema))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _connect(url: str) -> psycopg.Connection[Any]:
    db = parse_database_url(url)
    return psycopg.connect(
        host=db.host, port=db.port, user=db.user, password=db.password, dbname=db.dbname, autocommit=True
    )


@contextlib.contextmanager
def pg_schema(ctx: Context, label: str) -> Iterator[Settings]:
    """Settings for a fresh schema ``bench_<label>_<hex>``, dropped (CASCADE) afterwards."""
    schema = f"bench_{label}_{uuid.uuid4().hex[:8]}".lower()
    with _connect(ctx.database_url) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    try:
        yield Settings(database_url=with_schema(ctx.database_url, schema))
    finally:
        with _connect(ctx.database_url) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def postgres_version(url: str) -> str:
    try:
        with _connect(url) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]) if row else "?"
    except psycopg.Error as exc:
        return f"unavailable ({' '.join(str(exc).split())[:80]})"


# --------------------------------------------------------------------------- server
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


@contextlib.contextmanager
def server(settings: Settings, **env_overrides: str) -> Iterator[Server]:
    """A real ``chronicle serve`` process (uvicorn) on ``settings``' store."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")}
    env.update(
        CHRONICLE_DATABASE_URL=settings.database_url,
        CHRONICLE_LOG_LEVEL="warning",  # no per-request access log lines
        **env_overrides,
    )
    log = Path(tempfile.mkstemp(prefix="chronicle-bench-server-", suffix=".log")[1])
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "api.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited early:\n{running.logs()}")
            try:
                if httpx.get(f"{running.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not become healthy:\n{running.logs()}")
            time.sleep(0.1)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.unlink(missing_ok=True)
