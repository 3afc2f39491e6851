"""The Orcus demo campaign (``chronicle demo --ruleset orcus``): the ogre's den.

Mira and Tam (level 3 heroes, 2,250 XP) face an ogre (an elite) and a goblin. Every number is
worked from RULES.md A4 / B-OR and the A4.9 placeholders (bloodied at floor(max HP / 2), a surge
worth floor(max HP / 4), a dying hero dead at minus its bloodied value):

* Mira's Radiant Lance misses the ogre (12 vs Reflex 13), and its Miss effect (OR-12) gives the
  ogre -2 to attacks until the end of Mira's next turn; she spends her action point (OR-7) for a
  Strike (19 vs AC 16, 9 damage) and takes a swift action (OR-6);
* the ogre's Fire Breath (recharge 5-6): a natural 20 on Mira is a critical hit for the maximum
  2d6+4 = 16 plus 3 critical hit bonus damage rolled for her (OR-11, B-OR-4, B-OR-5); Tam is hit
  for the rolled 11 (damage rolled once, OR-13); both burn (persistent 5 fire, save ends) with a
  First Failed Save rider (dazed, B-OR-12);
* persistent damage at the start of each turn (OR-6, ruling 20) and saves at the end (OR-19):
  Tam's first save fails (the rider: dazed), Mira's succeeds (her rider never applies);
* Tam's Warding Zone (-2 to the ogre's attacks) is maintained with a swift action on the turn it
  is created (B-OR-8, ruling 24), and lapses at the end of Tam's next turn without a maintain;
* a goblin's spear, +2 because the GM rules Tam flanked (off-guard, A4.6, the ruling
  ``r-flank``), takes Tam to 0 HP: dying; death saves (A4.9): 7 fails, then a natural 20 spends a
  surge (-5 -> 0 -> 6);
* the ogre's recharge rolls (B-OR-17): 4 (no), then 6 (recharged); Mira's Rally (OR-9) and a
  goblin slain;
* after the fight the ruling is contested and overturned: the spear's 16 misses AC 17, Tam never
  fell, and both death saves are *orphaned* (Tam is not dying);
* a short rest (encounter and recharge powers back, OR-9), healing surges (A4.9), and 1,500 XP
  that takes both heroes to level 4 (3,750 XP, A4.2, ruling 22).

Deterministic: every die face is given, every ``recorded_at`` is fixed, so the exports are
byte-identical on every run.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from api.rulesets.orcus.commands import OrcusCommands
from api.service.application import ChronicleApplication

__all__ = ["DEMO_NAME", "ENCOUNTER", "create_demo"]

DEMO_NAME = "Orcus demo: The Ogre's Den"
START = datetime(2025, 9, 20, 19, 0, tzinfo=UTC)
STEP = timedelta(seconds=40)
ENCOUNTER = "ogres-den"
GM = "gm"

HERO_DEFENSES = {"ac": 17, "fort": 14, "ref": 15, "will": 13}
BURNING = {
    "name": "burning",
    "on": "hit",
    "components": [{"persistent": {"type": "fire", "amount": 5}}],
    "duration": {"kind": "save_ends"},
    "first_failed_save": {"components": [{"condition": "dazed"}], "instead": False, "name": "burning, dazed"},
}
LANCE = {
    "name": "Radiant Lance",
    "power_id": "lance",
    "kind": "ranged",
    "defense": "ref",
    "attack_bonus": 5,
    "damage": "1d10+3",
    "damage_types": ["radiant"],
    "effects": [
        {
            "name": "dazzled",
            "on": "miss",
            "components": [{"attack_mod": {"value": -2}}],
            "duration": {"kind": "end_of_user_next"},
        }
    ],
}
STRIKE = {
    "name": "Strike",
    "power_id": "strike",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 5,
    "damage": "1d8+3",
}
BREATH = {
    "name": "Fire Breath",
    "power_id": "breath",
    "kind": "far",
    "defense": "ref",
    "attack_bonus": 6,
    "damage": "2d6+4",
    "damage_types": ["fire"],
    "effects": [BURNING],
}
CLUB = {
    "name": "Club",
    "power_id": "club",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 7,
    "damage": "2d6+4",
}
SPEAR = {
    "name": "Spear",
    "power_id": "spear",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 4,
    "damage": "1d6+2",
}
WARD = {
    "name": "Warding Zone",
    "components": [{"attack_mod": {"value": -2}}],
    "duration": {"kind": "maintain", "action": "swift"},
}


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
        DEMO_NAME, ruleset="orcus", meta={"recorded_by": GM, "recorded_at": START.isoformat()}
    )
    o = OrcusCommands(app, meta=clock.meta)

    def fact(fact_type: str, **payload: Any) -> Any:
        return o.record(cid, fact_type, payload)

    def start_turn(who: str) -> None:
        fact("TurnStarted", encounter_id=ENCOUNTER, creature=who)

    def end_turn() -> None:
        fact("TurnEnded", encounter_id=ENCOUNTER)

    def effect_on(attack: Any, target: str) -> str:
        hit = next(t for t in attack.outcome["targets"] if t["target"] == target)
        return str(hit["effects"][0]["effect_id"])

    fact("NoteAdded", text="The ogre's den under the old mill. Mira and Tam step into the firelight.")
    # Mira: 30 HP (bloodied 15, surge 7, dies at -15); Tam: 24 HP (bloodied 12, surge 6, dies at -12).
    o.register_creature(
        cid,
        "Mira",
        max_hp=30,
        xp=2250,
        surges_per_day=6,
        defenses=HERO_DEFENSES,
        powers=[
            {"id": "strike", "name": "Strike", "frequency": "at_will"},
            {"id": "lance", "name": "Radiant Lance", "frequency": "encounter"},
        ],
    )
    o.register_creature(
        cid,
        "Tam",
        max_hp=24,
        xp=2250,
        surges_per_day=6,
        defenses=HERO_DEFENSES,
        powers=[{"id": "ward", "name": "Warding Zone", "frequency": "encounter"}],
    )
    o.register_creature(
        cid,
        "Ogre",
        kind="elite",
        level=4,
        max_hp=52,
        action_points=1,
        defenses={"ac": 16, "fort": 17, "ref": 13, "will": 12},
        resist={"fire": 5},
        powers=[
            {"id": "breath", "name": "Fire Breath", "frequency": "recharge", "recharge": [5, 6]},
            {"id": "club", "name": "Club", "frequency": "at_will"},
        ],
    )
    o.register_creature(
        cid,
        "Goblin",
        kind="monster",
        level=1,
        max_hp=10,
        defenses={"ac": 15, "fort": 12, "ref": 14, "will": 11},
        powers=[{"id": "spear", "name": "Spear", "frequency": "at_will"}],
    )
    fact(
        "RulingRecorded",
        ruling_id="r-flank",
        question="Do the ogre and the goblin flank Tam by the millstone (off-guard, +2)?",
        decision="Yes: Tam is off-guard to the goblin.",
        value=True,
    )

    # --- initiative (OR-5, B-OR-2: d20 + the modifier the table gives) ------------------------
    fact(
        "EncounterStarted",
        encounter_id=ENCOUNTER,
        name="The ogre's den",
        participants=["mira", "tam", "ogre", "goblin"],
    )
    # Mira 15 + 4 = 19, the ogre 17 + 1 = 18, Tam 10 + 2 = 12, the goblin 8 + 3 = 11
    for who, face, plus in (("mira", 15, 4), ("ogre", 17, 1), ("tam", 10, 2), ("goblin", 8, 3)):
        fact(
            "InitiativeRolled",
            encounter_id=ENCOUNTER,
            creature=who,
            roll=app.roll(f"1d20+{plus}", faces=[face]),
        )

    # --- round 1 -------------------------------------------------------------------------------
    start_turn("mira")
    # Radiant Lance: 7 + 5 = 12 vs Reflex 13: a miss; Miss: the ogre has -2 to attacks until the
    # end of Mira's next turn (OR-12). The encounter power is expended (OR-9).
    o.attack(cid, "mira", LANCE, [{"target": "ogre", "face": 7}], roll_damage=False, action="standard")
    o.spend_action_point(cid, "mira", "standard")  # OR-7: one more standard action
    # Strike: 14 + 5 = 19 vs AC 16; 1d8 (6) + 3 = 9: the ogre 52 -> 43
    o.attack(cid, "mira", STRIKE, [{"target": "ogre", "face": 14}], damage_faces=[6], action="standard")
    o.take_action(cid, ENCOUNTER, "mira", "swift", name="shouts to Tam to raise the ward")
    end_turn()

    start_turn("ogre")
    # Fire Breath (far, vs Reflex, +6 - 2 dazzled). Mira: a natural 20, a critical hit whatever
    # the total: the maximum 2d6+4 = 16 plus 1d6 (3) bonus rolled for her = 19: 30 -> 11.
    # Tam: 12 + 6 - 2 = 16 vs Reflex 15: a hit for the rolled 2 + 5 + 4 = 11: 24 -> 13.
    breath = o.attack(
        cid,
        "ogre",
        BREATH,
        [{"target": "mira", "face": 20, "crit_bonus": ("1d6", [3])}, {"target": "tam", "face": 12}],
        damage_faces=[2, 5],
        action="standard",
    )
    mira_burn, tam_burn = effect_on(breath, "mira"), effect_on(breath, "tam")
    end_turn()  # used this turn: no recharge roll yet (B-OR-17)

    start_turn("tam")  # persistent fire 5: 13 -> 8
    o.use_power(cid, "tam", "ward", action="standard")
    ward = o.apply_effect(cid, "ogre", "tam", WARD).outcome["effect_id"]
    o.maintain(cid, ward, "swift")  # B-OR-8: paid on the turn it is created too
    o.save(cid, "tam", tam_burn, face=6)  # 6 < 10: fails; the first failure applies the rider: dazed
    end_turn()

    start_turn("goblin")
    # Spear: 12 + 4 + 2 (off-guard, ruling r-flank) = 18 vs AC 17; 1d6 (6) + 2 = 8: Tam 8 -> 0, dying
    o.attack(
        cid,
        "goblin",
        SPEAR,
        [{"target": "tam", "face": 12, "circumstances": [{"name": "target_off_guard", "ruling": "r-flank"}]}],
        damage_faces=[6],
        action="standard",
    )
    end_turn()

    # --- round 2 -------------------------------------------------------------------------------
    start_turn("mira")  # persistent fire 5: 11 -> 6
    o.rally(cid, "mira")  # OR-9 once per encounter; A4.9: a surge, +7: 6 -> 13
    o.save(cid, "mira", mira_burn, face=13)  # 13: the fire ends; its rider never applies (B-OR-12)
    end_turn()  # the Miss effect on the ogre ends (the end of Mira's next turn)

    start_turn("ogre")
    o.recharge(cid, "ogre", "breath", face=4)  # 4: not 5 or 6, still expended
    # Club: 9 + 7 - 2 (Tam's ward) = 14 vs AC 17: a miss
    o.attack(cid, "ogre", CLUB, [{"target": "mira", "face": 9}], roll_damage=False, action="standard")
    end_turn()

    start_turn("tam")  # dying, unconscious; persistent fire 5: 0 -> -5 (dead at -12)
    o.save(cid, "tam", tam_burn, face=11)  # 11: the fire ends
    o.death_save(cid, "tam", face=7)  # 7 < 10: the first failure
    end_turn()  # the ward was not maintained this turn: it lapses (OR-18)

    start_turn("goblin")
    o.attack(cid, "goblin", SPEAR, [{"target": "mira", "face": 5}], roll_damage=False, action="standard")  # 9
    end_turn()

    # --- round 3 -------------------------------------------------------------------------------
    start_turn("mira")
    # Strike: 15 + 5 = 20 vs AC 15; 1d8 (7) + 3 = 10: the goblin 10 -> 0, dead (A4.9: monsters)
    o.attack(cid, "mira", STRIKE, [{"target": "goblin", "face": 15}], damage_faces=[7], action="standard")
    end_turn()
    start_turn("ogre")  # (the dead goblin takes no more turns)
    o.recharge(cid, "ogre", "breath", face=6)  # 6: recharged
    o.take_action(cid, ENCOUNTER, "ogre", "move", name="flees up the mill race")
    end_turn()
    start_turn("tam")
    # a natural 20: Tam spends a surge and heals its value (A4.9): -5 -> 0 -> 6, conscious
    o.death_save(cid, "tam", face=20)
    end_turn()
    fact("EncounterEnded", encounter_id=ENCOUNTER, outcome="The ogre flees; the goblin lies dead.")

    # --- after the fight: the ruling overturned, a rest, XP ------------------------------------
    fact(
        "RulingContested",
        ruling_id="r-flank",
        by="Tam's player",
        argument="The ogre was across the millstone, not opposite the goblin: no flank.",
    )
    fact(
        "RulingResolved",
        ruling_id="r-flank",
        outcome="overturned",
        decision="No flank: Tam was not off-guard.",
    )
    # the spear now totals 16 vs AC 17: a miss. Tam never fell: both death saves are orphaned.
    o.short_rest(cid, minutes=10)  # Radiant Lance and Warding Zone recharge (OR-9)
    o.spend_surge(cid, "mira", note="binds her burns")  # 13 + 7 = 20
    o.spend_surge(cid, "tam", note="catches his breath")  # + 6
    fact("NoteAdded", text="They search the den and find the miller's strongbox.")
    o.award_xp(cid, ["mira", "tam"], 1500, reason="the ogre's den")  # 3,750 XP: level 4
    return cid
