"""Orcus fact types (RULES.md C4.2) on top of the core catalogue.

Facts store inputs: declarations, every die face (d20 attack rolls, damage dice, d6 recharge
rolls, saves), choices and the table's rulings. The fold derives everything else (hit, crit,
maximum damage, HP, dying, recharged powers, action points gained). The core catalogue
(``domain.core.catalogue.CORE``) holds corrections, rulings, notes, free dice, encounters,
turns and time.

C4.2 names kept as they are, except: ``LevelGained`` is ``LevelSet`` (ruling 22: the level
follows XP; the GM may still set one), the placeholder ``DamageApplied`` takes any damage
that is not an attack's, ``ChoseToBeHit`` is a target's ``chose_to_be_hit`` inside
``AttackMade`` (B-OR-4), and ``DamageRolled`` is the attack's ``damage`` (OR-13: rolled once
for every target) with each target's ``crit_bonus`` (B-OR-5).
"""

from __future__ import annotations

from typing import Any

from domain import dice
from domain.core.catalogue import CORE, Catalogue, Schema, copy_json, opt, req
from domain.errors import InvalidInput
from domain.rulesets.orcus.tables import EXTRA_ACTIONS, MAINTAIN_ACTIONS, RANKS

TARGET_KEYS = {"target", "roll", "chose_to_be_hit", "circumstances", "modifiers", "crit_bonus"}


def _check_targets(where: str, name: str, value: Any) -> list[dict[str, Any]]:
    """Attack targets (OR-13: one attack roll per target): who, its d20 as it fell (or that it
    chose to be hit, OR-10), the declared A4.6 circumstances and other modifiers, and the
    critical hit bonus damage rolled for it (B-OR-5)."""
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise InvalidInput(f"{where} must be a non-empty list of targets", field=name)
    out = []
    for i, t in enumerate(value):
        unknown = set(t) - TARGET_KEYS
        if unknown:
            raise InvalidInput(f"{where}[{i}]: unknown field(s) {', '.join(sorted(unknown))}", field=name)
        if not isinstance(t.get("target"), str) or not t["target"]:
            raise InvalidInput(f"{where}[{i}].target must name a creature", field=f"{name}.target")
        entry: dict[str, Any] = {"target": t["target"]}
        chose = t.get("chose_to_be_hit", False)
        if not isinstance(chose, bool):
            raise InvalidInput(f"{where}[{i}].chose_to_be_hit must be true or false", field=name)
        if chose:
            entry["chose_to_be_hit"] = True
        if t.get("roll") is not None:
            if chose:
                raise InvalidInput(
                    f"{where}[{i}]: a target that chooses to be hit is hit without an attack roll (OR-10)",
                    field=f"{name}.roll",
                )
            entry["roll"] = dice.validate_roll(t["roll"])
            if dice.natural(entry["roll"]) is None:
                raise InvalidInput(
                    f"{where}[{i}].roll must be a single d20 plus modifiers", field=f"{name}.roll"
                )
        if t.get("crit_bonus") is not None:
            entry["crit_bonus"] = dice.validate_roll(t["crit_bonus"])
        for key in ("circumstances", "modifiers"):
            if key in t:
                if not isinstance(t[key], list):
                    raise InvalidInput(f"{where}[{i}].{key} must be a list", field=f"{name}.{key}")
                entry[key] = copy_json(t[key])
        out.append(entry)
    return out


FACTS: dict[str, Schema] = {
    # --- sheets, XP and levels (C4.1, OR-2, ruling 22, B-OR-16) ---
    "CreatureRegistered": {
        "creature_id": req("str"),
        "name": req("str"),
        "kind": req("enum", choices=tuple(RANKS)),
        "level": opt("int", None, minimum=1, maximum=30, nullable=True),
        "xp": opt("int", None, minimum=0, maximum=100_000_000, nullable=True),
        "max_hp": req("int", minimum=1, maximum=100_000),
        "surges_per_day": opt("int", 0, minimum=0, maximum=100),
        "defenses": req("dict_int"),
        "resist": opt("dict_int", {}),
        "vuln": opt("dict_int", {}),
        "powers": opt("list_dict", []),
        "action_points": opt("int", None, minimum=0, maximum=100, nullable=True),
    },
    "SheetUpdated": {"creature_id": req("str"), "changes": req("dict"), "reason": opt("str", "")},
    "ExperienceAwarded": {
        "creatures": req("list_str"),
        "amount": req("int", minimum=0, maximum=10_000_000),
        "reason": opt("str", ""),
    },
    "LevelSet": {"creature": req("str"), "level": req("int", minimum=1, maximum=30, nullable=True)},
    # --- attacks (OR-10..15, A4.6, B-OR-4, B-OR-5) ---
    "AttackMade": {
        "attacker": req("str"),
        "power": req("dict"),
        "targets": req("custom", check=_check_targets),
        "damage": opt("roll", None, nullable=True),
        "action": opt("str", None, nullable=True),
    },
    # --- powers and action points (OR-7, OR-9, B-OR-3, B-OR-17, ruling 21, ruling 24) ---
    "PowerUsed": {"creature": req("str"), "power_id": req("str"), "action": opt("str", None, nullable=True)},
    "RechargeRolled": {"creature": req("str"), "power_id": req("str"), "roll": req("roll")},
    "RechargeConditionMet": {"creature": req("str"), "power_id": req("str"), "trigger": opt("str", "")},
    "ActionPointSpent": {"creature": req("str"), "extra": req("enum", choices=EXTRA_ACTIONS)},
    # --- effects, saves, maintain (OR-17..19, B-OR-8, B-OR-11..13, rulings 20, 23, 24) ---
    "EffectApplied": {"target": req("str"), "source": req("str"), "effect": req("dict")},
    "EffectMaintained": {"effect_id": req("str"), "action": req("enum", choices=MAINTAIN_ACTIONS)},
    "EffectEndedByChoice": {"effect_id": req("str")},
    "EffectEnded": {"effect_id": req("str"), "reason": opt("str", "gm")},
    "SavingThrowRolled": {
        "creature": req("str"),
        "effect_id": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    "EndOfTurnOrderChosen": {"creature": req("str"), "effect_ids": req("list_str")},
    # --- the A4.9 placeholder pack: hit points, healing, dying, rests (B-OR-1) ---
    "DamageApplied": {
        "target": req("str"),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "types": opt("list_str", []),
        "source": opt("str", "other"),
    },
    "HealingApplied": {
        "target": req("str"),
        "surge_multiplier": opt("int", 0, minimum=0, maximum=10),
        "roll": opt("roll", None, nullable=True),
        "flat": opt("int", 0, minimum=0, maximum=100_000),
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
    "HealingSurgeSpent": {"creature": req("str"), "note": opt("str", "")},
    "RallyUsed": {"creature": req("str")},
    "DeathSavingThrowRolled": {
        "creature": req("str"),
        "roll": req("roll"),
        "modifiers": opt("list_dict", []),
    },
    "Stabilized": {
        "creature": req("str"),
        "healer": opt("str", None, nullable=True),
        "roll": opt("roll", None, nullable=True),
        "dc": opt("int", None, minimum=0, maximum=100, nullable=True),
    },
    "DeathDeclared": {"creature": req("str"), "cause": req("str")},
    "ShortRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "minutes": opt("int", 5, minimum=1, maximum=100_000),
    },
    "LongRestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "hours": opt("int", 6, minimum=1, maximum=1000),
    },
}

VERSIONS: dict[str, int] = {}

CATALOGUE: Catalogue = CORE.extend(FACTS, versions=VERSIONS)
"""Every fact an Orcus campaign can record."""
