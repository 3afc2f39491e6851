"""Rounds, initiative bands, turn boundaries (RULES.md A2.1, A2.2; HS-1..HS-6; B-HS-5, B-HS-9, B-HS-18;
ruling 25). The hooks the core encounter engine will call are driven directly here."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.rulesets.hero_surge import HERO_SURGE, rounds
from domain.rulesets.hero_surge.tables import ACTIONS, TURN_BUDGET
from tests.unit.hero_surge.helpers import HSTable, Scene, d20, roll

CAST = ["aldric", "brin", "goblin", "ogre"]


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in CAST:
        table.add(cid)
    table.add("hob", kind="monster", level=1, con_score=10, max_hp=12)
    return table


def check(t: HSTable, who: str, level: str, face: int, rnd: int = 1, enc: str = "e1") -> dict:
    return t.out(
        "InitiativeCheckRolled",
        encounter_id=enc,
        creature=who,
        round=rnd,
        roll=d20(face, 2),
        success_level=level,
    )


def order(t: HSTable, rnd: int = 1, who: list[str] | None = None) -> dict:
    return rounds.initiative_order(t.ledger.state, "e1", rnd, who or [*CAST, "hob"])


def test_hs2_bands_by_success_level_heroes_first_then_the_higher_die(t: HSTable) -> None:
    """HS-2 / B-HS-18: critical successes first; in a band heroes before foes; then the higher die."""
    check(t, "goblin", "critical_success", 15)
    check(t, "aldric", "major_success", 9)
    check(t, "ogre", "major_success", 19)
    check(t, "brin", "major_success", 14)
    check(t, "hob", "critical_failure", 20)
    got = order(t)
    assert got["order"] == ["goblin", "brin", "aldric", "ogre", "hob"]
    assert got["ties"] == [] and got["missing"] == []
    assert got["bands"][1] == {
        "success_level": "major_success",
        "heroes": ["brin", "aldric"],
        "foes": ["ogre"],
    }


def test_b_hs18_ties_on_the_die_are_settled_by_a_recorded_choice(t: HSTable) -> None:
    check(t, "goblin", "normal_success", 11)
    check(t, "hob", "normal_success", 11)
    check(t, "ogre", "normal_success", 11)
    got = order(t)
    assert got["ties"] == [
        {"success_level": "normal_success", "side": "foes", "die": 11, "creatures": ["goblin", "hob", "ogre"]}
    ]
    t.out(
        "InitiativeOrderChosen",
        encounter_id="e1",
        round=1,
        success_level="normal_success",
        side="foes",
        order=["ogre", "goblin", "hob"],
    )
    got = order(t)
    assert got["order"] == ["ogre", "goblin", "hob"] and got["ties"] == []


def test_hs2_heroes_may_decide_between_themselves_over_the_die(t: HSTable) -> None:
    """HS-2: "use the higher die roll or decide between yourselves"."""
    check(t, "aldric", "normal_success", 5)
    check(t, "brin", "normal_success", 18)
    t.out(
        "InitiativeOrderChosen",
        encounter_id="e1",
        round=1,
        success_level="normal_success",
        side="heroes",
        order=["aldric", "brin"],
    )
    assert order(t)["order"][:2] == ["aldric", "brin"]


def test_b_hs18_a_choice_must_name_exactly_that_side_of_the_band(t: HSTable) -> None:
    check(t, "aldric", "normal_success", 5)
    check(t, "brin", "normal_success", 18)
    check(t, "goblin", "normal_success", 18)
    with pytest.raises(RuleViolation) as err:
        t.rec(
            "InitiativeOrderChosen",
            encounter_id="e1",
            round=1,
            success_level="normal_success",
            side="heroes",
            order=["brin"],
        )
    assert err.value.code == "TIE_ORDER_WRONG"
    with pytest.raises(RuleViolation) as err:
        t.rec(
            "InitiativeOrderChosen",
            encounter_id="e1",
            round=1,
            success_level="normal_success",
            side="heroes",
            order=["aldric", "ogre"],
        )
    assert err.value.code == "NOT_ROLLED"


def test_hs1_hs2_initiative_is_checked_again_every_round_and_the_dead_drop_out(t: HSTable) -> None:
    """HS-1: survivors repeat; HS-2: a new check each round; ruling 8/20: the dead take no turns."""
    check(t, "aldric", "normal_success", 10)
    check(t, "goblin", "major_success", 10)
    with pytest.raises(RuleViolation) as err:
        check(t, "aldric", "critical_success", 20)
    assert err.value.code == "ALREADY_ROLLED"
    t.damage("goblin", 11)
    check(t, "aldric", "limited_success", 3, rnd=2)
    assert order(t, 2, ["aldric", "goblin"]) == {
        "order": ["aldric"],
        "bands": [{"success_level": "limited_success", "heroes": ["aldric"], "foes": []}],
        "ties": [],
        "missing": [],
    }
    assert order(t, 2, ["aldric", "brin"])["missing"] == ["brin"]


def test_hs3_the_surprise_round_has_its_own_check_and_round_1_checks_again(t: HSTable) -> None:
    check(t, "aldric", "failure", 4, rnd=0)
    assert order(t, 0, ["aldric"])["bands"][0]["success_level"] == "failure"
    check(t, "aldric", "critical_success", 20, rnd=1)  # C2.1: the creature keeps this round's check
    assert order(t, 1, ["aldric"])["bands"][0]["success_level"] == "critical_success"
    assert order(t, 0, ["aldric"])["missing"] == ["aldric"]


def test_b_hs18_knock_initiative_back_this_round_if_the_foe_has_not_acted(t: HSTable) -> None:
    check(t, "ogre", "major_success", 12)
    check(t, "aldric", "normal_success", 8)
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    out = t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert out["knock_back"] == {
        "target": "ogre",
        "by": "a1",
        "applies": "this_round",
        "round": 1,
        "band": "normal_success",
    }
    assert order(t)["order"] == ["aldric", "ogre"]  # heroes first in the normal band


def test_b_hs18_knock_back_after_the_foe_acted_lowers_its_next_check(t: HSTable) -> None:
    check(t, "ogre", "major_success", 12)
    s = Scene(t, CAST)
    s.turn_start("ogre")  # the ogre has acted this round
    s.apply(
        "AttemptRolled",
        attempt_id="a1",
        creature="brin",
        kind="attack",
        roll=d20(18),
        success_level="critical_success",
        targets=["ogre"],
    )
    out = s.apply("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert out["knock_back"]["applies"] == "next_round"
    s.next_round()
    got = s.apply(
        "InitiativeCheckRolled",
        encounter_id="e1",
        creature="ogre",
        round=2,
        roll=d20(20),
        success_level="critical_success",
    )
    assert (got["band"], got["knocked_back"]) == ("major_success", 1)


def test_b_hs18_knock_back_never_goes_below_the_last_band(t: HSTable) -> None:
    check(t, "ogre", "critical_failure", 2)
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert order(t, 1, ["ogre"])["bands"][0]["success_level"] == "critical_failure"


def test_ruling25_b_hs9_a_dying_hero_owes_a_luck_roll_at_the_start_of_its_own_turn(t: HSTable) -> None:
    """Ruling 25: the start-of-turn luck roll is owed (and accepted) only when the hero is dying at
    the start of its own turn; the turn cannot end while it is owed (pending_rolls)."""
    t.damage("brin", 27)  # -3, dying
    s = Scene(t, CAST)
    with pytest.raises(RuleViolation) as err:
        s.apply("LuckRollMade", creature="brin", context="dying_turn_start", roll=d20(12))
    assert err.value.code == "NO_LUCK_ROLL_OWED"
    s.turn_start("aldric")  # someone else's turn start owes brin nothing
    assert HERO_SURGE.pending_rolls(s.state) == []
    report = s.turn_start("brin")
    assert report["luck_roll_owed"] == "dying_turn_start"
    assert HERO_SURGE.pending_rolls(s.state) == [
        ("LuckRollMade", {"creature": "brin", "context": "dying_turn_start"})
    ]
    assert rounds.rolls_owed_at_turn_end(s.state, s.encounter, "brin") == [
        ("LuckRollMade", {"creature": "brin", "context": "dying_turn_start"})
    ]
    out = s.apply("LuckRollMade", creature="brin", context="dying_turn_start", roll=d20(4))
    assert out["result"] == "unlucky" and out["after"]["hero_surges"] == 3
    assert HERO_SURGE.pending_rolls(s.state) == []


def test_ruling25_a_stable_hero_owes_no_start_of_turn_luck_roll(t: HSTable) -> None:
    t.damage("brin", 27)
    t.out("HealersKitUsed", healer="aldric", target="brin")
    s = Scene(t, CAST)
    assert "luck_roll_owed" not in s.turn_start("brin")


def test_b_hs5_rank_penalties_last_until_the_end_of_the_next_round(t: HSTable) -> None:
    """B-HS-5: applied in round 1, usable until the end of round 2; gone when round 3 starts."""
    s = Scene(t, CAST)
    s.apply(
        "AttemptRolled",
        attempt_id="a1",
        creature="brin",
        kind="attack",
        roll=d20(16),
        success_level="major_success",
        targets=["ogre"],
    )
    pen = s.apply("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")[
        "rank_penalty"
    ]
    assert pen["until_round"] == ["e1", 2]
    assert s.next_round() == {}
    assert s.v("ogre")["rank_penalty_total"] == -1
    assert s.next_round() == {"rank_penalties_expired": {"ogre": [pen["id"]]}}
    assert s.v("ogre")["rank_penalties"] == []


def test_hs5_defend_gives_advantage_and_a_block_until_the_start_of_its_next_turn(t: HSTable) -> None:
    s = Scene(t, CAST)
    out = s.apply("DefendDeclared", creature="brin")
    assert out["advantage_on_defense"] and s.v("brin")["extra_blocks"] == 1
    assert "defending" in s.v("brin")["conditions"]
    assert s.v("brin")["effects"][0]["name"] == "defend"
    assert s.turn_start("brin") == {"defend_ended": True}
    assert s.v("brin")["extra_blocks"] == 0


def test_hs5_defending_another_needs_its_target(t: HSTable) -> None:
    with pytest.raises(Exception, match="names the creature defended"):
        t.rec("DefendDeclared", creature="aldric", mode="intercept")
    t.out("DefendDeclared", creature="aldric", mode="target", target="brin")
    assert t.v("aldric")["defend"]["target"] == "brin"


def test_hs6_a_full_round_action_after_moving_forfeits_movement_on_the_turn_it_completes(t: HSTable) -> None:
    s = Scene(t, CAST)
    s.apply("FullRoundActionStarted", creature="aldric", action="ritual", moved_before=True)
    with pytest.raises(RuleViolation) as err:
        s.apply("FullRoundActionStarted", creature="aldric", action="another")
    assert err.value.code == "FULL_ROUND_IN_PROGRESS"
    assert s.turn_start("aldric")["full_round_action"]["action"] == "ritual"
    out = s.apply("FullRoundActionCompleted", creature="aldric")
    assert out["movement_forfeited"] and s.v("aldric")["movement_forfeited"]
    s.turn_start("aldric")
    assert not s.v("aldric")["movement_forfeited"]
    with pytest.raises(RuleViolation) as err:
        s.apply("FullRoundActionAborted", creature="aldric")
    assert err.value.code == "NO_FULL_ROUND_ACTION"


def test_hs6_maintained_and_aborted_full_round_actions(t: HSTable) -> None:
    t.out("FullRoundActionStarted", creature="brin", action="ritual")
    assert t.out("FullRoundActionMaintained", creature="brin")["maintained"]
    assert t.v("brin")["full_round_action"]["maintained"]
    t.out("FullRoundActionAborted", creature="brin")
    assert t.v("brin")["full_round_action"] is None


def test_hs4_a_turn_is_a_move_and_one_action() -> None:
    """HS-4: the action table the encounter engine budgets from."""
    assert TURN_BUDGET == {"move": 1, "action": 1}
    assert set(ACTIONS) >= {"assist", "attack", "cast", "defend", "delay", "move", "use", "ready"}
    assert ACTIONS["move"] == "action" and ACTIONS["full_round"] == "action"


def test_encounter_end_clears_the_combat_only_marks_and_the_fights_records(t: HSTable) -> None:
    t.attempt("before", "aldric", "normal_success", 12, kind="skill")
    s = Scene(t, CAST)
    s.apply("DefendDeclared", creature="brin")
    s.apply(
        "AttemptRolled",
        attempt_id="a1",
        creature="brin",
        kind="attack",
        roll=roll("1d20", 16),
        success_level="major_success",
    )
    s.apply("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")
    report = rounds.encounter_ended(s.state, s.encounter, s.ctx())
    assert sorted(report["cleared"]) == ["brin", "ogre"]
    assert s.v("ogre")["rank_penalties"] == [] and s.v("brin")["defend"] is None
    assert list(s.state.attempts) == ["before"]


def test_b_hs18_the_rank_the_encounter_engine_sorts_by(t: HSTable) -> None:
    """HS-2 / B-HS-18 as one rank, higher first: band, then heroes, then the die."""
    state = t.ledger.state

    def entry(who: str, level: str, face: int) -> list[int]:
        payload = {"roll": d20(face), "success_level": level}
        return rounds.initiative_entry(state, None, [who], payload, None)["rank"]

    hero_major_9 = entry("brin", "major_success", 9)
    foe_major_19 = entry("ogre", "major_success", 19)
    hero_normal_20 = entry("aldric", "normal_success", 20)
    foe_crit_1 = entry("goblin", "critical_success", 1)
    assert foe_crit_1 > hero_major_9 > foe_major_19 > hero_normal_20
    assert entry("brin", "major_success", 12) > entry("aldric", "major_success", 11)
