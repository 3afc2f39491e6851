"""The story of play, as data: pure functions over a campaign's ledger (no I/O).

``story_items`` walks the one fold (``Ledger.replay_iter``) lazily and yields headings
(encounters, rounds, turns), one line per fact with its sentence, dice and breakdown, and the
derived steps of turn boundaries (ongoing damage, effects ending, skipped turns). Corrections
are shown where they bite: a revoked fact carries the revocation's reason, an amended one the
amendment's, an orphaned one the reason its preconditions failed, a fact citing a ruling the
ruling's fate. ``digest`` is a first pass that gathers what a reader wants up front: per
encounter who dealt and took how much, healing, surges, action points and XP; per character
the HP, temporary HP and wounds after every fact, with rests and deaths.

Rendering (Markdown, HTML) lives in ``api.exports.render``; both pass a ``Markup`` so user text
is escaped for their format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from domain import dice
from domain.ledger import Entry, Ledger

ROLL_KEYS = ("expression", "terms")


@dataclass(frozen=True)
class Markup:
    """How user text and dice are written in the target format."""

    esc: Callable[[str], str]
    dice: Callable[[dict[str, Any]], str]


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
COLUMNS = ("dealt", "taken", "healed", "surges", "action_points", "xp")


@dataclass
class EncounterDigest:
    encounter_id: str
    name: str
    start: int
    end: int | None = None
    rounds: int = 0
    outcome: str = ""
    participants: list[str] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, cid: str, column: str, amount: int) -> None:
        if amount:
            row = self.rows.setdefault(cid, dict.fromkeys(COLUMNS, 0))
            row[column] += amount


@dataclass
class Track:
    """One character's HP, temporary HP and wounds after each fact that changed them."""

    creature_id: str
    name: str
    points: list[tuple[int, int, int, int]] = field(default_factory=list)  # (seq, hp, temp, wounds)
    max_hp: int = 1
    max_wounds: int = 1
    marks: list[tuple[int, str]] = field(default_factory=list)  # (seq, "short rest" | "dying" | ...)
    final: dict[str, Any] = field(default_factory=dict)


@dataclass
class Digest:
    encounters: dict[str, EncounterDigest] = field(default_factory=dict)
    tracks: dict[str, Track] = field(default_factory=dict)
    bands: list[tuple[int, int, str]] = field(default_factory=list)  # encounters: (start, end, name)
    first: int = 0
    last: int = 0
    orphans: int = 0
    revoked: int = 0
    amended: int = 0


def _vals(c: Any) -> tuple[int, int, int, int, int, int, str]:
    return (c.hp, c.temp_hp, c.wounds, c.surges, c.ap, c.xp or 0, c.life)


def digest(ledger: Ledger, sel: Selection, progress: Callable[[int], None] | None = None) -> Digest:
    """First pass: per-encounter tallies and per-character timelines within ``sel``
    (``progress(position)`` after each fact it passes)."""
    out = Digest(first=sel.first, last=sel.last)
    res = ledger.resolution
    prev: dict[str, tuple[int, int, int, int, int, int, str]] = {}
    current: EncounterDigest | None = None
    for entry, outcome, orphan, state in ledger.replay_iter(upto=sel.last):
        seq = entry.seq
        inside = seq in sel
        if inside:
            out.orphans += orphan is not None
            out.revoked += seq in res.revoked
            out.amended += seq in res.amended
        if outcome is not None and entry.type == "EncounterStarted" and inside:
            eid = outcome["encounter_id"]
            current = EncounterDigest(
                eid, state.encounters[eid].name or eid, seq, participants=list(outcome["participants"])
            )
            current.names = {cid: state.creatures[cid].name for cid in current.participants}
            out.encounters[eid] = current
        running = current is not None and (
            state.active_encounter == current.encounter_id or entry.type == "EncounterEnded"
        )
        if outcome is not None and current is not None and inside:
            _tally(current, entry, outcome, state, running)
        for cid, c in state.creatures.items():
            now = _vals(c)
            before = prev.get(cid)
            prev[cid] = now
            if not inside:
                continue
            if running and current is not None and before is not None and cid in current.names:
                lost = sum(max(0, b - a) for a, b in zip(now[:3], before[:3], strict=True))
                gained = max(0, now[0] - before[0]) + max(0, now[2] - before[2])
                current.add(cid, "taken", lost)
                current.add(cid, "healed", gained)
                current.add(cid, "surges", max(0, before[3] - now[3]))
                current.add(cid, "action_points", max(0, before[4] - now[4]))
            if c.kind == "pc":
                _track(out, cid, c, seq, before, now)
        if outcome is not None and entry.type in ("ShortRestTaken", "ExtendedRestTaken") and inside:
            label = "short rest" if entry.type == "ShortRestTaken" else "extended rest"
            for cid in outcome["participants"]:
                if cid in out.tracks:
                    out.tracks[cid].marks.append((seq, label))
        if outcome is not None and entry.type == "EncounterEnded" and current is not None and inside:
            current.end, current.rounds, current.outcome = seq, outcome["rounds"], outcome["outcome"]
        if progress is not None:
            progress(seq)
    for enc in out.encounters.values():
        out.bands.append((enc.start, enc.end if enc.end is not None else sel.last, enc.name))
    return out


def _track(out: Digest, cid: str, c: Any, seq: int, before: Any, now: Any) -> None:
    t = out.tracks.get(cid)
    if t is None:
        t = out.tracks[cid] = Track(cid, c.name)
    t.name = c.name
    t.max_hp = max(t.max_hp, c.max_hp, c.hp + c.temp_hp)
    t.max_wounds = max(t.max_wounds, c.max_wounds)
    point = (seq, c.hp, c.temp_hp, c.wounds)
    if not t.points or t.points[-1][1:] != point[1:]:
        t.points.append(point)
    if (
        before is not None
        and before[6] != now[6]
        and now[6] in ("dying", "dead", "knocked_out", "stabilized")
    ):
        t.marks.append((seq, now[6].replace("_", " ")))
    t.final = {
        "hp": c.hp,
        "max_hp": c.max_hp,
        "temp_hp": c.temp_hp,
        "wounds": c.wounds,
        "max_wounds": c.max_wounds,
        "surges": c.surges,
        "xp": c.xp,
        "life": c.life,
        "conditions": sorted(c.conditions()),
    }


def _effect_source(state: Any, effect_id: str) -> str | None:
    for c in state.creatures.values():
        for e in c.effects:
            if e["effect_id"] == effect_id:
                return str(e.get("source"))
    return None


def _tally(enc: EncounterDigest, entry: Entry, outcome: dict[str, Any], state: Any, running: bool) -> None:
    if entry.type == "ExperienceAwarded":
        for cid in outcome["creatures"]:
            enc.names.setdefault(cid, state.creatures[cid].name)
            enc.add(cid, "xp", outcome["amount"])
        return
    if not running:
        return
    if entry.type == "AttackMade":
        for t in outcome["targets"]:
            enc.add(outcome["attacker"], "dealt", t.get("damage", {}).get("amount", 0))
    elif entry.type == "TurnEnded":
        for turn in outcome.get("turns", []):
            for tick in turn.get("ongoing_damage", []):
                source = _effect_source(state, tick["effect_id"])
                if source in enc.names:
                    enc.add(source, "dealt", tick["amount"])


# ------------------------------------------------------------------ sentences
DURATIONS = {
    "save_ends": "save ends",
    "until_start_of_turn": "until the start of {anchor}'s next turn",
    "until_end_of_turn": "until the end of {anchor}'s next turn",
    "end_of_encounter": "until the end of the encounter",
    "sustained": "sustained by {anchor}",
    "until_removed": "until removed",
    "surprise_round": "for the surprise round",
}
DEFENSES = {"ac": "AC", "fort": "Fortitude", "ref": "Reflex", "will": "Will"}
LIFE = {
    "dying": "is dying",
    "dead": "is dead",
    "knocked_out": "is knocked out",
    "stabilized": "is stabilised",
    "active": "is back on their feet",
}


class Writer:
    """Sentences for facts, in one markup, with creature names as the fold knows them."""

    def __init__(self, markup: Markup) -> None:
        self.m = markup
        self.names: dict[str, str] = {}

    def name(self, cid: Any, state: Any = None) -> str:
        if state is not None and cid in state.creatures:
            self.names[cid] = state.creatures[cid].name
        return self.m.esc(self.names.get(cid, str(cid)))

    def names_of(self, ids: Any, state: Any) -> str:
        items = [self.name(c, state) for c in ids]
        if len(items) <= 2:
            return " and ".join(items)
        return ", ".join(items[:-1]) + " and " + items[-1]

    def roll(self, roll: Any) -> str:
        return self.m.dice(roll) if isinstance(roll, dict) and "terms" in roll else ""

    def duration(self, duration: dict[str, Any] | str, state: Any, default_anchor: str = "") -> str:
        kind = duration if isinstance(duration, str) else duration.get("kind", "until_removed")
        anchor = default_anchor if isinstance(duration, str) else duration.get("anchor", default_anchor)
        return DURATIONS.get(kind, kind).format(anchor=self.name(anchor, state) if anchor else "its creator")

    # ------------------------------------------------------------ per fact
    def sentence(self, e: Entry, p: dict[str, Any], o: dict[str, Any] | None, state: Any) -> str:
        method = getattr(self, "_" + e.type, None)
        if method is None:
            return f"{e.type}."
        text: str = method(p, o, state)
        return text

    def _NoteAdded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Note: {self.m.esc(p['text'])}"

    def _DiceRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = f"{self.name(p['creature'], s)} rolls" if p.get("creature") else "Dice rolled"
        why = f" for {self.m.esc(p['purpose'])}" if p.get("purpose") else ""
        return f"{who}{why}: {self.roll(p['roll'])}."

    def _CreatureRegistered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        self.names[p["creature_id"]] = p["name"]
        kind = {"pc": "player character", "monster": "monster", "npc": "NPC"}[p["kind"]]
        d = p["defenses"]
        bits = [f"{p['max_hp']} HP"]
        if p.get("surges_per_day"):
            bits.append(f"{p['surges_per_day']} healing surges")
        wounds = p.get("max_wounds") or p["abilities"].get("con", 10)
        bits.append(f"{wounds} wounds")
        bits.append(", ".join(f"{DEFENSES[k]} {d[k]}" for k in ("ac", "fort", "ref", "will") if k in d))
        for key, word in (("resist", "resist"), ("vuln", "vulnerable")):
            if p.get(key):
                bits.append(", ".join(f"{word} {v} {t}" for t, v in sorted(p[key].items())))
        return (
            f"{self.name(p['creature_id'])} joins the campaign: level {p['level']} {kind}; {'; '.join(bits)}."
        )

    def _SheetUpdated(self, p: dict[str, Any], o: Any, s: Any) -> str:
        changes = ", ".join(f"{k} {self.m.esc(str(v))}" for k, v in sorted(p["changes"].items()))
        why = f" ({self.m.esc(p['reason'])})" if p.get("reason") else ""
        return f"{self.name(p['creature_id'], s)}'s sheet changes: {changes}{why}."

    def damage_text(self, d: dict[str, Any], roll: Any = None) -> str:
        """``3d6 (4, 6, 2) + 5 = 17 fire, 5 resisted: 12 damage (12 HP)``."""
        types = " and ".join(d.get("types", []))
        head = self.roll(roll if roll is not None else d.get("roll"))
        steps = d.get("steps", [])
        rolled = steps[0]["value"] if steps else d.get("amount", 0)
        if not head:
            head = ""
        elif roll is not None and dice.roll_total(roll) != rolled:
            head += f", {rolled} counted"
        if types:
            head += f" {types}" if head else types
        notes = []
        for step in steps[1:]:
            label = step["step"]
            if label.startswith("resist"):
                notes.append(f"{-step['value']} resisted")
            elif label.startswith("vulnerable"):
                notes.append(f"+{step['value']} vulnerable")
            elif label != "after resistance and vulnerability":
                notes.append(label)
        if notes:
            head += (", " if head else "") + ", ".join(notes)
        layers = [
            f"{d[k]} {w}"
            for k, w in (("temp_hp_lost", "temporary HP"), ("hp_lost", "HP"), ("wounds_lost", "wounds"))
            if d.get(k)
        ]
        kind = "wounding damage" if d.get("wounding") else "damage"
        body = f"{head}: {d.get('amount', 0)} {kind}" if head else f"{d.get('amount', 0)} {kind}"
        if layers:
            body += f" ({', '.join(layers)})"
        return body

    def life(self, who: str, d: dict[str, Any]) -> str:
        before, after = d.get("life_before"), d.get("life_after")
        if after and after != before and after in LIFE:
            return f" {who} {LIFE[after]}."
        return ""

    def _DamageTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        src = f" from {self.m.esc(p['source'])}" if p.get("source") and p["source"] != "other" else ""
        if o is None:
            amount = self.roll(p["roll"]) or str(p["amount"])
            if p["roll"] and p["amount"]:
                amount += f" + {p['amount']}"
            return f"{who} takes {amount} {' and '.join(p['types'])} damage{src}.".replace("  ", " ")
        extra = f" + {p['amount']}" if p["roll"] and p["amount"] else ""
        return f"{who} takes damage{src}: {self.damage_text(o)}{extra}.{self.life(who, o)}"

    def _HealingApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        healer = f"{self.name(p['healer'], s)} heals {who}" if p.get("healer") else f"{who} is healed"
        how = [self.m.esc(p["source"])] if p.get("source") else []
        if p["magical"]:
            how.append("magical")
        parts = []
        if p["surge_multiplier"]:
            # the number is the fold's (the outcome's breakdown); a skipped fact shows the formula
            shown = [x["value"] for x in (o or {}).get("parts", []) if "surge value" in x["source"]]
            value = f"{shown[0]} " if shown else ""
            times = f"{p['surge_multiplier']} x " if p["surge_multiplier"] > 1 else ""
            parts.append(f"{value}({times}surge value)")
        if p["roll"]:
            parts.append(self.roll(p["roll"]))
        if p["flat"]:
            parts.append(str(p["flat"]))
        head = f"{healer}{' (' + ', '.join(how) + ')' if how else ''}"
        if o is None:
            return f"{head}: {' + '.join(parts) or '0'}."
        if o.get("note"):
            return f"{head}: {self.m.esc(o['note'])}."
        got = [
            f"{o['wounds_healed']} wounds" if o.get("wounds_healed") else "",
            f"{o['hp_healed']} HP" if o.get("hp_healed") else "",
        ]
        if o.get("wounds_raised_to_conscious"):
            got.insert(0, f"wounds raised by {o['wounds_raised_to_conscious']} to wake")
        restored = ", ".join(g for g in got if g) or "nothing"
        surge = ", spending a healing surge" if o.get("surge_spent") else ""
        return (
            f"{head}{surge}: {' + '.join(parts) or '0'}, {o['amount']} healing; restores {restored}."
            + self.life(who, o)
        )

    def _TemporaryHitPointsGranted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        src = f" ({self.m.esc(p['source'])})" if p.get("source") else ""
        amount = o["granted"] if o else p["amount"]
        tail = f"; now {o['temp_hp_after']}" if o else ""
        return f"{self.name(p['target'], s)} gains {amount} temporary hit points{src}{tail}."

    def _HealingSurgeSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        # v2: an enum cause ("short_rest" -> "short rest") and free words in `note`.
        why = p["cause"].replace("_", " ") if p["cause"] != "other" or not p.get("note") else ""
        why = "; ".join(w for w in (why, p.get("note") or "") if w)
        if o is None:
            return f"{who} spends a healing surge ({self.m.esc(why)})."
        return (
            f"{who} spends a healing surge ({self.m.esc(why)}): {o['hp_healed']} HP restored, "
            f"{o['surges_left']} surges left."
        )

    def _SecondWindUsed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None:
            return f"{who} uses second wind."
        return (
            f"{who} uses second wind: {o['hp_healed']} HP restored, +2 to all defenses until their next turn."
        )

    def _DeathSavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} makes a death saving throw: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        mods = f", {o['total']} with modifiers" if o["total"] != dice.roll_total(p["roll"]) else ""
        tail = f" ({o['death_save_failures']} failed so far)" if o["result"] == "failure" else ""
        return f"{head}{mods}: {o['result']}{tail}.{self.life(who, {'life_before': 'dying', **o})}"

    def _StabilizationAttempted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["target"], s)
        healer = self.name(p["healer"], s) if p.get("healer") else "Someone"
        check = f": {self.roll(p['roll'])}" if p.get("roll") else ""
        if o is None:
            return f"{healer} tries to stabilise {who}{check}."
        verdict = "stabilised" if o["success"] else "still dying"
        return f"{healer} tries to stabilise {who}{check} vs DC {o['dc']}: {who} is {verdict}."

    def _WoundsRestored(self, p: dict[str, Any], o: Any, s: Any) -> str:
        method = p["method"].replace("_", " ")
        tail = f" (wounds {o['wounds_before']} to {o['wounds_after']})" if o else ""
        return f"{self.name(p['target'], s)} recovers {p['amount']} wounds by {method}{tail}."

    def _DeathDeclared(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} dies: {self.m.esc(p['cause'])}."

    def _CreatureRaised(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} is raised from the dead ({self.m.esc(p['means'])})."

    def _rest(self, p: dict[str, Any], o: Any, s: Any, kind: str, length: str) -> str:
        who = (
            self.names_of(o["participants"], s)
            if o
            else (self.names_of(p["participants"], s) if p.get("participants") else "The party")
        )
        return f"{who} take{'s' if o and len(o['participants']) == 1 else ''} {kind} ({length})."

    def _ShortRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "a short rest", f"{p['minutes']} minutes")

    def _ExtendedRestTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return self._rest(p, o, s, "an extended rest", f"{p['hours']} hours")

    def _TimeAdvanced(self, p: dict[str, Any], o: Any, s: Any) -> str:
        m = p["minutes"]
        span = f"{m // 60} hours" if m % 60 == 0 and m >= 120 else f"{m} minutes"
        return f"Time passes: {span}."

    def _MilestoneReached(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Milestone: {self.names_of(p['creatures'], s)} gain an action point."

    def _ActionPointSpent(self, p: dict[str, Any], o: Any, s: Any) -> str:
        left = f"; {o['action_points_left']} left" if o else ""
        return f"{self.name(p['creature'], s)} spends an action point ({p['use'].replace('_', ' ')}{left})."

    def _ExperienceAwarded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f" for {self.m.esc(p['reason'])}" if p.get("reason") else ""
        text = f"{self.names_of(p['creatures'], s)} gain {p['amount']} XP{why}."
        ups = [
            f"{self.name(c, s)} reaches level {v['level_after']}"
            for c, v in (o or {}).get("creatures", {}).items()
            if v["level_after"] != v["level_before"]
        ]
        return text + (" " + "; ".join(ups) + "." if ups else "")

    def _LevelSet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        level = p["level"] if p["level"] is not None else "the level of their XP"
        return f"The GM sets {self.name(p['creature'], s)}'s level to {level}."

    # ----------------------------------------------------------- attacks
    def _parts(self, parts: list[dict[str, Any]]) -> str:
        out = ""
        for i, part in enumerate(parts):
            v = part["value"]
            label = "" if part["source"] in ("d20", "attack bonus") else f" ({self.m.esc(part['source'])})"
            out += (str(v) if i == 0 else (f" + {v}" if v >= 0 else f" - {-v}")) + label
        return out

    def _AttackMade(self, p: dict[str, Any], o: Any, s: Any) -> str:
        attacker = self.name(p["attacker"], s)
        power = self.m.esc(str(p["power"].get("name") or "an attack"))
        if o is None:
            rolls = ", ".join(
                f"{self.name(t['target'], s)} (d20: {dice.natural(t['roll'])})" for t in p["targets"]
            )
            return f"{attacker} attacks {rolls} with {power}."
        sentences = []
        shared = o["kind"] in ("close", "area")
        if shared and p.get("damage"):
            sentences.append(
                f"{attacker} uses {power} ({o['kind']}), damage {self.roll(p['damage'])} for all"
            )
        for t in o["targets"]:
            target = self.name(t["target"], s)
            verb = "critically hits" if t["crit"] else ("hits" if t["hit"] else "misses")
            text = (
                f"{attacker} {verb} {target} with {power}: {self._parts(t['attack_parts'])} = "
                f"{t['attack_total']} vs {DEFENSES[t['defense']]} {t['defense_value']}"
            )
            extra_def = [x for x in t["defense_parts"][1:]]
            if extra_def:
                text += (
                    " (" + ", ".join(f"{self.m.esc(x['source'])} {x['value']:+d}" for x in extra_def) + ")"
                )
            if t.get("overridden"):
                text += (
                    " [GM override: "
                    + ", ".join(f"{k} = {str(v).lower()}" for k, v in sorted(t["overridden"].items()))
                    + "]"
                )
            if "damage" in t:
                text += "; " + self.damage_text(t["damage"], None if shared else t["damage"]["roll"])
            for eff in t.get("effects", []):
                lasting = self.duration(eff["duration"], s, p["attacker"])
                text += f"; {target} is {self.m.esc(eff['name'])} ({lasting})"
            text += "." + (self.life(target, t["damage"]) if "damage" in t else "")
            sentences.append(text)
        return " ".join(x if x.endswith(".") else x + "." for x in sentences)

    # -------------------------------------------------------- encounters
    def _EncounterStarted(self, p: dict[str, Any], o: Any, s: Any) -> str:
        name = self.m.esc(p["name"] or p["encounter_id"])
        return f"Encounter {name} begins: {self.names_of(p['participants'], s)}."

    def _SurpriseDetermined(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if not p["surprised"]:
            return "Nobody is surprised."
        one = len(p["surprised"]) == 1
        return (
            f"Surprise! {self.names_of(p['surprised'], s)} {'is' if one else 'are'} surprised and "
            f"take{'s' if one else ''} no turn in the surprise round."
        )

    def _InitiativeRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        if o is None:
            return f"{who} rolls initiative: {self.roll(p['roll'])}."
        return f"{who} rolls initiative: {self.roll(p['roll'])}, + {o['bonus']} = {o['score']}."

    def _InitiativeTieBroken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"Initiative tie broken by {p['method']}: {self.names_of(p['creatures'], s)}, in that order."

    def _TurnEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        if o is None:
            return "The turn ends."
        return f"{self.name(o['ended'], s)}'s turn ends."

    def _TurnDelayed(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} delays."

    def _DelayedTurnTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        after = f" after {self.name(o['acts_after'], s)}" if o else ""
        return f"{self.name(p['creature'], s)} takes the delayed turn{after}."

    def _ActionReadied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"{self.name(p['creature'], s)} readies a {p['action']} action: {self.m.esc(p['trigger'])}."

    def _ReadiedActionTriggered(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return (
            f"{self.name(p['creature'], s)}'s readied action is triggered by "
            f"{self.name(p['trigger_creature'], s)}."
        )

    def _ActionTaken(self, p: dict[str, Any], o: Any, s: Any) -> str:
        name = f": {self.m.esc(p['name'])}" if p.get("name") else ""
        sub = f" (instead of a {p['substitutes_for']} action)" if p.get("substitutes_for") else ""
        gm = " (GM exception)" if p.get("gm_exception") else ""
        article = "an" if p["action"][0] in "aeiou" else "a"
        return f"{self.name(p['creature'], s)} takes {article} {p['action']} action{sub}{name}{gm}."

    def _EffectApplied(self, p: dict[str, Any], o: Any, s: Any) -> str:
        eff = p["effect"]
        comps = []
        for comp in eff.get("components", []):
            if "condition" in comp:
                marker = f" by {self.name(comp['marker'], s)}" if comp.get("marker") else ""
                comps.append(f"{comp['condition']}{marker}")
            if "ongoing" in comp:
                comps.append(
                    f"ongoing {comp['ongoing']['amount']} {comp['ongoing'].get('type', '')}".rstrip()
                )
            for key in ("defense_mod", "attack_mod"):
                if key in comp:
                    comps.append(f"{key.split('_')[0]} {comp[key]['value']:+d}")
            for key in ("resist", "vuln"):
                if key in comp:
                    comps.append(f"{key} {comp[key]['value']} {comp[key].get('type', '')}".rstrip())
            if "regeneration" in comp:
                comps.append(f"regeneration {comp['regeneration']}")
        ident = f" [{o['effect_id']}]" if o else ""
        return (
            f"{self.name(p['source'], s)} puts {self.m.esc(eff.get('name', 'an effect'))}{ident} on "
            f"{self.name(p['target'], s)}: {', '.join(comps)} "
            f"({self.duration(eff.get('duration', {'kind': 'until_removed'}), s, p['source'])})."
        )

    def _EffectSustained(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = f"{self.name(o['sustained_by'], s)} sustains" if o else "Sustained:"
        return f"{who} effect {self.m.esc(p['effect_id'])} ({p['action']} action)."

    def _EffectEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        on = f" on {self.name(o['target'], s)}" if o else ""
        return f"Effect {self.m.esc(p['effect_id'])}{on} ends: {self.m.esc(p['reason'])}."

    def _SavingThrowRolled(self, p: dict[str, Any], o: Any, s: Any) -> str:
        who = self.name(p["creature"], s)
        head = f"{who} saves against {self.m.esc(p['effect_id'])}: {self.roll(p['roll'])}"
        if o is None:
            return head + "."
        mods = f", {o['total']} with modifiers" if o["total"] != dice.roll_total(p["roll"]) else ""
        if o["success"]:
            after = ", its aftereffect begins" if o.get("aftereffect") else ""
            return f"{head}{mods}: success, the effect ends{after}."
        return f"{head}{mods}: failure."

    def _EncounterEnded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        rounds = f" after {o['rounds']} rounds" if o else ""
        text = f"The encounter ends{rounds}" + (f": {self.m.esc(p['outcome'])}" if p.get("outcome") else ".")
        if o and o.get("milestone"):
            text += f" Milestone: {self.names_of(o['milestone'], s)} gain an action point."
        return text

    # ------------------------------------------------------- corrections
    def _FactRevoked(self, p: dict[str, Any], o: Any, s: Any) -> str:
        cascade = {
            "fact": "",
            "action": " with its whole table action",
            "consequences": " with everything it caused",
        }[p["cascade"]]
        return f"The GM revokes fact #{p['target']}{cascade}: {self.m.esc(p['reason'])}"

    def _FactRestored(self, p: dict[str, Any], o: Any, s: Any) -> str:
        why = f": {self.m.esc(p['reason'])}" if p.get("reason") else "."
        return f"The GM cancels revocation #{p['revocation']}{why}"

    def _FactAmended(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return f"The GM amends fact #{p['target']}: {self.m.esc(p['reason'])}"

    def _RulingRecorded(self, p: dict[str, Any], o: Any, s: Any) -> str:
        return (
            f"GM ruling {self.m.esc(p['ruling_id'])}: {self.m.esc(p['question'])} {self.m.esc(p['decision'])}"
        )

    def _RulingContested(self, p: dict[str, Any], o: Any, s: Any) -> str:
        by = f"{self.m.esc(p['by'])} contests" if p.get("by") else "Contested:"
        return f"{by} ruling {self.m.esc(p['ruling_id'])}: {self.m.esc(p['argument'])}"

    def _RulingResolved(self, p: dict[str, Any], o: Any, s: Any) -> str:
        decision = f": {self.m.esc(p['decision'])}" if p.get("decision") else "."
        return f"Ruling {self.m.esc(p['ruling_id'])} is {p['outcome']}{decision}"

    def _OutcomeOverridden(self, p: dict[str, Any], o: Any, s: Any) -> str:
        value = self.m.esc(str(p["value"]).lower() if isinstance(p["value"], bool) else str(p["value"]))
        why = self.m.esc(p["reason"])
        return f"The GM overrides fact #{p['target']}: {self.m.esc(p['field'])} = {value} ({why})."

    def _RulesFlagSet(self, p: dict[str, Any], o: Any, s: Any) -> str:
        when = ", retroactively" if p.get("retroactive") else ""
        return f"House rule: {self.m.esc(p['flag'])} = {self.m.esc(str(p['value']))}{when}."

    # --------------------------------------------------------- boundaries
    def boundary(self, o: dict[str, Any], s: Any) -> list[tuple[str, Any]]:
        """Derived steps of a turn boundary, as ("derived", text) / ("round", n) / ("turn", cid)."""
        out: list[tuple[str, Any]] = []
        for key, verb in (("aftereffects_began", "aftereffect begins"),):
            for eid in o.get(key, []):
                out.append(("derived", f"{self.m.esc(eid)}: {verb}."))
        for key, verb in (("sustained_lapsed", "is not sustained and ends"), ("effects_ended", "ends")):
            for x in o.get(key, []):
                out.append(("derived", f"{self.m.esc(x['name'])} on {self.name(x['target'], s)} {verb}."))
        for turn in o.get("turns", []):
            who = self.name(turn["creature"], s)
            if "skipped" in turn:
                out.append(("derived", f"{who}'s turn is skipped: {self.m.esc(turn['skipped'])}."))
                continue
            if turn.get("lost_delayed_turn"):
                out.append(("derived", f"{who} waited too long: the delayed turn is lost."))
            if "round" in turn:
                out.append(("round", turn["round"]))
            out.append(("turn", turn["creature"]))
            for tick in turn.get("ongoing_damage", []):
                out.append(
                    (
                        "derived",
                        f"Ongoing {tick['type']} damage ({self.m.esc(tick['effect_id'])}) hurts "
                        f"{who}: {self.damage_text(tick)}.{self.life(who, tick)}",
                    )
                )
            if turn.get("regeneration"):
                out.append(("derived", f"{who} regenerates {turn['regeneration']['hp_healed']} HP."))
            for x in turn.get("effects_ended", []):
                out.append(("derived", f"{self.m.esc(x['name'])} on {self.name(x['target'], s)} ends."))
        return out


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
    w = Writer(markup)
    esc = markup.esc
    res = ledger.resolution
    fixes = _scan(ledger)
    rnd: int | None = None
    started = False
    for entry, outcome, orphan, state in ledger.replay_iter(upto=sel.last):
        seq = entry.seq
        payload = res.amended.get(seq, entry.payload)
        if seq < sel.first:
            if entry.type == "CreatureRegistered":
                w.names[payload["creature_id"]] = payload["name"]
            continue
        if not started:
            started = True
            enc = state.encounter
            if sel.first > ledger.first_seq and enc is not None and entry.type != "EncounterStarted":
                yield Heading(2, f"Encounter: {esc(enc.name or enc.id)} (continued)", f"enc-{enc.id}")
        if outcome is not None and entry.type == "EncounterStarted":
            name = esc(payload["name"] or payload["encounter_id"])
            yield Heading(2, f"Encounter: {name}", f"enc-{payload['encounter_id']}")
            rnd = None
        text = w.sentence(entry, payload, outcome, state)
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
        if entry.type in (
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
        ):
            status.append("meta")
        yield FactLine(seq, text, tuple(status), tuple(notes))
        if outcome is None:
            continue
        steps: list[tuple[str, Any]] = []
        if entry.type == "InitiativeRolled" and "order" in outcome:
            enc = state.encounters[payload["encounter_id"]]
            order = ", ".join(f"{w.name(c, state)} {enc.initiative[c]['score']}" for c in outcome["order"])
            yield Para(f"Initiative order: {order}.")
            steps = w.boundary(outcome, state)
        elif entry.type in ("TurnEnded", "TurnDelayed"):
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
