"""A d20 house-rules table on the in-memory store, driven through ``ChronicleApplication``.

Every die is given: ``d20(face)``, ``pct(face)`` (a d% face, 00 = 100), ``dice("2d6", 3, 4)``.
Creatures default to a sheet whose numbers are easy to work by hand: all abilities 10
(modifier 0) except as given, BAB +1, base saves 0, no armor, 20 HP.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from api.service.application import ChronicleApplication, Recorded
from domain import dice
from domain.errors import DomainError
from domain.rulesets import get_ruleset

RULESET = get_ruleset("d20")
ABILITIES = {"str": 10, "stamina": 10, "agility": 10, "int": 10, "spirit": 10, "cha": 10}
SAVES = {"fort": 0, "ref": 0, "will": 0}


def d20(face: int, plus: int = 0) -> dict[str, Any]:
    return dice.roll(f"1d20{plus:+d}" if plus else "1d20", faces=[face])


def pct(face: int) -> dict[str, Any]:
    return dice.roll("d%", faces=[face])


def roll(expression: str, *faces: int) -> dict[str, Any]:
    return dice.roll(expression, faces=list(faces))


@contextmanager
def refused(code: str) -> Iterator[None]:
    """The block raises a typed refusal with this code."""
    with pytest.raises(DomainError) as err:
        yield
    assert err.value.code == code, f"{err.value.code}: {err.value.message}"


class Ctx:
    """The fold context a handler sees, for tests that call hooks and handlers directly."""

    def __init__(self, seq: int = 10_000, rulings: dict[str, Any] | None = None) -> None:
        self.seq = seq
        self.meta: dict[str, Any] = {}
        self.overrides: dict[str, Any] = {}
        self.waived = False
        self._rulings = rulings or {}

    def ruling_holds(self, ruling_id: str) -> bool:
        return bool(self._rulings.get(ruling_id))

    def ruling_value(self, ruling_id: str) -> Any:
        return self._rulings.get(ruling_id)


class D20Table:
    """One d20 campaign and shortcuts to record facts and read views."""

    def __init__(self, app: ChronicleApplication, flags: dict[str, Any] | None = None) -> None:
        self.app = app
        self.cid = app.create_campaign("d20 table", ruleset="d20", flags=flags)

    # --- recording ---------------------------------------------------------
    def record(self, fact_type: str, **payload: Any) -> Recorded:
        return self.app.record(self.cid, fact_type, payload)

    def creature(
        self,
        cid: str,
        *,
        kind: str = "pc",
        level: int = 1,
        max_hp: int = 20,
        bab: list[int] | None = None,
        saves: dict[str, int] | None = None,
        **sheet: Any,
    ) -> Recorded:
        abilities = dict(ABILITIES)
        for key in list(sheet):
            if key in ABILITIES:
                abilities[key] = sheet.pop(key)
        return self.record(
            "CreatureRegistered",
            creature_id=cid,
            name=cid.title(),
            kind=kind,
            level=level,
            abilities=abilities,
            max_hp=max_hp,
            bab=bab or [1],
            base_saves={**SAVES, **(saves or {})},
            **sheet,
        )

    def damage(self, target: str, amount: int, source: str = "hazard") -> Recorded:
        return self.record("DamageTaken", target=target, amount=amount, source=source)

    def heal(self, target: str, amount: int, **more: Any) -> Recorded:
        return self.record("HealingApplied", target=target, amount=amount, **more)

    def stabilize(self, who: str, face: int, **more: Any) -> Recorded:
        return self.record("StabilizationRolled", creature=who, roll=pct(face), **more)

    def heal_check(self, healer: str, target: str, face: int, **more: Any) -> Recorded:
        return self.record("HealCheckRolled", healer=healer, target=target, roll=d20(face), **more)

    def attack(self, attacker: str, target: str, face: int, **more: Any) -> Recorded:
        return self.record("AttackRolled", attacker=attacker, target=target, roll=d20(face), **more)

    def confirm(self, attack: int, face: int) -> Recorded:
        return self.record("CriticalConfirmationRolled", attack=attack, roll=d20(face))

    def damage_roll(
        self, attack: int, expression: str, faces: list[int], crit_faces: list[int] | None = None, **more: Any
    ) -> Recorded:
        crit = roll(expression, *crit_faces) if crit_faces is not None else None
        return self.record(
            "DamageRolled", attack=attack, weapon=roll(expression, *faces), crit_weapon=crit, **more
        )

    def ability_damage(self, who: str, ability: str, amount: int, drain: bool = False) -> Recorded:
        return self.record("AbilityDamaged", creature=who, ability=ability, amount=amount, drain=drain)

    # --- reading -----------------------------------------------------------
    def v(self, who: str, position: int | None = None, view: str = "corrected") -> dict[str, Any]:
        return self.app.creature_state(self.cid, who, position, view)

    def hp(self, who: str) -> int:
        return int(self.v(who)["hp"])

    @property
    def ledger(self) -> Any:
        return self.app.ledger(self.cid)

    @property
    def position(self) -> int:
        return int(self.ledger.last_seq)

    def state(self) -> Any:
        """A private copy of the present state (for calling hooks and handlers directly)."""
        return self.ledger.state.clone()

    def orphans(self) -> dict[str, str]:
        return dict(self.app.summary(self.cid)["orphans"])

    def store_max(self) -> int:
        return int(self.app.recorder.max_notification_id() or 0)


class Encounter:
    """A stand-in for the core engine's encounter object (the hooks read only these fields)."""

    def __init__(
        self, participants: list[str], *, round: int = 1, surprise_round: bool = False, eid: str = "e1"
    ) -> None:
        self.id = eid
        self.participants = list(participants)
        self.round = round
        self.surprise_round = surprise_round
        self.state = "running"

    def clone(self) -> Encounter:
        c = Encounter(self.participants, round=self.round, surprise_round=self.surprise_round, eid=self.id)
        c.state = self.state
        return c


def apply(state: Any, fact_type: str, ctx: Ctx | None = None, **payload: Any) -> dict[str, Any]:
    """Fold one fact into ``state`` directly (validated like a recorded one)."""
    checked = RULESET.catalogue.validate(fact_type, payload)
    result: dict[str, Any] = RULESET.apply(state, fact_type, checked, ctx or Ctx())
    return result


def view(state: Any, who: str) -> dict[str, Any]:
    return RULESET.creature_view(state, who)
