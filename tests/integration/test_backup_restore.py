"""Backups, restored (docs/operations.md, "Backups"):

(a) ``chronicle export --format jsonl`` of a campaign, ``chronicle import`` into a fresh store:
    the same state (the CLI commands an operator runs, as processes);
(b) ``pg_dump`` of a schema, restored into another schema with ``pg_restore`` + ``psql``: the
    application on the restored schema reads the same campaign, its read models too, and
    keeps writing (sequences restored). Skipped with a reason when the PostgreSQL client
    binaries are absent; under CI=true they are required if present on the machine (they are
    then used, never skipped).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from psycopg import sql

from api.service import views as wiring
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Database, Settings
from api.service.store import open_application
from projections.runner import Follower
from tests.conftest import connect, with_schema

REPO = Path(__file__).resolve().parents[2]


def chronicle(store: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")}
    env["CHRONICLE_DATABASE_URL"] = store.database_url
    result = subprocess.run(
        [sys.executable, "-m", "api.cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"chronicle {' '.join(args)}: {result.stdout}\n{result.stderr}"
    return result


def state(app: ChronicleApplication, cid: UUID) -> dict[str, Any]:
    summary = app.summary(cid)
    return {k: summary[k] for k in ("creatures", "encounters", "position")}


def test_jsonl_export_imported_into_a_fresh_store_gives_the_same_state(
    sqlite_store: Settings, tmp_path: Path
) -> None:
    app = open_application(sqlite_store)
    try:
        cid = create_demo(app)
        before = state(app, cid)
    finally:
        app.close()
    dump = tmp_path / "backup" / f"{cid}.jsonl"
    dump.parent.mkdir()
    chronicle(sqlite_store, "export", str(cid), "--format", "jsonl", "--output", str(dump))

    fresh = Settings(database_url=f"sqlite:///{tmp_path / 'restored' / 'chronicle.sqlite'}")
    out = chronicle(fresh, "import", str(dump)).stdout
    match = re.search(r"as campaign ([0-9a-f-]{36})", out)
    assert match, out
    restored = open_application(fresh)
    try:
        assert state(restored, UUID(match.group(1))) == before
    finally:
        restored.close()


def _binaries() -> dict[str, str]:
    found = {name: shutil.which(name) for name in ("pg_dump", "pg_restore", "psql")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        pytest.skip(
            f"PostgreSQL client binaries not installed: {', '.join(missing)} (apt-get install "
            "postgresql-client); the backup procedure in docs/operations.md needs them"
        )
    return {name: str(path) for name, path in found.items()}


def _libpq_env(db: Database) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PGHOST=db.host, PGPORT=str(db.port), PGUSER=db.user, PGDATABASE=db.dbname)
    if db.password:
        env["PGPASSWORD"] = db.password
    return env


@pytest.mark.postgres
def test_pg_dump_of_a_schema_restored_into_another_schema(
    postgres_database: tuple[str, Database], postgres_store: Settings, tmp_path: Path
) -> None:
    tools = _binaries()
    url, db = postgres_database
    source = postgres_store.database.schema
    app = open_application(postgres_store)
    try:
        cid = create_demo(app)
        views = wiring.open_views(postgres_store)
        Follower(app, views).catch_up()
        before, before_views = state(app, cid), views.list_creatures(str(cid))
        views.close()
    finally:
        app.close()

    env = _libpq_env(db)
    archive = tmp_path / "chronicle.dump"
    # The backup, as docs/operations.md gives it (custom format, one schema, no owners).
    subprocess.run(
        [tools["pg_dump"], "--format=custom", "--no-owner", f"--schema={source}", f"--file={archive}"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    # Restore into ANOTHER schema of the same database: pg_restore writes the SQL, the schema's
    # (random, unique) name is replaced, psql runs it. (Into an empty database, operators
    # simply run `pg_restore --dbname=...`.)
    script = subprocess.run(
        [tools["pg_restore"], "--no-owner", "--file=-", str(archive)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    target = f"r_{uuid.uuid4().hex[:12]}"
    renamed = re.sub(rf"\b{re.escape(source)}\b", target, script)
    assert renamed.count(target) > 3
    try:
        subprocess.run(
            [tools["psql"], "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1", "--file=-"],
            input=renamed,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        restored_settings = Settings(database_url=with_schema(url, target))
        restored = open_application(restored_settings)
        try:
            assert state(restored, cid) == before
            views = wiring.open_views(restored_settings)
            try:
                assert views.list_creatures(str(cid)) == before_views
            finally:
                views.close()
            # The restored store keeps working: a new fact gets the next notification id.
            head = restored.recorder.max_notification_id()
            restored.advance_time(cid, 10)
            assert restored.recorder.max_notification_id() == (head or 0) + 1
        finally:
            restored.close()
    finally:
        with connect(db) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(target)))
