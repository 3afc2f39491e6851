"""Hit points and the life bands (RULES.md A3.4 DH-10..DH-14, B-DH-2..B-DH-9, ruling 26).

Worked numbers from the seed: a character with a Stamina bonus of +3 (Stamina 16) is
disabled from 0 to -3 and dying from -4 to -16; with a 16 Stamina it has a 16% chance to
stabilise; stabilising at -11 HP needs a DC 21 Heal check.
"""

from __future__ import annotations

import pytest

from tests.unit.d20.helpers import D20Table, d20, refused


def at(table: D20Table, hp: int, who: str = "ana", max_hp: int = 20, **sheet: int) -> D20Table:
    table.creature(who, max_hp=max_hp, **sheet)
    if hp < max_hp:
        table.damage(who, max_hp - hp)
    return table


# ----------------------------------------------------------------- DH-10 / B-DH-2
@pytest.mark.parametrize(
    ("hp", "band", "life"),
    [
        (1, "fine", "active"),
        (0, "disabled", "disabled"),
        (-3, "disabled", "disabled"),
        (-4, "dying", "dying"),
        (-16, "dying", "dying"),
        (-17, "dead", "dead"),
    ],
)
def test_dh_10_stamina_16_disabled_0_to_minus_3_dying_to_minus_16_dead_below(
    table: D20Table, hp: int, band: str, life: str
) -> None:
    """DH-10 and ruling 26 (dying at exactly -Stamina, dead below)."""
    at(table, hp, stamina=16)
    v = table.v("ana")
    assert (v["hp"], v["band"], v["life"]) == (hp, band, life)
    assert v["dead_by"] == ("hp_threshold" if band == "dead" else None)


@pytest.mark.parametrize(("hp", "band"), [(0, "disabled"), (-1, "dying"), (-8, "dying"), (-9, "dead")])
def test_b_dh_2_a_stamina_penalty_gives_no_disabled_range_below_0(
    table: D20Table, hp: int, band: str
) -> None:
    """DH-10 / B-DH-2: with no bonus or a penalty (Stamina 8), disabled at 0, dying at -1."""
    at(table, hp, stamina=8)
    assert table.v("ana")["band"] == band


def test_dying_and_unconscious_conditions_are_derived(table: D20Table) -> None:
    """C3.1 ``conscious``; A3.6 conditions."""
    at(table, -5, stamina=16)
    v = table.v("ana")
    assert v["conditions"] == ["dying", "unconscious"] and v["conscious"] is False


# ----------------------------------------------------------------- DH-11 / B-DH-8
def test_dh_11_a_disabled_creatures_strenuous_action_costs_1_hp_after_it(table: D20Table) -> None:
    """B-DH-8: with B = 0 at 0 HP the point lost makes it dying."""
    at(table, 0, stamina=10)
    out = table.record(
        "ActionTaken", creature="ana", action="standard", name="lift gate", strenuous=True
    ).outcome
    assert out["strenuous"]["hp_before"] == 0 and out["strenuous"]["hp_after"] == -1
    assert table.v("ana")["band"] == "dying"


def test_a_disabled_creatures_quiet_action_costs_nothing_and_a_fine_ones_strenuous_action_neither(
    table: D20Table,
) -> None:
    at(table, -2, stamina=16)
    table.record("ActionTaken", creature="ana", action="move", name="crawl")
    assert table.hp("ana") == -2
    at(table, 5, who="bo")
    table.record("ActionTaken", creature="bo", action="standard", strenuous=True)
    assert table.hp("bo") == 5


def test_dh_11_running_is_strenuous_and_a_full_round_action_a_disabled_creature_cannot_take(
    table: D20Table,
) -> None:
    at(table, -1, stamina=16)
    before = table.store_max()
    with refused("DISABLED_ONE_ACTION"):
        table.record("ActionTaken", creature="ana", action="full_round", run=True)
    assert table.store_max() == before


def test_dh_12_a_dying_creature_can_take_no_actions(table: D20Table) -> None:
    at(table, -5, stamina=16)
    with refused("NOT_CONSCIOUS"):
        table.record("ActionTaken", creature="ana", action="free", name="speak")


# ----------------------------------------------------------------- DH-12 / B-DH-3
def test_b_dh_3_a_16_stamina_stabilises_on_16_and_loses_1_hp_on_17(table: D20Table) -> None:
    """DH-12: 'a character with a 16 Stamina has a 16% chance to stabilize'."""
    at(table, -4, stamina=16)
    out = table.stabilize("ana", 17).outcome
    assert (out["success"], out["hp_after"], table.v("ana")["life"]) == (False, -5, "dying")
    out = table.stabilize("ana", 16).outcome
    assert out["success"] is True
    v = table.v("ana")
    assert (v["hp"], v["stable"], v["life"], v["conditions"]) == (
        -5,
        True,
        "stabilized",
        ["stable", "unconscious"],
    )


def test_b_dh_3_a_d_percent_00_is_100_and_fails_below_100_stamina(table: D20Table) -> None:
    at(table, -4, stamina=16)
    assert table.stabilize("ana", 100).outcome["face"] == 100
    assert table.hp("ana") == -5


def test_b_dh_3_flag_below_stamina_needs_a_face_under_the_score(make_table) -> None:
    table = make_table({"dh.stabilize_on": "below_stamina"})
    at(table, -4, stamina=16)
    assert table.stabilize("ana", 16).outcome["success"] is False
    assert table.stabilize("ana", 15).outcome["success"] is True


def test_b_dh_3_a_failed_roll_at_minus_stamina_kills(table: D20Table) -> None:
    """DH-12 / DH-13: from -16 (still dying) a failure goes to -17: dead."""
    at(table, -16, stamina=16)
    out = table.stabilize("ana", 90).outcome
    assert out["died"] == "hp_threshold" and table.v("ana")["dead_by"] == "hp_threshold"


def test_b_dh_3_ability_damage_counts_in_the_chance(table: D20Table) -> None:
    """B-DH-3 / B-DH-9: Stamina 16 with 4 damage stabilises on 12, not 13."""
    at(table, -1, stamina=16)
    table.ability_damage("ana", "stamina", 4)  # S 12, B 1: -1 is still disabled
    table.damage("ana", 3)  # -4: dying
    out = table.stabilize("ana", 13).outcome
    assert (out["chance"], out["success"]) == (12, False)
    assert table.stabilize("ana", 12).outcome["success"] is True


def test_stabilisation_is_refused_for_a_creature_not_dying_and_for_a_stable_one(table: D20Table) -> None:
    at(table, -2, stamina=16)
    with refused("NOT_DYING"):
        table.stabilize("ana", 1)
    table.damage("ana", 3)
    table.stabilize("ana", 1)
    with refused("ALREADY_STABLE"):
        table.stabilize("ana", 1)


# ----------------------------------------------------------------- B-DH-4
def test_b_dh_4_a_stable_creature_loses_nothing_and_damage_makes_it_dying_again(table: D20Table) -> None:
    at(table, -6, stamina=16)
    table.stabilize("ana", 5)
    table.record("TimeAdvanced", minutes=600)  # dh.stable_recovery = none: nothing changes
    assert (table.hp("ana"), table.v("ana")["life"]) == (-6, "stabilized")
    table.damage("ana", 1)
    v = table.v("ana")
    assert (v["hp"], v["stable"], v["life"]) == (-7, False, "dying")


# ----------------------------------------------------------------- DH-12 / B-DH-6 Heal check
def test_b_dh_6_stabilising_at_minus_11_needs_dc_21(table: D20Table) -> None:
    """DH-12: 'stabilizing a character with -11 hit points requires a DC 21 Heal check'."""
    at(table, -11, stamina=16)
    table.creature("medic", int=10)
    out = table.record("HealCheckRolled", healer="medic", target="ana", roll=d20(20)).outcome
    assert (out["dc"], out["total"], out["success"]) == (21, 20, False)
    out = table.record("HealCheckRolled", healer="medic", target="ana", roll=d20(20, plus=1)).outcome
    assert (out["total"], out["success"]) == (21, True)
    assert table.v("ana")["life"] == "stabilized" and table.hp("ana") == -11


def test_a_disabled_healer_checks_at_minus_2(table: D20Table) -> None:
    """DH-11: checks at -2 while disabled. -5 HP: DC 15; a 16 is a 14."""
    at(table, -5, stamina=16)
    at(table, 0, who="medic", stamina=16)
    out = table.heal_check("medic", "ana", 16).outcome
    assert (out["dc"], out["total"], out["success"]) == (15, 14, False)


def test_heal_check_refusals(table: D20Table) -> None:
    at(table, -5, stamina=16)
    at(table, -6, who="bo", stamina=16)
    table.creature("medic")
    with refused("INVALID_INPUT"):
        table.heal_check("ana", "ana", 20)
    with refused("NOT_CONSCIOUS"):
        table.heal_check("bo", "ana", 20)
    table.heal_check("medic", "ana", 20)
    with refused("ALREADY_STABLE"):
        table.heal_check("medic", "ana", 20)
    table.heal("ana", 10)
    with refused("NOT_DYING"):
        table.heal_check("medic", "ana", 20)


# ----------------------------------------------------------------- B-DH-7 healing
def test_b_dh_7_any_healing_stabilises_then_minus_b_wakes_disabled_then_1_is_fine(table: D20Table) -> None:
    at(table, -10, stamina=16)  # B 3
    table.heal("ana", 1)
    v = table.v("ana")
    assert (v["hp"], v["life"], v["conscious"]) == (-9, "stabilized", False)
    table.heal("ana", 6)  # -3 = -B
    v = table.v("ana")
    assert (v["hp"], v["life"], v["conscious"]) == (-3, "disabled", True)
    table.heal("ana", 4)
    v = table.v("ana")
    assert (v["hp"], v["life"], v["stable"]) == (1, "active", False)


def test_healing_stops_at_max_hp_and_is_refused_for_the_dead_or_for_nothing(table: D20Table) -> None:
    at(table, 15, max_hp=20)
    out = table.heal("ana", 10).outcome
    assert (out["healed"], table.hp("ana")) == (5, 20)
    with refused("INVALID_INPUT"):
        table.heal("ana", 0)
    at(table, -20, who="bo", stamina=10)
    with refused("CREATURE_DEAD"):
        table.heal("bo", 5)


# ----------------------------------------------------------------- DH-13 / B-DH-9 / ruling 26
def test_b_dh_9_stamina_damage_moves_the_thresholds_not_the_hit_points(table: D20Table) -> None:
    """Ruling 26: at -3 with Stamina 16 (B 3) it is disabled; 4 Stamina damage (S 12, B 1):
    still -3 HP, now dying."""
    at(table, -3, stamina=16)
    out = table.ability_damage("ana", "stamina", 4).outcome
    assert (out["S_after"], out["B_after"], out["hp_after"], out["band_after"]) == (12, 1, -3, "dying")


def test_b_dh_9_stamina_damage_that_puts_hp_below_minus_s_kills(table: D20Table) -> None:
    at(table, -13, stamina=16)
    out = table.ability_damage("ana", "stamina", 4).outcome
    assert out["died"] == "hp_threshold" and table.v("ana")["band"] == "dead"


@pytest.mark.parametrize("drain", [False, True])
def test_dh_13_stamina_reduced_to_0_kills(table: D20Table, drain: bool) -> None:
    at(table, 20, stamina=6)
    out = table.ability_damage("ana", "stamina", 6, drain=drain).outcome
    assert out["died"] == "stamina_zero" and table.v("ana")["dead_by"] == "stamina_zero"


def test_dh_13_death_latches_when_stamina_returns(table: D20Table) -> None:
    """A creature dead below -S stays dead: its rest is refused, its thresholds no longer matter."""
    at(table, -13, stamina=16)
    table.ability_damage("ana", "stamina", 4)
    with refused("CREATURE_DEAD"):
        table.record("AbilityRecoveredByRest", creatures=["ana"], kind="sleep", hours=8, clean=True)


def test_other_ability_damage_lowers_what_it_feeds(table: D20Table) -> None:
    table.creature("ana", agility=14, str=14, saves={"ref": 1})
    table.ability_damage("ana", "agility", 6)  # 8: -1
    v = table.v("ana")
    assert (v["effective_abilities"]["agility"], v["saves"]["ref"], v["ac"]["ac"]) == (8, 0, 9)


# ----------------------------------------------------------------- DH-14 house rules
def test_dh_14_four_hours_of_sleep_return_every_lost_score_and_the_thresholds(table: D20Table) -> None:
    at(table, -3, stamina=16)
    table.ability_damage("ana", "stamina", 4)
    table.ability_damage("ana", "str", 2, drain=True)
    assert table.v("ana")["band"] == "dying"
    table.stabilize("ana", 1)
    out = table.record("AbilityRecoveredByRest", creatures=["ana"], kind="sleep", hours=4, clean=True).outcome
    assert out["creatures"]["ana"]["restored"] == {"stamina": 4, "str": 2}
    v = table.v("ana")
    assert (v["S"], v["B"], v["hp"], v["band"], v["ability_damage"], v["ability_drain"]) == (
        16,
        3,
        -3,
        "disabled",
        {},
        {},
    )
    assert table.app.summary(table.cid)["clock_minutes"] == 240


@pytest.mark.parametrize(
    ("kind", "hours", "clean", "code"),
    [
        ("sleep", 3, True, "REST_TOO_SHORT"),
        ("rest", 7, True, "REST_TOO_SHORT"),
        ("rest", 8, False, "REST_NOT_CLEAN"),
    ],
)
def test_dh_14_a_short_or_busy_rest_returns_nothing(
    table: D20Table, kind: str, hours: int, clean: bool, code: str
) -> None:
    table.creature("ana", stamina=16)
    table.ability_damage("ana", "stamina", 2)
    before = table.store_max()
    with refused(code):
        table.record("AbilityRecoveredByRest", creatures=["ana"], kind=kind, hours=hours, clean=clean)
    assert table.store_max() == before and table.v("ana")["S"] == 14


def test_dh_14_eight_hours_of_rest_also_return_them(table: D20Table) -> None:
    table.creature("ana", spirit=12)
    table.ability_damage("ana", "spirit", 5)
    table.record("AbilityRecoveredByRest", creatures=["ana"], kind="rest", hours=8, clean=True)
    assert table.v("ana")["effective_abilities"]["spirit"] == 12


def test_dh_14_resurrection_loses_no_level(table: D20Table) -> None:
    at(table, -20, level=6, stamina=16)
    assert table.v("ana")["band"] == "dead"
    out = table.record("Resurrected", creature="ana", means="raise dead", hp=1).outcome
    v = table.v("ana")
    assert (v["level"], v["hp"], v["life"], v["dead_by"], out["was_dead_by"]) == (
        6,
        1,
        "active",
        None,
        "hp_threshold",
    )


def test_a_resurrection_that_leaves_stamina_at_0_is_refused_unless_it_restores_abilities(
    table: D20Table,
) -> None:
    at(table, 10, stamina=4)
    table.ability_damage("ana", "stamina", 4)
    with refused("STILL_DEAD"):
        table.record("Resurrected", creature="ana", means="raise dead")
    table.record("Resurrected", creature="ana", means="true resurrection", restore_abilities=True)
    assert table.v("ana")["S"] == 4 and table.v("ana")["life"] == "active"
    with refused("NOT_DEAD"):
        table.record("Resurrected", creature="ana", means="again")


def test_death_declared_records_its_cause(table: D20Table) -> None:
    table.creature("ana")
    table.record("DeathDeclared", creature="ana", cause="disintegrated")
    assert table.v("ana")["dead_by"] == "declared"
    with refused("CREATURE_DEAD"):
        table.damage("ana", 1)


# ----------------------------------------------------------------- DH-15 saves
@pytest.mark.parametrize(
    ("face", "plus", "dc", "total", "success"),
    [(1, 30, 13, 34, False), (20, 0, 40, 23, True), (9, 0, 13, 12, False), (10, 0, 13, 13, True)],
)
def test_dh_15_a_natural_1_fails_a_natural_20_succeeds_else_the_total_against_the_dc(
    table: D20Table, face: int, plus: int, dc: int, total: int, success: bool
) -> None:
    table.creature("ana", stamina=14, saves={"fort": 1})  # +1 base, +2 Stamina
    out = table.record(
        "SavingThrowRolled", creature="ana", save="fort", roll=d20(face, plus), dc=dc, effect="poison"
    ).outcome
    assert (out["total"], out["success"]) == (total, success)


def test_dh_11_a_disabled_creature_saves_at_minus_2(table: D20Table) -> None:
    at(table, 0, spirit=10)
    out = table.record("SavingThrowRolled", creature="ana", save="will", roll=d20(11), dc=10).outcome
    assert (out["total"], out["success"]) == (9, False)
    assert {"source": "disabled", "value": -2} in out["parts"]
