"""Orcus table sequences through GraphQL, on SQLite and PostgreSQL (RULES.md A4, B-OR, C4; rulings
20-24; the A4.9 placeholders at their defaults).

A real FastAPI app on the ``store`` fixture, spoken to over HTTP (``TestClient``) with the Orcus
plug-in's typed mutations and the core encounter mutations (``startTurn``, ``endTurn`` with the
rolls a turn owes). Every die is given and every number is worked by hand from RULES.md in the
comments.

The cast (A4.9: bloodied at floor(max HP / 2), a surge worth floor(max HP / 4), a dying hero dead
at minus its bloodied value; monsters die at 0):

* Mira: hero, 2,250 XP (level 3, A4.2), 30 HP (bloodied 15, surge 7, dies at -15), 6 surges, 2
  action points, AC 17 Fort 14 Ref 15 Will 13; Strike (at-will), Radiant Lance (encounter);
* Tam: hero, 2,250 XP, 24 HP (bloodied 12, surge 6, dies at -12), 6 surges, the same defenses;
  Warding Zone (encounter);
* the ogre: elite, level 4, 52 HP, 1 action point, AC 16 Fort 17 Ref 13 Will 12, resist 5 fire;
  Fire Breath (recharge 5-6), Club (at-will);
* the goblin: monster, level 1, 10 HP, AC 15 Fort 12 Ref 14 Will 11.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.settings import Settings
from tests.graphql_helpers import GQL, gid

ORCUS_FIELDS = """
  ... on OrcusCharacter {
    rank xp xpLevel levelPinned bloodied bloodiedValue diesAt deathSaveFailures rallied
    encountersSinceLongRest
    healingSurges { remaining perDay value }
    actionPoints { current statBlock spentThisEncounter lastSpent { encounterId round } }
    powers { powerId name frequency recharge expended usedInEncounter usedOnTurn }
    defenses { defense base current modifiers { source value } }
    resist { type value }
    persistentDamage { type amount effectId }
    orcusEffects {
      effectId name source conditions duration anchor saveEnds maintainAction maintainedOnTurn
      firstFailedSave firstFailedSaveApplied pending
    }
  }
"""
CHARACTER = f"creatureId name level lifeState hitPoints {{ current max temporary }} conditions {ORCUS_FIELDS}"
# what a mutation answers for each character it touched (a full ORCUS_FIELDS on 30 estimated
# characters would cost more than the query-cost limit: docs/api.md, Query cost)
BRIEF = (
    "creatureId name level lifeState hitPoints { current max temporary } conditions "
    "... on OrcusCharacter { rank xp xpLevel bloodied rallied healingSurges { remaining value } "
    "actionPoints { current spentThisEncounter } }"
)
HERO_DEFENSES = {"ac": 17, "fort": 14, "ref": 15, "will": 13}

STRIKE = {
    "name": "Strike",
    "powerId": "strike",
    "kind": "MELEE",
    "defense": "AC",
    "attackBonus": 5,
    "damage": "1d8+3",
}
LANCE = {
    "name": "Radiant Lance",
    "powerId": "lance",
    "kind": "RANGED",
    "defense": "REF",
    "attackBonus": 5,
    "damage": "1d10+3",
    "damageTypes": ["radiant"],
}
BREATH = {
    "name": "Fire Breath",
    "powerId": "breath",
    "kind": "FAR",
    "defense": "REF",
    "attackBonus": 6,
    "damage": "2d6+4",
    "damageTypes": ["fire"],
    "effects": [
        {
            "name": "burning",
            "on": "HIT",
            "components": [{"persistent": {"type": "fire", "amount": 5}}],
            "duration": {"kind": "SAVE_ENDS"},
            "firstFailedSave": {"components": [{"condition": "dazed"}], "name": "burning, dazed"},
        }
    ],
}
CLUB = {
    "name": "Club",
    "powerId": "club",
    "kind": "MELEE",
    "defense": "AC",
    "attackBonus": 7,
    "damage": "2d6+4",
}
SPEAR = {"name": "Spear", "kind": "MELEE", "defense": "AC", "attackBonus": 4, "damage": "1d6+2"}


def d20(face: int, plus: int = 0) -> dict[str, Any]:
    return {"expression": f"1d20{plus:+d}" if plus else "1d20", "faces": [face]}


def dice(expression: str, *faces: int) -> dict[str, Any]:
    return {"expression": expression, "faces": list(faces)}


class Table:
    """One Orcus campaign over GraphQL, played by its GM."""

    def __init__(self, g: GQL, ruleset: str = "orcus") -> None:
        self.g = g
        out = g.ok(
            "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { campaignId } "
            "gmToken userErrors { code } } }",
            {"i": {"name": "The den", "ruleset": ruleset}},
        )["createCampaign"]
        assert out["userErrors"] == [], out
        self.cid, self.gm = out["campaign"]["campaignId"], out["gmToken"]
        self.campaign = gid("Campaign", self.cid, self.cid)
        self.enc = gid("Encounter", self.cid, "den")

    def ch(self, local: str) -> str:
        return gid("Character", self.cid, local)

    def do(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        out = self.try_(mutation, **inp)
        assert out["userErrors"] == [], out
        return out

    def try_(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        select = f"characters {{ {BRIEF} }}"
        if mutation in ("startTurn", "endTurn"):
            select += " pendingRolls { type characterId effectId dice }"
        out: dict[str, Any] = self.g.mutate(mutation, {"campaignId": self.campaign, **inp}, self.gm, select)
        return out

    def refused(self, mutation: str, /, **inp: Any) -> list[tuple[str, str | None]]:
        """The refusal's codes and fields; nothing was stored."""
        before = self.position()
        out = self.try_(mutation, **inp)
        assert self.position() == before
        return [(e["code"], e["field"]) for e in out["userErrors"]]

    def creature(self, name: str, **sheet: Any) -> None:
        self.do("orcusRegisterCreature", name=name, **sheet)

    def who(self, local: str, position: int | None = None, view: str = "CORRECTED") -> dict[str, Any]:
        if position is None:
            q = f"query($id: ID!) {{ character(id: $id) {{ {CHARACTER} }} }}"
            return dict(self.g.ok(q, {"id": self.ch(local)}, self.gm)["character"])
        q = (
            f"query($id: ID!, $p: Int!, $v: TimeAxis!) {{ character(id: $id) {{ "
            f"asOf(position: $p, view: $v) {{ {CHARACTER} }} }} }}"
        )
        out = self.g.ok(q, {"id": self.ch(local), "p": position, "v": view}, self.gm)
        return dict(out["character"]["asOf"])

    def hp(self, local: str) -> int:
        return int(self.who(local)["hitPoints"]["current"])

    def position(self) -> int:
        q = "query($id: ID!) { campaign(id: $id) { position } }"
        return int(self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["position"])

    def orphans(self) -> dict[int, str]:
        q = "query($id: ID!) { campaign(id: $id) { orphans { position reason } } }"
        found = self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["orphans"]
        return {o["position"]: o["reason"] for o in found}

    def log(self) -> dict[int, str]:
        q = "query($id: ID!) { campaign(id: $id) { log(last: 100) { nodes { position text } } } }"
        nodes = self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["log"]["nodes"]
        return {n["position"]: n["text"] for n in nodes}

    # --- shortcuts ------------------------------------------------------------
    def attack(
        self, attacker: str, power: dict[str, Any], targets: list[dict[str, Any]], *faces: int, **more: Any
    ) -> dict[str, Any]:
        """``targets``: ``{"target", "face"?, ...OrcusAttackTargetInput}``; ``faces``: the damage dice."""
        ts = []
        for t in targets:
            t = dict(t)
            entry = {"targetId": self.ch(t.pop("target")), **t}
            if "face" in t:
                entry["roll"] = d20(entry.pop("face"))
            ts.append(entry)
        if faces:
            more["damage"] = dice(power["damage"], *faces)
        out = self.do("orcusAttack", attackerId=self.ch(attacker), power=power, targets=ts, **more)
        return dict(out["facts"][0])

    def turn(self) -> dict[str, Any]:
        return dict(self.do("startTurn", encounterId=self.enc)["facts"][0]["outcome"])

    def end(self, *rolls: dict[str, Any]) -> dict[str, Any]:
        return self.do("endTurn", encounterId=self.enc, rolls=list(rolls))


def save(effect_id: str, face: int, who: str | None = None) -> dict[str, Any]:
    return {"type": "SavingThrowRolled", "effectId": effect_id, "roll": d20(face)}


@pytest.fixture
def client(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store)) as test_client:
        yield test_client


@pytest.fixture
def t(client: TestClient) -> Table:
    table = Table(GQL(client))
    table.creature(
        "Mira",
        kind="HERO",
        xp=2250,
        maxHp=30,
        surgesPerDay=6,
        actionPoints=2,
        defenses=HERO_DEFENSES,
        powers=[
            {"id": "strike", "name": "Strike", "frequency": "AT_WILL"},
            {"id": "lance", "name": "Radiant Lance", "frequency": "ENCOUNTER"},
        ],
    )
    table.creature(
        "Tam",
        kind="HERO",
        xp=2250,
        maxHp=24,
        surgesPerDay=6,
        defenses=HERO_DEFENSES,
        powers=[{"id": "ward", "name": "Warding Zone", "frequency": "ENCOUNTER"}],
    )
    table.creature(
        "Ogre",
        kind="ELITE",
        level=4,
        maxHp=52,
        actionPoints=1,
        defenses={"ac": 16, "fort": 17, "ref": 13, "will": 12},
        resist=[{"type": "fire", "value": 5}],
        powers=[
            {"id": "breath", "name": "Fire Breath", "frequency": "RECHARGE", "recharge": [5, 6]},
            {"id": "club", "name": "Club", "frequency": "AT_WILL"},
        ],
    )
    table.creature(
        "Goblin", kind="MONSTER", level=1, maxHp=10, defenses={"ac": 15, "fort": 12, "ref": 14, "will": 11}
    )
    return table


def play_the_den(t: Table) -> dict[str, int]:
    """The encounter (surprise round, two rounds and a bit); returns the positions a correction needs."""
    at: dict[str, int] = {}
    t.do(
        "startEncounter",
        encounterId="den",
        name="The ogre's den",
        participantIds=[t.ch(c) for c in ("mira", "tam", "ogre", "goblin")],
    )
    t.do("determineSurprise", encounterId=t.enc, surprisedIds=[t.ch("ogre")])
    # OR-5 / B-OR-2: d20 + the modifier the table gives: Mira 15 + 4 = 19, the ogre 17 + 1 = 18,
    # Tam 10 + 2 = 12, the goblin 8 + 3 = 11
    for who, face, plus in (("mira", 15, 4), ("ogre", 17, 1), ("tam", 10, 2), ("goblin", 8, 3)):
        t.do("rollInitiative", encounterId=t.enc, characterId=t.ch(who), roll=d20(face, plus))

    # ---- the surprise round (OR-4): the ogre is surprised; one action each, no action point
    assert t.turn()["turn_of"] == "mira"
    assert t.refused("orcusSpendActionPoint", characterId=t.ch("mira"), extra="STANDARD") == [
        ("SURPRISE_ROUND", None)
    ]
    # Strike: 12 + 5 = 17 vs AC 15, a hit; 1d8 (5) + 3 = 8: the goblin 10 -> 2. A "long range"
    # declared for a melee attack is ignored and the outcome says why (A4.6, ruling 17).
    hit = t.attack(
        "mira",
        STRIKE,
        [{"target": "goblin", "face": 12, "circumstances": [{"circumstance": "LONG_RANGE"}]}],
        5,
    )["outcome"]["targets"][0]
    assert (hit["attack_total"], hit["hit"], hit["damage"]["hp_after"]) == (17, True, 2)
    assert hit["ignored"][0]["circumstance"] == "long_range"
    assert t.refused("orcusTakeAction", characterId=t.ch("mira"), action="MOVE") == [
        ("SURPRISE_ROUND_ONE_ACTION", "action")
    ]
    t.do("orcusTakeAction", characterId=t.ch("mira"), action="FREE", name="shouts a warning")  # B-OR-6
    t.end()
    started = t.turn()  # the surprised ogre takes no turn (OR-4)
    assert started["turn_of"] == "tam" and started["turns"][0]["creature"] == "ogre"
    t.end()
    t.turn()  # the goblin: 14 + 4 = 18 vs AC 17; 1d6 (4) + 2 = 6: Tam 24 -> 18
    spear = t.attack("goblin", SPEAR, [{"target": "tam", "face": 14}], 4)["outcome"]["targets"][0]
    assert spear["damage"]["hp_after"] == 18
    t.end()

    # ---- round 1
    assert t.turn()["round_now"] == 1
    ap = t.do("orcusSpendActionPoint", characterId=t.ch("mira"), extra="STANDARD")["characters"][0]
    assert ap["actionPoints"]["current"] == 1 and ap["actionPoints"]["spentThisEncounter"] is True
    assert t.refused("orcusSpendActionPoint", characterId=t.ch("mira"), extra="MOVE") == [
        ("ACTION_POINT_SPENT_THIS_ENCOUNTER", None)  # OR-7 / B-OR-3: once per encounter
    ]
    # Radiant Lance: 8 + 5 = 13 vs Reflex 14: a miss; the encounter power is expended (OR-9)
    lance = t.attack("mira", LANCE, [{"target": "goblin", "face": 8}], 9)["outcome"]
    assert lance["targets"][0]["hit"] is False and lance["power_expended"] is True
    assert t.refused(
        "orcusAttack",
        attackerId=t.ch("mira"),
        power=LANCE,
        targets=[{"targetId": t.ch("goblin"), "roll": d20(15)}],
    ) == [("POWER_EXPENDED", "powerId")]
    # Strike (the action point's standard): 11 + 5 = 16 vs AC 15; 1 + 3 = 4: the goblin 2 -> -2, dead
    kill = t.attack("mira", STRIKE, [{"target": "goblin", "face": 11}], 1)["outcome"]["targets"][0]
    assert kill["damage"]["life_after"] == "dead"
    t.do("orcusTakeAction", characterId=t.ch("mira"), action="MOVE", name="steps back")
    t.do("orcusTakeAction", characterId=t.ch("mira"), action="SWIFT", name="draws a dagger")
    # OR-6: one standard, one move, one swift, and the action point's standard: all used
    assert t.refused("orcusTakeAction", characterId=t.ch("mira"), action="SWIFT") == [
        ("NO_ACTION_LEFT", "action")
    ]
    t.end()

    t.turn()  # the ogre
    # Fire Breath, damage rolled once (OR-13): 2d6 (2, 5) + 4 = 11. Mira: a natural 20 is a critical
    # hit: the maximum 2 x 6 + 4 = 16 plus 1d6 (3) bonus rolled for her = 19 (B-OR-5): 30 -> 11.
    # Tam: 10 + 6 = 16 vs Reflex 15: the rolled 11: 18 -> 7. Both burn (persistent 5 fire, save ends).
    breath = t.attack(
        "ogre",
        BREATH,
        [{"target": "mira", "face": 20, "critBonus": dice("1d6", 3)}, {"target": "tam", "face": 10}],
        2,
        5,
    )
    at["breath"] = breath["position"]
    mira, tam = breath["outcome"]["targets"]
    assert (
        mira["crit"],
        mira["damage"]["maximum"],
        mira["damage"]["amount"],
        mira["damage"]["hp_after"],
    ) == (
        True,
        16,
        19,
        11,
    )
    assert (tam["crit"], tam["damage"]["amount"], tam["damage"]["hp_after"]) == (False, 11, 7)
    assert t.refused("orcusRollRecharge", characterId=t.ch("ogre"), powerId="club", roll=dice("1d6", 6)) == [
        ("WRONG_FREQUENCY", "powerId")  # an at-will power has no "Recharge X-Y" (OR-9)
    ]
    assert t.refused(
        "orcusRollRecharge", characterId=t.ch("ogre"), powerId="breath", roll=dice("1d6", 6)
    ) == [
        ("NOT_YET", "powerId")  # B-OR-17: from the start of its next turn
    ]
    t.end()

    tam_turn = t.turn()  # Tam: persistent fire 5 at the start of the turn (OR-6): 7 -> 2
    assert tam_turn["turns"][-1]["persistent_damage"][0]["hp_after"] == 2
    tam_now = t.who("tam")
    burn = tam_now["orcusEffects"][0]
    assert (burn["name"], burn["saveEnds"], burn["firstFailedSave"]["components"]) == (
        "burning",
        True,
        [{"condition": "dazed"}],
    )
    assert tam_now["persistentDamage"] == [{"type": "fire", "amount": 5, "effectId": burn["effectId"]}]
    # The Warding Zone: -2 to the ogre's attacks, maintained with a swift action, on the turn it is
    # created too (B-OR-8, ruling 24).
    t.do("orcusUsePower", characterId=t.ch("tam"), powerId="ward", action="STANDARD")
    zone = t.do(
        "orcusApplyEffect",
        characterId=t.ch("ogre"),
        sourceId=t.ch("tam"),
        effect={
            "name": "Warding Zone",
            "components": [{"attackMod": -2}],
            "duration": {"kind": "MAINTAIN", "action": "SWIFT"},
        },
    )["facts"][0]["outcome"]["effect_id"]
    t.do("orcusMaintainEffect", effectId=zone, action="SWIFT")
    assert t.refused("orcusMaintainEffect", effectId=zone, action="SWIFT") == [
        ("ALREADY_MAINTAINED", "effectId")
    ]
    # The turn owes the save (OR-19): without its dice the end is refused and lists it.
    waiting = t.try_("endTurn", encounterId=t.enc)
    assert [e["code"] for e in waiting["userErrors"]] == ["ROLLS_PENDING"]
    assert waiting["pendingRolls"] == [
        {"type": "SavingThrowRolled", "characterId": "tam", "effectId": burn["effectId"], "dice": "1d20"}
    ]
    # 8 < 10: fails, and the first failure applies the rider: Tam is dazed too (B-OR-12), same effect
    ended = t.end(save(burn["effectId"], 8))
    at["tam_save_1"] = ended["facts"][0]["position"]
    tam_now = t.who("tam")
    assert "dazed" in tam_now["conditions"]
    burn = tam_now["orcusEffects"][0]
    assert (burn["name"], burn["firstFailedSaveApplied"], burn["firstFailedSave"]) == (
        "burning, dazed",
        True,
        None,
    )

    # ---- round 2 (the dead goblin takes no turn, ruling 8)
    started = t.turn()
    assert (started["round_now"], started["turn_of"]) == (2, "mira")
    assert started["turns"][0]["skipped"].startswith("dead")
    assert t.hp("mira") == 6  # persistent fire 5: 11 -> 6
    rally = t.do("orcusRally", characterId=t.ch("mira"))["characters"][0]  # A4.9: a surge, + 7
    assert (rally["hitPoints"]["current"], rally["healingSurges"]["remaining"], rally["rallied"]) == (
        13,
        5,
        True,
    )
    at["rally"] = t.position()
    # a second Rally has no standard action left this turn (OR-6; OR-9 allows one per encounter anyway)
    assert t.refused("orcusRally", characterId=t.ch("mira")) == [("NO_ACTION_LEFT", "action")]
    mira_burn = t.who("mira")["orcusEffects"][0]["effectId"]
    # 12: the fire ends; its rider never applies (B-OR-12)
    at["mira_save"] = t.end(save(mira_burn, 12))["facts"][0]["position"]
    assert t.who("mira")["orcusEffects"] == []

    t.turn()  # the ogre owes its recharge roll (B-OR-17), and has -2 from Tam's zone
    waiting = t.try_("endTurn", encounterId=t.enc)
    assert [(r["type"], r["dice"]) for r in waiting["pendingRolls"]] == [("RechargeRolled", "1d6")]
    recharge = t.do("orcusRollRecharge", characterId=t.ch("ogre"), powerId="breath", roll=dice("1d6", 4))
    at["recharge"] = recharge["facts"][0]["position"]
    assert recharge["facts"][0]["outcome"]["recharged"] is False  # 4 is not 5 or 6
    # Club: 9 + 7 - 2 (the zone) = 14 vs AC 17: a miss
    club = t.attack("ogre", CLUB, [{"target": "mira", "face": 9}], 3, 3)["outcome"]["targets"][0]
    assert (club["attack_total"], club["hit"]) == (14, False)
    t.end()

    t.turn()  # Tam: persistent fire 5: 2 -> -3, dying (A4.9); dead at -12
    tam_now = t.who("tam")
    assert (tam_now["hitPoints"]["current"], tam_now["lifeState"], tam_now["diesAt"]) == (-3, "DYING", -12)
    # 11: the fire ends; the death save 6 < 10: a failure. Tam did not maintain the zone: at the
    # end of the turn it lapses (OR-18).
    ended = t.end(save(burn["effectId"], 11), {"type": "DeathSavingThrowRolled", "roll": d20(6)})
    at["tam_save_2"], at["death_save"] = (f["position"] for f in ended["facts"][:2])
    lapsed = ended["facts"][-1]["outcome"]["effects_ended"][0]
    assert (lapsed["effect_id"], lapsed["why"]) == (zone, "not maintained this turn (OR-18)")
    at["end"] = t.do("endEncounter", encounterId=t.enc, outcome="the ogre flees")["facts"][0]["position"]
    return at


def test_the_den_criticals_burning_riders_maintain_recharge_and_death_saves(t: Table) -> None:
    """OR-4..OR-7, OR-9..OR-13, OR-17..OR-19, B-OR-3..B-OR-6, B-OR-8, B-OR-12, B-OR-13, B-OR-17,
    ruling 20 (persistent damage at the start of the turn), ruling 24 (maintain), A4.9 dying."""
    at = play_the_den(t)
    mira, tam, ogre = t.who("mira"), t.who("tam"), t.who("ogre")
    assert (mira["hitPoints"]["current"], mira["healingSurges"]["remaining"]) == (13, 5)
    assert mira["actionPoints"] == {
        "current": 1,
        "statBlock": 2,
        "spentThisEncounter": False,  # the encounter is over
        "lastSpent": {"encounterId": "den", "round": 1},
    }
    assert {p["powerId"]: p["expended"] for p in mira["powers"]} == {"lance": True, "strike": False}
    assert mira["encountersSinceLongRest"] == 1
    assert (tam["hitPoints"]["current"], tam["lifeState"], tam["deathSaveFailures"]) == (-3, "DYING", 1)
    assert tam["orcusEffects"] == [] and ogre["orcusEffects"] == []
    breath = next(p for p in ogre["powers"] if p["powerId"] == "breath")
    assert (breath["expended"], breath["recharge"], breath["usedInEncounter"]) == (True, [5, 6], "den")
    assert ogre["resist"] == [{"type": "fire", "value": 5}]
    assert {d["defense"]: d["current"] for d in ogre["defenses"]} == {
        "AC": 16,
        "FORT": 17,
        "REF": 13,
        "WILL": 12,
    }
    assert t.orphans() == {}
    log = t.log()
    assert "Ogre critically hits Mira with Fire Breath" in log[at["breath"]]


def test_revoking_the_breath_orphans_the_recharge_roll_the_saves_and_the_death_save(t: Table) -> None:
    """C0 corrections on Orcus facts: without the breath the power was never expended (the recharge
    roll no longer applies, ruling 24), nobody burned (the saves have no effect to save against) and
    Tam never fell (the death save: not dying). As-of in both views."""
    at = play_the_den(t)
    # what-if first: it previews the same orphans and changes and stores nothing
    before = t.position()
    q = (
        "query($id: ID!, $p: Int!) { campaign(id: $id) { whatIf(corrections: [{revoke: {position: $p, "
        'reason: "what if"}}]) { newlyOrphaned changes { creatureId } } } }'
    )
    preview = t.g.ok(q, {"id": t.campaign, "p": at["breath"]}, t.gm)["campaign"]["whatIf"]
    assert {at["recharge"], at["death_save"], at["tam_save_1"]} <= set(preview["newlyOrphaned"])
    assert {"mira", "tam", "ogre"} <= {c["creatureId"] for c in preview["changes"]}
    assert t.position() == before
    t.do("revokeFact", position=at["breath"], reason="the ogre was still surprised")
    orphans = t.orphans()
    assert "not expended" in orphans[at["recharge"]]
    for key in ("tam_save_1", "tam_save_2", "mira_save"):
        assert at[key] in orphans, key
    assert "not dying" in orphans[at["death_save"]]
    assert at["rally"] not in orphans  # a legal Rally still (it healed nothing: Mira was at 30)
    mira, tam = t.who("mira"), t.who("tam")
    assert (mira["hitPoints"]["current"], mira["healingSurges"]["remaining"]) == (30, 5)
    assert (tam["hitPoints"]["current"], tam["lifeState"], tam["deathSaveFailures"]) == (18, "ACTIVE", 0)
    # As of the death save: the table believed Tam dying at -3 (recorded); now we know better.
    then = t.who("tam", at["death_save"], "RECORDED")
    now = t.who("tam", at["death_save"], "CORRECTED")
    assert (then["lifeState"], then["hitPoints"]["current"], then["deathSaveFailures"]) == ("DYING", -3, 1)
    assert (now["lifeState"], now["hitPoints"]["current"], now["deathSaveFailures"]) == ("ACTIVE", 18, 0)
    # Restoring the breath brings everything back: no orphans.
    revocation = t.position()
    t.do("restoreFact", revocationPosition=revocation, reason="it happened after all")
    assert t.orphans() == {} and t.who("tam")["lifeState"] == "DYING"


def test_an_overturned_ruling_turns_an_off_guard_hit_into_a_miss(t: Table) -> None:
    """A4.6: a declared circumstance citing a ruling counts only while the ruling holds. The
    goblin's spear with Tam off-guard (+2, ruling r-flank): 12 + 4 + 2 = 18 vs AC 17, 1d6 (6) + 2 =
    8: 24 -> 16; a potion heals 5: 21. Overturned: 16 misses, Tam never lost HP and the potion heals
    nothing above 24."""
    t.do("recordRuling", rulingId="r-flank", question="Is Tam flanked?", decision="yes", value=True)
    spear = t.attack(
        "goblin",
        SPEAR,
        [
            {
                "target": "tam",
                "face": 12,
                "circumstances": [{"circumstance": "TARGET_OFF_GUARD", "ruling": "r-flank"}],
            }
        ],
        6,
    )
    assert spear["outcome"]["targets"][0]["attack_total"] == 18 and t.hp("tam") == 16
    heal = t.do("orcusHeal", characterId=t.ch("tam"), roll=dice("1d6", 5), source="potion")["facts"][0]
    assert heal["outcome"]["hp_healed"] == 5  # 16 -> 21
    t.do("contestRuling", rulingId="r-flank", argument="the ogre was across the millstone")
    t.do("resolveRuling", rulingId="r-flank", outcome="OVERTURNED", decision="no flank")
    assert t.hp("tam") == 24  # the spear missed (16 vs 17); the potion heals nothing above 24
    assert t.orphans() == {}


def test_out_of_combat_surges_temporary_hp_rests_xp_and_levels(t: Table) -> None:
    """A4.9 hit points, temporary HP, healing surges (rulings 6, 20), rests (OR-7, OR-9), XP and
    levels (OR-2, ruling 22, ruling 3, B-OR-16)."""
    # 20 damage: 30 -> 10, bloodied (10 <= 15)
    mira = t.do("orcusDealDamage", characterId=t.ch("mira"), amount=20, source="a falling beam")[
        "characters"
    ][0]
    assert (mira["hitPoints"]["current"], mira["bloodied"]) == (10, True)
    # temporary HP do not add up: 5, then 3 -> still 5
    t.do("orcusGrantTemporaryHitPoints", characterId=t.ch("mira"), amount=5, source="inspiring word")
    t.do("orcusGrantTemporaryHitPoints", characterId=t.ch("mira"), amount=3)
    # 1d6 (4) fire: temporary HP first: 5 -> 1, HP unchanged
    hot = t.do("orcusDealDamage", characterId=t.ch("mira"), roll=dice("1d6", 4), types=["fire"])[
        "characters"
    ][0]
    assert hot["hitPoints"] == {"current": 10, "max": 30, "temporary": 1}
    assert t.refused("orcusDealDamage", characterId=t.ch("mira"), amount=3, types=["sonic"]) == [
        ("INVALID_INPUT", "types")  # OR-16 placeholder: an unknown damage type cannot slip past resistance
    ]
    # a surge on her own, out of combat: + 7 -> 17; a healing that spends a surge: 7 + 1d6 (2) = 9 -> 26
    t.do("orcusSpendHealingSurge", characterId=t.ch("mira"), note="bandages")
    healed = t.do(
        "orcusHeal", characterId=t.ch("mira"), surgeMultiplier=1, requiresSurge=True, roll=dice("1d6", 2)
    )["characters"][0]
    assert (healed["hitPoints"]["current"], healed["healingSurges"]["remaining"]) == (26, 4)
    # Rally out of an encounter: once until a rest (OR-9's once per encounter, A4.9): 26 + 7 = 30
    # (capped at max HP: 4 healed), a surge spent
    rally = t.do("orcusRally", characterId=t.ch("mira"))["facts"][0]["outcome"]
    assert (rally["hp_healed"], rally["surges_left"]) == (4, 3)
    assert t.refused("orcusRally", characterId=t.ch("mira")) == [("RALLY_USED", None)]
    t.do("orcusDealDamage", characterId=t.ch("mira"), amount=4)
    # a short rest ends temporary HP (A4.9) and recharges encounter powers (OR-9)
    rested = t.do("orcusTakeShortRest", minutes=10)["characters"]
    assert {c["creatureId"]: c["hitPoints"]["temporary"] for c in rested} == {"mira": 0, "tam": 0}
    # XP: 2,250 + 1,500 = 3,750: level 4 (A4.2, ruling 22); a GM pins level 3, then unpins
    xp = t.do("orcusAwardExperience", characterIds=[t.ch("mira")], amount=1500, reason="the den")
    assert (xp["characters"][0]["xp"], xp["characters"][0]["level"]) == (3750, 4)
    assert t.do("orcusSetLevel", characterId=t.ch("mira"), level=3)["characters"][0]["level"] == 3
    pinned = t.who("mira")
    assert (pinned["levelPinned"], pinned["xpLevel"]) == (3, 4)
    assert t.do("orcusSetLevel", characterId=t.ch("mira"), level=None)["characters"][0]["level"] == 4
    assert t.refused("orcusAwardExperience", characterIds=[t.ch("ogre")], amount=100) == [
        ("NOT_ALLOWED", "characterIds")  # ruling 9: monsters track no XP
    ]
    # B-OR-16: past 826,500 XP the level stays 30
    epic = t.do("orcusAwardExperience", characterIds=[t.ch("tam")], amount=900_000)["characters"][0]
    assert (epic["xp"], epic["level"], epic["xpLevel"]) == (902_250, 30, 30)
    # a long rest: full HP and surges (A4.9 4E-DEFAULT), action points reset to 1 (OR-7, ruling 21)
    t.do("orcusDealDamage", characterId=t.ch("mira"), amount=6)  # 26 -> 20
    long = {c["creatureId"]: c for c in t.do("orcusTakeLongRest")["characters"]}
    assert long["mira"]["hitPoints"]["current"] == 30 and long["mira"]["healingSurges"]["remaining"] == 6
    assert long["mira"]["actionPoints"]["current"] == 1


def test_dying_death_saves_stabilising_and_death_at_minus_bloodied_with_an_amendment(t: Table) -> None:
    """A4.9 0 HP or below (4e placeholders): dying at 0 or below, death saves below 10 fail, a check
    against DC 15 stabilises, dead at minus the bloodied value (-12 for Tam); an amendment that makes
    the blow smaller orphans the death save and the stabilisation (Tam was never dying)."""
    blow = t.do("orcusDealDamage", characterId=t.ch("tam"), amount=30)["facts"][0]["position"]  # 24 -> -6
    tam = t.who("tam")
    assert (tam["hitPoints"]["current"], tam["lifeState"], "unconscious" in tam["conditions"]) == (
        -6,
        "DYING",
        True,
    )
    assert t.refused("orcusSpendHealingSurge", characterId=t.ch("tam")) == [("NOT_CONSCIOUS", None)]
    save_at = t.do("orcusRollDeathSave", characterId=t.ch("tam"), roll=d20(5))["facts"][0]  # 5: a failure
    assert (save_at["outcome"]["result"], save_at["outcome"]["death_save_failures"]) == ("failure", 1)
    # Mira's check: 1d20 (11) + 4 = 15 vs DC 15: stabilised
    stab = t.do("orcusStabilize", characterId=t.ch("tam"), healerId=t.ch("mira"), roll=d20(11, 4))["facts"][0]
    assert (stab["outcome"]["total"], stab["outcome"]["dc"], stab["outcome"]["success"]) == (15, 15, True)
    assert t.who("tam")["lifeState"] == "STABILIZED"
    assert t.refused("orcusRollDeathSave", characterId=t.ch("tam"), roll=d20(15)) == [("NOT_DYING", None)]
    # 7 more: -13 <= -12: dead; healing cannot help
    t.do("orcusDealDamage", characterId=t.ch("tam"), amount=7)
    assert t.who("tam")["lifeState"] == "DEAD"
    assert t.refused("orcusHeal", characterId=t.ch("tam"), flat=10) == [("CREATURE_DEAD", "characterId")]
    # The blow was 10, not 30: 24 -> 14 -> 7; the death save and the check are orphaned.
    t.do("amendFact", position=blow, patch={"amount": 10}, reason="misheard")
    orphans = t.orphans()
    assert set(orphans) == {save_at["position"], stab["position"]}
    tam = t.who("tam")
    assert (tam["hitPoints"]["current"], tam["lifeState"], tam["deathSaveFailures"]) == (7, "ACTIVE", 0)


def test_rules_flags_notes_and_a_what_if_work_for_orcus(t: Table) -> None:
    """C5 flags through the core setRulesFlag (retroactively too), notes, and an ``or.*`` flag that
    changes a number: the surge value divisor 4 -> 3 makes Tam's surge 8."""
    t.do("addNote", text="The den smells of smoke.")
    t.do("orcusDealDamage", characterId=t.ch("tam"), amount=10)  # 24 -> 14
    t.do("setRulesFlag", flag="or.placeholder.surge_value_divisor", value=3)
    assert t.who("tam")["healingSurges"]["value"] == 8  # floor(24 / 3)
    t.do("orcusSpendHealingSurge", characterId=t.ch("tam"))
    assert t.hp("tam") == 22
    bad = t.refused("setRulesFlag", flag="or.placeholder.dying", value="sometimes")
    assert bad and bad[0][0] == "INVALID_INPUT"


def test_an_orcus_mutation_is_refused_on_another_systems_campaign_and_the_reverse(t: Table) -> None:
    before = t.position()
    out = t.g.mutate(
        "d20DealDamage", {"campaignId": t.campaign, "characterId": t.ch("mira"), "amount": 5}, t.gm
    )
    assert [(e["code"], e["field"]) for e in out["userErrors"]] == [("WRONG_RULESET", "campaignId")]
    out = t.g.mutate("dealDamage", {"campaignId": t.campaign, "characterId": t.ch("mira"), "amount": 5}, t.gm)
    assert [e["code"] for e in out["userErrors"]] == ["WRONG_RULESET"]
    assert t.position() == before
    sw = Table(t.g, ruleset="stellar-winds")
    out = t.g.mutate("orcusRally", {"campaignId": sw.campaign, "characterId": sw.ch("vex")}, sw.gm)
    assert [(e["code"], e["field"]) for e in out["userErrors"]] == [("WRONG_RULESET", "campaignId")]


def test_every_orcus_character_answers_as_orcus_character(t: Table) -> None:
    mira = t.who("mira")
    assert (mira["rank"], mira["xp"], mira["xpLevel"], mira["level"]) == ("HERO", 2250, 3, 3)
    assert (mira["bloodiedValue"], mira["diesAt"]) == (15, -15)
    assert mira["healingSurges"] == {"remaining": 6, "perDay": 6, "value": 7}
    ogre = t.who("ogre")
    assert (ogre["rank"], ogre["xp"], ogre["diesAt"], ogre["actionPoints"]["current"]) == (
        "ELITE",
        None,
        0,
        1,
    )


def test_a_player_records_for_their_own_hero_only(t: Table) -> None:
    """The GM records anything; a player's token acts for its own characters (docs/api.md, tokens)."""
    from tests.graphql_helpers import issue

    player = issue(t.g, t.cid, t.gm, "PLAYER", [t.ch("mira")])
    own = t.g.mutate("orcusRally", {"campaignId": t.campaign, "characterId": t.ch("mira")}, player)
    assert own["userErrors"] == [] and own["facts"][0]["type"] == "RallyUsed"
    before = t.position()
    other = t.g.mutate("orcusRally", {"campaignId": t.campaign, "characterId": t.ch("tam")}, player)
    assert [e["code"] for e in other["userErrors"]] == ["FORBIDDEN"]
    sheet = t.g.mutate(
        "orcusSetLevel", {"campaignId": t.campaign, "characterId": t.ch("mira"), "level": 9}, player
    )
    assert [e["code"] for e in sheet["userErrors"]] == ["FORBIDDEN"]  # levels are the GM's (ruling 3)
    assert t.position() == before
