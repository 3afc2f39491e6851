"""One sentence per hero's-surge fact, for logs and exports (pure).

``sentence(fact_type, payload, outcome, names)`` reads the fact's effective payload, the outcome
the fold gave it (None when revoked or orphaned: the sentence then tells what was recorded, not
what followed) and the creatures' names. It returns None for a fact type it does not know (the
core's corrections, rulings and notes are narrated by the core).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain import dice

Who = Callable[[Any], str]
Sentence = Callable[[Mapping[str, Any], Mapping[str, Any], Who], str]

EVENTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "fell_unconscious": lambda e: "falls unconscious",
    "surge_lost": lambda e: f"loses a hero's surge ({e['hero_surges']} left)",
    "hp_lost": lambda e: (
        f"has no surge to lose: loses {e['amount']} HP and gains a negative surge ({e['hero_surges']})"
    ),
    "started_dying": lambda e: "begins dying",
    "died": lambda e: f"dies ({e['cause']})",
    "dying_ended": lambda e: f"stops dying ({e['why']})",
    "regained_consciousness": lambda e: "regains consciousness",
    "luck_roll_owed": lambda e: "must make a luck roll",
    "healed": lambda e: f"is at {e['hp']} HP",
    "surges_restored": lambda e: f"regains {e['amount']} hero's surge(s) ({e['hero_surges']})",
    "surge_spent": lambda e: f"spends a hero's surge on {_words(e['purpose'])} ({e['hero_surges']} left)",
    "surge_gained": lambda e: f"gains a hero's surge ({e['hero_surges']})",
    "luck_advantage_granted": lambda e: "gains advantage on the next luck roll",
    "temporary_hp_ended": lambda e: f"loses {e['amount']} temporary HP",
    "restored_to_life": lambda e: f"is restored to life ({e['means']})",
}


def _words(name: Any) -> str:
    return str(name).replace("_", " ")


def _roll(p: Mapping[str, Any], key: str = "roll") -> str:
    roll = p.get(key)
    return dice.describe(roll) if isinstance(roll, dict) else ""


def _then(o: Mapping[str, Any]) -> str:
    said = [EVENTS[e["event"]](e) for e in o.get("events", []) if e.get("event") in EVENTS]
    return ("; " + ", ".join(said)) if said else ""


def _damage(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    if not o:
        return f"{who(p.get('target'))} is dealt damage"
    extra = " (armor bypassed)" if o.get("bypass_dr") else ""
    crit = " critical" if o.get("critical") else ""
    return f"{who(p.get('target'))} takes {o.get('taken')} of {o.get('amount')}{crit} damage{extra}{_then(o)}"


def _attempt(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    level = o.get("success_level", p.get("success_level"))
    text = f"{who(p.get('creature'))}'s {p.get('kind')} attempt ({_roll(p)}): {_words(level)}"
    if o.get("natural_1_critical_failure"):
        text += " (a natural 1 on a failure)"
    return text


def _luck(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    result = o.get("result", p.get("result") or "ruled later")
    how = f"{_words(p.get('context'))}, {_roll(p)}"
    return f"{who(p.get('creature'))} makes a luck roll ({how}): {result}{_then(o)}"


def _defense(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    if not o:
        return f"A defense against {len(p.get('incoming', []))} attacks is resolved"
    incoming = len(p.get("incoming", []))
    text = f"{who(o.get('defender'))}'s defense blocks {len(o['blocked'])} of {incoming} attacks"
    if o.get("critical_hits"):
        text += f"; critical hits: {', '.join(o['critical_hits'])}"
    elif o.get("bypass_armor"):
        text += f"; bypassing armor: {', '.join(o['bypass_armor'])}"
    return text


def _level(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    text = f"{who(p.get('creature'))} reaches level {p.get('new_level')}"
    if o:
        text += f": +{o['gain']} hit points ({o['how']}), max HP {o['max_hp']}"
    return text


def _creature(verb: str, key: str = "creature") -> Sentence:
    return lambda p, o, who: f"{who(p.get(key))} {verb}{_then(o)}"


SENTENCES: dict[str, Sentence] = {
    "CreatureRegistered": lambda p, o, who: (
        f"{p.get('name')} joins ({'hero' if o.get('hero') else p.get('kind')}, level {p.get('level')}, "
        f"{p.get('max_hp')} HP)"
    ),
    "SheetUpdated": lambda p, o, who: (
        f"{who(p.get('creature_id'))}'s sheet changes: {', '.join(sorted(p.get('changes', {})))}"
    ),
    "InitiativeCheckRolled": lambda p, o, who: (
        f"{who(p.get('creature'))} checks initiative for round {p.get('round')}: "
        f"{_words(p.get('success_level'))}"
        + (f", knocked back to {_words(o['band'])}" if o.get("knocked_back") else "")
    ),
    "InitiativeOrderChosen": lambda p, o, who: (
        f"Order among the {p.get('side')} in the {_words(p.get('success_level'))} band: "
        + ", ".join(who(c) for c in p.get("order", []))
    ),
    "DefendDeclared": lambda p, o, who: (
        f"{who(p.get('creature'))} defends"
        + (f" {who(p['target'])} ({p.get('mode')})" if p.get("target") else "")
    ),
    "FullRoundActionStarted": lambda p, o, who: (
        f"{who(p.get('creature'))} begins a full-round action: {p.get('action')}"
    ),
    "FullRoundActionMaintained": _creature("maintains the full-round action"),
    "FullRoundActionAborted": _creature("aborts the full-round action"),
    "FullRoundActionCompleted": _creature("completes the full-round action"),
    "AttemptRolled": _attempt,
    "FortuneDieExchanged": lambda p, o, who: (
        f"Attempt {p.get('attempt_id')} is downgraded to a normal success for a Fortune Die"
    ),
    "FortuneDieSpent": lambda p, o, who: f"{who(p.get('creature'))} spends a Fortune Die: {p.get('effect')}",
    "DevastatingEffectChosen": lambda p, o, who: (
        f"Devastating Effect of {p.get('attempt_id')}: {_words(p.get('option'))}"
        + (f" on {who(p['target'])}" if p.get("target") else "")
    ),
    "HamperingEffectChosen": lambda p, o, who: (
        f"Hampering Effect of {p.get('attempt_id')}: {_words(p.get('option'))}"
        + (f" on {who(p['target'])}" if p.get("target") else "")
    ),
    "RankPenaltyConsumed": lambda p, o, who: (
        f"{who(p.get('target'))}'s attempt {p.get('attempt_id')} suffers its rank penalty"
        + (f" ({o['rank_penalty']})" if o else "")
    ),
    "MultiAttackDefenseResolved": _defense,
    "DamageRolled": lambda p, o, who: (
        f"Damage {p.get('damage_id')}: {_roll(p)}"
        + (f", maximised to {o['dice']}" if o.get("maximized") else "")
        + (f" + additional die {o['additional_die']}" if o.get("additional_die") is not None else "")
    ),
    "DiceRerolled": lambda p, o, who: (
        f"Brutal Damage rerolls die {p.get('die_index')} of {p.get('roll_id')}: {p.get('new_face')}"
        + ((" (higher: kept)" if o["replaced"] else " (not higher)") if o else "")
    ),
    "DamageApplied": _damage,
    "TemporaryHitPointsGranted": lambda p, o, who: (
        f"{who(p.get('target'))} gains {o.get('granted', p.get('amount'))} temporary hit points"
        + (" (keeps the larger pool)" if o.get("kept") == "old" else "")
    ),
    "HealingApplied": lambda p, o, who: (
        f"{who(p.get('target'))} is healed for {o.get('amount', p.get('amount'))}{_then(o)}"
    ),
    "LuckRollMade": _luck,
    "MedicalAttemptMade": lambda p, o, who: (
        f"{who(p.get('healer'))} tends {who(p.get('target'))} "
        f"({_words(o.get('success_level', 'attempt'))}){_then(o)}"
    ),
    "HealersKitUsed": lambda p, o, who: (
        f"{who(p.get('healer'))} uses a healer's kit on {who(p.get('target'))}{_then(o)}"
    ),
    "InstantKillRuled": lambda p, o, who: f"Instagib! {who(p.get('target'))} is slain outright",
    "RestoredToLife": _creature("is restored to life"),
    "HeroSurgeSpent": lambda p, o, who: (
        f"{who(p.get('creature'))} spends a hero's surge ({_words(p.get('purpose'))}){_then(o)}"
        if o.get("surge_spent", True)
        else f"{who(p.get('creature'))} has no hero's surge to spend: nothing happens"
    ),
    "HeroSurgeDrained": lambda p, o, who: (
        f"{who(p.get('creature'))} is drained of a hero's surge"
        + (f" by {p['source']}" if p.get("source") else "")
        + _then(o)
    ),
    "HeroSurgesRestored": lambda p, o, who: (
        f"{who(p.get('creature'))} regains up to {p.get('amount')} hero's surge(s){_then(o)}"
    ),
    "RestTaken": lambda p, o, who: (
        f"A {p.get('kind')} rest"
        + (f" of {p['hours']} hours" if p.get("hours") is not None else "")
        + (": " + ", ".join(who(c) for c in o["participants"]) if o.get("participants") else "")
    ),
    "TimeAdvanced": lambda p, o, who: f"{p.get('minutes')} minutes pass",
    "LevelGained": _level,
}


def sentence(
    fact_type: str, payload: Mapping[str, Any], outcome: Mapping[str, Any] | None, names: Mapping[str, str]
) -> str | None:
    """The plain sentence for a hero's-surge fact, or None for a fact the core narrates."""

    def who(cid: Any) -> str:
        return names.get(cid, str(cid)) if isinstance(cid, str) else "someone"

    handler = SENTENCES.get(fact_type)
    return None if handler is None else handler(payload, outcome or {}, who)
