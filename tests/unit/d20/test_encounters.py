"""The d20 house rules on the core encounter engine (RULES.md DH-1..DH-5, DH-8, DH-11, DH-12,
B-DH-3, B-DH-10, B-DH-11, B-DH-14, rulings 20 and 26): facts recorded through the application,
turns started and ended as facts (ruling 18).

Orc: Str 16 (+3), Agility 14 (+2), BAB +6/+1. Ana: armor 5, Agility 14 (+2): AC 17, 15
flat-footed; Stamina 16 (S 16, B 3). Bo: Stamina 10 (B 0: disabled at 0, dying -1..-10).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.d20.helpers import D20Table, d20, pct, refused

ORDER = {"orc": 18, "ana": 10, "bo": 5}  # 20, 12, 5: orc, ana, bo


@pytest.fixture
def t(table: D20Table) -> D20Table:
    table.creature("orc", kind="monster", str=16, bab=[6, 1], max_hp=30, agility=14)
    table.creature("ana", armor=5, max_hp=20, stamina=16, agility=14)
    table.creature("bo", max_hp=10, stamina=10)
    return table


def attack(t: D20Table, attacker: str, target: str, face: int, **more: Any) -> dict[str, Any]:
    return dict(t.attack(attacker, target, face, **more).outcome)


def first_turn(out: dict[str, Any]) -> dict[str, Any]:
    return next(x for x in out["turns"] if "skipped" not in x)


# ----------------------------------------------------------------- DH-3 / B-DH-10 initiative
def test_dh_3_initiative_is_d20_plus_agility_and_initiative_modifiers(t: D20Table) -> None:
    t.creature("cy", agility=12, initiative_misc=4)  # +1 +4
    t.ability_damage("cy", "agility", 2)  # Agility 10: +0, so +4
    t.record("EncounterStarted", encounter_id="e1", participants=["orc", "cy"])
    out = t.record("InitiativeRolled", encounter_id="e1", creature="cy", roll=d20(9)).outcome
    assert (out["score"], out["bonus"], out["rank"]) == (13, 4, [13, 4])


def test_b_dh_10_a_tie_goes_to_the_higher_modifier_and_equal_modifiers_roll_off(t: D20Table) -> None:
    t.creature("cy", agility=14)  # +2, like the orc
    t.encounter("orc", "ana", "bo", "cy", inits={"orc": 10, "ana": 10, "bo": 12, "cy": 10})
    # orc 12 (+2), ana 12 (+2), cy 12 (+2), bo 12 (+0): bo goes last; orc, ana and cy roll off
    assert t.enc()["state"] == "setup" and t.enc()["unresolved_ties"] == [["ana", "cy", "orc"]]
    t.record(
        "InitiativeTieBroken",
        encounter_id="e1",
        creatures=["cy", "orc", "ana"],
        method="die",
        rolls=[d20(15), d20(9), d20(3)],
    )
    assert t.enc()["order"] == ["cy", "orc", "ana", "bo"] and t.enc()["state"] == "running"


# ----------------------------------------------------------------- DH-2 flat-footed
def test_dh_2_everyone_is_flat_footed_until_their_first_turn(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    assert t.enc()["flat_footed"] == ["orc", "ana", "bo"]
    assert t.v("ana")["ac"]["ac"] == 15 and "flat_footed" in t.v("ana")["conditions"]
    t.start_turn("orc")
    # 6 + 6 + 3 = 15 against 15 (17 with her Agility): a hit
    out = attack(t, "orc", "ana", 6)
    assert (out["ac"], out["hit"], out["agility_lost"]) == (15, True, ["flat-footed until its first turn"])
    t.end_turn()
    started = t.start_turn("ana").outcome
    assert first_turn(started)["no_longer_flat_footed"] is True
    assert t.v("ana")["flat_footed"] is False and t.v("ana")["ac"]["ac"] == 17
    assert t.enc()["flat_footed"] == ["bo"]


# ----------------------------------------------------------------- B-DH-11 / B-DH-14 AoO
def test_b_dh_11_a_flat_footed_creature_makes_no_attack_of_opportunity(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    with refused("FLAT_FOOTED"):
        attack(t, "ana", "orc", 15, opportunity=True)
    t.end_turn()
    t.turn("ana")
    t.start_turn("bo")
    assert attack(t, "ana", "orc", 15, opportunity=True)["opportunity"] is True


def test_b_dh_11_flag_off_lets_the_flat_footed_make_them(make_table: Any) -> None:
    t = make_table({"dh.flat_footed_no_aoo": False})
    t.creature("orc", bab=[6])
    t.creature("ana")
    t.encounter("orc", "ana", inits={"orc": 15, "ana": 5})
    t.start_turn("orc")
    assert attack(t, "ana", "orc", 15, opportunity=True)["opportunity"] is True


def test_b_dh_14_one_per_round_counted_from_the_creatures_own_turn_start(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits={"ana": 15, "bo": 12, "orc": 1})  # ana, bo, orc
    t.turn("ana")
    t.turn("bo")
    t.turn("orc")  # its first turn: no longer flat-footed
    t.start_turn("ana")  # round 2 begins: not the orc's turn start
    assert t.enc()["round"] == 2
    attack(t, "orc", "ana", 15, opportunity=True)
    t.end_turn()
    t.start_turn("bo")
    with refused("AOO_LIMIT"):
        attack(t, "orc", "bo", 15, opportunity=True)
    assert t.v("orc")["aoo_used"] == 1
    t.end_turn()
    t.start_turn("orc")
    assert t.v("orc")["aoo_used"] == 0


def test_b_dh_14_flag_round_start_counts_from_each_rounds_start(make_table: Any) -> None:
    t = make_table({"dh.aoo_reset": "round_start"})
    t.creature("orc", bab=[6])
    t.creature("ana")
    t.encounter("orc", "ana", inits={"ana": 15, "orc": 5})
    t.turn("ana")
    t.start_turn("orc")
    attack(t, "orc", "ana", 15, opportunity=True)
    t.end_turn()
    t.start_turn("ana")  # round 2: the count starts again
    attack(t, "orc", "ana", 15, opportunity=True)
    t.end_turn()
    t.start_turn("orc")  # its own turn start does not reset it under this flag
    with refused("AOO_LIMIT"):
        attack(t, "orc", "ana", 15, opportunity=True)


# ----------------------------------------------------------------- DH-4 / B-DH-11 actions
def test_b_dh_11_the_surprise_round_allows_one_standard_or_one_move_action(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER, surprised=("bo",))
    assert t.enc()["round"] == 0
    assert first_turn(t.start_turn("orc").outcome)["surprise_round"] is True
    t.act("orc", "free", name="shout")
    attack(t, "orc", "ana", 15)  # its standard action
    with refused("SURPRISE_ROUND_ONE_ACTION"):
        t.act("orc", "move")
    t.end_turn()
    t.start_turn("ana")
    with refused("SURPRISE_ROUND_ONE_ACTION"):
        t.act("ana", "full_round")
    t.end_turn()
    started = t.start_turn().outcome  # bo is surprised: no turn in round 0; round 1 begins
    skipped = "surprised: no turn in the surprise round (DH-1)"
    assert started["turns"][0] == {"creature": "bo", "skipped": skipped}
    assert (started["turn_of"], started["round_now"]) == ("orc", 1)


def test_dh_4_a_round_is_a_standard_and_a_move_or_two_moves_or_a_full_round_action(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    t.act("orc", "standard")
    with refused("NO_ACTION_LEFT"):
        t.act("orc", "standard")
    with refused("NO_ACTION_LEFT"):
        t.act("orc", "full_round")
    t.act("orc", "move")
    with refused("NO_ACTION_LEFT"):
        t.act("orc", "move")
    with refused("NOT_YOUR_TURN"):
        t.act("ana", "move")
    t.end_turn()
    t.start_turn("ana")
    t.act("ana", "move")
    t.act("ana", "move")  # a move action in place of the standard one
    assert t.enc()["actions_this_turn"] == ["move", "move"]


def test_dh_4_the_5_foot_step_and_other_movement_exclude_each_other(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    t.act("orc", "move", moves=False, name="draw a weapon")
    t.act("orc", "five_foot_step")
    with refused("FIVE_FOOT_STEP"):
        t.act("orc", "move")
    t.end_turn()
    t.start_turn("ana")
    t.act("ana", "move", name="walk")
    with refused("FIVE_FOOT_STEP"):
        t.act("ana", "five_foot_step")


def test_dh_8_a_full_attack_is_a_full_round_action_with_each_iterative_once_and_a_5_foot_step(
    t: D20Table,
) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    assert attack(t, "orc", "ana", 15, full_attack=True)["action"] == "full_round"
    assert "action" not in attack(t, "orc", "ana", 15, iterative=1)  # part of the same full attack
    with refused("ALREADY_ACTED"):
        attack(t, "orc", "ana", 15, iterative=1)
    with refused("NO_ACTION_LEFT"):
        t.act("orc", "move")
    t.act("orc", "five_foot_step")
    assert t.enc()["actions_this_turn"] == ["full_round"]


def test_dh_8_the_off_hand_attacks_once_per_full_attack(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    attack(t, "orc", "ana", 15, two_weapon="primary")
    attack(t, "orc", "ana", 15, two_weapon="off")
    with refused("ALREADY_ACTED"):
        attack(t, "orc", "ana", 15, two_weapon="off")


def test_dh_11_a_disabled_creature_takes_one_standard_or_move_action_a_round(t: D20Table) -> None:
    t.damage("ana", 21)  # -1: disabled (B 3)
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.turn("orc")
    t.start_turn("ana")
    t.act("ana", "move", name="crawl")
    with refused("DISABLED_ONE_ACTION"):
        t.act("ana", "standard")
    with refused("DISABLED_ONE_ACTION"):
        attack(t, "ana", "orc", 15, full_attack=True)


def test_dh_12_a_dying_creature_can_take_no_action_on_its_turn(t: D20Table) -> None:
    t.damage("ana", 25)  # -5: dying
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.turn("orc")
    t.start_turn("ana")
    assert t.v("ana")["actions_allowed"] == "none"
    with refused("NOT_CONSCIOUS"):
        t.act("ana", "free", name="groan")


def test_dh_4_running_loses_agility_to_ac_until_the_next_turn_unless_the_run_feat(t: D20Table) -> None:
    t.creature("scout", agility=14, feats=["run"])
    t.encounter("ana", "scout", "orc", inits={"ana": 19, "scout": 15, "orc": 1})
    for who in ("ana", "scout"):
        t.start_turn(who)
        t.act(who, "full_round", run=True)
        t.end_turn()
    assert t.v("ana")["ac"]["ac"] == 15 and "running" in t.v("ana")["conditions"]
    assert t.v("scout")["ac"]["ac"] == 12
    t.turn("orc")
    t.start_turn("ana")
    assert t.v("ana")["ac"]["ac"] == 17


# ----------------------------------------------------------------- ruling 26 stabilisation
def test_ruling_26_one_stabilisation_roll_after_the_round_for_each_creature_dying_then(t: D20Table) -> None:
    t.creature("cy", max_hp=10, stamina=10)
    t.creature("dee", max_hp=10, stamina=10)
    t.damage("ana", 25)  # -5: dying
    t.damage("bo", 10)  # 0: disabled
    t.damage("cy", 13)  # -3: dying ...
    t.stabilize("cy", 5)  # ... and stable (no encounter yet: no round to name)
    t.damage("dee", 13)  # dying, but not in the encounter
    t.encounter("orc", "ana", "bo", "cy", inits={"orc": 18, "ana": 10, "bo": 5, "cy": 1})
    t.turn("orc")
    t.turn("ana")  # dying: its turn passes with no action
    t.start_turn("bo")
    hurt = t.damage("bo", 2)  # bo begins dying this round (-2)
    t.end_turn()
    t.start_turn("cy")
    with refused("STABILIZATION_NOT_DUE"):  # not before the round's last turn has ended
        t.stabilize("ana", 50)
    ended = t.end_turn().outcome
    assert ended["stabilization_owed"] == ["ana", "bo"]  # not the stable cy, not dee
    owed = t.app.pending_rolls(t.cid)
    assert [(x["type"], x["creature"], x["dice"], x["payload"]) for x in owed] == [
        ("StabilizationRolled", "ana", "d%", {"creature": "ana", "encounter_id": "e1", "round": 1}),
        ("StabilizationRolled", "bo", "d%", {"creature": "bo", "encounter_id": "e1", "round": 1}),
    ]
    with refused("ROLLS_PENDING"):
        t.start_turn()
    assert t.stabilize("ana", 20, encounter_id="e1", round=1).outcome["hp_after"] == -6  # 20 > 16
    with refused("STABILIZATION_ROLLED"):
        t.stabilize("ana", 1)
    roll_bo = t.stabilize("bo", 10).position  # 10 <= 10: stable
    assert t.v("bo")["life"] == "stabilized" and t.enc()["stabilization_owed"] == []
    t.start_turn("orc")
    assert t.enc()["round"] == 2
    # The damage that made bo dying is revoked: its stabilisation roll is orphaned.
    t.app.revoke(t.cid, hurt.position, "bo was never hit")
    assert "not dying" in t.orphans()[str(roll_bo)]
    assert t.v("bo")["life"] == "disabled"


def test_ruling_20_a_dead_creatures_turn_is_skipped(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    t.record("DeathDeclared", creature="ana", cause="a falling portcullis")
    t.end_turn()
    started = t.start_turn().outcome
    assert started["turns"][0] == {"creature": "ana", "skipped": "dead (ruling 20)"}
    assert started["turn_of"] == "bo"


def test_b_dh_1_a_turn_cannot_end_before_a_massive_damage_save_owed(t: D20Table) -> None:
    t.creature("ogre", kind="monster", str=20, bab=[9], max_hp=60)
    t.record("SheetUpdated", creature_id="ana", changes={"max_hp": 80})
    t.encounter("ogre", "ana", inits={"ogre": 15, "ana": 2})
    t.start_turn("ogre")
    a = t.attack("ogre", "ana", 18, weapon={"name": "club", "kind": "melee"}).position  # 18 + 14 = 32
    t.damage_roll(a, "1d6", [6], extra_flat=45)
    # 6 + 5 + 45 = 56 >= 50 and ana (80 HP) lives: a DC 15 Fortitude save is owed now
    with refused("ROLLS_PENDING"):
        t.end_turn()
    t.record("MassiveDamageSaveRolled", creature="ana", attack=a, roll=d20(14))
    t.end_turn()


def test_no_rest_in_combat(t: D20Table) -> None:
    """DH-14: 'not in combat' (an encounter being set up is combat already)."""
    t.record("EncounterStarted", encounter_id="e1", participants=["orc", "ana"])
    with refused("ENCOUNTER_RUNNING"):
        t.record("AbilityRecoveredByRest", creatures=["ana"], kind="sleep", hours=4, clean=True)


def test_the_encounters_end_clears_flat_footed(t: D20Table) -> None:
    t.encounter("orc", "ana", "bo", inits=ORDER)
    t.start_turn("orc")
    t.record("EncounterEnded", encounter_id="e1")
    assert not any(t.v(c)["flat_footed"] for c in ("orc", "ana", "bo"))


def test_the_ruleset_gives_the_engine_its_hooks(t: D20Table) -> None:
    from domain.rulesets.d20_house import hooks

    assert t.app.view(t.cid).ruleset.encounter_rules is hooks.RULES
    assert hooks.RULES.owed_rolls["StabilizationRolled"] == ("stabilisation roll", "d%")
    assert pct(100)["terms"][0]["faces"] == [100]
