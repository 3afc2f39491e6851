"""Sheets (RULES.md A3, C3.1, DH-3, DH-6, DH-15): abilities, S and B, saves, AC, the views."""

from __future__ import annotations

from importlib import metadata

import pytest

from domain import rulesets
from domain.errors import DomainError
from domain.rulesets.d20_house.hooks import initiative_bonus
from tests.unit.d20.helpers import RULESET, D20Table


def test_the_d20_ruleset_is_found_through_its_entry_point() -> None:
    names = {ep.name: ep.value for ep in metadata.entry_points(group=rulesets.ENTRY_POINT_GROUP)}
    assert names["d20"] == "domain.rulesets.d20_house:D20_HOUSE"
    assert rulesets.get_ruleset("d20") is RULESET
    assert isinstance(RULESET, rulesets.Ruleset)
    assert "d20" not in rulesets.problems()


@pytest.mark.parametrize(
    ("stamina", "mod", "b"),
    [(16, 3, 3), (17, 3, 3), (10, 0, 0), (11, 0, 0), (9, -1, 0), (8, -1, 0), (7, -2, 0), (1, -5, 0)],
)
def test_modifier_is_floor_of_half_score_minus_ten_and_b_is_never_negative(
    table: D20Table, stamina: int, mod: int, b: int
) -> None:
    """A3 PROPOSAL (flag dh.ability_modifier) and B-DH-2: B = max(0, Stamina modifier)."""
    table.creature("ana", stamina=stamina)
    v = table.v("ana")
    assert (v["modifiers"]["stamina"], v["S"], v["B"]) == (mod, stamina, b)


def test_c3_1_view_has_the_common_keys_and_the_d20_ones(table: D20Table) -> None:
    """C3.1 creature state; SEAM.md common view keys."""
    table.creature("ana", kind="npc", level=3, stamina=14, max_hp=25, **{"class": "warrior"})
    v = table.v("ana")
    common = {"id", "name", "kind", "level", "life", "conditions", "effects", "hit_points"}
    assert common <= set(v)
    assert (v["id"], v["name"], v["kind"], v["level"], v["class"]) == ("ana", "Ana", "npc", 3, "warrior")
    assert v["life"] == "active" and v["band"] == "fine" and v["conditions"] == []
    assert v["hit_points"] == {"current": 25, "max": 25, "temporary": 0}
    for key in ("abilities", "S", "B", "band", "stable", "dead_by", "flat_footed", "aoo_used", "aoo_allowed"):
        assert key in v, key
    assert v["thresholds"] == {
        "disabled_from": 0,
        "disabled_to": -2,
        "dying_from": -3,
        "dying_to": -14,
        "dead_below": -14,
    }


def test_dh_15_saves_add_stamina_agility_and_spirit_to_the_base_saves(table: D20Table) -> None:
    """DH-15: Fortitude + Stamina, Reflex + Agility, Will + Spirit."""
    table.creature("ana", stamina=14, agility=8, spirit=17, saves={"fort": 2, "ref": 1, "will": 0})
    assert table.v("ana")["saves"] == {"fort": 4, "ref": 0, "will": 3}


def test_dh_6_ac_touch_and_flat_footed_ac(table: D20Table) -> None:
    """DH-6: AC = 10 + armor + shield + Agility + size; touch ignores armor and shield; DH-2:
    flat-footed loses Agility."""
    table.creature("ana", agility=14, armor=4, shield=1, size=1)
    assert table.v("ana")["ac"] == {"ac": 18, "touch": 13, "flat_footed": 16}


def test_dh_3_initiative_bonus_is_agility_plus_initiative_modifiers(table: D20Table) -> None:
    """DH-3 (a hook the core encounter engine calls): effective Agility counts."""
    table.creature("ana", agility=14, initiative_misc=4)
    assert initiative_bonus(table.state(), "ana") == 6 == table.v("ana")["initiative_bonus"]
    table.ability_damage("ana", "agility", 4)
    assert initiative_bonus(table.state(), "ana") == 4


def test_a_higher_max_hp_adds_the_difference_and_a_new_stamina_moves_the_thresholds(table: D20Table) -> None:
    """C3.2 LevelChanged as a sheet update; B-DH-9 for a changed Stamina score."""
    table.creature("ana", max_hp=10, stamina=10)
    table.damage("ana", 12)  # -2: dying with B = 0
    assert table.v("ana")["band"] == "dying"
    table.record(
        "SheetUpdated",
        creature_id="ana",
        changes={
            "level": 2,
            "max_hp": 14,
            "abilities": {"str": 10, "stamina": 14, "agility": 10, "int": 10, "spirit": 10, "cha": 10},
        },
    )
    v = table.v("ana")
    assert (v["level"], v["max_hp"], v["hp"], v["B"], v["band"]) == (2, 14, 2, 2, "fine")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"abilities": {"str": 10}}, "abilities"),
        (
            {"abilities": {"str": 10, "stamina": 0, "agility": 10, "int": 10, "spirit": 10, "cha": 10}},
            "abilities",
        ),
        ({"bab": [1, 6]}, "bab"),
        ({"base_saves": {"fort": 1}}, "base_saves"),
        ({"max_hp": 0}, "max_hp"),
    ],
)
def test_a_bad_sheet_is_refused_and_stores_nothing(table: D20Table, change: dict, field: str) -> None:
    before = table.store_max()
    sheet = {
        "creature_id": "ana",
        "name": "Ana",
        "kind": "pc",
        "level": 1,
        "abilities": {"str": 10, "stamina": 10, "agility": 10, "int": 10, "spirit": 10, "cha": 10},
        "max_hp": 10,
        "bab": [1],
        "base_saves": {"fort": 0, "ref": 0, "will": 0},
        **change,
    }
    with pytest.raises(DomainError) as err:
        table.app.record(table.cid, "CreatureRegistered", sheet)
    assert err.value.code == "INVALID_INPUT" and err.value.field == field
    assert table.store_max() == before


def test_a_creature_id_is_registered_once(table: D20Table) -> None:
    table.creature("ana")
    with pytest.raises(DomainError) as err:
        table.creature("ana")
    assert err.value.code == "ALREADY_EXISTS"


def test_another_systems_facts_and_flags_are_refused(table: D20Table) -> None:
    with pytest.raises(DomainError, match="unknown fact type 'DeathSavingThrowRolled'"):
        table.app.record(table.cid, "DeathSavingThrowRolled", {"creature": "x", "roll": {}})
    with pytest.raises(DomainError, match="unknown rules flag 'sw.crit_mode'"):
        table.app.create_campaign("x", ruleset="d20", flags={"sw.crit_mode": "max"})
