"""Turn boundaries, tested on the hooks the core encounter engine calls (RULES.md OR-6, OR-7,
OR-17, OR-18, OR-19, B-OR-3, B-OR-8, B-OR-11, B-OR-13, B-OR-17, rulings 20, 21, 23, 24): a state
from a real campaign, an engine encounter put into it, facts folded straight in. Whole encounters
played through the engine's facts are in test_table_sequences.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.core import encounters as engine
from tests.unit.orcus.helpers import Direct, OrcusTable, d6, d20, effect_ids, refused

DAZED = [{"condition": "dazed"}]


def fight(t: OrcusTable, *who: str, surprise: bool = False) -> Direct:
    return Direct(t, list(who or ("mira", "ogre", "gob")), surprise_round=surprise)


def effect(d: Direct, target: str, source: str, **spec: Any) -> str:
    return str(d.fact("EffectApplied", target=target, source=source, effect=spec)["effect_id"])


# ------------------------------------------------------------ OR-6 / ruling 20: persistent damage
def test_or_6_ruling_20_persistent_damage_at_the_start_of_the_turn_highest_per_type(t: OrcusTable) -> None:
    """Fire 5 and fire 3 (two effects) and cold 2: mira takes 5 fire + 2 cold = 7 (30 -> 23)."""
    d = fight(t)
    for amount, kind in ((5, "fire"), (3, "fire"), (2, "cold")):
        effect(
            d,
            "mira",
            "ogre",
            components=[{"persistent": {"type": kind, "amount": amount}}],
            duration={"kind": "save_ends"},
        )
    report = d.start("mira")
    assert [(x["type"], x["amount"]) for x in report["persistent_damage"]] == [("cold", 2), ("fire", 5)]
    assert d.v("mira")["hp"] == 23
    owed = d.owed()
    assert [x[0] for x in owed] == ["SavingThrowRolled"] * 3  # one save per effect (ruling 20)


def test_or_placeholder_persistent_damage_sum(make_table) -> None:
    t = make_table({"or.placeholder.persistent_damage": "sum"}).cast()
    d = fight(t)
    for amount in (5, 3):
        effect(
            d,
            "mira",
            "ogre",
            components=[{"persistent": {"type": "fire", "amount": amount}}],
            duration={"kind": "save_ends"},
        )
    d.start("mira")
    assert d.v("mira")["hp"] == 22


def test_or_6_persistent_damage_can_kill_a_monster_at_the_start_of_its_turn(t: OrcusTable) -> None:
    d = fight(t)
    effect(
        d,
        "gob",
        "mira",
        components=[{"persistent": {"type": "acid", "amount": 10}}],
        duration={"kind": "save_ends"},
    )
    assert d.start("gob")["persistent_damage"][0]["life_after"] == "dead"
    assert d.owed() == []  # the dead owe nothing


# ------------------------------------------------------------ OR-19 / B-OR-13 / ruling 23
def test_b_or_13_an_aftereffect_begins_after_the_turns_saves_and_is_not_saved_that_turn(
    t: OrcusTable,
) -> None:
    d = fight(t)
    blind = effect(
        d,
        "mira",
        "ogre",
        name="blinded",
        components=[{"condition": "blinded"}],
        duration={"kind": "save_ends"},
        aftereffect={"name": "dazed", "components": DAZED, "duration": {"kind": "save_ends"}},
    )
    d.start("mira")
    out = d.fact("SavingThrowRolled", creature="mira", effect_id=blind, roll=d20(13))
    after = out["aftereffect"]["effect_id"]
    assert out["aftereffect"]["pending"] is True and d.v("mira")["conditions"] == []  # not yet in force
    with refused("NOT_ACTIVE"):
        d.fact("SavingThrowRolled", creature="mira", effect_id=after, roll=d20(15))
    assert d.owed() == []  # no save owed against it this turn
    report = d.end()
    assert [x["effect_id"] for x in report["aftereffects_began"]] == [after]
    assert d.v("mira")["conditions"] == ["dazed"]
    d.start("ogre")
    d.end()
    d.start("mira", new_round=True)
    assert d.owed() == [("SavingThrowRolled", {"creature": "mira", "effect_id": after})]


def test_ruling_23_a_timed_effect_that_expires_starts_its_aftereffect(t: OrcusTable) -> None:
    """OR-19's second example: dazed until the end of the user's next turn; Aftereffect: damage
    equal to the user's Charisma modifier (3)."""
    d = fight(t)
    d.start("mira")
    eid = effect(
        d,
        "gob",
        "mira",
        name="dazzle",
        components=DAZED,
        duration={"kind": "end_of_user_next"},
        aftereffect={"name": "sting", "damage": {"amount": 3, "types": []}},
    )
    assert d.end() == {}  # applied during mira's turn: lasts through her next turn
    d.start("gob")
    d.end()
    d.start("mira", new_round=True)
    report = d.end()
    ended = report["effects_ended"][0]
    assert (ended["effect_id"], ended["aftereffect"]["damage"]["amount"]) == (eid, 3)
    assert (d.v("gob")["hp"], d.v("gob")["effects"]) == (7, [])


# ------------------------------------------------------------ OR-17 durations
def test_or_17_start_of_the_targets_next_turn(t: OrcusTable) -> None:
    d = fight(t)
    d.start("mira")
    eid = effect(d, "gob", "mira", components=DAZED, duration={"kind": "start_of_target_next"})
    d.end()
    report = d.start("gob")
    assert [x["effect_id"] for x in report["effects_ended"]] == [eid]


def test_or_17_end_of_the_targets_next_turn(t: OrcusTable) -> None:
    d = fight(t)
    d.start("gob")
    eid = effect(d, "gob", "mira", components=DAZED, duration={"kind": "end_of_target_next"})
    assert d.end() == {}  # its current turn is not its next one
    d.start("gob", new_round=True)
    assert [x["effect_id"] for x in d.end()["effects_ended"]] == [eid]


def test_or_17_start_of_the_users_next_turn_applied_out_of_turn(t: OrcusTable) -> None:
    d = fight(t)
    d.start("gob")
    eid = effect(d, "gob", "mira", components=DAZED, duration={"kind": "start_of_user_next"})
    d.end()
    assert [x["effect_id"] for x in d.start("mira")["effects_ended"]] == [eid]


# ------------------------------------------------------------ OR-18 / B-OR-8 / ruling 24: maintain
def tentacles(d: Direct) -> str:
    return effect(
        d,
        "gob",
        "mira",
        name="tentacles",
        components=[{"condition": "restrained"}],
        duration={"kind": "maintain", "action": "swift"},
    )


def test_b_or_8_a_maintained_effect_ends_at_the_end_of_its_creation_turn_without_a_maintain(
    t: OrcusTable,
) -> None:
    d = fight(t)
    d.start("mira")
    eid = tentacles(d)
    report = d.end()
    assert report["effects_ended"] == [
        {"effect_id": eid, "target": "gob", "name": "tentacles", "why": "not maintained this turn (OR-18)"}
    ]


def test_ruling_24_maintained_each_turn_it_lasts(t: OrcusTable) -> None:
    d = fight(t)
    d.start("mira")
    eid = tentacles(d)
    out = d.fact("EffectMaintained", effect_id=eid, action="swift")
    assert out["maintained_by"] == "mira"
    with refused("ALREADY_MAINTAINED"):
        d.fact("EffectMaintained", effect_id=eid, action="swift")
    with refused("WRONG_ACTION"):
        d.fact("EffectMaintained", effect_id=eid, action="move")
    assert d.end() == {}
    d.start("gob")
    with refused("NOT_YOUR_TURN"):
        d.fact("EffectMaintained", effect_id=eid, action="swift")
    d.end()
    d.start("mira", new_round=True)
    d.fact("EffectMaintained", effect_id=eid, action="swift")
    d.end()
    d.start("mira", new_round=True)
    assert [x["effect_id"] for x in d.end()["effects_ended"]] == [eid]


def test_or_maintain_on_creation_turn_false_is_the_4e_reading(make_table) -> None:
    t = make_table({"or.maintain_on_creation_turn": False}).cast()
    d = fight(t)
    d.start("mira")
    eid = tentacles(d)
    assert d.end() == {}
    d.start("mira", new_round=True)
    assert [x["effect_id"] for x in d.end()["effects_ended"]] == [eid]


# ------------------------------------------------------------ B-OR-11: the end-of-turn order
def test_b_or_11_the_player_chooses_the_order_of_the_end_of_turn_resolutions(t: OrcusTable) -> None:
    """Two effects end at the end of mira's turn; without a choice they resolve in the order they
    were applied; EndOfTurnOrderChosen reverses it."""
    for chosen in (False, True):
        d = fight(t)
        d.start("gob")
        first = effect(d, "gob", "mira", name="one", components=DAZED, duration={"kind": "end_of_user_next"})
        second = effect(d, "gob", "mira", name="two", components=DAZED, duration={"kind": "end_of_user_next"})
        d.end()
        d.start("mira")
        if chosen:
            d.fact("EndOfTurnOrderChosen", creature="mira", effect_ids=[second, first])
        order = [x["effect_id"] for x in d.end()["effects_ended"]]
        assert order == ([second, first] if chosen else [first, second])


# ------------------------------------------------------------ saves and death saves in an encounter
def test_or_6_saves_are_rolled_on_the_creatures_own_turn_once_per_effect(t: OrcusTable) -> None:
    d = fight(t)
    eid = effect(d, "mira", "ogre", components=DAZED, duration={"kind": "save_ends"})
    d.start("ogre")
    with refused("NOT_YOUR_TURN"):
        d.fact("SavingThrowRolled", creature="mira", effect_id=eid, roll=d20(15))
    d.end()
    d.start("mira")
    assert d.owed() == [("SavingThrowRolled", {"creature": "mira", "effect_id": eid})]
    d.fact("SavingThrowRolled", creature="mira", effect_id=eid, roll=d20(3))
    with refused("ALREADY_SAVED"):
        d.fact("SavingThrowRolled", creature="mira", effect_id=eid, roll=d20(15))
    assert d.owed() == []


def test_a4_9_a_dying_hero_owes_its_death_save_at_the_end_of_its_turn(t: OrcusTable) -> None:
    d = fight(t)
    d.fact("DamageApplied", target="mira", amount=31)
    d.start("mira")
    assert d.owed() == [("DeathSavingThrowRolled", {"creature": "mira"})]
    d.fact("DeathSavingThrowRolled", creature="mira", roll=d20(12))
    with refused("ALREADY_ROLLED"):
        d.fact("DeathSavingThrowRolled", creature="mira", roll=d20(12))
    assert d.owed() == []


# ------------------------------------------------------------ B-OR-17 / ruling 24: recharge rolls
def test_b_or_17_recharge_is_rolled_from_the_turn_after_the_power_was_used(t: OrcusTable) -> None:
    """Recharge 5-6: used on the ogre's turn (no roll owed then; rolling is NOT_YET); at its next
    turn a d6 is owed: 4 does not recharge it, and one roll per turn; next turn 5 does."""
    d = fight(t)
    d.start("ogre")
    d.fact("PowerUsed", creature="ogre", power_id="breath")
    assert d.owed() == []
    with refused("NOT_YET"):
        d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(6))
    d.end()
    d.start("ogre", new_round=True)
    assert d.owed() == [("RechargeRolled", {"creature": "ogre", "power_id": "breath"})]
    assert d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(4))["recharged"] is False
    with refused("ALREADY_ROLLED"):
        d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(6))
    d.end()
    d.start("mira")
    with refused("NOT_YOUR_TURN"):
        d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(6))
    d.end()
    d.start("ogre", new_round=True)
    assert d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(5))["recharged"] is True
    assert d.owed() == [] and not d.v("ogre")["powers"]["breath"]["expended"]
    with refused("NOT_EXPENDED"):
        d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d6(5))
    with pytest.raises(Exception, match="single d6"):
        d.fact("RechargeRolled", creature="ogre", power_id="breath", roll=d20(5))


# ------------------------------------------------------------ OR-7 / B-OR-3 / ruling 21: action points
def test_or_7_a_hero_spends_one_action_point_per_encounter_on_its_own_turn(t: OrcusTable) -> None:
    t.record("SheetUpdated", creature_id="mira", changes={"action_points": 3})  # stat block is 1
    t.record("LongRestTaken")  # a hero's points reset to 1 (ruling 21) ...
    d = fight(t)
    d.state.own("mira").ap = 2  # ... so give her two for this test
    with refused("NO_TURN"):
        d.fact("ActionPointSpent", creature="mira", extra="standard")
    d.start("ogre")
    with refused("NOT_YOUR_TURN"):
        d.fact("ActionPointSpent", creature="mira", extra="standard")
    d.end()
    d.start("mira")
    out = d.fact("ActionPointSpent", creature="mira", extra="move")
    assert out["action_points_left"] == 1 and d.enc.turn_log["extra"] == {"move": 1}
    assert d.v("mira")["action_point_spent_this_encounter"] is True
    d.end()
    d.start("mira", new_round=True)
    with refused("ACTION_POINT_SPENT_THIS_ENCOUNTER"):
        d.fact("ActionPointSpent", creature="mira", extra="standard")


def test_or_7_an_elite_spends_at_most_one_per_round(t: OrcusTable) -> None:
    t.record("SheetUpdated", creature_id="ogre", changes={"action_points": 3})
    t.record("LongRestTaken", participants=["ogre"])
    d = fight(t)
    d.start("ogre")
    d.fact("ActionPointSpent", creature="ogre", extra="standard")
    with refused("ACTION_POINT_SPENT_THIS_ROUND"):
        d.fact("ActionPointSpent", creature="ogre", extra="swift")
    d.end()
    d.start("ogre", new_round=True)
    assert d.fact("ActionPointSpent", creature="ogre", extra="swift")["action_points_left"] == 1


def test_b_or_3_no_action_point_in_the_surprise_round_and_none_without_points(t: OrcusTable) -> None:
    d = fight(t, surprise=True)
    d.start("mira")
    with refused("SURPRISE_ROUND"):
        d.fact("ActionPointSpent", creature="mira", extra="standard")
    d.end()
    with refused("NO_ACTION_POINT"):
        d2 = fight(t)
        d2.start("gob")
        d2.fact("ActionPointSpent", creature="gob", extra="standard")


def test_b_or_3_every_second_encounter_gives_a_hero_an_action_point(t: OrcusTable) -> None:
    d = fight(t)
    assert d.end_encounter()["action_point_gained"] == []
    d2 = Direct.__new__(Direct)
    d2.__dict__.update(d.__dict__)
    d2.enc = engine.Encounter.new("second", "second", ["mira", "ogre"], 0)
    d2.state.encounters["second"] = d2.enc
    d2.state.active_encounter = "second"
    assert d2.end_encounter()["action_point_gained"] == ["mira"]
    v = d2.v("mira")
    assert (v["action_points"], v["encounters_since_long_rest"]) == (2, 2)
    assert d2.v("ogre")["action_points"] == 1  # monsters: per their stat block


def test_the_end_of_an_encounter_ends_turn_timed_effects_and_starts_waiting_aftereffects(
    t: OrcusTable,
) -> None:
    d = fight(t)
    d.start("mira")
    timed = effect(d, "gob", "mira", components=DAZED, duration={"kind": "end_of_user_next"})
    kept = effect(d, "gob", "mira", components=[{"condition": "prone"}], duration={"kind": "save_ends"})
    report = d.end_encounter()
    assert [x["effect_id"] for x in report["effects_ended"]] == [timed]
    assert effect_ids(d.v("gob")) == [kept]


def test_the_hooks_never_change_the_state_they_were_cloned_from(t: OrcusTable) -> None:
    before = t.v("mira")
    d = fight(t)
    effect(
        d,
        "mira",
        "ogre",
        components=[{"persistent": {"type": "fire", "amount": 5}}],
        duration={"kind": "save_ends"},
    )
    d.start("mira")
    assert t.v("mira") == before
