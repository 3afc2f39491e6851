"""Stellar Winds table sequences through GraphQL (issue 14), as a companion app plays them, on both stores.

Every die face is given; the numbers are worked by hand from RULES.md. The PCs come from
``tests.graphql_helpers.pc``: level 1, 30 HP, AC 15, Fortitude 13, Reflex 13, Will 12,
Constitution 14 (14 wounds, B-SW-4), Dexterity 12 (initiative +1, SW-3).
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

    def __init__(self, g: GQL, sheets: dict[str, dict[str, Any]]) -> None:
        self.g = g
        self.cid, self.gm = create_campaign(g)
        self.campaign = gid("Campaign", self.cid, self.cid)
        self.ids = {name.lower(): pc(g, self.cid, self.gm, name, **extra) for name, extra in sheets.items()}
        self.encounter = gid("Encounter", self.cid, "fight")

    def m(self, name: str, select: str = "", **inp: Any) -> dict[str, Any]:
        out: dict[str, Any] = self.g.mutate(name, {"campaignId": self.campaign, **inp}, self.gm, select)
        return out

    def ok(self, name: str, select: str = "", **inp: Any) -> dict[str, Any]:
        out = self.m(name, select, **inp)
        assert out["userErrors"] == [], out
        return out

    def fight(self, faces: dict[str, int]) -> None:
        """Start the encounter, roll initiative with the given d20s, start the first turn."""
        self.ok("startEncounter", participantIds=[self.ids[n] for n in faces], encounterId="fight")
        for name, face in faces.items():
            self.ok(
                "rollInitiative",
                encounterId=self.encounter,
                characterId=self.ids[name],
                roll=d("1d20", face),
            )
        self.ok("startTurn", encounterId=self.encounter)

    def attack(self, attacker: str, power: dict[str, Any], *targets: dict[str, Any], **rest: Any) -> Any:
        """An attack; each target is {name, d20, damage faces?, circumstances?, ...}."""
        entries = []
        for t in targets:
            entry: dict[str, Any] = {"characterId": self.ids[t["name"]], "attackRoll": d("1d20", t["d20"])}
            if "damage" in t:
                entry["damageRoll"] = d(power["damage"], *t["damage"])
            for key in ("circumstances", "modifiers", "adjacent"):
                if key in t:
                    entry[key] = t[key]
            entries.append(entry)
        return self.m(
            "attack",
            "characters { creatureId hitPoints { current } conditions }",
            attackerId=self.ids[attacker],
            power=power,
            targets=entries,
            **rest,
        )

    def character(self, name: str, select: str = "hitPoints { current } conditions") -> dict[str, Any]:
        q = f"query($x: ID!) {{ character(id: $x) {{ {select} }} }}"
        found: dict[str, Any] = self.g.ok(q, {"x": self.ids[name]}, self.gm)["character"]
        return found

    def hp(self, name: str) -> int:
        return int(self.character(name)["hitPoints"]["current"])

    def position(self) -> int:
        q = "query($c: ID!) { campaign(id: $c) { position } }"
        return int(self.g.ok(q, {"c": self.campaign}, self.gm)["campaign"]["position"])


@pytest.fixture
def g(app: ChronicleApplication, store: Settings) -> Iterator[GQL]:
    with TestClient(create_app(store, app)) as client:
        yield GQL(client)


def test_sw_30_a_cold_touch_of_0_still_deals_the_vulnerability(g: GQL) -> None:
    t = Table(g, {"Vex": {"vuln": {"cold": 5}}, "Orc": {}})
    touch = {"name": "frost touch", "kind": "MELEE", "defense": "REF", "attackBonus": 5, "damage": "1d4-5"}
    touch["damageTypes"] = ["cold"]
    # d20 15 + 5 = 20 vs Reflex 13: a hit; 1d4-5 with a 2 is -3 -> 0 (step 1); 0 + 5 vulnerable = 5
    out = t.attack("orc", touch, {"name": "vex", "d20": 15, "damage": [2]})
    assert out["userErrors"] == [], out
    hit = out["facts"][0]["outcome"]["targets"][0]
    assert (hit["hit"], hit["damage"]["amount"]) == (True, 5)
    assert t.hp("vex") == 30 - 5
    # the same through dealDamage: 1d4-5 with a 4 is -1 -> 0 -> 5
    t.ok("dealDamage", characterId=t.ids["vex"], roll=d("1d4-5", 4), types=["cold"])
    assert t.hp("vex") == 25 - 5


BOW = {"name": "bow", "kind": "RANGED", "defense": "AC", "attackBonus": 4, "damage": "1d10"}


def test_ruling_19_prone_defends_only_against_ranged_attackers_that_are_not_adjacent(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Kira": {}, "Orc": {}})
    t.ok(
        "applyEffect",
        characterId=t.ids["orc"],
        sourceCharacterId=t.ids["orc"],
        effect={"name": "prone", "components": [{"condition": "prone"}]},
    )
    sheet = t.character("orc", "... on StellarWindsCharacter { defenses { ac { current againstRanged } } }")
    ac = sheet["defenses"]["ac"]
    assert ac == {"current": 15, "againstRanged": 17}  # AC 15; +2 vs ranged from afar
    # Vex shoots from across the room: d20 12 + 4 = 16 against 15 + 2 = 17: a miss
    far = t.attack("vex", BOW, {"name": "orc", "d20": 12, "damage": [6]})
    shot = far["facts"][0]["outcome"]["targets"][0]
    assert (shot["adjacent"], shot["defense_value"], shot["hit"]) == (False, 17, False)
    assert t.hp("orc") == 30
    # Kira stands over it and shoots: 16 against 15, a hit for the d10's 6: 30 -> 24
    near = t.attack("kira", BOW, {"name": "orc", "d20": 12, "damage": [6], "adjacent": True})
    shot = near["facts"][0]["outcome"]["targets"][0]
    assert (shot["adjacent"], shot["defense_value"], shot["hit"]) == (True, 15, True)
    assert t.hp("orc") == 24


GRENADE = {
    "name": "frag grenade",
    "kind": "AREA",
    "defense": "REF",
    "attackBonus": 4,
    "damage": "1d6+2",
    "damageTypes": [],
}


def test_ruling_17_concealment_on_an_area_attack_is_accepted_ignored_and_explained(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Kira": {}, "Orc": {}})
    # the grenade goes into the smoke: d20 9 + 4 = 13 against Reflex 13 hits both (no -2: ruling 17);
    # 1d6+2 with a 5, rolled once for all (SW-23): 7 each, 30 -> 23
    out = t.m(
        "attack",
        attackerId=t.ids["vex"],
        power=GRENADE,
        targets=[
            {"characterId": t.ids["orc"], "attackRoll": d("1d20", 9), "circumstances": ["concealment"]},
            {"characterId": t.ids["kira"], "attackRoll": d("1d20", 9)},
        ],
        damageRoll=d("1d6+2", 5),
    )
    assert out["userErrors"] == [], out
    orc, kira = out["facts"][0]["outcome"]["targets"]
    assert (orc["attack_total"], orc["hit"], orc["damage"]["amount"]) == (13, True, 7)
    assert orc["ignored"] == [
        {
            "circumstance": "concealment",
            "why": "concealment applies only to melee or ranged attacks, not area (ruling 17)",
        }
    ]
    assert "ignored" not in kira and (t.hp("orc"), t.hp("kira")) == (23, 23)
    # a circumstance nobody knows is still refused, and nothing is stored
    before = t.position()
    bad = t.attack("vex", BOW, {"name": "orc", "d20": 9, "damage": [1], "circumstances": ["moonlight"]})
    assert [e["code"] for e in bad["userErrors"]] == ["INVALID_INPUT"] and t.position() == before


def test_sw_17_two_power_bonuses_do_not_stack_and_two_shield_bonuses_neither(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Kira": {}, "Orc": {}})

    def bonus(who: str, name: str, key: str, value: int, kind: str) -> None:
        mod: dict[str, Any] = {"value": value, "type": kind}
        if key == "defense_mod":
            mod["defense"] = "ac"
        effect = {"name": name, "components": [{key: mod}]}
        t.ok("applyEffect", characterId=t.ids[who], sourceCharacterId=t.ids["kira"], effect=effect)

    bonus("vex", "bless", "attack_mod", 1, "power")
    bonus("vex", "inspire", "attack_mod", 2, "power")
    # d20 8 + 4 + 2 (inspire; bless's +1 is a power bonus too and does not add) = 14 against AC 15: a miss
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 8, "damage": [6]})["facts"][0]["outcome"]["targets"][0]
    assert (shot["attack_total"], shot["hit"]) == (14, False)
    bless = next(p for p in shot["attack_parts"] if p["source"] == "bless")
    assert (bless["value"], bless["does_not_stack"]) == (0, 1)
    # a declared item bonus is another type: it adds. 8 + 4 + 2 + 1 = 15: a hit for 6
    item = [{"source": "scope", "value": 1, "type": "item"}]
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 8, "damage": [6], "modifiers": item})
    assert shot["facts"][0]["outcome"]["targets"][0]["hit"] is True and t.hp("orc") == 24

    bonus("orc", "shield spell", "defense_mod", 2, "shield")
    bonus("orc", "buckler", "defense_mod", 1, "shield")
    sheet = t.character("orc", "... on StellarWindsCharacter { defenses { ac { current } } }")
    assert sheet["defenses"]["ac"]["current"] == 15 + 2
    # 10 + 4 + 2 + 1 = 17 against AC 15 + 2 (the buckler's shield +1 does not add) = 17: a hit for 6
    # (against 18, were the shield bonuses added, it would miss)
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 10, "damage": [6], "modifiers": item})
    target = shot["facts"][0]["outcome"]["targets"][0]
    assert (target["attack_total"], target["defense_value"], target["hit"]) == (17, 17, True)
    assert t.hp("orc") == 18
    # an unknown bonus type is refused, nothing stored
    before = t.position()
    bad = t.attack(
        "vex", BOW, {"name": "orc", "d20": 10, "damage": [6], "modifiers": [{"value": 1, "type": "luck"}]}
    )
    assert [e["code"] for e in bad["userErrors"]] == ["INVALID_INPUT"] and t.position() == before


def test_an_attack_and_first_aid_use_a_standard_action_and_a_mark_is_its_sources(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Kira": {}, "Orc": {}})
    t.fight({"vex": 18, "kira": 10, "orc": 4})  # 19, 11, 5: Vex's turn has started
    # Vex challenges the orc: a mark without a named marker is its source's (A1.10)
    mark = {
        "name": "challenge",
        "components": [{"condition": "marked"}],
        "duration": {"kind": "until_end_of_turn"},
    }
    t.ok("applyEffect", characterId=t.ids["orc"], sourceCharacterId=t.ids["vex"], effect=mark)
    assert t.character("orc", "effects { components }")["effects"][0]["components"] == [
        {"condition": "marked", "marker": "vex"}
    ]
    # no action named: the attack is Vex's standard action. 12 + 4 = 16 against AC 15: 6 damage, 30 -> 24
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 12, "damage": [6]})
    assert shot["facts"][0]["outcome"]["action"] == "standard" and t.hp("orc") == 24
    before = t.position()
    again = t.attack("vex", BOW, {"name": "orc", "d20": 12, "damage": [6]})
    assert [e["code"] for e in again["userErrors"]] == ["NO_ACTION_LEFT"] and t.position() == before
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # Kira
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # the orc
    # the orc swings at Kira, not at its marker: 12 + 4 - 2 = 14 against AC 15, a miss
    swing = t.attack("orc", BOW, {"name": "kira", "d20": 12, "damage": [6]})["facts"][0]["outcome"][
        "targets"
    ][0]
    assert (swing["attack_total"], swing["hit"]) == (14, False)
    assert {"source": "marked: attack ignores the marker", "value": -2} in swing["attack_parts"]
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # round 2: Vex
    t.ok("dealDamage", characterId=t.ids["orc"], amount=24 + 14 + 1)  # HP 0, wounds -1: dying
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # Kira
    # Kira's Heal check is her standard action: 11 + 6 = 17 against DC 15 (B-SW-10), stabilised
    aid = t.ok(
        "attemptStabilization", characterId=t.ids["orc"], healerId=t.ids["kira"], check=d("1d20+6", 11)
    )
    outcome = aid["facts"][0]["outcome"]
    assert (outcome["success"], outcome["life_after"], outcome["action"]) == (True, "stabilized", "standard")
    late = t.attack("kira", BOW, {"name": "vex", "d20": 12, "damage": [6]})
    assert [e["code"] for e in late["userErrors"]] == ["NO_ACTION_LEFT"]
    # an attack that uses no action of its own says so
    free = t.m(
        "attack",
        attackerId=t.ids["kira"],
        power=BOW,
        targets=[{"characterId": t.ids["vex"], "attackRoll": d("1d20", 2), "damageRoll": d("1d10", 1)}],
        action="none",
    )
    assert free["userErrors"] == [] and free["facts"][0]["payload"]["action"] is None


def test_ruling_16_a_sustained_effect_outlives_the_encounter_and_keeps_its_sustainer_from_resting(
    g: GQL,
) -> None:
    t = Table(g, {"Vex": {}, "Orc": {}})
    t.fight({"vex": 18, "orc": 4})
    stasis = {
        "name": "stasis field",
        "components": [{"condition": "slowed"}],
        "duration": {"kind": "sustained"},
    }
    out = t.ok("applyEffect", characterId=t.ids["orc"], sourceCharacterId=t.ids["vex"], effect=stasis)
    eid = out["facts"][0]["outcome"]["effect_id"]
    ended = t.ok("endEncounter", encounterId=t.encounter)
    assert [e["effect_id"] for e in ended["facts"][0]["outcome"]["sustained_kept"]] == [eid]
    assert "slowed" in t.character("orc")["conditions"]
    before = t.position()
    rest = t.m("takeShortRest", participantIds=[t.ids["vex"]])
    assert [e["code"] for e in rest["userErrors"]] == ["SUSTAINING"] and t.position() == before
    # Vex lets it go; now the rest is allowed
    t.ok("endEffect", effectId=eid, reason="voluntary")
    t.ok("takeShortRest", participantIds=[t.ids["vex"]])
    assert "slowed" not in t.character("orc")["conditions"]


def test_sw_13_a1_10_total_defense_and_prone_are_commands_whose_effects_the_engine_derives(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Orc": {}})
    t.fight({"vex": 18, "orc": 4})  # Vex's turn

    def who(name: str) -> dict[str, Any]:
        return {"characterId": t.ids[name]}

    dropped = t.ok("dropProne", **who("vex"))
    assert dropped["facts"][0]["outcome"]["action"] == "minor" and "prone" in t.character("vex")["conditions"]
    again = t.m("dropProne", **who("vex"))
    assert [e["code"] for e in again["userErrors"]] == ["ALREADY_PRONE"]
    up = t.ok("standUp", **who("vex"))
    assert up["facts"][0]["outcome"]["action"] == "move" and "prone" not in t.character("vex")["conditions"]
    # Vex's shove lands: the orc is knocked prone, no action of its own
    t.ok("knockProne", characterId=t.ids["orc"], sourceCharacterId=t.ids["vex"])
    assert "prone" in t.character("orc")["conditions"]
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # the orc's turn

    defended = t.ok("totalDefense", **who("orc"))
    assert defended["facts"][0]["outcome"]["action"] == "standard"
    defenses = "... on StellarWindsCharacter { defenses { ac { current againstRanged } ref { current } } }"
    sheet = t.character("orc", defenses)["defenses"]
    # AC 15 + 2 total defense = 17; +2 more against a ranged attacker that is not adjacent (prone) = 19
    assert sheet["ac"] == {"current": 17, "againstRanged": 19} and sheet["ref"]["current"] == 15
    t.ok("standUp", **who("orc"))  # its move action
    slowed = {"name": "frost", "components": [{"condition": "slowed"}], "duration": {"kind": "until_removed"}}
    t.ok("applyEffect", characterId=t.ids["orc"], sourceCharacterId=t.ids["vex"], effect=slowed)
    speed = t.character("orc", "... on StellarWindsCharacter { speed { base current limitedBy } }")["speed"]
    assert speed == {"base": 6, "current": 2, "limitedBy": ["slowed"]}
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # round 2, Vex
    # total defense lasts until the start of the orc's next turn: 12 + 4 = 16 against AC 17, a miss
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 12, "damage": [6]})["facts"][0]["outcome"]["targets"][
        0
    ]
    assert (shot["attack_total"], shot["defense_value"], shot["hit"]) == (16, 17, False)


def test_c0_4_the_gms_overrides_are_honoured_by_the_fold_or_refused_with_a_typed_error(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Orc": {}})
    # 12 + 4 = 16 against AC 15: a hit for the d10's 6, 30 -> 24
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 12, "damage": [6]})
    position = shot["facts"][0]["position"]
    assert t.hp("orc") == 24
    t.ok("overrideOutcome", position=position, field="amount", value=10, reason="GM: a called shot")
    assert t.hp("orc") == 20
    before = t.position()
    for field, value, code in (("hp", 1, "NOT_OVERRIDABLE"), ("amount", "lots", "INVALID_INPUT")):
        refused = t.m("overrideOutcome", position=position, field=field, value=value, reason="GM")
        assert [e["code"] for e in refused["userErrors"]] == [code] and t.position() == before
    t.ok("overrideOutcome", position=position, field="hit", value=False, reason="GM: it ducked")
    assert t.hp("orc") == 30  # a miss deals nothing (the amount override applies only to a hit)


def test_the_flags_that_accepted_only_their_default_now_change_the_numbers(g: GQL) -> None:
    t = Table(g, {})
    for flag, value in (("rounding", "up"), ("sw.crit_mode", "wounding_1W"), ("sw.max_wounds", 12)):
        t.ok("setRulesFlag", flag=flag, value=value)
    t.ids = {name.lower(): pc(g, t.cid, t.gm, name) for name in ("Vex", "Orc")}
    # rounding up (B-X-6): a surge is 30 / 4 = 7.5 -> 8
    assert (
        t.character("vex", "... on StellarWindsCharacter { healingSurges { value } }")["healingSurges"][
            "value"
        ]
        == 8
    )
    # a planted explosive (B-SW-20): d20 9 + (Reflex 13 - 10) = 12 against DC 12, saved: half of
    # 3d6 = 6 + 5 + 4 = 15, rounded up: 8. 30 -> 22
    out = t.ok(
        "rollExplosiveSave",
        characterId=t.ids["orc"],
        dc=12,
        roll=d("1d20", 9),
        damageRoll=d("3d6", 6, 5, 4),
        explosive="satchel charge",
    )
    saved = out["facts"][0]["outcome"]
    assert (saved["total"], saved["success"], saved["amount"]) == (12, True, 8) and t.hp("orc") == 22
    # a critical hit read literally (B-SW-5, wounding_1W): only one [W], the 5, as wounding damage
    axe = {
        "name": "axe",
        "kind": "MELEE",
        "defense": "AC",
        "attackBonus": 4,
        "damage": "2[W]+4",
        "weapon": "1d6",
    }
    crit = t.attack("vex", axe, {"name": "orc", "d20": 20, "damage": [5, 3]})["facts"][0]["outcome"][
        "targets"
    ][0]
    assert (crit["crit"], crit["damage"]["amount"], crit["damage"]["wounds_lost"]) == (True, 5, 5)
    # max wounds 12 for everyone now (B-SW-4): the orc's 12 - 5 = 7; its HP stay 22
    wounds = t.character(
        "orc", "hitPoints { current } ... on StellarWindsCharacter { wounds { current max } }"
    )
    assert wounds == {"hitPoints": {"current": 22}, "wounds": {"current": 7, "max": 12}}


def test_a1_10_invisible_gives_combat_advantage_and_total_concealment(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Orc": {}})
    t.ok(
        "applyEffect",
        characterId=t.ids["vex"],
        sourceCharacterId=t.ids["vex"],
        effect={"name": "cloak", "components": [{"condition": "invisible"}]},
    )
    # Vex, unseen: 9 + 4 + 2 (combat advantage) = 15 against AC 15, a hit for 6
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 9, "damage": [6]})["facts"][0]["outcome"]["targets"][0]
    assert (shot["attack_total"], shot["hit"]) == (15, True) and t.hp("orc") == 24
    # the orc shoots at what it cannot see: 15 + 4 - 5 (total concealment) = 14 against AC 15, a miss
    back = t.attack("orc", BOW, {"name": "vex", "d20": 15, "damage": [6]})["facts"][0]["outcome"]["targets"][
        0
    ]
    assert (back["attack_total"], back["hit"]) == (14, False) and t.hp("vex") == 30


def test_sw_49_a_short_rest_carries_each_creatures_surge_spends_all_or_nothing(g: GQL) -> None:
    t = Table(g, {"Vex": {}, "Kira": {}})  # 30 HP: surge value 7 (SW-36)
    for name in ("vex", "kira"):
        t.ok("dealDamage", characterId=t.ids[name], amount=20)
    surges = t.character("kira", "... on StellarWindsCharacter { healingSurges { remaining } }")
    surges = surges["healingSurges"]["remaining"]
    both = [t.ids["vex"], t.ids["kira"]]
    # one spend too many for Kira: the whole rest is refused, nothing is stored
    before = t.position()
    refused = t.m(
        "takeShortRest",
        participantIds=both,
        surgeSpends=[
            {"characterId": t.ids["vex"], "surges": 1},
            {"characterId": t.ids["kira"], "surges": surges + 1},
        ],
    )
    assert [e["code"] for e in refused["userErrors"]] == ["NO_HEALING_SURGE"]
    assert t.position() == before and t.hp("vex") == 10
    # Vex spends two, Kira one: 10 + 7 + 7 = 24 and 10 + 7 = 17, in one table action
    out = t.ok(
        "takeShortRest",
        participantIds=both,
        surgeSpends=[{"characterId": t.ids["vex"], "surges": 2}, {"characterId": t.ids["kira"]}],
    )
    assert [f["type"] for f in out["facts"]] == ["ShortRestTaken"] + ["HealingSurgeSpent"] * 3
    assert (t.hp("vex"), t.hp("kira")) == (24, 17)
    assert t.position() == before + 4


def test_ruling_1_the_new_flags_b_sw_17_and_sw_36_change_the_table_through_graphql(g: GQL) -> None:
    t = Table(g, {"Vex": {"surgesPerDay": 0}})
    for flag, value in (("sw.temp_hp_grant", "add"), ("sw.heal_without_surge", "refuse")):
        t.ok("setRulesFlag", flag=flag, value=value)
    temp = "... on StellarWindsCharacter { hitPoints { temporary } }"
    # B-SW-17 'add': 5 then 3 temporary HP make 8 (the default keeps the higher, 5)
    t.ok("grantTemporaryHitPoints", characterId=t.ids["vex"], amount=5)
    t.ok("grantTemporaryHitPoints", characterId=t.ids["vex"], amount=3)
    assert t.character("vex", temp)["hitPoints"]["temporary"] == 8
    # SW-36 'refuse': a surge heal on a creature without surges is refused, nothing stored
    t.ok("dealDamage", characterId=t.ids["vex"], amount=20)
    before = t.position()
    out = t.m("heal", characterId=t.ids["vex"], surgeMultiplier=1, requiresSurge=True)
    assert [e["code"] for e in out["userErrors"]] == ["NO_HEALING_SURGE"] and t.position() == before
