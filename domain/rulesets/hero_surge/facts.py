"""Hero's-surge fact types (RULES.md C2.2) on top of the core catalogue.

Facts store what the table said and rolled: every die face, every choice, and the table's
rulings where the system leaves a mechanic undefined (ruling 4): an attempt's success level,
a luck roll's result, a Fortune Die's effect, a rank. The fold derives only their consequences.

Departures from C2.2, each for one reason:

* ``CreatureRegistered`` uses the core creature kinds (``pc`` | ``npc`` | ``monster``) plus a
  ``hero`` switch (default: a PC is a hero; B-HS-6 treats monsters and NPCs alike).
* ``InitiativeKnockedBack`` and ``RankPenaltyApplied`` are not separate facts: the Devastating
  / Hampering choice that causes them is the fact (``DevastatingEffectChosen`` with
  ``knock_initiative_back``, ``HamperingEffectChosen`` with ``rank_penalty``), and the fold
  derives the knock-back and the penalty. One fact per table decision.
* ``DiceRerolled`` names the damage roll it rerolls by ``roll_id`` (a ``DamageRolled.damage_id``).
* ``SheetUpdated`` covers C2.2's ``EquipmentChanged`` (damage reduction, extra blocks).
* A defense attempt's ``targets`` names the creature defended when it is not the one rolling
  (HS-5: "you can both make defense attempts for it"); empty, the roller defends itself.
* ``RoundStarted`` / ``TurnStarted`` / ``SurpriseDetermined`` are the core encounter engine's;
  an initiative check is the engine's ``InitiativeRolled`` with the ruled ``success_level``
  (``InitiativeCheckRolled`` is still read: it records the same for the round it names), and
  ``InitiativeOrderChosen`` is the engine's shape (v2; v1's band-and-side form is upcast).
"""

from __future__ import annotations

from typing import Any

from domain.core.catalogue import CORE, CORE_TABLE, Catalogue, Schema, opt, req
from domain.rulesets.hero_surge.tables import (
    ATTEMPT_KINDS,
    DEVASTATING,
    HAMPERING,
    LUCK_CONTEXTS,
    RESTS,
    SUCCESS_LEVELS,
    SURGE_PURPOSES,
)

LEVEL = {"choices": SUCCESS_LEVELS}

FACTS: dict[str, Schema] = {
    # --- creatures (C2.1) ---
    "CreatureRegistered": {
        "creature_id": req("str"),
        "name": req("str"),
        "kind": req("enum", choices=("pc", "npc", "monster")),
        "hero": opt("bool", None, nullable=True),
        "level": req("int", minimum=1, maximum=100),
        "con_score": req("int", minimum=1, maximum=100),
        "con_mod": opt("int", None, minimum=-10, maximum=50, nullable=True),
        "hit_die": opt("int", None, minimum=2, maximum=100, nullable=True),
        "max_hp": req("int", minimum=1, maximum=100_000),
        "damage_reduction": opt("int", 0, minimum=0, maximum=1000),
        "extra_blocks": opt("int", 0, minimum=0, maximum=20),
        "hero_surges": opt("int", None, minimum=-100, maximum=100, nullable=True),
        "fortune_dice": opt("int", 0, minimum=0, maximum=100),
    },
    "SheetUpdated": {"creature_id": req("str"), "changes": req("dict"), "reason": opt("str", "")},
    # --- rounds (A2.1; the encounter engine sequences them) ---
    "InitiativeCheckRolled": {
        "encounter_id": opt("str", None, nullable=True),
        "creature": req("str"),
        "round": req("int", minimum=0, maximum=100_000),
        "roll": req("roll"),
        "success_level": req("enum", **LEVEL),
    },
    # The engine's roll (a creature, or a group) with the success level the table ruled (B-HS-1).
    "InitiativeRolled": {**CORE_TABLE["InitiativeRolled"], "success_level": req("enum", **LEVEL)},
    # Joining a running encounter: it acts last this round and checks for the next (HS-2); a roll
    # given with the join carries its ruled level.
    "CreatureJoinedEncounter": {
        **CORE_TABLE["CreatureJoinedEncounter"],
        "success_level": opt("enum", None, nullable=True, **LEVEL),
    },
    # v2: the engine's shape (the creatures of one side of one band, in the chosen order); v1
    # named the band and the side, which the engine reads from the creatures' checks.
    "InitiativeOrderChosen": dict(CORE_TABLE["InitiativeOrderChosen"]),
    "DefendDeclared": {
        "creature": req("str"),
        "mode": opt("enum", "self", choices=("self", "target", "intercept")),
        "target": opt("str", None, nullable=True),
    },
    "FullRoundActionStarted": {
        "creature": req("str"),
        "action": req("str"),
        "moved_before": opt("bool", False),
    },
    "FullRoundActionMaintained": {"creature": req("str")},
    "FullRoundActionAborted": {"creature": req("str")},
    "FullRoundActionCompleted": {"creature": req("str")},
    # --- attempts and success levels (A2.3) ---
    "AttemptRolled": {
        "attempt_id": req("str"),
        "creature": req("str"),
        "kind": req("enum", choices=ATTEMPT_KINDS),
        "targets": opt("list_str", []),
        "roll": req("roll"),
        "action": opt("enum", None, choices=("action", "move", "free", "none"), nullable=True),
        "dc": opt("int", None, minimum=-1000, maximum=1000, nullable=True),
        "rank": opt("str", None, nullable=True),
        "success_level": req("enum", **LEVEL),
        "note": opt("str", ""),
    },
    "FortuneDieExchanged": {"attempt_id": req("str")},
    "FortuneDieSpent": {"creature": req("str"), "effect": req("str")},
    "DevastatingEffectChosen": {
        "attempt_id": req("str"),
        "option": req("enum", choices=tuple(DEVASTATING)),
        "target": opt("str", None, nullable=True),
        "note": opt("str", ""),
    },
    "HamperingEffectChosen": {
        "attempt_id": req("str"),
        "option": req("enum", choices=tuple(HAMPERING)),
        "target": opt("str", None, nullable=True),
        "note": opt("str", ""),
    },
    "RankPenaltyConsumed": {
        "target": req("str"),
        "attempt_id": req("str"),
        "penalty_ids": opt("list_str", None, nullable=True),
    },
    "MultiAttackDefenseResolved": {
        "defense_attempt_id": req("str"),
        "incoming": req("list_str"),
        "blocked": opt("list_str", []),
        "bypass_armor": opt("list_str", []),
        "crit": opt("list_str", []),
        "extra_block_sources": opt("list_str", []),
    },
    # --- damage (A2.4) ---
    "DamageRolled": {
        "damage_id": req("str"),
        "attempt_id": opt("str", None, nullable=True),
        "roll": req("roll"),
        "additional_die": opt("roll", None, nullable=True),
    },
    "DiceRerolled": {
        "roll_id": req("str"),
        "die_index": req("int", minimum=0, maximum=1000),
        "new_face": req("int", minimum=1, maximum=1000),
        "reason": opt("enum", "brutal", choices=("brutal",)),
    },
    "DamageApplied": {
        "target": req("str"),
        "damage_id": opt("str", None, nullable=True),
        "roll": opt("roll", None, nullable=True),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "attack": opt("str", None, nullable=True),
        "bypass_dr": opt("bool", False),
        "critical": opt("bool", False),
        "source": opt("str", ""),
    },
    "TemporaryHitPointsGranted": {
        "target": req("str"),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "roll": opt("roll", None, nullable=True),
        "duration_minutes": opt("int", None, minimum=1, maximum=10_000_000, nullable=True),
        "source": opt("str", ""),
    },
    "HealingApplied": {
        "target": req("str"),
        "amount": opt("int", 0, minimum=0, maximum=100_000),
        "roll": opt("roll", None, nullable=True),
        "source": opt("str", ""),
        "healer": opt("str", None, nullable=True),
    },
    # --- dying (A2.5) ---
    "LuckRollMade": {
        "creature": req("str"),
        "context": req("enum", choices=tuple(LUCK_CONTEXTS)),
        "roll": req("roll"),
        "result": opt("enum", None, choices=("lucky", "unlucky"), nullable=True),
        "attempt_id": opt("str", None, nullable=True),
        "roll_id": opt("str", None, nullable=True),
    },
    "MedicalAttemptMade": {"healer": req("str"), "target": req("str"), "attempt_id": req("str")},
    "HealersKitUsed": {"healer": req("str"), "target": req("str")},
    "InstantKillRuled": {
        "target": req("str"),
        "attempt_id": req("str"),
        "luck_roll_ids": req("list_str"),
    },
    "RestoredToLife": {
        "creature": req("str"),
        "means": req("str"),
        "hp": opt("int", 1, minimum=1, maximum=100_000),
    },
    # --- hero's surges (A2.6) ---
    "HeroSurgeSpent": {
        "creature": req("str"),
        "purpose": req("enum", choices=tuple(SURGE_PURPOSES)),
        "bonus": opt("int", 0, minimum=0, maximum=100_000),
        "note": opt("str", ""),
    },
    "HeroSurgeDrained": {"creature": req("str"), "source": opt("str", "")},
    "HeroSurgesRestored": {
        "creature": req("str"),
        "amount": req("int", minimum=1, maximum=100),
        "source": opt("enum", "other", choices=("rest", "spell", "ability", "other")),
    },
    "RestTaken": {
        "participants": opt("list_str", None, nullable=True),
        "kind": req("enum", choices=tuple(RESTS)),
        "hours": opt("int", None, minimum=0, maximum=10_000, nullable=True),
    },
    # --- levels (ruling 22) ---
    "LevelGained": {
        "creature": req("str"),
        "new_level": req("int", minimum=2, maximum=100),
        "hit_dice": req("roll"),
        "con_extra": opt("roll", None, nullable=True),
        "swaps": opt("list_dict", []),
        "rerolls": opt("roll", None, nullable=True),
    },
}


def _order_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 -> v2: the band's side in its order; the heroes decided, the GM ordered the foes."""
    return {
        "encounter_id": payload.get("encounter_id"),
        "creatures": list(payload["order"]),
        "decided_by": "players" if payload.get("side") == "heroes" else "gm",
    }


CATALOGUE: Catalogue = CORE.extend(
    FACTS,
    versions={"InitiativeRolled": 2, "InitiativeOrderChosen": 2},
    upcasters={("InitiativeOrderChosen", 1): _order_v1},
)
"""Every fact a hero's-surge campaign can record."""
