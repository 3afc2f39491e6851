"""The HTML export's charts stay readable however long the campaign (issue 20): on a long
generated campaign no two labels overlap and none leaves its chart, tracks that changed more
often than there is room for are aggregated, marks are thinned into lanes, both axes are
labelled, and every encounter gets its own chart by round.

Label boxes are estimated here independently of the layout code: 0.6 x the font size per
character, from a font size above the baseline to a quarter below. The browser's own text
boxes are checked in tests/e2e/test_export_browser.py."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pytest

from api.exports import charts, render
from api.exports.source import CampaignSource
from api.exports.story import Selection, digest
from bench.generator import CampaignGenerator
from tests.unit.conftest import memory_application
from tests.unit.d20.helpers import D20Table

SVG = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class Label:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    css: str

    def overlaps(self, other: Label) -> bool:
        return self.x0 < other.x1 and other.x0 < self.x1 and self.y0 < other.y1 and other.y0 < self.y1


def labels(svg: ET.Element) -> list[Label]:
    found = []
    for t in svg.iter(f"{SVG}text"):
        text = (t.text or "") + "".join((c.tail or "") for c in t)  # without the <title> tooltip
        size = float(t.get("font-size", "16"))
        x, y = float(t.get("x", "0")), float(t.get("y", "0"))
        width = 0.6 * size * len(text)
        anchor = t.get("text-anchor", "start")
        left = x if anchor == "start" else x - width if anchor == "end" else x - width / 2
        found.append(Label(text, left, y - size, left + width, y + size * 0.25, t.get("class", "")))
    return found


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(s) for s in re.findall(r"<svg .*?</svg>", page, re.S)]


def view_box(svg: ET.Element) -> tuple[float, float]:
    _, _, w, h = map(float, svg.get("viewBox", "").split())
    return w, h


def assert_readable(svg: ET.Element) -> None:
    width, height = view_box(svg)
    found = labels(svg)
    assert found, "a chart without any label"
    for label in found:
        assert label.x0 >= 0 and label.x1 <= width and label.y0 >= 0 and label.y1 <= height, (
            f"{label.text!r} leaves the chart {svg.get('class')} {svg.attrib}"
        )
    clashes = [(a.text, b.text) for a, b in combinations(found, 2) if a.overlaps(b)]
    assert clashes == [], f"labels overlap in {svg.attrib}: {clashes[:10]}"


@pytest.fixture(scope="module")
def long_campaign() -> tuple[CampaignSource, str]:
    gen = CampaignGenerator(10_000, seed=7)  # more HP changes per character than pixels to draw them
    for _ in gen.facts():
        pass
    source = CampaignSource("Long haul", "stellar-winds", {}, {}, gen.ledger)
    page = "".join(render.html_page(source, Selection(source.first, source.last)))
    return source, page


def test_no_label_overlaps_another_or_leaves_its_chart_on_a_long_campaign(
    long_campaign: tuple[CampaignSource, str],
) -> None:
    _, page = long_campaign
    found = svgs(page)
    assert len(found) > 20
    for svg in found:
        assert_readable(svg)


def test_each_encounter_has_its_own_chart_labelled_by_round(
    long_campaign: tuple[CampaignSource, str],
) -> None:
    source, page = long_campaign
    d = digest(source.ledger, Selection(source.first, source.last))
    per_encounter = [s for s in svgs(page) if s.get("class") == "encounter-svg"]
    assert [s.get("data-encounter") for s in per_encounter] == list(d.encounters)
    for svg in per_encounter:
        texts = [label.text for label in labels(svg)]
        assert "round" in texts and "1" in texts, texts  # the axis, and round 1 at least
        assert len(svg.findall(f".//{SVG}path[@data-character]")) >= 1  # a line per PC in it


def test_the_overview_aggregates_tracks_and_thins_marks_into_lanes(
    long_campaign: tuple[CampaignSource, str],
) -> None:
    _, page = long_campaign
    overviews = [s for s in svgs(page) if s.get("class") == "timeline-svg"]
    assert len(overviews) == 4  # the party
    for svg in overviews:
        width, _ = view_box(svg)
        # more changes than pixels to draw them: a band of the range and a line, never one step per change
        assert svg.findall(f".//{SVG}polygon[@class='range hp']"), "the HP track was not aggregated"
        for path in svg.findall(f".//{SVG}path"):
            assert path.get("d", "").count("H") <= width / charts.EXACT + 2
        # marks: one lane per kind, ticks at least MERGE pixels apart (close ones merged)
        lanes: dict[str, list[float]] = {}
        for tick in svg.findall(f".//{SVG}rect"):
            kind = tick.get("class", "")
            if kind.startswith("mark "):
                lanes.setdefault(kind, []).append(
                    float(tick.get("x", "0")) + float(tick.get("width", "0")) / 2
                )
        assert len(lanes) >= 3, lanes.keys()
        for kind, xs in lanes.items():
            xs.sort()
            assert all(b - a >= charts.MERGE for a, b in zip(xs, xs[1:], strict=False)), kind
        lane_names = [label.text for label in labels(svg) if label.css == "lane-label"]
        assert any(re.fullmatch(r"encounters \(\d+\)", n) for n in lane_names), lane_names
        assert len(lane_names) == len(lanes) + 1  # every lane is named, with its count
        # the x axis: positions with thousands separators, and its title
        ticks = [label.text for label in labels(svg) if re.fullmatch(r"#[\d,]+", label.text)]
        assert len(ticks) >= 3 and "position" in [label.text for label in labels(svg)]


def test_the_demo_charts_are_readable_with_every_mark_labelled() -> None:
    """Issue 20: "extended rest #75" was cut to "e" at the right edge and overlapped "short
    rest #69"; now each mark kind has its lane and its position label stays inside."""
    from api.service.demo import create_demo

    app = memory_application()
    try:
        page = "".join(render.html_page(*_source(app, create_demo(app))))
    finally:
        app.close()
    traze = next(s for s in svgs(page) if s.get("data-character") == "traze")
    assert_readable(traze)
    texts = [label.text for label in labels(traze)]
    for lane in ("dying (1)", "stabilized (1)", "short rest (1)", "extended rest (1)"):
        assert lane in texts
    assert {"#43", "#57", "#69", "#75"} <= set(texts)
    for svg in svgs(page):
        assert_readable(svg)


def test_close_thresholds_and_bounds_of_another_system_do_not_collide() -> None:
    """d20 house rules: HP with disabled at 0 and dying at -1, one unit apart, and Stamina."""
    app = memory_application()
    try:
        table = D20Table(app)
        table.creature("bram", max_hp=12)
        table.creature("cora", max_hp=9)
        for amount in (5, 4, 3, 2):
            table.damage("bram", amount)
        table.damage("cora", 10)
        page = "".join(render.html_page(*_source(app, table.cid)))
    finally:
        app.close()
    found = [s for s in svgs(page) if s.get("class") == "timeline-svg"]
    assert len(found) == 2
    for svg in found:
        assert_readable(svg)
        shown = [label.text for label in labels(svg)]
        assert "HP" in shown and "Stamina" in shown


def _source(app: Any, cid: Any) -> tuple[CampaignSource, Selection]:
    from api.exports.source import load, select

    source = load(app, cid)
    return source, select(source)
