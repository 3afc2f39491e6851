"""Markdown and printable HTML renderings of a campaign: generators of text chunks.

Both read the same story items (``api.exports.story``); memory stays flat however long the
campaign (one fact line at a time; the digest keeps only per-encounter tallies and the
timeline points of the characters).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from typing import Any

from api.exports.source import CampaignSource
from api.exports.story import (
    COLUMNS,
    Derived,
    Digest,
    EncounterDigest,
    FactLine,
    Heading,
    Markup,
    Para,
    Selection,
    Summary,
    Track,
    digest,
    story_items,
)
from domain import dice

COLUMN_TITLES = {
    "dealt": "Damage dealt",
    "taken": "Damage taken",
    "healed": "Healing",
    "surges": "Surges spent",
    "action_points": "Action points spent",
    "xp": "XP",
}
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~])")


def md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")


MARKDOWN = Markup(md_escape, dice.describe)


def _html_dice(roll: dict[str, Any]) -> str:
    return re.sub(r"~~(\d+)~~", r"<s>\1</s>", html.escape(dice.describe(roll)))


HTML = Markup(lambda s: html.escape(s).replace("\n", " "), _html_dice)
Progress = Callable[[int], None] | None


def _scope(source: CampaignSource, sel: Selection) -> str:
    if sel.encounter is not None:
        return f"encounter {sel.encounter}, positions {sel.first}..{sel.last}"
    if sel.first > source.first or sel.last < source.last:
        return f"positions {sel.first}..{sel.last}"
    return f"whole campaign, positions {sel.first}..{sel.last}" if sel.last >= sel.first else "no facts yet"


# ------------------------------------------------------------------ markdown
def _md_summary(enc: EncounterDigest) -> Iterator[str]:
    yield f"\n**Summary of {md_escape(enc.name)}** ({enc.rounds} rounds"
    yield f"; {md_escape(enc.outcome)})\n\n" if enc.outcome else ")\n\n"
    yield "| Creature | " + " | ".join(COLUMN_TITLES[c] for c in COLUMNS) + " |\n"
    yield "|---|" + "---:|" * len(COLUMNS) + "\n"
    for cid in [*enc.participants, *[c for c in enc.names if c not in enc.participants]]:
        row = enc.rows.get(cid, dict.fromkeys(COLUMNS, 0))
        yield f"| {md_escape(enc.names.get(cid, cid))} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |\n"
    yield "\n"


def markdown(
    source: CampaignSource, sel: Selection, progress: Progress = None, reading: Progress = None
) -> Iterator[str]:
    """The story of play as Markdown."""
    summaries = digest(source.ledger, sel, reading)
    yield f"# {md_escape(source.name)}\n\n"
    yield f"*{md_escape(source.ruleset)} campaign log ({_scope(source, sel)}). "
    yield (
        "Struck-through facts were revoked; orphaned facts no longer apply after a correction "
        "and are kept for the GM to review.*\n"
    )
    open_list = False
    for item in story_items(source.ledger, sel, MARKDOWN, summaries):
        if isinstance(item, FactLine):
            if not open_list:
                yield "\n"
                open_list = True
            body = f"**#{item.seq}** {item.text}"
            if "revoked" in item.status:
                body = f"~~{body}~~"
            if "orphaned" in item.status:
                body = f"**ORPHANED** {body}"
            notes = "".join(f" *({n})*" for n in item.notes)
            yield f"- {body}{notes}\n"
            if progress is not None:
                progress(item.seq)
            continue
        if isinstance(item, Derived):
            if not open_list:
                yield "\n"
                open_list = True
            yield f"  - *{item.text}*\n"
            continue
        open_list = False
        if isinstance(item, Heading):
            yield f"\n{'#' * item.level} {item.text}\n"
        elif isinstance(item, Para):
            yield f"\n{item.text}\n"
        elif isinstance(item, Summary):
            yield from _md_summary(item.encounter)
    yield from _md_end(source, summaries)


def _md_end(source: CampaignSource, d: Digest) -> Iterator[str]:
    yield "\n## Characters at the end\n\n"
    yield "| Character | HP | Temporary HP | Wounds | Surges | XP | State |\n"
    yield "|---|---:|---:|---:|---:|---:|---|\n"
    for t in d.tracks.values():
        f = t.final
        state = ", ".join([f["life"], *f["conditions"]]) if f["conditions"] else f["life"]
        yield (
            f"| {md_escape(t.name)} | {f['hp']}/{f['max_hp']} | {f['temp_hp']} "
            f"| {f['wounds']}/{f['max_wounds']} "
            f"| {f['surges']} | {f['xp']} | {md_escape(state)} |\n"
        )
    yield (
        f"\n*{d.revoked} revoked, {d.amended} amended, {d.orphans} orphaned fact(s) in this part of the "
        "log.*\n"
    )


# ---------------------------------------------------------------------- html
CSS = """
body{font-family:Georgia,'Times New Roman',serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f;
line-height:1.45}
h1{font-size:1.9rem;margin-bottom:.2rem}h2{border-bottom:2px solid #444;margin-top:2.2rem}
h3{margin:1.4rem 0 .4rem;color:#333}h4{margin:.9rem 0 .2rem;font-size:1rem;color:#555}
.sub{color:#555;font-style:italic}ol.facts{list-style:none;padding-left:0;margin:.2rem 0}
ol.facts li{margin:.15rem 0;padding:.1rem .4rem;border-left:3px solid transparent}
.pos{font-family:monospace;color:#777;margin-right:.4rem}.derived{color:#555;font-style:italic;padding-left:1.6rem}
li.revoked{border-left-color:#999;color:#777}li.revoked .text{text-decoration:line-through}
li.orphaned{border-left-color:#c0392b;background:#fdf0ee}li.amended{border-left-color:#2471a3}
li.meta{color:#4a235a}.note{display:block;font-size:.9em;color:#6c3483;padding-left:2.4rem}
.badge{font-family:sans-serif;font-size:.7em;font-weight:bold;padding:0 .3rem;border-radius:3px;
margin-right:.3rem;
color:#fff;background:#888}.badge.orphaned{background:#c0392b}.badge.amended{background:#2471a3}
.badge.overturned{background:#b9770e}table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.92em}
th,td{border:1px solid #bbb;padding:.2rem .5rem}td.n{text-align:right}th{background:#eee}
.timeline{margin:.4rem 0 1.2rem}.timeline svg{width:100%;height:auto;border:1px solid #ccc;background:#fff}
.legend span{margin-right:1rem;font-size:.85em}.sw{display:inline-block;width:.9em;height:.9em;
margin-right:.25em;
vertical-align:middle}
@media print{body{margin:0;max-width:none;font-size:10.5pt}h2{page-break-before:auto}
.character,.summary{page-break-inside:avoid}a{color:inherit;text-decoration:none}}
"""


def _h(text: str) -> str:
    return html.escape(text)


def _html_summary(enc: EncounterDigest) -> Iterator[str]:
    outcome = f"; {_h(enc.outcome)}" if enc.outcome else ""
    yield (
        f'<div class="summary"><p><strong>Summary of {_h(enc.name)}</strong> '
        f"({enc.rounds} rounds{outcome})</p>"
    )
    yield "<table><tr><th>Creature</th>" + "".join(f"<th>{COLUMN_TITLES[c]}</th>" for c in COLUMNS) + "</tr>"
    for cid in [*enc.participants, *[c for c in enc.names if c not in enc.participants]]:
        row = enc.rows.get(cid, dict.fromkeys(COLUMNS, 0))
        yield (
            f"<tr><td>{_h(enc.names.get(cid, cid))}</td>"
            + "".join(f'<td class="n">{row[c]}</td>' for c in COLUMNS)
            + "</tr>"
        )
    yield "</table></div>\n"


def timeline_svg(t: Track, d: Digest) -> str:
    """HP (green), temporary HP (blue, on top of HP) and wounds (red, lower panel) after every fact."""
    width, left, right = 720, 44, 8
    top_h, gap, low_h = 120, 28, 60
    height = 10 + top_h + gap + low_h + 24
    x0 = t.points[0][0] if t.points else d.first
    x1 = max(d.last, x0 + 1)
    span = x1 - x0

    def x(seq: int) -> float:
        return round(left + (seq - x0) * (width - left - right) / span, 1)

    hp_max = max(1, t.max_hp)
    w_lo = min(0, *(p[3] for p in t.points)) if t.points else 0
    w_hi = max(1, t.max_wounds)

    def y_hp(v: int) -> float:
        return round(10 + top_h - v * top_h / hp_max, 1)

    w_top = 10 + top_h + gap

    def y_w(v: int) -> float:
        return round(w_top + low_h - (v - w_lo) * low_h / max(1, w_hi - w_lo), 1)

    def step(values: list[tuple[int, int]], fy: Callable[[int], float]) -> str:
        if not values:
            return ""
        out = [f"M{x(values[0][0])},{fy(values[0][1])}"]
        for (_, _), (s2, v2) in zip(values, values[1:], strict=False):
            out.append(f"H{x(s2)}V{fy(v2)}")
        out.append(f"H{x(x1)}")
        return "".join(out)

    hp = [(p[0], p[1]) for p in t.points]
    top = [(p[0], p[1] + p[2]) for p in t.points]
    wounds = [(p[0], p[3]) for p in t.points]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline-svg" data-character="{_h(t.creature_id)}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="HP, temporary HP and wounds of {_h(t.name)}">',
        f"<title>{_h(t.name)}: HP, temporary HP and wounds by position</title>",
    ]
    for start, end, name in d.bands:
        if end >= x0:
            a, b = x(max(start, x0)), x(min(end, x1))
            parts.append(
                f'<rect x="{a}" y="6" width="{max(1.0, round(b - a, 1))}" height="{height - 26}" '
                f'fill="#f3ead7"><title>{_h(name)}</title></rect>'
            )
    for y0, label in ((y_hp(hp_max), str(hp_max)), (y_hp(0), "0")):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y0}" y2="{y0}" stroke="#ccc"/>'
            f'<text x="{left - 4}" y="{y0 + 4}" font-size="10" text-anchor="end">{label}</text>'
        )
    for v in sorted({w_hi, 0, w_lo}):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y_w(v)}" y2="{y_w(v)}" stroke="#ddd"/>'
            f'<text x="{left - 4}" y="{y_w(v) + 4}" font-size="10" text-anchor="end">{v}</text>'
        )
    parts.append(f'<text x="{left}" y="{w_top - 6}" font-size="10" fill="#a93226">wounds</text>')
    if hp:
        parts.append(
            f'<path d="{step(top, y_hp)}" fill="none" stroke="#2e86c1" stroke-width="2" '
            'stroke-dasharray="4 2" class="temp-hp"/>'
        )
        parts.append(f'<path d="{step(hp, y_hp)}" fill="none" stroke="#1e8449" stroke-width="2" class="hp"/>')
        parts.append(
            f'<path d="{step(wounds, y_w)}" fill="none" stroke="#a93226" stroke-width="2" class="wounds"/>'
        )
    colours = {
        "short rest": "#27ae60",
        "extended rest": "#1a5276",
        "dying": "#e67e22",
        "dead": "#000",
        "knocked out": "#7d3c98",
        "stabilized": "#7d3c98",
    }
    for seq, label in t.marks:
        colour = colours.get(label, "#555")
        mark = "\u2020 " if label == "dead" else ""
        parts.append(
            f'<g class="mark {label.replace(" ", "-")}"><line x1="{x(seq)}" x2="{x(seq)}" y1="6" '
            f'y2="{height - 20}" stroke="{colour}" stroke-dasharray="3 2"/>'
            f'<text x="{x(seq) + 2}" y="{height - 8}" font-size="10" fill="{colour}">{mark}{_h(label)} '
            f"#{seq}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


LEGEND = (
    '<p class="legend"><span><i class="sw" style="background:#1e8449"></i>HP</span>'
    '<span><i class="sw" style="background:#2e86c1"></i>HP + temporary HP</span>'
    '<span><i class="sw" style="background:#a93226"></i>wounds</span>'
    '<span><i class="sw" style="background:#f3ead7"></i>encounter</span>'
    "<span>dashed lines: rests, dying, deaths</span></p>"
)


def html_page(
    source: CampaignSource, sel: Selection, progress: Progress = None, reading: Progress = None
) -> Iterator[str]:
    """One self-contained printable page: characters' timelines, encounter summaries, the story."""
    d = digest(source.ledger, sel, reading)
    title = _h(source.name)
    yield (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>'
        f'<body>\n<h1>{title}</h1>\n<p class="sub">{_h(source.ruleset)} campaign log '
        f"({_scope(source, sel)}); "
        f"{d.revoked} revoked, {d.amended} amended, {d.orphans} orphaned fact(s).</p>\n"
    )
    yield '<h2 id="characters">Characters</h2>\n' + LEGEND + "\n"
    for t in d.tracks.values():
        f = t.final
        cond = f"; {_h(', '.join(f['conditions']))}" if f["conditions"] else ""
        yield (
            f'<div class="character" id="char-{_h(t.creature_id)}"><h3>{_h(t.name)}</h3>'
            f"<p>At the end: {f['hp']}/{f['max_hp']} HP, {f['temp_hp']} temporary HP, "
            f"{f['wounds']}/{f['max_wounds']} wounds, {f['surges']} surges, {f['xp']} XP; "
            f"{_h(f['life'])}{cond}.</p>"
            f'<div class="timeline">{timeline_svg(t, d)}</div></div>\n'
        )
    if d.encounters:
        yield '<h2 id="encounters">Encounters</h2>\n'
        for enc in d.encounters.values():
            yield f'<h3><a href="#enc-{_h(enc.encounter_id)}">{_h(enc.name)}</a></h3>\n'
            yield from _html_summary(enc)
    yield '<h2 id="story">The story of play</h2>\n'
    open_list = False
    for item in story_items(source.ledger, sel, HTML, d):
        if isinstance(item, FactLine | Derived):
            if not open_list:
                yield '<ol class="facts">\n'
                open_list = True
            if isinstance(item, Derived):
                yield f'<li class="derived">{item.text}</li>\n'
                continue
            badges = "".join(
                f'<span class="badge {s}">{s}</span>'
                for s in item.status
                if s in ("revoked", "amended", "orphaned", "overridden", "overturned")
            )
            notes = "".join(f'<span class="note">{n}</span>' for n in item.notes)
            yield (
                f'<li id="f{item.seq}" class="{" ".join(item.status)}"><span class="pos">#{item.seq}</span>'
                f'{badges}<span class="text">{item.text}</span>{notes}</li>\n'
            )
            if progress is not None:
                progress(item.seq)
            continue
        if open_list:
            yield "</ol>\n"
            open_list = False
        if isinstance(item, Heading):
            anchor = f' id="{item.anchor}"' if item.anchor else ""
            yield f"<h{item.level}{anchor}>{item.text}</h{item.level}>\n"
        elif isinstance(item, Para):
            yield f"<p>{item.text}</p>\n"
        elif isinstance(item, Summary):
            yield from _html_summary(item.encounter)
    if open_list:
        yield "</ol>\n"
    yield "</body></html>\n"
