"""Powers and rests (RULES.md OR-9, B-OR-17, ruling 24; OR-7 and A4.9 for what rests restore).

mira: strike (at-will), lance (encounter), stand (daily); the ogre: breath (recharge 5-6),
rage (recharge if bloodied), club (at-will).
"""

from __future__ import annotations

from tests.unit.orcus.helpers import OrcusTable, d6, refused


def expended(t: OrcusTable, who: str) -> list[str]:
    return sorted(pid for pid, p in t.v(who)["powers"].items() if p["expended"])


def test_or_9_at_will_powers_never_expend_the_others_do(t: OrcusTable) -> None:
    for pid in ("strike", "lance", "stand"):
        out = t.record("PowerUsed", creature="mira", power_id=pid).outcome
        assert out["expended"] is (pid != "strike")
    t.record("PowerUsed", creature="mira", power_id="strike")
    assert expended(t, "mira") == ["lance", "stand"]
    before = t.store_max()
    with refused("POWER_EXPENDED"):
        t.record("PowerUsed", creature="mira", power_id="lance")
    assert t.store_max() == before


def test_or_9_a_short_rest_recharges_encounter_and_recharge_powers_a_long_rest_dailies(t: OrcusTable) -> None:
    for pid in ("lance", "stand"):
        t.record("PowerUsed", creature="mira", power_id=pid)
    for pid in ("breath", "rage"):
        t.record("PowerUsed", creature="ogre", power_id=pid)
    out = t.record("ShortRestTaken", participants=["mira", "ogre"]).outcome
    assert out["recharged"] == {"mira": ["lance"], "ogre": ["breath", "rage"]}
    assert expended(t, "mira") == ["stand"] and expended(t, "ogre") == []
    t.record("LongRestTaken", participants=["mira"])
    assert expended(t, "mira") == []


def test_or_9_recharge_if_recharges_when_its_condition_happens(t: OrcusTable) -> None:
    t.record("PowerUsed", creature="ogre", power_id="rage")
    out = t.record(
        "RechargeConditionMet", creature="ogre", power_id="rage", trigger="bloodied by mira"
    ).outcome
    assert out["recharged"] is True and expended(t, "ogre") == []
    with refused("NOT_EXPENDED"):
        t.record("RechargeConditionMet", creature="ogre", power_id="rage")
    with refused("WRONG_FREQUENCY"):
        t.record("RechargeConditionMet", creature="ogre", power_id="breath")


def test_ruling_24_a_recharge_roll_for_a_power_that_is_not_expended_is_refused(t: OrcusTable) -> None:
    before = t.store_max()
    with refused("NOT_EXPENDED"):
        t.record("RechargeRolled", creature="ogre", power_id="breath", roll=d6(6))
    with refused("WRONG_FREQUENCY"):
        t.record("RechargeRolled", creature="ogre", power_id="club", roll=d6(6))
    assert t.store_max() == before


def test_b_or_17_a_recharge_roll_is_made_on_the_creatures_turn(t: OrcusTable) -> None:
    """Out of an encounter there is no turn to roll at: refused (a rest recharges it)."""
    t.record("PowerUsed", creature="ogre", power_id="breath")
    with refused("NO_TURN"):
        t.record("RechargeRolled", creature="ogre", power_id="breath", roll=d6(6))


def test_or_7_a_long_rest_resets_action_points_to_1_and_the_encounter_count(t: OrcusTable) -> None:
    t.record("SheetUpdated", creature_id="ogre", changes={"action_points": 2})
    t.record("LongRestTaken", participants=["mira", "ogre"])
    assert t.v("mira")["action_points"] == 1 and t.v("ogre")["action_points"] == 2


def test_a4_9_a_long_rest_restores_hp_and_surges_a_short_rest_does_not(t: OrcusTable) -> None:
    t.damage("mira", 20)
    t.record("HealingSurgeSpent", creature="mira")
    t.record("TemporaryHitPointsGranted", target="mira", amount=4)
    t.record("ShortRestTaken")
    v = t.v("mira")
    assert (v["hp"], v["surges"], v["temp_hp"]) == (17, 5, 0)
    out = t.record("LongRestTaken").outcome
    assert out["participants"] == ["mira"] and out["clock"] == 5 + 360
    v = t.v("mira")
    assert (v["hp"], v["surges"]) == (30, 6)


def test_or_placeholder_long_rest_rule_only_keeps_hp_and_surges(make_table) -> None:
    t = make_table({"or.placeholder.long_rest": "rule_only"}).cast()
    t.damage("mira", 20)
    t.record("PowerUsed", creature="mira", power_id="stand")
    t.record("LongRestTaken")
    v = t.v("mira")
    assert (v["hp"], v["surges"], v["powers"]["stand"]["expended"], v["action_points"]) == (10, 6, False, 1)


def test_a4_9_a_long_rest_wakes_a_stabilised_hero(t: OrcusTable) -> None:
    t.damage("mira", 31)
    t.record("Stabilized", creature="mira")
    t.record("LongRestTaken")
    assert (t.hp("mira"), t.v("mira")["life"]) == (30, "active")


def test_rests_refuse_dying_and_dead_participants(t: OrcusTable) -> None:
    t.damage("mira", 31)
    with refused("CREATURE_DYING"):
        t.record("ShortRestTaken", participants=["mira"])
    t.damage("gob", 10)
    with refused("CREATURE_DEAD"):
        t.record("LongRestTaken", participants=["gob"])
