"""Stellar Winds: the named flags of adopted ruling 1 for the PROPOSAL / 4E-DEFAULT rules that had
none (issue 14). One test per flag value: the default (the adopted reading) and each alternative
RULES.md names; each fails without its flag."""

from __future__ import annotations

from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from domain.errors import DomainError
from tests.unit.conftest import AXE, Table
from tests.unit.test_sw_encounters import ENC, act, creature, effect, enc, end_turn, refused, start
from tests.unit.test_sw_ledger import put_effect

CDG = {**AXE, "damage": "2d6+8"}


# ------------------------------------------------------------------ B-SW-12: the outright kill
def coup_de_grace(t: Table) -> dict[str, Any]:
    """The orc's coup de grace on unconscious vex (40 HP: bloodied value 20; 40 wounds so layering
    alone cannot kill): 14 + 8 + 2 (helpless) = 24 reaches AC 24 (29 - 5), a crit; 2d6+8 = 20."""
    t.pc("vex", max_wounds=40)
    t.monster("orc")
    put_effect(t, "vex", {"condition": "unconscious"})
    out = t.attack(
        "orc", dict(CDG), [{"target": "vex", "face": 14, "damage_faces": [6, 6]}], coup_de_grace=True
    )
    hit: dict[str, Any] = out.outcome["targets"][0]
    assert (hit["crit"], hit["damage"]["amount"]) == (True, 20)
    return hit


def test_b_sw_12_by_default_a_coup_de_grace_at_the_bloodied_value_slays_outright(make_table: Any) -> None:
    t = make_table()
    hit = coup_de_grace(t)
    assert hit["damage"].get("slain_outright") is True
    assert (t.c("vex")["wounds"], t.c("vex")["life"]) == (20, "dead")


def test_b_sw_12_flag_none_keeps_the_clause_cut_the_coup_de_grace_is_only_a_crit(make_table: Any) -> None:
    t = make_table({"sw.coup_de_grace_kill": "none"})
    hit = coup_de_grace(t)
    assert "slain_outright" not in hit["damage"]
    # 20 wounding damage: 40 wounds -> 20, alive
    assert (t.c("vex")["hp"], t.c("vex")["wounds"], t.c("vex")["life"]) == (40, 20, "active")


# ------------------------------------------------------------------ B-SW-17 / SW-34: temp HP grants
def test_b_sw_17_by_default_a_new_temp_hp_grant_keeps_the_higher_pool(make_table: Any) -> None:
    t = make_table()
    t.pc("vex")
    t.grant_temporary_hp("vex", 5)
    out = t.grant_temporary_hp("vex", 3)
    assert (out.outcome["temp_hp_after"], t.c("vex")["temp_hp"]) == (5, 5)
    t.grant_temporary_hp("vex", 7)
    assert t.c("vex")["temp_hp"] == 7


def test_b_sw_17_flag_add_adds_the_grants(make_table: Any) -> None:
    t = make_table({"sw.temp_hp_grant": "add"})
    t.pc("vex")
    t.grant_temporary_hp("vex", 5)
    out = t.grant_temporary_hp("vex", 3)
    assert (out.outcome["temp_hp_after"], t.c("vex")["temp_hp"]) == (8, 8)


# ------------------------------------------------------------------ B-SW-22: regeneration at 0 HP
def troll_at_0_hp(t: Table) -> dict[str, Any]:
    """A troll (regeneration 3, 40 HP, 12 wounds) at 0 HP with 11 wounds; its next turn's start."""
    for cid in ("a", "troll"):
        creature(t, cid, regeneration=3 if cid == "troll" else 0)
    start(t, {"a": 20, "troll": 15})
    StellarWindsCommands(t.app).deal_damage(t.cid, "troll", amount=41)
    assert (t.c("troll")["hp"], t.c("troll")["wounds"], t.c("troll")["life"]) == (0, 11, "active")
    turn: dict[str, Any] = end_turn(t)["turns"][-1]
    assert turn["creature"] == "troll"
    return turn


def test_b_sw_22_by_default_no_regeneration_at_0_hp_even_with_wounds_left(make_table: Any) -> None:
    t = make_table()
    assert "regeneration" not in troll_at_0_hp(t)
    assert t.c("troll")["hp"] == 0


def test_b_sw_22_flag_regeneration_at_0_hp_regenerates_while_wounds_are_above_0(make_table: Any) -> None:
    t = make_table({"sw.regeneration_at_0_hp": True})
    assert troll_at_0_hp(t)["regeneration"] == {"amount": 3, "hp_healed": 3}
    assert (t.c("troll")["hp"], t.c("troll")["wounds"]) == (3, 11)  # HP only, never wounds


def test_b_sw_22_flag_regeneration_at_0_hp_still_needs_wounds_above_0(make_table: Any) -> None:
    t = make_table({"sw.regeneration_at_0_hp": True, "sw.monster_death_at_wounds": -10})
    for cid in ("a", "troll"):
        creature(t, cid, regeneration=3 if cid == "troll" else 0)
    start(t, {"a": 20, "troll": 15})
    effect(t, "troll", "troll", {"condition": "slowed"}, kind="until_removed")
    StellarWindsCommands(t.app).deal_damage(t.cid, "troll", amount=40 + 12)  # 0 HP, 0 wounds
    assert (t.c("troll")["hp"], t.c("troll")["wounds"]) == (0, 0)
    assert "regeneration" not in end_turn(t)["turns"][-1]


# ------------------------------------------------------------------ SW-36: a surge the target lacks
def test_sw_36_by_default_healing_that_needs_a_missing_surge_restores_nothing_but_is_recorded(
    make_table: Any,
) -> None:
    t = make_table()
    t.pc("vex", surges=0)
    t.deal_damage("vex", amount=30)
    before = t.position
    out = t.heal("vex", surge_multiplier=1, flat=5, requires_surge=True)
    assert t.position == before + 1 and out.outcome["hp_healed"] == 0


def test_sw_36_flag_refuse_refuses_healing_that_needs_a_missing_surge_and_stores_nothing(
    make_table: Any,
) -> None:
    t = make_table({"sw.heal_without_surge": "refuse"})
    t.pc("vex", surges=0)
    t.deal_damage("vex", amount=30)
    before = t.position
    with pytest.raises(DomainError) as refused:
        t.heal("vex", surge_multiplier=1, flat=5, requires_surge=True)
    assert refused.value.code == "NO_HEALING_SURGE"
    assert t.position == before and t.c("vex")["hp"] == 10
    # healing that needs no surge is still allowed
    t.heal("vex", flat=5)
    assert t.c("vex")["hp"] == 15


# ------------------------------------------------------------------ B-SW-31: the immediate window
def three(make_table: Any, flags: dict[str, Any] | None = None) -> Table:
    """Monsters a, c, b acting in that order (a 20, c 15, b 10)."""
    t: Table = make_table(flags)
    for cid in ("a", "b", "c"):
        creature(t, cid)
    start(t, {"a": 20, "c": 15, "b": 10})
    return t


def test_b_sw_31_by_default_the_immediate_window_reopens_at_the_creatures_own_turn(make_table: Any) -> None:
    t = three(make_table)
    act(t, "c", "immediate")  # a's turn, round 1
    end_turn(t)  # c's turn starts: its window reopens
    end_turn(t)  # b's turn, still round 1
    act(t, "c", "immediate")
    end_turn(t)  # round 2, a's turn: c's window has not reopened (its turn has not come)
    refused(t, "IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="c", action="immediate", name="x")


def test_b_sw_31_flag_round_reopens_the_window_at_each_round_not_at_the_own_turn(make_table: Any) -> None:
    t = three(make_table, {"sw.immediate_window": "round"})
    act(t, "c", "immediate")  # a's turn, round 1
    end_turn(t)  # c's turn: same round, the window stays shut
    end_turn(t)  # b's turn
    refused(t, "IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="c", action="immediate", name="x")
    end_turn(t)  # round 2 begins: every window reopens
    act(t, "c", "immediate")


# ------------------------------------------------------------------ B-SW-19: surprised creatures' turn
def test_b_sw_19_by_default_a_surprised_creature_gets_no_turn_in_the_surprise_round(make_table: Any) -> None:
    t: Table = make_table()
    for cid in ("a", "b"):
        creature(t, cid)
    out = start(t, {"b": 20, "a": 10}, surprised=["b"])
    assert (out["round"], out["turn_of"]) == (0, "a")
    assert end_turn(t)["turn_of"] == "b" and enc(t)["round"] == 1


def test_b_sw_19_flag_free_actions_gives_a_surprised_creature_a_turn_of_free_actions(make_table: Any) -> None:
    t: Table = make_table({"sw.surprised_turn": "free_actions"})
    for cid in ("a", "b"):
        creature(t, cid)
    out = start(t, {"b": 20, "a": 10}, surprised=["b"])
    assert (out["round"], out["turn_of"]) == (0, "b")  # its turn, in the surprise round
    act(t, "b", "free")
    refused(
        t, "FREE_ACTIONS_ONLY", "ActionTaken", encounter_id=ENC, creature="b", action="standard", name="x"
    )
    assert end_turn(t)["turn_of"] == "a" and enc(t)["round"] == 0
    out = end_turn(t)  # the surprise round is over
    assert (out["round_now"], out["turn_of"]) == (1, "b")
    assert "surprised" not in t.c("b")["conditions"]
    act(t, "b", "standard")
