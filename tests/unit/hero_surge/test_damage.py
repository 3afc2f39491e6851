"""Damage, temporary HP, thresholds and the loss of hero's surges (RULES.md A2.4, A2.6; B-HS-6..8,
B-HS-15, B-HS-22, B-HS-24; ruling 25), worked by hand from the rules with every die given."""

from __future__ import annotations

import pytest

from domain.errors import InvalidInput, RuleViolation
from tests.unit.hero_surge.helpers import HSTable, roll


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin", "goblin", "ogre"):
        table.add(cid)
    return table


def test_hs10_b_hs24_damage_reduction_before_temporary_hp_then_hit_points(t: HSTable) -> None:
    """HS-10 / B-HS-24: armor DR stops the blow first; HS-11: temporary HP are lost next."""
    t.out("TemporaryHitPointsGranted", target="aldric", amount=5)
    out = t.out("DamageApplied", target="aldric", roll=roll("2d6+3", 5, 6))  # 14 - DR 2 = 12; 5 temp, 7 HP
    assert out["amount"] == 14 and out["taken"] == 12 and out["to_hp"] == 7
    assert [s["value"] for s in out["steps"]] == [14, -2, -5, -7]
    v = t.v("aldric")
    assert v["hit_points"] == {"current": 33, "max": 40, "temporary": 0}


def test_hs10_damage_never_goes_below_the_minimum_after_reduction(t: HSTable) -> None:
    """HS-10 PROPOSAL: damage never below 0 (flag hs.min_damage): 2 damage against DR 3 does nothing."""
    out = t.damage("ogre", 2)
    assert out["taken"] == 0 and t.hp("ogre") == 30
    t.rec("RulesFlagSet", flag="hs.min_damage", value=1)
    assert t.damage("ogre", 2)["taken"] == 1 and t.hp("ogre") == 29


def test_hs8_failure_bypasses_armor_damage_reduction(t: HSTable) -> None:
    """HS-8 Failure: "your opponent's attack is fully effective, even bypassing your armor's damage
    reduction": recorded as bypass_dr on the damage."""
    assert t.damage("aldric", 10, bypass_dr=True)["taken"] == 10
    assert t.hp("aldric") == 30


def test_b_hs15_temporary_hp_keep_the_larger_pool_with_its_duration(t: HSTable) -> None:
    """HS-11 / B-HS-15: temp = max(temp, new); the kept pool keeps its own duration."""
    t.out("TemporaryHitPointsGranted", target="brin", amount=5, duration_minutes=10)
    assert t.out("TemporaryHitPointsGranted", target="brin", amount=3)["kept"] == "old"
    assert t.v("brin")["hit_points"]["temporary"] == 5 and t.v("brin")["temp_hp_until"] == 10
    t.out("TemporaryHitPointsGranted", target="brin", amount=8)  # no duration: until a long rest
    v = t.v("brin")
    assert v["hit_points"]["temporary"] == 8 and v["temp_hp_until"] == "long_rest"


def test_hs11_timed_temporary_hp_end_with_time_and_undated_ones_at_a_long_rest(t: HSTable) -> None:
    """HS-11: "If you gain temporary hit points that lack a duration, they last until you take a
    long rest"; timed pools end with the game clock."""
    t.out("TemporaryHitPointsGranted", target="brin", amount=4, duration_minutes=10)
    t.out("TemporaryHitPointsGranted", target="aldric", amount=6)
    t.rec("TimeAdvanced", minutes=10)
    assert t.v("brin")["hit_points"]["temporary"] == 0
    assert t.v("aldric")["hit_points"]["temporary"] == 6
    t.rec("RestTaken", kind="short")
    assert t.v("aldric")["hit_points"]["temporary"] == 6
    t.rec("RestTaken", kind="long")
    assert t.v("aldric")["hit_points"]["temporary"] == 0


def test_hs12_b_hs7_dropping_to_zero_loses_one_surge_and_knocks_out_but_does_not_start_dying(
    t: HSTable,
) -> None:
    """HS-12 / B-HS-21: at exactly 0 a hero loses a surge and falls unconscious; it is stable, not dying."""
    out = t.damage("brin", 24)
    assert out["after"]["hero_surges"] == 4  # 5 - 1
    v = t.v("brin")
    assert (v["hit_points"]["current"], v["life"], v["dying"], v["stable"]) == (0, "unconscious", False, True)
    assert [e["event"] for e in out["events"]] == ["fell_unconscious", "surge_lost"]


def test_b_hs7_the_surge_is_lost_once_per_drop_not_on_every_hit(t: HSTable) -> None:
    """B-HS-7: once per transition from HP > 0 to HP <= 0; further damage at or below 0 costs none."""
    t.damage("brin", 24)  # 0 HP, surges 4
    t.damage("brin", 2)  # -2: dying, no second surge loss
    assert t.surges("brin") == 4 and t.v("brin")["dying"]


def test_b_hs7_every_hit_reading_behind_its_flag(t: HSTable) -> None:
    """B-HS-7 flag hs.surge_loss_at_zero = every_hit: each damage that leaves HP <= 0 costs a surge."""
    t.rec("RulesFlagSet", flag="hs.surge_loss_at_zero", value="every_hit")
    t.damage("brin", 24)
    t.damage("brin", 2)
    assert t.surges("brin") == 3


def test_hs12_hs14_negative_hit_points_start_dying_without_a_luck_roll(t: HSTable) -> None:
    """HS-12 / HS-14: reduced to a negative, the hero begins dying (unconscious); B-HS-9: the damage
    that starts dying calls for no luck roll."""
    out = t.damage("aldric", 45)  # DR 2: 43 -> -3
    v = t.v("aldric")
    assert (v["hit_points"]["current"], v["life"], v["conscious"]) == (-3, "dying", False)
    assert v["hero_surges"] == 3 and v["luck_rolls_owed"] == []
    assert [e["event"] for e in out["events"]] == ["fell_unconscious", "surge_lost", "started_dying"]


def test_b_hs9_flag_lets_the_damage_that_starts_dying_call_for_a_luck_roll(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.luck_on_damage_that_starts_dying", value=True)
    t.damage("aldric", 45)
    assert t.v("aldric")["luck_rolls_owed"] == ["dying_damage"]


def test_b_hs22_death_when_negative_hp_exceed_the_greater_of_con_and_half_max_hp(t: HSTable) -> None:
    """HS-12 / B-HS-22: brin dies when -HP > max(Con 16, 24 // 2 = 12) = 16: -16 lives, -17 dies."""
    t.damage("brin", 40)  # -16 (surge lost on the way down)
    assert t.v("brin")["life"] == "dying" and t.v("brin")["death_threshold"] == 16
    t.damage("brin", 1)
    assert t.v("brin")["life"] == "dead" and t.hp("brin") == -17


def test_b_hs22_half_max_hp_wins_when_it_is_greater(t: HSTable) -> None:
    """aldric: max(Con 14, 40 // 2 = 20) = 20: alive at -20, dead at -21."""
    t.damage("aldric", 60, bypass_dr=True)
    assert t.v("aldric")["life"] == "dying"
    t.damage("aldric", 1, bypass_dr=True)
    assert t.v("aldric")["dead"]


def test_b_hs6_monsters_are_unconscious_at_exactly_zero_and_dead_below(t: HSTable) -> None:
    """B-HS-6 / ruling 25: no dying state and no surges for monsters."""
    t.damage("goblin", 10)
    v = t.v("goblin")
    assert (v["life"], v["hero_surges"], v["dying"]) == ("unconscious", None, False)
    t.damage("goblin", 1)
    assert t.v("goblin")["life"] == "dead"
    with pytest.raises(RuleViolation) as refused:
        t.damage("goblin", 1)
    assert refused.value.code == "CREATURE_DEAD"


def test_b_hs6_flag_off_monsters_die_past_the_heroes_threshold(t: HSTable) -> None:
    """hs.monsters_die_below_zero = false: the goblin (threshold max(10, 5) = 10) lives at -10."""
    t.rec("RulesFlagSet", flag="hs.monsters_die_below_zero", value=False)
    t.damage("goblin", 20)
    assert t.v("goblin")["life"] == "unconscious"
    t.damage("goblin", 1)
    assert t.v("goblin")["life"] == "dead"


def test_b_hs6_monsters_have_no_surges_to_drain(t: HSTable) -> None:
    before = t.store_max()
    with pytest.raises(RuleViolation) as refused:
        t.rec("HeroSurgeDrained", creature="goblin", source="a wight")
    assert refused.value.code == "NOT_A_HERO" and t.store_max() == before


def test_hs16_a_drain_with_surges_left_costs_one_surge_only(t: HSTable) -> None:
    out = t.out("HeroSurgeDrained", creature="brin", source="wight")
    assert out["after"]["hero_surges"] == 4 and out["after"]["hp"] == 24


def test_b_hs8_drain_at_zero_surges_is_hp_loss_and_its_chain(t: HSTable) -> None:
    """B-HS-8 / ruling 25: brin (24 max HP, 1/4 = 6) at 4 HP and 0 surges is drained:
    4 - 6 = -2 HP and -1 surge; that took HP from above 0 to below, so one more surge loss: none
    left, so 6 more HP (-8) and -2 surges; then it is dying (HP loss can start dying), no luck roll."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hit_die=10, hero_surges=0)
    t.damage("cara", 20)
    out = t.out("HeroSurgeDrained", creature="cara", source="wight")
    assert [e["event"] for e in out["events"]] == [
        "hp_lost",
        "fell_unconscious",
        "hp_lost",
        "started_dying",
    ]
    v = t.v("cara")
    assert (v["hit_points"]["current"], v["hero_surges"], v["negative_hero_surges"]) == (-8, -2, 2)
    assert v["life"] == "dying" and v["luck_rolls_owed"] == []


def test_b_hs8_temporary_hp_and_damage_reduction_do_not_reduce_hp_loss(t: HSTable) -> None:
    """The 1/4-HP loss is not damage: aldric's 5 temporary HP and DR 2 stay, 10 HP go."""
    t.add("dara", kind="pc", level=1, con_score=14, max_hp=40, damage_reduction=2, hero_surges=0)
    t.out("TemporaryHitPointsGranted", target="dara", amount=5)
    out = t.out("HeroSurgeDrained", creature="dara")
    assert out["after"]["hp"] == 30 and out["after"]["temp_hp"] == 5 and out["after"]["hero_surges"] == -1


def test_b_hs8_hp_loss_can_kill(t: HSTable) -> None:
    """Ruling 25: the loss can push HP past the death threshold. cara (max 24: 1/4 = 6, threshold 16)
    has no surges: 10 HP -> 4 -> -2 (and the chain: -8, dying) -> -14 -> -20: dead by drains alone."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hit_die=10, hero_surges=0)
    t.damage("cara", 14)
    hp = []
    for _ in range(4):
        t.out("HeroSurgeDrained", creature="cara", source="wight")
        hp.append(t.hp("cara"))
    assert hp == [4, -8, -14, -20]
    assert t.v("cara")["life"] == "dead" and t.surges("cara") == -5


def test_hs16_unconscious_with_negative_surges_stays_down_until_they_are_restored(t: HSTable) -> None:
    """HS-16 / HS-17: healing to 1+ HP wakes a hero only while its surges are not negative."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hit_die=10, hero_surges=0)
    t.damage("cara", 20)
    t.out("HeroSurgeDrained", creature="cara")  # -8 HP, -2 surges, dying
    t.out("HealingApplied", target="cara", amount=12)  # -8 + 12 = 4
    v = t.v("cara")
    assert (v["hit_points"]["current"], v["dying"], v["conscious"], v["life"]) == (
        4,
        False,
        False,
        "unconscious",
    )
    t.out("HeroSurgesRestored", creature="cara", amount=1, source="spell")
    assert not t.v("cara")["conscious"]  # -1 surge: still negative
    out = t.out("HeroSurgesRestored", creature="cara", amount=1, source="spell")
    assert {"event": "regained_consciousness"} in out["events"] and t.v("cara")["life"] == "active"


def test_hs16_restoring_never_exceeds_the_maximum(t: HSTable) -> None:
    t.out("HeroSurgeSpent", creature="brin", purpose="heroism")
    out = t.out("HeroSurgesRestored", creature="brin", amount=3, source="ability")
    assert out["after"]["hero_surges"] == 5 and t.v("brin")["hero_surges_max"] == 5


def test_a_refused_damage_stores_nothing(t: HSTable) -> None:
    before = t.store_max()
    with pytest.raises(InvalidInput, match="give the damage"):
        t.rec("DamageApplied", target="brin")
    assert t.store_max() == before
