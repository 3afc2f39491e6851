"""RULES.md ruling 18 in Stellar Winds (issue 14, "Turn boundaries"): a start of turn is its own fact.

Ending a turn does not start the next; between the two the state can be read; the next
creature's start-of-turn steps (ongoing damage, SW-7) happen at its TurnStarted; the round
advances at the first start of the new round; the rolls a turn owes come with their dice, and
the server rolls them only when asked, all in one table action.
"""

from __future__ import annotations

from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from domain import dice
from domain.errors import DomainError
from domain.rulesets import get_ruleset, narrator_for
from tests.unit.conftest import ABILITIES, MONSTER_DEFENSES, Table

ENC = "e1"


def d20(face: int) -> dict[str, Any]:
    return dice.roll("1d20", faces=[face])


def rec(t: Table, fact_type: str, **payload: Any) -> dict[str, Any]:
    outcome: dict[str, Any] = t.app.record(t.cid, fact_type, payload).outcome
    return outcome


def refused(t: Table, code: str, call: Any, *args: Any, **kwargs: Any) -> DomainError:
    position, stored = t.position, t.store_max()
    with pytest.raises(DomainError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, info.value.message
    assert (t.position, t.store_max()) == (position, stored)
    return info.value


def enc(t: Table) -> dict[str, Any]:
    view: dict[str, Any] = t.summary()["encounters"][ENC]
    return view


@pytest.fixture
def t(make_table: Any) -> Table:
    """Imp (initiative 20) and Hob (10), level-1 monsters with 40 HP and initiative bonus 0."""
    table: Table = make_table()
    for cid in ("imp", "hob"):
        StellarWindsCommands(table.app).register_creature(
            table.cid,
            creature_id=cid,
            name=cid.title(),
            kind="monster",
            level=1,
            abilities={**ABILITIES, "dex": 10},
            max_hp=40,
            defenses=dict(MONSTER_DEFENSES),
        )
    rec(table, "EncounterStarted", encounter_id=ENC, participants=["imp", "hob"])
    rec(table, "InitiativeRolled", encounter_id=ENC, creature="imp", roll=d20(20))
    rec(table, "InitiativeRolled", encounter_id=ENC, creature="hob", roll=d20(10))
    return table


def burn(t: Table, target: str, source: str, amount: int = 5) -> str:
    out = rec(
        t,
        "EffectApplied",
        target=target,
        source=source,
        effect={
            "name": f"fire {amount}",
            "components": [{"ongoing": {"type": "fire", "amount": amount}}],
            "duration": {"kind": "save_ends"},
        },
    )
    return str(out["effect_id"])


def test_ruling_18_ending_the_imps_turn_does_not_burn_the_next_creature_yet(t: Table) -> None:
    """Issue 14: ending the imp's turn used to apply the next creature's ongoing damage."""
    view = enc(t)
    assert (view["state"], view["phase"], view["turn_of"], view["next_turn_of"]) == (
        "running",
        "between_turns",
        None,
        "imp",
    )
    t.start_turn(ENC)
    fire = burn(t, "hob", "imp")
    ended = t.end_turn(ENC)
    assert [f["type"] for f in ended.facts] == ["TurnEnded"]
    assert ended.outcome["turn_of"] is None and ended.outcome["next_turn_of"] == "hob"
    assert "turns" not in ended.outcome and t.c("hob")["hp"] == 40  # nothing ticked at the end
    view = enc(t)
    assert (view["phase"], view["turn_of"], view["next_turn_of"]) == ("between_turns", None, "hob")
    started = t.start_turn(ENC, "hob")
    tick = started.outcome["turns"][-1]["ongoing_damage"][0]
    assert (tick["effect_id"], tick["amount"]) == (fire, 5)
    assert t.c("hob")["hp"] == 35  # SW-7 (a): at the start of Hob's turn


def test_ruling_18_the_round_advances_at_the_first_start_of_the_new_round(t: Table) -> None:
    """SW-1 (6): the next round begins with the highest initiative.
    Issue 14: ending the last turn of round 1 used to show round 2."""
    t.start_turn(ENC)
    t.end_turn(ENC)
    t.start_turn(ENC)
    ended = t.end_turn(ENC)
    assert ended.outcome["round_now"] == 1 and enc(t)["round"] == 1
    assert enc(t)["next_turn_starts_round"] == 2
    started = t.start_turn(ENC)
    assert (started.outcome["round_now"], started.outcome["turn_of"]) == (2, "imp")


def test_sw_10_ruling_18_end_turn_refuses_silent_dice_and_takes_the_saves_in_the_chosen_order(
    t: Table,
) -> None:
    t.start_turn(ENC)
    t.end_turn(ENC)
    first = burn(t, "hob", "imp", 5)
    second = rec(
        t,
        "EffectApplied",
        target="hob",
        source="imp",
        effect={"name": "slow", "components": [{"condition": "slowed"}], "duration": {"kind": "save_ends"}},
    )["effect_id"]
    t.start_turn(ENC)
    err = refused(t, "ROLLS_PENDING", t.end_turn, ENC)
    assert err.details is not None
    assert [(o["type"], o["creature"], o["effect_id"], o["dice"]) for o in err.details["owed"]] == [
        ("SavingThrowRolled", "hob", first, "1d20"),
        ("SavingThrowRolled", "hob", second, "1d20"),
    ]
    assert t.pending_rolls() == err.details["owed"]
    # a roll the turn does not owe is refused, and nothing is stored
    refused(t, "INVALID_INPUT", t.end_turn, ENC, [{"effect_id": "e999", "faces": [10]}])
    # only part of the dice: still refused, nothing stored (one table action, all or nothing)
    refused(t, "ROLLS_PENDING", t.end_turn, ENC, [{"effect_id": second, "faces": [10]}])
    # the player chooses the order (SW-45): the slow first (10: saved), then the fire (9: not)
    done = t.end_turn(ENC, [{"effect_id": second, "faces": [10]}, {"effect_id": first, "faces": [9]}])
    assert [(f["type"], f["payload"].get("effect_id")) for f in done.facts] == [
        ("SavingThrowRolled", second),
        ("SavingThrowRolled", first),
        ("TurnEnded", None),
    ]
    assert [o.get("success") for o in done.outcomes[:2]] == [True, False]
    assert len({t.ledger.entry(p).meta["correlation_id"] for p in done.positions}) == 1  # one table action


def test_ruling_18_the_server_rolls_only_when_asked_and_start_next_records_both_facts(t: Table) -> None:
    t.start_turn(ENC)
    burn(t, "imp", "hob")
    done = t.end_turn(ENC, server_rolls=True, start_next=True)
    assert [f["type"] for f in done.facts] == ["SavingThrowRolled", "TurnEnded", "TurnStarted"]
    roll = done.facts[0]["payload"]["roll"]
    assert not roll.get("manual") and len(roll["terms"][0]["faces"]) == 1  # rolled by the server
    assert done.outcome["turn_of"] == "hob"
    meta = [t.ledger.entry(p).meta.get("correlation_id") for p in done.positions]
    assert len(set(meta)) == 1 and meta[0]  # one table action


def test_sw_5_surprised_creatures_are_skipped_at_turn_started_in_round_0_only(make_table: Any) -> None:
    t: Table = make_table()
    for cid in ("imp", "hob"):
        StellarWindsCommands(t.app).register_creature(
            t.cid,
            creature_id=cid,
            name=cid.title(),
            kind="monster",
            level=1,
            abilities={**ABILITIES, "dex": 10},
            max_hp=40,
            defenses=dict(MONSTER_DEFENSES),
        )
    rec(t, "EncounterStarted", encounter_id=ENC, participants=["imp", "hob"])
    rec(t, "SurpriseDetermined", encounter_id=ENC, surprised=["imp"])
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="imp", roll=d20(20))
    rec(t, "InitiativeRolled", encounter_id=ENC, creature="hob", roll=d20(10))
    assert enc(t)["next_turn_of"] == "hob" and enc(t)["round"] == 0  # imp is surprised
    started = t.start_turn(ENC)
    assert started.outcome["turns"][0] == {"creature": "imp", "skipped": "surprised (SW-5)"}
    assert started.outcome["turn_of"] == "hob"
    t.end_turn(ENC)
    started = t.start_turn(ENC)
    assert (started.outcome["round_now"], started.outcome["turn_of"]) == (1, "imp")
    assert "surprised" not in t.c("imp")["conditions"]


def test_sw_44_until_the_start_of_x_next_turn_applied_between_turns_ends_at_xs_next_start(t: Table) -> None:
    t.start_turn(ENC)
    t.end_turn(ENC)  # between Imp's turn and Hob's
    out = rec(
        t,
        "EffectApplied",
        target="imp",
        source="hob",
        effect={
            "name": "guard",
            "components": [{"defense_mod": {"value": 2}}],
            "duration": {"kind": "until_start_of_turn"},
        },
    )
    t.start_turn(ENC)  # Hob's start: the anchor's next turn start ends it
    assert out["effect_id"] not in {e["effect_id"] for e in t.c("imp")["effects"]}


def test_the_log_narrates_turn_starts_and_ends_from_the_core(t: Table) -> None:
    narrator = narrator_for(get_ruleset("stellar-winds"))
    state = t.ledger.state
    started = t.start_turn(ENC)
    assert (
        narrator.sentence("TurnStarted", {"encounter_id": ENC}, started.outcome, state)
        == "Imp's turn starts."
    )
    ended = t.end_turn(ENC)
    assert narrator.sentence("TurnEnded", {"encounter_id": ENC}, ended.outcome, state) == "Imp's turn ends."
    group = {"encounter_id": ENC, "group": "goblins", "creatures": ["imp", "hob"], "roll": d20(7)}
    assert narrator.sentence("InitiativeRolled", group, None, state).startswith("goblins (Imp and Hob) rolls")
    assert narrator.sentence("TimeSet", {"day": 2, "hour": 6, "minute": 5}, None, state) == (
        "The clock is set to day 2, 06:05."
    )
