"""Dying, luck rolls, stabilising, healing and death (RULES.md A2.5, HS-17; B-HS-2, B-HS-3, B-HS-9..11,
B-HS-21, B-HS-23; ruling 25)."""

from __future__ import annotations

import pytest

from domain.errors import InvalidInput, NotFound, RuleViolation
from domain.rulesets.hero_surge.rules import luck_roll_dice
from tests.unit.hero_surge.helpers import HSTable, d20, roll


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin", "goblin"):
        table.add(cid)
    return table


def dying_brin(t: HSTable) -> None:
    """brin (24 HP, 5 surges, threshold 16) takes 27: -3, one surge lost (4 left), dying."""
    t.damage("brin", 27)
    assert t.v("brin")["life"] == "dying" and t.surges("brin") == 4


def refused(t: HSTable, code: str, fact: str, **payload: object) -> None:
    before = t.store_max()
    with pytest.raises(RuleViolation) as err:
        t.rec(fact, **payload)
    assert err.value.code == code, err.value.message
    assert t.store_max() == before


def test_ruling25_a_damage_luck_roll_is_refused_unless_damage_followed_while_already_dying(
    t: HSTable,
) -> None:
    """Ruling 25 / B-HS-9: the damage that started dying owes no luck roll; the next damage does."""
    dying_brin(t)
    refused(t, "NO_LUCK_ROLL_OWED", "LuckRollMade", creature="brin", context="dying_damage", roll=d20(12))
    t.damage("brin", 2)  # -5 while dying: one luck roll owed, after the damage
    assert t.v("brin")["luck_rolls_owed"] == ["dying_damage"]
    out = t.luck("brin", "dying_damage", 12)
    assert out["result"] == "lucky" and out["after"]["hero_surges"] == 4  # lucky: unchanged
    refused(t, "NO_LUCK_ROLL_OWED", "LuckRollMade", creature="brin", context="dying_damage", roll=d20(12))


def test_b_hs9_one_luck_roll_per_damage_instance(t: HSTable) -> None:
    dying_brin(t)
    t.damage("brin", 1)
    t.damage("brin", 1)
    assert t.v("brin")["luck_rolls_owed"] == ["dying_damage", "dying_damage"]
    t.luck("brin", "dying_damage", 15)
    t.luck("brin", "dying_damage", 15)
    assert t.v("brin")["luck_rolls_owed"] == []


def test_ruling25_a_start_of_turn_luck_roll_is_refused_without_a_turn_start_while_dying(t: HSTable) -> None:
    """Ruling 25: only a hero dying at the start of its own turn makes one (the turn-start hook owes
    it; see test_rounds.py). Without that turn start it is refused, even while dying."""
    dying_brin(t)
    refused(t, "NO_LUCK_ROLL_OWED", "LuckRollMade", creature="brin", context="dying_turn_start", roll=d20(5))


def test_hs14_an_unlucky_luck_roll_loses_a_surge(t: HSTable) -> None:
    dying_brin(t)
    t.damage("brin", 1)
    out = t.luck("brin", "dying_damage", 7, result="unlucky")
    assert out["after"]["hero_surges"] == 3 and out["ruled"] is True


def test_b_hs2_without_a_ruled_result_the_flag_decides(t: HSTable) -> None:
    """B-HS-2: hs.luck_roll = {die: 20, lucky_min: 10}: 9 is unlucky, 10 lucky; a ruled result wins."""
    dying_brin(t)
    for _ in range(3):
        t.damage("brin", 1)
    assert t.luck("brin", "dying_damage", 9)["result"] == "unlucky"
    assert t.luck("brin", "dying_damage", 10)["result"] == "lucky"
    assert t.luck("brin", "dying_damage", 3, result="lucky")["result"] == "lucky"
    assert t.surges("brin") == 3


def test_hs14_a_luck_roll_of_20_ends_dying_and_the_hero_is_stable(t: HSTable) -> None:
    """HS-14 / B-HS-10: a 20 ends dying; the hero stays unconscious at its negative HP, stable."""
    dying_brin(t)
    t.damage("brin", 1)
    out = t.luck("brin", "dying_damage", 20)
    v = t.v("brin")
    assert (v["life"], v["stable"], v["dying"], v["hit_points"]["current"]) == ("stabilized", True, False, -4)
    assert {"event": "dying_ended", "why": "a luck roll of 20"} in out["events"]


def test_b_hs10_damage_to_a_stable_hero_starts_dying_again_without_a_luck_roll(t: HSTable) -> None:
    dying_brin(t)
    t.out("HealersKitUsed", healer="aldric", target="brin")
    assert t.v("brin")["stable"]
    t.damage("brin", 1)
    v = t.v("brin")
    assert v["dying"] and v["luck_rolls_owed"] == []


def test_hs14_a_luck_roll_never_kills_by_itself_only_through_the_surge_it_costs(t: HSTable) -> None:
    """HS-14 PROPOSAL: unlucky at 0 surges is the 1/4-HP loss: brin at -13 with 0 surges loses 6:
    -19 > 16: dead. With surges left the same roll only costs one."""
    t.add("cara", kind="pc", level=2, con_score=16, max_hp=24, hit_die=10, hero_surges=0)
    t.damage("cara", 31)  # -7, chain loss 6: -13, surges -1, dying
    assert t.hp("cara") == -13 and t.v("cara")["dying"]
    t.damage("cara", 1)  # -14, luck roll owed
    out = t.luck("cara", "dying_damage", 2)  # unlucky: -6 HP: -20 > 16
    assert out["after"]["life"] == "dead" and out["after"]["hp"] == -20


def test_hs14_healers_kit_and_medical_attempts_end_dying(t: HSTable) -> None:
    """HS-14: a healer's kit or a successful medical attempt ends dying; limited success grants
    advantage on the next luck roll."""
    dying_brin(t)
    t.attempt("m1", "aldric", "limited_success", 11, kind="medical", targets=["brin"])
    out = t.out("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m1")
    assert t.v("brin")["luck_advantage_pending"] and out["after"]["life"] == "dying"
    t.attempt("m2", "aldric", "normal_success", 15, kind="medical", targets=["brin"])
    t.out("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m2")
    v = t.v("brin")
    assert v["stable"] and not v["luck_advantage_pending"]
    refused(t, "NOT_DYING", "HealersKitUsed", healer="aldric", target="brin")


def test_hs14_a_medical_attempt_must_be_the_healers_medical_attempt(t: HSTable) -> None:
    dying_brin(t)
    t.attempt("a1", "aldric", "normal_success", 15, kind="attack")
    refused(t, "WRONG_ATTEMPT", "MedicalAttemptMade", healer="aldric", target="brin", attempt_id="a1")


def test_b_hs3_luck_advantage_needs_two_dice_keeping_the_higher_and_is_used_once(t: HSTable) -> None:
    """B-HS-3 (flag hs.advantage = 2d20kh1): the advantaged luck roll records both faces."""
    dying_brin(t)
    t.attempt("m1", "aldric", "limited_success", 11, kind="medical")
    t.out("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m1")
    t.damage("brin", 1)
    refused(t, "WRONG_DICE", "LuckRollMade", creature="brin", context="dying_damage", roll=d20(15))
    out = t.luck("brin", "dying_damage", 4, 20)  # keeps the 20: dying ends
    assert out["advantage"] and out["advantage_pending_used"] and out["face"] == 20
    assert t.v("brin")["stable"] and not t.v("brin")["luck_advantage_pending"]


def test_b_hs2_a_luck_roll_is_a_d20(t: HSTable) -> None:
    dying_brin(t)
    t.damage("brin", 1)
    refused(t, "WRONG_DICE", "LuckRollMade", creature="brin", context="dying_damage", roll=roll("1d12", 12))


def test_hs17_b_hs11_healing_adds_to_the_negative_value_up_to_the_maximum(t: HSTable) -> None:
    """B-HS-11: aldric at -5 healed 8: 3 HP (not 8), dying ends, awake (surges 3 >= 0)."""
    t.damage("aldric", 47)  # DR 2: 45 -> -5
    out = t.out("HealingApplied", target="aldric", amount=8)
    v = t.v("aldric")
    assert (v["hit_points"]["current"], v["life"], v["dying"]) == (3, "active", False)
    assert out["hp_gained"] == 8
    assert t.out("HealingApplied", target="aldric", amount=100)["after"]["hp"] == 40


def test_b_hs11_from_zero_reading_behind_its_flag(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.heal_from_negative", value="from_zero")
    t.damage("aldric", 47)
    t.out("HealingApplied", target="aldric", amount=8)
    assert t.hp("aldric") == 8


def test_b_hs10_healing_that_leaves_hp_below_1_ends_dying_but_does_not_wake(t: HSTable) -> None:
    dying_brin(t)  # -3
    t.out("HealingApplied", target="brin", amount=2, roll=roll("1d4", 1))  # -3 + 3 = 0
    v = t.v("brin")
    assert (v["hit_points"]["current"], v["dying"], v["conscious"], v["stable"]) == (0, False, False, True)


def test_b_hs21_unconscious_at_zero_wakes_on_healing_to_one(t: HSTable) -> None:
    t.damage("brin", 24)
    assert t.v("brin")["life"] == "unconscious"
    t.out("HealingApplied", target="brin", amount=1)
    assert t.v("brin")["life"] == "active"


def test_b_hs6_a_monster_at_zero_wakes_when_healed(t: HSTable) -> None:
    t.damage("goblin", 10)
    t.out("HealingApplied", target="goblin", amount=3)
    assert t.v("goblin")["life"] == "active"


def test_hs12_the_dead_are_restored_only_by_miraculous_power(t: HSTable) -> None:
    t.damage("goblin", 11)
    refused(t, "CREATURE_DEAD", "HealingApplied", target="goblin", amount=5)
    refused(t, "NOT_DEAD", "RestoredToLife", creature="brin", means="miracle")
    out = t.out("RestoredToLife", creature="goblin", means="a miracle", hp=4)
    assert out["after"]["life"] == "active" and out["after"]["hp"] == 4


def test_b_hs23_instagib_needs_a_critical_20_and_two_luck_rolls_of_20(t: HSTable) -> None:
    """B-HS-23: never automatic; the GM rules it citing the three successive 20s."""
    t.attempt("a1", "aldric", "critical_success", 20, targets=["goblin"])
    t.luck("aldric", "crit_success", 20, attempt_id="a1", roll_id="l1")
    t.luck("aldric", "crit_success", 19, attempt_id="a1", roll_id="l2")
    refused(
        t, "NOT_NATURAL_20", "InstantKillRuled", target="goblin", attempt_id="a1", luck_roll_ids=["l1", "l2"]
    )
    t.luck("aldric", "crit_success", 20, attempt_id="a1", roll_id="l3")
    out = t.out("InstantKillRuled", target="goblin", attempt_id="a1", luck_roll_ids=["l1", "l3"])
    assert out["after"]["life"] == "dead" and out["luck_rolls"] == ["l1", "l3"]


def test_hs8_a_critical_success_luck_roll_needs_a_natural_20(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 17, targets=["goblin"])
    refused(
        t,
        "NOT_NATURAL_20",
        "LuckRollMade",
        creature="aldric",
        context="crit_success",
        roll=d20(20),
        attempt_id="a1",
    )
    t.attempt("a2", "aldric", "major_success", 20)
    refused(
        t,
        "WRONG_ATTEMPT",
        "LuckRollMade",
        creature="aldric",
        context="crit_success",
        roll=d20(20),
        attempt_id="a2",
    )
    with pytest.raises(NotFound):
        t.rec("LuckRollMade", creature="aldric", context="crit_failure", roll=d20(3), attempt_id="nope")


def test_hs8_a_critical_failure_may_call_for_a_luck_roll_that_changes_no_track(t: HSTable) -> None:
    out = t.attempt("a1", "aldric", "critical_failure", 4)
    assert out["dm_may_call_luck_roll"]
    luck = t.luck("aldric", "crit_failure", 3, attempt_id="a1")
    assert luck["result"] == "unlucky" and luck["before"] == luck["after"]


def test_hs14_healing_of_nothing_is_refused_so_it_cannot_end_dying(t: HSTable) -> None:
    dying_brin(t)
    before = t.store_max()
    with pytest.raises(InvalidInput, match="give the healing"):
        t.rec("HealingApplied", target="brin")
    assert t.store_max() == before and t.v("brin")["dying"]


def test_b_hs23_the_instagib_target_must_be_the_attempts(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 20, targets=["goblin"])
    t.luck("aldric", "crit_success", 20, attempt_id="a1", roll_id="l1")
    t.luck("aldric", "crit_success", 20, attempt_id="a1", roll_id="l2")
    refused(
        t, "WRONG_ATTEMPT", "InstantKillRuled", target="brin", attempt_id="a1", luck_roll_ids=["l1", "l2"]
    )


def test_b_hs3_the_dice_the_server_rolls_for_a_luck_roll_are_those_the_fold_accepts(t: HSTable) -> None:
    """B-HS-2/B-HS-3: one d20, two keeping the higher while a dying hero has advantage (what
    ``endTurn`` lists as owed and what the server rolls); another die when the flag says so."""
    dying_brin(t)
    t.damage("brin", 1)  # a luck roll owed after damage while dying
    assert luck_roll_dice(t.ledger.state, "brin", "dying_damage") == "1d20"
    t.attempt("m1", "aldric", "limited_success", 11, kind="medical")
    t.out("MedicalAttemptMade", healer="aldric", target="brin", attempt_id="m1")
    assert luck_roll_dice(t.ledger.state, "brin", "dying_damage") == "2d20kh1"
    t.luck("brin", "dying_damage", 4, 20)
    other = HSTable(flags={"hs.luck_roll": {"die": 12, "lucky_min": 7}})
    assert luck_roll_dice(other.ledger.state, "brin", "dying_damage") == "1d12"
