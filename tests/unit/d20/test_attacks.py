"""Attacks (RULES.md A3.3 DH-5..DH-9, B-DH-1, B-DH-5, B-DH-12..14), every die given.

The orc: Str 16 (+3), BAB +6/+1, so +9 with a melee weapon. Ana: AC 15 (armor 5).
"""

from __future__ import annotations

import pytest

from tests.unit.d20.helpers import RULESET, D20Table, d20, refused, roll

SWORD = {"name": "longsword", "kind": "melee", "enhancement": 1}


@pytest.fixture
def t(table: D20Table) -> D20Table:
    table.creature("orc", kind="monster", str=16, bab=[6, 1], max_hp=30)
    table.creature("ana", armor=5, max_hp=40, stamina=10)
    return table


def hit(t: D20Table, face: int = 15, **more) -> int:
    return t.attack("orc", "ana", face, **more).position


# ----------------------------------------------------------------- DH-6 / DH-7
@pytest.mark.parametrize(("face", "hits"), [(6, True), (5, False)])
def test_dh_6_melee_bab_plus_strength_meets_or_beats_ac(t: D20Table, face: int, hits: bool) -> None:
    out = t.attack("orc", "ana", face).outcome
    assert (out["attack_total"], out["ac"], out["hit"]) == (face + 9, 15, hits)
    assert out["attack_parts"][1:] == [
        {"source": "base attack bonus", "value": 6},
        {"source": "Strength", "value": 3},
    ]


def test_dh_6_ranged_bab_plus_agility_size_and_range_penalty_and_no_strength_to_damage(
    t: D20Table,
) -> None:
    t.creature("archer", str=14, agility=16, bab=[3], size=1)
    out = t.attack("archer", "ana", 10, weapon={"name": "bow", "kind": "ranged"}, range_penalty=-2).outcome
    assert (out["attack_total"], out["hit"]) == (15, True)  # 10 + 3 + 3 + 1 - 2
    dealt = t.damage_roll(t.position, "1d8", [4]).outcome
    assert dealt["amount"] == 4


def test_dh_9_thrown_weapons_hit_with_agility_and_add_strength_and_a_sling_adds_strength(
    t: D20Table,
) -> None:
    t.creature("archer", str=14, agility=16, bab=[3])
    out = t.attack("archer", "ana", 9, weapon={"name": "javelin", "kind": "thrown"}).outcome
    assert out["attack_total"] == 15
    assert t.damage_roll(t.position, "1d6", [3]).outcome["amount"] == 5
    t.attack("archer", "ana", 9, weapon={"name": "sling", "kind": "ranged", "strength": True})
    assert t.damage_roll(t.position, "1d4", [3]).outcome["amount"] == 5


def test_a_range_penalty_on_a_melee_attack_is_refused(t: D20Table) -> None:
    with refused("INVALID_INPUT"):
        t.attack("orc", "ana", 10, range_penalty=-2)


def test_dh_7_a_natural_1_misses_whatever_the_total(t: D20Table) -> None:
    t.creature("rat", max_hp=3)  # AC 10
    out = t.attack("orc", "rat", 1).outcome
    assert (out["attack_total"], out["hit"], out["threat"]) == (10, False, False)


def test_dh_7_a_natural_20_hits_whatever_the_ac_and_threatens(t: D20Table) -> None:
    t.creature("golem", armor=40)
    out = t.attack("orc", "golem", 20).outcome
    assert (out["attack_total"], out["ac"], out["hit"], out["threat"], out["awaits"]) == (
        29,
        50,
        True,
        True,
        "confirmation",
    )


def test_dh_6_touch_attacks_ignore_armor_and_shield(t: D20Table) -> None:
    t.creature("knight", armor=5, shield=2, agility=12)
    assert t.v("knight")["ac"] == {"ac": 18, "touch": 11, "flat_footed": 17}
    out = t.attack("orc", "knight", 2, vs="touch").outcome
    assert (out["ac"], out["hit"]) == (11, True)


def test_dh_2_a_declared_flat_footed_target_loses_its_agility_bonus(t: D20Table) -> None:
    t.creature("elf", agility=14)
    out = t.attack("orc", "elf", 1 + 1, vs="flat_footed").outcome  # 2 + 9 = 11 vs 10 (12 with Agility)
    assert (out["ac"], out["hit"], out["agility_lost"]) == (10, True, ["declared flat-footed"])


@pytest.mark.parametrize(("loses", "ac"), [("bonus", 9), ("modifier", 10)])
def test_dh_2_a_flat_footed_agility_penalty_stays_unless_the_flag_drops_the_whole_modifier(
    make_table, loses: str, ac: int
) -> None:
    t = make_table({"dh.flat_footed_loses": loses})
    t.creature("orc", str=16, bab=[6])
    t.creature("oaf", agility=8)
    assert t.attack("orc", "oaf", 10, vs="flat_footed").outcome["ac"] == ac


# ----------------------------------------------------------------- DH-7 / B-DH-13 confirmation
@pytest.mark.parametrize(("face", "critical"), [(6, True), (5, False)])
def test_dh_7_the_confirmation_applies_the_same_bonus_against_the_same_ac(
    t: D20Table, face: int, critical: bool
) -> None:
    a = hit(t, 20)
    out = t.confirm(a, face).outcome
    assert (out["total"], out["ac"], out["critical"]) == (face + 9, 15, critical)


@pytest.mark.parametrize(("rules", "face", "critical"), [(True, 1, False), (False, 1, True)])
def test_b_dh_13_a_natural_1_on_the_confirmation_fails(
    make_table, rules: bool, face: int, critical: bool
) -> None:
    t = make_table({"dh.confirmation_natural_rules": rules})
    t.creature("giant", str=30, bab=[20])  # +30: a 1 is 31 against AC 10
    t.creature("ana")
    a = t.attack("giant", "ana", 20).position
    assert t.confirm(a, face).outcome["critical"] is critical


@pytest.mark.parametrize(("rules", "critical"), [(True, True), (False, False)])
def test_b_dh_13_a_natural_20_on_the_confirmation_succeeds(make_table, rules: bool, critical: bool) -> None:
    t = make_table({"dh.confirmation_natural_rules": rules})
    t.creature("orc", bab=[0])
    t.creature("golem", armor=40)
    a = t.attack("orc", "golem", 20).position
    assert t.confirm(a, 20).outcome["critical"] is critical  # 20 against AC 50


def test_confirmation_and_damage_come_in_order(t: D20Table) -> None:
    plain = hit(t, 15)
    with refused("NOT_A_THREAT"):
        t.confirm(plain, 20)
    threat = hit(t, 20)
    with refused("CONFIRMATION_PENDING"):
        t.damage_roll(threat, "1d8", [4])
    t.confirm(threat, 2)
    with refused("CONFIRMATION_ROLLED"):
        t.confirm(threat, 20)
    assert t.damage_roll(threat, "1d8", [4]).outcome["critical"] is False


def test_a_missed_attack_deals_no_damage_and_damage_is_rolled_once(t: D20Table) -> None:
    miss = hit(t, 2)
    before = t.store_max()
    with refused("NO_OPEN_ATTACK"):
        t.damage_roll(miss, "1d8", [4])
    assert t.store_max() == before
    a = hit(t, 15)
    t.damage_roll(a, "1d8", [4])
    with refused("NO_OPEN_ATTACK"):
        t.damage_roll(a, "1d8", [4])
    with refused("NO_OPEN_ATTACK"):
        t.confirm(1, 20)  # position 1 is the campaign's creation, not an attack


# ----------------------------------------------------------------- B-DH-5 critical damage
@pytest.mark.parametrize(("doubles", "amount"), [(True, 24), (False, 20)])
def test_b_dh_5_a_critical_doubles_weapon_dice_and_static_modifiers_not_extra_damage(
    make_table, doubles: bool, amount: int
) -> None:
    """Longsword +1, Str 16: dice 5 and 7, statics (3 + 1) twice, extra 1d6 (4) once:
    5 + 7 + 8 + 4 = 24; literal reading (flag false): 5 + 7 + 4 + 4 = 20."""
    t = make_table({"dh.crit_doubles_static_mods": doubles})
    t.creature("orc", str=16, bab=[6])
    t.creature("ana", max_hp=40)
    a = t.attack("orc", "ana", 20, weapon=SWORD).position
    assert t.confirm(a, 10).outcome["critical"] is True
    out = t.damage_roll(a, "1d8", [5], [7], extra=[roll("1d6", 4)]).outcome
    assert out["amount"] == amount and t.hp("ana") == 40 - amount


def test_critical_dice_must_be_the_weapons_dice_rolled_twice(t: D20Table) -> None:
    a = hit(t, 20)
    t.confirm(a, 10)
    with refused("CRITICAL_DICE_MISMATCH"):
        t.damage_roll(a, "1d8", [5])
    with refused("CRITICAL_DICE_MISMATCH"):
        t.record("DamageRolled", attack=a, weapon=roll("1d8", 5), crit_weapon=roll("2d8", 1, 2))
    plain = hit(t, 15)
    with refused("CRITICAL_DICE_MISMATCH"):
        t.damage_roll(plain, "1d8", [5], [6])


def test_the_weapon_roll_holds_dice_only(t: D20Table) -> None:
    a = hit(t, 15)
    with refused("INVALID_INPUT"):
        t.record("DamageRolled", attack=a, weapon=roll("1d8+3", 5))


# ----------------------------------------------------------------- DH-9 / B-DH-12 damage
@pytest.mark.parametrize(
    ("weapon", "two_weapon", "strength", "expression", "faces", "amount"),
    [
        ({"grip": "two_hands"}, None, 16, "2d6", [3, 4], 11),  # 7 + floor(1.5 x 3)
        ({"grip": "two_hands", "light": True}, None, 16, "1d4", [2], 5),  # light: x1
        ({"light": True}, "off", 16, "1d6", [3], 4),  # off hand: floor(3 / 2)
        ({"light": True}, "off", 8, "1d6", [3], 2),  # a penalty counts whole
        ({}, None, 6, "1d4", [1], 1),  # 1 - 2: at least 1 (B-DH-12)
    ],
)
def test_dh_9_strength_to_damage_by_grip_and_at_least_1(
    table: D20Table,
    weapon: dict,
    two_weapon: str | None,
    strength: int,
    expression: str,
    faces: list,
    amount: int,
) -> None:
    table.creature("orc", str=strength, bab=[20])
    table.creature("ana", max_hp=40)
    a = table.attack("orc", "ana", 15, weapon={"name": "w", **weapon}, two_weapon=two_weapon).position
    assert table.damage_roll(a, expression, faces).outcome["amount"] == amount


@pytest.mark.parametrize(("after", "amount"), [(True, 1), (False, 0)])
def test_b_dh_12_the_minimum_applies_after_the_disabled_penalty(make_table, after: bool, amount: int) -> None:
    """A disabled attacker (-2 to damage) rolls a 2: 0 -> at least 1; flag false: the minimum
    first (2), then the penalty: 0."""
    t = make_table({"dh.minimum_damage_after_penalties": after})
    t.creature("orc", bab=[20], stamina=16, max_hp=10)
    t.damage("orc", 10)  # 0 HP: disabled
    t.creature("ana")
    a = t.attack("orc", "ana", 15).position
    out = t.damage_roll(a, "1d4", [2]).outcome
    assert out["amount"] == amount and {"source": "disabled", "value": -2} in out["parts"]


def test_dh_11_a_disabled_attacker_attacks_at_minus_2_and_pays_1_hp_after(t: D20Table) -> None:
    t.creature("bo", bab=[2], stamina=16, max_hp=10)
    t.damage("bo", 11)  # -1: disabled (B 3)
    out = t.attack("bo", "ana", 10).outcome
    assert {"source": "disabled", "value": -2} in out["attack_parts"] and out["attack_total"] == 10
    assert out["strenuous"]["hp_after"] == -2 and t.v("bo")["band"] == "disabled"


# ----------------------------------------------------------------- DH-8 two weapons, iteratives
@pytest.mark.parametrize(
    ("light", "feat", "primary", "off"),
    [(False, False, -6, -10), (True, False, -4, -8), (False, True, -4, -4), (True, True, -2, -2)],
)
def test_dh_8_two_weapon_penalties(table: D20Table, light: bool, feat: bool, primary: int, off: int) -> None:
    table.creature("duelist", bab=[6], feats=["two_weapon_fighting"] if feat else ["dodge"])
    table.creature("ana")
    first = table.attack("duelist", "ana", 10, two_weapon="primary", off_hand_light=light).outcome
    second = table.attack(
        "duelist", "ana", 10, two_weapon="off", weapon={"name": "dagger", "light": light}
    ).outcome
    assert first["attack_total"] == 16 + primary and second["attack_total"] == 16 + off


def test_dh_8_a_double_weapons_off_hand_end_counts_as_light(table: D20Table) -> None:
    table.creature("monk", bab=[6])
    table.creature("ana")
    out = table.attack("monk", "ana", 10, two_weapon="primary", double_weapon=True).outcome
    assert out["attack_total"] == 12


def test_dh_8_iterative_attacks_use_the_sheets_lower_bonuses(t: D20Table) -> None:
    """'a level 6 Warrior has a base attack bonus of +6/+1'."""
    out = t.attack("orc", "ana", 11, iterative=1).outcome
    assert out["attack_total"] == 15 and out["hit"] is True
    assert {"source": "iterative attack 2", "value": 1} in out["attack_parts"]
    with refused("ITERATIVE_UNAVAILABLE"):
        t.attack("orc", "ana", 11, iterative=2)


def test_a_dying_creature_cannot_attack_and_a_dead_one_cannot_be_attacked(t: D20Table) -> None:
    t.damage("ana", 45)  # -5, Stamina 10 (B 0): dying
    with refused("NOT_CONSCIOUS"):
        t.attack("ana", "orc", 20)
    t.damage("ana", 6)  # -11: dead
    with refused("CREATURE_DEAD"):
        t.attack("orc", "ana", 20)


def test_damage_for_a_target_killed_meanwhile_is_refused(t: D20Table) -> None:
    a = hit(t, 15)
    t.record("DeathDeclared", creature="ana", cause="falls into the chasm")
    with refused("CREATURE_DEAD"):
        t.damage_roll(a, "1d8", [3])


# ----------------------------------------------------------------- B-DH-14 / B-DH-11 AoO
def test_b_dh_14_one_attack_of_opportunity_per_round(t: D20Table) -> None:
    out = t.attack("orc", "ana", 2, opportunity=True).outcome  # even a miss uses it
    assert out["hit"] is False and t.v("orc")["aoo_used"] == 1
    before = t.store_max()
    with refused("AOO_LIMIT"):
        t.attack("orc", "ana", 15, opportunity=True)
    assert t.store_max() == before


def test_b_dh_14_more_with_feats_or_abilities(table: D20Table) -> None:
    table.creature("fencer", aoo_per_round=2, bab=[4])
    table.creature("ana")
    table.attack("fencer", "ana", 10, opportunity=True)
    table.attack("fencer", "ana", 10, opportunity=True)
    with refused("AOO_LIMIT"):
        table.attack("fencer", "ana", 10, opportunity=True)


@pytest.mark.parametrize(
    "more", [{"weapon": {"kind": "ranged"}}, {"iterative": 1}, {"two_weapon": "primary"}]
)
def test_dh_5_an_attack_of_opportunity_is_a_single_basic_melee_attack(t: D20Table, more: dict) -> None:
    with refused("INVALID_INPUT"):
        t.attack("orc", "ana", 10, opportunity=True, **more)


# ----------------------------------------------------------------- B-DH-1 massive damage
@pytest.fixture
def m(table: D20Table) -> D20Table:
    table.creature("ogre", bab=[8], kind="monster")  # Str 10: damage is the dice plus extras
    table.creature("ana", max_hp=100, stamina=10, saves={"fort": 0})
    return table


def fifty(m: D20Table, extra: int = 40, face: int = 10) -> int:
    a = m.attack("ogre", "ana", 15).position
    m.damage_roll(a, "1d12", [face], extra_flat=extra)
    return a


def test_b_dh_1_one_attack_of_50_that_leaves_its_target_alive_owes_a_dc_15_fortitude_save(
    m: D20Table,
) -> None:
    a = fifty(m)
    v = m.v("ana")
    assert v["hp"] == 50 and v["massive_damage_saves_owed"] == [{"attack": a, "damage": 50, "dc": 15}]
    assert RULESET.pending_rolls(m.ledger.state) == [
        ("MassiveDamageSaveRolled", {"creature": "ana", "attack": a})
    ]
    out = m.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(15)).outcome
    assert (out["total"], out["dc"], out["success"]) == (15, 15, True)
    assert m.v("ana")["massive_damage_saves_owed"] == [] and m.v("ana")["life"] == "active"
    with refused("NO_MASSIVE_DAMAGE_SAVE_OWED"):
        m.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(15))


def test_b_dh_1_failing_the_save_kills(m: D20Table) -> None:
    a = fifty(m)
    out = m.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(14)).outcome
    assert out["success"] is False and out["died"] == "massive_damage"
    v = m.v("ana")
    assert (v["life"], v["dead_by"], v["hp"]) == ("dead", "massive_damage", 50)


def test_b_dh_1_49_damage_owes_nothing(m: D20Table) -> None:
    a = fifty(m, extra=39)
    assert m.v("ana")["massive_damage_saves_owed"] == []
    with refused("NO_MASSIVE_DAMAGE_SAVE_OWED"):
        m.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(15))


def test_b_dh_1_an_attack_that_kills_owes_no_save(m: D20Table) -> None:
    fifty(m, extra=100)  # 110: -10 with Stamina 10 is still dying: alive, owes the save
    assert len(m.v("ana")["massive_damage_saves_owed"]) == 1
    m.creature("bo", max_hp=100, stamina=10)
    a = m.attack("ogre", "bo", 15).position
    m.damage_roll(a, "1d12", [10], extra_flat=101)  # -11: dead
    assert m.v("bo")["dead_by"] == "hp_threshold" and m.v("bo")["massive_damage_saves_owed"] == []


def test_ruling_26_hazard_damage_never_calls_for_the_save(m: D20Table) -> None:
    m.damage("ana", 60, source="lava")
    assert m.v("ana")["massive_damage_saves_owed"] == [] and RULESET.pending_rolls(m.ledger.state) == []


def test_b_dh_1_the_critical_total_counts(m: D20Table) -> None:
    """1d12 twice (12, 12) + 26 extra = 50 on a critical; the same dice once would be 38."""
    a = m.attack("ogre", "ana", 20).position
    m.confirm(a, 15)
    m.damage_roll(a, "1d12", [12], [12], extra_flat=26)
    assert m.v("ana")["massive_damage_saves_owed"][0]["damage"] == 50


@pytest.mark.parametrize(
    ("flag", "damage", "owed"),
    [
        ({"threshold": 50, "dc": 15, "enabled": False}, 60, []),
        ({"threshold": 30, "dc": 12, "enabled": True}, 30, [{"damage": 30, "dc": 12}]),
    ],
)
def test_b_dh_1_flag_dh_massive_damage(m: D20Table, flag: dict, damage: int, owed: list) -> None:
    m.app.set_flag(m.cid, "dh.massive_damage", flag)
    fifty(m, extra=damage - 10)
    assert [{k: s[k] for k in ("damage", "dc")} for s in m.v("ana")["massive_damage_saves_owed"]] == owed


def test_the_massive_damage_flag_is_checked(table: D20Table) -> None:
    with refused("INVALID_INPUT"):
        table.app.set_flag(table.cid, "dh.massive_damage", {"threshold": 0, "dc": 15, "enabled": True})
    with refused("INVALID_INPUT"):
        table.app.set_flag(table.cid, "dh.massive_damage", {"threshold": 50})


# ----------------------------------------------------------------- DH-5 casting defensively
@pytest.mark.parametrize(
    ("feats", "hp", "face", "total", "success"),
    [
        ([], 20, 17, 17, True),
        ([], 20, 16, 16, False),
        (["combat_casting"], 20, 13, 17, True),
        ([], 0, 19, 17, True),
        ([], 0, 18, 16, False),
    ],
)
def test_dh_5_casting_defensively_is_a_concentration_check_against_15_plus_the_spell_level(
    table: D20Table, feats: list, hp: int, face: int, total: int, success: bool
) -> None:
    """Level 2 spell: DC 17; Combat Casting +4; disabled (0 HP) -2 to checks (DH-11)."""
    table.creature("mage", feats=feats, max_hp=20, stamina=12)
    if hp < 20:
        table.damage("mage", 20 - hp)
    out = table.record("DefensiveCastingRolled", creature="mage", spell_level=2, roll=d20(face)).outcome
    assert (out["dc"], out["total"], out["success"], out["provokes"]) == (17, total, success, not success)
