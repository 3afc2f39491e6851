"""A hero's-surge table on the in-memory store, with every die given by the test.

``HSTable`` creates a campaign with ``ruleset="hero-surge"`` through ``ChronicleApplication``
and offers short ways to record facts and read creature views. The creatures the tests use
are built from RULES.md numbers:

* ``aldric``: hero, level 1, Con 14, max HP 40, Hit Die d8, armor DR 2: 4 hero's surges
  (HS-15), dies when -HP > max(14, 20) = 20 (HS-12);
* ``brin``: hero, level 2, Con 16, max HP 24, Hit Die d10: 5 hero's surges, dies when
  -HP > max(16, 12) = 16; 1/4 of max HP = 6;
* ``goblin``: monster, max HP 10, Con 10; ``ogre``: monster, max HP 30, Con 16, DR 3.
"""

from __future__ import annotations

from typing import Any

from api.service.application import ChronicleApplication, Recorded
from domain import dice
from tests.unit.conftest import memory_application

SHEETS: dict[str, dict[str, Any]] = {
    "aldric": {"kind": "pc", "level": 1, "con_score": 14, "max_hp": 40, "hit_die": 8, "damage_reduction": 2},
    "brin": {"kind": "pc", "level": 2, "con_score": 16, "max_hp": 24, "hit_die": 10},
    "goblin": {"kind": "monster", "level": 1, "con_score": 10, "max_hp": 10},
    "ogre": {"kind": "monster", "level": 3, "con_score": 16, "max_hp": 30, "damage_reduction": 3},
}


def roll(expression: str, *faces: int) -> dict[str, Any]:
    """A Roll record with the faces as they fell (manual dice)."""
    return dice.roll(expression, faces=list(faces))


def d20(face: int, bonus: int = 0) -> dict[str, Any]:
    return roll(f"1d20+{bonus}" if bonus else "1d20", face)


class HSTable:
    def __init__(self, app: ChronicleApplication | None = None, flags: dict[str, Any] | None = None) -> None:
        self.app = app or memory_application()
        self.cid = self.app.create_campaign("Surge", ruleset="hero-surge", flags=flags)

    # --- setup ---------------------------------------------------------------
    def add(self, cid: str, **changes: Any) -> Recorded:
        sheet = {**SHEETS.get(cid, SHEETS["goblin"]), **changes}
        return self.rec("CreatureRegistered", creature_id=cid, name=cid.title(), **sheet)

    # --- facts ---------------------------------------------------------------
    def rec(self, fact_type: str, **payload: Any) -> Recorded:
        return self.app.record(self.cid, fact_type, payload)

    def out(self, fact_type: str, **payload: Any) -> dict[str, Any]:
        return self.rec(fact_type, **payload).outcome

    def damage(self, target: str, amount: int = 0, **more: Any) -> dict[str, Any]:
        return self.out("DamageApplied", target=target, amount=amount, **more)

    def attempt(
        self, aid: str, who: str, level: str, face: int, kind: str = "attack", bonus: int = 0, **more: Any
    ) -> dict[str, Any]:
        return self.out(
            "AttemptRolled",
            attempt_id=aid,
            creature=who,
            kind=kind,
            roll=d20(face, bonus),
            success_level=level,
            **more,
        )

    def luck(self, who: str, context: str, *faces: int, **more: Any) -> dict[str, Any]:
        r = roll("2d20kh1", *faces) if len(faces) == 2 else d20(faces[0])
        return self.out("LuckRollMade", creature=who, context=context, roll=r, **more)

    # --- encounters (the core encounter engine) -------------------------------
    def fight(
        self, checks: dict[str, tuple[str, int]], eid: str = "e1", surprised: list[str] | None = None
    ) -> Any:
        """Start encounter ``eid`` with these creatures, each with its initiative check (ruled
        level, d20 face), in the order given."""
        self.rec("EncounterStarted", encounter_id=eid, name=eid, participants=list(checks))
        if surprised:
            self.rec("SurpriseDetermined", encounter_id=eid, surprised=surprised)
        return [self.check(cid, level, face, eid) for cid, (level, face) in checks.items()][-1]

    def check(self, cid: str, level: str, face: int, eid: str = "e1") -> dict[str, Any]:
        """An initiative check (HS-2): for the first round in setup, for the next round while running."""
        return self.out(
            "InitiativeRolled", encounter_id=eid, creature=cid, roll=d20(face), success_level=level
        )

    def start(self, eid: str = "e1") -> dict[str, Any]:
        return self.out("TurnStarted", encounter_id=eid)

    def end(self, eid: str = "e1") -> dict[str, Any]:
        return self.out("TurnEnded", encounter_id=eid)

    def enc(self, eid: str = "e1") -> dict[str, Any]:
        return self.app.view(self.cid).encounter(eid)

    # --- reads ---------------------------------------------------------------
    def v(self, cid: str, position: int | None = None, view: str = "corrected") -> dict[str, Any]:
        return self.app.creature_state(self.cid, cid, position, view)

    def hp(self, cid: str) -> int:
        return int(self.v(cid)["hit_points"]["current"])

    def surges(self, cid: str) -> int:
        return int(self.v(cid)["hero_surges"])

    @property
    def ledger(self) -> Any:
        return self.app.ledger(self.cid)

    @property
    def position(self) -> int:
        return int(self.ledger.last_seq)

    def store_max(self) -> int:
        return int(self.app.recorder.max_notification_id() or 0)

    def orphans(self) -> dict[str, str]:
        return dict(self.app.summary(self.cid)["orphans"])
