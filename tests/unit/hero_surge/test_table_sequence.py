"""A whole fight recorded through ChronicleApplication with every die given, numbers worked by hand
from RULES.md A2 / B-HS, then corrected (a luck roll orphaned), read as of both views, and closed
with a rest and a level-up.

Cast (helpers.SHEETS): aldric (hero, 40 HP, DR 2, d8), brin (hero, level 2, 24 HP, 5 surges,
threshold 16, d10), ogre (monster, 30 HP, DR 3), g1 / g2 (goblins, 10 HP).
"""

from __future__ import annotations

from tests.unit.hero_surge.helpers import HSTable, d20, roll


def test_a_round_of_combat_and_its_correction() -> None:
    t = HSTable()
    for cid in ("aldric", "brin", "ogre"):
        t.add(cid)
    t.add("g1", kind="monster", level=1, con_score=10, max_hp=10)
    t.add("g2", kind="monster", level=1, con_score=10, max_hp=10)

    # Round 1 initiative (HS-2): ruled levels; heroes first in a band, then the higher die.
    checks = {"ogre": ("major_success", 14), "aldric": ("normal_success", 11), "brin": ("major_success", 9),
              "g1": ("normal_success", 17), "g2": ("failure", 3)}  # fmt: skip
    assert t.fight(checks)["order"] == ["brin", "ogre", "aldric", "g1", "g2"]
    assert t.start()["turn_of"] == "brin"

    # Brin: a critical success with a 20 on the ogre; she keeps it (no Fortune Die) and knocks the
    # ogre's initiative back a band (it has not acted): normal band, after aldric, after g1 (17 > 14).
    out = t.attempt("b1", "brin", "critical_success", 20, bonus=5, targets=["ogre"])
    assert out["may_exchange_for_fortune_die"] and out["dm_may_call_luck_roll"]
    t.rec("DevastatingEffectChosen", attempt_id="b1", option="knock_initiative_back", target="ogre")
    assert t.enc()["order"] == ["brin", "aldric", "g1", "ogre", "g2"]
    # Her 1d10+4 (3) is maximised: 14; the ogre's DR 3: 11; 30 -> 19 (B-HS-16, B-HS-24).
    t.rec("DamageRolled", damage_id="d1", attempt_id="b1", roll=roll("1d10+4", 3))
    assert t.damage("ogre", damage_id="d1")["taken"] == 11 and t.hp("ogre") == 19
    t.end()
    assert t.start()["turn_of"] == "aldric"

    # Aldric: a major success on g1, Brutal Damage. 1d8+2 shows 1; rerolls: 1 (not higher), 6 (kept): 8.
    t.attempt("a1", "aldric", "major_success", 15, bonus=4, targets=["g1"])
    t.rec("HamperingEffectChosen", attempt_id="a1", option="brutal_damage")
    t.rec("DamageRolled", damage_id="d2", attempt_id="a1", roll=roll("1d8+2", 1))
    t.rec("DiceRerolled", roll_id="d2", die_index=0, new_face=1)
    t.rec("DiceRerolled", roll_id="d2", die_index=0, new_face=6)
    t.damage("g1", damage_id="d2")
    assert t.hp("g1") == 2
    t.end()
    assert t.start()["turn_of"] == "g1"

    # g1, the ogre and g2 attack brin together; one defense roll: a natural 1 on a failure is a
    # critical failure (HS-7): nothing blocked, the GM names the ogre's attack a crit (B-HS-19).
    assert t.attempt("def1", "brin", "failure", 1, kind="defense")["success_level"] == "critical_failure"
    t.rec(
        "MultiAttackDefenseResolved",
        defense_attempt_id="def1",
        incoming=["g1-x", "ogre-x", "g2-x"],
        crit=["ogre-x"],
    )
    # The ogre's 2d6+3 (2, 3) as a crit against a hero: maximum 15, armor bypassed: 24 -> 9.
    assert t.damage("brin", roll=roll("2d6+3", 2, 3), attack="ogre-x")["amount"] == 15
    t.damage("brin", roll=roll("1d6", 4), attack="g1-x")  # 9 -> 5
    g2_hit = t.position + 1
    out = t.damage("brin", roll=roll("1d6", 6), attack="g2-x")  # 5 -> -1: a surge lost, dying
    assert out["after"] == {"hp": -1, "temp_hp": 0, "hero_surges": 4, "life": "dying"}
    assert t.v("brin")["luck_rolls_owed"] == []  # the damage that starts dying owes none (B-HS-9)
    for _ in ("ogre", "g2"):
        t.end()
        t.start()
    t.end()

    # Round 2 (HS-2: new checks). g2 first; brin, dying, checks too (her turn will owe a luck roll).
    for cid, level in {"g2": "critical_success", "aldric": "major_success", "brin": "failure"}.items():
        t.check(cid, level, 10)
    t.check("ogre", "critical_failure", 2)
    t.check("g1", "critical_failure", 1)
    assert t.start()["turn_of"] == "g2"
    # g2 stabs the dying brin: 2 damage (-3) and a luck roll owed; 9 is unlucky (B-HS-2):
    # a surge lost (3).
    stab = t.rec("DamageApplied", target="brin", roll=roll("1d4", 2)).position
    luck = t.rec("LuckRollMade", creature="brin", context="dying_damage", roll=d20(9)).position
    assert t.surges("brin") == 3
    # Aldric's healer's kit ends dying (stable); a potion of 5 brings her to 2 HP, awake.
    t.end()
    assert t.start()["turn_of"] == "aldric"
    t.rec("HealersKitUsed", healer="aldric", target="brin")
    t.rec("HealingApplied", target="brin", amount=5, source="potion")
    v = t.v("brin")
    assert (v["hit_points"]["current"], v["hero_surges"], v["life"]) == (2, 3, "active")

    # Correction: the stab hit g1, not brin. Revoked, the luck roll is owed no more: orphaned
    # (ruling 25), its surge comes back; the kit still finds brin dying at -1.
    t.app.revoke(t.cid, stab, "it hit g1")
    assert list(t.orphans()) == [str(luck)]
    v = t.v("brin")
    assert (v["hit_points"]["current"], v["hero_surges"], v["life"]) == (4, 4, "active")
    # As of the luck roll: what the table believed, and what we now know.
    believed, known = t.v("brin", luck, "recorded"), t.v("brin", luck, "corrected")
    assert (believed["hit_points"]["current"], believed["hero_surges"]) == (-3, 3)
    assert (known["hit_points"]["current"], known["hero_surges"], known["life"]) == (-1, 4, "dying")
    assert t.v("brin", g2_hit)["life"] == "dying"

    # After the fight: a long rest (B-HS-12, B-HS-21), then brin reaches level 3 with two 1s:
    # rerolls 1, 7: 7 + three 1s = 10 (HS-13): max HP 34.
    t.end()
    t.rec("EncounterEnded", encounter_id="e1")
    t.rec("RestTaken", kind="long", hours=8)
    assert (t.hp("brin"), t.surges("brin")) == (24, 5)
    out = t.out(
        "LevelGained", creature="brin", new_level=3, hit_dice=roll("2d10", 1, 1), rerolls=roll("2d10", 1, 7)
    )
    assert (out["gain"], out["max_hp"], out["after"]["hp"]) == (10, 34, 34)
