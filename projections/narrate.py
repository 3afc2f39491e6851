"""One human-readable line per fact, as corrected.

``narrate(entry, payload, outcome, status)`` is pure: it turns a fact (with its effective,
i.e. amended, payload), the outcome the fold gave it and its correction status into one
Markdown-ish line, e.g.::

    Traze attacks Goblin with fireball: 1d20 (14) = 14 +7 = 21 vs Reflex 15: miss
    ~~Orc deals 2d6 (4, 6) + 3 = 13 damage to Vex~~ (revoked at 14: misread die)

Dice are rendered with :func:`domain.dice.describe` (dropped dice struck through). The
sentences are deliberately plain; richer exports can build on this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain import dice
from domain.ledger import Entry

__all__ = ["FactStatus", "narrate", "sentence"]


@dataclass(frozen=True)
class FactStatus:
    """How corrections treat one fact (the annotations of its log line)."""

    revoked_at: int | None = None
    revoked_reason: str = ""
    amended_at: tuple[int, ...] = ()
    amended_reasons: tuple[str, ...] = ()
    orphan_reason: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def flags(self) -> list[str]:
        out = []
        if self.revoked_at is not None:
            out.append("revoked")
        if self.amended_at:
            out.append("amended")
        if self.orphan_reason is not None:
            out.append("orphaned")
        if self.overrides:
            out.append("overridden")
        return out or ["active"]


def narrate(
    entry: Entry,
    payload: Mapping[str, Any],
    outcome: Mapping[str, Any] | None,
    status: FactStatus,
    names: Mapping[str, str] | None = None,
) -> str:
    """The log line of one fact: its sentence, struck through if revoked, with its corrections."""
    text = sentence(entry.type, payload, outcome, names or {})
    notes: list[str] = []
    if status.revoked_at is not None:
        text = f"~~{text}~~"
        notes.append(_note(f"revoked at {status.revoked_at}", status.revoked_reason))
    for at, reason in zip(status.amended_at, status.amended_reasons, strict=False):
        notes.append(_note(f"amended at {at}", reason))
    if status.orphan_reason is not None:
        notes.append(f"orphaned: {status.orphan_reason}")
    if status.overrides:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in sorted(status.overrides.items()))
        notes.append(f"GM override: {shown}")
    return text + "".join(f" ({n})" for n in notes)


def _note(head: str, reason: str) -> str:
    return f"{head}: {reason}" if reason else head


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _roll(payload: Mapping[str, Any], key: str = "roll") -> str:
    roll = payload.get(key)
    return dice.describe(roll) if isinstance(roll, dict) else ""


# --------------------------------------------------------------------------- sentences
Sentence = Callable[[Mapping[str, Any], Mapping[str, Any], Callable[[Any], str]], str]


def sentence(
    fact_type: str, payload: Mapping[str, Any], outcome: Mapping[str, Any] | None, names: Mapping[str, str]
) -> str:
    """The plain sentence for a fact (without correction annotations)."""

    def who(cid: Any) -> str:
        return names.get(cid, str(cid)) if isinstance(cid, str) else "someone"

    handler = _SENTENCES.get(fact_type)
    out = outcome or {}
    if handler is None:
        return f"{_words(fact_type)}"
    return handler(payload, out, who)


def _words(fact_type: str) -> str:
    out: list[str] = []
    for ch in fact_type:
        if ch.isupper() and out:
            out.append(" ")
        out.append(ch.lower())
    text = "".join(out)
    return text[:1].upper() + text[1:]


def _damage(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    rolled = _roll(p)
    amount = o.get("amount", p.get("amount", 0))
    types = " ".join(p.get("types") or [])
    how = f" ({rolled})" if rolled else ""
    text = f"{who(p.get('target'))} takes {amount}{' ' + types if types else ''} damage{how}"
    if o.get("life_after") and o.get("life_after") != o.get("life_before"):
        text += f": {o['life_after'].replace('_', ' ')}"
    return text


def _heal(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    healer = f" by {who(p['healer'])}" if p.get("healer") else ""
    rolled = _roll(p)
    text = f"{who(p.get('target'))} is healed{healer} for {o.get('amount', p.get('flat', 0))}"
    if rolled:
        text += f" ({rolled})"
    if o.get("surge_spent"):
        text += ", spending a healing surge"
    return text


def _attack(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    power = p.get("power") or {}
    name = power.get("name") if isinstance(power, dict) else None
    parts = []
    results = {t.get("target"): t for t in o.get("targets", []) if isinstance(t, dict)}
    for t in p.get("targets", []):
        res = results.get(t.get("target"), {})
        bit = f"{who(t.get('target'))}: {_roll(t)}"
        if res:
            defense = str(res.get("defense", "")).upper()
            bit += f", total {res.get('attack_total')} vs {defense} {res.get('defense_value')}"
            bit += ", critical hit" if res.get("crit") else (", hit" if res.get("hit") else ", miss")
            if res.get("damage") is not None and isinstance(res.get("damage"), dict):
                dealt = res["damage"].get("amount")
                if dealt is not None:
                    bit += f" for {dealt} damage"
        parts.append(bit)
    damage = _roll(p, "damage")
    text = f"{who(p.get('attacker'))} attacks" + (f" with {name}" if name else "") + ": " + "; ".join(parts)
    if damage:
        text += f" (damage {damage})"
    return text


def _creature(verb: str) -> Sentence:
    def line(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
        return f"{who(p.get('creature', p.get('target')))} {verb}"

    return line


def _death_save(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    text = f"{who(p.get('creature'))} rolls a death saving throw: {_roll(p)}"
    if o.get("result"):
        text += f", {o['result']}"
    return text


def _stabilize(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    by = f"{who(p['healer'])} tries to stabilize " if p.get("healer") else "An attempt to stabilize "
    text = by + who(p.get("target"))
    if p.get("roll"):
        text += f": {_roll(p)}"
    if "success" in o:
        text += ", success" if o["success"] else ", failure"
    return text


def _registered(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    sheet = f"{p.get('kind')}, level {p.get('level')}, {p.get('max_hp')} HP"
    return f"{p.get('name')} joins the campaign ({sheet})"


def _revoked(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    cascade = p.get("cascade", "fact")
    what = "table action" if cascade == "action" else "consequences"
    scope = "" if cascade == "fact" else f" and its {what}"
    return f"GM revokes fact {p.get('target')}{scope}: {p.get('reason')}"


def _amended(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    return f"GM amends fact {p.get('target')}: {p.get('reason')}"


def _restored(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    reason = p.get("reason")
    return f"GM cancels revocation {p.get('revocation')}" + (f": {reason}" if reason else "")


def _ruling(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    return f"Ruling {p.get('ruling_id')}: {p.get('question')} {p.get('decision')}"


def _contested(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    by = f" by {who(p['by'])}" if p.get("by") else ""
    return f"Ruling {p.get('ruling_id')} contested{by}: {p.get('argument')}"


def _resolved(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    decision = p.get("decision")
    return f"Ruling {p.get('ruling_id')} {p.get('outcome')}" + (f": {decision}" if decision else "")


def _override(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    value = _short(p.get("value"))
    return f"GM overrides {p.get('field')} of fact {p.get('target')} to {value}: {p.get('reason')}"


def _flag(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    when = " (retroactively)" if p.get("retroactive") else ""
    return f"Rule {p.get('flag')} set to {_short(p.get('value'))}{when}"


def _dice_rolled(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    by = who(p["creature"]) if p.get("creature") else "The GM"
    purpose = f" for {p['purpose']}" if p.get("purpose") else ""
    return f"{by} rolls{purpose}: {_roll(p)}"


def _xp(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    names = ", ".join(who(c) for c in p.get("creatures", []))
    reason = f" ({p['reason']})" if p.get("reason") else ""
    return f"{names} gain{'s' if len(p.get('creatures', [])) == 1 else ''} {p.get('amount')} XP{reason}"


def _rest(kind: str) -> Sentence:
    def line(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
        people = p.get("participants")
        names = ", ".join(who(c) for c in people) if people else "Everyone"
        article = "an" if kind[0] in "aeiou" else "a"
        return f"{names} take{'s' if people and len(people) == 1 else ''} {article} {kind} rest"

    return line


def _encounter(verb: str) -> Sentence:
    def line(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
        name = p.get("name") or p.get("encounter_id")
        text = f"Encounter {name} {verb}"
        if p.get("participants"):
            text += ": " + ", ".join(who(c) for c in p["participants"])
        return text

    return line


def _initiative(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    score = f" = {o['score']}" if "score" in o else ""
    return f"{who(p.get('creature'))} rolls initiative: {_roll(p)}{score}"


def _turn_ended(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    nxt = f"; {who(o['turn_of'])} is up" if o.get("turn_of") else ""
    rnd = f" (round {o['round_now']})" if o.get("round_now") else ""
    return f"Turn ends{nxt}{rnd}"


def _action(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    name = f": {p['name']}" if p.get("name") else ""
    return f"{who(p.get('creature'))} takes a {p.get('action')} action{name}"


def _effect(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    effect = p.get("effect") or {}
    name = effect.get("name") if isinstance(effect, dict) else None
    return f"{who(p.get('source'))} puts {name or 'an effect'} on {who(p.get('target'))}"


def _save(p: Mapping[str, Any], o: Mapping[str, Any], who: Callable[[Any], str]) -> str:
    return f"{who(p.get('creature'))} saves against {p.get('effect_id')}: {_roll(p)}"


_SENTENCES: dict[str, Sentence] = {
    "CreatureRegistered": _registered,
    "SheetUpdated": lambda p, o, who: (
        f"{who(p.get('creature_id'))}'s sheet is updated" + (f": {p['reason']}" if p.get("reason") else "")
    ),
    "DamageTaken": _damage,
    "HealingApplied": _heal,
    "TemporaryHitPointsGranted": lambda p, o, who: (
        f"{who(p.get('target'))} gains {o.get('granted', p.get('amount'))} temporary hit points"
    ),
    "HealingSurgeSpent": _creature("spends a healing surge"),
    "SecondWindUsed": _creature("uses second wind"),
    "DeathSavingThrowRolled": _death_save,
    "StabilizationAttempted": _stabilize,
    "WoundsRestored": lambda p, o, who: (
        f"{who(p.get('target'))} recovers {p.get('amount')} "
        f"wound{'s' if p.get('amount') != 1 else ''} ({str(p.get('method', '')).replace('_', ' ')})"
    ),
    "DeathDeclared": lambda p, o, who: f"{who(p.get('creature'))} dies: {p.get('cause')}",
    "CreatureRaised": lambda p, o, who: f"{who(p.get('creature'))} is raised: {p.get('means')}",
    "ShortRestTaken": _rest("short"),
    "ExtendedRestTaken": _rest("extended"),
    "TimeAdvanced": lambda p, o, who: f"{p.get('minutes')} minutes pass",
    "MilestoneReached": lambda p, o, who: (
        "Milestone reached: " + ", ".join(who(c) for c in p.get("creatures", []))
    ),
    "ActionPointSpent": _creature("spends an action point"),
    "ExperienceAwarded": _xp,
    "LevelSet": lambda p, o, who: f"{who(p.get('creature'))}'s level is set to {p.get('level')}",
    "AttackMade": _attack,
    "EncounterStarted": _encounter("begins"),
    "SurpriseDetermined": lambda p, o, who: (
        "Surprised: " + (", ".join(who(c) for c in p.get("surprised", [])) or "nobody")
    ),
    "InitiativeRolled": _initiative,
    "InitiativeTieBroken": lambda p, o, who: (
        "Initiative tie broken by "
        + str(p.get("method"))
        + ": "
        + ", ".join(who(c) for c in p.get("creatures", []))
    ),
    "TurnEnded": _turn_ended,
    "TurnDelayed": _creature("delays"),
    "DelayedTurnTaken": _creature("takes the delayed turn"),
    "ActionReadied": lambda p, o, who: (
        f"{who(p.get('creature'))} readies a {p.get('action')} action: {p.get('trigger')}"
    ),
    "ReadiedActionTriggered": lambda p, o, who: (
        f"{who(p.get('creature'))}'s readied action is triggered by {who(p.get('trigger_creature'))}"
    ),
    "ActionTaken": _action,
    "EffectApplied": _effect,
    "EffectSustained": lambda p, o, who: (
        f"Effect {p.get('effect_id')} is sustained ({p.get('action')} action)"
    ),
    "EffectEnded": lambda p, o, who: f"Effect {p.get('effect_id')} ends ({p.get('reason')})",
    "SavingThrowRolled": _save,
    "EncounterEnded": lambda p, o, who: (
        f"Encounter {p.get('encounter_id')} ends" + (f": {p['outcome']}" if p.get("outcome") else "")
    ),
    "FactRevoked": _revoked,
    "FactRestored": _restored,
    "FactAmended": _amended,
    "RulingRecorded": _ruling,
    "RulingContested": _contested,
    "RulingResolved": _resolved,
    "OutcomeOverridden": _override,
    "RulesFlagSet": _flag,
    "NoteAdded": lambda p, o, who: f"Note: {p.get('text')}",
    "DiceRolled": _dice_rolled,
}
