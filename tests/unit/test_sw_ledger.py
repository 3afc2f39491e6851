"""Issue 3: the Stellar Winds character ledger, one test (or more) per rule.

Each test is named after the RULES.md id it checks. The adopted rulings at the
top of RULES.md override the detailed text; where a test follows one, its name
says so (``test_ruling_N_...``).

The fixture ``table`` (tests/unit/conftest.py) holds ``vex``, a level-5 PC with
40 HP (bloodied value 20, surge value 10), 8 surges, 12 wounds (Con 12) and
AC 29, and ``orc``, a monster with 50 HP and 12 wounds.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.errors import DomainError
from tests.unit.conftest import AXE, Table


def refused(t: Table, code: str, call: Any, *args: Any, **kwargs: Any) -> DomainError:
    """Run a command that must be refused with ``code`` and store nothing."""
    position, stored = t.position, t.store_max()
    with pytest.raises(DomainError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, info.value.message
    assert t.position == position, "a refused command moved the campaign"
    assert t.store_max() == stored, "a refused command wrote to the store"
    return info.value


def effect_power(*components: dict[str, Any], name: str = "effect") -> dict[str, Any]:
    """A power that only puts an effect on its target, hit or miss."""
    return {
        "name": name,
        "kind": "melee",
        "defense": "ac",
        "attack_bonus": 0,
        "effects": [{"name": name, "components": list(components), "on": "always"}],
    }


def put_effect(t: Table, target: str, *components: dict[str, Any]) -> None:
    t.attack("orc", effect_power(*components), [{"target": target, "face": 2}])


def make_dying(t: Table, creature: str = "vex", wounds: int = -2) -> None:
    """Ordinary damage down to ``wounds`` (vex: 40 HP then 12 wounds)."""
    c = t.c(creature)
    t.deal_damage(creature, amount=c["temp_hp"] + c["hp"] + c["wounds"] - wounds)
    assert t.c(creature)["life"] == "dying"
    assert t.c(creature)["wounds"] == wounds


# ------------------------------------------------------------ damage layers
def test_sw_32_b_sw_1_ordinary_damage_goes_to_temp_hp_then_hp_then_wounds(table: Table) -> None:
    table.grant_temporary_hp("vex", 5)
    r = table.deal_damage("vex", amount=50)
    assert (r.outcome["temp_hp_lost"], r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (5, 40, 5)
    vex = table.c("vex")
    assert (vex["temp_hp"], vex["hp"], vex["wounds"], vex["life"]) == (0, 0, 7, "active")


def test_b_sw_2_hp_stop_at_zero_and_later_damage_reduces_wounds(table: Table) -> None:
    table.deal_damage("vex", amount=40)
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (0, 12)
    r = table.deal_damage("vex", amount=3)
    assert (r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (0, 3)
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (0, 9)


def test_sw_21_b_sw_5_wounding_damage_takes_temp_hp_first_then_skips_hp(table: Table) -> None:
    table.grant_temporary_hp("vex", 3)
    r = table.deal_damage("vex", amount=7, wounding=True)
    assert (r.outcome["temp_hp_lost"], r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (3, 0, 4)
    vex = table.c("vex")
    assert (vex["temp_hp"], vex["hp"], vex["wounds"]) == (0, 40, 8)


def test_sw_21_a_critical_hit_deals_its_rolled_damage_as_wounding_damage(table: Table) -> None:
    """B-X-1: 000 governs: a crit deals wounding damage, not 001's maximum damage."""
    # +9 and a natural 20 reach AC 29: a crit. 2d6+4 rolled [3, 2] = 9, not maximised (B-SW-5.2).
    power = {**AXE, "attack_bonus": 9}
    r = table.attack("orc", power, [{"target": "vex", "face": 20, "damage_faces": [3, 2]}])
    hit = r.outcome["targets"][0]
    assert hit["crit"] is True
    assert (hit["damage"]["amount"], hit["damage"]["hp_lost"], hit["damage"]["wounds_lost"]) == (9, 0, 9)
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (40, 3)


# ------------------------------------------------ resistance, vulnerability
def test_sw_28_resistance_reduces_damage_of_its_type_only_and_never_below_zero(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", resist={"fire": 5})
    assert t.deal_damage("vex", amount=8, types=["fire"]).outcome["amount"] == 3
    assert t.deal_damage("vex", amount=8, types=["cold"]).outcome["amount"] == 8
    assert t.deal_damage("vex", amount=3, types=["fire"]).outcome["amount"] == 0
    assert t.c("vex")["hp"] == 40 - 3 - 8


def test_sw_28_vulnerability_adds_to_damage_of_its_type(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", vuln={"fire": 5})
    assert t.deal_damage("vex", amount=8, types=["fire"]).outcome["amount"] == 13
    assert t.deal_damage("vex", amount=8, types=["cold"]).outcome["amount"] == 8


def test_b_sw_14_resistance_and_vulnerability_of_a_type_are_netted(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", resist={"fire": 5}, vuln={"fire": 3})
    assert t.deal_damage("vex", amount=10, types=["fire"]).outcome["amount"] == 8


def test_b_sw_14_multi_type_damage_uses_the_lowest_resistance_if_all_types_are_resisted(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("both", resist={"fire": 5, "cold": 3})
    t.pc("one", resist={"fire": 5})
    assert t.deal_damage("both", amount=10, types=["fire", "cold"]).outcome["amount"] == 7
    assert t.deal_damage("one", amount=10, types=["fire", "cold"]).outcome["amount"] == 10


def test_ruling_15_multi_type_damage_takes_the_highest_vulnerability_once(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", vuln={"fire": 5, "cold": 3})
    assert t.deal_damage("vex", amount=10, types=["fire", "cold"]).outcome["amount"] == 15


def test_sw_29_sw_30_insubstantial_halves_damage_before_resistance(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", resist={"fire": 2})
    t.monster("orc")
    put_effect(t, "vex", {"condition": "insubstantial"})
    assert "insubstantial" in t.c("vex")["conditions"]
    assert t.deal_damage("vex", amount=9).outcome["amount"] == 4  # floor(9 / 2)
    assert t.deal_damage("vex", amount=9, types=["fire"]).outcome["amount"] == 2  # 9 -> 4 -> 4 - 2


# ---------------------------------------------------------- bloodied, temp HP
def test_sw_33_bloodied_when_hp_at_most_half_max_hp(table: Table) -> None:
    table.deal_damage("vex", amount=19)
    assert (table.c("vex")["hp"], table.c("vex")["bloodied"]) == (21, False)
    table.deal_damage("vex", amount=1)
    assert (table.c("vex")["hp"], table.c("vex")["bloodied"]) == (20, True)
    assert table.c("vex")["bloodied_value"] == 20


def test_b_sw_15_bloodied_depends_on_hp_only(table: Table) -> None:
    table.deal_damage("vex", amount=12, wounding=True)  # wounds 0, HP untouched
    assert table.c("vex")["bloodied"] is False
    t_hp0 = table.c("orc")
    table.deal_damage("orc", amount=t_hp0["hp"])  # 0 HP, wounds still full
    assert (table.c("orc")["hp"], table.c("orc")["wounds"], table.c("orc")["bloodied"]) == (0, 12, True)


def test_sw_34_temporary_hp_do_not_stack_the_larger_pool_stays(table: Table) -> None:
    """B-SW-17: the cut temporary-HP bullets follow the 4E-DEFAULT (keep the higher, do not add)."""
    table.grant_temporary_hp("vex", 5)
    assert table.c("vex")["temp_hp"] == 5
    r = table.grant_temporary_hp("vex", 3)
    assert (r.outcome["temp_hp_after"], table.c("vex")["temp_hp"]) == (5, 5)
    table.grant_temporary_hp("vex", 8)
    vex = table.c("vex")
    assert (vex["temp_hp"], vex["hp"]) == (8, 40)  # kept apart from HP, may exceed max HP


def test_sw_34_temporary_hp_end_at_any_rest(table: Table) -> None:
    table.grant_temporary_hp("vex", 8)
    table.short_rest()
    assert table.c("vex")["temp_hp"] == 0


# -------------------------------------------------------- healing and surges
def test_sw_35_healing_never_exceeds_max_hp(table: Table) -> None:
    table.deal_damage("vex", amount=5)
    r = table.heal("vex", flat=20)
    assert r.outcome["hp_healed"] == 5
    assert table.c("vex")["hp"] == 40


def test_sw_36_surge_value_is_a_quarter_of_max_hp_rounded_down(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", max_hp=43)
    assert t.c("vex")["surge_value"] == 10


def test_sw_36_spending_a_surge_restores_its_value_in_hp(table: Table) -> None:
    table.deal_damage("vex", amount=25)
    r = table.spend_surge("vex")
    assert r.outcome["hp_healed"] == 10
    assert (table.c("vex")["hp"], table.c("vex")["surges"]) == (25, 7)


def test_ruling_6_spending_a_surge_with_none_left_is_refused_and_stores_nothing(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=1)
    t.deal_damage("vex", amount=30)
    t.spend_surge("vex")
    before = t.c("vex")
    refused(t, "NO_HEALING_SURGE", t.spend_surge, "vex")
    assert t.c("vex") == before


def test_ruling_6_healing_that_requires_a_surge_the_target_lacks_restores_nothing(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=0)
    t.deal_damage("vex", amount=30)
    position = t.position
    r = t.heal("vex", surge_multiplier=1, flat=5, requires_surge=True)
    assert t.position == position + 1  # accepted and recorded
    assert (r.outcome["surge_spent"], r.outcome["hp_healed"], r.outcome["wounds_healed"]) == (False, 0, 0)
    assert (t.c("vex")["hp"], t.c("vex")["surges"]) == (10, 0)


def test_ruling_6_surge_healing_on_a_dying_target_without_surges_does_not_wake_it(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=0)
    make_dying(t, "vex", wounds=-2)
    t.heal("vex", surge_multiplier=1, requires_surge=True, magical=True)
    vex = t.c("vex")
    assert (vex["life"], vex["wounds"], vex["hp"]) == ("dying", -2, 0)


def test_sw_36_healing_that_requires_a_surge_spends_one_and_adds_its_value(table: Table) -> None:
    table.deal_damage("vex", amount=30)
    r = table.heal("vex", surge_multiplier=1, flat=5, requires_surge=True)
    assert (r.outcome["surge_spent"], r.outcome["hp_healed"]) == (True, 15)
    assert (table.c("vex")["hp"], table.c("vex")["surges"]) == (25, 7)


# --------------------------------------------------------------- second wind
def test_sw_37_b_sw_23_second_wind_spends_a_surge_and_heals_hp_only(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # hp 0, wounds 7
    r = table.second_wind("vex")
    assert r.outcome["hp_healed"] == 10
    vex = table.c("vex")
    assert (vex["hp"], vex["wounds"], vex["surges"], vex["second_wind_used"]) == (10, 7, 7, True)


def test_sw_37_second_wind_is_for_player_characters_only(table: Table) -> None:
    table.deal_damage("orc", amount=20)
    refused(table, "NOT_ALLOWED", table.second_wind, "orc")


def test_b_sw_23_second_wind_once_until_a_rest(table: Table) -> None:
    table.deal_damage("vex", amount=30)
    table.second_wind("vex")
    refused(table, "SECOND_WIND_USED", table.second_wind, "vex")
    table.short_rest()  # adopted ruling 12: a short or extended rest regains it
    assert table.c("vex")["second_wind_used"] is False
    table.second_wind("vex")
    assert table.c("vex")["hp"] == 30


def test_ruling_6_second_wind_without_a_surge_is_refused(make_table: Any) -> None:
    t = make_table()
    t.pc("vex", surges=0)
    t.deal_damage("vex", amount=30)
    refused(t, "NO_HEALING_SURGE", t.second_wind, "vex")
    assert t.c("vex")["second_wind_used"] is False


# ------------------------------------------------------------------ knock-out
def test_b_sw_11_nonlethal_damage_knocks_out_instead_of_killing(table: Table) -> None:
    r = table.deal_damage("vex", amount=40 + 12 + 30, nonlethal=True)  # would be wounds -30: dead
    assert r.outcome["life_after"] == "knocked_out"
    vex = table.c("vex")
    assert (vex["life"], vex["wounds"], vex["hp"]) == ("knocked_out", 0, 0)
    assert {"unconscious", "helpless"} <= set(vex["conditions"])
    refused(table, "NOT_DYING", table.death_save, "vex", face=5)  # no death saves


def test_b_sw_11_knocked_out_wakes_after_a_short_rest_with_1_hp_and_1_wound(table: Table) -> None:
    table.deal_damage("vex", amount=60, nonlethal=True)
    table.short_rest(["vex"])
    vex = table.c("vex")
    assert (vex["life"], vex["hp"], vex["wounds"]) == ("active", 1, 1)


def test_sw_39_any_healing_wakes_a_knocked_out_creature(table: Table) -> None:
    table.deal_damage("vex", amount=60, nonlethal=True)
    table.heal("vex", flat=5)
    vex = table.c("vex")
    assert (vex["life"], vex["wounds"], vex["hp"]) == ("active", 1, 5)


def test_ruling_14_knocked_out_creature_that_takes_damage_is_dying(table: Table) -> None:
    table.deal_damage("vex", amount=60, nonlethal=True)
    table.deal_damage("vex", amount=3)
    vex = table.c("vex")
    assert (vex["life"], vex["wounds"]) == ("dying", -3)


# ------------------------------------------------------------- dying and death
def test_sw_41_dying_when_wounds_drop_to_zero(table: Table) -> None:
    """B-SW-6: dying is at 0 wounds (000), not at 0 HP (001)."""
    table.deal_damage("vex", amount=51)
    assert (table.c("vex")["wounds"], table.c("vex")["life"]) == (1, "active")
    table.deal_damage("vex", amount=1)
    vex = table.c("vex")
    assert (vex["wounds"], vex["life"]) == (0, "dying")
    assert {"dying", "unconscious", "helpless", "prone"} <= set(vex["conditions"])


def test_sw_43_ruling_8_dead_at_minus_10_wounds_and_wounds_are_not_clamped(table: Table) -> None:
    table.deal_damage("vex", amount=40 + 12 + 9)
    assert (table.c("vex")["wounds"], table.c("vex")["life"]) == (-9, "dying")
    table.deal_damage("vex", amount=6)
    assert (table.c("vex")["wounds"], table.c("vex")["life"]) == (-15, "dead")


def test_ruling_10_damage_while_dying_goes_to_wounds_even_with_hp_left(table: Table) -> None:
    """B-SW-3 read literally: damage taken while dying reduces wounds."""
    table.deal_damage("vex", amount=12, wounding=True)  # wounds 0, HP 40: dying
    assert (table.c("vex")["hp"], table.c("vex")["life"]) == (40, "dying")
    table.grant_temporary_hp("vex", 2)
    r = table.deal_damage("vex", amount=5)
    assert (r.outcome["temp_hp_lost"], r.outcome["hp_lost"], r.outcome["wounds_lost"]) == (2, 0, 3)
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (40, -3)


def test_b_sw_13_monsters_die_at_zero_wounds_without_death_saves(table: Table) -> None:
    table.deal_damage("orc", amount=50 + 11)
    assert table.c("orc")["life"] == "active"
    table.deal_damage("orc", amount=1)
    assert (table.c("orc")["wounds"], table.c("orc")["life"]) == (0, "dead")


def test_b_sw_13_npcs_die_at_zero_wounds_too(make_table: Any) -> None:
    t = make_table()
    t.monster("guard", kind="npc", max_hp=10, con=4)
    t.deal_damage("guard", amount=14)
    assert t.c("guard")["life"] == "dead"


def test_b_sw_13_heroic_monsters_are_dying_and_make_death_saves(make_table: Any) -> None:
    t = make_table()
    t.monster("boss", heroic=True)
    t.deal_damage("boss", amount=50 + 12 + 2)
    assert t.c("boss")["life"] == "dying"
    t.death_save("boss", face=3)
    assert t.c("boss")["death_save_failures"] == 1


# ----------------------------------------------------------- death saves
def test_b_sw_7_a_death_save_below_10_fails_and_the_third_failure_kills(table: Table) -> None:
    make_dying(table)
    for n, face in enumerate((9, 5), start=1):
        r = table.death_save("vex", face=face)
        assert r.outcome["result"] == "failure"
        assert (table.c("vex")["death_save_failures"], table.c("vex")["life"]) == (n, "dying")
    table.death_save("vex", face=1)
    vex = table.c("vex")
    assert (vex["death_save_failures"], vex["life"], vex["wounds"]) == (3, "dead", -2)  # no wound cost


def test_sw_42_a_death_save_of_10_to_19_changes_nothing(table: Table) -> None:
    make_dying(table)
    before = table.c("vex")
    for face in (10, 19):
        assert table.death_save("vex", face=face).outcome["result"] == "no change"
    assert table.c("vex") == before


def test_ruling_11_a_death_save_of_20_spends_a_surge_and_heals_through_the_normal_path(table: Table) -> None:
    make_dying(table, wounds=-2)
    r = table.death_save("vex", face=20)
    assert r.outcome["life_after"] == "active"
    vex = table.c("vex")
    assert (vex["surges"], vex["wounds"], vex["hp"], vex["life"]) == (7, 1, 10, "active")
    assert "prone" in vex["conditions"]  # still prone (SW-40)


def test_ruling_11_modifiers_can_push_a_death_save_to_20(table: Table) -> None:
    make_dying(table)
    table.death_save("vex", face=18, modifiers=[{"source": "bless", "value": 2}])
    assert table.c("vex")["life"] == "active"


def test_ruling_11_a_death_save_of_20_never_lowers_hp(table: Table) -> None:
    table.deal_damage("vex", amount=14, wounding=True)  # wounds -2, HP still 40
    table.death_save("vex", face=20)
    vex = table.c("vex")
    assert (vex["hp"], vex["wounds"], vex["life"], vex["surges"]) == (40, 1, "active", 7)


def test_b_sw_16_a_death_save_of_20_with_no_surge_left_is_recorded_and_changes_nothing(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex", surges=0)
    make_dying(t)
    before, position = t.c("vex"), t.position
    t.death_save("vex", face=20)
    assert t.position == position + 1
    assert t.c("vex") == before


def test_ruling_12_death_save_failures_reset_on_rests_not_on_healing(table: Table) -> None:
    make_dying(table)
    table.death_save("vex", face=2)
    table.heal("vex", flat=5)
    assert (table.c("vex")["life"], table.c("vex")["death_save_failures"]) == ("active", 1)
    table.short_rest()
    assert table.c("vex")["death_save_failures"] == 0


def test_ruling_12_failures_kept_across_healing_still_count_towards_death(table: Table) -> None:
    make_dying(table)
    table.death_save("vex", face=2)
    table.heal("vex", flat=5)
    make_dying(table)
    table.death_save("vex", face=2)
    table.death_save("vex", face=2)
    assert table.c("vex")["life"] == "dead"


def test_death_save_refused_for_a_creature_that_is_not_dying(table: Table) -> None:
    refused(table, "NOT_DYING", table.death_save, "vex", face=5)


def test_b_sw_13_non_heroic_monsters_make_no_death_saves(table: Table) -> None:
    table.deal_damage("orc", amount=62)
    assert table.c("orc")["life"] == "dead"
    with pytest.raises(DomainError):
        table.death_save("orc", face=5)


# ------------------------------------------------------ stabilisation, B-SW-9
def test_b_sw_10_stabilisation_is_a_dc_15_check(table: Table) -> None:
    make_dying(table)
    r = table.stabilize("vex", check="1d20", faces=[14])
    assert (r.outcome["dc"], r.outcome["success"], table.c("vex")["life"]) == (15, False, "dying")
    r = table.stabilize("vex", check="1d20", faces=[15])
    assert (r.outcome["success"], table.c("vex")["life"]) == (True, "stabilized")
    refused(table, "NOT_DYING", table.death_save, "vex", face=5)  # no more death saves


def test_b_sw_10_a_stabilised_character_wakes_with_1_wound_after_an_extended_rest(table: Table) -> None:
    make_dying(table, wounds=-4)
    table.stabilize("vex", check="1d20", faces=[17])
    table.extended_rest()
    vex = table.c("vex")
    assert (vex["life"], vex["wounds"], vex["hp"]) == ("active", 1, 40)


def test_b_sw_10_damage_makes_a_stabilised_character_dying_again(table: Table) -> None:
    make_dying(table, wounds=-4)
    table.stabilize("vex", check="1d20", faces=[17])
    table.deal_damage("vex", amount=1)
    assert (table.c("vex")["life"], table.c("vex")["wounds"]) == ("dying", -5)


def test_b_sw_9_magical_healing_of_a_dying_creature_sets_wounds_to_1_then_heals_wounds_first(
    table: Table,
) -> None:
    make_dying(table, wounds=-3)
    r = table.heal("vex", flat=15, magical=True)
    steps = (r.outcome["wounds_raised_to_conscious"], r.outcome["wounds_healed"], r.outcome["hp_healed"])
    assert steps == (4, 11, 4)  # -3 -> 1 free, then 11 wounds to the max of 12, the 4 left to HP
    vex = table.c("vex")
    assert (vex["wounds"], vex["hp"], vex["life"]) == (12, 4, "active")


def test_b_sw_9_non_magical_healing_of_a_dying_creature_sets_wounds_to_1_and_heals_hp_only(
    table: Table,
) -> None:
    make_dying(table, wounds=-3)
    table.heal("vex", flat=15)
    vex = table.c("vex")
    assert (vex["wounds"], vex["hp"], vex["life"]) == (1, 15, "active")


def test_b_sw_9_magical_healing_restores_wounds_first_when_not_dying(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # hp 0, wounds 7
    table.heal("vex", flat=8, magical=True)
    assert (table.c("vex")["wounds"], table.c("vex")["hp"]) == (12, 3)


# ------------------------------------------------------- wounds and rests
def test_sw_40_an_extended_rest_restores_hp_but_not_wounds(table: Table) -> None:
    table.deal_damage("vex", amount=45)
    table.extended_rest()
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (40, 7)


def test_b_sw_27_long_term_care_restores_at_most_1_wound_per_patient_per_day(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # wounds 7
    table.restore_wounds("vex", 1, "long_term_care", caregiver="orc")
    assert table.c("vex")["wounds"] == 8
    refused(table, "ALREADY_CARED_TODAY", table.restore_wounds, "vex", 1, "long_term_care")
    table.advance_time(1440)
    refused(table, "TOO_MUCH", table.restore_wounds, "vex", 2, "long_term_care")
    table.restore_wounds("vex", 1, "long_term_care")
    assert table.c("vex")["wounds"] == 9


def test_b_sw_27_medical_treatment_restores_the_amount_given_capped_at_max(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # wounds 7
    table.restore_wounds("vex", 3, "medical")
    assert table.c("vex")["wounds"] == 10
    table.restore_wounds("vex", 9, "medical")
    assert table.c("vex")["wounds"] == 12


def test_sw_49_short_rest_contents(table: Table) -> None:
    """SW-48, C1.1: a short rest clears the action-point lock; the creature state of C1.1 shows it."""
    table.deal_damage("vex", amount=30)
    table.grant_temporary_hp("vex", 4)
    table.second_wind("vex")
    table.spend_action_point("vex")
    make_dying(table)
    table.death_save("vex", face=3)
    table.heal("vex", flat=2)
    before = table.c("vex")
    clock = table.summary()["clock_minutes"]
    table.short_rest()
    vex = table.c("vex")
    assert vex["second_wind_used"] is False  # second wind regained
    assert vex["action_point_spent_since_rest"] is False  # AP lock cleared
    assert vex["temp_hp"] == 0  # temp HP end
    assert vex["death_save_failures"] == 0  # failures reset
    assert (vex["hp"], vex["wounds"], vex["surges"]) == (before["hp"], before["wounds"], before["surges"])
    assert vex["action_points"] == before["action_points"]
    assert table.summary()["clock_minutes"] == clock + 5


def test_sw_49_short_rest_surges_are_spent_one_fact_each_for_hp(table: Table) -> None:
    table.deal_damage("vex", amount=45)
    table.short_rest()
    table.spend_surge("vex")
    table.spend_surge("vex")
    assert (table.c("vex")["hp"], table.c("vex")["wounds"], table.c("vex")["surges"]) == (20, 7, 6)


def test_sw_49_extended_rest_contents(table: Table) -> None:
    table.record("MilestoneReached", {"creatures": ["vex"]})
    table.deal_damage("vex", amount=30)
    table.spend_surge("vex")
    table.second_wind("vex")
    table.spend_action_point("vex")
    table.grant_temporary_hp("vex", 4)
    clock = table.summary()["clock_minutes"]
    table.extended_rest()
    vex = table.c("vex")
    assert (vex["hp"], vex["surges"], vex["temp_hp"]) == (40, 8, 0)
    assert (vex["action_points"], vex["action_point_spent_since_rest"]) == (1, False)
    assert (vex["second_wind_used"], vex["death_save_failures"]) == (False, 0)
    assert table.summary()["clock_minutes"] == clock + 360


def test_b_sw_25_only_one_extended_rest_per_24_game_hours(table: Table) -> None:
    table.extended_rest()  # clock 0 -> 360
    refused(table, "EXTENDED_REST_TOO_SOON", table.extended_rest)
    table.advance_time(1079)  # 23 h 59 min after the first rest began
    refused(table, "EXTENDED_REST_TOO_SOON", table.extended_rest)
    table.advance_time(1)
    table.extended_rest()


def test_sw_49_no_rest_while_a_participant_is_dying(table: Table) -> None:
    make_dying(table)
    refused(table, "CREATURE_DYING", table.short_rest)


# ------------------------------------------------------------ action points
def test_sw_14_a_pc_starts_with_1_action_point_monsters_with_none(table: Table) -> None:
    assert table.c("vex")["action_points"] == 1
    assert table.c("orc")["action_points"] == 0
    refused(table, "NO_ACTION_POINT", table.spend_action_point, "orc")


def test_sw_15_one_action_point_per_short_rest(table: Table) -> None:
    table.record("MilestoneReached", {"creatures": ["vex"]})
    assert table.c("vex")["action_points"] == 2
    table.spend_action_point("vex")
    assert table.c("vex")["action_points"] == 1
    refused(table, "ACTION_POINT_LOCKED", table.spend_action_point, "vex")
    table.short_rest()
    table.spend_action_point("vex")
    assert table.c("vex")["action_points"] == 0
    table.short_rest()
    refused(table, "NO_ACTION_POINT", table.spend_action_point, "vex")


def test_sw_14_a_milestone_gives_1_action_point(table: Table) -> None:
    table.record("MilestoneReached", {"creatures": ["vex"]})
    table.record("MilestoneReached", {"creatures": ["vex"]})
    assert table.c("vex")["action_points"] == 3


def test_b_sw_18_an_extended_rest_resets_action_points_to_1(table: Table) -> None:
    table.record("MilestoneReached", {"creatures": ["vex"]})
    table.record("MilestoneReached", {"creatures": ["vex"]})
    table.extended_rest()
    assert table.c("vex")["action_points"] == 1
    table.spend_action_point("vex")
    table.advance_time(24 * 60)
    table.extended_rest()
    assert table.c("vex")["action_points"] == 1


# ------------------------------------------------------------ XP and level
def test_ruling_9_a_pc_registered_at_level_n_has_that_levels_xp_threshold(table: Table) -> None:
    assert (table.c("vex")["xp"], table.c("vex")["level"]) == (5500, 5)


@pytest.mark.parametrize(
    ("xp", "level"),
    [
        (0, 1),
        (999, 1),
        (1000, 2),
        (20_499, 9),
        (20_500, 10),
        (25_499, 10),
        (25_500, 11),
        (26_000, 11),
        (142_500, 20),
        (826_499, 29),
        (826_500, 30),
        (5_000_000, 30),
    ],
)
def test_ruling_3_a4_2_level_derives_from_xp_on_the_orcus_table(make_table: Any, xp: int, level: int) -> None:
    t = make_table()
    t.pc("vex", level=1, xp=0)
    if xp:
        t.award_xp(["vex"], xp)
    assert (t.c("vex")["xp"], t.c("vex")["level"]) == (xp, level)


def test_ruling_3_an_xp_award_raises_the_level_and_its_revocation_lowers_it(table: Table) -> None:
    award = table.award_xp(["vex"], 2000)
    assert award.outcome["creatures"]["vex"] == {"xp": 7500, "level_before": 5, "level_after": 6}
    assert table.c("vex")["level"] == 6
    table.revoke(award.position, "wrong award")
    assert (table.c("vex")["xp"], table.c("vex")["level"]) == (5500, 5)


def test_ruling_3_a_level_up_changes_no_sheet_numbers(table: Table) -> None:
    before = table.c("vex")
    table.award_xp(["vex"], 2000)
    after = table.c("vex")
    for key in ("max_hp", "surges_per_day", "defenses"):
        assert after[key] == before[key]


def test_ruling_3_a_campaign_can_set_its_own_xp_table(make_table: Any) -> None:
    """B-X-3, SW-50: the XP table is campaign configuration; XP are plain awards."""
    t = make_table({"xp_table": [0, 100, 300, 600]})
    t.pc("vex", level=2)
    assert (t.c("vex")["xp"], t.c("vex")["level"]) == (100, 2)
    t.award_xp(["vex"], 200)
    assert t.c("vex")["level"] == 3


def test_ruling_3_an_xp_table_flag_set_later_relevels_from_then_on(table: Table) -> None:
    position = table.position
    table.set_flag("xp_table", [0, 100, 200, 300, 400, 500, 5000])
    assert table.c("vex")["level"] == 7  # 5500 XP reaches the 7th threshold (5000)
    assert table.c("vex", position)["level"] == 5


def test_ruling_9_monsters_track_no_xp(table: Table) -> None:
    assert table.c("orc")["xp"] is None
    refused(table, "NOT_ALLOWED", table.award_xp, ["orc"], 100)
    refused(table, "NOT_ALLOWED", table.award_xp, ["vex", "orc"], 100)
    assert table.c("vex")["xp"] == 5500


# ------------------------------------------------------------------ attacks
def test_sw_19_a_natural_1_always_misses(table: Table) -> None:
    power = {**AXE, "attack_bonus": 40}
    r = table.attack("orc", power, [{"target": "vex", "face": 1, "damage_faces": [6, 6]}])
    assert r.outcome["targets"][0]["hit"] is False
    assert table.c("vex")["hp"] == 40


def test_sw_19_sw_20_a_natural_20_always_hits_but_crits_only_when_the_total_hits(table: Table) -> None:
    """B-X-5: Stellar Winds' own natural 20: a crit only if the total hits."""
    power = {**AXE, "attack_bonus": 0}
    r = table.attack("orc", power, [{"target": "vex", "face": 20, "damage_faces": [3, 3]}])
    hit = r.outcome["targets"][0]
    assert (hit["attack_total"], hit["hit"], hit["crit"]) == (20, True, False)
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (30, 12)  # ordinary damage


def test_sw_20_a_natural_20_that_reaches_the_defense_is_a_crit(table: Table) -> None:
    power = {**AXE, "attack_bonus": 9}
    r = table.attack("orc", power, [{"target": "vex", "face": 20, "damage_faces": [3, 3]}])
    hit = r.outcome["targets"][0]
    assert (hit["attack_total"], hit["hit"], hit["crit"]) == (29, True, True)


def test_sw_19_a_total_below_the_defense_misses(table: Table) -> None:
    hit = table.hit_vex([6, 6], face=18).outcome["targets"][0]  # 26 < 29
    assert (hit["attack_total"], hit["hit"]) == (26, False)
    assert table.c("vex")["hp"] == 40


def test_ruling_13_a_coup_de_grace_is_an_attack_roll_and_can_miss(table: Table) -> None:
    put_effect(table, "vex", {"condition": "unconscious"})  # helpless, AC 29 - 5 = 24
    cdg = {**AXE, "damage": "2d6+8"}
    r = table.attack("orc", cdg, [{"target": "vex", "face": 2, "damage_faces": [6, 6]}], coup_de_grace=True)
    assert r.outcome["targets"][0]["hit"] is False
    assert (table.c("vex")["hp"], table.c("vex")["wounds"]) == (40, 12)


def test_ruling_13_b_sw_12_a_coup_de_grace_hit_is_a_crit_that_slays_at_the_bloodied_value(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex", max_wounds=40)  # bloodied value 20; 40 wounds so layering alone cannot kill
    t.pc("kit", max_wounds=40)
    t.monster("orc")
    for who in ("vex", "kit"):
        put_effect(t, who, {"condition": "unconscious"})
    cdg = {**AXE, "damage": "2d6+8"}
    # any hit is a crit: 14 + 8 + 2 (target helpless) = 24 reaches AC 24 and is not a natural 20
    r = t.attack("orc", cdg, [{"target": "vex", "face": 14, "damage_faces": [6, 5]}], coup_de_grace=True)
    hit = r.outcome["targets"][0]
    assert (hit["hit"], hit["crit"], hit["damage"]["amount"]) == (True, True, 19)
    assert (t.c("vex")["hp"], t.c("vex")["wounds"], t.c("vex")["life"]) == (40, 21, "active")  # wounding
    r = t.attack("orc", cdg, [{"target": "kit", "face": 14, "damage_faces": [6, 6]}], coup_de_grace=True)
    assert r.outcome["targets"][0]["damage"]["amount"] == 20
    assert (t.c("kit")["wounds"], t.c("kit")["life"]) == (20, "dead")  # slain outright


def test_sw_22_a_coup_de_grace_needs_a_helpless_target(table: Table) -> None:
    refused(
        table,
        "NOT_HELPLESS",
        table.attack,
        "orc",
        dict(AXE),
        [{"target": "vex", "face": 19, "damage_faces": [6, 6]}],
        coup_de_grace=True,
    )


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda t: t.deal_damage("vex", amount=-3), "INVALID_INPUT"),
        (lambda t: t.heal("vex", flat=-1), "INVALID_INPUT"),
        (lambda t: t.grant_temporary_hp("vex", -5), "INVALID_INPUT"),
        (lambda t: t.award_xp(["vex"], -100), "INVALID_INPUT"),
        (lambda t: t.restore_wounds("vex", 0, "medical"), "INVALID_INPUT"),
        (lambda t: t.deal_damage("vex", amount=2.5), "INVALID_INPUT"),
        (lambda t: t.deal_damage("vex", amount="5"), "INVALID_INPUT"),
        (lambda t: t.deal_damage("vex", amount=True), "INVALID_INPUT"),
        (lambda t: t.grant_temporary_hp("vex", 1.5), "INVALID_INPUT"),
        (lambda t: t.deal_damage("nobody", amount=3), "NOT_FOUND"),
        (lambda t: t.heal("nobody", flat=3), "NOT_FOUND"),
        (lambda t: t.spend_surge("nobody"), "NOT_FOUND"),
        (lambda t: t.award_xp(["nobody"], 10), "NOT_FOUND"),
        (lambda t: t.attack("nobody", dict(AXE), [{"target": "vex", "face": 10}]), "NOT_FOUND"),
        (lambda t: t.attack("orc", dict(AXE), [{"target": "nobody", "face": 10}]), "NOT_FOUND"),
        (lambda t: t.deal_damage("vex", "2d6+"), "INVALID_DICE"),
        (lambda t: t.deal_damage("vex", "2d6", faces=[7, 1]), "INVALID_DICE"),
        (lambda t: t.deal_damage("vex", "2d6", faces=[3]), "INVALID_DICE"),
        (lambda t: t.deal_damage("vex", "1d6*2"), "INVALID_DICE"),
        (lambda t: t.death_save("vex", face=21), "INVALID_DICE"),
        (
            lambda t: t.record(
                "DamageTaken",
                {
                    "target": "vex",
                    "roll": {"expression": "1d6", "terms": [{"sides": 6, "faces": [9], "sign": 1}]},
                },
            ),
            "INVALID_DICE",
        ),
        (lambda t: t.deal_damage("vex", amount=3, types=["frost"]), "INVALID_INPUT"),
        (lambda t: t.record("DamageTaken", {"target": "vex", "amount": 3, "bogus": 1}), "INVALID_INPUT"),
        (lambda t: t.record("NoSuchFact", {}), "INVALID_INPUT"),
    ],
)
def test_bad_input_gives_a_typed_error_and_stores_nothing(table: Table, call: Any, code: str) -> None:
    before = table.summary()
    refused(table, code, call, table)
    assert table.summary() == before


def test_acting_for_a_dead_creature_is_refused(table: Table) -> None:
    table.record("DeathDeclared", {"creature": "vex", "cause": "disintegrated"})
    assert table.c("vex")["life"] == "dead"
    refused(table, "CREATURE_DEAD", table.spend_surge, "vex")
    refused(table, "CREATURE_DEAD", table.second_wind, "vex")
    refused(table, "CREATURE_DEAD", table.spend_action_point, "vex")
    refused(table, "CREATURE_DEAD", table.heal, "vex", flat=5)
    refused(table, "CREATURE_DEAD", table.grant_temporary_hp, "vex", 5)
    refused(table, "CREATURE_DEAD", table.deal_damage, "vex", amount=5)
    refused(table, "CREATURE_DEAD", table.attack, "vex", {**AXE}, [{"target": "orc", "face": 10}])
    refused(table, "CREATURE_DEAD", table.attack, "orc", {**AXE}, [{"target": "vex", "face": 10}])


def test_a_dead_creature_can_be_raised(table: Table) -> None:
    table.record("DeathDeclared", {"creature": "vex", "cause": "disintegrated"})
    table.record("CreatureRaised", {"creature": "vex", "means": "raise dead", "hp": 5, "wounds": 2})
    vex = table.c("vex")
    assert (vex["life"], vex["hp"], vex["wounds"]) == ("active", 5, 2)


# ---------------------------------------------------------------- rules flags
def test_c0_4_a_rules_flag_applies_from_its_position_on(table: Table) -> None:
    table.deal_damage("vex", amount=45)  # hp 0, wounds 7
    table.heal("vex", flat=3, magical=True)
    assert (table.c("vex")["wounds"], table.c("vex")["hp"]) == (10, 0)
    flag = table.set_flag("sw.magic_heals_wounds_first", False)
    table.heal("vex", flat=3, magical=True)
    assert (table.c("vex")["wounds"], table.c("vex")["hp"]) == (10, 3)  # the earlier heal is not re-read
    assert table.summary(flag.position - 1)["flags"]["sw.magic_heals_wounds_first"] is True
    assert table.summary()["flags"]["sw.magic_heals_wounds_first"] is False


def test_b_sw_10_stabilisation_dc_flag(table: Table) -> None:
    make_dying(table)
    table.set_flag("sw.first_aid_stabilize_dc", 12)
    assert table.stabilize("vex", check="1d20", faces=[12]).outcome["success"] is True


def test_an_unknown_or_ill_typed_flag_is_refused(table: Table) -> None:
    refused(table, "INVALID_INPUT", table.set_flag, "sw.no_such_flag", 1)
    refused(table, "INVALID_INPUT", table.set_flag, "sw.first_aid_stabilize_dc", "15")


# -------------------------------------------------- C1.2 worked example (part 1)
def test_c1_contested_ruling_example_before_correction(make_table: Any) -> None:
    """C1.2 "Example of a contested ruling (SW)", up to the ruling being contested."""
    t = make_table()
    t.pc("vex")
    t.monster("orc")
    t.deal_damage("vex", amount=29)
    t.deal_damage("vex", amount=10, wounding=True)
    vex = t.c("vex")
    assert (vex["hp"], vex["wounds"], vex["temp_hp"]) == (11, 2, 0)  # 11 HP, 2 wounds, no temp HP
    t.record_ruling("r-4", "Is the target flanked?", "target was flanked: combat advantage")
    a9 = t.attack(
        "orc",
        dict(AXE),
        [
            {
                "target": "vex",
                "face": 19,
                "damage_faces": [5, 5],
                "circumstances": [{"name": "combat_advantage", "ruling": "r-4"}],
            }
        ],
    )
    hit = a9.outcome["targets"][0]
    assert (hit["natural"], hit["attack_total"], hit["defense_value"], hit["hit"]) == (19, 29, 29, True)
    assert {"source": "combat advantage", "value": 2} in hit["attack_parts"]
    assert hit["damage"]["amount"] == 14
    assert (hit["damage"]["hp_lost"], hit["damage"]["wounds_lost"]) == (11, 3)
    vex = t.c("vex")
    assert (vex["hp"], vex["wounds"], vex["life"]) == (0, -1, "dying")
    save = t.death_save("vex", face=7)
    assert save.outcome["result"] == "failure"
    contest = t.contest_ruling("r-4", "the rogue was not adjacent: no flank", by="player")
    assert contest.outcome == {"orphaned": [], "no_longer_orphaned": []}
    assert t.ledger.resolution.ruling_status["r-4"] == "contested"
    vex = t.c("vex")  # contesting has no state effect
    assert (vex["hp"], vex["wounds"], vex["life"], vex["death_save_failures"]) == (0, -1, "dying", 1)
    assert t.orphans() == {}


def test_sw_36_a_heal_shows_its_breakdown_surge_value_dice_and_flat(table: Any) -> None:
    """Every derived number in the outcome with its parts: here surge value x 2 + dice + flat."""
    t = table
    t.deal_damage("vex", amount=30)
    roll = t.app.roll("1d6", faces=[4])
    out = t.heal("vex", surge_multiplier=2, roll=None, flat=3, magical=False, requires_surge=True).outcome
    assert out["parts"] == [{"source": "2 x surge value", "value": 20}, {"source": "flat", "value": 3}]
    assert out["hp_healed"] == 23
    out = t.record("HealingApplied", {"target": "vex", "roll": roll, "flat": 0}).outcome
    assert out["parts"] == [{"source": "dice", "value": 4}] and out["hp_healed"] == 4
