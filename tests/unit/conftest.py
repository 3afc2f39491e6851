"""Unit fixtures: a Stellar Winds campaign on the in-memory store.

``table`` is a :class:`Table`: an application on ``eventsourcing.popo`` with one
campaign holding

* ``vex``: a level-5 PC, max HP 40 (bloodied value 20, surge value 10),
  8 surges, Con 12 (12 wounds), AC 29;
* ``orc``: a level-5 monster, max HP 50, Con 12, AC 17.

Helpers read the state (``t.c("vex")``), the store's position and the
store's highest notification id (to prove a refused command stored nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service.application import CampaignView, ChronicleApplication
from domain.rulesets import summary

ABILITIES = {"str": 10, "con": 12, "dex": 14, "int": 10, "wis": 10, "cha": 10}
PC_DEFENSES = {"ac": 29, "fort": 15, "ref": 16, "will": 14}
MONSTER_DEFENSES = {"ac": 17, "fort": 15, "ref": 14, "will": 13}
AXE = {"name": "axe", "kind": "melee", "defense": "ac", "attack_bonus": 8, "damage": "2d6+4"}


def summary_of(view: CampaignView) -> dict[str, Any]:
    """The whole state a view holds (e.g. the state a what-if preview would give)."""
    return summary(view.ruleset, view.state)


def memory_application() -> ChronicleApplication:
    return ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


class Table:
    """One campaign and shortcuts to act on it and read it."""

    def __init__(self, app: ChronicleApplication, flags: dict[str, Any] | None = None) -> None:
        self.app = app
        self.cid = app.create_campaign("Unit", flags=flags)

    # --- setup -----------------------------------------------------------
    def pc(
        self,
        cid: str = "vex",
        *,
        max_hp: int = 40,
        surges: int = 8,
        level: int = 5,
        con: int = 12,
        **sheet: Any,
    ) -> Any:
        return StellarWindsCommands(self.app).register_creature(
            self.cid,
            creature_id=cid,
            name=cid.title(),
            kind="pc",
            level=level,
            abilities={**ABILITIES, "con": con},
            max_hp=max_hp,
            surges_per_day=surges,
            defenses=dict(PC_DEFENSES),
            **sheet,
        )

    def monster(
        self, cid: str = "orc", *, max_hp: int = 50, con: int = 12, kind: str = "monster", **sheet: Any
    ) -> Any:
        return StellarWindsCommands(self.app).register_creature(
            self.cid,
            creature_id=cid,
            name=cid.title(),
            kind=kind,
            level=5,
            abilities={**ABILITIES, "con": con},
            max_hp=max_hp,
            defenses=dict(MONSTER_DEFENSES),
            **sheet,
        )

    # --- reads -----------------------------------------------------------
    def c(self, creature: str, position: int | None = None, view: str = "corrected") -> dict[str, Any]:
        return self.app.creature_state(self.cid, creature, position, view)

    def summary(self, position: int | None = None, view: str = "corrected") -> dict[str, Any]:
        return self.app.summary(self.cid, position, view)

    @property
    def ledger(self) -> Any:
        return self.app.ledger(self.cid)

    @property
    def position(self) -> int:
        return int(self.ledger.last_seq)

    def store_max(self) -> int:
        return int(self.app.recorder.max_notification_id() or 0)

    def orphans(self) -> dict[str, str]:
        return dict(self.summary()["orphans"])

    # --- shortcuts ---------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """``t.deal_damage("vex", amount=5)`` calls ``deal_damage(cid, "vex", amount=5)`` of the Stellar
        Winds commands (or of the application for what every system shares)."""
        commands = StellarWindsCommands(self.app)
        method = getattr(commands, name, None) or getattr(self.app, name)
        if not callable(method):
            return method

        def bound(*args: Any, **kwargs: Any) -> Any:
            return method(self.cid, *args, **kwargs)

        return bound

    def hit_vex(self, damage_faces: list[int], face: int = 19, **target: Any) -> Any:
        """The orc's axe (+8, 2d6+4) against vex (AC 29)."""
        return StellarWindsCommands(self.app).attack(
            self.cid,
            "orc",
            dict(AXE),
            [{"target": "vex", "face": face, "damage_faces": damage_faces, **target}],
        )


@pytest.fixture
def application() -> Iterator[ChronicleApplication]:
    app = memory_application()
    try:
        yield app
    finally:
        app.close()


@pytest.fixture
def table(application: ChronicleApplication) -> Table:
    """A campaign with the PC ``vex`` and the monster ``orc``."""
    t = Table(application)
    t.pc("vex")
    t.monster("orc")
    return t


@pytest.fixture
def make_table(application: ChronicleApplication) -> Any:
    """Build a bare campaign (optionally with starting flags)."""

    def make(flags: dict[str, Any] | None = None) -> Table:
        return Table(application, flags)

    return make
