"""The hero's-surge demo campaign (``chronicle demo --ruleset hero-surge``): the bridge at Kell.

Aldric (a level-1 hero: Con 14, 40 HP, d8, armor DR 2, 4 hero's surges, dead past -20) and Brin (a
level-2 hero: Con 16, 24 HP, d10, 5 surges, dead past -16) hold a bridge against an ogre (30 HP,
DR 3) and two goblins (10 HP). Every success level is the table's ruling (B-HS-1, ruling 4); every
number is worked from RULES.md A2 / B-HS:

* a surprise round (HS-3: its own initiative check; the surprised goblins take no turn) and a new
  check every round, ordered in success-level bands, heroes first, then the higher die, the foes
  of a band ordered by the GM (HS-2, B-HS-18);
* Brin's critical success with a natural 20 knocks the ogre's initiative back a band this round
  (B-HS-18) and her damage is maximised (B-HS-16: 1d10+4 -> 14, less DR 3: 11); Aldric's major
  success takes Brutal Damage (1d8+2 shows 1; rerolled 1, then 6: 8, less DR 3: 5);
* the ogre's club on Aldric: DR 2 first, then his 5 temporary HP (B-HS-24, HS-11);
* Aldric trades a natural 20 for a Fortune Die (HS-7, B-HS-4);
* Brin defends once against the ogre's two attacks: a natural 1 on a failure, a critical failure
  (HS-7); the GM names the club a critical hit: the maximum, 15 (HS-9, B-HS-19); she spends a
  hero's surge to heal a quarter of her HP (HS-15, B-HS-14);
* a goblin takes her below 0: a surge lost (B-HS-7), dying (HS-14), no luck roll for that blow
  (B-HS-9); the other goblin's stab, whose success the GM rules (``r-stab``), owes a luck roll
  (ruling 25): 9, unlucky: another surge;
* a goblin at exactly 0 HP is unconscious (B-HS-6); the GM orders the foes of a band;
* Aldric's medical attempt, a limited success, gives Brin advantage on her next luck roll (HS-14,
  B-HS-3); at the start of her turn she owes one (ruling 25): 2d20kh1 (3, 12): lucky;
* after the fight a healer's kit makes her stable (B-HS-10); the ruling on the stab is contested and
  overturned (a limited success: no damage), so the stab's damage and its luck roll are *orphaned*;
* a cursed well drains Brin's surges below zero: with none left she loses a quarter of her HP (6)
  and her surges go negative (HS-16, B-HS-8); a long rest restores HP and surges (B-HS-12,
  B-HS-21); Aldric reaches level 2 (ruling 22; HS-13 / B-HS-17 with a Con swap: +7 HP; HS-15:
  a fifth surge).

Deterministic: every die face is given, every ``recorded_at`` is fixed, so the exports are
byte-identical on every run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from api.rulesets.hero_surge.commands import HeroSurgeCommands
from api.service.application import ChronicleApplication

__all__ = ["DEMO_NAME", "ENCOUNTER", "create_demo"]

DEMO_NAME = "Hero's-surge demo: The Bridge at Kell"
START = datetime(2025, 10, 4, 19, 0, tzinfo=UTC)
STEP = timedelta(seconds=40)
ENCOUNTER = "bridge"
GM = "gm"
CAST = ["aldric", "brin", "ogre", "g1", "g2"]


class _Clock:
    def __init__(self) -> None:
        self.now = START

    def meta(self) -> dict[str, Any]:
        self.now += STEP
        return {"recorded_by": GM, "recorded_at": self.now.isoformat()}


def create_demo(app: ChronicleApplication) -> UUID:
    """Record the demo campaign on ``app``'s store; return its id."""
    clock = _Clock()
    cid = app.create_campaign(
        DEMO_NAME, ruleset="hero-surge", meta={"recorded_by": GM, "recorded_at": START.isoformat()}
    )

    h = HeroSurgeCommands(app, meta=clock.meta)

    def fact(fact_type: str, **payload: Any) -> Any:
        return h.record(cid, fact_type, payload)

    def roll(expression: str, *faces: int) -> dict[str, Any]:
        return app.roll(expression, faces=list(faces))

    def checks(*rows: tuple[str, str, int]) -> None:
        for who, level, face in rows:
            h.check_initiative(cid, ENCOUNTER, who, level, face)

    def attempt(aid: str, who: str, level: str, face: int, kind: str = "attack", **more: Any) -> Any:
        return h.attempt(cid, aid, who, level, face=face, kind=kind, **more)

    def turn(who: str) -> None:
        fact("TurnStarted", encounter_id=ENCOUNTER, creature=who)

    def end() -> None:
        fact("TurnEnded", encounter_id=ENCOUNTER)

    fact("NoteAdded", text="The bridge at Kell, at dusk. An ogre and two goblins come out of the reeds.")
    sheets = {
        "aldric": {
            "kind": "pc",
            "level": 1,
            "con_score": 14,
            "max_hp": 40,
            "hit_die": 8,
            "damage_reduction": 2,
        },
        "brin": {"kind": "pc", "level": 2, "con_score": 16, "max_hp": 24, "hit_die": 10},
        "ogre": {"kind": "monster", "level": 3, "con_score": 16, "max_hp": 30, "damage_reduction": 3},
        "g1": {"kind": "monster", "level": 1, "con_score": 10, "max_hp": 10},
        "g2": {"kind": "monster", "level": 1, "con_score": 10, "max_hp": 10},
    }
    names = {"aldric": "Aldric", "brin": "Brin", "ogre": "Ogre", "g1": "Goblin Scout", "g2": "Goblin Sneak"}
    for cid_, sheet in sheets.items():
        fact("CreatureRegistered", creature_id=cid_, name=names[cid_], **sheet)
    # A potion of heroism before the fight: 5 temporary HP until a long rest (HS-11).
    fact("TemporaryHitPointsGranted", target="aldric", amount=5, source="a potion of heroism")
    fact(
        "RulingRecorded",
        ruling_id="r-stab",
        question="Does the sneak's stab get past Brin's guard? (its success level, B-HS-1)",
        decision="Yes: a normal success.",
        value="normal_success",
    )

    # --- the surprise round (HS-3): its own check; the goblins are surprised -------------------
    fact("EncounterStarted", encounter_id=ENCOUNTER, name="The bridge at Kell", participants=CAST)
    fact("SurpriseDetermined", encounter_id=ENCOUNTER, surprised=["g1", "g2"])
    # bands: major: Brin (hero), the ogre; normal: Aldric (hero), the scout; failure: the sneak
    checks(
        ("brin", "major_success", 9),
        ("ogre", "major_success", 14),
        ("aldric", "normal_success", 11),
        ("g1", "normal_success", 17),
        ("g2", "failure", 3),
    )
    turn("brin")
    # a critical success with a natural 20 (HS-8): she keeps it, and knocks the ogre's initiative
    # back one band this round (it has not acted, B-HS-18): after Aldric and the scout.
    attempt("b1", "brin", "critical_success", 20, targets=["ogre"])
    fact("DevastatingEffectChosen", attempt_id="b1", option="knock_initiative_back", target="ogre")
    # 1d10+4 (3) maximised: 14 (B-HS-16); DR 3: 11; the ogre 30 -> 19
    fact("DamageRolled", damage_id="d1", attempt_id="b1", roll=roll("1d10+4", 3))
    fact("DamageApplied", target="ogre", damage_id="d1")
    end()
    turn("aldric")
    # a major success with Brutal Damage (HS-8, B-HS-16): 1d8+2 (1), rerolled: 1 (kept 1), 6: 8;
    # DR 3: 5; the ogre 19 -> 14
    attempt("a1", "aldric", "major_success", 15, targets=["ogre"])
    fact("HamperingEffectChosen", attempt_id="a1", option="brutal_damage")
    fact("DamageRolled", damage_id="d2", attempt_id="a1", roll=roll("1d8+2", 1))
    h.reroll(cid, "d2", 0, 1)
    h.reroll(cid, "d2", 0, 6)
    fact("DamageApplied", target="ogre", damage_id="d2")
    end()
    turn("ogre")  # (the surprised scout takes no turn in the surprise round)
    # the club: 2d6+3 (4, 4) = 11; DR 2: 9; the 5 temporary HP first: Aldric 40 -> 36 (B-HS-24)
    attempt("o1", "ogre", "normal_success", 13, targets=["aldric"])
    fact("DamageRolled", damage_id="d3", attempt_id="o1", roll=roll("2d6+3", 4, 4))
    fact("DamageApplied", target="aldric", damage_id="d3")
    end()

    # --- round 1 --------------------------------------------------------------------------------
    checks(
        ("aldric", "critical_success", 18),
        ("ogre", "major_success", 15),
        ("brin", "normal_success", 12),
        ("g1", "normal_success", 12),
        ("g2", "limited_success", 4),
    )
    turn("aldric")
    # a natural 20 traded for a Fortune Die: a normal success (HS-7, B-HS-4); 1d8+2 (5) = 7 on the
    # scout: 10 -> 3
    attempt("a2", "aldric", "critical_success", 20, targets=["g1"])
    fact("FortuneDieExchanged", attempt_id="a2")
    fact("DamageRolled", damage_id="d4", attempt_id="a2", roll=roll("1d8+2", 5))
    fact("DamageApplied", target="g1", damage_id="d4")
    end()
    turn("ogre")
    # two attacks on Brin, one defense roll (HS-9): a natural 1 on a failure is a critical failure
    # (HS-7); the GM names the club a critical hit (B-HS-19): the maximum 2d6+3 = 15: 24 -> 9; the
    # fist 1d6 (4): 9 -> 5
    fact("ActionTaken", encounter_id=ENCOUNTER, creature="ogre", action="action", name="club and fist")
    attempt("bd", "brin", "failure", 1, kind="defense")
    fact("MultiAttackDefenseResolved", defense_attempt_id="bd", incoming=["club", "fist"], crit=["club"])
    fact("DamageApplied", target="brin", roll=roll("2d6+3", 2, 3), attack="club")
    fact("DamageApplied", target="brin", roll=roll("1d6", 4), attack="fist")
    end()
    turn("brin")
    # a hero's surge for healing (an action; once an hour): a quarter of 24 = 6: 5 -> 11; 5 -> 4
    fact("HeroSurgeSpent", creature="brin", purpose="healing")
    end()
    turn("g1")
    # 2d6 (6, 6) = 12: 11 -> -1: from above 0 to below: a surge lost (B-HS-7: 4 -> 3), dying; the
    # blow that starts dying owes no luck roll (B-HS-9)
    attempt("s1", "g1", "normal_success", 14, targets=["brin"])
    fact("DamageRolled", damage_id="d5", attempt_id="s1", roll=roll("2d6", 6, 6))
    fact("DamageApplied", target="brin", damage_id="d5")
    end()
    turn("g2")
    # the sneak's stab, its success as the GM ruled it (r-stab): 1d4 (2): -1 -> -3; damage while
    # dying owes a luck roll (B-HS-9, ruling 25): 9 is unlucky (lucky on 10+, B-HS-2): 3 -> 2
    fact(
        "AttemptRolled",
        attempt_id="s2",
        creature="g2",
        kind="attack",
        targets=["brin"],
        roll=roll("1d20", 11),
        success_level="normal_success",
        rulings={"success_level": "r-stab"},
    )
    fact("DamageRolled", damage_id="d6", attempt_id="s2", roll=roll("1d4", 2))
    fact("DamageApplied", target="brin", damage_id="d6")
    fact("LuckRollMade", creature="brin", context="dying_damage", roll=roll("1d20", 9))
    end()

    # --- round 2 --------------------------------------------------------------------------------
    checks(
        ("aldric", "major_success", 14),
        ("g1", "normal_success", 9),
        ("ogre", "normal_success", 8),
        ("brin", "failure", 6),
        ("g2", "critical_failure", 1),
    )
    # the foes of the normal band, as the GM orders them (HS-2 PROPOSAL): the ogre before the scout
    fact("InitiativeOrderChosen", encounter_id=ENCOUNTER, creatures=["ogre", "g1"], decided_by="gm")
    turn("aldric")
    # a medical attempt on the dying Brin, a limited success: advantage on her next luck roll (HS-14)
    attempt("m1", "aldric", "limited_success", 8, kind="medical", targets=["brin"])
    fact("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m1")
    fact("ActionTaken", encounter_id=ENCOUNTER, creature="aldric", action="move", name="to Brin's side")
    end()
    turn("ogre")
    # a limited success: the club misses, but a Hampering Effect: a rank penalty on Aldric (B-HS-5)
    attempt("o2", "ogre", "limited_success", 9, targets=["aldric"])
    fact("HamperingEffectChosen", attempt_id="o2", option="rank_penalty", target="aldric")
    end()
    turn("g1")
    # the scout charges Aldric: 1d20 (2), a failure; Aldric's counter: 1d8+2 (1) = 3: 3 -> 0,
    # unconscious at exactly 0 (B-HS-6)
    attempt("s3", "g1", "failure", 2, targets=["aldric"])
    fact("DamageApplied", target="g1", roll=roll("1d8+2", 1), source="Aldric's counter")
    end()
    turn("brin")  # dying at the start of her own turn: a luck roll is owed (ruling 25)
    # with advantage: 2d20kh1 (3, 12): 12, lucky: nothing lost
    h.luck_roll(cid, "brin", "dying_turn_start", [3, 12])
    end()
    turn("g2")
    end()
    fact("EncounterEnded", encounter_id=ENCOUNTER, outcome="The ogre drags the scout into the reeds.")

    # --- after the fight ------------------------------------------------------------------------
    fact("HealersKitUsed", healer="aldric", target="brin")  # dying ends: stable (B-HS-10)
    fact("RulingContested", ruling_id="r-stab", by="Brin's player", argument="The cart was between us.")
    fact(
        "RulingResolved",
        ruling_id="r-stab",
        outcome="overturned",
        decision="The stab was only a limited success: it did not land.",
        value="limited_success",
    )
    # the stab did not land: its damage and the luck roll it owed are orphaned; Brin is at -1 with
    # 3 surges. The cursed well drains three: 2, 1, 0, then none to lose: a quarter of her HP (6):
    # -1 -> -7 and a negative surge (HS-16, B-HS-8); still above -16.
    fact("TimeAdvanced", minutes=30)
    for _ in range(4):
        fact("HeroSurgeDrained", creature="brin", source="the cursed well")
    fact("NoteAdded", text="They camp in the toll-house.")
    fact("RestTaken", kind="long", hours=8)  # HP and surges full (B-HS-12, B-HS-21)
    # Aldric reaches level 2 (ruling 22): 2d8 (2, 3) and two Con dice (Con 14: +2) (7, 1); the 7 is
    # swapped in for the 2: (7, 3): a die of 4 or more: the higher, 7 (HS-13, B-HS-17): 40 -> 47;
    # surges 4 -> 5 (HS-15)
    h.gain_level(cid, "aldric", 2, [2, 3], con_extra=[7, 1], swaps=[{"extra": 0, "pair": 0}])
    return cid
