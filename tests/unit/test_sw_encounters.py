"""Issue 4: Stellar Winds encounters, one test (or more) per rule.

Each test is named after the RULES.md id it checks. The steps of a turn boundary are derived
by the fold (C0.6): the tests record only table facts (initiative d20s, "the turn starts",
"the turn is over", delays, actions, effects, saves) and read the state. Since ruling 18 a
turn starts with its own fact: ``start`` and ``end_turn`` record ``TurnStarted`` after the
order settles and after each ``TurnEnded`` (the moment between is tested in
``tests/unit/test_turn_boundaries.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from domain import dice
from domain.errors import DomainError
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset, summary
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts
from tests.unit.conftest import ABILITIES, MONSTER_DEFENSES, Table

ENC = "e1"


# ------------------------------------------------------------------ helpers
def d20(face: int) -> dict[str, Any]:
    return dice.roll("1d20", faces=[face])


def rec(t: Table, fact_type: str, **payload: Any) -> dict[str, Any]:
    outcome: dict[str, Any] = t.app.record(t.cid, fact_type, payload).outcome
    return outcome


def refused(t: Table, code: str, fact_type: str, **payload: Any) -> DomainError:
    """A fact that must be refused with ``code`` and store nothing."""
    position = t.position
    with pytest.raises(DomainError) as info:
        t.app.record(t.cid, fact_type, payload)
    assert info.value.code == code, info.value.message
    assert t.position == position
    return info.value


def creature(
    t: Table,
    cid: str,
    *,
    kind: str = "monster",
    dex: int = 10,
    level: int = 1,
    max_hp: int = 40,
    **sheet: Any,
) -> None:
    StellarWindsCommands(t.app).register_creature(
        t.cid,
        creature_id=cid,
        name=cid.title(),
        kind=kind,
        level=level,
        abilities={**ABILITIES, "dex": dex},
        max_hp=max_hp,
        surges_per_day=4,
        defenses=dict(MONSTER_DEFENSES),
        **sheet,
    )


def start(t: Table, inits: dict[str, int], surprised: list[str] | None = None) -> dict[str, Any]:
    """EncounterStarted, the surprise ruling, one initiative d20 per creature (in dict order), then
    (once the order is settled) the first TurnStarted; the last two outcomes merged."""
    rec(t, "EncounterStarted", encounter_id=ENC, name="Ambush", participants=list(inits))
    if surprised is not None:
        rec(t, "SurpriseDetermined", encounter_id=ENC, surprised=surprised)
    out: dict[str, Any] = {}
    for cid, face in inits.items():
        out = rec(t, "InitiativeRolled", encounter_id=ENC, creature=cid, roll=d20(face))
    if "order" in out:
        out = {**out, **start_turn(t)}
    return out


def start_turn(t: Table) -> dict[str, Any]:
    return rec(t, "TurnStarted", encounter_id=ENC)


def enc(t: Table) -> dict[str, Any]:
    view: dict[str, Any] = t.summary()["encounters"][ENC]
    return view


def end_turn(t: Table) -> dict[str, Any]:
    """TurnEnded, then TurnStarted (two facts since ruling 18); their outcomes merged."""
    ended = rec(t, "TurnEnded", encounter_id=ENC)
    return {**ended, **start_turn(t)}


def act(t: Table, cid: str, action: str, **extra: Any) -> dict[str, Any]:
    return rec(t, "ActionTaken", encounter_id=ENC, creature=cid, action=action, name=action, **extra)


def effect(
    t: Table,
    target: str,
    source: str,
    *components: dict[str, Any],
    kind: str = "save_ends",
    name: str = "effect",
    **duration: Any,
) -> str:
    out = rec(
        t,
        "EffectApplied",
        target=target,
        source=source,
        effect={"name": name, "components": list(components), "duration": {"kind": kind, **duration}},
    )
    return str(out["effect_id"])


def effect_ids(t: Table, cid: str) -> set[str]:
    return {e["effect_id"] for e in t.c(cid)["effects"]}


@pytest.fixture
def t(make_table: Any) -> Table:
    """A bare campaign with three level-1 monsters a, b, c (initiative bonus 0, 40 HP)."""
    table: Table = make_table()
    for cid in ("a", "b", "c"):
        creature(table, cid)
    return table


# ------------------------------------------------------- initiative (A1.1)
def test_sw_3_initiative_is_d20_plus_half_level_plus_dex_plus_misc(t: Table) -> None:
    creature(t, "hero", kind="pc", level=5, dex=16, initiative_misc=2)
    rec(t, "EncounterStarted", encounter_id=ENC, participants=["hero", "a"])
    out = rec(t, "InitiativeRolled", encounter_id=ENC, creature="hero", roll=d20(11))
    assert (out["bonus"], out["score"]) == (2 + 3 + 2, 18)
    assert out["waiting_for"] == ["a"]
    refused(t, "ALREADY_ROLLED", "InitiativeRolled", encounter_id=ENC, creature="hero", roll=d20(3))


def test_sw_4_tie_broken_by_the_higher_bonus_automatically(t: Table) -> None:
    creature(t, "quick", dex=14)  # bonus +2
    out = start(t, {"a": 12, "quick": 10})  # both 12
    assert out["order"] == ["quick", "a"]
    assert enc(t)["state"] == "running" and enc(t)["turn_of"] == "quick"


def test_sw_4_equal_bonuses_need_a_recorded_tie_break_before_turns_start(t: Table) -> None:
    """B-X-4: the tie order is a recorded choice; the reducer never decides it."""
    out = start(t, {"a": 15, "b": 15, "c": 3})
    assert out["unresolved_ties"] == [["a", "b"]]
    assert enc(t)["state"] == "setup" and enc(t)["unresolved_ties"] == [["a", "b"]]
    refused(t, "ENCOUNTER_NOT_RUNNING", "TurnEnded", encounter_id=ENC)
    refused(
        t, "ENCOUNTER_NOT_RUNNING", "ActionTaken", encounter_id=ENC, creature="a", action="move", name="x"
    )
    act(t, "a", "free")  # free actions need no turn
    refused(
        t, "TIE_ORDER_WRONG", "InitiativeTieBroken", encounter_id=ENC, creatures=["b", "a"], method="bonus"
    )
    refused(
        t,
        "TIE_ORDER_WRONG",
        "InitiativeTieBroken",
        encounter_id=ENC,
        creatures=["b", "a"],
        method="die",
        rolls=[d20(4), d20(9)],
    )
    out = rec(
        t,
        "InitiativeTieBroken",
        encounter_id=ENC,
        creatures=["b", "a"],
        method="die",
        rolls=[d20(17), d20(9)],
    )
    assert out["order"] == ["b", "a", "c"] and out["turn_of"] is None and out["next_turn_of"] == "b"
    assert start_turn(t)["turn_of"] == "b"  # ruling 18: the first turn starts with its own fact


def test_sw_4_tie_break_by_die_refused_when_bonuses_differ(t: Table) -> None:
    creature(t, "quick", dex=14)
    rec(t, "EncounterStarted", encounter_id=ENC, participants=["a", "quick", "b"])
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="a", roll=d20(12))
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="quick", roll=d20(10))
    refused(
        t, "BONUS_DECIDES", "InitiativeTieBroken", encounter_id=ENC, creatures=["a", "quick"], method="coin"
    )


def test_sw_2_a_corrected_initiative_roll_reorders_the_encounter(t: Table) -> None:
    start(t, {"a": 5, "b": 10})
    assert enc(t)["order"] == ["b", "a"]
    first = t.ledger.entries[-3].seq  # a's InitiativeRolled (then b's, then the TurnStarted)
    t.app.amend(t.cid, first, {"roll": d20(19)}, reason="misread the die")
    assert enc(t)["order"] == ["a", "b"] and enc(t)["turn_of"] == "a"


# ------------------------------------------------------------ surprise (SW-5)
def test_sw_5_b_sw_19_surprise_round(t: Table) -> None:
    creature(t, "pc", kind="pc")
    out = start(t, {"b": 20, "pc": 15, "a": 10}, surprised=["b"])
    assert out["round"] == 0 and out["turn_of"] == "pc"  # b is surprised: no turn in round 0
    assert "surprised" in t.c("b")["conditions"] and "surprised" not in t.c("pc")["conditions"]
    assert enc(t)["surprise_round"] is True
    # an aware creature: one action (standard, move or minor), free actions, no action points
    act(t, "pc", "move")
    refused(
        t,
        "SURPRISE_ROUND_ONE_ACTION",
        "ActionTaken",
        encounter_id=ENC,
        creature="pc",
        action="minor",
        name="draw",
    )
    act(t, "pc", "free")
    refused(t, "SURPRISE_ROUND", "ActionPointSpent", creature="pc", use="extra_standard")
    # the surprised creature: free actions only; no immediate or opportunity actions
    act(t, "b", "free")
    refused(
        t, "FREE_ACTIONS_ONLY", "ActionTaken", encounter_id=ENC, creature="b", action="immediate", name="x"
    )
    end_turn(t)
    assert enc(t)["turn_of"] == "a"
    out = end_turn(t)  # a's turn ends: the surprise round is over
    assert (out["round_now"], out["turn_of"]) == (1, "b")
    assert "surprised" not in t.c("b")["conditions"]
    assert enc(t)["surprise_round"] is False
    act(t, "b", "standard")
    act(t, "b", "move")


# ------------------------------------------------- action economy (SW-8, SW-9)
def test_sw_8_action_sets_and_substitutions(t: Table) -> None:
    start(t, {"a": 20, "b": 10})
    act(t, "a", "move")
    act(t, "a", "move", substitutes_for="standard")
    act(t, "a", "minor")  # set C: M+M+m
    refused(t, "NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="a", action="minor", name="x")
    refused(
        t,
        "INVALID_INPUT",
        "ActionTaken",
        encounter_id=ENC,
        creature="a",
        action="standard",
        name="x",
        substitutes_for="move",
    )
    end_turn(t)
    act(t, "b", "standard")
    refused(t, "NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="b", action="standard", name="x")
    act(t, "b", "minor")
    act(t, "b", "minor")  # set B: S+m+m
    refused(t, "NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="b", action="move", name="x")


def test_sw_15_action_point_extra_action_counts_in_the_budget(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    start(t, {"hero": 20, "a": 1})
    act(t, "hero", "standard")
    refused(
        t, "NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="hero", action="standard", name="x"
    )
    rec(t, "ActionPointSpent", creature="hero", use="extra_standard")
    act(t, "hero", "standard")
    act(t, "hero", "move")
    act(t, "hero", "minor")


def test_sw_8_standard_move_minor_only_on_your_own_turn_gm_exception_recorded(t: Table) -> None:
    start(t, {"a": 20, "b": 10})
    refused(t, "NOT_YOUR_TURN", "ActionTaken", encounter_id=ENC, creature="b", action="move", name="x")
    out = act(t, "b", "move", gm_exception=True)
    assert "gm_exception" in out
    position = t.position
    assert t.ledger.effective_payload(position)["gm_exception"] is True


def test_sw_9_immediate_once_per_round_window_and_opportunity_once_per_turn(t: Table) -> None:
    start(t, {"a": 20, "b": 10, "c": 5})
    act(t, "b", "immediate")
    refused(t, "IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="b", action="immediate", name="x")
    act(t, "b", "opportunity")
    refused(
        t, "OPPORTUNITY_USED", "ActionTaken", encounter_id=ENC, creature="b", action="opportunity", name="x"
    )
    refused(t, "OWN_TURN", "ActionTaken", encounter_id=ENC, creature="a", action="opportunity", name="x")
    end_turn(t)  # b's turn starts: its immediate window reopens (B-SW-31)
    act(t, "b", "immediate")
    act(t, "c", "opportunity")  # a new turn: c may take one
    end_turn(t)
    act(t, "b", "opportunity")  # c's turn: once per other combatant's turn
    refused(t, "IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="b", action="immediate", name="x")


def test_a1_10_dazed_creature_second_action_refused_with_code(t: Table) -> None:
    start(t, {"a": 20, "b": 10})
    effect(t, "a", "b", {"condition": "dazed"})
    act(t, "a", "minor")
    err = refused(
        t, "DAZED_ONE_ACTION", "ActionTaken", encounter_id=ENC, creature="a", action="move", name="x"
    )
    assert "dazed" in err.message
    refused(
        t, "DAZED_ONE_ACTION", "ActionTaken", encounter_id=ENC, creature="a", action="immediate", name="x"
    )
    act(t, "a", "free")
    out = act(t, "a", "move", gm_exception=True)
    assert "dazed" in out["gm_exception"]


def test_a1_10_stunned_and_unconscious_cannot_act_at_all(t: Table) -> None:
    start(t, {"a": 20, "b": 10})
    effect(t, "a", "b", {"condition": "stunned"})
    refused(t, "CANNOT_ACT", "ActionTaken", encounter_id=ENC, creature="a", action="free", name="x")
    refused(t, "CANNOT_DELAY", "TurnDelayed", encounter_id=ENC, creature="a")


def test_ruling_8_no_actions_for_a_dead_creature_and_its_turns_are_skipped(t: Table) -> None:
    start(t, {"a": 20, "b": 10, "c": 5})
    rec(t, "DeathDeclared", creature="b", cause="disintegrated")
    refused(t, "CREATURE_DEAD", "ActionTaken", encounter_id=ENC, creature="b", action="free", name="x")
    out = end_turn(t)
    assert out["turn_of"] == "c"
    assert {"creature": "b", "skipped": "dead (adopted ruling 8)"} in out["turns"]


def test_enforce_turns_flag_off_records_but_does_not_refuse(t: Table) -> None:
    start(t, {"a": 20, "b": 10})
    t.app.set_flag(t.cid, "sw.enforce_turns", False)
    out = act(t, "b", "standard")
    assert "not_enforced" in out


def test_sw_23_attack_action_and_close_blast_one_damage_roll_three_targets(t: Table) -> None:
    """SW-16 (d20 + attack bonus vs the defense), SW-25 (the power's dice plus its modifier) and
    SW-27 (fire is a damage type that resistance reads)."""
    creature(t, "gunner")
    creature(t, "resist", resist={"fire": 5})
    start(t, {"gunner": 20, "a": 15, "b": 10, "resist": 5})
    StellarWindsCommands(t.app).grant_temporary_hp(t.cid, "resist", 4)
    effect(t, "a", "gunner", {"condition": "insubstantial"}, kind="end_of_encounter")
    StellarWindsCommands(t.app).deal_damage(t.cid, "b", amount=25)
    assert t.c("b")["bloodied"]
    blast = {
        "name": "flame burst",
        "kind": "close",
        "defense": "ref",
        "attack_bonus": 5,
        "damage": "2d6+3",
        "damage_types": ["fire"],
    }
    r = StellarWindsCommands(t.app).attack(
        t.cid,
        "gunner",
        blast,
        [{"target": x, "face": 15} for x in ("resist", "a", "b")],
        damage_faces=[4, 5],
        action="standard",
    )
    assert r.outcome["action"] == "standard"
    payload = t.ledger.effective_payload(r.position)
    assert payload["damage"]["terms"][0]["faces"] == [4, 5]  # one damage roll for all (SW-23)
    hits = {x["target"]: x["damage"] for x in r.outcome["targets"]}
    assert (hits["resist"]["amount"], hits["resist"]["temp_hp_lost"], hits["resist"]["hp_lost"]) == (7, 4, 3)
    assert (hits["a"]["amount"], hits["a"]["hp_lost"]) == (6, 6)  # insubstantial: half
    assert (hits["b"]["amount"], t.c("b")["hp"], t.c("b")["life"]) == (12, 3, "active")
    assert enc(t)["actions_this_turn"] == ["standard"]
    with pytest.raises(DomainError) as info:
        StellarWindsCommands(t.app).attack(
            t.cid, "gunner", blast, [{"target": "a", "face": 15}], damage_faces=[1, 1], action="standard"
        )
    assert info.value.code == "NO_ACTION_LEFT"
    assert t.c("a")["hp"] == 34  # the refused attack changed nothing


def test_b_sw_23_second_wind_is_a_standard_action_in_an_encounter(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    start(t, {"hero": 20, "a": 1})
    StellarWindsCommands(t.app).deal_damage(t.cid, "hero", amount=20)
    act(t, "hero", "standard")
    with pytest.raises(DomainError) as info:
        StellarWindsCommands(t.app).second_wind(t.cid, "hero")
    assert info.value.code == "NO_ACTION_LEFT"
    assert t.c("hero")["second_wind_used"] is False


# ------------------------------------------------------ delay and ready
def test_sw_11_delay_and_reenter_rewrite_the_initiative(t: Table) -> None:
    """B-SW-30: the cut Delay bullets follow the 4E-DEFAULT of SW-11.
    SW-11 with ruling 18: the delaying creature re-enters in the moment after a turn ended."""
    start(t, {"a": 20, "b": 15, "c": 10})
    out = rec(t, "TurnDelayed", encounter_id=ENC, creature="a")
    assert out["turn_of"] is None and out["next_turn_of"] == "b" and enc(t)["delayed"] == ["a"]
    start_turn(t)
    end_turn(t)  # b -> c
    refused(t, "TURN_IN_PROGRESS", "DelayedTurnTaken", encounter_id=ENC, creature="a")  # not before c's end
    rec(t, "TurnEnded", encounter_id=ENC)
    out = rec(t, "DelayedTurnTaken", encounter_id=ENC, creature="a")
    assert out["order"] == ["b", "c", "a"] and enc(t)["turn_of"] == "a"
    assert out["acts_after"] == "c" and out["turns"][-1]["resumed_delayed_turn"] is True
    act(t, "a", "standard")
    refused(t, "ALREADY_ACTED", "TurnDelayed", encounter_id=ENC, creature="a")
    out = end_turn(t)
    assert (out["round_now"], out["turn_of"]) == (2, "b")
    assert enc(t)["order"] == ["b", "c", "a"]


def test_sw_11_a_delayed_turn_not_taken_is_lost_when_the_count_comes_round(t: Table) -> None:
    start(t, {"a": 20, "b": 15, "c": 10})
    rec(t, "TurnDelayed", encounter_id=ENC, creature="a")
    start_turn(t)
    end_turn(t)
    out = end_turn(t)  # c ends; round 2 reaches a's old count
    assert out["turn_of"] == "a" and out["round_now"] == 2
    assert out["turns"][0]["lost_delayed_turn"] is True
    assert enc(t)["delayed"] == [] and enc(t)["order"] == ["a", "b", "c"]


def test_sw_12_ready_and_trigger_move_the_initiative_before_the_trigger(t: Table) -> None:
    start(t, {"a": 20, "b": 15, "c": 10})
    rec(t, "ActionReadied", encounter_id=ENC, creature="a", action="standard", trigger="c moves")
    refused(t, "NO_ACTION_LEFT", "ActionTaken", encounter_id=ENC, creature="a", action="standard", name="x")
    end_turn(t)
    end_turn(t)
    out = rec(t, "ReadiedActionTriggered", encounter_id=ENC, creature="a", trigger_creature="c")
    assert out["order"] == ["b", "a", "c"] and enc(t)["turn_of"] == "c"
    refused(t, "IMMEDIATE_USED", "ActionTaken", encounter_id=ENC, creature="a", action="immediate", name="x")
    out = end_turn(t)
    assert (out["round_now"], out["turn_of"]) == (2, "b")
    assert end_turn(t)["turn_of"] == "a"


# ------------------------------------------------------ durations (SW-44)
def test_sw_44_b_x_2_until_end_of_x_next_turn_expires_exactly(t: Table) -> None:
    start(t, {"a": 20, "b": 15, "c": 10})
    # during a's turn: "until the end of a's next turn" (anchor: the creator), and of b's next turn
    e_a = effect(t, "c", "a", {"defense_mod": {"defense": "all", "value": -2}}, kind="until_end_of_turn")
    e_b = effect(t, "c", "a", {"condition": "slowed"}, kind="until_end_of_turn", anchor="b")
    effect(t, "c", "a", {"condition": "prone"}, kind="until_end_of_turn", next=False)  # this turn only
    e_start = effect(t, "c", "a", {"condition": "dazed"}, kind="until_start_of_turn")
    end_turn(t)  # end of a's turn 1: only "end of this turn" ends
    assert effect_ids(t, "c") == {e_a, e_b, e_start}
    end_turn(t)  # end of b's turn 1: b's next turn was this one
    assert effect_ids(t, "c") == {e_a, e_start}
    out = end_turn(t)  # c ends; round 2: a's turn starts
    assert effect_ids(t, "c") == {e_a}
    assert out["turns"][-1]["effects_ended"][0]["effect_id"] == e_start
    end_turn(t)  # end of a's next turn
    assert effect_ids(t, "c") == set()


def test_sw_44_effect_applied_before_anchor_turn_ends_at_that_turn(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    e = effect(t, "a", "b", {"condition": "slowed"}, kind="until_end_of_turn")  # on a's turn, anchor b
    end_turn(t)
    assert e in effect_ids(t, "a")
    end_turn(t)
    assert e not in effect_ids(t, "a")


def test_sw_11_beneficial_effect_ends_when_its_anchor_delays(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    rec(
        t,
        "EffectApplied",
        target="a",
        source="a",
        effect={
            "name": "inspired",
            "beneficial": True,
            "components": [{"attack_mod": {"value": 1}}],
            "duration": {"kind": "until_end_of_turn"},
        },
    )
    end_turn(t)
    end_turn(t)  # a's next turn starts
    out = rec(t, "TurnDelayed", encounter_id=ENC, creature="a")
    assert [x["name"] for x in out["effects_ended"]] == ["inspired"]


def test_sw_44_sustained_effect_lapses_unless_sustained(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    e = effect(t, "b", "a", {"condition": "immobilized"}, kind="sustained", action="minor")
    refused(t, "NOT_YET", "EffectSustained", effect_id=e, action="minor")
    end_turn(t)
    end_turn(t)
    refused(t, "WRONG_ACTION", "EffectSustained", effect_id=e, action="move")
    rec(t, "EffectSustained", effect_id=e, action="minor")
    refused(t, "ALREADY_SUSTAINED", "EffectSustained", effect_id=e, action="minor")
    assert enc(t)["actions_this_turn"] == ["minor"]
    end_turn(t)
    assert e in effect_ids(t, "b")
    end_turn(t)
    out = end_turn(t)  # a did not sustain it this turn
    assert [x["effect_id"] for x in out["sustained_lapsed"]] == [e]


def test_b_sw_24_end_of_encounter_effects_end_and_milestone(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    for n in (1, 2):
        rec(t, "EncounterStarted", encounter_id=f"x{n}", participants=["hero", "a"])
        rec(t, "InitiativeRolled", encounter_id=f"x{n}", creature="hero", roll=d20(20))
        rec(t, "InitiativeRolled", encounter_id=f"x{n}", creature="a", roll=d20(1))
        rec(
            t,
            "EffectApplied",
            target="a",
            source="hero",
            effect={
                "name": "hex",
                "components": [{"condition": "weakened"}],
                "duration": {"kind": "end_of_encounter"},
            },
        )
        out = rec(t, "EncounterEnded", encounter_id=f"x{n}", outcome="victory")
        assert [x["name"] for x in out["effects_ended"]] == ["hex"]
        assert t.c("a")["effects"] == []
    assert out["milestone"] == ["hero"] and t.c("hero")["action_points"] == 2


def test_sw_44_end_of_encounter_effect_ends_after_the_round_limit(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    t.app.set_flag(t.cid, "sw.end_of_encounter_rounds", 2)
    e = effect(t, "b", "a", {"condition": "slowed"}, kind="end_of_encounter")
    end_turn(t)
    end_turn(t)  # round 2 starts
    assert e in effect_ids(t, "b")
    end_turn(t)
    end_turn(t)  # round 3 starts: 2 rounds after round 1
    assert e not in effect_ids(t, "b")


# -------------------------------------- ongoing damage, regeneration, saves
def test_sw_47_only_highest_ongoing_per_type_across_turns_with_saves(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    fire5 = effect(t, "b", "a", {"ongoing": {"type": "fire", "amount": 5}}, name="fire 5")
    fire10 = effect(t, "b", "a", {"ongoing": {"type": "fire", "amount": 10}}, name="fire 10")
    poison = effect(t, "b", "a", {"ongoing": {"type": "poison", "amount": 5}}, name="poison 5")
    refused(t, "NOT_YOUR_TURN", "SavingThrowRolled", creature="b", effect_id=fire10, roll=d20(15))
    out = end_turn(t)  # b's turn starts: 10 fire (not 15) and 5 poison
    ticks = {x["type"]: x for x in out["turns"][-1]["ongoing_damage"]}
    assert (ticks["fire"]["amount"], ticks["fire"]["effect_id"], ticks["poison"]["amount"]) == (10, fire10, 5)
    assert t.c("b")["hp"] == 25
    refused(t, "NOT_AFFECTED", "SavingThrowRolled", creature="a", effect_id=fire10, roll=d20(15))
    save = rec(t, "SavingThrowRolled", creature="b", effect_id=fire10, roll=d20(12))
    assert save["success"] is True
    refused(t, "NOT_FOUND", "SavingThrowRolled", creature="b", effect_id=fire10, roll=d20(12))
    assert rec(t, "SavingThrowRolled", creature="b", effect_id=poison, roll=d20(9))["success"] is False
    refused(t, "ALREADY_SAVED", "SavingThrowRolled", creature="b", effect_id=poison, roll=d20(19))
    refused(t, "ROLLS_PENDING", "TurnEnded", encounter_id=ENC)  # C1.2: every save-ends effect is saved
    assert rec(t, "SavingThrowRolled", creature="b", effect_id=fire5, roll=d20(3))["success"] is False
    end_turn(t)
    out = end_turn(t)  # b's next turn: the other fire effect (5) now applies, and the poison
    ticks = {x["type"]: x for x in out["turns"][-1]["ongoing_damage"]}
    assert (ticks["fire"]["amount"], ticks["fire"]["effect_id"], ticks["poison"]["amount"]) == (5, fire5, 5)
    assert t.c("b")["hp"] == 15


def test_sw_47_ongoing_damage_is_resisted_halved_if_insubstantial_never_wounding(t: Table) -> None:
    creature(t, "ghost", resist={"fire": 2})
    start(t, {"a": 20, "ghost": 15})
    effect(t, "ghost", "a", {"ongoing": {"type": "fire", "amount": 10}})
    effect(t, "ghost", "a", {"condition": "insubstantial"}, kind="until_removed")
    effect(t, "a", "a", {"condition": "weakened"}, kind="until_removed")  # the source weakened: no effect
    out = end_turn(t)
    tick = out["turns"][-1]["ongoing_damage"][0]
    assert (tick["amount"], tick["wounding"]) == (3, False)  # 10 -> 5 (insubstantial) -> 3 (resist 2)


def test_b_sw_28_ongoing_damage_overflows_into_wounds(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    StellarWindsCommands(t.app).deal_damage(t.cid, "b", amount=38)
    effect(t, "b", "a", {"ongoing": {"type": "untyped", "amount": 5}})
    out = end_turn(t)
    tick = out["turns"][-1]["ongoing_damage"][0]
    assert (tick["hp_lost"], tick["wounds_lost"]) == (2, 3)


def test_sw_39_b_sw_22_regeneration_largest_source_capped_not_at_zero_hp(t: Table) -> None:
    """SW-38: only the largest regeneration applies, capped at max HP, none at 0 HP."""
    creature(t, "troll", regeneration=3)
    start(t, {"a": 20, "troll": 15})
    StellarWindsCommands(t.app).deal_damage(t.cid, "troll", amount=10)
    effect(t, "troll", "troll", {"regeneration": 8}, kind="until_removed")
    out = end_turn(t)
    assert out["turns"][-1]["regeneration"] == {"amount": 8, "hp_healed": 8}
    end_turn(t)
    out = end_turn(t)
    assert out["turns"][-1]["regeneration"] == {"amount": 8, "hp_healed": 2}  # capped at max HP
    end_turn(t)
    StellarWindsCommands(t.app).deal_damage(t.cid, "troll", amount=41)  # 0 HP, wounds left
    out = end_turn(t)
    assert "regeneration" not in out["turns"][-1]


def test_sw_45_sw_46_save_ends_all_components_and_aftereffect_begins_at_turn_end(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    out = rec(
        t,
        "EffectApplied",
        target="b",
        source="a",
        effect={
            "name": "venom",
            "components": [{"condition": "slowed"}, {"ongoing": {"type": "poison", "amount": 5}}],
            "duration": {"kind": "save_ends"},
            "aftereffect": {
                "name": "weakness",
                "components": [{"condition": "weakened"}],
                "duration": {"kind": "save_ends"},
            },
        },
    )
    venom = out["effect_id"]
    end_turn(t)
    refused(
        t,
        "NOT_SAVE_ENDS",
        "SavingThrowRolled",
        creature="b",
        effect_id=effect(t, "b", "a", {"condition": "prone"}, kind="until_removed"),
        roll=d20(15),
    )
    save = rec(t, "SavingThrowRolled", creature="b", effect_id=venom, roll=d20(10))
    assert save["success"] and save["aftereffect"]["pending"] is True
    conds = t.c("b")["conditions"]
    assert "slowed" not in conds and "weakened" not in conds  # both components gone; aftereffect not yet
    refused(
        t,
        "NOT_ACTIVE",
        "SavingThrowRolled",
        creature="b",
        effect_id=save["aftereffect"]["effect_id"],
        roll=d20(20),
    )
    out = end_turn(t)
    assert out["aftereffects_began"] == [save["aftereffect"]["effect_id"]]
    assert "weakened" in t.c("b")["conditions"]


# ------------------------------------------------------------ dying (SW-42)
def test_b_sw_8_dying_pc_death_saves_across_three_rounds_then_dead(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    start(t, {"a": 20, "hero": 10})
    StellarWindsCommands(t.app).deal_damage(t.cid, "hero", amount=40 + 12 + 1)
    assert t.c("hero")["life"] == "dying"
    refused(t, "NOT_YOUR_TURN", "DeathSavingThrowRolled", creature="hero", roll=d20(3))
    for round_no in (1, 2, 3):
        end_turn(t)  # a ends; the dying hero's turn still starts (SW-6)
        assert enc(t)["turn_of"] == "hero" and enc(t)["round"] == round_no
        StellarWindsCommands(t.app).death_save(t.cid, "hero", face=4)
        assert t.c("hero")["death_save_failures"] == round_no
        end_turn(t)
    assert t.c("hero")["life"] == "dead"
    out = end_turn(t)  # a ends; the dead hero's turn is skipped
    assert out["turn_of"] == "a" and out["round_now"] == 5


def test_b_sw_8_a_dying_turn_owes_exactly_one_death_save_before_it_ends(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    start(t, {"a": 20, "hero": 10})
    StellarWindsCommands(t.app).deal_damage(t.cid, "hero", amount=40 + 12 + 1)
    end_turn(t)
    assert enc(t)["turn_of"] == "hero"
    refused(t, "ROLLS_PENDING", "TurnEnded", encounter_id=ENC)
    StellarWindsCommands(t.app).death_save(t.cid, "hero", face=12)
    refused(t, "ALREADY_ROLLED", "DeathSavingThrowRolled", creature="hero", roll=d20(20))
    end_turn(t)
    assert enc(t)["turn_of"] == "a"


def test_sw_6_a_creature_killed_by_ongoing_damage_at_turn_start_loses_its_turn(t: Table) -> None:
    start(t, {"a": 20, "b": 15, "c": 10})
    StellarWindsCommands(t.app).deal_damage(
        t.cid, "b", amount=40 + 12 - 1
    )  # monsters die at 0 wounds (B-SW-13)
    effect(t, "b", "a", {"ongoing": {"type": "fire", "amount": 5}})
    out = end_turn(t)
    assert t.c("b")["life"] == "dead"
    assert out["turn_of"] == "c"


# ------------------------------------------------------- corrections (C0.5)
def test_c0_6_revoking_an_effect_refolds_the_derived_ongoing_ticks(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    effect(t, "b", "a", {"ongoing": {"type": "fire", "amount": 5}})
    applied = t.position
    end_turn(t)
    assert t.c("b")["hp"] == 35
    t.app.revoke(t.cid, applied, reason="the fire missed")
    assert t.c("b")["hp"] == 40
    assert t.summary()["orphans"] == {}


def test_summary_shows_round_turn_order_initiative_surprise_and_effects(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    e = effect(t, "b", "a", {"condition": "slowed"}, kind="until_end_of_turn")
    view = enc(t)
    assert (view["round"], view["turn_of"], view["order"]) == (1, "a", ["a", "b"])
    assert view["initiative"]["a"]["score"] == 20
    assert view["effects"][0]["effect_id"] == e and view["effects"][0]["duration"]["anchor"] == "a"


# ------------------------------------------------------------- properties
class Harness:
    """The ledger directly (no store): record = check against the present, then append."""

    def __init__(self) -> None:
        self.ledger = Ledger(get_ruleset("stellar-winds"))

    def rec(self, fact_type: str, **payload: Any) -> dict[str, Any]:
        p = facts.validate(fact_type, payload)
        outcome: dict[str, Any] = self.ledger.prepare(fact_type, p, {})
        self.ledger.append(Entry(self.ledger.next_seq, fact_type, facts.version(fact_type), p, {}))
        return outcome


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("end"), st.just(0), st.just(0)),
        st.tuples(st.just("start"), st.just(0), st.just(0)),
        st.tuples(st.just("start"), st.just(0), st.just(0)),
        st.tuples(st.just("delay"), st.just(0), st.just(0)),
        st.tuples(st.just("reenter"), st.integers(0, 3), st.just(0)),
        st.tuples(st.just("ready"), st.just(0), st.just(0)),
        st.tuples(st.just("trigger"), st.integers(0, 3), st.integers(0, 3)),
        st.tuples(st.sampled_from(["end_effect", "start_effect"]), st.integers(0, 3), st.integers(0, 3)),
    ),
    min_size=15,
    max_size=60,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 4), faces=st.permutations(list(range(1, 21))), ops=OPS)
def test_property_sw_2_sw_11_sw_12_sw_44_order_stays_a_permutation_and_next_turn_effects_end_exactly(
    n: int, faces: list[int], ops: list[tuple[str, int, int]]
) -> None:
    """Whatever the table does (turns started and ended, delays, re-entries in the moment between
    turns, readied actions): the order stays a permutation of the participants, at most one
    turn is in progress, every "until the start / end of X's next turn" effect ends exactly
    when an oracle says (SW-44), and folding the facts afresh gives the same state (C0.5)."""
    h = Harness()
    who = [f"m{i}" for i in range(n)]
    for cid in who:
        h.rec(
            "CreatureRegistered",
            creature_id=cid,
            name=cid,
            kind="monster",
            level=1,
            abilities=ABILITIES,
            max_hp=40,
            defenses=MONSTER_DEFENSES,
        )
    h.rec("EncounterStarted", encounter_id=ENC, participants=who)
    for cid, face in zip(who, faces, strict=False):
        h.rec("InitiativeRolled", encounter_id=ENC, creature=cid, roll=d20(face))
    # the oracle: who is delaying, and each effect's status
    delayed: set[str] = set()
    live: dict[str, dict[str, Any]] = {}  # effect id -> {anchor, kind, armed}

    def state() -> Any:
        return h.ledger.state

    def turn_end(cid: str, gone: set[str]) -> None:
        for eid, e in live.items():
            if e["anchor"] == cid and e["kind"] == "until_end_of_turn" and e["armed"]:
                gone.add(eid)

    def turn_start(cid: str, gone: set[str]) -> None:
        for eid, e in live.items():
            if e["anchor"] == cid and eid not in gone:
                if e["kind"] == "until_start_of_turn":
                    gone.add(eid)
                else:
                    e["armed"] = True

    for op, i, j in ops:
        enc_state = state().encounters[ENC]
        current = enc_state.current
        gone: set[str] = set()
        try:
            if op == "end":
                h.rec("TurnEnded", encounter_id=ENC)
                turn_end(current, gone)
            elif op == "start":
                h.rec("TurnStarted", encounter_id=ENC)
                nxt = state().encounters[ENC].current
                if nxt in delayed:  # lost delayed turn: it ends, then a new turn starts
                    delayed.discard(nxt)
                    turn_end(nxt, gone)
                turn_start(nxt, gone)
            elif op == "delay":
                h.rec("TurnDelayed", encounter_id=ENC, creature=current or who[0])
                delayed.add(current)
            elif op == "reenter":
                pool = sorted(delayed) or who
                target = pool[i % len(pool)]
                h.rec("DelayedTurnTaken", encounter_id=ENC, creature=target)
                delayed.discard(target)  # a resumed turn: no new start
            elif op == "ready":
                h.rec(
                    "ActionReadied",
                    encounter_id=ENC,
                    creature=current or who[0],
                    action="standard",
                    trigger="t",
                )
            elif op == "trigger":
                pool = sorted(enc_state.readied) or who
                h.rec(
                    "ReadiedActionTriggered",
                    encounter_id=ENC,
                    creature=pool[i % len(pool)],
                    trigger_creature=who[j % n],
                )
            else:
                kind = "until_end_of_turn" if op == "end_effect" else "until_start_of_turn"
                out = h.rec(
                    "EffectApplied",
                    target=who[j % n],
                    source=who[i % n],
                    effect={"components": [{"condition": "slowed"}], "duration": {"kind": kind}},
                )
                live[out["effect_id"]] = {"anchor": who[i % n], "kind": kind, "armed": False}
        except DomainError:
            continue
        for eid in gone:
            del live[eid]
        enc_state = state().encounters[ENC]
        assert sorted(enc_state.order) == sorted(who)
        assert (enc_state.phase == "in_turn") == (enc_state.current in who)
        present = {e["effect_id"] for c in state().creatures.values() for e in c.effects}
        assert present == set(live), (op, present, set(live))
    fresh = Ledger(get_ruleset("stellar-winds"))
    for e in h.ledger.entries:
        fresh.append(Entry(e.seq, e.type, e.version, e.payload, e.meta))
    sw = get_ruleset("stellar-winds")
    assert summary(sw, fresh.state) == summary(sw, h.ledger.state)


def test_sw_44_overlapping_effects_condition_lasts_while_either_does(t: Table) -> None:
    start(t, {"a": 20, "b": 15})
    short = effect(t, "b", "a", {"condition": "slowed"}, kind="until_end_of_turn", next=False)
    effect(t, "b", "a", {"condition": "slowed"}, kind="save_ends")
    end_turn(t)
    assert short not in effect_ids(t, "b")
    assert "slowed" in t.c("b")["conditions"]


def test_b_sw_29_dazed_creature_may_spend_an_action_point_for_a_second_action(make_table: Any) -> None:
    t: Table = make_table()
    creature(t, "hero", kind="pc")
    creature(t, "a")
    start(t, {"hero": 20, "a": 1})
    effect(t, "hero", "a", {"condition": "dazed"})
    act(t, "hero", "standard")
    refused(t, "DAZED_ONE_ACTION", "ActionTaken", encounter_id=ENC, creature="hero", action="move", name="x")
    rec(t, "ActionPointSpent", creature="hero", use="extra_move")
    act(t, "hero", "move")


def test_c0_5_revoking_a_delay_orphans_the_reentry_and_keeps_the_order(t: Table) -> None:
    start(t, {"a": 20, "b": 15, "c": 10})
    rec(t, "TurnDelayed", encounter_id=ENC, creature="a")
    delay = t.position
    start_turn(t)
    b_started = t.position
    rec(t, "TurnEnded", encounter_id=ENC)
    rec(t, "DelayedTurnTaken", encounter_id=ENC, creature="a")
    reentry = t.position
    t.app.revoke(t.cid, delay, reason="a did not delay")
    # a's turn was still in progress: b's start no longer holds, a's turn ended, and a never delayed
    orphans = t.summary()["orphans"]
    assert str(reentry) in orphans and str(b_started) in orphans
    view = enc(t)
    assert view["order"] == ["a", "b", "c"] and view["delayed"] == []
    assert (view["turn_of"], view["next_turn_of"], view["phase"]) == (None, "b", "between_turns")
