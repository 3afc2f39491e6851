"""Stellar Winds table actions as Python calls: for the demo, scripts and tests.

``StellarWindsCommands(app).deal_damage(campaign_id, "vex", "2d6+3")`` records the same facts
the GraphQL mutations do (``api.rulesets.stellar_winds.mutations``), rolling dice on the
server unless the faces read off physical dice are given. The command service
(``ChronicleApplication``) itself knows no game system: these build Stellar Winds payloads and
call its ``record``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication, Recorded, slug


class StellarWindsCommands:
    """Stellar Winds table actions on one application."""

    def __init__(self, app: ChronicleApplication) -> None:
        self.app = app

    def register_creature(self, campaign_id: UUID, **sheet: Any) -> Recorded:
        sheet.setdefault("creature_id", slug(sheet.get("name", "creature")))
        return self.app.record(campaign_id, "CreatureRegistered", sheet)

    def deal_damage(
        self,
        campaign_id: UUID,
        target: str,
        dice_expression: str | None = None,
        *,
        faces: list[int] | None = None,
        amount: int = 0,
        types: Iterable[str] = (),
        **rest: Any,
    ) -> Recorded:
        roll = self.app.roll(dice_expression, faces=faces) if dice_expression else None
        return self.app.record(
            campaign_id,
            "DamageTaken",
            {"target": target, "roll": roll, "amount": amount, "types": list(types), **rest},
        )

    def heal(
        self,
        campaign_id: UUID,
        target: str,
        *,
        dice_expression: str | None = None,
        faces: list[int] | None = None,
        **rest: Any,
    ) -> Recorded:
        roll = self.app.roll(dice_expression, faces=faces) if dice_expression else None
        return self.app.record(campaign_id, "HealingApplied", {"target": target, "roll": roll, **rest})

    def grant_temporary_hp(self, campaign_id: UUID, target: str, amount: int, source: str = "") -> Recorded:
        return self.app.record(
            campaign_id, "TemporaryHitPointsGranted", {"target": target, "amount": amount, "source": source}
        )

    def spend_surge(
        self, campaign_id: UUID, creature: str, cause: str = "short_rest", note: str = ""
    ) -> Recorded:
        payload = {"creature": creature, "cause": cause, "note": note}
        return self.app.record(campaign_id, "HealingSurgeSpent", payload)

    def second_wind(self, campaign_id: UUID, creature: str) -> Recorded:
        return self.app.record(campaign_id, "SecondWindUsed", {"creature": creature})

    def death_save(
        self,
        campaign_id: UUID,
        creature: str,
        *,
        face: int | None = None,
        modifiers: list[dict[str, Any]] | None = None,
    ) -> Recorded:
        roll = self.app.roll("1d20", faces=None if face is None else [face])
        return self.app.record(
            campaign_id,
            "DeathSavingThrowRolled",
            {"creature": creature, "roll": roll, "modifiers": modifiers or []},
        )

    def stabilize(
        self,
        campaign_id: UUID,
        target: str,
        *,
        healer: str | None = None,
        check: str | None = None,
        faces: list[int] | None = None,
        dc: int | None = None,
        **rest: Any,
    ) -> Recorded:
        roll = self.app.roll(check, faces=faces) if check else None
        return self.app.record(
            campaign_id,
            "StabilizationAttempted",
            {"target": target, "healer": healer, "roll": roll, "dc": dc, **rest},
        )

    def restore_wounds(
        self, campaign_id: UUID, target: str, amount: int, method: str, caregiver: str | None = None
    ) -> Recorded:
        return self.app.record(
            campaign_id,
            "WoundsRestored",
            {"target": target, "amount": amount, "method": method, "caregiver": caregiver},
        )

    def short_rest(
        self,
        campaign_id: UUID,
        participants: list[str] | None = None,
        surge_spends: dict[str, int] | None = None,
    ) -> Recorded:
        """The rest and each creature's surge spends (SW-49) as one table action: all or nothing."""
        items: list[tuple[str, dict[str, Any]]] = [("ShortRestTaken", {"participants": participants})]
        for who, n in (surge_spends or {}).items():
            items += [("HealingSurgeSpent", {"creature": who, "cause": "short_rest"}) for _ in range(n)]
        return self.app.record_many(campaign_id, items)

    def extended_rest(
        self, campaign_id: UUID, participants: list[str] | None = None, hours: int = 6
    ) -> Recorded:
        return self.app.record(
            campaign_id, "ExtendedRestTaken", {"participants": participants, "hours": hours}
        )

    def spend_action_point(self, campaign_id: UUID, creature: str, use: str = "extra_standard") -> Recorded:
        return self.app.record(campaign_id, "ActionPointSpent", {"creature": creature, "use": use})

    def award_xp(self, campaign_id: UUID, creatures: list[str], amount: int, reason: str = "") -> Recorded:
        return self.app.record(
            campaign_id, "ExperienceAwarded", {"creatures": creatures, "amount": amount, "reason": reason}
        )

    def attack(
        self,
        campaign_id: UUID,
        attacker: str,
        power: dict[str, Any],
        targets: list[dict[str, Any]],
        *,
        damage_faces: list[int] | None = None,
        **rest: Any,
    ) -> Recorded:
        """An attack: d20s are rolled per target unless given; damage per SW-23."""
        filled = []
        for t in targets:
            t = dict(t)
            if "roll" not in t:
                face = t.pop("face", None)
                t["roll"] = self.app.roll("1d20", faces=None if face is None else [face])
            if power.get("damage") and power.get("kind") in ("melee", "ranged") and "damage" not in t:
                dfaces = t.pop("damage_faces", None)
                t["damage"] = self.app.roll(power["damage"], weapon=power.get("weapon"), faces=dfaces)
            filled.append(t)
        if power.get("damage") and power.get("kind") in ("close", "area") and "damage" not in rest:
            rest["damage"] = self.app.roll(power["damage"], weapon=power.get("weapon"), faces=damage_faces)
        return self.app.record(
            campaign_id, "AttackMade", {"attacker": attacker, "power": power, "targets": filled, **rest}
        )
