"""``chronicle demo``, ``chronicle export`` and ``chronicle import`` on an SQLite store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli.main import app


def test_demo_export_import_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", f"sqlite:///{tmp_path / 'store.sqlite'}")
    runner = CliRunner()
    made = runner.invoke(app, ["demo"])
    assert made.exit_code == 0, made.output
    cid = re.search(r"Demo campaign ([0-9a-f-]{36})", made.output).group(1)  # type: ignore[union-attr]
    first = tmp_path / "demo.jsonl"
    out = runner.invoke(app, ["export", cid, "--format", "jsonl", "-o", str(first)])
    assert out.exit_code == 0, out.output
    imported = runner.invoke(app, ["import", str(first)])
    assert imported.exit_code == 0, imported.output
    new = re.search(r"as campaign ([0-9a-f-]{36})", imported.output).group(1)  # type: ignore[union-attr]
    again = runner.invoke(app, ["export", new, "--format", "jsonl"])
    assert again.exit_code == 0 and again.stdout == first.read_text(encoding="utf-8")
    md = runner.invoke(app, ["export", new, "--format", "md", "--encounter", "relay-ambush"])
    assert md.exit_code == 0 and "## Encounter: Ambush at the relay station" in md.stdout

    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        "".join(first.read_text(encoding="utf-8").splitlines(keepends=True)[:30]), encoding="utf-8"
    )
    refused = runner.invoke(app, ["import", str(broken)])
    assert refused.exit_code == 65
    assert "line 31: the file ends after 29 facts without the trailer line" in refused.output
    assert "nothing stored" in refused.output
    unknown = runner.invoke(app, ["export", cid, "--encounter", "nope"])
    assert unknown.exit_code == 66 and "no encounter 'nope'" in unknown.output


def test_the_demo_prints_a_gm_token_that_opens_the_campaign(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uuid import UUID

    from api.service.auth import AccessControl
    from api.service.settings import Settings
    from api.service.store import open_application

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    monkeypatch.setenv("CHRONICLE_DATABASE_URL", url)
    runner = CliRunner()
    made = runner.invoke(app, ["demo"])
    assert made.exit_code == 0, made.output
    cid = UUID(re.search(r"Demo campaign ([0-9a-f-]{36})", made.output).group(1))  # type: ignore[union-attr]
    token = re.search(r"GM token \(shown once; keep it\): (\S+)", made.output).group(1)  # type: ignore[union-attr]
    minted = runner.invoke(app, ["token", str(cid)])
    assert minted.exit_code == 0, minted.output
    application = open_application(Settings(database_url=url))
    try:
        access = AccessControl(application)
        for t in (token, minted.stdout.strip()):
            who = access.authenticate(t)
            assert who is not None and who.campaign_id == cid and who.is_gm
    finally:
        application.close()
