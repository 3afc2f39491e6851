"""Stellar Winds fact types (RULES.md C1.2) on top of the core catalogue.

The core (``domain.core.catalogue.CORE``) holds corrections, rulings, notes, free dice
rolls, encounters, turns and time; these are the facts only Stellar Winds folds.
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import CORE, Catalogue, Schema, Upcaster, copy_json, opt, req
from domain.errors import InvalidInput
from domain.rulesets.stellar_winds.tables import TABLE_ACTIONS

# Why a healing surge was spent (HealingSurgeSpent v2). A power or consumable that heals through
# a surge is recorded as HealingApplied with requires_surge; a surge spent on its own is one of these.
SURGE_CAUSES = ("short_rest", "extended_rest", "power", "consumable", "other")
ABILITIES = ("str", "con", "dex", "int", "wis", "cha")
DEFENSES = ("ac", "fort", "ref", "will")


TARGET_KEYS = {"target", "roll", "damage", "circumstances", "modifiers", "adjacent"}


def _check_targets(where: str, name: str, value: Any) -> list[dict[str, Any]]:
    """Attack targets: who, the d20 as it fell, per-target damage dice, declared circumstances."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise InvalidInput(f"{where} must be a non-empty list of targets", field=name)
    out = []
    for i, t in enumerate(value):
        unknown = set(t) - TARGET_KEYS
        if unknown:
            raise InvalidInput(f"{where}[{i}]: unknown field(s) {', '.join(sorted(unknown))}", field=name)
        if not isinstance(t.get("target"), str) or not t["target"]:
            raise InvalidInput(f"{where}[{i}].target must name a creature", field=f"{name}.target")
        if not isinstance(t.get("roll"), dict):
            raise InvalidInput(
                f"{where}[{i}].roll must be the attack's d20 roll record", field=f"{name}.roll"
            )
        entry = {"target": t["target"], "roll": dice.validate_roll(t["roll"])}
        if dice.natural(entry["roll"]) is None:
            raise InvalidInput(f"{where}[{i}].roll must be a single d20 plus modifiers", field=f"{name}.roll")
        if t.get("damage") is not None:
            entry["damage"] = dice.validate_roll(t["damage"])
        if t.get("adjacent") is not None:  # ruling 19: an input (default: adjacent for melee only)
            if not isinstance(t["adjacent"], bool):
                raise InvalidInput(f"{where}[{i}].adjacent is true or false", field=f"{name}.adjacent")
            entry["adjacent"] = t["adjacent"]
        for key in ("circumstances", "modifiers"):
            if key in t:
                if not isinstance(t[key], list):
                    raise InvalidInput(f"{where}[{i}].{key} must be a list", field=f"{name}.{key}")
                entry[key] = copy_json(t[key])
        out.append(entry)
    return out


def _check_square(where: str, name: str, value: Any) -> list[int]:
    """A square on the battle grid: ``[x, y]`` (x to the right, y down)."""
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 100_000 for v in value)
    ):
        raise InvalidInput(f"{where} must be a square [x, y] of whole numbers", field=name)
    return [int(value[0]), int(value[1])]


FACTS: dict[str, Schema] = {
    "CreatureRegistered": {
        "creature_id": req("str"),
        "name": req("str"),
        "kind": req("enum", choices=("pc", "monster", "npc")),
        "level": req("int", minimum=1, maximum=30),
        "abilities": req("dict_int"),
        "max_hp": req("int", minimum=1, maximum=100_000),
        "surges_per_day": opt("int", 0, minimum=0, maximum=100),
        "defenses": req("dict_int"),
        "speed": opt("int", 6, minimum=0, maximum=100),
        "resist": opt("dict_int", {}),
        "vuln": opt("dict_int", {}),
        "regeneration": opt("int", 0, minimum=0, maximum=1000),
        "crit_min": opt("int", 20, minimum=2, maximum=20),
        "heroic": opt("bool", False),
        "xp": opt("int", None, minimum=0, maximum=10_000_000, nullable=True),
        "initiative_misc": opt("int", 0, minimum=-100, maximum=100),
        "max_wounds": opt("int", None, minimum=1, maximum=1000, nullable=True),
        "second_wind": opt("bool", None, nullable=True),
        # C1.1 powers: [{id, name?, frequency: at_will | encounter | daily}] (powers.py)
        "powers": opt("list_dict", []),
        # SW-14: a PC starts with 1; a monster has what its sheet says (usually none)
        "action_points": opt("int", None, minimum=0, maximum=100, nullable=True),
        # SW-15: at most this many per encounter (a monster's sheet may allow more than one)
        "action_points_per_encounter": opt("int", 1, minimum=1, maximum=100),
        "ammo": opt("dict_int", {}),  # C1.1 ammo: {weapon_id: rounds}
    },
    "SheetUpdated": {"creature_id": req("str"), "changes": req("dict"), "reason": opt("str", "")},
    "DamageTaken": {
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "types": opt("list_str", []),
        "wounding": opt("bool", False),
        "source": opt("str", "other"),
        "nonlethal": opt("bool", False),
        "half": opt("bool", False),
    },
    "HealingApplied": {
        "target": req("str"),
        "surge_multiplier": opt("int", 0, minimum=0, maximum=10),
        "roll": opt("roll", None, nullable=True),
        "flat": opt("int", 0, minimum=0, maximum=100_000),
        "magical": opt("bool", False),
        "requires_surge": opt("bool", False),
        "source": opt("str", ""),
        "healer": opt("str", None, nullable=True),
    },
    "TemporaryHitPointsGranted": {
        "target": req("str"),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "roll": opt("roll", None, nullable=True),
        "source": opt("str", ""),
    },
    # v2: ``cause`` is one of SURGE_CAUSES (v1: free text, default "rest"); ``note`` keeps any words.
    "HealingSurgeSpent": {
        "creature": req("str"),
        "cause": opt("enum", "short_rest", choices=SURGE_CAUSES),
        "note": opt("str", ""),
    },
    "SecondWindUsed": {"creature": req("str")},
    "DeathSavingThrowRolled": {
        "creature": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    # v2: ``action``, the healer's action in a running encounter (default standard; null: none)
    "StabilizationAttempted": {
        "target": req("str"),
        "healer": opt("str", None, nullable=True),
        "roll": opt("roll", None, nullable=True),
        "dc": opt("int", None, minimum=0, maximum=100, nullable=True),
        "action": opt("str", "standard", nullable=True),
    },
    "WoundsRestored": {
        "target": req("str"),
        "amount": req("int", minimum=1, maximum=1000),
        "method": req("enum", choices=("magic", "medical", "long_term_care")),
        "caregiver": opt("str", None, nullable=True),
    },
    "DeathDeclared": {"creature": req("str"), "cause": req("str")},
    "CreatureRaised": {
        "creature": req("str"),
        "means": req("str"),
        "hp": opt("int", 1, minimum=1, maximum=100_000),
        "wounds": opt("int", 1, minimum=1, maximum=1000),
    },
    "ShortRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "minutes": opt("int", 5, minimum=5, maximum=10_000_000),
    },
    "ExtendedRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "hours": opt("int", 6, minimum=6, maximum=100_000),
    },
    "MilestoneReached": {"creatures": req("list_str")},
    "ActionPointSpent": {
        "creature": req("str"),
        "use": opt("str", "extra_standard"),
    },
    "ExperienceAwarded": {
        "creatures": req("list_str"),
        "amount": req("int", minimum=0, maximum=10_000_000),
        "reason": opt("str", ""),
    },
    "LevelSet": {"creature": req("str"), "level": req("int", minimum=1, maximum=30, nullable=True)},
    # B-SW-20 ruling 3: a planted explosive; the target's save (its d20) for half damage
    "ExplosiveSaveRolled": {
        "target": req("str"),
        "roll": req("roll"),
        "dc": req("int", minimum=0, maximum=100),
        "damage": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "types": opt("list_str", []),
        "explosive": opt("str", ""),
        "modifiers": opt("list_dict", []),
    },
    # C1.2 PowerUsed: a power that is not an attack (an attack names its power in power.power_id)
    "PowerUsed": {
        "creature": req("str"),
        "power_id": req("str"),
        "action": opt("str", "standard", nullable=True),
    },
    # C1.2 AmmunitionExpended / EquipmentChanged (C1.1 ammo)
    "AmmunitionExpended": {
        "creature": req("str"),
        "weapon_id": req("str"),
        "rounds": req("int", minimum=1, maximum=10_000),
    },
    "EquipmentChanged": {"creature": req("str"), "ammo": req("dict_int"), "reason": opt("str", "")},
    # C1.2 GrenadeThrown, B-SW-20 ruling 1: the landing square (the burst is an AttackMade)
    "GrenadeThrown": {
        "creature": req("str"),
        "grenade_id": opt("str", "grenade"),
        "square": req("custom", check=_check_square),
        "increments": req("int", minimum=1, maximum=100),
        "deviation": opt("roll", None, nullable=True),
        # the thrower's action when no burst attack (which uses it) follows: a throw that hits no one
        "action": opt("str", None, nullable=True),
    },
    # C1.2 BluffForCombatAdvantageRolled (SW-13 list, C1.1 bluff_ca_used_this_encounter)
    "BluffForCombatAdvantageRolled": {
        "creature": req("str"),
        "target": req("str"),
        "roll": req("roll"),
        "vs_insight": req("int", minimum=0, maximum=100),
        "duration": opt("dict", None, nullable=True),
        "action": opt("str", "standard", nullable=True),
    },
    # SW-13, B-SW-32: escape a grab (Acrobatics vs Reflex or Athletics vs Fortitude)
    "EscapeAttempted": {
        "creature": req("str"),
        "effect_id": req("str"),
        "skill": req("enum", choices=("acrobatics", "athletics")),
        "roll": req("roll"),
        "action": opt("str", "move", nullable=True),
    },
    # SW-31, B-SW-32: falling damage, 1d10 per 10 ft; a trained jumper's Acrobatics check halves it
    "FallTaken": {
        "creature": req("str"),
        "feet": req("int", minimum=0, maximum=100_000),
        "roll": opt("roll", None, nullable=True),
        "acrobatics": opt("roll", None, nullable=True),
    },
    "AttackMade": {
        "attacker": req("str"),
        "power": req("dict"),
        "targets": req("custom", check=_check_targets),
        "damage": opt("roll", None, nullable=True),
        "extra_crit": opt("roll", None, nullable=True),
        "nonlethal": opt("bool", False),
        "coup_de_grace": opt("bool", False),
        # v2: an attack uses the attacker's standard action by default (null: no action)
        "action": opt("str", "standard", nullable=True),
    },
    # --- encounters (RULES.md A1.1, A1.2, A1.11; C1.2) ---
    "ActionReadied": {
        "encounter_id": req("str"),
        "creature": req("str"),
        "action": req("enum", choices=("standard", "move", "minor")),
        "trigger": req("str"),
    },
    "ActionTaken": {
        "encounter_id": opt("str", None, nullable=True),
        "creature": req("str"),
        "action": req("enum", choices=("standard", "move", "minor", "free", "immediate", "opportunity")),
        "name": opt("str", ""),
        "substitutes_for": opt("enum", None, choices=("standard", "move"), nullable=True),
        "gm_exception": opt("bool", False),
    },
    "EffectApplied": {"target": req("str"), "source": req("str"), "effect": req("dict")},
    # SW-13, A1.10: a table action the engine resolves (tables.TABLE_ACTIONS)
    "TableActionTaken": {
        "creature": req("str"),
        "name": req("enum", choices=tuple(TABLE_ACTIONS)),
        "source": opt("str", None, nullable=True),
    },
    "EffectSustained": {
        "effect_id": req("str"),
        "action": req("enum", choices=("standard", "move", "minor")),
    },
    "EffectEnded": {"effect_id": req("str"), "reason": opt("str", "gm")},
    "SavingThrowRolled": {
        "creature": req("str"),
        "effect_id": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    # C0.3: an in-game reroll of one die (a power that rerolls), with the roll as it stood; the
    # fact that uses the roll follows it in the same table action, with the new face
    "DiceRerolled": {
        "creature": opt("str", None, nullable=True),
        "roll": req("roll"),
        "die_index": req("int", minimum=0, maximum=1000),
        "new_face": req("int", minimum=1, maximum=1000),
        "reason": opt("str", ""),
    },
}

# Current payload version of each type that is not 1. Bump it and add an upcaster when a
# payload changes shape.
VERSIONS: dict[str, int] = {"HealingSurgeSpent": 2, "AttackMade": 2, "StabilizationAttempted": 2}

# v1 causes as they were typed at tables (and by earlier clients), read as v2 causes.
_V1_SURGE_CAUSES = {
    "rest": "short_rest",  # v1's default: surges are spent on their own during a short rest
    "short_rest": "short_rest",
    "shortrest": "short_rest",
    "extended_rest": "extended_rest",
    "long_rest": "extended_rest",
    "power": "power",
    "consumable": "consumable",
    "potion": "consumable",
}


def _surge_spent_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """HealingSurgeSpent v1 -> v2: free-text ``cause`` -> an enum plus a free-text ``note``.

    Known wordings ("rest", "short rest", "Short-Rest", "long rest", "potion", ...) map to their
    cause; anything else becomes ``other`` with the original words kept in ``note``, so nothing
    said at the table is lost.
    """
    out = {k: v for k, v in payload.items() if k != "cause"}
    raw = payload.get("cause", "rest")
    text = raw.strip() if isinstance(raw, str) else ""
    key = "_".join(text.lower().replace("-", " ").split())
    cause = _V1_SURGE_CAUSES.get(key or "rest")
    out["cause"] = cause or "other"
    out["note"] = "" if cause else text
    return out


def _no_action_by_default(payload: dict[str, Any]) -> dict[str, Any]:
    """AttackMade / StabilizationAttempted v1 -> v2: a v1 fact used an action only when it named
    one; v2 uses a standard action unless it says otherwise, so a v1 fact without one says none."""
    return {**payload, "action": payload.get("action")}


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("HealingSurgeSpent", 1): _surge_spent_v1_v2,
    ("AttackMade", 1): _no_action_by_default,
    ("StabilizationAttempted", 1): _no_action_by_default,
}


CATALOGUE: Catalogue = CORE.extend(FACTS, versions=VERSIONS, upcasters=UPCASTERS)
"""Every fact a Stellar Winds campaign can record."""


# What each roll of a Stellar Winds fact is for (C0.3 ``purpose``; ``domain.core.rolls``).
ROLL_PURPOSES: dict[str, dict[str, str]] = {
    "AttackMade": {
        "targets.*.roll": "attack roll",
        "targets.*.damage": "damage roll",
        "damage": "damage roll",
        "extra_crit": "extra critical damage",
    },
    "DamageTaken": {"roll": "damage roll"},
    "HealingApplied": {"roll": "healing roll"},
    "TemporaryHitPointsGranted": {"roll": "temporary hit points roll"},
    "SavingThrowRolled": {"roll": "saving throw"},
    "DeathSavingThrowRolled": {"roll": "death saving throw"},
    "StabilizationAttempted": {"roll": "Heal check (first aid)"},
    "ExplosiveSaveRolled": {"roll": "explosive saving throw", "damage": "damage roll"},
    "DiceRerolled": {"roll": "the roll before the reroll"},
}
