"""Friendlier inputs for a companion app (issue 14), through GraphQL on both stores.

* A die face is corrected with ``amendFact`` by ``dice`` (expression and faces) or ``die``
  (its index and face), not a merge patch over the stored roll record; ``breakInitiativeTie``
  takes ``dice`` too.

The PCs come from ``tests.graphql_helpers.pc``: level 1, 30 HP, AC 15, Reflex 13,
Dexterity 12 (initiative +1, SW-3).
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


def d(expression: str, *faces: int) -> dict[str, Any]:
    return {"expression": expression, "faces": list(faces)}


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

    def refused(self, name: str, code: str, field: str, **inp: Any) -> str:
        """A typed refusal that stores nothing; its message."""
        before = self.position()
        out = self.m(name, **inp)
        assert [(e["code"], e["field"]) for e in out["userErrors"]] == [(code, field)], out
        assert self.position() == before
        return str(out["userErrors"][0]["message"])

    def hp(self, name: str) -> int:
        q = "query($x: ID!) { character(id: $x) { hitPoints { current } } }"
        return int(self.g.ok(q, {"x": self.ids[name]}, self.gm)["character"]["hitPoints"]["current"])

    def position(self) -> int:
        q = "query($c: ID!) { campaign(id: $c) { position } }"
        return int(self.g.ok(q, {"c": self.campaign}, self.gm)["campaign"]["position"])

    def order(self) -> list[str]:
        q = "query($x: ID!) { encounter(id: $x) { order } }"
        return list(self.g.ok(q, {"x": self.encounter}, self.gm)["encounter"]["order"])


@pytest.fixture
def g(app: ChronicleApplication, store: Settings) -> Iterator[GQL]:
    with TestClient(create_app(store, app)) as client:
        yield GQL(client)


def test_a_misread_damage_die_is_corrected_by_its_faces_or_by_its_index(g: GQL) -> None:
    t = Table(g, ["Vex"])
    hit = t.ok("dealDamage", characterId=t.ids["vex"], roll=d("2d6+1", 3, 4))["facts"][0]["position"]
    assert t.hp("vex") == 30 - 8  # 3 + 4 + 1
    # the table read a 6, not a 3: the roll as it should have been
    t.ok("amendFact", position=hit, dice=d("2d6+1", 6, 4), reason="misread the first die")
    assert t.hp("vex") == 30 - 11  # 6 + 4 + 1
    # or one die by its index (from 0, in term order): the second die was a 2
    t.ok("amendFact", position=hit, die={"index": 1, "face": 2}, reason="misread the second die")
    assert t.hp("vex") == 30 - 9  # 6 + 2 + 1


def test_a_die_correction_that_does_not_fit_is_refused_and_stores_nothing(g: GQL) -> None:
    t = Table(g, ["Vex"])
    hit = t.ok("dealDamage", characterId=t.ids["vex"], roll=d("2d6+1", 3, 4))["facts"][0]["position"]
    t.refused("amendFact", "INVALID_DICE", "die", position=hit, die={"index": 2, "face": 1}, reason="x")
    t.refused("amendFact", "INVALID_DICE", "die", position=hit, die={"index": 0, "face": 7}, reason="x")
    t.refused("amendFact", "INVALID_INPUT", "patch", position=hit, reason="x")
    both = {"dice": d("2d6+1", 1, 1), "die": {"index": 0, "face": 1}}
    t.refused("amendFact", "INVALID_INPUT", "patch", position=hit, reason="x", **both)
    t.refused("amendFact", "INVALID_INPUT", "roll", position=hit, dice=d("1d6", 1), roll="nope", reason="x")
    # a fact without a roll is amended with a patch
    note = t.ok("addNote", text="dusk")["facts"][0]["position"]
    t.refused(
        "amendFact", "INVALID_INPUT", "position", position=note, die={"index": 0, "face": 1}, reason="x"
    )
    assert t.hp("vex") == 30 - 8


def test_an_attack_holds_several_rolls_and_the_correction_names_one(g: GQL) -> None:
    t = Table(g, ["Vex", "Orc"])
    axe = {"name": "axe", "kind": "MELEE", "defense": "AC", "attackBonus": 4, "damage": "1d12"}
    out = t.ok(
        "attack",
        "facts { dice { path purpose faces } }",
        attackerId=t.ids["orc"],
        power=axe,
        targets=[{"characterId": t.ids["vex"], "attackRoll": d("1d20", 12), "damageRoll": d("1d12", 2)}],
    )
    at = out["facts"][0]["position"]
    assert t.hp("vex") == 30 - 2  # 12 + 4 = 16 vs AC 15: a hit for 2
    # C0.3: each roll says what it is for and where it is (the path amendFact's `roll` takes)
    assert [(r["path"], r["purpose"], r["faces"]) for r in out["facts"][0]["dice"]] == [
        ("targets.0.roll", "attack roll", [12]),
        ("targets.0.damage", "damage roll", [2]),
    ]
    message = t.refused(
        "amendFact", "INVALID_INPUT", "roll", position=at, die={"index": 0, "face": 9}, reason="x"
    )
    assert "targets.0.roll, targets.0.damage" in message  # it lists the fact's rolls
    t.ok("amendFact", position=at, roll="targets.0.damage", die={"index": 0, "face": 9}, reason="it was a 9")
    assert t.hp("vex") == 30 - 9


def test_sw_4_a_tie_is_broken_by_the_dice_as_rolled_at_the_table(g: GQL) -> None:
    """SW-4: equal initiative and equal bonuses: a die each, the higher goes first."""
    t = Table(g, ["Vex", "Kira"])
    t.ok("startEncounter", participantIds=[t.ids["vex"], t.ids["kira"]], encounterId="fight")
    for name in ("vex", "kira"):
        t.ok("rollInitiative", encounterId=t.encounter, characterId=t.ids[name], roll=d("1d20", 10))
    tie = {"encounterId": t.encounter, "characterIds": [t.ids["kira"], t.ids["vex"]], "method": "DIE"}
    t.refused("breakInitiativeTie", "TIE_ORDER_WRONG", "rolls", dice=[d("1d6", 2), d("1d6", 5)], **tie)
    t.refused("breakInitiativeTie", "INVALID_DICE", "faces", dice=[d("1d6", 7), d("1d6", 5)], **tie)
    out = t.ok("breakInitiativeTie", "facts { dice { purpose } }", dice=[d("1d6", 5), d("1d6", 2)], **tie)
    assert [r["purpose"] for r in out["facts"][0]["dice"]] == ["initiative tie-break"] * 2
    assert [r["terms"][0]["faces"] for r in out["facts"][0]["payload"]["rolls"]] == [[5], [2]]
    assert t.order()[:2] == ["kira", "vex"]


FROST = {"name": "frost", "components": [{"ongoing": {"type": "cold", "amount": 5}}]}
SAVE_ENDS = {"kind": "save_ends"}


def test_an_effect_carries_the_key_the_app_chose_and_is_saved_against_by_it(g: GQL) -> None:
    """SW-45: the app names the effect it saves against by its own key, never read back."""
    t = Table(g, ["Vex", "Orc"])
    frost = {**FROST, "duration": SAVE_ENDS, "key": "orc-frost"}
    out = t.ok("applyEffect", characterId=t.ids["vex"], sourceCharacterId=t.ids["orc"], effect=frost)
    assert out["facts"][0]["outcome"]["effect_id"] == "orc-frost"
    # unique while it lasts: a second effect with that key, on anyone, is refused and stores nothing
    t.refused("applyEffect", "EFFECT_KEY_TAKEN", "effect.key", characterId=t.ids["orc"], effect=frost)
    # a key cannot pass for an id the engine makes
    t.refused(
        "applyEffect", "INVALID_INPUT", "effect.key", characterId=t.ids["orc"], effect={**frost, "key": "e12"}
    )
    # d20 12 >= 10: saved, the effect ends (SW-45) and its key is free again
    saved = t.ok(
        "rollSavingThrow",
        "facts { dice { purpose } }",
        characterId=t.ids["vex"],
        effectId="orc-frost",
        roll=d("1d20", 12),
    )
    assert saved["facts"][0]["outcome"]["success"] is True
    assert [r["purpose"] for r in saved["facts"][0]["dice"]] == ["saving throw"]
    t.ok("applyEffect", characterId=t.ids["orc"], effect=frost)


def test_the_clock_is_set_to_a_day_and_hour_and_an_extended_rest_says_what_it_did_to_it(g: GQL) -> None:
    """B-SW-25: one extended rest per 24 game hours, counted from the rest's start."""
    t = Table(g, ["Vex"])
    out = t.ok("setTime", day=2, hour=6, minute=30)
    assert {k: out["facts"][0]["outcome"][k] for k in ("day", "hour", "minute")} == {
        "day": 2,
        "hour": 6,
        "minute": 30,
    }
    t.refused("setTime", "CLOCK_BACKWARDS", "day", day=2, hour=6, minute=29)
    rest = t.ok("takeExtendedRest", participantIds=[t.ids["vex"]], hours=8)["facts"][0]["outcome"]
    assert rest["clock_from"] == {"day": 2, "hour": 6, "minute": 30}
    assert rest["clock_to"] == {"day": 2, "hour": 14, "minute": 30}
    assert rest["next_extended_rest_from"] == {"day": 3, "hour": 6, "minute": 30}
    t.refused("takeExtendedRest", "EXTENDED_REST_TOO_SOON", "participantIds", participantIds=[t.ids["vex"]])
    t.ok("setTime", day=3, hour=6, minute=30)
    t.ok("takeExtendedRest", participantIds=[t.ids["vex"]])


BOW = {"name": "bow", "kind": "RANGED", "defense": "AC", "attackBonus": 4, "damage": "1d10"}


def test_sw_17_typed_modifiers_two_power_bonuses_do_not_add_an_item_bonus_and_a_penalty_do(g: GQL) -> None:
    """C0.3 typed modifiers: d20 8 + 4, power +2 (the power +1 does not add), item +1, penalty -1:
    8 + 4 + 2 + 1 - 1 = 14 against AC 15, a miss (were both power bonuses added: 15, a hit)."""
    t = Table(g, ["Vex", "Orc"])
    mods = [
        {"source": "bless", "value": 1, "type": "POWER"},
        {"source": "inspire", "value": 2, "type": "POWER"},
        {"source": "scope", "value": 1, "type": "ITEM"},
        {"source": "smoke", "value": -1},
    ]
    target = {"characterId": t.ids["orc"], "attackRoll": d("1d20", 8), "damageRoll": d("1d10", 6)}
    out = t.ok("attack", attackerId=t.ids["vex"], power=BOW, targets=[{**target, "typedModifiers": mods}])
    shot = out["facts"][0]["outcome"]["targets"][0]
    assert (shot["attack_total"], shot["hit"]) == (14, False)
    stored = out["facts"][0]["payload"]["targets"][0]["modifiers"]
    assert stored[0] == {"source": "bless", "value": 1, "type": "power"} and stored[3] == {
        "source": "smoke",
        "value": -1,
    }
    both = {**target, "typedModifiers": mods, "modifiers": [{"value": 1}]}
    t.refused(
        "attack", "INVALID_INPUT", "targets.modifiers", attackerId=t.ids["vex"], power=BOW, targets=[both]
    )


def test_a_saving_throw_takes_typed_modifiers(g: GQL) -> None:
    """SW-45: d20 8 + 2 (a power bonus) = 10: saved."""
    t = Table(g, ["Vex", "Orc"])
    frost = {**FROST, "duration": SAVE_ENDS, "key": "frost"}
    t.ok("applyEffect", characterId=t.ids["vex"], sourceCharacterId=t.ids["orc"], effect=frost)
    out = t.ok(
        "rollSavingThrow",
        characterId=t.ids["vex"],
        effectId="frost",
        roll=d("1d20", 8),
        typedModifiers=[{"source": "cleric's blessing", "value": 2, "type": "POWER"}],
    )
    assert out["facts"][0]["outcome"]["success"] is True


def test_c0_3_an_in_game_reroll_is_its_own_fact_before_the_attack_that_uses_the_new_face(g: GQL) -> None:
    """A power lets Vex reroll the d20: a 3 (3 + 4 = 7, a miss against AC 15) becomes 17 (21, a
    hit for 6). The log keeps both: DiceRerolled with the roll as it stood, then the attack."""
    t = Table(g, ["Vex", "Orc"])
    roll = {**d("1d20", 3), "rerolls": [{"index": 0, "face": 17, "reason": "elven accuracy"}]}
    target = {"characterId": t.ids["orc"], "attackRoll": roll, "damageRoll": d("1d10", 6)}
    out = t.ok(
        "attack", "facts { dice { purpose faces } }", attackerId=t.ids["vex"], power=BOW, targets=[target]
    )
    reroll, attack = out["facts"]
    assert reroll["type"] == "DiceRerolled" and attack["type"] == "AttackMade"
    assert [(r["purpose"], r["faces"]) for r in reroll["dice"]] == [("the roll before the reroll", [3])]
    assert {k: reroll["outcome"][k] for k in ("old_face", "new_face", "total_before", "total_after")} == {
        "old_face": 3,
        "new_face": 17,
        "total_before": 3,
        "total_after": 17,
    }
    shot = attack["outcome"]["targets"][0]
    assert (shot["attack_total"], shot["hit"]) == (21, True) and t.hp("orc") == 30 - 6
    line = "query($c: ID!) { campaign(id: $c) { history(last: 2) { nodes { line } } } }"
    lines = [n["line"] for n in g.ok(line, {"c": t.campaign}, t.gm)["campaign"]["history"]["nodes"]]
    assert "Vex rerolls die 1 of 1d20 (elven accuracy): 3 becomes 17, total 3 -> 17." in lines[0]


def test_a_reroll_that_does_not_fit_or_where_none_is_taken_is_refused_and_stores_nothing(g: GQL) -> None:
    t = Table(g, ["Vex", "Orc"])
    bad = {**d("1d20", 3), "rerolls": [{"index": 1, "face": 17}]}  # a 1d20 has one die: index 0
    target = {"characterId": t.ids["orc"], "attackRoll": bad}
    t.refused("attack", "INVALID_DICE", "rerolls", attackerId=t.ids["vex"], power=BOW, targets=[target])
    # a free roll takes no rerolls (roll again instead)
    free = {**d("1d20", 3), "rerolls": [{"index": 0, "face": 17}]}
    t.refused("rollDice", "INVALID_INPUT", "rerolls", roll=free)
    assert t.hp("orc") == 30
