"""Rounds, initiative bands, turn boundaries (RULES.md A2.1, A2.2; HS-1..HS-6; B-HS-5, B-HS-9, B-HS-18;
ruling 25), played through the core encounter engine (``domain/rulesets/hero_surge/encounter.py``)."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.rulesets.hero_surge import HERO_SURGE, rounds
from domain.rulesets.hero_surge.tables import ACTIONS, TURN_BUDGET
from tests.unit.hero_surge.helpers import HSTable, d20, roll

CAST = ["aldric", "brin", "goblin", "ogre"]


@pytest.fixture
def t() -> HSTable:
    table = HSTable()
    for cid in CAST:
        table.add(cid)
    table.add("hob", kind="monster", level=1, con_score=10, max_hp=12)
    return table


def test_hs2_bands_by_success_level_heroes_first_then_the_higher_die(t: HSTable) -> None:
    """HS-2 / B-HS-18: critical successes first; in a band heroes before foes; then the higher die."""
    out = t.fight(
        {
            "goblin": ("critical_success", 15),
            "aldric": ("major_success", 9),
            "ogre": ("major_success", 19),
            "brin": ("major_success", 14),
            "hob": ("critical_failure", 20),
        }
    )
    assert out["order"] == ["goblin", "brin", "aldric", "ogre", "hob"]
    e = t.enc()
    assert e["bands"][1] == {"success_level": "major_success", "heroes": ["brin", "aldric"], "foes": ["ogre"]}
    assert e["next_turn_of"] == "goblin"


def test_b_hs18_ties_on_the_die_are_settled_by_a_recorded_choice(t: HSTable) -> None:
    out = t.fight(
        {"goblin": ("normal_success", 11), "hob": ("normal_success", 11), "ogre": ("normal_success", 11)}
    )
    assert out["unresolved_ties"] == [["goblin", "hob", "ogre"]]
    with pytest.raises(RuleViolation) as err:
        t.start()
    assert err.value.code == "ENCOUNTER_NOT_RUNNING"
    out = t.out(
        "InitiativeOrderChosen", encounter_id="e1", creatures=["ogre", "goblin", "hob"], decided_by="gm"
    )
    assert out["order"] == ["ogre", "goblin", "hob"] and (out["band"], out["side"]) == (
        "normal_success",
        "foes",
    )


def test_hs2_heroes_may_decide_between_themselves_over_the_die(t: HSTable) -> None:
    """HS-2: "use the higher die roll or decide between yourselves" (before either has acted)."""
    t.fight({"aldric": ("normal_success", 5), "brin": ("normal_success", 18), "ogre": ("failure", 9)})
    assert t.enc()["order"] == ["brin", "aldric", "ogre"]
    out = t.out(
        "InitiativeOrderChosen", encounter_id="e1", creatures=["aldric", "brin"], decided_by="players"
    )
    assert out["order"] == ["aldric", "brin", "ogre"]
    assert t.start()["turn_of"] == "aldric"


def test_b_hs18_a_choice_must_name_exactly_that_side_of_the_band(t: HSTable) -> None:
    t.fight(
        {"aldric": ("normal_success", 5), "brin": ("normal_success", 18), "goblin": ("normal_success", 18)}
    )
    with pytest.raises(RuleViolation) as err:
        t.rec("InitiativeOrderChosen", encounter_id="e1", creatures=["aldric", "goblin"])
    assert err.value.code == "TIE_ORDER_WRONG"
    t.start()  # brin acts
    with pytest.raises(RuleViolation) as err:
        t.rec("InitiativeOrderChosen", encounter_id="e1", creatures=["aldric", "brin"])
    assert err.value.code == "ALREADY_ACTED"


def test_hs1_hs2_initiative_is_checked_again_every_round_and_the_dead_drop_out(t: HSTable) -> None:
    """HS-1: survivors repeat; HS-2: a new check each round (recorded during a round, it is for the
    next); ruling 8/20: the dead take no turns and need no check."""
    t.fight({"aldric": ("normal_success", 10), "goblin": ("major_success", 10)})
    assert t.start()["turn_of"] == "goblin"
    t.end()
    t.start()
    t.damage("goblin", 11)  # dead below 0 (B-HS-6)
    with pytest.raises(RuleViolation) as err:
        t.check("goblin", "critical_success", 20)
    assert err.value.code == "CREATURE_DEAD"
    t.end()
    with pytest.raises(RuleViolation) as err:
        t.start()  # round 2 needs its checks first
    assert err.value.code == "INITIATIVE_PENDING"
    assert t.check("aldric", "limited_success", 3)["for_round"] == 2
    with pytest.raises(RuleViolation) as err:
        t.check("aldric", "critical_success", 20)
    assert err.value.code == "ALREADY_ROLLED"
    out = t.start()
    assert (out["round_now"], out["turn_of"]) == (2, "aldric")
    assert t.enc()["bands"] == [{"success_level": "limited_success", "heroes": ["aldric"], "foes": []}]
    t.end()
    t.check("aldric", "failure", 8)
    out = t.start()  # the dead goblin's place comes round before round 3 starts: skipped
    assert {"creature": "goblin", "skipped": "dead (rulings 8, 20)"} in out["turns"]
    assert (out["round_now"], out["turn_of"]) == (3, "aldric")


def test_hs3_the_surprise_round_has_its_own_check_and_round_1_checks_again(t: HSTable) -> None:
    t.fight({"aldric": ("failure", 4), "goblin": ("normal_success", 12)}, surprised=["goblin"])
    out = t.start()
    assert (out["round_now"], out["turn_of"]) == (0, "aldric")
    t.rec(
        "AttemptRolled",
        attempt_id="a0",
        creature="aldric",
        kind="attack",
        roll=d20(12),
        success_level="normal_success",
    )
    with pytest.raises(RuleViolation) as err:  # HS-3: a single action
        t.rec("ActionTaken", encounter_id="e1", creature="aldric", action="move")
    assert err.value.code == "SURPRISE_ROUND_ONE_ACTION"
    t.end()
    t.check("aldric", "critical_success", 20)
    t.check("goblin", "failure", 2)
    out = t.start()
    assert out["round_now"] == 1 and out["turns"][-1]["creature"] == "aldric"
    assert t.enc()["bands"][0] == {"success_level": "critical_success", "heroes": ["aldric"], "foes": []}


def test_hs4_a_turn_is_a_move_and_an_action_or_two_moves(t: HSTable) -> None:
    """HS-4: "you can move and take an action"; "move twice ... by using the move action"."""
    assert TURN_BUDGET == {"move": 1, "action": 1}
    assert set(ACTIONS) >= {"assist", "attack", "cast", "defend", "delay", "move", "use", "ready"}
    t.fight({"aldric": ("normal_success", 10), "goblin": ("failure", 10)})
    t.start()
    t.rec("ActionTaken", encounter_id="e1", creature="aldric", action="move")
    t.rec(
        "AttemptRolled",
        attempt_id="a1",
        creature="aldric",
        kind="attack",
        roll=d20(12),
        success_level="failure",
    )
    with pytest.raises(RuleViolation) as err:
        t.rec("ActionTaken", encounter_id="e1", creature="aldric", action="move")
    assert err.value.code == "NO_ACTION_LEFT"
    with pytest.raises(RuleViolation) as err:  # an attack is the goblin's action: not on aldric's turn
        t.rec(
            "AttemptRolled",
            attempt_id="g1",
            creature="goblin",
            kind="attack",
            roll=d20(9),
            success_level="failure",
        )
    assert err.value.code == "NOT_YOUR_TURN"
    # a defense takes no action (HS-9)
    t.rec(
        "AttemptRolled",
        attempt_id="d1",
        creature="goblin",
        kind="defense",
        roll=d20(9),
        success_level="failure",
    )
    t.end()
    t.start()
    t.rec("ActionTaken", encounter_id="e1", creature="goblin", action="move")
    t.rec("ActionTaken", encounter_id="e1", creature="goblin", action="move", substitutes_for="action")
    with pytest.raises(RuleViolation) as err:
        t.rec(
            "AttemptRolled",
            attempt_id="g2",
            creature="goblin",
            kind="attack",
            roll=d20(9),
            success_level="failure",
        )
    assert err.value.code == "NO_ACTION_LEFT"


def test_b_hs18_knock_initiative_back_this_round_if_the_foe_has_not_acted(t: HSTable) -> None:
    t.fight(
        {"brin": ("critical_success", 18), "ogre": ("major_success", 12), "aldric": ("normal_success", 8)}
    )
    t.start()
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    out = t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert out["knock_back"] == {
        "target": "ogre",
        "by": "a1",
        "applies": "this_round",
        "round": 1,
        "band": "normal_success",
    }
    assert t.enc()["order"] == ["brin", "aldric", "ogre"]  # heroes first in the normal band
    t.end()
    assert t.start()["turn_of"] == "aldric"


def test_b_hs18_knock_back_after_the_foe_acted_lowers_its_next_check(t: HSTable) -> None:
    t.fight({"ogre": ("major_success", 12), "brin": ("normal_success", 18)})
    t.start()  # the ogre acts first
    t.end()
    t.start()
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    out = t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert out["knock_back"] == {"target": "ogre", "by": "a1", "applies": "next_round", "pending": 1}
    got = t.check("ogre", "critical_success", 20)
    assert (got["band"], got["knocked_back"]) == ("major_success", 1)
    assert t.v("ogre")["knockback_pending"] == 0


def test_b_hs18_knock_back_lowers_a_next_round_check_already_recorded(t: HSTable) -> None:
    t.fight({"ogre": ("major_success", 12), "brin": ("normal_success", 18)})
    t.start()
    t.check("ogre", "critical_success", 20)  # for round 2
    t.end()
    t.start()
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    out = t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert out["knock_back"]["applies"] == "next_round" and out["knock_back"]["band"] == "major_success"


def test_b_hs18_knock_back_never_goes_below_the_last_band(t: HSTable) -> None:
    t.fight({"brin": ("critical_success", 18), "ogre": ("critical_failure", 2)})
    t.start()
    t.attempt("a1", "brin", "critical_success", 18, targets=["ogre"])
    t.out("DevastatingEffectChosen", attempt_id="a1", option="knock_initiative_back", target="ogre")
    assert t.enc()["bands"][-1] == {"success_level": "critical_failure", "heroes": [], "foes": ["ogre"]}


def test_ruling25_b_hs9_a_dying_hero_owes_a_luck_roll_at_the_start_of_its_own_turn(t: HSTable) -> None:
    """Ruling 25: the start-of-turn luck roll is owed (and accepted) only when the hero is dying at
    the start of its own turn; the turn cannot end while it is owed (ROLLS_PENDING, ruling 18)."""
    t.damage("brin", 27)  # -3, dying
    t.fight({"aldric": ("major_success", 10), "brin": ("normal_success", 5)})
    with pytest.raises(RuleViolation) as err:
        t.luck("brin", "dying_turn_start", 12)
    assert err.value.code == "NO_LUCK_ROLL_OWED"
    t.start()  # someone else's turn start owes brin nothing
    assert t.app.pending_rolls(t.cid) == [] if hasattr(t.app, "pending_rolls") else True
    t.end()
    report = t.start()
    assert report["turns"][0]["luck_roll_owed"] == "dying_turn_start"
    assert HERO_SURGE.pending_rolls(t.ledger.state) == [
        ("LuckRollMade", {"creature": "brin", "context": "dying_turn_start"})
    ]
    with pytest.raises(RuleViolation) as err:
        t.end()
    assert err.value.code == "ROLLS_PENDING"
    assert err.value.details["owed"][0]["type"] == "LuckRollMade"
    out = t.luck("brin", "dying_turn_start", 4)
    assert out["result"] == "unlucky" and out["after"]["hero_surges"] == 3
    assert HERO_SURGE.pending_rolls(t.ledger.state) == []
    t.end()


def test_ruling25_a_stable_hero_owes_no_start_of_turn_luck_roll(t: HSTable) -> None:
    t.damage("brin", 27)
    t.out("HealersKitUsed", healer="aldric", target="brin")
    t.fight({"brin": ("major_success", 10), "aldric": ("normal_success", 5)})
    assert "luck_roll_owed" not in t.start()["turns"][0]
    t.end()


def test_b_hs5_rank_penalties_last_until_the_end_of_the_next_round(t: HSTable) -> None:
    """B-HS-5: applied in round 1, usable until the end of round 2; gone when round 3 starts."""
    t.fight({"brin": ("major_success", 10), "ogre": ("failure", 5)})
    t.start()
    t.attempt("a1", "brin", "major_success", 16, targets=["ogre"])
    pen = t.out("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="ogre")[
        "rank_penalty"
    ]
    assert pen["until_round"] == ["e1", 2]
    t.end()
    for rnd in (2, 3):
        t.start()
        t.end()
        t.check("brin", "major_success", 10)
        t.check("ogre", "failure", 5)
        out = t.start()
        if rnd == 2:
            assert "rounds" not in out or not out["rounds"][0].get("rank_penalties_expired")
            assert t.v("ogre")["rank_penalty_total"] == -1
        else:
            assert out["rounds"][0]["rank_penalties_expired"] == {"ogre": [pen["id"]]}
            assert t.v("ogre")["rank_penalties"] == []
        t.end()


def test_hs5_defend_gives_advantage_and_a_block_until_the_start_of_its_next_turn(t: HSTable) -> None:
    t.fight({"brin": ("major_success", 10), "ogre": ("failure", 5)})
    t.start()
    out = t.out("DefendDeclared", creature="brin")
    assert (
        out["advantage_on_defense"] and t.v("brin")["extra_blocks"] == 1 and out["takes_action"] == "action"
    )
    assert "defending" in t.v("brin")["conditions"]
    assert t.v("brin")["effects"][0]["name"] == "defend"
    t.end()
    t.start()
    t.end()
    t.check("brin", "major_success", 10)
    t.check("ogre", "failure", 5)
    assert t.start()["turns"][0] == {"creature": "brin", "round": 2, "defend_ended": True}
    assert t.v("brin")["extra_blocks"] == 0


def test_hs6_a_full_round_action_after_moving_forfeits_movement_on_the_turn_it_completes(t: HSTable) -> None:
    t.fight({"aldric": ("major_success", 10), "ogre": ("failure", 5)})
    t.start()
    t.out("FullRoundActionStarted", creature="aldric", action="ritual", moved_before=True)
    with pytest.raises(RuleViolation) as err:
        t.rec("FullRoundActionStarted", creature="aldric", action="another")
    assert err.value.code in ("FULL_ROUND_IN_PROGRESS", "NO_ACTION_LEFT")
    t.end()
    t.start()
    t.end()
    t.check("aldric", "major_success", 10)
    t.check("ogre", "failure", 5)
    assert t.start()["turns"][0]["full_round_action"]["action"] == "ritual"
    out = t.out("FullRoundActionCompleted", creature="aldric")
    assert out["movement_forfeited"] and t.v("aldric")["movement_forfeited"]
    with pytest.raises(RuleViolation) as err:
        t.rec("FullRoundActionAborted", creature="aldric")
    assert err.value.code == "NO_FULL_ROUND_ACTION"


def test_encounter_end_clears_the_combat_only_marks_and_the_fights_records(t: HSTable) -> None:
    t.attempt("before", "aldric", "normal_success", 12, kind="skill")
    t.fight({"brin": ("major_success", 10), "ogre": ("failure", 5)})
    t.start()
    t.rec("DefendDeclared", creature="brin")
    t.end()
    t.start()
    t.rec(
        "AttemptRolled",
        attempt_id="a1",
        creature="ogre",
        kind="attack",
        roll=roll("1d20", 16),
        success_level="major_success",
    )
    t.rec("HamperingEffectChosen", attempt_id="a1", option="rank_penalty", target="brin")
    t.end()
    out = t.out("EncounterEnded", encounter_id="e1")
    assert sorted(out["cleared"]) == ["brin"]
    assert t.v("brin")["rank_penalties"] == [] and t.v("brin")["defend"] is None
    assert list(t.ledger.state.attempts) == ["before"]


def test_the_order_chosen_v1_shape_is_upcast_to_the_engines() -> None:
    """A stored v1 InitiativeOrderChosen (band and side) reads as the engine's (the creatures)."""
    cat = HERO_SURGE.catalogue
    v1 = {
        "encounter_id": "e1",
        "round": 1,
        "success_level": "normal_success",
        "side": "heroes",
        "order": ["b", "a"],
    }
    assert cat.version_of("InitiativeOrderChosen") == 2 if hasattr(cat, "version_of") else True
    assert cat.upcast("InitiativeOrderChosen", 1, v1) == {
        "encounter_id": "e1",
        "creatures": ["b", "a"],
        "decided_by": "players",
    }


def test_a_legacy_initiative_check_is_the_engines_roll_for_the_round_it_names(t: HSTable) -> None:
    t.rec("EncounterStarted", encounter_id="e1", participants=["aldric", "ogre"])
    with pytest.raises(RuleViolation) as err:
        t.rec(
            "InitiativeCheckRolled",
            encounter_id="e1",
            creature="aldric",
            round=3,
            roll=d20(4),
            success_level="failure",
        )
    assert err.value.code == "WRONG_ROUND"
    t.rec(
        "InitiativeCheckRolled",
        encounter_id="e1",
        creature="aldric",
        round=1,
        roll=d20(4),
        success_level="failure",
    )
    out = t.out(
        "InitiativeCheckRolled",
        encounter_id="e1",
        creature="ogre",
        round=1,
        roll=d20(4),
        success_level="normal_success",
    )
    assert out["order"] == ["ogre", "aldric"]


def test_hs5_defending_another_needs_its_target(t: HSTable) -> None:
    with pytest.raises(Exception, match="names the creature defended"):
        t.rec("DefendDeclared", creature="aldric", mode="intercept")
    t.out("DefendDeclared", creature="aldric", mode="target", target="brin")
    assert t.v("aldric")["defend"]["target"] == "brin"


def test_hs6_maintained_and_aborted_full_round_actions(t: HSTable) -> None:
    t.out("FullRoundActionStarted", creature="brin", action="ritual")
    assert t.out("FullRoundActionMaintained", creature="brin")["maintained"]
    assert t.v("brin")["full_round_action"]["maintained"]
    t.out("FullRoundActionAborted", creature="brin")
    assert t.v("brin")["full_round_action"] is None


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


def test_a_state_in_the_middle_of_a_turn_dumps_and_loads_exactly(t: HSTable) -> None:
    """Persisted snapshots: a running encounter (the next round's checks, a luck roll owed at a
    dying hero's turn start) survives the JSON dump of the ruleset's state (C2.1)."""
    import json

    t.damage("brin", 27)
    t.fight({"brin": ("major_success", 10), "ogre": ("failure", 5)})
    t.start()
    t.check("ogre", "normal_success", 7)
    state = t.ledger.state
    back = HERO_SURGE.load_state(json.loads(json.dumps(HERO_SURGE.dump_state(state))))
    assert HERO_SURGE.dump_state(back) == HERO_SURGE.dump_state(state)
    assert HERO_SURGE.pending_rolls(back) == [
        ("LuckRollMade", {"creature": "brin", "context": "dying_turn_start"})
    ]
    assert HERO_SURGE.encounter_view(back, "e1") == HERO_SURGE.encounter_view(state, "e1")


def test_hs2_a_creature_joining_a_running_encounter_acts_last_and_checks_for_the_next_round(
    t: HSTable,
) -> None:
    t.fight({"aldric": ("normal_success", 10), "ogre": ("failure", 5)})
    t.start()
    joined = t.out(
        "CreatureJoinedEncounter",
        encounter_id="e1",
        creature="hob",
        roll=d20(17),
        success_level="critical_success",
    )
    assert joined["order"] == ["aldric", "ogre", "hob"] and joined["band"] == "critical_success"
    assert t.v("hob")["next_round_initiative"]["band"] == "critical_success"
    with pytest.raises(Exception, match="success level"):
        t.rec("CreatureJoinedEncounter", encounter_id="e1", creature="goblin", roll=d20(3))
