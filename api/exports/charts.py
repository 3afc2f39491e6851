"""The HTML export's SVG charts, readable at any campaign length.

Two kinds, both drawn from the digest (``api.exports.story.digest``) and the ruleset's tracks
(one panel per track, with its thresholds), so nothing here knows a game system:

* :func:`overview_svg`: one character over the whole selection. The x axis is the position
  (fact number) with a few round labels ("#5,000"). When a track changed more often than the
  chart has room for, each stretch of a few pixels shows the range it covered (a band from its
  lowest to its highest value) and its last value (a line) instead of hundreds of steps.
  Encounters and the narrator's marks (rests, dying, deaths...) sit in lanes under the panels,
  one lane per kind with its count; marks close together merge into one tick whose tooltip
  lists them, and they are labelled with their positions only when there is room.
* :func:`encounter_svg`: one encounter, every player character in it as a line of its own
  colour, the x axis labelled by round ("S" for the surprise round).

Every label goes through :class:`Layout`, which places a label only where its box (estimated
from the font size and the characters, generously) stays inside the viewBox and overlaps no
label placed before it, trying the alternatives it is given (the other side of a tick, below a
line instead of above). A label that fits nowhere is left out; the tooltips (``<title>``) keep
the full information. ``tests/unit/test_export_charts.py`` checks the result on a long
generated campaign, and ``tests/e2e/test_export_browser.py`` with Chromium's own text boxes.
"""

from __future__ import annotations

import html
import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from api.exports.story import Digest, EncounterDigest, Series, Timeline

__all__ = [
    "CHARACTER_COLOURS",
    "FONT",
    "Layout",
    "encounter_svg",
    "nice_ticks",
    "overview_svg",
    "text_width",
]

WIDTH = 720
RIGHT = 12
FONT = 10  # labels
SMALL = 9  # lane labels, axis labels
PANEL = 64  # height of one track's plot in a character's overview
ENCOUNTER_PANEL = 44  # and in an encounter's chart (there is one per encounter)
TITLE = 15  # the row above a panel with its name
GAP = 10
LANE = 14
AXIS = 20
TRACK_COLOURS = ("#1e8449", "#a93226", "#2e86c1", "#7d3c98", "#b9770e", "#566573")
CHARACTER_COLOURS = ("#2e86c1", "#c0392b", "#1e8449", "#8e44ad", "#d68910", "#5d6d7e", "#e84393", "#16a085")
MARK_COLOURS = {
    "short rest": "#27ae60",
    "extended rest": "#1a5276",
    "dying": "#e67e22",
    "dead": "#000",
    "knocked out": "#7d3c98",
    "stabilized": "#7d3c98",
}
BAND = "#f3ead7"
LANE_FILL = "#d9c28f"
EXACT = 3.0  # at most one step per this many pixels is drawn exactly; more is aggregated
MERGE = 3.0  # marks closer than this many pixels share one tick
MARK_LABELS = 6  # an overview lane with more marks than this is not labelled mark by mark
GUIDES = 12  # marks drawn as vertical guides across the panels when there are at most this many


# ------------------------------------------------------------------ text boxes
# Advance widths in em, close to DejaVu Sans (the default sans-serif on Linux, one of the wider
# ones), rounded up; anything not listed counts as wide.
_EM: dict[str, float] = {}
for _chars, _w in (
    ("iljI'|", 0.30),
    (" .,:;!", 0.34),
    ("ftr()[]-/", 0.42),
    ('"', 0.46),
    ("†", 0.50),
    ("sczJ", 0.56),
    ("kvxyL", 0.60),
    ("aegoP", 0.62),
    ("bdhnpqu0123456789ST", 0.64),
    ("EFZ", 0.66),
    ("AKRVXY", 0.70),
    ("BCUN", 0.75),
    ("DGHOQ", 0.79),
    ("w&", 0.82),
    ("#+=×M", 0.86),
    ("%mW@", 1.0),
):
    for _c in _chars:
        _EM[_c] = _w


def text_width(text: str, size: float) -> float:
    """A generous estimate of the rendered width of ``text`` at ``size`` px (never below
    0.6 x size per character)."""
    em = sum(_EM.get(c, 0.9) for c in text)
    return max(em, 0.6 * len(text)) * size


@dataclass(frozen=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box, pad: float = 2.0) -> bool:
        return not (
            self.x1 + pad <= other.x0
            or other.x1 + pad <= self.x0
            or self.y1 + pad <= other.y0
            or other.y1 + pad <= self.y0
        )


def text_box(text: str, x: float, y: float, size: float, anchor: str = "start") -> Box:
    """The box a label takes: from a full font size above its baseline to a quarter below."""
    w = text_width(text, size)
    left = x if anchor == "start" else x - w if anchor == "end" else x - w / 2
    return Box(left, y - size, left + w, y + size * 0.25)


Spot = tuple[float, float, str]  # x, y, text-anchor


@dataclass
class Layout:
    """The labels of one chart: each placed only where it fits (see the module docstring)."""

    width: float
    height: float
    boxes: list[Box] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    def place(
        self,
        text: str,
        spots: Iterable[Spot],
        *,
        size: float = FONT,
        fill: str = "#333",
        css: str = "",
        title: str = "",
    ) -> bool:
        """Put ``text`` at the first of ``spots`` where it fits; False if none does."""
        for x, y, anchor in spots:
            box = text_box(text, x, y, size, anchor)
            if box.x0 < 0 or box.y0 < 0 or box.x1 > self.width or box.y1 > self.height:
                continue
            if any(box.overlaps(b) for b in self.boxes):
                continue
            self.boxes.append(box)
            cls = f' class="{css}"' if css else ""
            tip = f"<title>{_h(title)}</title>" if title else ""
            self.parts.append(  # a white halo keeps it legible over the lines under it
                f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" text-anchor="{anchor}" '
                f'fill="{fill}" stroke="#fff" stroke-width="3" paint-order="stroke"{cls}>'
                f"{tip}{_h(text)}</text>"
            )
            return True
        return False


def _h(text: str) -> str:
    return html.escape(text)


def _n(v: float) -> str:
    """A coordinate, short: 12, 12.5."""
    r = round(v, 1)
    return str(int(r)) if r == int(r) else str(r)


def nice_ticks(lo: float, hi: float, most: int) -> list[int]:
    """Round values (multiples of 1, 2 or 5 x 10^k) from ``lo`` to ``hi``, at most ``most``."""
    if hi <= lo or most < 2:
        return [int(lo)]
    raw = (hi - lo) / (most - 1)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next((m * power for m in (1, 2, 5, 10) if m * power >= raw), 10 * power)
    step = max(1, int(step))
    first = math.ceil(lo / step) * step
    return list(range(int(first), int(hi) + 1, step))


# ------------------------------------------------------------------ scales and series
@dataclass(frozen=True)
class XScale:
    x0: int
    x1: int
    left: float
    right: float

    def __call__(self, seq: float) -> float:
        span = max(1, self.x1 - self.x0)
        return self.left + (min(max(seq, self.x0), self.x1) - self.x0) * (self.right - self.left) / span


@dataclass(frozen=True)
class YScale:
    lo: int
    hi: int
    top: float
    height: float = PANEL

    def __call__(self, v: float) -> float:
        return self.top + self.height - (v - self.lo) * self.height / max(1, self.hi - self.lo)


def window(points: Sequence[tuple[int, int]], x0: int, x1: int) -> list[tuple[int, int]]:
    """The step function's points from ``x0`` to ``x1``: the value held at ``x0`` (if any)
    and every change after it."""
    i = bisect_right(points, (x0, math.inf))
    out = [(x0, points[i - 1][1])] if i > 0 else []
    j = bisect_right(points, (x1, math.inf))
    out.extend(p for p in points[i:j] if p[0] > x0)
    return out


def _step_path(points: list[tuple[int, int]], xs: XScale, ys: YScale, x_end: int) -> str:
    d = [f"M{_n(xs(points[0][0]))},{_n(ys(points[0][1]))}"]
    for seq, v in points[1:]:
        d.append(f"H{_n(xs(seq))}V{_n(ys(v))}")
    d.append(f"H{_n(xs(x_end))}")
    return "".join(d)


def _aggregate(points: list[tuple[int, int]], xs: XScale, ys: YScale, colour: str, key: str) -> list[str]:
    """Too many steps for the width: per stretch of EXACT pixels, the range it covered (a band)
    and the value it ended on (a line)."""
    plot = xs.right - xs.left
    n = max(1, int(plot / EXACT))
    span = max(1, xs.x1 - xs.x0)
    lows: list[int] = []
    highs: list[int] = []
    lasts: list[int] = []
    i = 0
    value = points[0][1]
    for b in range(n):
        end = xs.x0 + span * (b + 1) / n
        lo = hi = value
        while i < len(points) and points[i][0] <= end:
            value = points[i][1]
            lo, hi = min(lo, value), max(hi, value)
            i += 1
        lows.append(lo)
        highs.append(hi)
        lasts.append(value)
    edge = [xs.left + plot * b / n for b in range(n + 1)]
    top = " ".join(f"{_n(edge[b])},{_n(ys(h))} {_n(edge[b + 1])},{_n(ys(h))}" for b, h in enumerate(highs))
    bottom = " ".join(
        f"{_n(edge[b + 1])},{_n(ys(lo))} {_n(edge[b])},{_n(ys(lo))}"
        for b, lo in reversed(list(enumerate(lows)))
    )
    line = f"M{_n(edge[0])},{_n(ys(lasts[0]))}" + "".join(
        f"H{_n(edge[b])}V{_n(ys(v))}" for b, v in enumerate(lasts) if b
    )
    line += f"H{_n(edge[-1])}"
    return [
        f'<polygon points="{top} {bottom}" fill="{colour}" fill-opacity="0.22" stroke="none" '
        f'class="range {_h(key)}"><title>range in each stretch</title></polygon>',
        f'<path d="{line}" fill="none" stroke="{colour}" stroke-width="1.2" class="track {_h(key)}"/>',
    ]


def _y_scale(
    values: Iterable[int], floor: int | None, ceiling: int | None, thresholds: Iterable[int]
) -> tuple[int, int]:
    vals = list(values)
    lo = min([0 if floor is None else floor, *vals, *thresholds])
    hi = max([lo + 1, ceiling or 0, *vals])
    return lo, hi


def _y_axis(layout: Layout, parts: list[str], ys: YScale, left: float, right: float) -> None:
    """Grid lines and labels at the bounds first, then at round values between where they fit."""
    most = max(2, int(ys.height // (FONT * 1.5)) + 1)
    ticks = [ys.hi, ys.lo, *(v for v in nice_ticks(ys.lo, ys.hi, most) if v not in (ys.lo, ys.hi))]
    for v in ticks:
        y = ys(v)
        if layout.place(str(v), [(left - 4, y + FONT * 0.35, "end")], size=FONT, fill="#555", css="y-tick"):
            parts.append(
                f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(y)}" y2="{_n(y)}" stroke="#e2e2e2"/>'
            )


def _thresholds(
    layout: Layout,
    parts: list[str],
    ys: YScale,
    left: float,
    right: float,
    thresholds: Iterable[tuple[str, int]],
) -> None:
    for label, v in thresholds:
        y = ys(v)
        parts.append(
            f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(y)}" y2="{_n(y)}" stroke="#bbb" '
            f'stroke-dasharray="3 3" class="threshold"><title>{_h(label)} at {v}</title></line>'
        )
        layout.place(
            label,
            [(right - 2, y - 2, "end"), (right - 2, y + FONT + 1, "end")],
            size=SMALL,
            fill="#888",
            css="threshold-label",
            title=f"{label} at {v}",
        )


@dataclass
class _Tick:
    x: float
    seqs: list[int]
    colour: str
    who: str = ""


def _merge(ticks: list[_Tick]) -> list[_Tick]:
    """Marks closer than MERGE pixels become one tick (the first one's place and colour)."""
    out: list[_Tick] = []
    for t in sorted(ticks, key=lambda t: t.x):
        if out and t.x - out[-1].x < MERGE:
            out[-1].seqs.extend(t.seqs)
            if out[-1].who != t.who:
                out[-1].who = ""
        else:
            out.append(_Tick(t.x, list(t.seqs), t.colour, t.who))
    return out


def _seq_list(seqs: list[int], most: int = 12) -> str:
    shown = ", ".join(f"#{s}" for s in seqs[:most])
    return shown + (f" and {len(seqs) - most} more" if len(seqs) > most else "")


def _lane(
    layout: Layout,
    parts: list[str],
    y: float,
    left: float,
    kind: str,
    ticks: list[_Tick],
    label_each: bool,
) -> None:
    """One lane of marks of one kind: its name and count in the margin, a tick per mark (or per
    group of close marks), each labelled with its position (or who) where there is room."""
    count = sum(len(t.seqs) for t in ticks)
    colour = MARK_COLOURS.get(kind, "#555")
    layout.place(f"{kind} ({count})", [(left - 4, y + 9.5, "end")], size=SMALL, fill=colour, css="lane-label")
    merged = _merge(ticks)
    for t in merged:
        who = f"{t.who} " if t.who else ""
        tip = f"{who}{kind} at {_seq_list(t.seqs)}"
        width = 2.0 if len(t.seqs) == 1 else 3.0
        parts.append(
            f'<rect x="{_n(t.x - width / 2)}" y="{_n(y + 2)}" width="{_n(width)}" height="9" '
            f'fill="{t.colour}" '
            f'class="mark {_h(kind.replace(" ", "-"))}"><title>{_h(tip)}</title></rect>'
        )
    if label_each:
        for t in merged:
            text = (t.who or f"#{t.seqs[0]}") + (f" +{len(t.seqs) - 1}" if len(t.seqs) > 1 else "")
            layout.place(
                text,
                [(t.x + 3, y + 9.5, "start"), (t.x - 3, y + 9.5, "end")],
                size=SMALL,
                fill=t.colour,
                css="mark-label",
            )


def _svg(cls: str, data: str, width: float, height: float, label: str, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" {data} '
        f'viewBox="0 0 {_n(width)} {_n(height)}" '
        f'font-family="DejaVu Sans, Verdana, sans-serif" role="img" aria-label="{_h(label)}">'
        f"<title>{_h(title)}</title>"
    )


def _left_margin(labels: Iterable[tuple[str, float]]) -> float:
    return min(150.0, max(36.0, *(text_width(t, s) + 8 for t, s in labels)))


# ------------------------------------------------------------------ one character, whole selection
def overview_svg(t: Timeline, d: Digest) -> str:
    """One character over the selection: a panel per track, lanes of encounters and marks, an
    x axis of positions (module docstring)."""
    series = list(t.series.values())
    starts = [s.points[0][0] for s in series if s.points]
    x0 = min(starts) if starts else d.first
    x1 = max(d.last, x0 + 1)
    marks = [(seq, label) for seq, label in t.marks if x0 <= seq <= x1]
    kinds = list(dict.fromkeys(label for _, label in marks))
    counts = {k: sum(1 for _, label in marks if label == k) for k in kinds}
    bands = [(a, b, name) for a, b, name in d.bands if b >= x0 and a <= x1]
    scales = []
    for s in series:
        pts = window(s.points, x0, x1)
        scales.append(_y_scale((v for _, v in pts), s.floor, s.ceiling, (v for _, v in s.thresholds)))
    left = _left_margin(
        [
            *((str(v), FONT) for lo, hi in scales for v in (lo, hi)),
            *((f"{k} ({counts[k]})", SMALL) for k in kinds),
            (f"encounters ({len(bands)})", SMALL),
            ("position", SMALL),
        ]
    )
    right = WIDTH - RIGHT
    lanes = (1 if bands else 0) + len(kinds)
    height = 4 + len(series) * (TITLE + PANEL + GAP) + lanes * LANE + AXIS + 4
    xs = XScale(x0, x1, left, right)
    layout = Layout(WIDTH, height)
    labels = ", ".join(s.label for s in series)
    parts = [
        _svg(
            "timeline-svg",
            f'data-character="{_h(t.creature_id)}"',
            WIDTH,
            height,
            f"{labels} of {t.name}",
            f"{t.name}: {labels} by position",
        )
    ]
    panels_top, panels_bottom = 4.0, 4.0 + len(series) * (TITLE + PANEL + GAP) - GAP
    if 0 < len(bands) <= 40:
        for a, b, name in bands:
            xa, xb = xs(a), xs(b)
            parts.append(
                f'<rect x="{_n(xa)}" y="{_n(panels_top + TITLE)}" width="{_n(max(1.0, xb - xa))}" '
                f'height="{_n(panels_bottom - panels_top - TITLE)}" fill="{BAND}">'
                f"<title>{_h(name)}</title></rect>"
            )
    if len(marks) <= GUIDES:
        for seq, label in marks:
            parts.append(
                f'<line x1="{_n(xs(seq))}" x2="{_n(xs(seq))}" y1="{_n(panels_top + TITLE)}" '
                f'y2="{_n(panels_bottom)}" stroke="{MARK_COLOURS.get(label, "#555")}" stroke-dasharray="3 2" '
                f'stroke-opacity="0.6" class="guide"/>'
            )
    top = panels_top
    for i, (s, (lo, hi)) in enumerate(zip(series, scales, strict=True)):
        colour = TRACK_COLOURS[i % len(TRACK_COLOURS)]
        ys = YScale(lo, hi, top + TITLE)
        layout.place(s.label, [(left, top + 11, "start")], fill=colour, css="track-label")
        _y_axis(layout, parts, ys, left, right)
        _thresholds(layout, parts, ys, left, right, s.thresholds)
        pts = window(s.points, x0, x1)
        if pts:
            if len(pts) <= (right - left) / EXACT:
                parts.append(
                    f'<path d="{_step_path(pts, xs, ys, x1)}" fill="none" stroke="{colour}" stroke-width="2" '
                    f'class="track {_h(s.key)}"/>'
                )
            else:
                parts.extend(_aggregate(pts, xs, ys, colour, s.key))
        top += TITLE + PANEL + GAP
    y = top  # lanes start a gap below the last panel (its lowest tick label ends there)
    if bands:
        layout.place(
            f"encounters ({len(bands)})",
            [(left - 4, y + 9.5, "end")],
            size=SMALL,
            fill="#8a6d3b",
            css="lane-label",
        )
        merged: list[list[float | str]] = []
        for a, b, name in bands:
            xa, xb = xs(a), max(xs(b), xs(a) + 1)
            if merged and xa - float(merged[-1][1]) < 1.5:
                merged[-1][1] = max(float(merged[-1][1]), xb)
                merged[-1][2] = f"{merged[-1][2]}; {name}"
                merged[-1][3] = int(merged[-1][3]) + 1
            else:
                merged.append([xa, xb, name, 1])
        for xa, xb, names, n in merged:
            tip = str(names) if n == 1 else f"{n} encounters"
            parts.append(
                f'<rect x="{_n(float(xa))}" y="{_n(y + 2)}" width="{_n(float(xb) - float(xa))}" height="9" '
                f'fill="{LANE_FILL}" class="encounter"><title>{_h(tip)}</title></rect>'
            )
        y += LANE
    for kind in kinds:
        ticks = [
            _Tick(xs(seq), [seq], MARK_COLOURS.get(kind, "#555")) for seq, label in marks if label == kind
        ]
        _lane(layout, parts, y, left, kind, ticks, label_each=counts[kind] <= MARK_LABELS)
        y += LANE
    _x_axis_positions(layout, parts, xs, y)
    parts.extend(layout.parts)
    parts.append("</svg>")
    return "".join(parts)


def _x_axis_positions(layout: Layout, parts: list[str], xs: XScale, y: float) -> None:
    parts.append(
        f'<line x1="{_n(xs.left)}" x2="{_n(xs.right)}" y1="{_n(y + 2)}" y2="{_n(y + 2)}" stroke="#999"/>'
    )
    layout.place("position", [(xs.left - 4, y + 14, "end")], size=SMALL, fill="#777", css="axis-title")
    most = max(2, int((xs.right - xs.left) // 64))
    for v in nice_ticks(xs.x0, xs.x1, most):
        x = xs(v)
        text = f"#{v:,}"
        if layout.place(
            text, [(x, y + 14, "middle"), (x, y + 14, "end"), (x, y + 14, "start")], size=SMALL, fill="#555"
        ):
            parts.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(y + 2)}" y2="{_n(y + 5)}" stroke="#999"/>')


# ------------------------------------------------------------------ one encounter, every PC in it
def encounter_characters(enc: EncounterDigest, d: Digest) -> list[str]:
    """The player characters charted for an encounter (those with timelines), in the page's order."""
    inside = set(enc.participants) | set(enc.names)
    return [cid for cid in d.tracks if cid in inside]


def character_colour(cid: str, d: Digest) -> str:
    order = list(d.tracks)
    return CHARACTER_COLOURS[order.index(cid) % len(CHARACTER_COLOURS)] if cid in d.tracks else "#555"


def encounter_svg(enc: EncounterDigest, d: Digest) -> str:
    """An encounter's tracks, one line per player character in it, by round (module docstring).
    Empty when no player character with a timeline took part."""
    pcs = encounter_characters(enc, d)
    if not pcs:
        return ""
    x0 = enc.start
    x1 = max(enc.end if enc.end is not None else d.last, x0 + 1)
    keys: list[str] = list(dict.fromkeys(k for cid in pcs for k in d.tracks[cid].series))
    panels: list[
        tuple[
            str, str, list[tuple[str, Series, list[tuple[int, int]]]], tuple[int, int], list[tuple[str, int]]
        ]
    ] = []
    for key in keys:
        lines = [
            (cid, d.tracks[cid].series[key], window(d.tracks[cid].series[key].points, x0, x1))
            for cid in pcs
            if key in d.tracks[cid].series
        ]
        first = lines[0][1]
        shared = [th for th in first.thresholds if all(th in s.thresholds for _, s, _ in lines)]
        ceilings = [s.ceiling for _, s, _ in lines if s.ceiling is not None]
        lo, hi = _y_scale(
            (v for _, _, pts in lines for _, v in pts),
            None if any(s.floor is None for _, s, _ in lines) else min(s.floor or 0 for _, s, _ in lines),
            max(ceilings) if ceilings else None,
            (v for _, v in shared),
        )
        panels.append((key, first.label, lines, (lo, hi), shared))
    marks = [(seq, label, cid) for cid in pcs for seq, label in d.tracks[cid].marks if x0 <= seq <= x1]
    kinds = list(dict.fromkeys(label for _, label, _ in sorted(marks)))
    counts = {k: sum(1 for _, label, _ in marks if label == k) for k in kinds}
    left = _left_margin(
        [
            *((str(v), FONT) for _, _, _, (lo, hi), _ in panels for v in (lo, hi)),
            *((f"{k} ({counts[k]})", SMALL) for k in kinds),
            ("round", SMALL),
        ]
    )
    right = WIDTH - RIGHT
    height = 4 + len(panels) * (TITLE + ENCOUNTER_PANEL + GAP) + len(kinds) * LANE + AXIS + 4
    xs = XScale(x0, x1, left, right)
    layout = Layout(WIDTH, height)
    labels = ", ".join(label for _, label, _, _, _ in panels)
    parts = [
        _svg(
            "encounter-svg",
            f'data-encounter="{_h(enc.encounter_id)}"',
            WIDTH,
            height,
            f"{labels} in {enc.name}",
            f"{enc.name}: {labels} of each player character by round",
        )
    ]
    top = 4.0
    panels_bottom = 4.0 + len(panels) * (TITLE + ENCOUNTER_PANEL + GAP) - GAP
    for seq, _round in enc.rounds_at:
        parts.append(
            f'<line x1="{_n(xs(seq))}" x2="{_n(xs(seq))}" y1="{_n(top + TITLE)}" y2="{_n(panels_bottom)}" '
            f'stroke="#eee" class="round-line"/>'
        )
    for _key, label, lines, (lo, hi), shared in panels:
        ys = YScale(lo, hi, top + TITLE, ENCOUNTER_PANEL)
        layout.place(label, [(left, top + 11, "start")], fill="#333", css="track-label")
        _y_axis(layout, parts, ys, left, right)
        _thresholds(layout, parts, ys, left, right, shared)
        for cid, s, pts in lines:
            if pts:
                colour = character_colour(cid, d)
                parts.append(
                    f'<path d="{_step_path(pts, xs, ys, x1)}" fill="none" stroke="{colour}" stroke-width="2" '
                    f'stroke-opacity="0.9" class="track {_h(s.key)}" data-character="{_h(cid)}">'
                    f"<title>{_h(d.tracks[cid].name)}</title></path>"
                )
        top += TITLE + ENCOUNTER_PANEL + GAP
    y = top  # lanes start a gap below the last panel (its lowest tick label ends there)
    for kind in kinds:
        ticks = [
            _Tick(xs(seq), [seq], character_colour(cid, d), d.tracks[cid].name)
            for seq, label, cid in marks
            if label == kind
        ]
        _lane(layout, parts, y, left, kind, ticks, label_each=True)
        y += LANE
    parts.append(f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(y + 2)}" y2="{_n(y + 2)}" stroke="#999"/>')
    layout.place("round", [(left - 4, y + 14, "end")], size=SMALL, fill="#777", css="axis-title")
    for seq, n in enc.rounds_at:
        x = xs(seq)
        text = "S" if n == 0 else str(n)
        if layout.place(text, [(x, y + 14, "middle"), (x, y + 14, "start")], size=SMALL, fill="#555"):
            parts.append(f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(y + 2)}" y2="{_n(y + 5)}" stroke="#999"/>')
    parts.extend(layout.parts)
    parts.append("</svg>")
    return "".join(parts)
