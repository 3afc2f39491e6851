"""Turn boundaries through GraphQL (RULES.md ruling 18), as a companion app plays them, on both stores.

Every die face is given; the numbers are worked by hand from RULES.md. Three PCs from
``tests.graphql_helpers.pc``: level 1, Dexterity 12 (initiative bonus 0 + 1 = +1, SW-3),
30 HP, Constitution 14 (14 wounds, B-SW-4).

* ``endTurn`` refuses (ROLLS_PENDING, nothing stored) while a roll the turn owes has no dice,
  listing what is owed; with the dice it records the rolls and the end of the turn as one
  table action; the server rolls only when asked (``serverRolls``).
* Between one end of turn and the next start the encounter can be read: no turn in progress,
  who is next; ongoing damage waits for the next creature's ``startTurn``; the round advances
  at the first start of the new round.
* A delaying creature re-enters in that moment (SW-11), not during the turn in progress.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid, pc

ENCOUNTER = "encounter { turnOfCreatureId round order delayed raw }"
CHARACTERS = "characters { creatureId hitPoints { current } conditions }"


class Table:
    """One campaign through GraphQL, the GM's token, and shortcuts."""

    def __init__(self, g: GQL, names: list[str]) -> None:
        self.g = g
        self.cid, self.gm = create_campaign(g)
        self.campaign = gid("Campaign", self.cid, self.cid)
        self.ids = {name.lower(): pc(g, self.cid, self.gm, name) for name in names}
        self.encounter = gid("Encounter", self.cid, "fight")

    def m(self, name: str, select: str = "", **inp: Any) -> dict[str, Any]:
        out: dict[str, Any] = self.g.mutate(name, {"campaignId": self.campaign, **inp}, self.gm, select)
        return out

    def ok(self, name: str, select: str = "", **inp: Any) -> dict[str, Any]:
        out = self.m(name, select, **inp)
        assert out["userErrors"] == [], out
        return out

    def fight(self, faces: dict[str, int]) -> None:
        self.ok(
            "startEncounter",
            participantIds=[self.ids[n] for n in faces],
            encounterId="fight",
        )
        for name, face in faces.items():
            self.ok(
                "rollInitiative",
                encounterId=self.encounter,
                characterId=self.ids[name],
                roll={"expression": "1d20", "faces": [face]},
            )

    def effect(self, target: str, source: str, effect: dict[str, Any]) -> str:
        out = self.ok(
            "applyEffect", characterId=self.ids[target], sourceCharacterId=self.ids[source], effect=effect
        )
        return str(out["facts"][0]["outcome"]["effect_id"])

    def view(self) -> dict[str, Any]:
        q = "query($x: ID!) { encounter(id: $x) { turnOfCreatureId round order delayed raw } }"
        found: dict[str, Any] = self.g.ok(q, {"x": self.encounter}, self.gm)["encounter"]
        return found

    def hp(self, name: str) -> int:
        q = "query($x: ID!) { character(id: $x) { hitPoints { current } } }"
        return int(self.g.ok(q, {"x": self.ids[name]}, self.gm)["character"]["hitPoints"]["current"])

    def position(self) -> int:
        q = "query($c: ID!) { campaign(id: $c) { position } }"
        return int(self.g.ok(q, {"c": self.campaign}, self.gm)["campaign"]["position"])


@pytest.fixture
def g(app: ChronicleApplication, store: Settings) -> Iterator[GQL]:
    with TestClient(create_app(store, app)) as client:
        yield GQL(client)


def test_ruling_18_sw_10_a_save_is_owed_refused_without_dice_then_recorded_with_them(g: GQL) -> None:
    t = Table(g, ["Vex", "Orc"])
    t.fight({"vex": 18, "orc": 4})  # Vex 18 + 1 = 19, Orc 4 + 1 = 5
    view = t.view()  # the order is settled; no turn has started yet
    assert view["turnOfCreatureId"] is None and view["raw"]["next_turn_of"] == "vex"
    assert view["raw"]["phase"] == "between_turns" and view["round"] == 1
    started = t.ok("startTurn", ENCOUNTER, encounterId=t.encounter)
    assert started["encounter"]["turnOfCreatureId"] == "vex" and started["facts"][0]["type"] == "TurnStarted"

    dazed = t.effect(
        "vex",
        "orc",
        {"name": "dazed", "components": [{"condition": "dazed"}], "duration": {"kind": "save_ends"}},
    )
    fire = t.effect(
        "orc",
        "vex",
        {
            "name": "fire",
            "components": [{"ongoing": {"type": "fire", "amount": 5}}],
            "duration": {"kind": "save_ends"},
        },
    )

    # SW-10: the turn owes a save against "dazed"; no dice, no server roll: refused, nothing stored
    before = t.position()
    refused = t.m("endTurn", "pendingRolls { type kind characterId effectId dice }", encounterId=t.encounter)
    assert [e["code"] for e in refused["userErrors"]] == ["ROLLS_PENDING"]
    assert refused["pendingRolls"] == [
        {
            "type": "SavingThrowRolled",
            "kind": "saving throw",
            "characterId": "vex",
            "effectId": dazed,
            "dice": "1d20",
        }
    ]
    assert refused["facts"] == [] and t.position() == before

    # a roll that is not owed is refused too
    wrong = t.m(
        "endTurn",
        encounterId=t.encounter,
        rolls=[
            {"type": "SavingThrowRolled", "effectId": fire, "roll": {"expression": "1d20", "faces": [12]}}
        ],
    )
    assert [e["code"] for e in wrong["userErrors"]] == ["INVALID_INPUT"] and t.position() == before

    # with the table's d20 (12 >= 10: the save succeeds, SW-45), one table action of two facts
    ended = t.ok(
        "endTurn",
        ENCOUNTER,
        encounterId=t.encounter,
        rolls=[
            {"type": "SavingThrowRolled", "effectId": dazed, "roll": {"expression": "1d20", "faces": [12]}}
        ],
    )
    assert [f["type"] for f in ended["facts"]] == ["SavingThrowRolled", "TurnEnded"]
    save, end = ended["facts"]
    assert save["dice"][0]["faces"] == [12] and save["outcome"]["success"] is True
    assert end["outcome"]["turn_of"] is None and end["outcome"]["next_turn_of"] == "orc"

    # the moment between turns: no turn in progress, Orc is next, and Orc's fire has not ticked yet
    between = t.view()
    assert between["turnOfCreatureId"] is None
    assert (between["raw"]["phase"], between["raw"]["next_turn_of"]) == ("between_turns", "orc")
    assert t.hp("orc") == 30
    refused = t.m("endTurn", encounterId=t.encounter)
    assert [e["code"] for e in refused["userErrors"]] == ["NO_TURN"]

    # Orc's turn starts: the ongoing fire deals 5 (SW-7, SW-47): 30 -> 25
    started = t.ok("startTurn", CHARACTERS, encounterId=t.encounter, characterId=t.ids["orc"])
    tick = started["facts"][0]["outcome"]["turns"][-1]["ongoing_damage"][0]
    assert (tick["type"], tick["amount"]) == ("fire", 5) and t.hp("orc") == 25
    assert {c["creatureId"]: c["hitPoints"]["current"] for c in started["characters"]}["orc"] == 25
    again = t.m("startTurn", encounterId=t.encounter)
    assert [e["code"] for e in again["userErrors"]] == ["TURN_IN_PROGRESS"]

    # the server rolls only when asked: Orc's save against the fire
    ended = t.ok("endTurn", ENCOUNTER, encounterId=t.encounter, serverRolls=True)
    assert [f["type"] for f in ended["facts"]] == ["SavingThrowRolled", "TurnEnded"]
    assert (
        ended["facts"][0]["payload"]["effect_id"] == fire and len(ended["facts"][0]["dice"][0]["faces"]) == 1
    )
    assert ended["encounter"]["round"] == 1  # the last turn of round 1 ended: still round 1
    assert ended["encounter"]["raw"]["next_turn_starts_round"] == 2
    started = t.ok("startTurn", ENCOUNTER, encounterId=t.encounter)
    assert (started["encounter"]["round"], started["encounter"]["turnOfCreatureId"]) == (2, "vex")


def test_sw_11_a_delaying_creature_reenters_after_the_turn_that_ended(g: GQL) -> None:
    t = Table(g, ["Vex", "Kira", "Orc"])
    t.fight({"vex": 18, "kira": 10, "orc": 4})  # 19, 11, 5
    t.ok("startTurn", encounterId=t.encounter)
    delayed = t.ok("delayTurn", ENCOUNTER, encounterId=t.encounter, characterId=t.ids["vex"])
    enc = delayed["encounter"]
    assert (
        enc["turnOfCreatureId"] is None and enc["delayed"] == ["vex"] and enc["raw"]["next_turn_of"] == "kira"
    )
    t.ok("startTurn", encounterId=t.encounter)

    # not during Kira's turn: after it (SW-11 with ruling 18); nothing is stored
    before = t.position()
    early = t.m("takeDelayedTurn", encounterId=t.encounter, characterId=t.ids["vex"])
    assert [e["code"] for e in early["userErrors"]] == ["TURN_IN_PROGRESS"] and t.position() == before

    t.ok("endTurn", encounterId=t.encounter)
    back = t.ok("takeDelayedTurn", ENCOUNTER, encounterId=t.encounter, characterId=t.ids["vex"])
    assert back["encounter"]["turnOfCreatureId"] == "vex"
    assert back["encounter"]["order"] == ["kira", "vex", "orc"] and back["encounter"]["delayed"] == []
    assert back["facts"][0]["outcome"]["acts_after"] == "kira"

    # one call may end the turn and start the next: both facts are recorded
    both = t.ok("endTurn", ENCOUNTER, encounterId=t.encounter, startNext=True)
    assert [f["type"] for f in both["facts"]] == ["TurnEnded", "TurnStarted"]
    assert both["encounter"]["turnOfCreatureId"] == "orc"


def test_b_sw_8_a_dying_creatures_death_save_comes_with_the_end_of_its_turn(g: GQL) -> None:
    t = Table(g, ["Vex", "Orc"])
    t.fight({"vex": 18, "orc": 4})
    t.ok("startTurn", encounterId=t.encounter)
    # 30 HP, then 14 wounds, then one more: wounds -1, dying (B-SW-1..4)
    t.ok("dealDamage", characterId=t.ids["orc"], amount=30 + 14 + 1)
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # Vex owes nothing; Orc's turn starts
    refused = t.m("endTurn", "pendingRolls { type characterId effectId }", encounterId=t.encounter)
    assert [e["code"] for e in refused["userErrors"]] == ["ROLLS_PENDING"]
    assert refused["pendingRolls"] == [
        {"type": "DeathSavingThrowRolled", "characterId": "orc", "effectId": None}
    ]
    ended = t.ok(
        "endTurn",
        encounterId=t.encounter,
        rolls=[{"type": "DeathSavingThrowRolled", "roll": {"expression": "1d20", "faces": [4]}}],
    )
    death_save = ended["facts"][0]
    assert death_save["type"] == "DeathSavingThrowRolled" and death_save["outcome"]["result"] == "failure"
    assert death_save["outcome"]["death_save_failures"] == 1
