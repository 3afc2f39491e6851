"""d20 house-rules fact types (RULES.md C3.2) on top of the core catalogue.

The core (``domain.core.catalogue.CORE``) holds corrections, rulings, notes, free dice
rolls, encounters, turns and time. These are the facts only this ruleset folds. Each
stores inputs: every die face (the d% of a stabilisation roll included), the table's
choices and declarations; the fold derives hit, critical, damage, bands and death.

Names follow C3.2, except: ``CharacterRegistered`` / ``LevelChanged`` are
``CreatureRegistered`` / ``SheetUpdated`` (monsters too; a level is one sheet value among
others), ``DamageTaken`` is the non-attack damage, ``AttackOfOpportunityTaken`` is an
``AttackRolled`` with ``opportunity: true`` (an attack of opportunity is an attack, B-DH-14),
and ``DefensiveCastingRolled`` is DH-5's Concentration check.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import CORE, Catalogue, Schema, opt, req
from domain.errors import InvalidInput
from domain.rulesets.d20_house.tables import (
    ABILITIES,
    AC_KINDS,
    ACTION_KINDS,
    ATTACK_KINDS,
    GRIPS,
    RESTS,
    SAVES,
)

MAX_SCORE = 60


def _abilities(where: str, name: str, value: Any) -> dict[str, int]:
    """All six scores (A3: Str, Stamina, Agility, Int, Spirit, Cha), 0..60, Stamina at least 1."""
    if not isinstance(value, dict) or set(value) != set(ABILITIES):
        raise InvalidInput(f"{where} must give exactly {', '.join(ABILITIES)}", field=name)
    out = {}
    for key in ABILITIES:
        v = value[key]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SCORE:
            raise InvalidInput(f"{where}.{key} must be a score from 0 to {MAX_SCORE}", field=name)
        out[key] = v
    if out["stamina"] < 1:
        raise InvalidInput(f"{where}.stamina must be at least 1 (Stamina 0 is death, DH-13)", field=name)
    return out


def _saves(where: str, name: str, value: Any) -> dict[str, int]:
    """Base save bonuses for fort, ref and will (the progressions are ABSENT: sheet values)."""
    if not isinstance(value, dict) or set(value) != set(SAVES):
        raise InvalidInput(f"{where} must give exactly fort, ref and will", field=name)
    out = {}
    for key in SAVES:
        v = value[key]
        if isinstance(v, bool) or not isinstance(v, int) or not -20 <= v <= 60:
            raise InvalidInput(f"{where}.{key} must be a whole number from -20 to 60", field=name)
        out[key] = v
    return out


def _bab(where: str, name: str, value: Any) -> list[int]:
    """The base attack bonus as the sheet writes it: "+6/+1" is [6, 1] (highest first)."""
    if (
        not isinstance(value, list)
        or not 1 <= len(value) <= 8
        or not all(isinstance(v, int) and not isinstance(v, bool) and -20 <= v <= 60 for v in value)
        or any(a < b for a, b in zip(value, value[1:], strict=False))
    ):
        raise InvalidInput(
            f"{where} is the base attack bonus with its iteratives, highest first (e.g. [6, 1])",
            field=name,
        )
    return list(value)


def _d20(where: str, name: str, value: Any) -> dict[str, Any]:
    roll = dice.validate_roll(value) if isinstance(value, dict) else None
    if roll is None or dice.natural(roll) is None:
        raise InvalidInput(f"{where} must be a d20 roll record (one d20, plus modifiers if any)", field=name)
    return roll


def _percentile(where: str, name: str, value: Any) -> dict[str, Any]:
    roll = dice.validate_roll(value) if isinstance(value, dict) else None
    if roll is None or dice.percentile(roll) is None:
        raise InvalidInput(f"{where} must be a d% roll record (one d100 face, 00 = 100)", field=name)
    return roll


def _dice_only(where: str, name: str, value: Any) -> dict[str, Any]:
    roll = dice.validate_roll(value) if isinstance(value, dict) else None
    if roll is None or any("const" in t or t["sign"] < 0 or t.get("keep") for t in roll["terms"]):
        raise InvalidInput(
            f"{where} holds the weapon's dice only (e.g. 1d8): its static modifiers come from the "
            "sheet and the weapon",
            field=name,
        )
    return roll


def _rolls(where: str, name: str, value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a list of roll records", field=name)
    return [dice.validate_roll(v) for v in value]


WEAPON_KEYS = {"name", "kind", "grip", "light", "enhancement", "strength"}


def _weapon(where: str, name: str, value: Any) -> dict[str, Any]:
    """The weapon as declared: kind (melee, ranged, thrown), grip (one_hand, two_hands,
    off_hand), light, enhancement (to attack and damage), strength (Strength to damage:
    null for the kind's default, DH-9; true for a sling)."""
    if not isinstance(value, dict):
        raise InvalidInput(f"{where} must be an object", field=name)
    unknown = set(value) - WEAPON_KEYS
    if unknown:
        raise InvalidInput(f"{where}: unknown field(s) {', '.join(sorted(unknown))}", field=name)
    out = {
        "name": value.get("name") or "weapon",
        "kind": value.get("kind", "melee"),
        "grip": value.get("grip", "one_hand"),
        "light": value.get("light", False),
        "enhancement": value.get("enhancement", 0),
        "strength": value.get("strength"),
    }
    if not isinstance(out["name"], str) or len(out["name"]) > 200:
        raise InvalidInput(f"{where}.name must be a short text", field=name)
    if out["kind"] not in ATTACK_KINDS:
        raise InvalidInput(f"{where}.kind must be one of {', '.join(ATTACK_KINDS)}", field=name)
    if out["grip"] not in GRIPS:
        raise InvalidInput(f"{where}.grip must be one of {', '.join(GRIPS)}", field=name)
    if not isinstance(out["light"], bool):
        raise InvalidInput(f"{where}.light must be true or false", field=name)
    e = out["enhancement"]
    if isinstance(e, bool) or not isinstance(e, int) or not -20 <= e <= 20:
        raise InvalidInput(f"{where}.enhancement must be a whole number from -20 to 20", field=name)
    if out["strength"] is not None and not isinstance(out["strength"], bool):
        raise InvalidInput(f"{where}.strength must be true, false or null", field=name)
    return out


DEFAULT_WEAPON = _weapon("weapon", "weapon", {})

SHEET: Schema = {
    "name": req("str"),
    "kind": req("enum", choices=("pc", "npc", "monster")),
    "level": req("int", minimum=0, maximum=100),
    "class": opt("str", ""),
    "abilities": req("custom", check=_abilities),
    "max_hp": req("int", minimum=1, maximum=100_000),
    "bab": req("custom", check=_bab),
    "base_saves": req("custom", check=_saves),
    "armor": opt("int", 0, minimum=0, maximum=100),
    "shield": opt("int", 0, minimum=0, maximum=100),
    "size": opt("int", 0, minimum=-16, maximum=16),
    "initiative_misc": opt("int", 0, minimum=-100, maximum=100),
    "aoo_per_round": opt("int", 1, minimum=0, maximum=20),
    "feats": opt("list_str", []),
}

FACTS: dict[str, Schema] = {
    "CreatureRegistered": {"creature_id": req("str"), **SHEET},
    "SheetUpdated": {"creature_id": req("str"), "changes": req("dict"), "reason": opt("str", "")},
    # --- hit points -------------------------------------------------------
    "DamageTaken": {  # damage that is not an attack's (hazards, falls...): never massive (ruling 26)
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "source": opt("str", "hazard"),
    },
    "HealingApplied": {
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "source": opt("str", ""),
        "healer": opt("str", None, nullable=True),
    },
    "HealCheckRolled": {
        "healer": req("str"),
        "target": req("str"),
        "roll": req("custom", check=_d20),
        "modifiers": opt("list_dict", []),
    },
    "StabilizationRolled": {
        "creature": req("str"),
        "roll": req("custom", check=_percentile),
        "encounter_id": opt("str", None, nullable=True),
        "round": opt("int", None, minimum=0, maximum=1_000_000, nullable=True),
    },
    "AbilityDamaged": {
        "creature": req("str"),
        "ability": req("enum", choices=ABILITIES),
        "amount": req("int", minimum=1, maximum=MAX_SCORE),
        "drain": opt("bool", False),
        "source": opt("str", ""),
    },
    "AbilityRecoveredByRest": {
        "creatures": req("list_str"),
        "kind": req("enum", choices=tuple(RESTS)),
        "hours": req("int", minimum=1, maximum=1000),
        "clean": req("bool"),
    },
    "SavingThrowRolled": {
        "creature": req("str"),
        "save": req("enum", choices=SAVES),
        "roll": req("custom", check=_d20),
        "dc": req("int", minimum=0, maximum=1000),
        "effect": opt("str", ""),
        "modifiers": opt("list_dict", []),
    },
    "DeathDeclared": {"creature": req("str"), "cause": req("str")},
    "Resurrected": {
        "creature": req("str"),
        "means": req("str"),
        "hp": opt("int", 1, minimum=-1000, maximum=100_000),
        "restore_abilities": opt("bool", False),
    },
    # --- attacks (A3.3) ---------------------------------------------------
    "AttackRolled": {
        "attacker": req("str"),
        "target": req("str"),
        "roll": req("custom", check=_d20),
        "weapon": opt("custom", DEFAULT_WEAPON, check=_weapon),
        "vs": opt("enum", "ac", choices=AC_KINDS),
        "iterative": opt("int", 0, minimum=0, maximum=7),
        "full_attack": opt("bool", None, nullable=True),
        "two_weapon": opt("enum", None, choices=("primary", "off"), nullable=True),
        "off_hand_light": opt("bool", False),
        "double_weapon": opt("bool", False),
        "range_penalty": opt("int", 0, minimum=-100, maximum=0),
        "opportunity": opt("bool", False),
        "modifiers": opt("list_dict", []),
    },
    "CriticalConfirmationRolled": {"attack": req("int", minimum=1), "roll": req("custom", check=_d20)},
    "DamageRolled": {
        "attack": req("int", minimum=1),
        "weapon": req("custom", check=_dice_only),
        "crit_weapon": opt("custom", None, check=_dice_only, nullable=True),
        "extra": opt("custom", [], check=_rolls),
        "extra_flat": opt("int", 0, minimum=-1000, maximum=100_000),
        "modifiers": opt("list_dict", []),
    },
    "MassiveDamageSaveRolled": {
        "creature": req("str"),
        "attack": req("int", minimum=1),
        "roll": req("custom", check=_d20),
        "modifiers": opt("list_dict", []),
    },
    # --- actions (A3.2) ---------------------------------------------------
    "ActionTaken": {
        "creature": req("str"),
        "action": req("enum", choices=ACTION_KINDS),
        "name": opt("str", ""),
        "strenuous": opt("bool", False),
        "run": opt("bool", False),
        "moves": opt("bool", None, nullable=True),
    },
    "DefensiveCastingRolled": {
        "creature": req("str"),
        "spell_level": req("int", minimum=0, maximum=9),
        "roll": req("custom", check=_d20),
        "modifiers": opt("list_dict", []),
    },
}

CATALOGUE: Catalogue = CORE.extend(FACTS)
"""Every fact a d20 house-rules campaign can record."""
