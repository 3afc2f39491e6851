"""Nothing acknowledged is ever lost under load and faults (issue 13 §1, §6, §7).

Writers play notes and damage on one campaign through real clients against real
``chronicle serve`` processes, each request with its own idempotency key, retried with that key
after ``STORE_UNAVAILABLE`` or a broken connection — and every so often a player's note with a
lone surrogate (the poison that bricked campaigns). Meanwhile: two replicas race on the same
campaign; the API is killed with SIGKILL and a fresh process takes over; PostgreSQL backends
are terminated; PostgreSQL is restarted. Afterwards a fresh process must load the campaign and
find every acknowledged request stored exactly once, no gap, and the state the API serves
equal to a fresh fold of the stored facts; no client may ever have seen anything but a
success, a typed refusal or ``STORE_UNAVAILABLE``.

Fast versions run in ``make test``; the ``faults``-marked heavy loads run in ``make faults``
(figures in docs/operations.md). Restarting PostgreSQL is only in ``make faults``: others
run their tests against the same server.
"""

from __future__ import annotations

import collections
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from api.service.settings import Settings
from tests.faults.conftest import Api, Load, Outcomes, Table, audit, new_table, served_hp, terminate_backends
from tests.faults.proxy import Proxy

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FAST = {"writers": 4, "per_writer": 12, "poison": 3}
HEAVY = {"writers": 20, "per_writer": 100, "poison": 10}


def report(name: str, out: Outcomes, started: float, **extra: Any) -> None:
    """One line of figures for docs/operations.md (shown with ``-s``)."""
    figures = {
        "acknowledged": len(out.acknowledged),
        "refused": len(out.refused),
        "store_unavailable": out.unavailable,
        "seconds": round(time.monotonic() - started, 1),
        **extra,
    }
    print(f"\nFAULTS {name}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


def poisoned(size: dict[str, int]) -> int:
    """How many poison notes a load of this size sends (see ``Load``)."""
    per_writer = sum(
        1 for i in range(0, size["per_writer"], 2) if size["poison"] and i % (2 * size["poison"]) == 0
    )
    return per_writer * size["writers"]


def check(out: Outcomes, settings: Settings, table: Table, url: str, size: dict[str, int]) -> None:
    assert out.unexpected == [], out.unexpected[:3]  # never INTERNAL_SERVER_ERROR or an untyped answer
    codes = collections.Counter(code for _, code in out.refused)
    assert codes["INVALID_INPUT"] == poisoned(size), codes  # each poison note refused, typed
    assert set(codes) <= {"INVALID_INPUT", "CONFLICT"}, codes
    result = audit(settings, table, out.acknowledged)  # a fresh process loads; no gaps, no doubles
    assert not set(result.keys) & {key for key, _ in out.refused}, "a refused request was stored"
    assert served_hp(url, table) == result.hp  # what the API serves == a fresh fold of the store
    damage = sum(1 for key in result.keys if int(key.split("-")[1]) % 2)  # odd requests deal 1 damage
    assert result.hp == 100_000 - damage


def writers_on_one_campaign(
    settings: Settings, api_factory: Any, replicas: int, size: dict[str, int]
) -> None:
    apis: list[Api] = [api_factory(settings) for _ in range(replicas)]
    table = new_table(apis[0].url, "Crowd")
    started = time.monotonic()
    loads = [
        Load(
            api.url, table, size["writers"] // replicas, size["per_writer"], size["poison"], name=f"r{n}"
        ).start()
        for n, api in enumerate(apis)
    ]
    outs = [load.join() for load in loads]
    merged = Outcomes()
    for out in outs:
        merged.acknowledged += out.acknowledged
        merged.refused += out.refused
        merged.unexpected += out.unexpected
        merged.unavailable += out.unavailable
    report(f"{replicas} replica(s) on {settings.database.kind}", merged, started, **size)
    assert len(merged.acknowledged) + len(merged.refused) == size["writers"] * size["per_writer"]
    check(merged, settings, table, apis[0].url, size)


def test_concurrent_writers_on_sqlite(sqlite_store: Settings, api_factory: Any) -> None:
    writers_on_one_campaign(sqlite_store, api_factory, 1, FAST)


@pytest.mark.postgres
def test_concurrent_writers_on_two_postgresql_replicas(postgres_store: Settings, api_factory: Any) -> None:
    writers_on_one_campaign(postgres_store, api_factory, 2, FAST)


@pytest.mark.faults
@pytest.mark.timeout(1800)
def test_heavy_concurrent_writers_on_sqlite(sqlite_store: Settings, api_factory: Any) -> None:
    writers_on_one_campaign(sqlite_store, api_factory, 1, HEAVY)


@pytest.mark.faults
@pytest.mark.timeout(1800)
@pytest.mark.postgres
def test_heavy_concurrent_writers_on_two_postgresql_replicas(
    postgres_store: Settings, api_factory: Any
) -> None:
    writers_on_one_campaign(postgres_store, api_factory, 2, HEAVY)


# --- kill -9 --------------------------------------------------------------------------------
def killed_mid_load(settings: Settings, tmp_path: Path, size: dict[str, int], kills: int) -> None:
    current = [Api(settings, tmp_path / "api-0").start()]
    try:
        table = new_table(current[0].url, "Killed")
        # A second campaign, quiet during the load, that once had a poison note sent to it.
        quiet = new_table(current[0].url, "Quiet")
        quiet_load = Load(current[0].url, quiet, writers=1, per_writer=4, poison=1).start().join()
        started = time.monotonic()
        load = Load(lambda: current[-1].url, table, **size).start()
        total = size["writers"] * size["per_writer"]
        for n in range(kills):
            while len(load.out.acknowledged) < total * (n + 1) // (kills + 2):
                time.sleep(0.05)
            current[-1].kill()  # SIGKILL in the middle of the load
            current.append(Api(settings, tmp_path / f"api-{n + 1}").start())  # a fresh process takes over
        out = load.join()
        report(f"kill -9 x{kills} on {settings.database.kind}", out, started, **size)
        assert out.acknowledged, "nothing was acknowledged"
        check(out, settings, table, current[-1].url, size)  # a fresh process loads every campaign:
        check(quiet_load, settings, quiet, current[-1].url, {"writers": 1, "per_writer": 4, "poison": 1})
    finally:
        current[-1].stop()


def test_kill_9_of_the_api_mid_load_on_sqlite(sqlite_store: Settings, tmp_path: Path) -> None:
    killed_mid_load(sqlite_store, tmp_path, FAST, kills=1)


@pytest.mark.faults
@pytest.mark.timeout(1800)
@pytest.mark.postgres
def test_kill_9_of_the_api_mid_load_on_postgresql(postgres_store: Settings, tmp_path: Path) -> None:
    killed_mid_load(postgres_store, tmp_path, FAST, kills=1)


@pytest.mark.faults
@pytest.mark.timeout(1800)
def test_heavy_kill_9_of_the_api_on_sqlite(sqlite_store: Settings, tmp_path: Path) -> None:
    killed_mid_load(sqlite_store, tmp_path, HEAVY, kills=3)


@pytest.mark.faults
@pytest.mark.timeout(1800)
@pytest.mark.postgres
def test_heavy_kill_9_of_the_api_on_postgresql(postgres_store: Settings, tmp_path: Path) -> None:
    killed_mid_load(postgres_store, tmp_path, HEAVY, kills=3)


# --- PostgreSQL backends terminated, PostgreSQL restarted ----------------------------------------
def backends_terminated(
    postgres_store: Settings,
    pg_proxy: tuple[Settings, Proxy],
    api_factory: Any,
    size: dict[str, int],
    max_rounds: int,
) -> None:
    """Every second, all of the server's PostgreSQL backends are terminated (as an operator's
    ``pg_terminate_backend``, a failover or a pooler restart would)."""
    settings, proxy = pg_proxy
    api: Api = api_factory(settings)
    table = new_table(api.url, "Terminated")
    started = time.monotonic()
    load = Load(api.url, table, **size).start()
    terminated = rounds = 0
    while any(t.is_alive() for t in load.threads) and rounds < max_rounds:
        time.sleep(1.0)
        terminated += terminate_backends(postgres_store, proxy)  # only this test's server's backends
        rounds += 1
    out = load.join()
    report("pg_terminate_backend under load", out, started, terminated=terminated, rounds=rounds, **size)
    assert terminated > 0
    check(out, postgres_store, table, api.url, size)


@pytest.mark.postgres
def test_backends_terminated_under_load(
    postgres_store: Settings, pg_proxy: tuple[Settings, Proxy], api_factory: Any
) -> None:
    backends_terminated(postgres_store, pg_proxy, api_factory, FAST, max_rounds=5)


@pytest.mark.faults
@pytest.mark.timeout(1800)
@pytest.mark.postgres
def test_heavy_backends_terminated_under_load(
    postgres_store: Settings, pg_proxy: tuple[Settings, Proxy], api_factory: Any
) -> None:
    backends_terminated(postgres_store, pg_proxy, api_factory, HEAVY, max_rounds=10_000)


def restart_postgres() -> None:
    clusters = sorted(p.name for p in Path("/etc/postgresql").iterdir())
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", clusters[-1], "main", "restart"],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.faults
@pytest.mark.timeout(1800)
@pytest.mark.postgres
def test_postgresql_restarted_under_load(postgres_store: Settings, api_factory: Any) -> None:
    """Restarts the shared server: ``make faults`` only (never in ``make test``)."""
    if not Path("/etc/postgresql").is_dir():
        pytest.skip("no local PostgreSQL cluster to restart (pg_ctlcluster)")
    api: Api = api_factory(postgres_store)
    table = new_table(api.url, "Restarted")
    started = time.monotonic()
    load = Load(api.url, table, **HEAVY).start()
    restarts = 0
    for share in (4, 2):
        while len(load.out.acknowledged) < HEAVY["writers"] * HEAVY["per_writer"] // share:
            time.sleep(0.05)
        restart_postgres()
        restarts += 1
    out = load.join()
    report("PostgreSQL restarted under load", out, started, restarts=restarts, **HEAVY)
    check(out, postgres_store, table, api.url, HEAVY)
