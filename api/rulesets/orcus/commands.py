"""Orcus table actions as Python calls: for the demo, scripts and tests.

``OrcusCommands(app).attack(campaign_id, "ogre", CLUB, [{"target": "mira", "face": 14}],
damage_faces=[3, 5])`` records the same facts the GraphQL mutations do
(``api.rulesets.orcus.mutations``), rolling dice on the server unless the faces read off
physical dice are given (``face`` for one d20 or d6, ``faces`` for a damage expression). The
command service (``ChronicleApplication``) knows no game system: these build Orcus payloads and
call its ``record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication, Recorded, slug


class OrcusCommands:
    """Orcus table actions on one application. ``meta`` (optional) gives each recorded fact its
    envelope metadata (``recorded_by``, ``recorded_at``...), e.g. a script's fixed clock."""

    def __init__(self, app: ChronicleApplication, meta: Callable[[], dict[str, Any]] | None = None) -> None:
        self.app = app
        self.meta = meta

    def record(self, campaign_id: UUID, fact_type: str, payload: dict[str, Any]) -> Recorded:
        """Any fact (core or Orcus), with this helper's metadata."""
        return self.app.record(campaign_id, fact_type, payload, meta=self.meta() if self.meta else None)

    def _die(self, sides: int, face: int | None, plus: int = 0) -> dict[str, Any]:
        expression = f"1d{sides}" + (f"{plus:+d}" if plus else "")
        return self.app.roll(expression, faces=None if face is None else [face])

    def _dice(
        self, expression: str | None, faces: list[int] | None, weapon: str | None = None
    ) -> dict[str, Any] | None:
        return self.app.roll(expression, weapon=weapon, faces=faces) if expression else None

    # --- sheets, XP, levels -------------------------------------------------
    def register_creature(
        self,
        campaign_id: UUID,
        name: str,
        *,
        kind: str = "hero",
        max_hp: int,
        defenses: dict[str, int],
        creature_id: str | None = None,
        **sheet: Any,
    ) -> Recorded:
        """A sheet (C4.1): ``level`` / ``xp``, ``surges_per_day``, ``resist``, ``vuln``, ``powers``,
        ``action_points`` in ``sheet``."""
        payload = {
            "creature_id": creature_id or slug(name),
            "name": name,
            "kind": kind,
            "max_hp": max_hp,
            "defenses": dict(defenses),
            **sheet,
        }
        return self.record(campaign_id, "CreatureRegistered", payload)

    def update_sheet(
        self, campaign_id: UUID, creature: str, changes: dict[str, Any], reason: str = ""
    ) -> Recorded:
        payload = {"creature_id": creature, "changes": changes, "reason": reason}
        return self.record(campaign_id, "SheetUpdated", payload)

    def award_xp(self, campaign_id: UUID, creatures: list[str], amount: int, reason: str = "") -> Recorded:
        payload = {"creatures": creatures, "amount": amount, "reason": reason}
        return self.record(campaign_id, "ExperienceAwarded", payload)

    def set_level(self, campaign_id: UUID, creature: str, level: int | None) -> Recorded:
        return self.record(campaign_id, "LevelSet", {"creature": creature, "level": level})

    # --- attacks --------------------------------------------------------------
    def attack(
        self,
        campaign_id: UUID,
        attacker: str,
        power: dict[str, Any],
        targets: list[dict[str, Any]],
        *,
        damage_faces: list[int] | None = None,
        roll_damage: bool = True,
        action: str | None = None,
    ) -> Recorded:
        """An AttackMade. ``targets``: ``{"target", "face"? (the d20; rolled when absent unless the
        target chose to be hit or the power hits automatically), "plus"? (a modifier inside the
        roll), "circumstances"?, "modifiers"?, "crit_bonus"?: (expression, faces)}``. The damage
        (the power's expression) is rolled with ``damage_faces`` or by the server; ``roll_damage=False``
        records none (every target misses, or only criticals hit)."""
        filled = []
        for t in targets:
            entry = {k: v for k, v in t.items() if k not in ("face", "plus", "crit_bonus")}
            if not t.get("chose_to_be_hit") and (not power.get("auto_hit") or "face" in t):
                entry["roll"] = self._die(20, t.get("face"), int(t.get("plus", 0)))
            if t.get("crit_bonus") is not None:
                expression, faces = t["crit_bonus"]
                entry["crit_bonus"] = self.app.roll(expression, faces=faces)
            filled.append(entry)
        payload: dict[str, Any] = {
            "attacker": attacker,
            "power": power,
            "targets": filled,
            "damage": self._dice(power.get("damage"), damage_faces, power.get("weapon"))
            if roll_damage
            else None,
            "action": action,
        }
        return self.record(campaign_id, "AttackMade", payload)

    # --- powers, actions, action points ------------------------------------
    def use_power(
        self, campaign_id: UUID, creature: str, power_id: str, action: str | None = None
    ) -> Recorded:
        return self.record(
            campaign_id, "PowerUsed", {"creature": creature, "power_id": power_id, "action": action}
        )

    def recharge(
        self, campaign_id: UUID, creature: str, power_id: str, *, face: int | None = None
    ) -> Recorded:
        payload = {"creature": creature, "power_id": power_id, "roll": self._die(6, face)}
        return self.record(campaign_id, "RechargeRolled", payload)

    def recharge_condition(
        self, campaign_id: UUID, creature: str, power_id: str, trigger: str = ""
    ) -> Recorded:
        payload = {"creature": creature, "power_id": power_id, "trigger": trigger}
        return self.record(campaign_id, "RechargeConditionMet", payload)

    def spend_action_point(self, campaign_id: UUID, creature: str, extra: str = "standard") -> Recorded:
        return self.record(campaign_id, "ActionPointSpent", {"creature": creature, "extra": extra})

    def take_action(
        self, campaign_id: UUID, encounter_id: str | None, creature: str, action: str, **rest: Any
    ) -> Recorded:
        """An ActionTaken (``name``, ``substitutes_for`` in ``rest``)."""
        payload = {"encounter_id": encounter_id, "creature": creature, "action": action, **rest}
        return self.record(campaign_id, "ActionTaken", payload)

    # --- effects, saves, maintain -----------------------------------------------
    def apply_effect(self, campaign_id: UUID, target: str, source: str, effect: dict[str, Any]) -> Recorded:
        return self.record(
            campaign_id, "EffectApplied", {"target": target, "source": source, "effect": effect}
        )

    def save(
        self, campaign_id: UUID, creature: str, effect_id: str, *, face: int | None = None, **rest: Any
    ) -> Recorded:
        payload = {"creature": creature, "effect_id": effect_id, "roll": self._die(20, face), **rest}
        return self.record(campaign_id, "SavingThrowRolled", payload)

    def maintain(self, campaign_id: UUID, effect_id: str, action: str = "swift") -> Recorded:
        return self.record(campaign_id, "EffectMaintained", {"effect_id": effect_id, "action": action})

    def end_effect(
        self, campaign_id: UUID, effect_id: str, *, by_choice: bool = False, reason: str = "gm"
    ) -> Recorded:
        if by_choice:
            return self.record(campaign_id, "EffectEndedByChoice", {"effect_id": effect_id})
        return self.record(campaign_id, "EffectEnded", {"effect_id": effect_id, "reason": reason})

    def end_of_turn_order(self, campaign_id: UUID, creature: str, effect_ids: list[str]) -> Recorded:
        return self.record(
            campaign_id, "EndOfTurnOrderChosen", {"creature": creature, "effect_ids": effect_ids}
        )

    # --- the A4.9 placeholder pack -----------------------------------------------
    def deal_damage(
        self,
        campaign_id: UUID,
        target: str,
        expression: str | None = None,
        *,
        faces: list[int] | None = None,
        amount: int = 0,
        types: list[str] | None = None,
        source: str = "other",
    ) -> Recorded:
        payload = {
            "target": target,
            "roll": self._dice(expression, faces),
            "amount": amount,
            "types": types or [],
            "source": source,
        }
        return self.record(campaign_id, "DamageApplied", payload)

    def heal(
        self,
        campaign_id: UUID,
        target: str,
        expression: str | None = None,
        *,
        faces: list[int] | None = None,
        surge_multiplier: int = 0,
        flat: int = 0,
        requires_surge: bool = False,
        healer: str | None = None,
        source: str = "",
    ) -> Recorded:
        payload = {
            "target": target,
            "surge_multiplier": surge_multiplier,
            "roll": self._dice(expression, faces),
            "flat": flat,
            "requires_surge": requires_surge,
            "source": source,
            "healer": healer,
        }
        return self.record(campaign_id, "HealingApplied", payload)

    def temporary_hp(self, campaign_id: UUID, target: str, amount: int, source: str = "") -> Recorded:
        payload = {"target": target, "amount": amount, "source": source}
        return self.record(campaign_id, "TemporaryHitPointsGranted", payload)

    def spend_surge(self, campaign_id: UUID, creature: str, note: str = "") -> Recorded:
        return self.record(campaign_id, "HealingSurgeSpent", {"creature": creature, "note": note})

    def rally(self, campaign_id: UUID, creature: str) -> Recorded:
        return self.record(campaign_id, "RallyUsed", {"creature": creature})

    def death_save(self, campaign_id: UUID, creature: str, *, face: int | None = None) -> Recorded:
        return self.record(
            campaign_id, "DeathSavingThrowRolled", {"creature": creature, "roll": self._die(20, face)}
        )

    def stabilize(
        self,
        campaign_id: UUID,
        creature: str,
        *,
        healer: str | None = None,
        face: int | None = None,
        plus: int = 0,
        dc: int | None = None,
    ) -> Recorded:
        """A check that stabilises a dying hero (``face`` None and no roll wanted: pass ``face=0``
        for the table's ruling that it worked, recorded without a roll)."""
        roll = None if face == 0 else self._die(20, face, plus)
        payload = {"creature": creature, "healer": healer, "roll": roll, "dc": dc}
        return self.record(campaign_id, "Stabilized", payload)

    def declare_death(self, campaign_id: UUID, creature: str, cause: str) -> Recorded:
        return self.record(campaign_id, "DeathDeclared", {"creature": creature, "cause": cause})

    def short_rest(
        self, campaign_id: UUID, participants: list[str] | None = None, minutes: int = 5
    ) -> Recorded:
        return self.record(campaign_id, "ShortRestTaken", {"participants": participants, "minutes": minutes})

    def long_rest(self, campaign_id: UUID, participants: list[str] | None = None, hours: int = 6) -> Recorded:
        return self.record(campaign_id, "LongRestTaken", {"participants": participants, "hours": hours})
