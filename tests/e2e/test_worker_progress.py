"""``chronicle worker`` catching up says how far it is (a real process on an SQLite store, its
output going to files as under a supervisor: log lines, no bar)."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.cli.process import clean_env, start, wait_until
from api.service.auth import AccessControl
from api.service.demo import create_demo
from api.service.settings import Settings
from api.service.store import open_application

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_the_worker_reports_its_catch_up_then_follows(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store' / 'chronicle.sqlite'}"
    application = open_application(Settings(database_url=url))
    try:
        for _ in range(3):
            # tokens too: their events share the log, and the worker must read them like the rest
            AccessControl(application).grant_gm(create_demo(application))
        head = application.recorder.max_notification_id()
    finally:
        application.close()
    assert head is not None and head > 100
    env = clean_env(CHRONICLE_DATABASE_URL=url, CHRONICLE_LOG_FORMAT="json")
    proc = start("worker", ["worker", "--batch-size", "20"], env, tmp_path / "logs")
    try:
        wait_until(lambda: "Caught up:" in proc.stdout.read_text(), "the worker to catch up", proc=proc)
    finally:
        code = proc.terminate()
    assert code == 0, proc.logs()
    lines = proc.json_lines()
    catching = [line for line in lines if line["message"].startswith("catching up: ")]
    caught = [line for line in lines if line["message"].startswith("caught up: ")]
    assert catching, proc.logs()  # said something while it worked, not only at the end
    assert catching[0]["done"] == 20 and catching[0]["total"] == head  # after the first batch
    assert len(caught) == 1 and caught[0]["events"] == head, proc.logs()
    assert f"Caught up: {head:,} events in " in proc.stdout.read_text()
