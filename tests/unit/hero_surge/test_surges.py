"""Spending and regaining hero's surges, rests (RULES.md A2.6; HS-15, HS-16; B-HS-12..14, B-HS-21;
rulings 6 and 20)."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.rulesets.hero_surge.tables import SURGE_PURPOSES, hero_surges_max
from tests.unit.hero_surge.helpers import HSTable


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin", "goblin"):
        table.add(cid)
    return table


def refused(t: HSTable, code: str, fact: str, **payload: object) -> None:
    before = t.store_max()
    with pytest.raises(RuleViolation) as err:
        t.rec(fact, **payload)
    assert err.value.code == code, err.value.message
    assert t.store_max() == before


@pytest.mark.parametrize(("level", "surges"), [(1, 4), (2, 5), (3, 5), (4, 6), (9, 8), (10, 9)])
def test_hs15_four_surges_and_one_more_at_each_even_level(level: int, surges: int) -> None:
    assert hero_surges_max(level) == surges


def test_hs15_surge_healing_restores_a_quarter_of_max_hp_once_per_hour(t: HSTable) -> None:
    """aldric: 40 max HP: 10 per surge; B-HS-14: the game clock counts the hour."""
    t.damage("aldric", 27)  # DR 2: 25 -> 15 HP
    out = t.out("HeroSurgeSpent", creature="aldric", purpose="healing")
    assert (out["hp_gained"], out["after"]["hp"], out["after"]["hero_surges"]) == (10, 25, 3)
    assert out["uses_action"] is True  # B-HS-14: it is an action
    refused(t, "SURGE_HEALING_USED", "HeroSurgeSpent", creature="aldric", purpose="healing")
    t.rec("TimeAdvanced", minutes=59)
    refused(t, "SURGE_HEALING_USED", "HeroSurgeSpent", creature="aldric", purpose="healing")
    t.rec("TimeAdvanced", minutes=1)
    assert t.out("HeroSurgeSpent", creature="aldric", purpose="healing")["after"]["hp"] == 35


def test_b_hs13_spell_surge_healing_is_not_limited_by_the_hourly_ability(t: HSTable) -> None:
    """HS-15: "These powers are not limited by and do not impact your use of this ability"."""
    t.damage("aldric", 32)  # 10 HP
    t.out("HeroSurgeSpent", creature="aldric", purpose="spell", bonus=3)  # 10 + 3
    t.out("HeroSurgeSpent", creature="aldric", purpose="healing")
    t.out("HeroSurgeSpent", creature="aldric", purpose="spell")
    assert t.hp("aldric") == 40 and t.surges("aldric") == 1


def test_ruling6_spending_a_surge_the_hero_does_not_have_is_refused(t: HSTable) -> None:
    """Rulings 6 and 20 hold in every system."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hero_surges=0)
    for purpose in ("healing", "heroism", "class_feature"):
        refused(t, "NO_HERO_SURGE", "HeroSurgeSpent", creature="cara", purpose=purpose)


def test_ruling6_a_spell_that_makes_the_target_spend_a_surge_it_lacks_restores_nothing(t: HSTable) -> None:
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hero_surges=0)
    t.damage("cara", 10)
    out = t.out("HeroSurgeSpent", creature="cara", purpose="spell", bonus=5)
    assert out["surge_spent"] is False and out["hp_gained"] == 0 and t.hp("cara") == 14


def test_hs15_an_unconscious_hero_cannot_spend_a_surge_on_its_own(t: HSTable) -> None:
    t.damage("brin", 24)
    refused(t, "NOT_CONSCIOUS", "HeroSurgeSpent", creature="brin", purpose="healing")
    assert t.out("HeroSurgeSpent", creature="brin", purpose="spell")["after"]["hp"] == 6  # 1/4 of 24


def test_b_hs6_monsters_spend_no_surges(t: HSTable) -> None:
    refused(t, "NOT_A_HERO", "HeroSurgeSpent", creature="goblin", purpose="heroism")


def test_b_hs13_class_feature_once_per_round_heroism_once_per_turn(t: HSTable) -> None:
    """B-HS-13: several spends in one round for different purposes; the class feature once per
    round, heroism once between two starts of the hero's own turn (played through the engine)."""
    t.fight({"aldric": ("normal_success", 10), "goblin": ("failure", 5)})
    t.start()
    t.out("HeroSurgeSpent", creature="aldric", purpose="class_feature")
    t.out("HeroSurgeSpent", creature="aldric", purpose="heroism")
    with pytest.raises(RuleViolation) as err:
        t.rec("HeroSurgeSpent", creature="aldric", purpose="class_feature")
    assert err.value.code == "CLASS_FEATURE_SURGE_USED"
    with pytest.raises(RuleViolation) as err:
        t.rec("HeroSurgeSpent", creature="aldric", purpose="heroism")
    assert err.value.code == "HEROISM_USED"
    t.end()
    t.start()  # the goblin's turn: still no new heroism for Aldric
    with pytest.raises(RuleViolation) as err:
        t.rec("HeroSurgeSpent", creature="aldric", purpose="heroism")
    assert err.value.code == "HEROISM_USED"
    t.end()
    t.check("aldric", "normal_success", 10)
    t.check("goblin", "failure", 5)
    t.start()  # round 2, Aldric's own turn: both again
    t.out("HeroSurgeSpent", creature="aldric", purpose="heroism")
    t.out("HeroSurgeSpent", creature="aldric", purpose="class_feature")
    assert t.v("aldric")["hero_surges"] == 0


def test_b_hs13_heroism_flag_off_lifts_the_per_turn_limit(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.heroism_once_per_turn", value=False)
    t.fight({"aldric": ("normal_success", 10)})
    t.start()
    t.out("HeroSurgeSpent", creature="aldric", purpose="heroism")
    t.out("HeroSurgeSpent", creature="aldric", purpose="heroism")
    assert t.v("aldric")["hero_surges"] == 2


def test_hs15_purposes_table() -> None:
    assert {p: (x.limit, x.heals) for p, x in SURGE_PURPOSES.items()} == {
        "class_feature": ("round", False),
        "healing": ("hour", True),
        "heroism": ("turn", False),
        "spell": (None, True),
    }


def test_b_hs12_a_long_rest_restores_surges_to_the_maximum_clearing_negative_ones(t: HSTable) -> None:
    """B-HS-12 / B-HS-21: long rest: surges to max (negatives cleared), full HP, awake."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hero_surges=0)
    t.damage("cara", 20)
    t.out("HeroSurgeDrained", creature="cara")  # -8 HP, -2 surges, dying
    t.out("HealersKitUsed", healer="aldric", target="cara")
    out = t.out("RestTaken", kind="long", hours=8)
    after = out["participants"]["cara"]["after"]
    assert (after["hp"], after["hero_surges"], after["life"]) == (24, 5, "active")


def test_b_hs12_a_short_rest_restores_the_flags_number_of_surges(t: HSTable) -> None:
    t.out("HeroSurgeSpent", creature="brin", purpose="heroism")
    t.out("HeroSurgeSpent", creature="brin", purpose="heroism")
    t.rec("RestTaken", kind="short")
    assert t.surges("brin") == 3  # hs.short_rest_surges = 0
    t.rec("RulesFlagSet", flag="hs.short_rest_surges", value=1)
    t.rec("RestTaken", kind="short", participants=["brin"])
    assert t.surges("brin") == 4


def test_b_hs12_long_rest_amount_flag(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.long_rest_surges", value=1)
    t.rec("RulesFlagSet", flag="hs.long_rest_hp", value="none")
    for _ in range(3):
        t.out("HeroSurgeSpent", creature="brin", purpose="heroism")
    t.damage("brin", 5)
    t.rec("RestTaken", kind="long")
    assert (t.surges("brin"), t.hp("brin")) == (3, 19)


def test_b_hs12_a_dying_hero_cannot_rest_and_the_dead_are_skipped(t: HSTable) -> None:
    t.damage("brin", 27)
    refused(t, "CREATURE_DYING", "RestTaken", kind="long")
    t.damage("brin", 30)  # dead
    out = t.out("RestTaken", kind="long")
    assert "brin" not in out["participants"] and "aldric" in out["participants"]
    refused(t, "CREATURE_DEAD", "RestTaken", kind="long", participants=["brin"])


def test_b_hs12_a_long_rest_heals_monsters_named_in_it(t: HSTable) -> None:
    t.damage("goblin", 10)
    out = t.out("RestTaken", kind="long", participants=["goblin"])
    assert out["participants"]["goblin"]["after"]["life"] == "active" and t.hp("goblin") == 10
