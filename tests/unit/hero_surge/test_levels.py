"""Levels by an explicit LevelGained fact (ruling 22) and level-up hit points (HS-13, B-HS-17),
with the surge maximum (HS-15)."""

from __future__ import annotations

import pytest

from domain.errors import InvalidInput, RuleViolation
from tests.unit.hero_surge.helpers import HSTable, roll


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin", "goblin"):
        table.add(cid)
    return table


def level(t: HSTable, who: str, new: int, pair: tuple[int, int], **more: object) -> dict:
    sides = t.v(who)["hit_die"]
    return t.out("LevelGained", creature=who, new_level=new, hit_dice=roll(f"2d{sides}", *pair), **more)


def refused(t: HSTable, code: str, fact: str, **payload: object) -> None:
    before = t.store_max()
    with pytest.raises(RuleViolation) as err:
        t.rec(fact, **payload)
    assert err.value.code == code, err.value.message
    assert t.store_max() == before


def test_ruling22_no_xp_table_level_changes_only_by_level_gained(t: HSTable) -> None:
    with pytest.raises(InvalidInput, match="unknown fact type 'ExperienceAwarded'"):
        t.rec("ExperienceAwarded", creatures=["brin"], amount=1000)
    with pytest.raises(InvalidInput, match="level: LevelGained"):
        t.rec("SheetUpdated", creature_id="brin", changes={"level": 3})


def test_hs13_a_die_at_least_half_the_maximum_gives_the_higher(t: HSTable) -> None:
    """brin (d10, half 5), 2 -> 3: 3 and 7: 7 >= 5: +7 current and max HP (24 -> 31)."""
    t.damage("brin", 4)
    out = level(t, "brin", 3, (3, 7))
    assert (out["gain"], out["max_hp"], out["after"]["hp"], out["level"]) == (7, 31, 27, 3)
    assert out["hero_surges_max"] == 5  # level 3: 4 + 1


def test_hs13_both_dice_under_half_give_the_sum(t: HSTable) -> None:
    assert level(t, "brin", 3, (2, 4))["gain"] == 6


def test_hs13_b_hs17_con_extra_dice_are_swapped_in_before_the_rule(t: HSTable) -> None:
    """brin, Con 16: modifier (16 - 10) / 2 = 3 extra dice (9, 1, 2); the 9 replaces the 2:
    (9, 4): +9. Level 4 raises the surge maximum to 6 and brin gains that surge (flag)."""
    out = level(t, "brin", 3, (3, 7))
    out = level(t, "brin", 4, (2, 4), con_extra=roll("3d10", 9, 1, 2), swaps=[{"extra": 0, "pair": 0}])
    assert (out["final_pair"], out["gain"], out["max_hp"]) == ([9, 4], 9, 40)
    assert (out["hero_surges_max"], out["after"]["hero_surges"]) == (6, 6)


def test_hs13_two_ones_reroll_until_not_one_plus_every_one_rolled(t: HSTable) -> None:
    """B-HS-17: (1, 1), rerolls 1, 1, 6: 6 + four 1s = 10."""
    out = level(t, "brin", 3, (1, 1), rerolls=roll("3d10", 1, 1, 6))
    assert out["gain"] == 10 and out["max_hp"] == 34


def test_b_hs17_ones_among_the_con_dice_count_too(t: HSTable) -> None:
    """Every 1 rolled counts: (1, 1), Con dice 1 and 3 (neither swapped in), reroll 4:
    4 + three 1s (two in the pair, one among the Con dice) = 7."""
    out = level(t, "brin", 3, (1, 1), con_extra=roll("2d10", 1, 3), rerolls=roll("1d10", 4))
    assert out["gain"] == 7


def test_b_hs17_a_swap_can_avoid_the_two_ones(t: HSTable) -> None:
    out = level(t, "brin", 3, (1, 1), con_extra=roll("1d10", 8), swaps=[{"extra": 0, "pair": 1}])
    assert out["final_pair"] == [1, 8] and out["gain"] == 8


def test_hs13_the_dice_must_fit(t: HSTable) -> None:
    refused(t, "NOT_NEXT_LEVEL", "LevelGained", creature="brin", new_level=4, hit_dice=roll("2d10", 5, 5))
    refused(t, "WRONG_DICE", "LevelGained", creature="brin", new_level=3, hit_dice=roll("2d8", 5, 5))
    refused(t, "WRONG_DICE", "LevelGained", creature="brin", new_level=3, hit_dice=roll("3d10", 5, 5, 5))
    refused(t, "WRONG_DICE", "LevelGained", creature="brin", new_level=3, hit_dice=roll("2d10", 1, 1))
    refused(
        t,
        "WRONG_DICE",
        "LevelGained",
        creature="brin",
        new_level=3,
        hit_dice=roll("2d10", 1, 1),
        rerolls=roll("2d10", 4, 1),
    )
    refused(
        t,
        "WRONG_DICE",
        "LevelGained",
        creature="brin",
        new_level=3,
        hit_dice=roll("2d10", 2, 5),
        rerolls=roll("1d10", 4),
    )
    refused(
        t,
        "WRONG_DICE",
        "LevelGained",
        creature="brin",
        new_level=3,
        hit_dice=roll("2d10", 2, 5),
        con_extra=roll("4d10", 1, 2, 3, 4),
    )  # Con 16: 3 at most
    refused(t, "NOT_A_HERO", "LevelGained", creature="goblin", new_level=2, hit_dice=roll("2d10", 2, 5))


def test_hs13_no_extra_dice_below_con_12(t: HSTable) -> None:
    t.add("dov", kind="pc", level=1, con_score=11, max_hp=20, hit_die=6)
    refused(
        t,
        "WRONG_DICE",
        "LevelGained",
        creature="dov",
        new_level=2,
        hit_dice=roll("2d6", 1, 2),
        con_extra=roll("1d6", 6),
    )


def test_hs13_con_modifier_from_the_sheet_flag(t: HSTable) -> None:
    """hs.con_modifier = sheet: only the sheet's con_mod counts (none: 0 extra dice)."""
    t.rec("RulesFlagSet", flag="hs.con_modifier", value="sheet")
    refused(
        t,
        "WRONG_DICE",
        "LevelGained",
        creature="brin",
        new_level=3,
        hit_dice=roll("2d10", 2, 5),
        con_extra=roll("1d10", 9),
    )
    t.rec("SheetUpdated", creature_id="brin", changes={"con_mod": 1})
    assert (
        level(t, "brin", 3, (2, 4), con_extra=roll("1d10", 9), swaps=[{"extra": 0, "pair": 0}])["gain"] == 9
    )


def test_b_hs17_an_odd_custom_die_rounds_half_up_by_default(t: HSTable) -> None:
    """d7: half of 7 rounds up to 4: (3, 2) both under: 5; rounding down (3): 3 >= 3: 3."""
    t.add("eli", kind="pc", level=1, con_score=10, max_hp=12, hit_die=7)
    assert level(t, "eli", 2, (3, 2))["gain"] == 5
    t.rec("RulesFlagSet", flag="hs.half_die_rounding", value="down")
    assert level(t, "eli", 3, (3, 2))["gain"] == 3


def test_hs15_level_up_surge_flag_off_raises_only_the_maximum(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.level_up_gains_surge", value=False)
    level(t, "brin", 3, (5, 5))
    out = level(t, "brin", 4, (5, 5))
    assert (out["hero_surges_max"], out["after"]["hero_surges"]) == (6, 5)


def test_hs13_a_level_up_can_wake_a_hero_at_zero(t: HSTable) -> None:
    """HS-13: current hit points rise too; at 1+ with surges not negative the hero wakes (HS-17)."""
    t.damage("brin", 24)
    out = level(t, "brin", 3, (6, 2))
    assert out["after"]["hp"] == 6 and out["after"]["life"] == "active"


def test_hs14_a_level_up_that_lifts_a_dying_hero_out_of_negative_hp_ends_dying(t: HSTable) -> None:
    t.damage("brin", 27)  # -3, dying
    out = level(t, "brin", 3, (7, 2))  # +7: 4 HP
    assert out["after"]["hp"] == 4 and out["after"]["life"] == "active"
    assert {"event": "dying_ended", "why": "hit points no longer negative"} in out["events"]
