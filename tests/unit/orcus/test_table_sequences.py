"""A whole Orcus encounter played through ``ChronicleApplication`` and the core encounter engine,
every die given, the numbers worked by hand from RULES.md (A4, B-OR, C4, rulings 20-24), then a
correction that orphans the facts that depended on it.

The cast:

* mira: hero, 30 HP (bloodied 15, surge 7), 6 surges, AC 17 Ref 15; Strike (+5, 1d8+3),
  Radiant Lance (encounter, +5 vs Ref);
* tam: hero, 24 HP (bloodied 12, surge 6, dies at -12), AC 17 Ref 15;
* ogre: elite, 52 HP, 2 action points, AC 16; Fire Breath (recharge 5-6, far, +6 vs Ref,
  2d6+4 fire, persistent 5 fire save ends), Club (+7, 2d6+4);
* gob1, gob2: monsters, 10 HP, AC 15 Ref 14, one group for initiative; Spear (+4, 1d6+2).
"""

from __future__ import annotations

from typing import Any

from tests.unit.orcus.helpers import CLUB, OrcusTable, d6, d20, encounter_facts, refused

STRIKE = {
    "name": "Strike",
    "power_id": "strike",
    "kind": "melee",
    "defense": "ac",
    "attack_bonus": 5,
    "damage": "1d8+3",
}
LANCE = {
    "name": "Radiant Lance",
    "power_id": "lance",
    "kind": "ranged",
    "defense": "ref",
    "attack_bonus": 5,
    "damage": "1d10+3",
    "damage_types": ["radiant"],
}
BREATH = {
    "name": "Fire Breath",
    "power_id": "breath",
    "kind": "far",
    "defense": "ref",
    "attack_bonus": 6,
    "damage": "2d6+4",
    "damage_types": ["fire"],
    "effects": [
        {
            "name": "burning",
            "on": "hit",
            "components": [{"persistent": {"type": "fire", "amount": 5}}],
            "duration": {"kind": "save_ends"},
        }
    ],
}
SPEAR = {"name": "Spear", "kind": "melee", "defense": "ac", "attack_bonus": 4, "damage": "1d6+2"}


def owed(t: OrcusTable) -> list[tuple[str, dict[str, Any]]]:
    """The rolls the table owes now, as (fact type, payload without its dice)."""
    return [(x["type"], x["payload"]) for x in t.app.pending_rolls(t.cid)]


def cast(t: OrcusTable) -> None:
    t.hero("mira")
    t.hero("tam", max_hp=24)
    t.ogre(action_points=2)
    t.monster("gob1")
    t.monster("gob2")


def play(t: OrcusTable) -> dict[str, Any]:
    """The encounter; returns the positions the correction test needs."""
    e = encounter_facts(t, "den")
    at: dict[str, Any] = {}
    e.start(["mira", "tam", "ogre", "gob1", "gob2"], surprised=["ogre"])
    # OR-5 / B-OR-2: d20 + the modifier the table gives; B-OR-14: the goblins roll once
    assert e.init("mira", 15, 4).outcome["score"] == 19
    e.init("tam", 10, 2)
    e.init("ogre", 17, 1)
    out = e.group("gobs", ["gob2", "gob1"], 9, 3).outcome
    assert out["unresolved_ties"] == [["gobs", "tam"]]  # 12 and 12: the GM decides (OR-5)
    assert e.order(["tam", "gobs"]).outcome["order"] == ["mira", "ogre", "tam", "gob2", "gob1"]

    # ---- the surprise round (OR-4): the ogre is surprised; one action each, no action point
    assert e.turn().outcome["turn_of"] == "mira"
    hit = t.attack(
        "mira", dict(STRIKE), [{"target": "gob2", "face": 12}], damage=[5], action="standard"
    ).outcome
    assert (hit["targets"][0]["attack_total"], hit["targets"][0]["damage"]["amount"]) == (17, 8)
    with refused("SURPRISE_ROUND_ONE_ACTION"):
        e.act("mira", "move")
    with refused("SURPRISE_ROUND"):
        t.record("ActionPointSpent", creature="mira", extra="standard")
    e.act("mira", "free", name="shouts a warning")  # B-OR-6: free actions are allowed
    e.end()
    started = e.turn().outcome
    assert started["turns"][0] == {
        "creature": "ogre",
        "skipped": "surprised: no turn in the surprise round (OR-4)",
    }
    assert started["turn_of"] == "tam"
    e.act("tam", "move", substitutes_for="standard")
    e.end()
    e.turn()  # gob2
    spear = t.attack(
        "gob2", dict(SPEAR), [{"target": "tam", "face": 14}], damage=[4], action="standard"
    ).outcome
    assert spear["targets"][0]["damage"]["hp_after"] == 18  # 18 vs AC 17: 1d6 (4) + 2 = 6
    e.end()
    e.turn()  # gob1
    fumble = t.attack("gob1", dict(SPEAR), [{"target": "mira", "face": 1}], action="standard").outcome
    assert fumble["targets"][0]["hit"] is False  # OR-11: a natural 1 always misses
    e.end()

    # ---- round 1
    assert e.turn().outcome["round_now"] == 1
    t.record("ActionPointSpent", creature="mira", extra="standard")  # OR-7: once per encounter
    lance = t.attack("mira", dict(LANCE), [{"target": "gob2", "face": 8}], action="standard").outcome
    assert lance["targets"][0]["hit"] is False and lance["power_expended"] is True  # 13 vs Ref 14
    kill = t.attack(
        "mira", dict(STRIKE), [{"target": "gob2", "face": 11}], damage=[1], action="standard"
    ).outcome
    assert kill["targets"][0]["damage"]["life_after"] == "dead"  # 16 vs AC 15: 1 + 3 = 4, gob2 2 -> -2
    e.act("mira", "move", name="walk")
    e.act("mira", "swift", name="draws a dagger")
    with refused("NO_ACTION_LEFT"):
        e.act("mira", "swift")  # OR-6 budget + one extra standard: all used
    e.end()

    e.turn()  # the ogre
    breath = t.attack(
        "ogre",
        dict(BREATH),
        [{"target": "mira", "face": 20, "crit": ["1d6", 3]}, {"target": "tam", "face": 10}],
        damage=[2, 5],
        action="standard",
    )
    at["breath"] = breath.position
    mira, tam = breath.outcome["targets"]
    # B-OR-4 / B-OR-5: a natural 20 deals the maximum 16 plus the bonus 3 = 19 (30 -> 11);
    # tam: 10 + 6 = 16 vs Ref 15, the rolled 2 + 5 + 4 = 11 (18 -> 7); both burn (OR-12)
    assert (mira["damage"]["amount"], mira["damage"]["hp_after"]) == (19, 11)
    assert (tam["damage"]["amount"], tam["damage"]["hp_after"]) == (11, 7)
    e.act("ogre", "move")
    e.act("ogre", "swift")
    with refused("NO_ACTION_LEFT"):
        e.act("ogre", "swift")  # standard, move and swift are used
    t.record("ActionPointSpent", creature="ogre", extra="swift")
    e.act("ogre", "swift", name="roar")
    with refused("ACTION_POINT_SPENT_THIS_ROUND"):
        t.record("ActionPointSpent", creature="ogre", extra="move")
    assert owed(t) == []  # breath was used this turn: no recharge roll yet (B-OR-17)
    e.end()

    out = e.turn().outcome  # tam: persistent fire 5 at the start of the turn (OR-6): 7 -> 2
    assert out["turns"][-1]["persistent_damage"][0]["hp_after"] == 2
    with refused("ROLLS_PENDING"):
        e.end()
    tam_burn = t.v("tam")["effects"][0]["effect_id"]
    at["tam_save_1"] = t.save("tam", tam_burn, 8).position  # fails
    e.end()
    out = e.turn().outcome  # gob2 is dead: skipped (ruling 8); gob1
    assert out["turns"][0]["skipped"].startswith("dead") and out["turn_of"] == "gob1"
    stab = t.attack(
        "gob1", dict(SPEAR), [{"target": "tam", "face": 13}], damage=[5], action="standard"
    ).outcome
    assert stab["targets"][0]["damage"]["hp_after"] == -5  # 17 vs 17: 5 + 2 = 7, tam 2 -> -5: dying
    assert t.v("tam")["life"] == "dying"
    e.end()

    # ---- round 2
    out = e.turn().outcome  # mira: burns 5 (11 -> 6), rallies (+7 -> 13), saves 12: the fire ends
    assert out["turns"][-1]["persistent_damage"][0]["hp_after"] == 6
    at["rally"] = t.record("RallyUsed", creature="mira").position
    assert t.hp("mira") == 13
    mira_burn = t.v("mira")["effects"][0]["effect_id"]
    at["mira_save"] = t.save("mira", mira_burn, 12).position
    e.end()
    e.turn()  # the ogre owes its recharge roll (B-OR-17)
    assert owed(t) == [("RechargeRolled", {"creature": "ogre", "power_id": "breath"})]
    with refused("ROLLS_PENDING"):
        e.end()
    at["recharge"] = t.record("RechargeRolled", creature="ogre", power_id="breath", roll=d6(4)).position
    club = t.attack("ogre", dict(CLUB), [{"target": "mira", "face": 9}], action="standard").outcome
    assert club["targets"][0]["hit"] is False  # 16 vs 17
    e.end()
    e.turn()  # tam, dying: burns 5 (-5 -> -10), saves against the fire (11: ends), death save 6: fails
    assert t.hp("tam") == -10 and t.v("tam")["life"] == "dying"
    assert [x[0] for x in owed(t)] == ["SavingThrowRolled", "DeathSavingThrowRolled"]
    at["tam_save_2"] = t.save("tam", tam_burn, 11).position
    at["death_save"] = t.record("DeathSavingThrowRolled", creature="tam", roll=d20(6)).position
    e.end()
    e.turn()
    e.end()
    at["end"] = e.finish("the ogre flees").position
    return at


def test_a_whole_encounter_with_every_die_given(table: OrcusTable) -> None:
    cast(table)
    play(table)
    mira, tam, ogre = table.v("mira"), table.v("tam"), table.v("ogre")
    assert (mira["hp"], mira["surges"], mira["action_points"], mira["effects"]) == (13, 5, 0, [])
    assert mira["powers"]["lance"]["expended"] and mira["encounters_since_long_rest"] == 1
    assert (tam["hp"], tam["life"], tam["death_save_failures"], tam["effects"]) == (-10, "dying", 1, [])
    assert (ogre["hp"], ogre["action_points"], ogre["powers"]["breath"]["expended"]) == (52, 1, True)
    assert table.v("gob2")["life"] == "dead"
    assert table.orphans() == {}


def test_revoking_the_breath_orphans_the_recharge_roll_the_saves_and_the_death_save(
    table: OrcusTable,
) -> None:
    """Without the breath: the power was never expended (its recharge roll no longer applies,
    ruling 24), nobody burned (the saves against the fire have no effect to save against), and
    gob1's spear takes tam from 18 to 11, so tam never dies and the death save is orphaned."""
    cast(table)
    at = play(table)
    table.revoke(at["breath"], "the ogre was still dazed")
    orphans = table.orphans()
    assert "not expended" in orphans[str(at["recharge"])]
    for key in ("tam_save_1", "tam_save_2", "mira_save"):
        assert str(at[key]) in orphans, key
    assert "not dying" in orphans[str(at["death_save"])]
    assert str(at["rally"]) not in orphans  # still a legal Rally (it healed nothing: mira was at 30)
    mira, tam = table.v("mira"), table.v("tam")
    assert (mira["hp"], mira["surges"]) == (30, 5)
    assert (tam["hp"], tam["life"], tam["death_save_failures"]) == (11, "active", 0)
    assert not table.v("ogre")["powers"]["breath"]["expended"]
    # as of the end of the encounter: what the table believed then, and what we know now
    assert table.v("tam", at["end"], "recorded")["life"] == "dying"
    assert table.v("tam", at["end"], "corrected")["life"] == "active"


def test_what_if_the_breath_missed_tam(table: OrcusTable) -> None:
    cast(table)
    at = play(table)
    before = table.store_max()
    breath = table.ledger.entry(at["breath"]).payload
    targets = [dict(x) for x in breath["targets"]]
    targets[1] = {**targets[1], "roll": d20(3)}
    preview = table.app.what_if(
        table.cid,
        [("FactAmended", {"target": at["breath"], "patch": {"targets": targets}, "reason": "a 3, not a 10"})],
    )
    assert at["tam_save_1"] in preview["newly_orphaned"] and at["death_save"] in preview["newly_orphaned"]
    assert preview["view"].creature("tam")["life"] == "active"
    assert table.store_max() == before


def test_b_or_3_the_second_encounter_gives_each_hero_an_action_point(table: OrcusTable) -> None:
    cast(table)
    for n, eid in enumerate(("first", "second")):
        e = encounter_facts(table, eid)
        e.start(["mira", "gob1"])
        e.init("mira", 10, 0)
        e.init("gob1", 5, 0)
        out = e.finish().outcome
        assert out["action_point_gained"] == (["mira"] if n == 1 else [])
    assert table.v("mira")["action_points"] == 2
    table.record("LongRestTaken", participants=["mira"])
    assert (table.v("mira")["action_points"], table.v("mira")["encounters_since_long_rest"]) == (1, 0)


def test_or_8_b_or_9_b_or_10_immediate_and_opportunity_actions(table: OrcusTable) -> None:
    """One immediate action between two of its own turns (B-OR-9); one opportunity attack per
    other creature's turn, never on its own (B-OR-10)."""
    cast(table)
    e = encounter_facts(table, "ambush")
    e.start(["mira", "gob1", "gob2"])
    e.init("mira", 15, 0)
    e.group("gobs", ["gob1", "gob2"], 5, 0)
    e.turn()  # mira
    with refused("OWN_TURN"):
        e.act("mira", "opportunity")
    e.end()
    e.turn()  # gob1
    e.act("mira", "immediate", name="counter: parry")
    with refused("IMMEDIATE_USED"):
        e.act("mira", "immediate", name="reaction")
    e.act("mira", "opportunity")
    with refused("OPPORTUNITY_USED"):
        e.act("mira", "opportunity")
    e.end()
    e.turn()  # gob2: a new turn, a new opportunity attack; the immediate is still used
    e.act("mira", "opportunity")
    with refused("IMMEDIATE_USED"):
        e.act("mira", "immediate")
    e.end()
    e.turn()  # mira again: her window reopens
    e.end()
    e.turn()
    e.act("mira", "immediate")


def test_b_or_14_the_gm_records_the_order_of_a_groups_members(table: OrcusTable) -> None:
    cast(table)
    e = encounter_facts(table, "pack")
    e.start(["mira", "gob1", "gob2"])
    e.group("gobs", ["gob1", "gob2"], 15, 0)
    e.order(["gob2", "gob1"])  # before the order is settled (OR-5: fixed for the encounter)
    assert e.init("mira", 2, 0).outcome["order"] == ["gob2", "gob1", "mira"]
    e.turn()
    out = table.attack("gob2", dict(SPEAR), [{"target": "mira", "face": 3}], action="standard").outcome
    assert out["targets"][0]["hit"] is False
    e.end()
    assert e.turn().outcome["turn_of"] == "gob1"  # members take their own turns, one after another


def test_a4_9_4e_conditions_limit_actions(make_table) -> None:
    table = make_table({"or.placeholder.conditions": "4e"})
    cast(table)
    table.effect("mira", "ogre", components=[{"condition": "dazed"}], duration={"kind": "save_ends"})
    e = encounter_facts(table, "daze")
    e.start(["mira", "gob1"])
    e.init("mira", 15, 0)
    e.init("gob1", 5, 0)
    e.turn()
    e.act("mira", "move")
    with refused("DAZED_ONE_ACTION"):
        e.act("mira", "swift")


def test_or_18_maintaining_takes_its_action(table: OrcusTable) -> None:
    cast(table)
    e = encounter_facts(table, "zone")
    e.start(["mira", "gob1"])
    e.init("mira", 15, 0)
    e.init("gob1", 5, 0)
    e.turn()
    zone = table.effect(
        "gob1",
        "mira",
        name="tentacles",
        components=[{"condition": "restrained"}],
        duration={"kind": "maintain", "action": "swift"},
    ).outcome["effect_id"]
    e.act("mira", "standard")
    e.act("mira", "swift")
    e.act("mira", "swift", substitutes_for="move")
    with refused("NO_ACTION_LEFT"):
        table.record("EffectMaintained", effect_id=zone, action="swift")
    ended = e.end().outcome["effects_ended"]
    assert ended[0]["effect_id"] == zone  # not maintained on its creation turn (B-OR-8)
