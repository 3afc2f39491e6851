"""Whole table sequences through ChronicleApplication, every die given (d% faces included),
every number worked by hand from RULES.md A3 (the comments show the arithmetic).

Kara: level 6 warrior, Str 16 (+3), Stamina 16 (+3: S 16, B 3), Agility 12 (+1), BAB +6/+1,
Fort +5, armor 4, shield 1: AC 10 + 4 + 1 + 1 = 16.
Gnoll: Str 14 (+2), Stamina 12 (+1: S 12, B 1: disabled 0..-1, dying -2..-12), BAB +2,
armor 3: AC 13, 11 HP.
"""

from __future__ import annotations

import pytest

from tests.unit.d20.helpers import RULESET, D20Table, d20, refused, roll

AXE = {"name": "battleaxe", "kind": "melee"}
SWORD = {"name": "longsword +1", "kind": "melee", "enhancement": 1}
CLUB = {"name": "greatclub", "kind": "melee", "grip": "two_hands"}


@pytest.fixture
def t(table: D20Table) -> D20Table:
    table.creature(
        "kara",
        level=6,
        str=16,
        stamina=16,
        agility=12,
        bab=[6, 1],
        saves={"fort": 5},
        armor=4,
        shield=1,
        max_hp=38,
        **{"class": "warrior"},
    )
    table.creature("gnoll", kind="monster", str=14, stamina=12, bab=[2], armor=3, max_hp=11)
    table.creature("tam", spirit=14)
    return table


def test_the_ford_a_gnoll_falls_dies_and_a_correction_brings_it_back(t: D20Table) -> None:
    assert t.v("kara")["ac"]["ac"] == 16 and t.v("gnoll")["ac"]["ac"] == 13
    # 1. The gnoll's battleaxe: d20 14 + 2 BAB + 2 Str = 18 vs 16: hit. 1d8 6 + 2 = 8: Kara 30.
    a1 = t.attack("gnoll", "kara", 14, weapon=AXE)
    assert (a1.outcome["attack_total"], a1.outcome["hit"]) == (18, True)
    assert t.damage_roll(a1.position, "1d8", [6]).outcome["amount"] == 8
    assert t.hp("kara") == 30
    # 2. Kara full-attacks: d20 11 + 6 + 3 + 1 (enhancement) = 21 vs 13. 1d8 7 + 3 + 1 = 11: gnoll 0,
    #    disabled (0 is in 0..-1).
    a2 = t.attack("kara", "gnoll", 11, weapon=SWORD, full_attack=True)
    assert a2.outcome["attack_total"] == 21
    t.damage_roll(a2.position, "1d8", [7])
    g = t.v("gnoll")
    assert (g["hp"], g["life"], g["conditions"]) == (0, "disabled", ["disabled"])
    # 3. The disabled gnoll swings (strenuous): d20 20 + 2 + 2 - 2 = 22, a threat; after the
    #    action it loses 1 HP: -1, still disabled (B 1).
    a3 = t.attack("gnoll", "kara", 20, weapon=AXE)
    assert (a3.outcome["attack_total"], a3.outcome["threat"]) == (22, True)
    assert a3.outcome["strenuous"]["hp_after"] == -1 and t.v("gnoll")["band"] == "disabled"
    #    Confirmation: d20 9 + 2 = 11 vs 16: a regular hit. 1d8 1 + 2 - 2 = 1 (at least 1).
    assert t.confirm(a3.position, 9).outcome == {
        "attack": a3.position,
        "attacker": "gnoll",
        "target": "kara",
        "natural": 9,
        "total": 11,
        "ac": 16,
        "critical": False,
        "overridden": [],
    }
    assert t.damage_roll(a3.position, "1d8", [1]).outcome["amount"] == 1
    assert t.hp("kara") == 29
    # 4. Kara's second swing (+1): d20 19 + 1 + 3 + 1 = 24. 1d8 3 + 4 = 7: gnoll -8, dying.
    a4 = t.attack("kara", "gnoll", 19, weapon=SWORD, iterative=1)
    assert a4.outcome["attack_total"] == 24
    d4 = t.damage_roll(a4.position, "1d8", [3]).position
    g = t.v("gnoll")
    assert (g["hp"], g["life"], g["conditions"]) == (-8, "dying", ["dying", "unconscious"])
    # 5. After the round: d% 37 > 12 (its Stamina): -9. Next round: d% 12 <= 12: stable.
    s1 = t.stabilize("gnoll", 37).position
    s2 = t.stabilize("gnoll", 12).position
    assert (t.hp("gnoll"), t.v("gnoll")["life"]) == (-9, "stabilized")
    before = t.store_max()
    with refused("ALREADY_STABLE"):
        t.heal_check("tam", "gnoll", 20)
    assert t.store_max() == before
    # 6. A rockslide, 1d4 = 3: -12 (= -S, still dying) and no longer stable.
    t.record("DamageTaken", target="gnoll", roll=roll("1d4", 3), source="rockslide")
    assert (t.hp("gnoll"), t.v("gnoll")["life"]) == (-12, "dying")
    # 7. d% 00 (100) > 12: -13 < -12: dead.
    s3 = t.stabilize("gnoll", 100)
    assert s3.outcome["died"] == "hp_threshold"
    assert t.v("gnoll")["dead_by"] == "hp_threshold"
    # The GM rules Kara's second swing never happened: its damage and both stabilisation rolls
    # are orphaned (the gnoll was never dying then); the rockslide takes it from -1 to -4
    # (dying) and the last d% (100) to -5: dying, not dead.
    t.app.revoke(t.cid, a4.position, "Kara had already moved: no full attack")
    assert set(t.orphans()) == {str(d4), str(s1), str(s2)}
    assert "no attack at position" in t.orphans()[str(d4)]
    assert "not dying" in t.orphans()[str(s1)]
    g = t.v("gnoll")
    assert (g["hp"], g["life"], g["dead_by"]) == (-5, "dying", None)
    # as-of, both axes: at the last roll the table believed it dead; corrected, it is dying
    assert t.v("gnoll", s3.position, "recorded")["life"] == "dead"
    assert t.v("gnoll", s3.position, "corrected")["life"] == "dying"


def test_the_ogre_two_critical_hits_and_a_massive_damage_save(t: D20Table) -> None:
    """B-DH-5 / B-DH-1 / ruling 26. The ogre: Str 20 (+5), BAB +9/+4, a greatclub in two hands
    (2d8; Strength x1 1/2 = 7). Kara has 120 HP for this one."""
    t.record("SheetUpdated", creature_id="kara", changes={"max_hp": 120})  # 38 + 82 = 120 HP
    assert t.hp("kara") == 120
    t.creature("ogre", kind="monster", str=20, bab=[9, 4], max_hp=60)
    # 1. d20 20 + 9 + 5 = 34: a threat. Confirm: d20 8 + 14 = 22 vs 16: critical.
    a1 = t.attack("ogre", "kara", 20, weapon=CLUB).position
    assert t.confirm(a1, 8).outcome["critical"] is True
    #    2d8 (8, 7) twice (6, 8) = 29; Strength 7 twice = 14; extra 1d6 (6) once: 49.
    d1 = t.damage_roll(a1, "2d8", [8, 7], [6, 8], extra=[roll("1d6", 6)]).outcome
    assert d1["amount"] == 49 and "massive_damage_save_owed" not in d1
    assert t.hp("kara") == 71 and RULESET.pending_rolls(t.ledger.state) == []
    # 2. Again: d20 20; confirm d20 2 + 14 = 16 vs 16 (meets): critical.
    a2 = t.attack("ogre", "kara", 20, weapon=CLUB).position
    assert t.confirm(a2, 2).outcome["critical"] is True
    #    (8, 8) + (8, 8) = 32, + 14, + 1d6 (4) = 50: Kara 21, alive: a DC 15 Fortitude save.
    d2 = t.damage_roll(a2, "2d8", [8, 8], [8, 8], extra=[roll("1d6", 4)]).outcome
    assert d2["amount"] == 50 and d2["massive_damage_save_owed"] == {"attack": a2, "damage": 50, "dc": 15}
    assert RULESET.pending_rolls(t.ledger.state) == [
        ("MassiveDamageSaveRolled", {"creature": "kara", "attack": a2})
    ]
    # 3. Fortitude: d20 7 + 5 + 3 = 15 vs 15: she survives.
    save = t.record("MassiveDamageSaveRolled", creature="kara", attack=a2, roll=d20(7))
    assert (save.outcome["total"], save.outcome["success"]) == (15, True)
    assert (t.hp("kara"), t.v("kara")["life"]) == (21, "active")
    # What if the table read B-DH-5 literally (dice only doubled)? 29 + 7 + 6 = 42 and
    # 32 + 7 + 4 = 43: Kara 35, and the second hit owes no save: the save would be orphaned.
    preview = t.app.what_if(
        t.cid,
        [("RulesFlagSet", {"flag": "dh.crit_doubles_static_mods", "value": False, "retroactive": True})],
    )
    assert preview["changes"]["kara"]["hp"] == [21, 35]
    assert preview["newly_orphaned"] == [save.position]
    assert t.hp("kara") == 21  # nothing stored


def test_poison_moves_the_thresholds_and_sleep_moves_them_back(t: D20Table) -> None:
    """B-DH-9 / ruling 26 / DH-14, with the seed's Stamina-16 character."""
    # 41 damage: 38 -> -3, disabled (0..-3).
    t.damage("kara", 41)
    assert t.v("kara")["band"] == "disabled"
    # 4 Stamina damage: S 12, B 1: still -3 HP, now dying (-2..-12).
    poison = t.ability_damage("kara", "stamina", 4).outcome
    assert (poison["S_after"], poison["B_after"], poison["hp_after"], poison["band_after"]) == (
        12,
        1,
        -3,
        "dying",
    )
    # d% 13 > 12: -4. d% 9 <= 12: stable.
    assert t.stabilize("kara", 13).outcome["hp_after"] == -4
    t.stabilize("kara", 9)
    assert t.v("kara")["life"] == "stabilized"
    # Tam treats her: a cure of 1d8 (3): -1, conscious and disabled (-1 >= -B).
    t.heal("kara", 0, roll=roll("1d8", 3), healer="tam")
    k = t.v("kara")
    assert (k["hp"], k["life"], k["conscious"]) == (-1, "disabled", True)
    # 4 hours of sleep: Stamina 16 again (B 3); HP unchanged; the clock moves 240 minutes.
    t.record("AbilityRecoveredByRest", creatures=["kara"], kind="sleep", hours=4, clean=True)
    k = t.v("kara")
    assert (k["S"], k["B"], k["hp"], k["band"]) == (16, 3, -1, "disabled")
    assert t.app.summary(t.cid)["clock_minutes"] == 240
