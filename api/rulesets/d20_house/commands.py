"""d20 house-rules table actions as Python calls: for the demo, scripts and tests.

``D20Commands(app).attack(campaign_id, "kara", "gnoll", face=14, weapon=AXE)`` records the same
facts the GraphQL mutations do (``api.rulesets.d20_house.mutations``), rolling dice on the server
unless the faces read off physical dice are given (``face`` for one d20 or d%, ``faces`` for a
damage expression). The command service (``ChronicleApplication``) knows no game system: these
build d20 payloads and call its ``record``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication, Recorded, slug

ABILITIES = ("str", "stamina", "agility", "int", "spirit", "cha")


class D20Commands:
    """d20 house-rules table actions on one application. ``meta`` (optional) gives each recorded
    fact its envelope metadata (``recorded_by``, ``recorded_at``...), e.g. a script's fixed clock."""

    def __init__(self, app: ChronicleApplication, meta: Callable[[], dict[str, Any]] | None = None) -> None:
        self.app = app
        self.meta = meta

    def record(self, campaign_id: UUID, fact_type: str, payload: dict[str, Any]) -> Recorded:
        """Any fact (core or d20), with this helper's metadata."""
        return self.app.record(campaign_id, fact_type, payload, meta=self.meta() if self.meta else None)

    def _d20(self, face: int | None) -> dict[str, Any]:
        return self.app.roll("1d20", faces=None if face is None else [face])

    def _dice(self, expression: str | None, faces: list[int] | None) -> dict[str, Any] | None:
        return self.app.roll(expression, faces=faces) if expression else None

    # --- sheets -----------------------------------------------------------
    def register_creature(
        self,
        campaign_id: UUID,
        name: str,
        *,
        kind: str = "pc",
        level: int = 1,
        max_hp: int,
        bab: list[int],
        abilities: dict[str, int] | None = None,
        base_saves: dict[str, int] | None = None,
        creature_id: str | None = None,
        **sheet: Any,
    ) -> Recorded:
        """A sheet; abilities default to 10 and base saves to 0 (``class`` goes in ``sheet``)."""
        payload = {
            "creature_id": creature_id or slug(name),
            "name": name,
            "kind": kind,
            "level": level,
            "abilities": {**dict.fromkeys(ABILITIES, 10), **(abilities or {})},
            "max_hp": max_hp,
            "bab": bab,
            "base_saves": {"fort": 0, "ref": 0, "will": 0, **(base_saves or {})},
            **sheet,
        }
        return self.record(campaign_id, "CreatureRegistered", payload)

    def update_sheet(
        self, campaign_id: UUID, creature: str, changes: dict[str, Any], reason: str = ""
    ) -> Recorded:
        payload = {"creature_id": creature, "changes": changes, "reason": reason}
        return self.record(campaign_id, "SheetUpdated", payload)

    # --- attacks ----------------------------------------------------------
    def attack(
        self, campaign_id: UUID, attacker: str, target: str, *, face: int | None = None, **rest: Any
    ) -> Recorded:
        """An AttackRolled (``weapon``, ``vs``, ``iterative``, ``modifiers``... in ``rest``)."""
        payload = {"attacker": attacker, "target": target, "roll": self._d20(face), **rest}
        return self.record(campaign_id, "AttackRolled", payload)

    def attack_of_opportunity(
        self, campaign_id: UUID, attacker: str, target: str, *, face: int | None = None, **rest: Any
    ) -> Recorded:
        return self.attack(campaign_id, attacker, target, face=face, opportunity=True, **rest)

    def confirm(self, campaign_id: UUID, attack: int, *, face: int | None = None) -> Recorded:
        payload = {"attack": attack, "roll": self._d20(face)}
        return self.record(campaign_id, "CriticalConfirmationRolled", payload)

    def damage(
        self,
        campaign_id: UUID,
        attack: int,
        expression: str,
        *,
        faces: list[int] | None = None,
        crit_faces: list[int] | None = None,
        critical: bool = False,
        extra: list[tuple[str, list[int] | None]] | None = None,
        **rest: Any,
    ) -> Recorded:
        """A DamageRolled: the weapon's dice, and again (``crit_faces``, or rolled when
        ``critical``) for a confirmed critical; ``extra`` dice as (expression, faces)."""
        crit = None
        if crit_faces is not None or critical:
            crit = self.app.roll(expression, faces=crit_faces)
        payload = {
            "attack": attack,
            "weapon": self.app.roll(expression, faces=faces),
            "crit_weapon": crit,
            "extra": [self.app.roll(e, faces=f) for e, f in extra or []],
            **rest,
        }
        return self.record(campaign_id, "DamageRolled", payload)

    def massive_damage_save(
        self, campaign_id: UUID, creature: str, attack: int, *, face: int | None = None
    ) -> Recorded:
        payload = {"creature": creature, "attack": attack, "roll": self._d20(face)}
        return self.record(campaign_id, "MassiveDamageSaveRolled", payload)

    # --- hit points and dying ----------------------------------------------
    def deal_damage(
        self,
        campaign_id: UUID,
        target: str,
        expression: str | None = None,
        *,
        faces: list[int] | None = None,
        amount: int = 0,
        source: str = "hazard",
    ) -> Recorded:
        payload = {
            "target": target,
            "roll": self._dice(expression, faces),
            "amount": amount,
            "source": source,
        }
        return self.record(campaign_id, "DamageTaken", payload)

    def heal(
        self,
        campaign_id: UUID,
        target: str,
        expression: str | None = None,
        *,
        faces: list[int] | None = None,
        amount: int = 0,
        healer: str | None = None,
        source: str = "",
    ) -> Recorded:
        payload = {
            "target": target,
            "roll": self._dice(expression, faces),
            "amount": amount,
            "healer": healer,
            "source": source,
        }
        return self.record(campaign_id, "HealingApplied", payload)

    def heal_check(
        self, campaign_id: UUID, healer: str, target: str, *, face: int | None = None, **rest: Any
    ) -> Recorded:
        payload = {"healer": healer, "target": target, "roll": self._d20(face), **rest}
        return self.record(campaign_id, "HealCheckRolled", payload)

    def stabilize(
        self,
        campaign_id: UUID,
        creature: str,
        *,
        face: int | None = None,
        encounter_id: str | None = None,
        round: int | None = None,  # noqa: A002 - the fact's own name
    ) -> Recorded:
        """A d% stabilisation roll (``face`` 1..100, "00" is 100)."""
        payload = {
            "creature": creature,
            "roll": self.app.roll("d%", faces=None if face is None else [face]),
            "encounter_id": encounter_id,
            "round": round,
        }
        return self.record(campaign_id, "StabilizationRolled", payload)

    # --- saves, abilities, rests --------------------------------------------
    def saving_throw(
        self, campaign_id: UUID, creature: str, save: str, dc: int, *, face: int | None = None, **rest: Any
    ) -> Recorded:
        payload = {"creature": creature, "save": save, "dc": dc, "roll": self._d20(face), **rest}
        return self.record(campaign_id, "SavingThrowRolled", payload)

    def damage_ability(
        self,
        campaign_id: UUID,
        creature: str,
        ability: str,
        amount: int,
        *,
        drain: bool = False,
        source: str = "",
    ) -> Recorded:
        payload = {
            "creature": creature,
            "ability": ability,
            "amount": amount,
            "drain": drain,
            "source": source,
        }
        return self.record(campaign_id, "AbilityDamaged", payload)

    def recover_abilities(
        self, campaign_id: UUID, creatures: list[str], kind: str, hours: int, *, clean: bool = True
    ) -> Recorded:
        payload = {"creatures": creatures, "kind": kind, "hours": hours, "clean": clean}
        return self.record(campaign_id, "AbilityRecoveredByRest", payload)

    # --- actions, death, life ----------------------------------------------
    def take_action(self, campaign_id: UUID, creature: str, action: str, **rest: Any) -> Recorded:
        """An ActionTaken (``name``, ``strenuous``, ``run``, ``moves`` in ``rest``)."""
        return self.record(campaign_id, "ActionTaken", {"creature": creature, "action": action, **rest})

    def declare_death(self, campaign_id: UUID, creature: str, cause: str) -> Recorded:
        return self.record(campaign_id, "DeathDeclared", {"creature": creature, "cause": cause})

    def resurrect(
        self, campaign_id: UUID, creature: str, means: str, *, hp: int = 1, restore_abilities: bool = False
    ) -> Recorded:
        payload = {"creature": creature, "means": means, "hp": hp, "restore_abilities": restore_abilities}
        return self.record(campaign_id, "Resurrected", payload)
