"""The printable HTML export in headless Chromium: it renders, every character has its timeline
SVG, and a screenshot is produced (kept under the test's tmp dir as an artefact, not compared)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from api.exports import service
from api.service.demo import create_demo
from tests.conftest import in_ci
from tests.unit.conftest import memory_application

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing (Debian package chromium; `make test` installs it when run as root)"
        if in_ci():
            pytest.fail(f"{reason}; CI=true requires it", pytrace=False)
        pytest.skip(reason)
    return CHROMIUM


def _run(chromium: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(tmp_path)}
    return subprocess.run(
        [str(chromium), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env=env,
        check=False,
    )


@pytest.mark.e2e
@pytest.mark.slow
def test_the_printable_page_renders_with_a_timeline_per_character(chromium: Path, tmp_path: Path) -> None:
    app = memory_application()
    try:
        cid = create_demo(app)
        page = tmp_path / "demo.html"
        page.write_text("".join(service.export(app, cid, "html")), encoding="utf-8")
        characters = [c for c, v in app.summary(cid)["creatures"].items() if v["kind"] == "pc"]
    finally:
        app.close()
    dom = _run(chromium, tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<h1>Stellar Winds demo: Ambush at Kestrel Relay</h1>" in dom.stdout
    for cid in characters:
        assert f'data-character="{cid}"' in dom.stdout, f"no timeline SVG for {cid}"
    assert dom.stdout.count('class="timeline-svg"') == len(characters) == 3
    shot = tmp_path / "demo.png"
    done = _run(
        chromium,
        tmp_path,
        f"--screenshot={shot}",
        "--window-size=1200,2400",
        "--hide-scrollbars",
        page.as_uri(),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
