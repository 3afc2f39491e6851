"""Hero's-surge table actions as Python calls: for the demo, scripts and tests.

``HeroSurgeCommands(app).attempt(campaign_id, "b1", "brin", "critical_success", face=20,
targets=["ogre"])`` records the same facts the GraphQL mutations do
(``api.rulesets.hero_surge.mutations``), rolling dice on the server unless the faces read off
physical dice are given (``face`` for one d20, ``faces`` for an expression). Success levels and
luck results are the table's rulings (ruling 4). The command service (``ChronicleApplication``)
knows no game system: these build hero's-surge payloads and call its ``record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication, Recorded, slug
from domain.errors import InvalidInput
from domain.rulesets.hero_surge.rules import luck_roll_dice


class HeroSurgeCommands:
    """Hero's-surge table actions on one application. ``meta`` (optional) gives each recorded fact
    its envelope metadata (``recorded_by``, ``recorded_at``...), e.g. a script's fixed clock."""

    def __init__(self, app: ChronicleApplication, meta: Callable[[], dict[str, Any]] | None = None) -> None:
        self.app = app
        self.meta = meta

    def record(self, campaign_id: UUID, fact_type: str, payload: dict[str, Any]) -> Recorded:
        """Any fact (core or hero's-surge), with this helper's metadata."""
        return self.app.record(campaign_id, fact_type, payload, meta=self.meta() if self.meta else None)

    def dice(self, expression: str, faces: list[int] | None = None) -> dict[str, Any]:
        return self.app.roll(expression, faces=faces)

    def d20(self, face: int | None) -> dict[str, Any]:
        return self.app.roll("1d20", faces=None if face is None else [face])

    # --- sheets and levels ----------------------------------------------------
    def register_creature(
        self,
        campaign_id: UUID,
        name: str,
        *,
        kind: str,
        level: int,
        con_score: int,
        max_hp: int,
        **sheet: Any,
    ) -> Recorded:
        """A sheet (C2.1): ``hit_die``, ``damage_reduction``, ``extra_blocks``, ``hero``,
        ``hero_surges``, ``fortune_dice``, ``creature_id`` in ``sheet``."""
        payload = {
            "creature_id": sheet.pop("creature_id", None) or slug(name),
            "name": name,
            "kind": kind,
            "level": level,
            "con_score": con_score,
            "max_hp": max_hp,
            **sheet,
        }
        return self.record(campaign_id, "CreatureRegistered", payload)

    def gain_level(
        self,
        campaign_id: UUID,
        creature: str,
        new_level: int,
        pair: list[int],
        *,
        con_extra: list[int] | None = None,
        swaps: list[dict[str, int]] | None = None,
        rerolls: list[int] | None = None,
    ) -> Recorded:
        """Ruling 22, HS-13 / B-HS-17: the Hit Dice pair, the Con dice, the swaps, the 1-1 rerolls."""
        sheet = self.app.view(campaign_id).creature(creature) or {}
        if not sheet.get("hit_die"):
            raise InvalidInput(f"{creature} has no sheet with a Hit Die to roll (B-HS-17)", field="creature")
        sides = int(sheet["hit_die"])

        def roll(faces: list[int] | None) -> dict[str, Any] | None:
            return self.dice(f"{len(faces)}d{sides}", faces) if faces else None

        payload = {
            "creature": creature,
            "new_level": new_level,
            "hit_dice": roll(pair),
            "con_extra": roll(con_extra),
            "swaps": list(swaps or []),
            "rerolls": roll(rerolls),
        }
        return self.record(campaign_id, "LevelGained", payload)

    # --- rounds ---------------------------------------------------------------
    def check_initiative(
        self, campaign_id: UUID, encounter_id: str, creature: str, success_level: str, face: int | None = None
    ) -> Recorded:
        """HS-2 / HS-3: a check with its ruled level (for the first round in setup, else the next)."""
        payload = {
            "encounter_id": encounter_id,
            "creature": creature,
            "roll": self.d20(face),
            "success_level": success_level,
        }
        return self.record(campaign_id, "InitiativeRolled", payload)

    def choose_order(
        self, campaign_id: UUID, encounter_id: str, creatures: list[str], decided_by: str = ""
    ) -> Recorded:
        """HS-2 / B-HS-18: one side of one band, in the order the players or the GM choose."""
        payload = {"encounter_id": encounter_id, "creatures": list(creatures), "decided_by": decided_by}
        return self.record(campaign_id, "InitiativeOrderChosen", payload)

    def take_action(
        self, campaign_id: UUID, encounter_id: str | None, creature: str, action: str, name: str = ""
    ) -> Recorded:
        """HS-4: a move, the action or a free action."""
        payload = {"encounter_id": encounter_id, "creature": creature, "action": action, "name": name}
        return self.record(campaign_id, "ActionTaken", payload)

    # --- attempts ---------------------------------------------------------------
    def attempt(
        self,
        campaign_id: UUID,
        attempt_id: str,
        creature: str,
        success_level: str,
        *,
        face: int | None = None,
        kind: str = "attack",
        targets: list[str] | None = None,
        roll: dict[str, Any] | None = None,
        **more: Any,
    ) -> Recorded:
        """A2.3: an attempt with its dice and the ruled success level (``rulings``, ``rank``, ``dc``,
        ``action`` in ``more``)."""
        payload = {
            "attempt_id": attempt_id,
            "creature": creature,
            "kind": kind,
            "targets": list(targets or []),
            "roll": roll or self.d20(face),
            "success_level": success_level,
            **more,
        }
        return self.record(campaign_id, "AttemptRolled", payload)

    def devastating(
        self, campaign_id: UUID, attempt_id: str, option: str, target: str | None = None
    ) -> Recorded:
        payload = {"attempt_id": attempt_id, "option": option, "target": target}
        return self.record(campaign_id, "DevastatingEffectChosen", payload)

    def hampering(
        self, campaign_id: UUID, attempt_id: str, option: str, target: str | None = None
    ) -> Recorded:
        payload = {"attempt_id": attempt_id, "option": option, "target": target}
        return self.record(campaign_id, "HamperingEffectChosen", payload)

    def resolve_defense(
        self, campaign_id: UUID, defense_attempt_id: str, incoming: list[str], **lists: list[str]
    ) -> Recorded:
        """HS-9: ``blocked``, ``bypass_armor``, ``crit``, ``extra_block_sources`` in ``lists``."""
        payload = {"defense_attempt_id": defense_attempt_id, "incoming": list(incoming), **lists}
        return self.record(campaign_id, "MultiAttackDefenseResolved", payload)

    # --- damage and healing -------------------------------------------------------
    def roll_damage(
        self, campaign_id: UUID, damage_id: str, attempt_id: str | None, expression: str, faces: list[int]
    ) -> Recorded:
        payload = {"damage_id": damage_id, "attempt_id": attempt_id, "roll": self.dice(expression, faces)}
        return self.record(campaign_id, "DamageRolled", payload)

    def reroll(self, campaign_id: UUID, damage_id: str, die_index: int, new_face: int) -> Recorded:
        """B-HS-16: Brutal Damage."""
        payload = {"roll_id": damage_id, "die_index": die_index, "new_face": new_face, "reason": "brutal"}
        return self.record(campaign_id, "DiceRerolled", payload)

    def damage(self, campaign_id: UUID, target: str, **given: Any) -> Recorded:
        """HS-10: ``damage_id``, ``roll``, ``amount``, ``attack``, ``bypass_dr``, ``critical``, ``source``."""
        return self.record(campaign_id, "DamageApplied", {"target": target, **given})

    def temporary_hp(self, campaign_id: UUID, target: str, amount: int, source: str = "") -> Recorded:
        return self.record(
            campaign_id, "TemporaryHitPointsGranted", {"target": target, "amount": amount, "source": source}
        )

    def heal(self, campaign_id: UUID, target: str, amount: int, source: str = "") -> Recorded:
        return self.record(
            campaign_id, "HealingApplied", {"target": target, "amount": amount, "source": source}
        )

    # --- dying ---------------------------------------------------------------
    def luck_roll(
        self,
        campaign_id: UUID,
        creature: str,
        context: str,
        faces: list[int],
        result: str | None = None,
    ) -> Recorded:
        """HS-14 / B-HS-2: the luck roll's dice as the fold wants them now (one die of the flag, two
        keeping the higher with advantage): ``faces`` gives each die's face."""
        roll = self.dice(luck_roll_dice(self.app.ledger(campaign_id).state, creature, context), faces)
        payload = {"creature": creature, "context": context, "roll": roll, "result": result}
        return self.record(campaign_id, "LuckRollMade", payload)

    def medical(self, campaign_id: UUID, healer: str, target: str, attempt_id: str) -> Recorded:
        payload = {"healer": healer, "target": target, "attempt_id": attempt_id}
        return self.record(campaign_id, "MedicalAttemptMade", payload)

    def healers_kit(self, campaign_id: UUID, healer: str, target: str) -> Recorded:
        return self.record(campaign_id, "HealersKitUsed", {"healer": healer, "target": target})

    # --- hero's surges and rests ------------------------------------------------
    def spend_surge(self, campaign_id: UUID, creature: str, purpose: str, bonus: int = 0) -> Recorded:
        payload = {"creature": creature, "purpose": purpose, "bonus": bonus}
        return self.record(campaign_id, "HeroSurgeSpent", payload)

    def drain_surge(self, campaign_id: UUID, creature: str, source: str = "") -> Recorded:
        return self.record(campaign_id, "HeroSurgeDrained", {"creature": creature, "source": source})

    def exchange_fortune_die(self, campaign_id: UUID, attempt_id: str) -> Recorded:
        return self.record(campaign_id, "FortuneDieExchanged", {"attempt_id": attempt_id})

    def rest(self, campaign_id: UUID, kind: str, hours: int | None = None) -> Recorded:
        return self.record(campaign_id, "RestTaken", {"kind": kind, "hours": hours})
