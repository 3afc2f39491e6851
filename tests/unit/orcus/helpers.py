"""An Orcus table on the in-memory store, driven through ``ChronicleApplication``.

Every die is given: ``d20(face)``, ``d6(face)``, ``roll("2d6+4", 3, 5)``. The cast (``cast``)
has numbers easy to work by hand (RULES.md A4.9 placeholders: bloodied at floor(max/2), a
surge worth floor(max/4)):

* ``mira``: hero, 2,250 XP (level 3), 30 HP (bloodied 15, surge 7, dies at -15), 6 surges,
  AC 17 Fort 14 Ref 15 Will 13; powers: ``strike`` (at-will), ``lance`` (encounter),
  ``stand`` (daily);
* ``ogre``: elite, level 4, 52 HP, 1 action point, AC 16 Fort 17 Ref 13 Will 12, resist 5
  fire; powers ``breath`` (recharge 5-6), ``rage`` (recharge if bloodied), ``club`` (at-will);
* ``gob``: monster, level 1, 10 HP, AC 15 Fort 12 Ref 14 Will 11.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from api.service.application import ChronicleApplication, Recorded
from domain import dice
from domain.core import encounters as engine
from domain.errors import DomainError
from domain.rulesets import get_ruleset

RULESET = get_ruleset("orcus")
HERO_DEFENSES = {"ac": 17, "fort": 14, "ref": 15, "will": 13}
OGRE_DEFENSES = {"ac": 16, "fort": 17, "ref": 13, "will": 12}
GOB_DEFENSES = {"ac": 15, "fort": 12, "ref": 14, "will": 11}
HERO_POWERS = [
    {"id": "strike", "name": "Strike", "frequency": "at_will"},
    {"id": "lance", "name": "Radiant Lance", "frequency": "encounter"},
    {"id": "stand", "name": "Last Stand", "frequency": "daily"},
]
OGRE_POWERS = [
    {"id": "breath", "name": "Fire Breath", "frequency": "recharge", "recharge": [5, 6]},
    {"id": "rage", "name": "Rage", "frequency": "recharge_if", "condition": "the ogre is bloodied"},
    {"id": "club", "name": "Club", "frequency": "at_will"},
]
CLUB = {
    "name": "Club",
    "power_id": "club",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 7,
    "damage": "2d6+4",
}


def d20(face: int, plus: int = 0) -> dict[str, Any]:
    return dice.roll(f"1d20{plus:+d}" if plus else "1d20", faces=[face])


def d6(face: int) -> dict[str, Any]:
    return dice.roll("1d6", faces=[face])


def roll(expression: str, *faces: int, weapon: str | None = None) -> dict[str, Any]:
    return dice.roll(expression, weapon=weapon, faces=list(faces))


@contextmanager
def refused(code: str) -> Iterator[None]:
    """The block raises a typed refusal with this code."""
    with pytest.raises(DomainError) as err:
        yield
    assert err.value.code == code, f"{err.value.code}: {err.value.message}"


class OrcusTable:
    """One Orcus campaign and shortcuts to record facts and read views."""

    def __init__(self, app: ChronicleApplication, flags: dict[str, Any] | None = None) -> None:
        self.app = app
        self.cid = app.create_campaign("Orcus table", ruleset="orcus", flags=flags)

    # --- recording ---------------------------------------------------------
    def record(self, fact_type: str, **payload: Any) -> Recorded:
        return self.app.record(self.cid, fact_type, payload)

    def hero(self, cid: str = "mira", **sheet: Any) -> Recorded:
        base: dict[str, Any] = {
            "creature_id": cid,
            "name": cid.title(),
            "kind": "hero",
            "max_hp": 30,
            "surges_per_day": 6,
            "defenses": dict(HERO_DEFENSES),
            "powers": [dict(p) for p in HERO_POWERS],
        }
        if "xp" not in sheet and "level" not in sheet:
            base["xp"] = 2250
        return self.record("CreatureRegistered", **{**base, **sheet})

    def monster(self, cid: str, kind: str = "monster", **sheet: Any) -> Recorded:
        base: dict[str, Any] = {
            "creature_id": cid,
            "name": cid.title(),
            "kind": kind,
            "level": 1,
            "max_hp": 10,
        }
        base["defenses"] = dict(GOB_DEFENSES)
        return self.record("CreatureRegistered", **{**base, **sheet})

    def ogre(self, **sheet: Any) -> Recorded:
        return self.monster(
            "ogre",
            "elite",
            **{
                "level": 4,
                "max_hp": 52,
                "action_points": 1,
                "defenses": dict(OGRE_DEFENSES),
                "resist": {"fire": 5},
                "powers": [dict(p) for p in OGRE_POWERS],
                **sheet,
            },
        )

    def cast(self) -> OrcusTable:
        self.hero("mira")
        self.ogre()
        self.monster("gob")
        return self

    def attack(
        self,
        attacker: str,
        power: dict[str, Any],
        targets: list[dict[str, Any]],
        damage: list[int] | None = None,
        **more: Any,
    ) -> Recorded:
        """``targets``: ``{"target", "face"? (d20), "circumstances"?, "modifiers"?, "crit"? (faces)}``."""
        filled = []
        for t in targets:
            t = dict(t)
            if "face" in t:
                t["roll"] = d20(t.pop("face"))
            if "crit" in t:
                expression, *faces = t.pop("crit")
                t["crit_bonus"] = roll(expression, *faces)
            filled.append(t)
        if damage is not None:
            more["damage"] = roll(power["damage"], *damage, weapon=power.get("weapon"))
        return self.record("AttackMade", attacker=attacker, power=power, targets=filled, **more)

    def damage(self, target: str, amount: int, types: list[str] | None = None) -> Recorded:
        return self.record("DamageApplied", target=target, amount=amount, types=types or [])

    def effect(self, target: str, source: str, **spec: Any) -> Recorded:
        return self.record("EffectApplied", target=target, source=source, effect=spec)

    def save(self, who: str, effect_id: str, face: int, **more: Any) -> Recorded:
        return self.record("SavingThrowRolled", creature=who, effect_id=effect_id, roll=d20(face), **more)

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
        """A private copy of the present state (to call hooks and handlers directly)."""
        return self.ledger.state.clone()

    def orphans(self) -> dict[str, str]:
        return dict(self.app.summary(self.cid)["orphans"])

    def store_max(self) -> int:
        return int(self.app.recorder.max_notification_id() or 0)

    def revoke(self, target: int, reason: str = "a mistake") -> Recorded:
        return self.app.revoke(self.cid, target, reason)

    def restore(self, revocation: int) -> Recorded:
        return self.app.restore(self.cid, revocation, "it stands")

    def amend(self, target: int, patch: dict[str, Any], reason: str = "misread") -> Recorded:
        return self.app.amend(self.cid, target, patch, reason)


def effect_ids(view: dict[str, Any]) -> list[str]:
    return [e["effect_id"] for e in view["effects"]]


# --------------------------------------------------------------- direct folding (hooks)
class Ctx:
    """The fold context a handler sees, for tests that call hooks and handlers directly; each
    fact gets the next position (effect ids come from it)."""

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


class Direct:
    """A state taken from a real campaign, an encounter of the core engine put straight into it,
    and the Orcus hooks and handlers called on them directly: turn boundaries in any order a
    test needs (the engine's own order is tested through the facts, test_table_sequences)."""

    def __init__(
        self, table: OrcusTable, participants: list[str], *, surprise_round: bool = False, eid: str = "fight"
    ) -> None:
        self.state = table.state()
        self.enc = engine.Encounter.new(eid, eid, participants, table.position)
        self.enc.state, self.enc.order = engine.RUNNING, list(participants)
        self.enc.round, self.enc.surprise_round = (0, True) if surprise_round else (1, False)
        self.state.encounters[self.enc.id] = self.enc
        self.state.active_encounter = self.enc.id
        self.seq = table.position + 1

    def ctx(self) -> Ctx:
        self.seq += 1
        return Ctx(self.seq)

    def fact(self, fact_type: str, **payload: Any) -> dict[str, Any]:
        checked = RULESET.catalogue.validate(fact_type, payload)
        result: dict[str, Any] = RULESET.apply(self.state, fact_type, checked, self.ctx())
        return result

    def start(self, cid: str, *, new_round: bool = False) -> dict[str, Any]:
        from domain.rulesets.orcus import turns

        if new_round:
            self.enc.round += 1
            self.enc.surprise_round = False
        number = self.enc.turn_no + 1
        self.enc.turn_log = {"turn_no": number, "creature": cid}
        self.enc.turn_started[cid] = number
        self.enc.turn_index, self.enc.phase = self.enc.order.index(cid), engine.IN_TURN
        return turns.turn_started(self.state, self.enc, cid, self.ctx())

    def owed(self) -> list[tuple[str, dict[str, Any]]]:
        return list(RULESET.pending_rolls(self.state))

    def end(self, *, check: bool = True) -> dict[str, Any]:
        from domain.rulesets.orcus import turns

        cid = self.enc.current
        assert cid is not None
        if check:
            assert self.owed() == [], self.owed()
        report = turns.turn_ended(self.state, self.enc, cid, self.ctx())
        self.enc.phase = engine.BETWEEN
        return report

    def end_encounter(self) -> dict[str, Any]:
        from domain.rulesets.orcus import turns

        self.enc.state = engine.ENDED
        self.state.active_encounter = None
        return turns.encounter_ended(self.state, self.enc, self.ctx())

    def v(self, who: str) -> dict[str, Any]:
        return RULESET.creature_view(self.state, who)


# --------------------------------------------------------------- encounters (the core engine)
def encounter_facts(t: OrcusTable, eid: str) -> Any:
    """Shortcuts for the core encounter facts of encounter ``eid`` on table ``t``."""

    class E:
        @staticmethod
        def start(participants: list[str], surprised: list[str] | None = None) -> None:
            t.record("EncounterStarted", encounter_id=eid, name=eid, participants=participants)
            if surprised:
                t.record("SurpriseDetermined", encounter_id=eid, surprised=surprised)

        @staticmethod
        def init(who: str, face: int, modifier: int) -> Recorded:
            return t.record("InitiativeRolled", encounter_id=eid, creature=who, roll=d20(face, modifier))

        @staticmethod
        def group(group: str, members: list[str], face: int, modifier: int) -> Recorded:
            return t.record(
                "InitiativeRolled", encounter_id=eid, group=group, creatures=members, roll=d20(face, modifier)
            )

        @staticmethod
        def order(names: list[str], by: str = "gm") -> Recorded:
            return t.record("InitiativeOrderChosen", encounter_id=eid, creatures=names, decided_by=by)

        @staticmethod
        def turn() -> Recorded:
            return t.record("TurnStarted", encounter_id=eid)

        @staticmethod
        def end() -> Recorded:
            return t.record("TurnEnded", encounter_id=eid)

        @staticmethod
        def act(who: str, action: str, **more: Any) -> Recorded:
            return t.record("ActionTaken", encounter_id=eid, creature=who, action=action, **more)

        @staticmethod
        def view() -> dict[str, Any]:
            return RULESET.encounter_view(t.ledger.state, eid)

        @staticmethod
        def finish(outcome: str = "") -> Recorded:
            return t.record("EncounterEnded", encounter_id=eid, outcome=outcome)

    return E
