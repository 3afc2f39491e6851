"""Hero's-surge table sequences through GraphQL, on SQLite and PostgreSQL (RULES.md A2, B-HS, C2.1,
C2.2; rulings 4, 6, 20, 22, 25; the hs.* flags at their defaults).

A real FastAPI app on the ``store`` fixture, spoken to over HTTP (``TestClient``) with the
hero's-surge plug-in's typed mutations and the core encounter mutations (``startEncounter``,
``startTurn``, ``endTurn`` with the luck rolls a turn owes). Every die is given; the success
levels are the table's rulings (B-HS-1, ruling 4); every number is worked by hand from RULES.md
in the comments.

The cast:

* Aldric: hero, level 1, Con 14, 40 HP, Hit Die d8, armor DR 2: 4 hero's surges (HS-15:
  4 + floor(1 / 2)), dead when -HP > max(14, 20) = 20 (HS-12, B-HS-22);
* Brin: hero, level 2, Con 16, 24 HP, d10: 5 surges (4 + 1), dead when -HP > max(16, 12) = 16;
  a quarter of her HP is 6 (B-HS-8);
* the ogre: monster, level 3, Con 16, 30 HP, DR 3; G1 and G2: goblins, 10 HP, Con 10.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.http.app import create_app
from api.service.settings import Settings
from domain.dice import roll as rolled
from tests.graphql_helpers import GQL, gid

HS_FIELDS = """
  ... on HeroSurgeCharacter {
    hero conScore hitDie damageReduction extraBlocks temporaryHitPointsUntil fortuneDice
    heroSurges { current max negative }
    conscious dying stable dead deathThreshold luckRollsOwed luckAdvantagePending
    rankPenalties { penaltyId amount byAttempt source untilRound }
    defending knockbackPending fullRoundAction movementForfeited
    initiativeThisRound { round successLevel band die knockedBack }
    initiativeNextRound { round successLevel band die knockedBack }
  }
"""
CHARACTER = f"creatureId name level lifeState hitPoints {{ current max temporary }} conditions {HS_FIELDS}"
BRIEF = (
    "creatureId lifeState hitPoints { current max temporary } "
    "... on HeroSurgeCharacter { heroSurges { current max negative } dying stable luckRollsOwed }"
)


def d20(face: int, plus: int = 0) -> dict[str, Any]:
    return {"expression": f"1d20{plus:+d}" if plus else "1d20", "faces": [face]}


def dice(expression: str, *faces: int) -> dict[str, Any]:
    return {"expression": expression, "faces": list(faces)}


class Table:
    """One hero's-surge campaign over GraphQL, played by its GM."""

    def __init__(self, g: GQL, ruleset: str = "hero-surge") -> None:
        self.g = g
        out = g.ok(
            "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { campaignId } "
            "gmToken userErrors { code } } }",
            {"i": {"name": "The bridge", "ruleset": ruleset}},
        )["createCampaign"]
        assert out["userErrors"] == [], out
        self.cid, self.gm = out["campaign"]["campaignId"], out["gmToken"]
        self.campaign = gid("Campaign", self.cid, self.cid)
        self.enc = gid("Encounter", self.cid, "bridge")

    def ch(self, local: str) -> str:
        return gid("Character", self.cid, local)

    def do(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        out = self.try_(mutation, **inp)
        assert out["userErrors"] == [], out
        return out

    def fact(self, mutation: str, /, **inp: Any) -> dict[str, Any]:
        """The first fact the mutation recorded (position, payload, outcome)."""
        return dict(self.do(mutation, **inp)["facts"][0])

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
        self.do("heroSurgeRegisterCreature", name=name, **sheet)

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

    def surges(self, local: str) -> int:
        return int(self.who(local)["heroSurges"]["current"])

    def position(self) -> int:
        q = "query($id: ID!) { campaign(id: $id) { position } }"
        return int(self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["position"])

    def orphans(self) -> dict[int, str]:
        q = "query($id: ID!) { campaign(id: $id) { orphans { position reason } } }"
        found = self.g.ok(q, {"id": self.campaign}, self.gm)["campaign"]["orphans"]
        return {o["position"]: o["reason"] for o in found}

    def order(self) -> list[str]:
        q = "query($id: ID!) { encounter(id: $id) { raw } }"
        raw = self.g.ok(q, {"id": self.enc}, self.gm)["encounter"]["raw"]
        return list(raw["order"])

    # --- shortcuts ------------------------------------------------------------
    def check(self, who: str, level: str, face: int) -> dict[str, Any]:
        out = self.fact(
            "heroSurgeCheckInitiative",
            encounterId=self.enc,
            characterId=self.ch(who),
            successLevel=level,
            roll=d20(face),
        )
        return dict(out["outcome"])

    def attempt(
        self, aid: str, who: str, level: str, face: int, plus: int = 0, **more: Any
    ) -> dict[str, Any]:
        if "targets" in more:
            more["targetIds"] = [self.ch(x) for x in more.pop("targets")]
        out = self.fact(
            "heroSurgeAttempt",
            attemptId=aid,
            characterId=self.ch(who),
            kind=more.pop("kind", "ATTACK"),
            successLevel=level,
            roll=d20(face, plus),
            **more,
        )
        return dict(out["outcome"])

    def damage(self, who: str, **more: Any) -> dict[str, Any]:
        return self.fact("heroSurgeApplyDamage", characterId=self.ch(who), **more)

    def turn(self) -> str:
        return str(self.do("startTurn", encounterId=self.enc)["facts"][0]["outcome"]["turn_of"])

    def end(self, *rolls: dict[str, Any]) -> dict[str, Any]:
        return self.do("endTurn", encounterId=self.enc, rolls=list(rolls))


@pytest.fixture
def client(store: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(store)) as test_client:
        yield test_client


@pytest.fixture
def t(client: TestClient) -> Table:
    table = Table(GQL(client))
    table.creature("Aldric", kind="PC", level=1, conScore=14, maxHp=40, hitDie=8, damageReduction=2)
    table.creature("Brin", kind="PC", level=2, conScore=16, maxHp=24, hitDie=10)
    table.creature("Ogre", kind="MONSTER", level=3, conScore=16, maxHp=30, damageReduction=3)
    table.creature("G1", kind="MONSTER", level=1, conScore=10, maxHp=10)
    table.creature("G2", kind="MONSTER", level=1, conScore=10, maxHp=10)
    return table


def play_the_bridge(t: Table) -> dict[str, int]:
    """Two rounds on the bridge; returns the positions the corrections need."""
    at: dict[str, int] = {}
    everyone = ["aldric", "brin", "ogre", "g1", "g2"]
    t.do(
        "startEncounter", encounterId="bridge", name="The bridge", participantIds=[t.ch(c) for c in everyone]
    )
    # Round 1 (HS-2): the ruled levels give the bands; heroes first in a band, then the higher die:
    # major: Brin (hero), the ogre; normal: Aldric (hero), G1; failure: G2.
    for who, level, face in (
        ("ogre", "MAJOR_SUCCESS", 14),
        ("aldric", "NORMAL_SUCCESS", 11),
        ("brin", "MAJOR_SUCCESS", 9),
        ("g1", "NORMAL_SUCCESS", 17),
    ):
        t.check(who, level, face)
    last = t.check("g2", "FAILURE", 3)
    assert last["order"] == ["brin", "ogre", "aldric", "g1", "g2"]
    assert t.turn() == "brin"

    # Brin: a critical success with a natural 20 on the ogre (HS-8); she keeps it (no Fortune Die)
    # and knocks the ogre's initiative back one band: it has not acted, so this round (B-HS-18): the
    # normal band, after Aldric (heroes first) and after G1 (die 17 > 14).
    b1 = t.attempt("b1", "brin", "CRITICAL_SUCCESS", 20, 5, targets=["ogre"])
    assert (b1["may_exchange_for_fortune_die"], b1["devastating_effects"]) == (True, 1)
    knock = t.fact(
        "heroSurgeChooseDevastatingEffect",
        attemptId="b1",
        option="KNOCK_INITIATIVE_BACK",
        targetId=t.ch("ogre"),
    )
    assert knock["outcome"]["knock_back"]["applies"] == "this_round"
    assert t.order() == ["brin", "aldric", "g1", "ogre", "g2"]
    assert t.who("ogre")["initiativeThisRound"] == {
        "round": 1,
        "successLevel": "MAJOR_SUCCESS",
        "band": "NORMAL_SUCCESS",
        "die": 14,
        "knockedBack": 1,
    }
    # Her 1d10+4 (3) is maximised on a critical success: 14 (B-HS-16); the ogre's DR 3: 11; 30 -> 19.
    t.do("heroSurgeRollDamage", damageId="d1", attemptId="b1", roll=dice("1d10+4", 3))
    hit = t.damage("ogre", damageId="d1")
    assert (hit["outcome"]["taken"], t.hp("ogre")) == (11, 19)
    t.end()

    # Aldric: a major success on G1 with Brutal Damage (HS-8, B-HS-16): 1d8+2 shows 1; the die is
    # rerolled until higher: 1 (not higher), then 6 (kept): 6 + 2 = 8; G1 10 -> 2.
    assert t.turn() == "aldric"
    t.attempt("a1", "aldric", "MAJOR_SUCCESS", 15, 4, targets=["g1"])
    t.do("heroSurgeChooseHamperingEffect", attemptId="a1", option="BRUTAL_DAMAGE")
    t.do("heroSurgeRollDamage", damageId="d2", attemptId="a1", roll=dice("1d8+2", 1))
    t.do("heroSurgeRerollDamageDie", damageId="d2", dieIndex=0, newFace=1)
    t.do("heroSurgeRerollDamageDie", damageId="d2", dieIndex=0, newFace=6)
    t.damage("g1", damageId="d2")
    assert t.hp("g1") == 2
    # HS-4: the attack was Aldric's action; a second one is refused (a move and one action)
    assert t.refused(
        "heroSurgeAttempt",
        attemptId="a2",
        characterId=t.ch("aldric"),
        kind="ATTACK",
        successLevel="FAILURE",
        roll=d20(4),
    ) == [("NO_ACTION_LEFT", "action")]
    t.end()

    # G1's turn: G1, the ogre and G2 attack Brin together; one defense roll (HS-9, no action): a
    # natural 1 on a failure is a critical failure (HS-7): nothing is blocked and the GM names the
    # ogre's attack a critical hit (B-HS-19).
    assert t.turn() == "g1"
    defense = t.attempt("def1", "brin", "FAILURE", 1, kind="DEFENSE")
    assert defense["success_level"] == "critical_failure"
    t.do(
        "heroSurgeResolveDefense",
        defenseAttemptId="def1",
        incoming=["g1-x", "ogre-x", "g2-x"],
        critical=["ogre-x"],
    )
    # The ogre's 2d6+3 (2, 3) as a critical hit on a hero: the maximum, 15, armor bypassed: 24 -> 9.
    assert t.damage("brin", roll=dice("2d6+3", 2, 3), attack="ogre-x")["outcome"]["amount"] == 15
    t.damage("brin", roll=dice("1d6", 4), attack="g1-x")  # 9 -> 5
    # G2's 1d6 (6): 5 -> -1: from above 0 to below: a surge lost (B-HS-7: 5 -> 4) and dying (HS-14);
    # the damage that starts dying owes no luck roll (B-HS-9, hs.luck_on_damage_that_starts_dying).
    at["g2_hit"] = t.damage("brin", roll=dice("1d6", 6), attack="g2-x")["position"]
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["lifeState"]) == (
        -1,
        4,
        "DYING",
    )
    assert brin["luckRollsOwed"] == [] and brin["conscious"] is False
    t.end()
    assert t.turn() == "ogre"
    t.end()
    assert t.turn() == "g2"
    t.end()

    # Round 2: no turn before its checks (HS-2: initiative every round).
    assert [e["code"] for e in t.try_("startTurn", encounterId=t.enc)["userErrors"]] == ["INITIATIVE_PENDING"]
    for who, level, face in (
        ("g2", "CRITICAL_SUCCESS", 10),
        ("brin", "MAJOR_SUCCESS", 10),
        ("aldric", "NORMAL_SUCCESS", 10),
        ("ogre", "CRITICAL_FAILURE", 2),
        ("g1", "CRITICAL_FAILURE", 1),
    ):
        assert t.check(who, level, face)["for_round"] == 2
    assert t.who("brin")["initiativeNextRound"]["band"] == "MAJOR_SUCCESS"
    assert t.turn() == "g2"
    # G2 stabs the dying Brin: 1d4 (2): -1 -> -3, and a luck roll is owed after the damage (B-HS-9).
    at["stab"] = t.damage("brin", roll=dice("1d4", 2))["position"]
    assert t.who("brin")["luckRollsOwed"] == ["DYING_DAMAGE"]
    # 9 is unlucky (hs.luck_roll: lucky on 10+, B-HS-2): a surge lost, 4 -> 3 (HS-14).
    luck = t.fact("heroSurgeLuckRoll", characterId=t.ch("brin"), context="DYING_DAMAGE", roll=d20(9))
    at["luck_damage"] = luck["position"]
    assert (luck["outcome"]["result"], t.surges("brin")) == ("unlucky", 3)
    t.end()

    # Brin's turn starts while she is dying: a luck roll is owed (ruling 25), and the turn cannot end
    # without it (ruling 18: ROLLS_PENDING, listing it).
    assert t.turn() == "brin"
    out = t.try_("endTurn", encounterId=t.enc)
    assert [e["code"] for e in out["userErrors"]] == ["ROLLS_PENDING"]
    assert out["pendingRolls"] == [
        {"type": "LuckRollMade", "characterId": "brin", "effectId": None, "dice": "1d20"}
    ]
    # A 20 ends dying (HS-14): stable, still unconscious at -3 (B-HS-10).
    ended = t.end({"type": "LuckRollMade", "characterId": t.ch("brin"), "roll": d20(20)})
    at["luck_turn"] = ended["facts"][0]["position"]
    assert ended["facts"][0]["type"] == "LuckRollMade"
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["lifeState"], brin["stable"]) == (-3, "STABILIZED", True)

    # Aldric's turn: a potion heals 5 from the actual value (B-HS-11): -3 -> 2; awake, as her surges
    # are not negative (HS-17).
    assert t.turn() == "aldric"
    heal = t.fact("heroSurgeHeal", characterId=t.ch("brin"), amount=5, source="potion")
    at["potion"] = heal["position"]
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["lifeState"]) == (
        2,
        3,
        "ACTIVE",
    )
    t.end()
    return at


def test_the_bridge_bands_knock_back_criticals_brutal_damage_and_luck_rolls(t: Table) -> None:
    """HS-2, HS-4, HS-7..HS-9, HS-12, HS-14, HS-17; B-HS-7, B-HS-9, B-HS-10, B-HS-11, B-HS-16, B-HS-18,
    B-HS-19; rulings 4, 18 and 25, as one encounter of two rounds."""
    play_the_bridge(t)
    assert t.orphans() == {}
    nodes = t.g.ok(
        "query($id: ID!) { campaign(id: $id) { log(last: 100) { nodes { text } } } }",
        {"id": t.campaign},
        t.gm,
    )["campaign"]["log"]["nodes"]
    log = "\n".join(n["text"] for n in nodes)
    for line in (  # the narrator tells the system's facts
        "Brin checks initiative (1d20 (9) = 9): major success.",
        "Devastating Effect of b1: knock initiative back on Ogre.",
        "Brin makes a luck roll (dying damage, 1d20 (9) = 9): unlucky",
        "Brin makes a luck roll (dying turn start, 1d20 (20) = 20)",
    ):
        assert line in log, line


def test_revoking_the_stab_orphans_the_luck_roll_no_longer_owed(t: Table) -> None:
    """C0 corrections on hero's-surge facts (ruling 25): without G2's stab, Brin took no damage while
    dying, so the damage luck roll is owed no more: orphaned, and its surge comes back. Her turn-start
    luck roll still stands (she was dying at -1 when her turn started); the potion: -1 -> 4. What-if
    previews it and stores nothing; as-of in both views."""
    at = play_the_bridge(t)
    before = t.position()
    q = (
        "query($id: ID!, $p: Int!) { campaign(id: $id) { whatIf(corrections: [{revoke: {position: $p, "
        'reason: "what if"}}]) { newlyOrphaned changes { creatureId } } } }'
    )
    preview = t.g.ok(q, {"id": t.campaign, "p": at["stab"]}, t.gm)["campaign"]["whatIf"]
    assert preview["newlyOrphaned"] == [at["luck_damage"]]
    assert {c["creatureId"] for c in preview["changes"]} == {"brin"}
    assert t.position() == before

    t.do("revokeFact", position=at["stab"], reason="the stab hit G1")
    orphans = t.orphans()
    assert list(orphans) == [at["luck_damage"]] and "owes no luck roll" in orphans[at["luck_damage"]]
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["lifeState"]) == (
        4,
        4,
        "ACTIVE",
    )
    # As of the damage luck roll: what the table believed then, and what we now know.
    believed = t.who("brin", at["luck_damage"], "RECORDED")
    known = t.who("brin", at["luck_damage"], "CORRECTED")
    assert (believed["hitPoints"]["current"], believed["heroSurges"]["current"]) == (-3, 3)
    assert (known["hitPoints"]["current"], known["heroSurges"]["current"], known["lifeState"]) == (
        -1,
        4,
        "DYING",
    )
    # Restoring the stab brings the luck roll back: no orphans.
    t.do("restoreFact", revocationPosition=t.position(), reason="it did hit Brin")
    assert t.orphans() == {} and t.surges("brin") == 3


def test_amending_the_g2_hit_so_the_stab_starts_dying_orphans_the_damage_luck_roll(t: Table) -> None:
    """An amendment (G2's 1d6 showed 4, not 6): Brin 5 -> 1, still up. The stab is then the damage
    that starts dying (1 -> -1, a surge lost, B-HS-7: 5 -> 4), which owes no luck roll (B-HS-9): the
    damage luck roll is orphaned (ruling 25). Her turn starts while she is dying, so the turn-start
    luck roll (a 20: stable at -1) stands; the potion: -1 -> 4."""
    at = play_the_bridge(t)
    t.do(
        "amendFact", position=at["g2_hit"], patch={"roll": rolled("1d6", faces=[4])}, reason="misread the die"
    )
    assert set(t.orphans()) == {at["luck_damage"]}
    assert t.who("brin", at["g2_hit"])["hitPoints"]["current"] == 1
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["lifeState"]) == (
        4,
        4,
        "ACTIVE",
    )


def test_negative_surges_the_quarter_hp_chain_monsters_at_zero_rests_and_levels(t: Table) -> None:
    """HS-15, HS-16, B-HS-6, B-HS-8 (ruling 25), B-HS-12, B-HS-21, HS-13 / B-HS-17, ruling 22."""
    # Brin: 24 -> 6 HP; five surges drained (HS-16) leave 0. A sixth drain with none left is a loss of
    # a quarter of her HP, 6 (HP loss, not damage: B-HS-8): 6 -> 0, a transition to 0 or less, which
    # loses a surge she does not have: another 6, -6, and two negative surges; she is dying.
    t.damage("brin", amount=18)
    for _ in range(5):
        t.do("heroSurgeDrainSurge", characterId=t.ch("brin"), source="a wraith")
    drained = t.fact("heroSurgeDrainSurge", characterId=t.ch("brin"), source="a wraith")
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"], brin["lifeState"]) == (
        -6,
        {"current": -2, "max": 5, "negative": 2},
        "DYING",
    )
    assert drained["outcome"]["after"]["hero_surges"] == -2
    # Ruling 6: no surge to spend.
    assert t.refused("heroSurgeSpendSurge", characterId=t.ch("brin"), purpose="HEROISM") == [
        ("NOT_CONSCIOUS", None)
    ] or t.refused("heroSurgeSpendSurge", characterId=t.ch("brin"), purpose="HEROISM")[0][0] in (
        "NO_HERO_SURGE",
        "NOT_CONSCIOUS",
    )
    # Healing 10 (B-HS-11): -6 -> 4, dying ends, but negative surges keep her unconscious (HS-17).
    t.do("heroSurgeHeal", characterId=t.ch("brin"), amount=10)
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["dying"], brin["conscious"]) == (4, False, False)
    # A long rest restores surges to the maximum and HP to full (B-HS-12, B-HS-21): awake.
    t.do("heroSurgeTakeRest", kind="LONG", hours=8)
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["conscious"]) == (24, 5, True)

    # Monsters (B-HS-6, ruling 25): unconscious at exactly 0, dead below; no surges.
    t.damage("g1", amount=10)
    assert t.who("g1")["lifeState"] == "UNCONSCIOUS"
    t.damage("g1", amount=1)
    assert t.who("g1")["lifeState"] == "DEAD" and t.who("g1")["heroSurges"] is None
    assert t.refused("heroSurgeSpendSurge", characterId=t.ch("g2"), purpose="HEROISM") == [
        ("NOT_A_HERO", "characterId")
    ]

    # Levels by an explicit fact (ruling 22). Brin to 3 with two 1s: the die is rerolled until it is
    # not 1: 1, 7: 7 + three 1s = 10 (HS-13, B-HS-17): max HP 24 -> 34; surge maximum 4 + 1 = 5.
    up = t.fact(
        "heroSurgeGainLevel",
        characterId=t.ch("brin"),
        newLevel=3,
        hitDice=dice("2d10", 1, 1),
        rerolls=dice("2d10", 1, 7),
    )
    assert (up["outcome"]["gain"], up["outcome"]["max_hp"]) == (10, 34)
    # Aldric to 2: Con 14 rolls two extra d8 (Con mod 2, HS-13); 2d8 shows 2, 3; the extras 7, 1; the
    # 7 is swapped in for the 2: (7, 3): a die at or above half the maximum (4): the higher, 7 (B-HS-17).
    # The surge maximum 4 -> 5 (HS-15) and the new surge is gained (hs.level_up_gains_surge).
    up = t.fact(
        "heroSurgeGainLevel",
        characterId=t.ch("aldric"),
        newLevel=2,
        hitDice=dice("2d8", 2, 3),
        conExtra=dice("2d8", 7, 1),
        swaps=[{"extra": 0, "pair": 0}],
    )
    aldric = t.who("aldric")
    assert (up["outcome"]["gain"], aldric["hitPoints"]["max"], aldric["heroSurges"]) == (
        7,
        47,
        {"current": 5, "max": 5, "negative": 0},
    )
    assert t.refused(
        "heroSurgeGainLevel", characterId=t.ch("aldric"), newLevel=4, hitDice=dice("2d8", 5, 5)
    ) == [("NOT_NEXT_LEVEL", "newLevel")]


def test_typed_refusals_store_nothing(t: Table) -> None:
    """Typed refusals with codes (docs/errors.md): ruling 25, ruling 6, B-HS-6, HS-8."""
    # Ruling 25: a damage luck roll only after damage to a hero already dying.
    luck = t.refused("heroSurgeLuckRoll", characterId=t.ch("brin"), context="DYING_DAMAGE", roll=d20(5))
    assert [code for code, _ in luck] == ["NO_LUCK_ROLL_OWED"], luck
    # HS-8: a normal success has no Devastating Effect.
    t.attempt("n1", "aldric", "NORMAL_SUCCESS", 12)
    codes = t.refused("heroSurgeChooseDevastatingEffect", attemptId="n1", option="ADDITIONAL_DAMAGE_DIE")
    assert codes[0][0] == "NO_DEVASTATING_EFFECT"
    # Ruling 6: spending a surge the hero does not have (after four spends, Aldric has none).
    for _ in range(4):
        t.do("heroSurgeSpendSurge", characterId=t.ch("aldric"), purpose="SPELL")
    assert (
        t.refused("heroSurgeSpendSurge", characterId=t.ch("aldric"), purpose="HEROISM")[0][0]
        == "NO_HERO_SURGE"
    )


def test_a_hero_surge_mutation_is_refused_on_another_systems_campaign_and_the_reverse(t: Table) -> None:
    before = t.position()
    out = t.g.mutate("orcusRally", {"campaignId": t.campaign, "characterId": t.ch("brin")}, t.gm)
    assert [(e["code"], e["field"]) for e in out["userErrors"]] == [("WRONG_RULESET", "campaignId")]
    assert t.position() == before
    other = Table(t.g, ruleset="orcus")
    out = t.g.mutate(
        "heroSurgeDrainSurge", {"campaignId": other.campaign, "characterId": other.ch("mira")}, other.gm
    )
    assert [(e["code"], e["field"]) for e in out["userErrors"]] == [("WRONG_RULESET", "campaignId")]


def test_every_hero_surge_character_answers_as_hero_surge_character(t: Table) -> None:
    """C2.1: the sheet and tracks as the plug-in's type shows them."""
    aldric = t.who("aldric")
    assert (aldric["hero"], aldric["damageReduction"], aldric["deathThreshold"], aldric["hitDie"]) == (
        True,
        2,
        20,
        8,
    )
    assert aldric["heroSurges"] == {"current": 4, "max": 4, "negative": 0}
    ogre = t.who("ogre")
    assert (ogre["hero"], ogre["heroSurges"], ogre["damageReduction"], ogre["deathThreshold"]) == (
        False,
        None,
        3,
        16,
    )


def test_a_player_records_for_their_own_hero_only(t: Table) -> None:
    """The GM records anything; a player's token acts for its own hero; levels are the GM's."""
    from tests.graphql_helpers import issue

    player = issue(t.g, t.cid, t.gm, "PLAYER", [t.ch("brin")])
    own = t.g.mutate("heroSurgeDrainSurge", {"campaignId": t.campaign, "characterId": t.ch("brin")}, player)
    assert own["userErrors"] == [] and own["facts"][0]["type"] == "HeroSurgeDrained"
    before = t.position()
    other = t.g.mutate(
        "heroSurgeDrainSurge", {"campaignId": t.campaign, "characterId": t.ch("aldric")}, player
    )
    assert [e["code"] for e in other["userErrors"]] == ["FORBIDDEN"]
    level = t.g.mutate(
        "heroSurgeGainLevel",
        {"campaignId": t.campaign, "characterId": t.ch("brin"), "newLevel": 3, "hitDice": dice("2d10", 4, 6)},
        player,
    )
    assert [e["code"] for e in level["userErrors"]] == ["FORBIDDEN"]  # levels are the GM's (ruling 22)
    assert t.position() == before


def codes(refusal: list[tuple[str, str | None]]) -> list[str]:
    return [code for code, _ in refusal]


def test_the_ford_orders_defend_full_round_fortune_dice_instagib_raising_and_medical_care(t: Table) -> None:
    """HS-2 (the GM orders tied foes; the heroes decide between themselves over the die), HS-4, HS-5,
    HS-6, HS-7, B-HS-4, B-HS-5, HS-11, B-HS-15, B-HS-6, B-HS-23, HS-14 and the rest of the mutations."""
    ford = gid("Encounter", t.cid, "ford")
    t.enc = ford
    t.do(
        "startEncounter",
        encounterId="ford",
        name="The ford",
        participantIds=[t.ch(c) for c in ("aldric", "brin", "ogre", "g1")],
    )
    for who, level, face in (
        ("aldric", "NORMAL_SUCCESS", 12),
        ("brin", "NORMAL_SUCCESS", 18),
        ("ogre", "FAILURE", 7),
    ):
        t.check(who, level, face)
    # the ogre and G1: the same band and the same die: a tie the GM orders (HS-2 PROPOSAL)
    assert t.check("g1", "FAILURE", 7)["unresolved_ties"] == [["g1", "ogre"]]
    assert codes(t.refused("startTurn", encounterId=ford)) == ["ENCOUNTER_NOT_RUNNING"]
    settled = t.fact(
        "heroSurgeChooseOrder", encounterId=ford, characterIds=[t.ch("g1"), t.ch("ogre")], decidedBy="gm"
    )
    assert settled["outcome"]["order"] == ["brin", "aldric", "g1", "ogre"]
    # the heroes decide between themselves, over the die (HS-2): Aldric first
    chosen = t.fact("heroSurgeChooseOrder", encounterId=ford, characterIds=[t.ch("aldric"), t.ch("brin")])
    assert chosen["outcome"]["order"] == ["aldric", "brin", "g1", "ogre"]

    assert t.turn() == "aldric"
    t.do("heroSurgeGrantTemporaryHitPoints", characterId=t.ch("aldric"), amount=5)  # HS-11
    t.do("heroSurgeGrantTemporaryHitPoints", characterId=t.ch("aldric"), amount=3)  # B-HS-15: keep the larger
    # HS-5: defending Brin takes his action; one extra block until his next turn
    t.do("heroSurgeDefend", characterId=t.ch("aldric"), mode="TARGET", targetId=t.ch("brin"))
    t.do("heroSurgeTakeAction", characterId=t.ch("aldric"), action="MOVE", name="to the bank")
    aldric = t.who("aldric")
    assert (aldric["defending"], aldric["extraBlocks"], aldric["hitPoints"]["temporary"]) == (
        "target:brin",
        1,
        5,
    )
    # HS-4: the action and a move are spent
    assert t.refused("heroSurgeTakeAction", characterId=t.ch("aldric"), action="MOVE") == [
        ("NO_ACTION_LEFT", "action")
    ]
    t.end()

    assert t.turn() == "brin"
    # HS-6: a full-round action after moving takes the action
    t.do(
        "heroSurgeFullRoundAction",
        characterId=t.ch("brin"),
        step="START",
        action="a warding rite",
        movedBefore=True,
    )
    assert t.who("brin")["fullRoundAction"] == "a warding rite"
    assert codes(t.refused("heroSurgeAttempt", attemptId="bx", characterId=t.ch("brin"), kind="ATTACK",
                           successLevel="FAILURE", roll=d20(3))) == ["NO_ACTION_LEFT"]  # fmt: skip
    t.end()

    assert t.turn() == "g1"
    # 1d6 (5) on Aldric: DR 2 first (B-HS-24): 3, all from his temporary HP: 5 -> 2; HP 40
    t.attempt("g1a", "g1", "NORMAL_SUCCESS", 11, targets=["aldric"])
    t.do("heroSurgeRollDamage", damageId="dg1", attemptId="g1a", roll=dice("1d6", 5))
    t.damage("aldric", damageId="dg1")
    assert t.who("aldric")["hitPoints"] == {"current": 40, "max": 40, "temporary": 2}
    t.end()

    assert t.turn() == "ogre"
    # a limited success misses but gives a Hampering Effect: a -1 rank penalty on Brin until the end of
    # the next round (HS-8, B-HS-5)
    t.attempt("o1", "ogre", "LIMITED_SUCCESS", 6, targets=["brin"])
    t.do("heroSurgeChooseHamperingEffect", attemptId="o1", option="RANK_PENALTY", targetId=t.ch("brin"))
    penalties = t.who("brin")["rankPenalties"]
    assert [(p["amount"], p["byAttempt"], p["untilRound"]) for p in penalties] == [(-1, "o1", 2)]
    t.end()

    for who, level, face in (("aldric", "CRITICAL_SUCCESS", 20), ("brin", "MAJOR_SUCCESS", 10),
                             ("g1", "FAILURE", 2), ("ogre", "CRITICAL_FAILURE", 1)):  # fmt: skip
        t.check(who, level, face)
    assert t.turn() == "aldric"
    assert t.who("aldric")["defending"] is None  # HS-5: until the start of his next turn
    # HS-7 / B-HS-4: a natural 20 downgraded to a normal success for a Fortune Die, once; spent as ruled
    t.attempt("a1", "aldric", "CRITICAL_SUCCESS", 20, targets=["g1"])
    t.do("heroSurgeExchangeFortuneDie", attemptId="a1")
    assert t.who("aldric")["fortuneDice"] == 1
    assert codes(t.refused("heroSurgeExchangeFortuneDie", attemptId="a1")) == ["ALREADY_EXCHANGED"]
    t.do("heroSurgeSpendFortuneDie", characterId=t.ch("aldric"), effect="a reroll the GM allowed")
    assert codes(t.refused("heroSurgeSpendFortuneDie", characterId=t.ch("aldric"), effect="again")) == [
        "NO_FORTUNE_DIE"
    ]
    # a normal success now: 1d8+2 (8) = 10, not maximised; G1 10 -> 0: unconscious at exactly 0 (B-HS-6)
    t.do("heroSurgeRollDamage", damageId="da1", attemptId="a1", roll=dice("1d8+2", 8))
    assert t.damage("g1", damageId="da1")["outcome"]["taken"] == 10
    assert t.who("g1")["lifeState"] == "UNCONSCIOUS"
    t.end()

    brin_turn = t.do("startTurn", encounterId=ford)["facts"][0]["outcome"]["turns"][0]
    assert brin_turn["full_round_action"]["action"] == "a warding rite"  # HS-6: it completes now
    done = t.fact("heroSurgeFullRoundAction", characterId=t.ch("brin"), step="COMPLETE")
    assert done["outcome"]["movement_forfeited"] and t.who("brin")["movementForfeited"]
    # B-HS-5: the penalty is used on the attempt she chooses
    t.attempt("b1", "brin", "NORMAL_SUCCESS", 9, kind="SKILL")
    t.do("heroSurgeConsumeRankPenalty", characterId=t.ch("brin"), attemptId="b1")
    assert t.who("brin")["rankPenalties"] == []
    t.end()

    assert t.turn() == "g1"  # unconscious, not dead: its turn comes, but it cannot act
    assert codes(t.refused("heroSurgeAttempt", attemptId="gx", characterId=t.ch("g1"), kind="ATTACK",
                           successLevel="FAILURE", roll=d20(3))) == ["NOT_CONSCIOUS"]  # fmt: skip
    t.end()

    assert t.turn() == "ogre"
    # B-HS-23: three successive 20s (the attempt and two luck rolls), and the GM rules the Instagib
    t.attempt("o2", "ogre", "CRITICAL_SUCCESS", 20, targets=["brin"])
    for rid in ("l1", "l2"):
        t.do(
            "heroSurgeLuckRoll",
            characterId=t.ch("ogre"),
            context="CRIT_SUCCESS",
            attemptId="o2",
            rollId=rid,
            roll=d20(20),
        )
    t.do("heroSurgeRuleInstantKill", characterId=t.ch("brin"), attemptId="o2", luckRollIds=["l1", "l2"])
    assert t.who("brin")["lifeState"] == "DEAD"
    t.end()
    t.do("endEncounter", encounterId=ford, outcome="The ogre carries Brin off.")

    # restored to life by the means the table names, at the HP given
    t.do("heroSurgeRestoreToLife", characterId=t.ch("brin"), means="a miracle", hp=5)
    brin = t.who("brin")
    assert (brin["lifeState"], brin["hitPoints"]["current"], brin["conscious"]) == ("ACTIVE", 5, True)
    # Aldric takes 50: DR 2 (48), his 2 temporary HP (46): 40 -> -6: a surge lost (4 -> 3), dying
    t.damage("aldric", amount=50)
    aldric = t.who("aldric")
    assert (aldric["hitPoints"]["current"], aldric["heroSurges"]["current"], aldric["dying"]) == (-6, 3, True)
    # HS-14: Brin's successful medical attempt ends his dying: stable at -6 (B-HS-10)
    t.attempt("m1", "brin", "NORMAL_SUCCESS", 14, kind="MEDICAL", targets=["aldric"])
    t.do("heroSurgeMedicalAttempt", healerId=t.ch("brin"), characterId=t.ch("aldric"), attemptId="m1")
    aldric = t.who("aldric")
    assert (aldric["dying"], aldric["stable"], aldric["lifeState"]) == (False, True, "STABILIZED")
    assert codes(t.refused("heroSurgeUseHealersKit", healerId=t.ch("brin"), characterId=t.ch("aldric"))) == [
        "NOT_DYING"
    ]
    # HS-16: a spell restores a surge; a sheet update changes his armor (B-HS-24)
    t.do("heroSurgeRestoreSurges", characterId=t.ch("aldric"), amount=1, source="SPELL")
    t.do(
        "heroSurgeUpdateSheet", characterId=t.ch("aldric"), changes={"damage_reduction": 3}, reason="new mail"
    )
    aldric = t.who("aldric")
    assert (aldric["heroSurges"]["current"], aldric["damageReduction"]) == (4, 3)
    assert t.orphans() == {}


def test_an_overturned_success_level_ruling_orphans_the_damage_and_the_luck_roll_it_owed(t: Table) -> None:
    """Ruling 4: the success level is the table's ruling, and may cite a recorded one. Brin is dying
    at -1 (25 damage: a surge lost, B-HS-7); G2's stab, a normal success as the GM ruled (r-stab),
    deals 1d4 (3): -4, and owes a luck roll (B-HS-9): 5, unlucky: a surge (4 -> 3). Overturned (a
    limited success: it does not hit, HS-8), the damage roll, the damage and the luck roll are
    orphaned (ruling 25): -1 and 4 surges. Upheld again with the first value, all of it returns."""
    t.damage("brin", amount=25)
    t.do(
        "recordRuling",
        rulingId="r-stab",
        question="Does the stab land?",
        decision="yes",
        value="normal_success",
    )
    stab = t.attempt("s2", "g2", "NORMAL_SUCCESS", 11, targets=["brin"], successLevelRuling="r-stab")
    assert stab["success_level"] == "normal_success"
    roll_at = t.fact("heroSurgeRollDamage", damageId="d", attemptId="s2", roll=dice("1d4", 3))["position"]
    hit_at = t.damage("brin", damageId="d")["position"]
    luck = t.fact("heroSurgeLuckRoll", characterId=t.ch("brin"), context="DYING_DAMAGE", roll=d20(5))
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"]) == (-4, 3)
    t.do("contestRuling", rulingId="r-stab", argument="the cart was between us")
    t.do(
        "resolveRuling",
        rulingId="r-stab",
        outcome="OVERTURNED",
        decision="a limited success",
        value="limited_success",
    )
    assert set(t.orphans()) == {roll_at, hit_at, luck["position"]}
    brin = t.who("brin")
    assert (brin["hitPoints"]["current"], brin["heroSurges"]["current"], brin["lifeState"]) == (
        -1,
        4,
        "DYING",
    )
    t.do("resolveRuling", rulingId="r-stab", outcome="UPHELD", decision="it did land", value="normal_success")
    assert t.orphans() == {} and t.hp("brin") == -4


def test_a_luck_result_taken_from_a_ruling_is_read_again_when_the_ruling_changes(t: Table) -> None:
    """B-HS-2 / ruling 4: the luck roll's result is the table's ruling. Brin at -1 (dying, 4 surges)
    takes 2 more (-3) and owes a luck roll; 5, but ruled lucky (r-luck): no surge lost. Overturned to
    unlucky: a surge, 4 -> 3."""
    t.damage("brin", amount=25)
    t.damage("brin", amount=2)
    t.do("recordRuling", rulingId="r-luck", question="Lucky?", decision="the omen holds", value="lucky")
    out = t.fact(
        "heroSurgeLuckRoll",
        characterId=t.ch("brin"),
        context="DYING_DAMAGE",
        roll=d20(5),
        resultRuling="r-luck",
    )
    assert (out["outcome"]["result"], t.surges("brin")) == ("lucky", 4)
    t.do("resolveRuling", rulingId="r-luck", outcome="OVERTURNED", decision="no omen", value="unlucky")
    assert t.surges("brin") == 3 and t.orphans() == {}


def test_a_readied_attack_is_taken_on_the_foes_turn(t: Table) -> None:
    """HS-4 Ready: readying takes Brin's action (nothing more that turn); triggered on the ogre's turn,
    she acts before it and her attack is the readied action (taking no further action)."""
    t.do("startEncounter", encounterId="bridge", participantIds=[t.ch("brin"), t.ch("ogre")])
    t.check("brin", "MAJOR_SUCCESS", 12)
    t.check("ogre", "NORMAL_SUCCESS", 15)
    assert t.turn() == "brin"
    t.do(
        "heroSurgeReadyAction",
        characterId=t.ch("brin"),
        action="ACTION",
        trigger="the ogre steps on the bridge",
    )
    assert t.refused("heroSurgeTakeAction", characterId=t.ch("brin"), action="ACTION") == [
        ("NO_ACTION_LEFT", "action")
    ]
    t.end()
    assert t.turn() == "ogre"
    t.do("triggerReadiedAction", encounterId=t.enc, characterId=t.ch("brin"), triggerCharacterId=t.ch("ogre"))
    t.attempt("r1", "brin", "NORMAL_SUCCESS", 13, targets=["ogre"], action="NONE")
    t.do("heroSurgeRollDamage", damageId="dr", attemptId="r1", roll=dice("1d8+1", 6))
    assert t.damage("ogre", damageId="dr")["outcome"]["taken"] == 4  # 7 less DR 3: 30 -> 26
    assert t.hp("ogre") == 26
