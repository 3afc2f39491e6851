"""Stellar Winds powers, monsters' action points, ammunition, grenades, autofire, Bluff, escape
and falls through GraphQL (issue 14), as a companion app plays them, on both stores.

Every die face is given; the numbers are worked by hand from RULES.md. The PCs come from
``tests.graphql_helpers.pc``: level 1 (half level 0), 30 HP, AC 15, Fortitude 13, Reflex 13,
Will 12, Dexterity 12 (+1).
"""

from __future__ import annotations

from typing import Any

from tests.graphql_helpers import GQL, gid
from tests.integration.test_sw_table_graphql import BOW, Table, d, g  # noqa: F401 (g: the fixture)

POWERS = [
    {"id": "jab", "name": "Plasma Jab", "frequency": "AT_WILL"},
    {"id": "ray", "name": "Ion Ray", "frequency": "ENCOUNTER"},
    {"id": "nova", "name": "Nova Burst", "frequency": "DAILY"},
]
RAY = {
    "name": "Ion Ray",
    "powerId": "ray",
    "kind": "RANGED",
    "defense": "REF",
    "attackBonus": 4,
    "damage": "1d8",
}
SHEET = (
    "... on StellarWindsCharacter { powers { powerId frequency expended } ammunition { weaponId rounds } }"
)


def codes(out: dict[str, Any]) -> list[str]:
    return [e["code"] for e in out["userErrors"]]


def expended(t: Table, who: str) -> dict[str, bool]:
    return {p["powerId"]: p["expended"] for p in t.character(who, SHEET)["powers"]}


def test_c1_2_sw_49_powers_are_expended_refused_and_regained_by_the_right_rest(g: GQL) -> None:  # noqa: F811
    t = Table(g, {"Kira": {"powers": POWERS}, "Orc": {}})
    assert expended(t, "kira") == {"jab": False, "ray": False, "nova": False}
    t.fight({"kira": 18, "orc": 4})  # 19 and 5: Kira's turn
    # the Ion Ray: d20 10 + 4 = 14 against Reflex 13, a hit for the d8's 5: 30 -> 25
    shot = t.attack("kira", RAY, {"name": "orc", "d20": 10, "damage": [5]})
    assert shot["userErrors"] == [], shot
    assert shot["facts"][0]["outcome"]["power_used"] == {"power_id": "ray", "expended": True}
    assert t.hp("orc") == 25 and expended(t, "kira")["ray"] is True
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # the orc
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # round 2: Kira
    before = t.position()
    again = t.attack("kira", RAY, {"name": "orc", "d20": 10, "damage": [5]})
    assert codes(again) == ["POWER_EXPENDED"] and t.position() == before
    # an at-will power is never expended; it is Kira's standard action
    jab = t.ok("usePower", characterId=t.ids["kira"], powerId="jab")["facts"][0]["outcome"]
    assert (jab["expended"], jab["action"]) == (False, "standard")
    t.ok("endEncounter", encounterId=t.encounter)
    rest = t.ok("takeShortRest", participantIds=[t.ids["kira"]])
    assert rest["facts"][0]["outcome"]["powers_regained"] == {"kira": ["ray"]}
    # the daily power: a short rest does not bring it back, an extended rest does
    t.ok("usePower", characterId=t.ids["kira"], powerId="nova")
    t.ok("takeShortRest", participantIds=[t.ids["kira"]])
    assert expended(t, "kira") == {"jab": False, "ray": False, "nova": True}
    refused = t.m("usePower", characterId=t.ids["kira"], powerId="nova")
    assert codes(refused) == ["POWER_EXPENDED"]
    t.ok("takeExtendedRest", participantIds=[t.ids["kira"]])
    assert expended(t, "kira") == {"jab": False, "ray": False, "nova": False}


def test_sw_14_sw_15_a_monster_holds_and_spends_the_action_points_of_its_sheet(g: GQL) -> None:  # noqa: F811
    t = Table(g, {"Brute": {"kind": "MONSTER", "actionPoints": 2}, "Vex": {}})
    ap = "... on StellarWindsCharacter { actionPoints actionPointsPerEncounter }"
    assert t.character("brute", ap) == {"actionPoints": 2, "actionPointsPerEncounter": 1}
    t.fight({"brute": 18, "vex": 4})  # the brute's turn
    t.ok("spendActionPoint", characterId=t.ids["brute"])
    before = t.position()
    second = t.m("spendActionPoint", characterId=t.ids["brute"])  # one per encounter, per its sheet
    assert codes(second) == ["ACTION_POINT_LOCKED"] and t.position() == before
    t.ok("endEncounter", encounterId=t.encounter)
    # the next encounter: its count starts afresh, and it spends its second point
    t.ok("startEncounter", participantIds=[t.ids["brute"], t.ids["vex"]], encounterId="again")
    again = gid("Encounter", t.cid, "again")
    for name, face in (("brute", 18), ("vex", 4)):
        t.ok("rollInitiative", encounterId=again, characterId=t.ids[name], roll=d("1d20", face))
    t.ok("startTurn", encounterId=again)
    t.ok("spendActionPoint", characterId=t.ids["brute"])
    assert t.character("brute", ap)["actionPoints"] == 0
    # a monster without action points on its sheet has none (SW-14)
    none = Table(g, {"Orc": {"kind": "MONSTER"}})
    assert codes(none.m("spendActionPoint", characterId=none.ids["orc"])) == ["NO_ACTION_POINT"]


def test_b_sw_21_autofire_b_sw_20_grenades_and_ammunition(g: GQL) -> None:  # noqa: F811
    ammo = [{"weaponId": "rifle", "rounds": 12}, {"weaponId": "grenade", "rounds": 1}]
    t = Table(g, {"Vex": {"ammo": ammo}, "Kira": {}, "Orc": {}})
    # autofire: d20 + 0 (half level 1) + 1 (Dex 12) - 4 (no Firearms Expert) against Reflex 13:
    # the orc's 15 makes 12, a miss; Kira's 16 makes 13, a hit for 1[W] = the d10's 6: 30 -> 24
    out = t.ok(
        "autofire",
        attackerId=t.ids["vex"],
        weaponId="rifle",
        weapon="1d10",
        targets=[
            {"characterId": t.ids["orc"], "attackRoll": d("1d20", 15)},
            {"characterId": t.ids["kira"], "attackRoll": d("1d20", 16)},
        ],
        damageRoll=d("1[W]", 6),
    )["facts"][0]["outcome"]
    orc, kira = out["targets"]
    assert (orc["attack_total"], orc["hit"], kira["attack_total"], kira["hit"]) == (12, False, 13, True)
    assert kira["damage"]["amount"] == 6 and (t.hp("kira"), t.hp("orc")) == (24, 30)
    assert out["autofire"]["rounds_left"] == 2  # 12 - 10
    before = t.position()
    dry = t.m(
        "autofire",
        attackerId=t.ids["vex"],
        weaponId="rifle",
        weapon="1d10",
        targets=[{"characterId": t.ids["orc"], "attackRoll": d("1d20", 15)}],
        damageRoll=d("1[W]", 6),
    )
    assert codes(dry) == ["NO_AMMUNITION"] and t.position() == before
    t.ok(
        "changeEquipment",
        characterId=t.ids["vex"],
        ammo=[{"weaponId": "rifle", "rounds": 20}],
        reason="reload",
    )
    t.ok("expendAmmunition", characterId=t.ids["vex"], weaponId="rifle", rounds=3)
    assert t.character("vex", SHEET)["ammunition"] == [
        {"weaponId": "grenade", "rounds": 1},
        {"weaponId": "rifle", "rounds": 17},
    ]
    # a single shot that names its weapon spends a round: d20 2 + 4 = 6, a miss; 17 -> 16
    rifle = {**BOW, "name": "rifle", "weaponId": "rifle"}
    shot = t.attack("vex", rifle, {"name": "orc", "d20": 2, "damage": [1]})["facts"][0]["outcome"]
    assert shot["ammunition"] == {"weapon_id": "rifle", "rounds": 1, "rounds_left": 16}
    # a grenade 3 increments away: the d4's 2 sends it 2 squares upper right, from (5, 5) to (7, 3);
    # the burst: d20 12 + 0 + 1 = 13 against the orc's Reflex 13, a hit for 2d6 = 3 + 4 = 7: 30 -> 23
    boom = t.ok(
        "throwGrenade",
        characterId=t.ids["vex"],
        square=[5, 5],
        increments=3,
        deviationRoll=d("1d4", 2),
        damage="2d6",
        damageRoll=d("2d6", 3, 4),
        targets=[{"characterId": t.ids["orc"], "attackRoll": d("1d20", 12)}],
    )
    thrown, burst = boom["facts"]
    assert (thrown["type"], burst["type"]) == ("GrenadeThrown", "AttackMade")
    assert thrown["outcome"]["lands_on"] == [7, 3] and thrown["outcome"]["direction"] == "upper right"
    hit = burst["outcome"]["targets"][0]
    assert (hit["attack_total"], hit["defense"], hit["hit"]) == (13, "ref", True) and t.hp("orc") == 23
    before = t.position()
    empty = t.m("throwGrenade", characterId=t.ids["vex"], square=[1, 1], damage="2d6")
    assert codes(empty) == ["NO_AMMUNITION"] and t.position() == before
    # in an encounter, a grenade that catches no one still takes the thrower's standard action
    t.ok("changeEquipment", characterId=t.ids["vex"], ammo=[{"weaponId": "grenade", "rounds": 2}])
    t.fight({"vex": 18, "orc": 4})
    miss = t.ok("throwGrenade", characterId=t.ids["vex"], square=[9, 9], damage="2d6")["facts"]
    assert [f["type"] for f in miss] == ["GrenadeThrown"] and miss[0]["outcome"]["action"] == "standard"
    late = t.m("throwGrenade", characterId=t.ids["vex"], square=[9, 9], damage="2d6")
    assert codes(late) == ["NO_ACTION_LEFT"]


def test_c1_2_bluff_sw_13_escape_sw_31_falls(g: GQL) -> None:  # noqa: F811
    t = Table(g, {"Vex": {}, "Orc": {}})
    t.fight({"vex": 18, "orc": 4})  # Vex's turn
    # Bluff 1d20+4 with an 8 = 12 against the orc's Insight 12: combat advantage against it
    bluff = t.ok(
        "bluffForCombatAdvantage",
        characterId=t.ids["vex"],
        targetId=t.ids["orc"],
        vsInsight=12,
        roll=d("1d20+4", 8),
    )["facts"][0]["outcome"]
    assert (bluff["total"], bluff["success"], bluff["action"]) == (12, True, "standard")
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # the orc grabs Vex
    grab = {"name": "grab", "components": [{"condition": "grabbed"}], "duration": {"kind": "until_removed"}}
    out = t.ok("applyEffect", characterId=t.ids["vex"], sourceCharacterId=t.ids["orc"], effect=grab)
    grab_id = out["facts"][0]["outcome"]["effect_id"]
    t.ok("endTurn", encounterId=t.encounter, startNext=True)  # round 2: Vex
    # the bow: d20 9 + 4 + 2 (combat advantage from the bluff) = 15 against AC 15, a hit for 6: 30 -> 24
    shot = t.attack("vex", BOW, {"name": "orc", "d20": 9, "damage": [6]})["facts"][0]["outcome"]
    assert shot["bluff_combat_advantage"] == ["orc"] and shot["targets"][0]["attack_total"] == 15
    assert t.hp("orc") == 24
    # escape: Athletics 1d20+2 with an 11 = 13 against the orc's Fortitude 13: free, may shift 1
    free = t.ok(
        "escapeGrab", characterId=t.ids["vex"], effectId=grab_id, skill="ATHLETICS", roll=d("1d20+2", 11)
    )["facts"][0]["outcome"]
    assert (free["success"], free["may_shift"], free["action"]) == (True, 1, "move")
    assert "grabbed" not in t.character("vex")["conditions"]
    # one bluff for combat advantage per encounter
    before = t.position()
    again = t.m(
        "bluffForCombatAdvantage",
        characterId=t.ids["vex"],
        targetId=t.ids["orc"],
        vsInsight=1,
        roll=d("1d20", 20),
        action="none",
    )
    assert codes(again) == ["BLUFF_USED"] and t.position() == before
    # a fall of 25 feet: 2d10 = 7 + 8 = 15, 30 -> 15, prone
    fell = t.ok("fall", characterId=t.ids["vex"], feet=25, roll=d("2d10", 7, 8))["facts"][0]["outcome"]
    assert fell["amount"] == 15 and t.hp("vex") == 15 and "prone" in t.character("vex")["conditions"]
    # 10 feet with a trained jump: 1d10 = 4, Acrobatics 1d20+5 with a 5 = 10, half 5: no damage
    soft = t.ok("fall", characterId=t.ids["orc"], feet=10, roll=d("1d10", 4), acrobaticsRoll=d("1d20+5", 5))[
        "facts"
    ][0]["outcome"]
    assert soft["amount"] == 0 and "prone" not in t.character("orc")["conditions"] and t.hp("orc") == 24
