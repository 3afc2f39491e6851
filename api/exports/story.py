"""The story of play, as data: pure functions over a campaign's ledger (no I/O).

``story_items`` walks the one fold (``Ledger.replay_iter``) lazily and yields headings
(encounters, rounds, turns), one line per fact with its sentence, dice and breakdown, and the
derived steps of turn boundaries (ongoing damage, effects ending, skipped turns). Corrections
are shown where they bite: a revoked fact carries the revocation's reason, an amended one the
amendment's, an orphaned one the reason its preconditions failed, a fact citing a ruling the
ruling's fate. ``digest`` is a first pass that gathers what a reader wants up front: per
encounter the ruleset's summary columns (damage dealt and taken, healing...), and per player
character the ruleset's tracks (``Ruleset.tracks``: hit points, and whatever else the system
charts) after every fact that changed them, with the marks its narrator sets (rests, dying...).

Every sentence and summary number comes from the campaign's ruleset (its narrator and views);
nothing here knows a game system. Both passes view only the creatures each fact changed (an
identity test on the fold's copy-on-write state), so an export costs the facts, not facts times
creatures. Rendering (Markdown, HTML) lives in ``api.exports.render``; both pass a ``Markup``
so user text is escaped for their format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from domain.core import proposals
from domain.core.narration import Change, Markup, Narrator
from domain.core.state import changed_creatures
from domain.ledger import Ledger
from domain.rulesets import narrator_for

__all__ = [
    "Derived",
    "Digest",
    "EncounterDigest",
    "FactLine",
    "Heading",
    "Markup",
    "Para",
    "Selection",
    "Summary",
    "Timeline",
    "digest",
    "story_items",
]

META = frozenset(
    {
        "FactRevoked",
        "FactRestored",
        "FactAmended",
        "RulingRecorded",
        "RulingContested",
        "RulingResolved",
        "OutcomeOverridden",
        "RulesFlagSet",
        "NoteAdded",
        "DiceRolled",
    }
    | proposals.TYPES
)


@dataclass(frozen=True)
class Selection:
    """Which facts an export shows: positions ``first..last`` (inclusive)."""

    first: int
    last: int
    encounter: str | None = None

    def __contains__(self, seq: object) -> bool:
        return isinstance(seq, int) and self.first <= seq <= self.last


# ---------------------------------------------------------------- story items
@dataclass(frozen=True)
class Heading:
    level: int  # 2 encounter, 3 round, 4 turn
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class FactLine:
    seq: int
    text: str
    status: tuple[str, ...]  # revoked, amended, orphaned, overridden, meta, or empty
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Derived:
    text: str


@dataclass(frozen=True)
class Summary:
    encounter: EncounterDigest


Item = Heading | Para | FactLine | Derived | Summary


# ---------------------------------------------------------------------- digest
@dataclass
class EncounterDigest:
    encounter_id: str
    name: str
    start: int
    columns: tuple[tuple[str, str], ...] = ()
    end: int | None = None
    rounds: int = 0
    outcome: str = ""
    participants: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    rounds_at: list[tuple[int, int]] = field(default_factory=list)  # (position, round) as each began

    def add(self, cid: str, column: str, amount: int) -> None:
        if amount:
            row = self.rows.setdefault(cid, dict.fromkeys((k for k, _ in self.columns), 0))
            row[column] = row.get(column, 0) + amount


@dataclass
class Series:
    """One track of one character over time."""

    key: str
    label: str
    points: list[tuple[int, int]] = field(default_factory=list)  # (seq, value)
    ceiling: int | None = None
    floor: int | None = 0
    thresholds: tuple[tuple[str, int], ...] = ()


@dataclass
class Timeline:
    """One character's tracks after each fact that changed them, with marks (rests, dying...)."""

    creature_id: str
    name: str
    series: dict[str, Series] = field(default_factory=dict)
    marks: list[tuple[int, str]] = field(default_factory=list)  # (seq, label)
    final: dict[str, Any] = field(default_factory=dict)  # the creature's view at the end


@dataclass
class Digest:
    encounters: dict[str, EncounterDigest] = field(default_factory=dict)
    tracks: dict[str, Timeline] = field(default_factory=dict)
    bands: list[tuple[int, int, str]] = field(default_factory=list)  # encounters: (start, end, name)
    first: int = 0
    last: int = 0
    orphans: int = 0
    revoked: int = 0
    amended: int = 0


def digest(ledger: Ledger, sel: Selection, progress: Callable[[int], None] | None = None) -> Digest:
    """First pass: per-encounter tallies and per-character timelines within ``sel``
    (``progress(position)`` after each fact it passes)."""
    rules = ledger.ruleset
    narrator = narrator_for(rules)
    out = Digest(first=sel.first, last=sel.last)
    res = ledger.resolution
    current: EncounterDigest | None = None
    before: Any = None
    for entry, outcome, orphan, state in ledger.replay_iter(upto=sel.last):
        seq = entry.seq
        inside = seq in sel
        changed = changed_creatures(before, state) if before is not None else list(state.creatures)
        if inside:
            out.orphans += orphan is not None
            out.revoked += seq in res.revoked
            out.amended += seq in res.amended
            changes: dict[str, Change] = {
                cid: (
                    rules.creature_view(before, cid)
                    if before is not None and cid in before.creatures
                    else None,
                    rules.creature_view(state, cid),
                )
                for cid in changed
            }
            payload = res.amended.get(seq, entry.payload)
            if outcome is not None and entry.type == "EncounterStarted":
                eid = payload["encounter_id"]
                enc = rules.encounter_view(state, eid)
                current = EncounterDigest(
                    eid, enc.get("name") or eid, seq, narrator.columns, participants=list(enc["participants"])
                )
                current.names = {cid: state.creatures[cid].name for cid in current.participants}
                out.encounters[eid] = current
            running = current is not None and (
                state.active_encounter == current.encounter_id or entry.type == "EncounterEnded"
            )
            if current is not None and running and outcome is not None:
                _rounds(current, seq, outcome)
            if current is not None:
                for cid, column, amount in narrator.tally(entry.type, payload, outcome, changes, state):
                    if running or column == "xp":
                        current.names.setdefault(cid, state.creatures[cid].name)
                        current.add(cid, column, amount)
            for _, view in changes.values():
                if view is not None and view.get("kind") == "pc":
                    _track(out, rules, seq, view)
            for cid, label in narrator.marks(entry.type, payload, outcome, changes):
                if cid in out.tracks:
                    out.tracks[cid].marks.append((seq, label))
            if outcome is not None and entry.type == "EncounterEnded" and current is not None:
                current.end, current.outcome = seq, payload.get("outcome", "")
                current.rounds = int(outcome.get("rounds") or 0)
        before = state.clone()
        if progress is not None:
            progress(seq)
    for enc in out.encounters.values():
        out.bands.append((enc.start, enc.end if enc.end is not None else sel.last, enc.name))
    return out


def _rounds(enc: EncounterDigest, seq: int, outcome: dict[str, Any]) -> None:
    """Note where each round began (0 is the surprise round), from the turn-boundary report of
    the fact's outcome (``turns`` and ``rounds`` entries carry the round they are in)."""
    found = [
        r["round"]
        for key in ("rounds", "turns")
        if isinstance(outcome.get(key), list)
        for r in outcome[key]
        if isinstance(r, dict) and isinstance(r.get("round"), int)
    ]
    for n in sorted(set(found)):
        if not enc.rounds_at or n > enc.rounds_at[-1][1]:
            enc.rounds_at.append((seq, n))


def _track(out: Digest, rules: Any, seq: int, view: dict[str, Any]) -> None:
    cid = str(view["id"])
    t = out.tracks.get(cid)
    if t is None:
        t = out.tracks[cid] = Timeline(cid, str(view["name"]))
    t.name = str(view["name"])
    for track in rules.tracks(view):
        s = t.series.get(track.key)
        if s is None:
            s = t.series[track.key] = Series(track.key, track.label, floor=track.floor)
        s.ceiling = max(s.ceiling or 0, track.ceiling) if track.ceiling is not None else s.ceiling
        s.thresholds = track.thresholds
        if not s.points or s.points[-1][1] != track.value:
            s.points.append((seq, track.value))
    t.final = view


# --------------------------------------------------------------------- story
@dataclass
class _Corrections:
    """Who corrected what, from one scan of the log (only corrections are kept)."""

    overrides: dict[int, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    rulings: dict[str, list[tuple[int, str, dict[str, Any]]]] = field(default_factory=dict)


def _scan(ledger: Ledger) -> _Corrections:
    out = _Corrections()
    for e in ledger.entries:
        if e.type == "OutcomeOverridden":
            out.overrides.setdefault(e.payload["target"], []).append((e.seq, e.payload))
        elif e.type in ("RulingRecorded", "RulingContested", "RulingResolved"):
            out.rulings.setdefault(e.payload["ruling_id"], []).append((e.seq, e.type, e.payload))
    return out


def cited_rulings(payload: Any) -> list[str]:
    found: list[str] = []
    stack: list[Any] = [payload]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            rid = item.get("ruling")
            if isinstance(rid, str):
                found.append(rid)
            if isinstance(item.get("rulings"), dict):
                found.extend(v for v in item["rulings"].values() if isinstance(v, str))
            stack.extend(v for k, v in item.items() if k != "rulings")
        elif isinstance(item, list):
            stack.extend(item)
    return sorted(set(found))


def story_items(
    ledger: Ledger, sel: Selection, markup: Markup, summaries: Digest | None = None
) -> Iterator[Item]:
    """The story of ``sel``, lazily: headings, fact lines, derived steps, encounter summaries."""
    w: Narrator = narrator_for(ledger.ruleset, markup)
    rules = ledger.ruleset
    esc = markup.esc
    res = ledger.resolution
    fixes = _scan(ledger)
    rnd: int | None = None
    started = False
    for entry, outcome, orphan, state in ledger.replay_iter(upto=sel.last):
        seq = entry.seq
        payload = res.amended.get(seq, entry.payload)
        if seq < sel.first:
            continue
        if not started:
            started = True
            active = state.active_encounter
            if sel.first > ledger.first_seq and active is not None and entry.type != "EncounterStarted":
                enc = rules.encounter_view(state, active)
                yield Heading(2, f"Encounter: {esc(enc.get('name') or active)} (continued)", f"enc-{active}")
        if outcome is not None and entry.type == "EncounterStarted":
            name = esc(payload.get("name") or payload["encounter_id"])
            yield Heading(2, f"Encounter: {name}", f"enc-{payload['encounter_id']}")
            rnd = None
        text = w.sentence(entry.type, payload, outcome, state)
        status: list[str] = []
        notes: list[str] = []
        if seq in res.revoked:
            by = ledger.entry(res.revoked[seq])
            status.append("revoked")
            notes.append(f"Revoked by #{by.seq}: {esc(by.payload['reason'])}")
        if seq in res.amended_by:
            status.append("amended")
            for a in res.amended_by[seq]:
                notes.append(f"Amended by #{a}: {esc(ledger.entry(a).payload['reason'])}")
        if orphan is not None:
            status.append("orphaned")
            notes.append(f"Orphaned: {esc(orphan)}. It no longer applies and is kept for the GM to review.")
        for at, o in fixes.overrides.get(seq, []):
            if at not in res.revoked:
                status.append("overridden")
                notes.append(
                    f"GM override by #{at}: {esc(o['field'])} = {esc(str(o['value']))} ({esc(o['reason'])})"
                )
        for rid in cited_rulings(payload):
            for at, kind, p in fixes.rulings.get(rid, []):
                if kind == "RulingResolved" and at not in res.revoked:
                    notes.append(
                        f"Cites ruling {esc(rid)}, {p['outcome']} by #{at}"
                        + (f": {esc(p['decision'])}" if p.get("decision") else "")
                    )
        if entry.type == "RulingRecorded":
            rid = payload["ruling_id"]
            for at, kind, p in fixes.rulings.get(rid, []):
                if kind == "RulingResolved" and at not in res.revoked:
                    status.append(p["outcome"])
                    notes.append(f"{p['outcome'].capitalize()} by #{at}")
        came = None if entry.type in proposals.TYPES else proposals.provenance(entry.meta, esc)
        if came is not None:
            notes.append(came[:1].upper() + came[1:])
        if entry.type in META:
            status.append("meta")
        yield FactLine(seq, text, tuple(status), tuple(notes))
        if outcome is None:
            continue
        steps = []
        if "order" in outcome and entry.type in ("InitiativeRolled", "InitiativeTieBroken"):
            enc = rules.encounter_view(state, payload["encounter_id"])
            scores = enc.get("initiative", {})
            order = ", ".join(
                f"{w.name(c, state)} {scores.get(c, {}).get('score', '')}".rstrip() for c in outcome["order"]
            )
            yield Para(f"Initiative order: {order}.")
        if "turns" in outcome or entry.type in ("TurnEnded", "TurnStarted", "TurnDelayed"):
            steps = w.boundary(outcome, state)
        for kind, value in steps:
            if kind == "round":
                if value != rnd:
                    rnd = value
                    yield Heading(3, "Surprise round" if value == 0 else f"Round {value}")
            elif kind == "turn":
                yield Heading(4, f"{w.name(value, state)}'s turn")
            else:
                yield Derived(value)
        if entry.type == "EncounterEnded":
            rnd = None
            if summaries is not None and payload["encounter_id"] in summaries.encounters:
                yield Summary(summaries.encounters[payload["encounter_id"]])
