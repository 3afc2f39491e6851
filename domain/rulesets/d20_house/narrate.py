"""One plain sentence per d20 house-rules fact, from ``(fact_type, payload, outcome, names)``.

Pure: it reads only its arguments (the outcome is the fold's, so numbers are never
recomputed here). ``names`` maps creature ids to display names. An unknown fact type gets
its name in words, so the log never fails on a fact it cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from domain import dice

Who = Callable[[Any], str]


def sentence(
    fact_type: str, payload: Mapping[str, Any], outcome: Mapping[str, Any] | None, names: Mapping[str, str]
) -> str:
    def who(cid: Any) -> str:
        return names.get(cid, str(cid)) if isinstance(cid, str) else "someone"

    handler = SENTENCES.get(fact_type)
    if handler is None:
        return _words(fact_type)
    return handler(payload, outcome or {}, who)


def _words(fact_type: str) -> str:
    out: list[str] = []
    for ch in fact_type:
        if ch.isupper() and out:
            out.append(" ")
        out.append(ch.lower())
    text = "".join(out)
    return text[:1].upper() + text[1:]


def _roll(p: Mapping[str, Any], key: str = "roll") -> str:
    roll = p.get(key)
    return dice.describe(roll) if isinstance(roll, dict) else ""


def _life(o: Mapping[str, Any]) -> str:
    if o.get("died"):
        return f": dead ({str(o['died']).replace('_', ' ')})"
    if o.get("life_after") and o.get("band_before") and o.get("band_after") != o.get("band_before"):
        return f": {o['life_after']}"
    return ""


def _hp(o: Mapping[str, Any]) -> str:
    return f" (HP {o['hp_before']} -> {o['hp_after']})" if "hp_after" in o and "hp_before" in o else ""


def _registered(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    return f"{p['name']} joins ({p['kind']}, level {p['level']}, {p['max_hp']} HP)"


def _sheet(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    return f"{who(p['creature_id'])}'s sheet changes: {', '.join(sorted(p.get('changes') or {}))}"


def _damage(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    rolled = _roll(p)
    how = f" ({rolled})" if rolled else ""
    amount = o.get("amount", p.get("amount"))
    return f"{who(p['target'])} takes {amount} damage from {p.get('source')}{how}{_hp(o)}{_life(o)}"


def _healing(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    by = f" by {who(p['healer'])}" if p.get("healer") else ""
    text = f"{who(p['target'])} is healed{by} for {o.get('amount', p.get('amount'))}{_hp(o)}"
    if o.get("band_before") == "dying":
        text += ": stable" if o.get("band_after") == "dying" else f": {o.get('life_after')}"
    return text


def _heal_check(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    result = "stabilised" if o.get("success") else "still dying"
    return f"{who(p['healer'])} tends {who(p['target'])}: Heal {o.get('total')} vs DC {o.get('dc')}, {result}"


def _stabilization(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    head = f"{who(p['creature'])} rolls d% {o.get('face')} against Stamina {o.get('chance')}"
    if o.get("success"):
        return head + ": stable"
    return head + f": loses 1 HP{_hp(o)}{_life(o)}"


def _save(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    what = f" against {p['effect']}" if p.get("effect") else ""
    result = "saves" if o.get("success") else "fails"
    return f"{who(p['creature'])} {result} ({p['save']} {o.get('total')} vs DC {o.get('dc')}){what}"


def _ability(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    kind = "drain" if p.get("drain") else "damage"
    return (
        f"{who(p['creature'])} takes {p['amount']} {p['ability']} {kind} "
        f"({o.get('score_before')} -> {o.get('score_after')}){_life(o)}"
    )


def _recovery(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    who_rests = ", ".join(who(c) for c in p.get("creatures") or [])
    verb = "sleep" if p["kind"] == "sleep" else "rest"
    return f"{who_rests} {verb} {p['hours']} hours: lost ability scores return"


def _death(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    return f"{who(p['creature'])} is declared dead ({p['cause']})"


def _resurrected(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    hp = o.get("hp", p.get("hp"))
    return f"{who(p['creature'])} is brought back to life by {p['means']} at {hp} HP (no level lost)"


def _attack(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    weapon = (p.get("weapon") or {}).get("name", "weapon")
    aoo = " (attack of opportunity)" if p.get("opportunity") else ""
    result = "threatens a critical" if o.get("threat") else ("hits" if o.get("hit") else "misses")
    return (
        f"{who(p['attacker'])} attacks {who(p['target'])} with {weapon}{aoo}: "
        f"{_roll(p)}, total {o.get('attack_total')} vs {o.get('defense', 'ac')} {o.get('ac')}: {result}"
    )


def _confirmation(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    result = "a critical hit" if o.get("critical") else "a regular hit"
    return f"{who(o.get('attacker'))} rolls to confirm: {o.get('total')} vs {o.get('ac')}, {result}"


def _damage_rolled(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    crit = " critical" if o.get("critical") else ""
    target = who(o.get("target"))
    text = f"{who(o.get('attacker'))} deals {o.get('amount')}{crit} damage to {target}{_hp(o)}{_life(o)}"
    if o.get("massive_damage_save_owed"):
        text += f"; massive damage: a DC {o['massive_damage_save_owed']['dc']} Fortitude save is owed"
    return text


def _massive(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    result = "survives the massive damage" if o.get("success") else "dies of massive damage"
    return f"{who(p['creature'])} {result} (Fortitude {o.get('total')} vs DC {o.get('dc')})"


def _action(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    name = f" ({p['name']})" if p.get("name") else ""
    text = f"{who(p['creature'])} takes a {str(p['action']).replace('_', ' ')} action{name}"
    strenuous = o.get("strenuous")
    if isinstance(strenuous, Mapping):
        text += f"; the strain costs it {strenuous.get('amount')} HP{_hp(strenuous)}{_life(strenuous)}"
    return text


def _casting(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    result = "without provoking" if o.get("success") else "and provokes"
    check = f"Concentration {o.get('total')} vs DC {o.get('dc')}"
    return f"{who(p['creature'])} casts defensively ({check}) {result}"


def _time(p: Mapping[str, Any], o: Mapping[str, Any], who: Who) -> str:
    return f"{p['minutes']} minutes pass"


SENTENCES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], Who], str]] = {
    "CreatureRegistered": _registered,
    "SheetUpdated": _sheet,
    "DamageTaken": _damage,
    "HealingApplied": _healing,
    "HealCheckRolled": _heal_check,
    "StabilizationRolled": _stabilization,
    "SavingThrowRolled": _save,
    "AbilityDamaged": _ability,
    "AbilityRecoveredByRest": _recovery,
    "DeathDeclared": _death,
    "Resurrected": _resurrected,
    "AttackRolled": _attack,
    "CriticalConfirmationRolled": _confirmation,
    "DamageRolled": _damage_rolled,
    "MassiveDamageSaveRolled": _massive,
    "ActionTaken": _action,
    "DefensiveCastingRolled": _casting,
    "TimeAdvanced": _time,
}
