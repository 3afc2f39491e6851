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

from api.exports import charts
from api.exports.source import CampaignSource
from api.exports.story import (
    Derived,
    Digest,
    EncounterDigest,
    FactLine,
    Heading,
    Markup,
    Para,
    Selection,
    Series,
    Summary,
    Timeline,
    digest,
    story_items,
)
from domain import dice

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
    keys = [k for k, _ in enc.columns]
    # one cell per column, also when the system tallies nothing (a table of names only)
    yield "| " + " | ".join(["Creature", *(title for _, title in enc.columns)]) + " |\n"
    yield "|---|" + "---:|" * len(keys) + "\n"
    for cid in [*enc.participants, *[c for c in enc.names if c not in enc.participants]]:
        row = enc.rows.get(cid, {})
        cells = [md_escape(enc.names.get(cid, cid)), *(str(row.get(c, 0)) for c in keys)]
        yield "| " + " | ".join(cells) + " |\n"
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


def _value(s: Series, view_value: int | None = None) -> str:
    value = s.points[-1][1] if s.points else view_value
    return f"{value}/{s.ceiling}" if s.ceiling is not None else str(value)


def _state(t: Timeline) -> str:
    f = t.final
    conditions = list(f.get("conditions") or [])
    return ", ".join([str(f.get("life", "")).replace("_", " "), *conditions])


def _md_end(source: CampaignSource, d: Digest) -> Iterator[str]:
    yield "\n## Characters at the end\n\n"
    labels = list(dict.fromkeys(s.label for t in d.tracks.values() for s in t.series.values()))
    yield "| Character | " + " | ".join(labels) + " | State |\n"
    yield "|---|" + "---:|" * len(labels) + "---|\n"
    for t in d.tracks.values():
        by_label = {s.label: s for s in t.series.values()}
        cells = [_value(by_label[label]) if label in by_label else "" for label in labels]
        yield f"| {md_escape(t.name)} | " + " | ".join(cells) + f" | {md_escape(_state(t))} |\n"
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
.timeline{margin:.4rem 0 .3rem}.timeline svg{width:100%;height:auto;border:1px solid #ccc;background:#fff}
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
    keys = [k for k, _ in enc.columns]
    yield (
        "<table><tr><th>Creature</th>"
        + "".join(f"<th>{_h(title)}</th>" for _, title in enc.columns)
        + "</tr>"
    )
    for cid in [*enc.participants, *[c for c in enc.names if c not in enc.participants]]:
        row = enc.rows.get(cid, {})
        yield (
            f"<tr><td>{_h(enc.names.get(cid, cid))}</td>"
            + "".join(f'<td class="n">{row.get(c, 0)}</td>' for c in keys)
            + "</tr>"
        )
    yield "</table></div>\n"


def timeline_svg(t: Timeline, d: Digest) -> str:
    """One character's tracks over the selection (``api.exports.charts.overview_svg``)."""
    return charts.overview_svg(t, d)


LEGEND = (
    '<p class="legend"><span>one panel per track the game system charts; dashed lines: its '
    "thresholds</span>"
    '<span><i class="sw" style="background:#f3ead7"></i>encounter</span>'
    "<span>where a track changed more often than there is room to draw, a shaded band shows the "
    "range of each stretch and the line the value it ended on</span>"
    "<span>lanes below: encounters and marks (rests, dying, deaths...), with their counts; hover "
    "a tick for its positions</span></p>"
)


def _encounter_legend(enc: EncounterDigest, d: Digest) -> str:
    names = "".join(
        f'<span><i class="sw" style="background:{charts.character_colour(cid, d)}"></i>'
        f"{_h(d.tracks[cid].name)}</span>"
        for cid in charts.encounter_characters(enc, d)
    )
    return f'<p class="legend">{names}<span>x axis: rounds (S: the surprise round)</span></p>'


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
        values = ", ".join(f"{_value(s)} {_h(s.label)}" for s in t.series.values())
        yield (
            f'<div class="character" id="char-{_h(t.creature_id)}"><h3>{_h(t.name)}</h3>'
            f"<p>At the end: {values}; {_h(_state(t))}.</p>"
            f'<div class="timeline">{timeline_svg(t, d)}</div></div>\n'
        )
    if d.encounters:
        yield '<h2 id="encounters">Encounters</h2>\n'
        for enc in d.encounters.values():
            yield f'<h3><a href="#enc-{_h(enc.encounter_id)}">{_h(enc.name)}</a></h3>\n'
            chart = charts.encounter_svg(enc, d)
            if chart:
                yield f'<div class="timeline">{chart}</div>{_encounter_legend(enc, d)}\n'
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
