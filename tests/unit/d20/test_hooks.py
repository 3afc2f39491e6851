"""The encounter hooks the core engine will call (RULES.md DH-1..DH-5, DH-8, DH-11, DH-12,
B-DH-3, B-DH-11, B-DH-14, ruling 26), tested directly until the engine lands: a state from a
real campaign, a stand-in encounter, the hooks, then facts folded straight into that state.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.rulesets.d20_house import hooks
from tests.unit.d20.helpers import RULESET, Ctx, D20Table, Encounter, apply, d20, pct, refused, view


@pytest.fixture
def t(table: D20Table) -> D20Table:
    table.creature("orc", kind="monster", str=16, bab=[6, 1], max_hp=30, agility=14)
    table.creature("ana", armor=5, max_hp=20, stamina=16, agility=14)
    table.creature("bo", max_hp=10, stamina=10)
    return table


def start(t: D20Table, *who: str, surprise: bool = False) -> tuple[Any, Encounter]:
    state = t.state()
    enc = Encounter(list(who or ("orc", "ana", "bo")), surprise_round=surprise)
    state.encounters[enc.id] = enc
    state.active_encounter = enc.id
    hooks.on_encounter_started(state, enc, Ctx())
    return state, enc


def attack(state: Any, attacker: str, target: str, face: int, **more: Any) -> dict[str, Any]:
    return apply(state, "AttackRolled", attacker=attacker, target=target, roll=d20(face), **more)


def act(state: Any, who: str, action: str, **more: Any) -> dict[str, Any]:
    return apply(state, "ActionTaken", creature=who, action=action, **more)


# ----------------------------------------------------------------- DH-2 flat-footed
def test_dh_2_everyone_is_flat_footed_until_their_first_turn(t: D20Table) -> None:
    state, enc = start(t)
    assert all(view(state, c)["flat_footed"] for c in ("orc", "ana", "bo"))
    assert view(state, "ana")["ac"]["ac"] == 15 and "flat_footed" in view(state, "ana")["conditions"]
    out = attack(state, "orc", "ana", 6)  # 15 against 15 (17 with Agility)
    assert (out["ac"], out["hit"], out["agility_lost"]) == (15, True, ["flat-footed until its first turn"])
    report = hooks.on_turn_started(state, enc, "ana", Ctx())
    assert report["no_longer_flat_footed"] is True
    assert view(state, "ana")["flat_footed"] is False and view(state, "ana")["ac"]["ac"] == 17
    assert view(state, "orc")["flat_footed"] is True  # its own first turn has not come


def test_the_hooks_never_change_the_state_they_were_cloned_from(t: D20Table) -> None:
    before = RULESET.creature_view(t.ledger.state, "ana")
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "ana", Ctx())
    assert RULESET.creature_view(t.ledger.state, "ana") == before


# ----------------------------------------------------------------- B-DH-11 / B-DH-14 AoO
def test_b_dh_11_a_flat_footed_creature_makes_no_attack_of_opportunity(t: D20Table) -> None:
    state, enc = start(t)
    with refused("FLAT_FOOTED"):
        attack(state, "orc", "ana", 15, opportunity=True)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    hooks.on_turn_ended(state, enc, "orc", Ctx())
    assert attack(state, "orc", "ana", 15, opportunity=True)["opportunity"] is True


def test_b_dh_11_flag_off_lets_the_flat_footed_make_them(make_table) -> None:
    t = make_table({"dh.flat_footed_no_aoo": False})
    t.creature("orc", bab=[6])
    t.creature("ana")
    state, _ = start(t, "orc", "ana")
    assert attack(state, "orc", "ana", 15, opportunity=True)["hit"] is True


def test_b_dh_14_one_per_round_counted_from_the_creatures_own_turn_start(t: D20Table) -> None:
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "orc", Ctx())  # round 1: orc's turn
    hooks.on_turn_ended(state, enc, "orc", Ctx())
    attack(state, "orc", "ana", 15, opportunity=True)  # during ana's turn
    hooks.on_turn_started(state, enc, "ana", Ctx())  # another creature's turn: no reset
    with refused("AOO_LIMIT"):
        attack(state, "orc", "bo", 15, opportunity=True)
    enc.round = 2
    hooks.on_round_started(state, enc, Ctx())  # the round's start is not the orc's turn start
    with refused("AOO_LIMIT"):
        attack(state, "orc", "bo", 15, opportunity=True)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    assert view(state, "orc")["aoo_used"] == 0
    attack(state, "orc", "bo", 15, opportunity=True)


def test_b_dh_14_flag_round_start_counts_from_each_rounds_start(make_table) -> None:
    t = make_table({"dh.aoo_reset": "round_start"})
    t.creature("orc", bab=[6])
    t.creature("ana")
    state, enc = start(t, "orc", "ana")
    hooks.on_turn_started(state, enc, "orc", Ctx())
    attack(state, "orc", "ana", 15, opportunity=True)
    hooks.on_turn_started(state, enc, "orc", Ctx())  # its turn start does not reset under this flag
    with refused("AOO_LIMIT"):
        attack(state, "orc", "ana", 15, opportunity=True)
    hooks.on_round_started(state, enc, Ctx())
    attack(state, "orc", "ana", 15, opportunity=True)


# ----------------------------------------------------------------- DH-4 / B-DH-11 actions
def test_b_dh_11_the_surprise_round_allows_one_standard_or_one_move_action(t: D20Table) -> None:
    state, enc = start(t, surprise=True)
    enc.round = 0
    assert hooks.action_sets(state, enc, "orc") == ({"standard": 1}, {"move": 1})
    hooks.on_turn_started(state, enc, "orc", Ctx())
    act(state, "orc", "free", name="shout")
    attack(state, "orc", "ana", 15)  # its standard action
    with refused("SURPRISE_ROUND_ONE_ACTION"):
        act(state, "orc", "move")
    hooks.on_turn_started(state, enc, "ana", Ctx())
    with refused("SURPRISE_ROUND_ONE_ACTION"):
        act(state, "ana", "full_round")


def test_dh_4_a_round_is_a_standard_and_a_move_or_two_moves_or_a_full_round_action(t: D20Table) -> None:
    state, enc = start(t)
    assert hooks.action_sets(state, enc, "orc") == (
        {"standard": 1, "move": 1},
        {"move": 2},
        {"full_round": 1},
    )
    hooks.on_turn_started(state, enc, "orc", Ctx())
    act(state, "orc", "standard")
    with refused("NO_ACTION_LEFT"):
        act(state, "orc", "standard")
    with refused("NO_ACTION_LEFT"):
        act(state, "orc", "full_round")
    act(state, "orc", "move")
    with refused("NO_ACTION_LEFT"):
        act(state, "orc", "move")
    hooks.on_turn_ended(state, enc, "orc", Ctx())
    hooks.on_turn_started(state, enc, "ana", Ctx())
    act(state, "ana", "move")
    act(state, "ana", "move")  # a move action in place of the standard one


def test_dh_4_the_5_foot_step_and_other_movement_exclude_each_other(t: D20Table) -> None:
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    act(state, "orc", "move", moves=False, name="draw a weapon")
    act(state, "orc", "five_foot_step")
    with refused("FIVE_FOOT_STEP"):
        act(state, "orc", "move")
    hooks.on_turn_started(state, enc, "ana", Ctx())
    act(state, "ana", "move", name="walk")
    with refused("FIVE_FOOT_STEP"):
        act(state, "ana", "five_foot_step")


def test_dh_8_a_full_attack_is_a_full_round_action_with_each_iterative_once_and_a_5_foot_step(
    t: D20Table,
) -> None:
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    attack(state, "orc", "ana", 15, full_attack=True)
    attack(state, "orc", "ana", 15, iterative=1)
    with refused("ALREADY_ACTED"):
        attack(state, "orc", "ana", 15, iterative=1)
    with refused("NO_ACTION_LEFT"):
        act(state, "orc", "move")
    act(state, "orc", "five_foot_step")
    assert view(state, "orc")["turn"]["used"] == {"full_round": 1}


def test_dh_8_the_off_hand_attacks_once_per_full_attack(t: D20Table) -> None:
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    attack(state, "orc", "ana", 15, two_weapon="primary")
    attack(state, "orc", "ana", 15, two_weapon="off")
    with refused("ALREADY_ACTED"):
        attack(state, "orc", "ana", 15, two_weapon="off")


def test_dh_11_a_disabled_creature_takes_one_standard_or_move_action_a_round(t: D20Table) -> None:
    t.damage("ana", 21)  # -1: disabled (B 3)
    state, enc = start(t)
    assert hooks.action_sets(state, enc, "ana") == ({"standard": 1}, {"move": 1})
    hooks.on_turn_started(state, enc, "ana", Ctx())
    act(state, "ana", "move", name="crawl")
    with refused("DISABLED_ONE_ACTION"):
        act(state, "ana", "standard")
    with refused("DISABLED_ONE_ACTION"):
        attack(state, "ana", "orc", 15, iterative=0, full_attack=True)


def test_dh_12_a_dying_creatures_round_allows_nothing(t: D20Table) -> None:
    t.damage("ana", 25)  # -5: dying
    state, enc = start(t)
    assert hooks.action_sets(state, enc, "ana") == ()


def test_dh_4_running_loses_agility_to_ac_until_the_next_turn_unless_the_run_feat(t: D20Table) -> None:
    t.creature("scout", agility=14, feats=["run"])
    state, enc = start(t, "orc", "ana", "scout")
    for who in ("ana", "scout"):
        hooks.on_turn_started(state, enc, who, Ctx())
        act(state, who, "full_round", run=True)
        hooks.on_turn_ended(state, enc, who, Ctx())
    assert view(state, "ana")["ac"]["ac"] == 15 and "running" in view(state, "ana")["conditions"]
    assert view(state, "scout")["ac"]["ac"] == 12
    hooks.on_turn_started(state, enc, "ana", Ctx())
    assert view(state, "ana")["ac"]["ac"] == 17


# ----------------------------------------------------------------- ruling 26 stabilisation
def test_ruling_26_one_stabilisation_roll_after_the_round_for_each_creature_dying_then(t: D20Table) -> None:
    t.creature("cy", max_hp=10, stamina=10)
    t.creature("dee", max_hp=10, stamina=10)
    t.damage("ana", 25)  # -5: dying
    t.damage("bo", 10)  # 0: disabled
    t.damage("cy", 13)  # -3: dying ...
    t.stabilize("cy", 5)  # ... and stable
    state, enc = start(t, "orc", "ana", "bo", "cy")
    enc.round = 3
    apply(state, "DamageTaken", target="bo", amount=2)  # bo begins dying this round
    owed = hooks.owed_between_rounds(state, enc)
    assert owed == [
        ("StabilizationRolled", {"creature": "ana", "encounter_id": "e1", "round": 3}),
        ("StabilizationRolled", {"creature": "bo", "encounter_id": "e1", "round": 3}),
    ]  # not the stable cy, not dee (dying or not, she is not in the encounter)
    apply(state, "StabilizationRolled", roll=pct(20), **owed[0][1])  # 20 > 16: -6
    assert view(state, "ana")["hp"] == -6
    with refused("STABILIZATION_ROLLED"):
        apply(state, "StabilizationRolled", roll=pct(1), **owed[0][1])
    apply(state, "StabilizationRolled", roll=pct(10), **owed[1][1])  # 10 <= 10: stable
    assert view(state, "bo")["life"] == "stabilized"
    enc.round = 4
    assert hooks.owed_between_rounds(state, enc) == [
        ("StabilizationRolled", {"creature": "ana", "encounter_id": "e1", "round": 4})
    ]
    assert RULESET.encounter_view(state, "e1")["stabilization_owed"] == ["ana"]


def test_no_rest_in_combat(t: D20Table) -> None:
    """DH-14: 'not in combat'."""
    state, enc = start(t)
    with refused("ENCOUNTER_RUNNING"):
        apply(state, "AbilityRecoveredByRest", creatures=["ana"], kind="sleep", hours=4, clean=True)


def test_the_encounters_end_clears_flat_footed_and_turns(t: D20Table) -> None:
    state, enc = start(t)
    hooks.on_turn_started(state, enc, "orc", Ctx())
    hooks.on_encounter_ended(state, enc, Ctx())
    assert not any(view(state, c)["flat_footed"] or view(state, c)["turn"] for c in ("orc", "ana", "bo"))


def test_the_ruleset_exposes_its_hooks(t: D20Table) -> None:
    assert set(RULESET.hooks) == {
        "initiative_bonus",
        "on_encounter_started",
        "on_round_started",
        "on_turn_started",
        "on_turn_ended",
        "owed_between_rounds",
        "on_encounter_ended",
        "action_sets",
    }
    assert RULESET.hooks["initiative_bonus"](t.state(), "orc") == 2
