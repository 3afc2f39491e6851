"""The printable HTML export in headless Chromium: it renders, every character has its timeline
SVG, the charts' labels as the browser lays them out never overlap or leave their chart, and
screenshots are produced (kept under the test's tmp dir and $CHRONICLE_ARTIFACTS, not compared)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from api.exports import render, service
from api.exports.source import CampaignSource
from api.exports.story import Selection
from api.service.demo import create_demo
from tests.conftest import in_ci
from tests.e2e.browser import keep_artifact
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
    keep_artifact(shot)


# Every chart's labels, as Chromium lays them out: the boxes (getBBox, in the chart's own units)
# of labels that overlap each other or leave the viewBox.
CLASHES = """(() => {
  const found = [];
  let charts = 0, texts = 0;
  for (const svg of document.querySelectorAll('svg')) {
    charts += 1;
    const vb = svg.viewBox.baseVal;
    const boxes = [...svg.querySelectorAll('text')].map(t => {
      const b = t.getBBox();
      const text = [...t.childNodes].filter(n => n.nodeType === 3).map(n => n.data).join('');
      return {text, x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height};
    });
    texts += boxes.length;
    const name = svg.getAttribute('data-character') || svg.getAttribute('data-encounter');
    for (const b of boxes) {
      if (b.x0 < -0.5 || b.y0 < -0.5 || b.x1 > vb.width + 0.5 || b.y1 > vb.height + 0.5)
        found.push(`${name}: "${b.text}" leaves the chart`);
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.x0 < b.x1 - 0.5 && b.x0 < a.x1 - 0.5 && a.y0 < b.y1 - 0.5 && b.y0 < a.y1 - 0.5)
        found.push(`${name}: "${a.text}" overlaps "${b.text}"`);
    }
  }
  return {charts, texts, found: found.slice(0, 20)};
})()"""


@pytest.mark.e2e
@pytest.mark.slow
def test_chart_labels_as_chromium_draws_them_never_overlap_or_leave_the_chart(tmp_path: Path) -> None:
    """The demo and a long generated campaign (thousands of facts, dozens of encounters): every
    label of every chart, measured by the browser. Screenshots are kept as artefacts."""
    from bench.generator import CampaignGenerator
    from tests.e2e.browser import offline_page

    gen = CampaignGenerator(3000, seed=5)
    for _ in gen.facts():
        pass
    long = CampaignSource("A long campaign", "stellar-winds", {}, {}, gen.ledger)
    pages = {"long": "".join(render.html_page(long, Selection(long.first, long.last)))}
    app = memory_application()
    try:
        pages["demo"] = "".join(service.export(app, create_demo(app), "html"))
    finally:
        app.close()
    with offline_page(tmp_path, width=1100, height=1800) as (page, _proxy):
        for name, text in pages.items():
            path = tmp_path / f"{name}.html"
            path.write_text(text, encoding="utf-8")
            page.goto(path.as_uri())
            measured = page.evaluate(CLASHES)
            assert measured["charts"] >= (20 if name == "long" else 4), measured
            assert measured["texts"] > 10 * measured["charts"], measured
            assert measured["found"] == [], measured["found"]
            shot = tmp_path / f"export-{name}.png"
            page.screenshot(shot)
            keep_artifact(shot)
            page.evaluate("document.getElementById('encounters').scrollIntoView()")
            shot = tmp_path / f"export-{name}-encounters.png"
            page.screenshot(shot)
            keep_artifact(shot)
