"""The d20 house rules' demo campaign (``chronicle demo --ruleset d20``): an ambush at a ford.

Kara (a level 8 warrior) and Tam (a level 3 cleric) are surprised by a gnoll and an ogre. It
shows, with every number worked from RULES.md A3:

* the surprise round (B-DH-11: one standard action each; the surprised take no turn) and
  flat-footed (DH-2): the gnoll's axe hits Kara's flat-footed AC 15, which her Agility would
  have made 16; Kara makes no attack of opportunity until her first turn;
* ability damage (B-DH-9, ruling 26): the gnoll's venom takes 2 Stamina; S 16 -> 14, B 3 -> 2,
  her hit points unchanged, her thresholds moved;
* a confirmed critical (DH-7, B-DH-5: the weapon's dice and static modifiers twice, the rune's
  extra die once) that deals 50: a massive-damage save (B-DH-1), owed before the ogre's turn
  can end, which Kara makes;
* a dying cleric (DH-10, DH-12): stabilisation rolls (d%) right after the last turn of each
  round (ruling 26), failing twice, then Kara's Heal check (DC 10 + |HP|, B-DH-6);
* a disabled gnoll's strenuous attack (DH-11, B-DH-8: 1 HP after the action) whose damage,
  1 + 1 - 2 = 0, is raised to the minimum of 1 (B-DH-12); later it is dying, rolls its d% in
  the round it began dying, and stabilises;
* Kara's attack of opportunity (B-DH-14) on the ogre lumbering past, a natural 1 (DH-7);
* a ruling ("does the ogre's downhill swing add +2 damage?") cited by the critical's damage,
  contested and overturned after the fight: the critical deals 48, below the threshold, so
  the massive-damage save is *orphaned* (no attack owes it any more);
* healing and a night's sleep that returns the lost Stamina (DH-14).

Deterministic: every die face is given, every ``recorded_at`` is fixed, so the exports are
byte-identical on every run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from api.rulesets.d20_house.commands import D20Commands
from api.service.application import ChronicleApplication

__all__ = ["DEMO_NAME", "ENCOUNTER", "create_demo"]

DEMO_NAME = "d20 demo: Ambush at the Ford"
START = datetime(2025, 6, 14, 19, 0, tzinfo=UTC)
STEP = timedelta(seconds=40)
ENCOUNTER = "ford-ambush"
GM = "gm"

LONGSWORD = {"name": "longsword +1", "kind": "melee", "enhancement": 1}
AXE = {"name": "battleaxe", "kind": "melee"}
GREATCLUB = {"name": "greatclub +2", "kind": "melee", "grip": "two_hands", "enhancement": 2}


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
        DEMO_NAME, ruleset="d20", meta={"recorded_by": GM, "recorded_at": START.isoformat()}
    )
    d = D20Commands(app, meta=clock.meta)

    def fact(fact_type: str, **payload: Any) -> int:
        return d.record(cid, fact_type, payload).position

    def start_turn(who: str) -> None:
        fact("TurnStarted", encounter_id=ENCOUNTER, creature=who)

    def end_turn() -> None:
        fact("TurnEnded", encounter_id=ENCOUNTER)

    fact("NoteAdded", text="Dusk at the Greywater ford. Kara and Tam wade across with the ferryman's toll.")
    # Kara: AC 10 + 4 + 1 + 1 (Agility) = 16; S 16, B 3 (disabled 0..-3, dying -4..-16).
    d.register_creature(
        cid,
        "Kara",
        level=8,
        max_hp=62,
        bab=[8, 3],
        abilities={"str": 16, "stamina": 16, "agility": 12},
        base_saves={"fort": 6, "ref": 2, "will": 2},
        armor=4,
        shield=1,
        **{"class": "warrior"},
    )
    # Tam: AC 14; S 12, B 1 (disabled 0..-1, dying -2..-12).
    d.register_creature(
        cid,
        "Tam",
        level=3,
        max_hp=18,
        bab=[2],
        abilities={"str": 8, "stamina": 12, "spirit": 14},
        base_saves={"fort": 3, "ref": 1, "will": 3},
        armor=4,
        **{"class": "cleric"},
    )
    d.register_creature(
        cid,
        "Gnoll",
        kind="monster",
        level=1,
        max_hp=11,
        bab=[2],
        abilities={"str": 12, "stamina": 12},
        armor=3,
    )
    d.register_creature(
        cid,
        "Ogre",
        kind="monster",
        level=4,
        max_hp=60,
        bab=[9, 4],
        abilities={"str": 20, "stamina": 16, "agility": 8},
        base_saves={"fort": 6, "ref": 0, "will": 1},
        armor=3,
    )

    # --- the ambush: surprise and initiative (DH-1, DH-3) --------------------------------------
    fact(
        "EncounterStarted",
        encounter_id=ENCOUNTER,
        name="Ambush at the ford",
        participants=["kara", "tam", "gnoll", "ogre"],
    )  # everyone flat-footed until their first turn (DH-2)
    fact("SurpriseDetermined", encounter_id=ENCOUNTER, surprised=["kara", "tam"])
    # gnoll 15 + 0, ogre 13 - 1, Kara 10 + 1, Tam 8 + 0: gnoll, ogre, Kara, Tam
    for who, face in (("gnoll", 15), ("ogre", 13), ("kara", 10), ("tam", 8)):
        fact("InitiativeRolled", encounter_id=ENCOUNTER, creature=who, roll=app.roll("1d20", faces=[face]))
    fact(
        "RulingRecorded",
        ruling_id="r-downhill",
        question="Does the ogre's swing down the steep bank add +2 damage?",
        decision="Yes: it swings from the top of the bank.",
        value=True,
    )

    # --- the surprise round: one standard action each; Kara and Tam take no turn --------------
    start_turn("gnoll")
    # 12 + 2 + 1 = 15 vs Kara's flat-footed AC 15 (16 with her Agility): a hit; 1d8 (5) + 1 = 6
    a = d.attack(cid, "gnoll", "kara", face=12, weapon=AXE).position
    d.damage(cid, a, "1d8", faces=[5])
    d.damage_ability(cid, "kara", "stamina", 2, source="the gnoll's venomed axe")  # S 14, B 2
    end_turn()
    start_turn("ogre")
    # 20 + 9 + 5 + 2 = 36: a threat; confirmation 4 + 16 = 20 vs 15: a critical hit.
    a = d.attack(cid, "ogre", "kara", face=20, weapon=GREATCLUB).position
    d.confirm(cid, a, face=4)
    # 2d8 (8, 7) and again (6, 8) = 29, Strength x1 1/2 (7) and +2 twice = 18, the rune's 1d6 (1)
    # once, +2 downhill (the ruling): 50. Kara 56 -> 6, alive: a DC 15 Fortitude save.
    d.damage(
        cid,
        a,
        "2d8",
        faces=[8, 7],
        crit_faces=[6, 8],
        extra=[("1d6", [1])],
        modifiers=[{"source": "downhill swing", "value": 2, "ruling": "r-downhill"}],
    )
    d.massive_damage_save(cid, "kara", a, face=9)  # 9 + 6 + 2 (Stamina 14) = 17 vs 15: she lives
    end_turn()

    # --- round 1 -------------------------------------------------------------------------------
    start_turn("gnoll")
    a = d.attack(cid, "gnoll", "tam", face=14, weapon=AXE).position  # 14 + 3 = 17 vs 14
    d.damage(cid, a, "1d8", faces=[8])  # 9: Tam 18 -> 9
    end_turn()
    start_turn("ogre")
    a = d.attack(cid, "ogre", "tam", face=8, weapon=GREATCLUB).position  # 8 + 16 = 24 vs 14
    d.damage(cid, a, "2d8", faces=[5, 4])  # 9 + 9 = 18: Tam -9, dying
    end_turn()
    start_turn("kara")  # no longer flat-footed
    a = d.attack(cid, "kara", "gnoll", face=15, weapon=LONGSWORD, full_attack=True).position  # 27 vs 13
    d.damage(cid, a, "1d8", faces=[7])  # 7 + 3 + 1 = 11: the gnoll 11 -> 0, disabled
    d.attack(cid, "kara", "gnoll", face=4, weapon=LONGSWORD, iterative=1)  # 4 + 3 + 3 + 1 = 11: a miss
    end_turn()
    start_turn("tam")  # dying: no action
    end_turn()
    d.stabilize(cid, "tam", face=43, encounter_id=ENCOUNTER, round=1)  # 43 > 12: Tam -10

    # --- round 2 -------------------------------------------------------------------------------
    start_turn("gnoll")
    # disabled: 16 + 2 + 1 - 2 = 17 vs 16, a hit; attacking is strenuous: 0 -> -1 afterwards
    a = d.attack(cid, "gnoll", "kara", face=16, weapon=AXE).position
    d.damage(cid, a, "1d8", faces=[1])  # 1 + 1 - 2 = 0: at least 1. Kara 6 -> 5
    end_turn()
    start_turn("ogre")
    d.take_action(cid, "ogre", "move", name="lumbers past Kara toward Tam")
    # Kara's attack of opportunity: 12 + 8 + 3 + 1 = 24 vs the ogre's AC 12; 1d8 (6) + 4 = 10
    a = d.attack_of_opportunity(cid, "kara", "ogre", face=12, weapon=LONGSWORD).position
    d.damage(cid, a, "1d8", faces=[6])
    d.attack(cid, "ogre", "kara", face=1, weapon=GREATCLUB)  # a natural 1: a miss
    end_turn()
    start_turn("kara")
    a = d.attack(cid, "kara", "gnoll", face=10, weapon=LONGSWORD).position  # 22 vs 13
    d.damage(cid, a, "1d8", faces=[3])  # 7: the gnoll -1 -> -8, dying
    end_turn()
    start_turn("tam")
    end_turn()
    d.stabilize(cid, "tam", face=88, encounter_id=ENCOUNTER, round=2)  # 88 > 12: Tam -11
    d.stabilize(cid, "gnoll", face=9, encounter_id=ENCOUNTER, round=2)  # 9 <= 12: stable

    # --- round 3 -------------------------------------------------------------------------------
    start_turn("gnoll")  # stable, unconscious: no action
    end_turn()
    start_turn("ogre")
    d.take_action(cid, "ogre", "move", name="wades into the river and flees")
    end_turn()
    start_turn("kara")
    # Heal check: 18 + 4 (Heal ranks) = 22 vs DC 10 + 11 = 21: Tam is stable
    d.heal_check(cid, "kara", "tam", face=18, modifiers=[{"source": "Heal ranks", "value": 4}])
    end_turn()
    fact("EncounterEnded", encounter_id=ENCOUNTER, outcome="The ogre flees downstream; the gnoll is bound.")

    # --- after the fight: the ruling overturned, healing, a night's sleep ----------------------
    fact(
        "RulingContested",
        ruling_id="r-downhill",
        by="Kara's player",
        argument="The ogre stood on the gravel bar, level with Kara: no downhill swing.",
    )
    fact("RulingResolved", ruling_id="r-downhill", outcome="overturned", decision="No bonus: level ground.")
    # the critical now deals 48: no massive-damage save is owed, so Kara's save is orphaned
    d.heal(cid, "tam", "2d8+3", faces=[7, 5], healer="kara", source="potion of cure moderate wounds")
    fact("NoteAdded", text="They camp on the far bank; Tam keeps the fire, Kara sleeps off the venom.")
    d.recover_abilities(cid, ["kara", "tam"], "sleep", 8)  # Kara's Stamina returns: S 16, B 3
    return cid
