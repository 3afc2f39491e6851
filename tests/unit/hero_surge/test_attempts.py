"""Attempts and success levels (RULES.md A2.3; HS-7..HS-9; B-HS-1, B-HS-4, B-HS-5, B-HS-16,
B-HS-19, B-HS-20; ruling 4): the table rules the level, the fold derives what follows."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.rulesets.hero_surge.tables import LEVELS, SUCCESS_LEVELS
from tests.unit.hero_surge.helpers import HSTable, roll


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in ("aldric", "brin", "goblin", "ogre"):
        table.add(cid)
    return table


def refused(t: HSTable, code: str, fact: str, **payload: object) -> None:
    before = t.store_max()
    with pytest.raises(RuleViolation) as err:
        t.rec(fact, **payload)
    assert err.value.code == code, err.value.message
    assert t.store_max() == before


# ------------------------------------------------------------------ HS-7, B-HS-1
def test_b_hs1_the_success_level_is_the_tables_ruling_not_computed_from_the_dice(t: HSTable) -> None:
    """B-HS-1 / ruling 4: the same 14 + 5 is whatever level the table ruled."""
    assert t.attempt("a1", "aldric", "major_success", 14, bonus=5)["success_level"] == "major_success"
    assert t.attempt("a2", "aldric", "limited_success", 14, bonus=5)["success_level"] == "limited_success"


def test_hs7_a_natural_1_on_a_failed_attempt_is_a_critical_failure(t: HSTable) -> None:
    out = t.attempt("a1", "aldric", "failure", 1, bonus=3)
    assert out["success_level"] == "critical_failure" and out["natural_1_critical_failure"]
    assert out["ruled_level"] == "failure"


@pytest.mark.parametrize("rank", ["Legendary", "godlike"])
def test_hs7_legendary_and_godlike_ranks_are_spared_the_natural_1(t: HSTable, rank: str) -> None:
    out = t.attempt("a1", "aldric", "failure", 1, rank=rank)
    assert out["success_level"] == "failure" and not out["natural_1_critical_failure"]


def test_hs7_a_natural_1_does_not_lower_an_attempt_that_did_not_fail(t: HSTable) -> None:
    assert t.attempt("a1", "aldric", "limited_success", 1, bonus=12)["success_level"] == "limited_success"


def test_b_hs1_a_gm_override_of_the_level_is_honoured(t: HSTable) -> None:
    """C0.4 OutcomeOverridden: the GM keeps the ruled failure despite the natural 1."""
    pos = t.rec(
        "AttemptRolled",
        attempt_id="a1",
        creature="aldric",
        kind="attack",
        roll=roll("1d20", 1),
        success_level="failure",
    ).position
    t.app.override(t.cid, pos, "success_level", "failure", "the GM waives the fumble")
    assert t.ledger.state.attempts["a1"]["level"] == "failure"


# ------------------------------------------------------------------ HS-8
@pytest.mark.parametrize(
    ("level", "devastating", "hampering"),
    [
        ("critical_success", 1, 0),
        ("major_success", 0, 1),
        ("normal_success", 0, 0),
        ("limited_success", 0, 1),
        ("failure", 0, 0),
        ("critical_failure", 0, 0),
    ],
)
def test_hs8_effects_each_level_gives(t: HSTable, level: str, devastating: int, hampering: int) -> None:
    out = t.attempt("a1", "aldric", level, 12)
    assert (out["devastating_effects"], out["hampering_effects"]) == (devastating, hampering)


def test_hs9_table_rows_match_the_rules() -> None:
    """HS-9: critical 3 blocks, major 2, normal 1, limited/failure/critical failure 0."""
    assert [LEVELS[x].blocks for x in SUCCESS_LEVELS] == [3, 2, 1, 0, 0, 0]


def test_hs8_one_devastating_effect_and_the_two_hampering_effects_option(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 18, targets=["ogre"])
    out = t.out("DevastatingEffectChosen", attempt_id="a1", option="two_hampering_effects")
    assert out["hampering_effects"] == 2
    refused(
        t,
        "NO_DEVASTATING_EFFECT",
        "DevastatingEffectChosen",
        attempt_id="a1",
        option="knock_back",
        target="ogre",
    )
    t.out("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")
    t.out("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")
    refused(t, "NO_HAMPERING_EFFECT", "HamperingEffectChosen", attempt_id="a1", option="move_5ft")
    assert t.v("ogre")["rank_penalty_total"] == -2  # B-HS-5: they stack


def test_hs8_normal_success_gives_no_effect(t: HSTable) -> None:
    t.attempt("a1", "aldric", "normal_success", 12)
    refused(t, "NO_HAMPERING_EFFECT", "HamperingEffectChosen", attempt_id="a1", option="move_5ft")
    refused(
        t,
        "NO_DEVASTATING_EFFECT",
        "DevastatingEffectChosen",
        attempt_id="a1",
        option="knock_back",
        target="ogre",
    )


def test_hs8_limited_success_still_gives_one_hampering_effect(t: HSTable) -> None:
    t.attempt("a1", "aldric", "limited_success", 9, targets=["ogre"])
    out = t.out("HamperingEffectChosen", attempt_id="a1", option="break_up_attack", target="ogre")
    assert out["target"] == "ogre" and t.v("ogre")["next_attack_broken_up"]
    assert t.attempt("o1", "ogre", "normal_success", 12)["broken_up"] is True  # its next attack
    assert not t.v("ogre")["next_attack_broken_up"]


def test_b_hs5_rank_penalties_are_consumed_by_a_later_attempt_of_the_appliers_choice(t: HSTable) -> None:
    t.attempt("o0", "ogre", "normal_success", 12)
    t.attempt("a1", "aldric", "major_success", 16, targets=["ogre"])
    pen = t.out("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")[
        "rank_penalty"
    ]
    assert pen["amount"] == -1 and pen["until_round"] is None  # outside an encounter: until used
    refused(t, "WRONG_ATTEMPT", "RankPenaltyConsumed", target="ogre", attempt_id="o0")  # came before
    refused(t, "WRONG_ATTEMPT", "RankPenaltyConsumed", target="ogre", attempt_id="a1")  # not the ogre's
    t.attempt("o1", "ogre", "limited_success", 12, rank="adept")
    out = t.out("RankPenaltyConsumed", target="ogre", attempt_id="o1")
    assert out["rank_penalty"] == -1 and t.v("ogre")["rank_penalties"] == []
    refused(t, "NO_RANK_PENALTY", "RankPenaltyConsumed", target="ogre", attempt_id="o1")


# ------------------------------------------------------------------ Fortune Die (B-HS-4)
def test_b_hs4_a_natural_20_may_be_downgraded_to_normal_for_a_fortune_die(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 20)
    out = t.out("FortuneDieExchanged", attempt_id="a1")
    assert (out["from"], out["success_level"], out["fortune_dice"]) == (
        "critical_success",
        "normal_success",
        1,
    )
    refused(t, "ALREADY_EXCHANGED", "FortuneDieExchanged", attempt_id="a1")
    refused(
        t,
        "NO_DEVASTATING_EFFECT",
        "DevastatingEffectChosen",
        attempt_id="a1",
        option="knock_back",
        target="ogre",
    )
    spent = t.out("FortuneDieSpent", creature="aldric", effect="reroll the ogre's attack (ruled)")
    assert spent["fortune_dice"] == 0
    refused(t, "NO_FORTUNE_DIE", "FortuneDieSpent", creature="aldric", effect="again")


def test_b_hs4_the_exchange_needs_a_natural_20_above_a_normal_success_before_its_level_is_used(
    t: HSTable,
) -> None:
    t.attempt("a1", "aldric", "critical_success", 19)
    refused(t, "NOT_NATURAL_20", "FortuneDieExchanged", attempt_id="a1")
    t.attempt("a2", "aldric", "normal_success", 20)
    refused(t, "NOTHING_TO_DOWNGRADE", "FortuneDieExchanged", attempt_id="a2")
    t.attempt("a3", "aldric", "major_success", 20, targets=["ogre"])
    t.out("HamperingEffectChosen", attempt_id="a3", option="move_5ft")
    refused(t, "LEVEL_USED", "FortuneDieExchanged", attempt_id="a3")


# ------------------------------------------------------------------ damage dice (B-HS-16)
def test_b_hs16_critical_success_maximises_the_dice_and_adds_a_rolled_additional_die(t: HSTable) -> None:
    """2d8+3 maximised = 19, plus the additional d8 as rolled (5): 24; the ogre's DR 3: 21."""
    t.attempt("a1", "aldric", "critical_success", 18, targets=["ogre"])
    t.out("DevastatingEffectChosen", attempt_id="a1", option="additional_damage_die")
    rolled = t.out(
        "DamageRolled",
        damage_id="d1",
        attempt_id="a1",
        roll=roll("2d8+3", 2, 3),
        additional_die=roll("1d8", 5),
    )
    assert (rolled["maximized"], rolled["dice"], rolled["additional_die"], rolled["total"]) == (
        True,
        19,
        5,
        24,
    )
    out = t.damage("ogre", damage_id="d1")
    assert out["amount"] == 24 and out["taken"] == 21 and t.hp("ogre") == 9


def test_b_hs16_no_additional_die_unless_chosen_and_of_the_damages_kind(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 18)
    refused(
        t,
        "NO_ADDITIONAL_DIE",
        "DamageRolled",
        damage_id="d1",
        attempt_id="a1",
        roll=roll("2d8", 1, 1),
        additional_die=roll("1d8", 8),
    )
    t.out("DevastatingEffectChosen", attempt_id="a1", option="additional_damage_die")
    refused(
        t,
        "WRONG_DICE",
        "DamageRolled",
        damage_id="d1",
        attempt_id="a1",
        roll=roll("2d8", 1, 1),
        additional_die=roll("1d6", 6),
    )


def test_b_hs16_brutal_damage_rerolls_one_die_until_higher(t: HSTable) -> None:
    """Major success, Brutal Damage: 2d6+2 shows 2 and 6. Die 1 (the 6) is at its maximum; die 0
    is rerolled: 1 (not higher: again), 2 (not higher: again), 5 (higher: replaces). 5 + 6 + 2 = 13."""
    t.attempt("a1", "aldric", "major_success", 16, targets=["ogre"])
    t.out("DamageRolled", damage_id="d1", attempt_id="a1", roll=roll("2d6+2", 2, 6))
    refused(t, "NO_BRUTAL_REROLL", "DiceRerolled", roll_id="d1", die_index=0, new_face=5)  # not chosen yet
    t.out("HamperingEffectChosen", attempt_id="a1", option="brutal_damage")
    refused(t, "DIE_AT_MAXIMUM", "DiceRerolled", roll_id="d1", die_index=1, new_face=3)
    assert t.out("DiceRerolled", roll_id="d1", die_index=0, new_face=1)["replaced"] is False
    refused(t, "NO_BRUTAL_REROLL", "DiceRerolled", roll_id="d1", die_index=1, new_face=2)  # one die only
    assert t.out("DiceRerolled", roll_id="d1", die_index=0, new_face=2)["replaced"] is False
    out = t.out("DiceRerolled", roll_id="d1", die_index=0, new_face=5)
    assert out["replaced"] and out["total"] == 13
    refused(t, "NO_BRUTAL_REROLL", "DiceRerolled", roll_id="d1", die_index=0, new_face=6)  # done
    assert t.damage("ogre", damage_id="d1")["amount"] == 13


def test_b_hs16_a_maximised_roll_has_nothing_to_reroll(t: HSTable) -> None:
    t.attempt("a1", "aldric", "critical_success", 18)
    t.out("DevastatingEffectChosen", attempt_id="a1", option="two_hampering_effects")
    t.out("HamperingEffectChosen", attempt_id="a1", option="brutal_damage")
    t.out("DamageRolled", damage_id="d1", attempt_id="a1", roll=roll("1d10", 3))
    refused(t, "NO_BRUTAL_REROLL", "DiceRerolled", roll_id="d1", die_index=0, new_face=7)


# ------------------------------------------------------------------ HS-9 defense against several attacks
def goblins_attack(t: HSTable, level: str, face: int, **more: object) -> None:
    """Four goblin attacks (g1..g4) against brin, who defends with one roll."""
    t.attempt("def", "brin", level, face, kind="defense", **more)


def test_hs9_one_defense_roll_blocks_by_its_level(t: HSTable) -> None:
    goblins_attack(t, "major_success", 15)
    out = t.out(
        "MultiAttackDefenseResolved",
        defense_attempt_id="def",
        incoming=["g1", "g2", "g3", "g4"],
        blocked=["g1", "g2"],
    )
    assert out["blocks_allowed"] == 2 and out["landed"] == ["g3", "g4"]
    refused(t, "ATTACK_BLOCKED", "DamageApplied", target="brin", amount=4, attack="g1")
    assert t.damage("brin", 4, attack="g3")["taken"] == 4


def test_hs9_blocking_more_than_the_level_allows_is_refused(t: HSTable) -> None:
    goblins_attack(t, "normal_success", 12)
    refused(
        t,
        "BLOCKS_WRONG",
        "MultiAttackDefenseResolved",
        defense_attempt_id="def",
        incoming=["g1", "g2"],
        blocked=["g1", "g2"],
    )


def test_hs9_extra_blocks_from_a_shield_and_the_defend_action(t: HSTable) -> None:
    """HS-9 / HS-5: +1 per source, even on a limited success."""
    t.out("DefendDeclared", creature="brin")
    goblins_attack(t, "limited_success", 9)
    out = t.out(
        "MultiAttackDefenseResolved",
        defense_attempt_id="def",
        incoming=["g1", "g2", "g3"],
        blocked=["g1", "g2"],
        extra_block_sources=["shield"],
    )
    assert out["blocks_allowed"] == 2 and out["landed"] == ["g3"]


def test_hs9_failure_lets_one_attack_of_the_defenders_choice_bypass_armor(t: HSTable) -> None:
    """aldric (DR 2) fails: g2 bypasses his armor (6 damage: 6), g1 does not (6 damage: 4)."""
    t.attempt("def", "aldric", "failure", 6, kind="defense")
    refused(t, "BLOCKS_WRONG", "MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1", "g2"])
    t.out("MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1", "g2"], bypass_armor=["g2"])
    assert t.damage("aldric", 6, attack="g1")["taken"] == 4
    assert t.damage("aldric", 6, attack="g2")["taken"] == 6


def test_b_hs19_critical_failure_crits_named_attacks_maximised_and_bypassing_armor(t: HSTable) -> None:
    """B-HS-19: the GM names the crits; against a hero a crit deals maximum damage (1d6+2: 8) and
    bypasses armor DR."""
    t.attempt("def", "aldric", "failure", 1, kind="defense")  # natural 1: critical failure
    refused(t, "BLOCKS_WRONG", "MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1", "g2"])
    t.out("MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1", "g2"], crit=["g1"])
    crit = t.out("DamageApplied", target="aldric", roll=roll("1d6+2", 1), attack="g1")
    assert (crit["amount"], crit["taken"], crit["critical"], crit["bypass_dr"]) == (8, 8, True, True)
    plain = t.out("DamageApplied", target="aldric", roll=roll("1d6+2", 1), attack="g2")
    assert (plain["amount"], plain["taken"]) == (3, 1)


def test_b_hs19_rolled_reading_behind_its_flag(t: HSTable) -> None:
    t.rec("RulesFlagSet", flag="hs.crit_against_hero", value="rolled")
    out = t.out("DamageApplied", target="aldric", roll=roll("1d6+2", 1), critical=True)
    assert (out["amount"], out["taken"]) == (3, 3)


def test_b_hs20_a_critical_defense_with_a_20_blocks_every_attack(t: HSTable) -> None:
    goblins_attack(t, "critical_success", 20)
    out = t.out(
        "MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1", "g2", "g3", "g4", "g5"]
    )
    assert out["blocks_allowed"] == "all" and out["landed"] == [] and out["no_ill_effect"]


def test_hs9_a_critical_defense_without_a_20_blocks_three(t: HSTable) -> None:
    goblins_attack(t, "critical_success", 18)
    out = t.out(
        "MultiAttackDefenseResolved",
        defense_attempt_id="def",
        incoming=["g1", "g2", "g3", "g4"],
        blocked=["g1", "g2", "g3"],
    )
    assert out["landed"] == ["g4"] and out["may_harry"] == 0


def test_hs9_over_blocking_on_a_major_success_may_harry(t: HSTable) -> None:
    goblins_attack(t, "major_success", 15)
    out = t.out("MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1"], blocked=["g1"])
    assert out["may_harry"] == 1


def test_hs9_a_defense_is_resolved_once_and_each_attack_once(t: HSTable) -> None:
    goblins_attack(t, "normal_success", 12)
    t.out("MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g1"], blocked=["g1"])
    refused(t, "ALREADY_RESOLVED", "MultiAttackDefenseResolved", defense_attempt_id="def", incoming=["g2"])
    t.attempt("def2", "brin", "normal_success", 12, kind="defense")
    refused(t, "ALREADY_RESOLVED", "MultiAttackDefenseResolved", defense_attempt_id="def2", incoming=["g1"])
    t.attempt("atk", "brin", "normal_success", 12, kind="attack")
    refused(t, "WRONG_ATTEMPT", "MultiAttackDefenseResolved", defense_attempt_id="atk", incoming=["g3"])
