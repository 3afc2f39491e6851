"""The A4.9 placeholder pack (B-OR-1): hit points, temporary HP, damage types, dying, death saves,
healing, surges, Rally, stabilising, rests; each behind its ``or.placeholder.*`` flag.

mira: 30 HP (bloodied 15, surge 7, dies at -15), 6 surges; the ogre resists 5 fire; gob 10 HP.
"""

from __future__ import annotations

import pytest

from domain.errors import InvalidInput
from tests.unit.orcus.helpers import OrcusTable, d20, refused, roll


def test_a4_9_hit_points_temporary_hp_first_and_they_do_not_add_up(t: OrcusTable) -> None:
    t.record("TemporaryHitPointsGranted", target="mira", amount=5)
    assert t.record("TemporaryHitPointsGranted", target="mira", amount=3).outcome["temp_hp_after"] == 5
    out = t.damage("mira", 8).outcome
    assert (out["temp_hp_lost"], out["hp_lost"]) == (5, 3)
    v = t.v("mira")
    assert (v["temp_hp"], v["hp"], v["hit_points"]) == (0, 27, {"current": 27, "max": 30, "temporary": 0})


def test_a4_9_bloodied_at_half_max_hp_rounded_down(t: OrcusTable) -> None:
    t.damage("mira", 14)
    assert (t.v("mira")["hp"], t.v("mira")["bloodied"]) == (16, False)
    t.damage("mira", 1)
    assert (t.v("mira")["bloodied_value"], t.v("mira")["bloodied"]) == (15, True)


def test_a4_9_a_hero_at_0_hp_is_dying_and_dies_at_minus_its_bloodied_value(t: OrcusTable) -> None:
    assert t.damage("mira", 30).outcome["life_after"] == "dying"
    v = t.v("mira")
    assert (v["hp"], v["life"], "unconscious" in v["conditions"], v["dies_at"]) == (0, "dying", True, -15)
    t.damage("mira", 14)
    assert (t.hp("mira"), t.v("mira")["life"]) == (-14, "dying")
    t.damage("mira", 1)
    assert t.v("mira")["life"] == "dead"


def test_a4_9_monsters_elites_and_bosses_die_at_0_hp(t: OrcusTable) -> None:
    assert t.damage("gob", 10).outcome["life_after"] == "dead"
    t.damage("ogre", 51)
    assert t.v("ogre")["life"] == "active"
    t.damage("ogre", 1)
    assert t.v("ogre")["life"] == "dead"


def test_or_placeholder_dying_dead_at_zero_switches_dying_off(make_table) -> None:
    t = make_table({"or.placeholder.dying": "dead_at_zero"}).cast()
    assert t.damage("mira", 30).outcome["life_after"] == "dead"


def test_or_placeholder_hit_points_floor_zero_keeps_hp_at_zero(make_table) -> None:
    t = make_table({"or.placeholder.hit_points": "floor_zero"}).cast()
    t.damage("mira", 50)
    assert (t.hp("mira"), t.v("mira")["life"]) == (0, "dying")


def test_a4_9_death_saves_below_10_fail_and_the_third_failure_kills(t: OrcusTable) -> None:
    t.damage("mira", 32)
    outs = [t.record("DeathSavingThrowRolled", creature="mira", roll=d20(f)).outcome for f in (9, 15, 1)]
    assert [o["result"] for o in outs] == ["failure", "no change", "failure"]
    assert t.v("mira")["death_save_failures"] == 2 and t.v("mira")["life"] == "dying"
    assert t.record("DeathSavingThrowRolled", creature="mira", roll=d20(4)).outcome["life_after"] == "dead"


def test_a4_9_a_death_save_of_20_spends_a_surge_and_heals_from_zero(t: OrcusTable) -> None:
    """20+: spend a surge (7): from -5 HP, first to 0 (heal from zero), then 7."""
    t.damage("mira", 35)
    out = t.record("DeathSavingThrowRolled", creature="mira", roll=d20(20)).outcome
    assert (out["result"], out["raised_to_zero"], out["hp_after"], out["life_after"]) == (
        "spends a healing surge",
        5,
        7,
        "active",
    )
    assert t.v("mira")["surges"] == 5


def test_ruling_6_a_death_save_of_20_without_a_surge_changes_nothing(table: OrcusTable) -> None:
    table.hero("kel", surges_per_day=0)
    table.damage("kel", 31)
    out = table.record("DeathSavingThrowRolled", creature="kel", roll=d20(20)).outcome
    assert out["result"].startswith("20 or higher, but no healing surge")
    assert (table.hp("kel"), table.v("kel")["life"]) == (-1, "dying")


def test_a4_9_only_a_dying_creature_rolls_death_saves(t: OrcusTable) -> None:
    with refused("NOT_DYING"):
        t.record("DeathSavingThrowRolled", creature="mira", roll=d20(10))


def test_a4_9_healing_below_zero_starts_from_zero_unless_the_flag_says_otherwise(make_table) -> None:
    for heal_from_zero, expected in ((True, 10), (False, 5)):
        t = make_table({"or.placeholder.heal_from_zero": heal_from_zero}).cast()
        t.damage("mira", 35)
        t.record("HealingApplied", target="mira", flat=10)
        assert (t.hp("mira"), t.v("mira")["life"]) == (expected, "active")


def test_a4_9_healing_surges_and_ruling_6(t: OrcusTable) -> None:
    """A surge is worth floor(30 / 4) = 7 (``or.placeholder.surge_value_divisor``); a healing that
    needs a surge the target does not have restores nothing (ruling 6)."""
    t.damage("mira", 20)
    out = t.record("HealingSurgeSpent", creature="mira").outcome
    assert (out["hp_healed"], out["surges_left"]) == (7, 5)
    out = t.record("HealingApplied", target="mira", surge_multiplier=1, requires_surge=True, flat=2).outcome
    assert (out["surge_spent"], out["hp_healed"]) == (True, 9) and t.hp("mira") == 26
    t.record("SheetUpdated", creature_id="mira", changes={"surges_per_day": 0})
    before = t.store_max()
    with refused("NO_HEALING_SURGE"):
        t.record("HealingSurgeSpent", creature="mira")
    assert t.store_max() == before
    out = t.record("HealingApplied", target="mira", surge_multiplier=1, requires_surge=True).outcome
    assert out["hp_healed"] == 0 and "ruling 6" in out["note"]


def test_or_placeholder_surge_value_divisor(make_table) -> None:
    t = make_table({"or.placeholder.surge_value_divisor": 3}).cast()
    assert t.v("mira")["surge_value"] == 10


def test_or_9_rally_is_usable_once_per_encounter_and_spends_a_surge(t: OrcusTable) -> None:
    """OR-9 (Rally once per encounter) with the A4.9 placeholder (spend a surge, regain 7). Out of
    an encounter it is usable once until a rest."""
    t.damage("mira", 12)
    out = t.record("RallyUsed", creature="mira").outcome
    assert (out["hp_healed"], out["surges_left"]) == (7, 5) and t.v("mira")["rallied"]
    with refused("RALLY_USED"):
        t.record("RallyUsed", creature="mira")
    t.record("ShortRestTaken")
    t.record("RallyUsed", creature="mira")
    assert t.hp("mira") == 30


def test_or_placeholder_rally_none_records_the_use_only(make_table) -> None:
    t = make_table({"or.placeholder.rally": "none"}).cast()
    t.damage("mira", 12)
    t.record("RallyUsed", creature="mira")
    assert (t.hp("mira"), t.v("mira")["surges"]) == (18, 6)


def test_a4_9_stabilising_a_dying_hero(t: OrcusTable) -> None:
    """A check against DC 15 (``or.placeholder.stabilize_dc``): 12 fails, 16 stabilises; damage
    makes it dying again; healing wakes it."""
    t.damage("mira", 31)
    assert t.record("Stabilized", creature="mira", roll=roll("1d20", 12)).outcome["success"] is False
    assert (
        t.record("Stabilized", creature="mira", roll=roll("1d20", 16)).outcome["life_after"] == "stabilized"
    )
    with refused("NOT_DYING"):
        t.record("DeathSavingThrowRolled", creature="mira", roll=d20(3))
    t.damage("mira", 2)
    assert t.v("mira")["life"] == "dying"
    t.record("Stabilized", creature="mira")  # the table's ruling: it worked
    t.record("HealingApplied", target="mira", flat=4)
    assert (t.hp("mira"), t.v("mira")["life"]) == (4, "active")


def test_death_declared_and_the_dead_cannot_be_healed(t: OrcusTable) -> None:
    t.record("DeathDeclared", creature="gob", cause="disintegrated")
    assert t.v("gob")["life"] == "dead"
    with refused("CREATURE_DEAD"):
        t.record("HealingApplied", target="gob", flat=5)


def test_or_16_placeholder_resistance_and_vulnerability_by_type(t: OrcusTable) -> None:
    """The 4e placeholder (core.damage): the ogre resists 5 fire: 10 fire -> 5; fire and cold
    together are resisted only if every type is: 10 -> 10."""
    assert t.damage("ogre", 10, ["fire"]).outcome["amount"] == 5
    assert t.damage("ogre", 10, ["fire", "cold"]).outcome["amount"] == 10
    t.effect("ogre", "mira", components=[{"vuln": {"type": "cold", "value": 3}}])
    assert t.damage("ogre", 10, ["cold"]).outcome["amount"] == 13
    with pytest.raises(InvalidInput, match="unknown damage type"):
        t.damage("ogre", 10, ["plasma"])


def test_or_placeholder_damage_types_a_table_can_name_its_own(make_table) -> None:
    t = make_table({"or.placeholder.damage_types": ["fire", "frost"]})
    t.hero("mira")
    t.damage("mira", 3, ["frost"])
    with pytest.raises(InvalidInput):
        t.damage("mira", 3, ["cold"])
