"""A real ``chronicle worker`` process on PostgreSQL: killed mid catch-up, cut off from the
database while following; it must neither lose nor double a row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from projections.storage import ViewStore

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

REPO = Path(__file__).resolve().parents[2]
# this test run's workers only: several runs (and other tools) may share the database
APP_NAME = f"chronicle-test-worker-{os.getpid()}"
ABILITIES = {"str": 12, "con": 14, "dex": 14, "int": 10, "wis": 10, "cha": 10}
DEFENSES = {"ac": 18, "fort": 15, "ref": 15, "will": 14}


def chronicle(store: Settings, command: str, batch_size: int) -> subprocess.Popen[bytes]:
    """``chronicle <command> --batch-size N`` (worker, rebuild) on ``store``, as this run's app."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")}
    env.update(CHRONICLE_DATABASE_URL=store.database_url, PGAPPNAME=APP_NAME, CHRONICLE_LOG_LEVEL="warning")
    return subprocess.Popen(
        [sys.executable, "-m", "api.cli.main", command, "--batch-size", str(batch_size)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def worker(store: Settings, batch_size: int) -> subprocess.Popen[bytes]:
    return chronicle(store, "worker", batch_size)


def stop(process: subprocess.Popen[bytes]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.stdout is not None
    return process.stdout.read().decode(errors="replace")


def until(check: Callable[[], bool], timeout: float = 60, interval: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(interval)


def fill(app: ChronicleApplication, campaigns: int, facts: int) -> list[UUID]:
    """``campaigns`` campaigns of about ``facts`` facts each, with corrections, written in bulk."""
    ids = []
    for c in range(campaigns):
        cid = app.create_campaign(f"Bulk {c}")
        StellarWindsCommands(app).register_creature(
            cid,
            creature_id="vex",
            name="Vex",
            kind="pc",
            level=5,
            abilities=ABILITIES,
            max_hp=10_000,
            surges_per_day=3,
            defenses=DEFENSES,
        )
        chunk = [
            ("DamageTaken", {"target": "vex", "amount": 2}),
            ("HealingApplied", {"target": "vex", "flat": 1}),
            ("TimeAdvanced", {"minutes": 1}),
            ("NoteAdded", {"text": "the wind rises"}),
        ]
        for _ in range(facts // 100):
            app.record_many(cid, chunk * 25)
        for target in (10, 50, 90):
            app.revoke(cid, target, "misread die")
        app.amend(cid, 12, {"flat": 7}, "it was a 7")
        ids.append(cid)
    return ids


@pytest.fixture
def filled(postgres_store: Settings) -> Iterator[tuple[Settings, ChronicleApplication]]:
    app = open_application(postgres_store)
    try:
        fill(app, campaigns=3, facts=1000)
        yield postgres_store, app
    finally:
        app.close()


def tracking(views: ViewStore) -> int:
    return views.tracking_position()


def dump_and_count(views: ViewStore) -> tuple[dict[str, list[dict[str, Any]]], int]:
    dump = views.dump(written_at=False)
    return dump, len(dump["view_facts"])


def test_kill_9_mid_catch_up_then_restart(filled: tuple[Settings, ChronicleApplication]) -> None:
    store, app = filled
    head = app.recorder.max_notification_id()
    assert head is not None and head > 3000
    views = wiring.open_views(store)
    try:
        process = worker(store, batch_size=100)
        try:
            until(lambda: tracking(views) > 0, interval=0.002)
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
        finally:
            stop(process)
        partial = tracking(views)
        assert 0 < partial < head, f"killed too late or too early: {partial} of {head}"
        facts = views.dump()["view_facts"]
        assert max(f["notification_id"] for f in facts) <= partial  # nothing beyond the tracking position

        process = worker(store, batch_size=100)
        try:
            until(lambda: tracking(views) == head)
        finally:
            stop(process)
        incremental, count = dump_and_count(views)
        keys = [(f["campaign_id"], f["position"]) for f in incremental["view_facts"]]
        assert len(keys) == len(set(keys)) == head - 3  # one row per fact (Started is no fact)
        ids = {f["notification_id"] for f in incremental["view_facts"]}
        assert len(ids) == count and ids <= set(range(1, head + 1))
        wiring.rebuild(store, application=app)
        assert views.dump(written_at=False) == incremental
    finally:
        views.close()


def test_worker_survives_losing_its_connections(postgres_store: Settings) -> None:
    app = open_application(postgres_store)
    views = wiring.open_views(postgres_store)
    db = postgres_store.database
    process = worker(postgres_store, batch_size=500)
    try:
        cid = app.create_campaign("Flaky network")
        StellarWindsCommands(app).register_creature(
            cid,
            creature_id="vex",
            name="Vex",
            kind="pc",
            level=5,
            abilities=ABILITIES,
            max_hp=100,
            surges_per_day=3,
            defenses=DEFENSES,
        )
        until(lambda: tracking(views) == app.recorder.max_notification_id())
        mine = views._fetch("SELECT pg_backend_pid() AS pid")[0]["pid"]  # the test's own view connection
        with psycopg.connect(
            host=db.host, port=db.port, user=db.user, dbname=db.dbname, autocommit=True
        ) as conn:
            for _ in range(2):
                killed = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE pid NOT IN (pg_backend_pid(), %s) "
                    "AND application_name IN (%s, %s, %s)",
                    (mine, APP_NAME, f"chronicle-views ({APP_NAME})", f"chronicle-listen ({APP_NAME})"),
                ).fetchall()
                assert killed, "the worker had no connection to cut"
                StellarWindsCommands(app).deal_damage(cid, "vex", amount=3)
                until(lambda: tracking(views) == app.recorder.max_notification_id(), timeout=30)
        vex = views.get_creature(str(cid), "vex")
        assert vex is not None and vex["hp"] == 94
        assert process.poll() is None, "the worker died"
    finally:
        output = stop(process)
        views.close()
        app.close()
    assert "retrying" in output or "LISTEN connection lost" in output, output


def test_kill_9_mid_rebuild_of_one_campaign_then_resume(postgres_store: Settings) -> None:
    """``chronicle rebuild`` of one campaign commits the history and log rows while it folds (a
    writer thread) and the creature and encounter rows last: killed in the middle, every
    projection's rows are exactly those of its own tracking position -- no row past it, none
    missing below it, no creature row before the state is committed -- and a follower resumes
    from there to the rows of an uninterrupted rebuild."""
    app = open_application(postgres_store)
    views = wiring.open_views(postgres_store)
    try:
        fill(app, campaigns=1, facts=4000)
        head = app.recorder.max_notification_id()
        assert head is not None and head > 4000
        wiring.rebuild(postgres_store, application=app, overlap=False)
        whole = views.dump(written_at=False)
        process = chronicle(postgres_store, "rebuild", batch_size=100)
        try:
            until(lambda: 0 < views.tracking()["facts"] < head, interval=0.002)
            os.kill(process.pid, signal.SIGKILL)
            process.wait(10)
        finally:
            stop(process)
        at = views.tracking()
        assert 0 < at["facts"] < head, f"killed too late: {at} of {head}"
        dump = views.dump()
        for table, projection in (("view_facts", "facts"), ("view_log", "log")):
            ids = sorted(r["notification_id"] for r in dump[table])
            assert ids == list(range(2, at[projection] + 1)), table  # the creation (1) is no fact
        for table, projection in (("view_creatures", "creatures"), ("view_encounters", "encounters")):
            assert at[projection] in (0, head)
            if at[projection] == 0:
                assert dump[table] == [], table
        resumed = wiring.follower(postgres_store)
        try:
            resumed.catch_up()
        finally:
            resumed.close()
        assert views.tracking() == dict.fromkeys(at, head)
        assert views.dump(written_at=False) == whole
    finally:
        views.close()
        app.close()
