"""Ruling 18 upgrade: turn facts stored before TurnStarted existed fold exactly as they did.

Before ruling 18 a ``TurnEnded`` also started the next creature's turn, ``TurnDelayed`` started
the next one too, the initiative roll that settled the order started the first turn, and
``DelayedTurnTaken`` was recorded during the turn after which the creature re-entered. Those
facts are stored at payload version 1. The core catalogue upcasts them to v2 with the flag
that keeps their meaning (``start_next`` / ``start_turn`` / ``queued``), so an old campaign
folds to the same state, while new facts are v2 and the next turn starts with ``TurnStarted``.

The v1 rows are written straight into the SQLite and PostgreSQL tables (as the previous release
stored them), then read by a freshly opened application. Expected numbers by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service.settings import Settings
from api.service.store import open_application
from domain import dice
from domain.core.catalogue import CORE
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts
from tests.integration.test_upgrade_facts import ABILITIES, DEFENSES, insert_v1

ENC = "e1"


def d20(face: int) -> dict[str, Any]:
    return dice.roll("1d20", faces=[face])


@pytest.mark.parametrize(
    ("fact_type", "v1", "v2"),
    [
        ("TurnEnded", {"encounter_id": ENC}, {"encounter_id": ENC, "start_next": True}),
        (
            "TurnDelayed",
            {"encounter_id": ENC, "creature": "a"},
            {"encounter_id": ENC, "creature": "a", "start_next": True},
        ),
        (
            "DelayedTurnTaken",
            {"encounter_id": ENC, "creature": "a"},
            {"encounter_id": ENC, "creature": "a", "queued": True},
        ),
        (
            "InitiativeTieBroken",
            {"encounter_id": ENC, "creatures": ["a", "b"], "method": "coin"},
            {"encounter_id": ENC, "creatures": ["a", "b"], "method": "coin", "start_turn": True},
        ),
    ],
)
def test_ruling_18_v1_turn_facts_upcast_to_v2_with_their_old_meaning(
    fact_type: str, v1: dict[str, Any], v2: dict[str, Any]
) -> None:
    assert CORE.version(fact_type) == 2 and facts.version(fact_type) == 2
    assert facts.upcast(fact_type, 1, v1) == v2
    assert facts.upcast(fact_type, 2, v2) == v2  # current payloads pass through
    assert facts.validate(fact_type, v2)[next(k for k in v2 if k not in v1)] is True
    new = facts.validate(fact_type, v1)  # a new fact: the flag is off
    assert new[next(k for k in v2 if k not in v1)] is False


def test_a_campaign_stored_before_ruling_18_folds_as_it_did_and_goes_on_with_turn_started(
    store: Settings,
) -> None:
    app = open_application(store)
    try:
        cid = app.create_campaign("Old table")
        for name in ("a", "b", "c"):  # monsters: initiative bonus 0 (level 1, Dex 10)
            StellarWindsCommands(app).register_creature(
                cid,
                creature_id=name,
                name=name.upper(),
                kind="monster",
                level=1,
                abilities={**ABILITIES, "dex": 10},
                max_hp=40,
                defenses=DEFENSES,
            )
    finally:
        app.close()
    fire = {
        "name": "fire",
        "components": [{"ongoing": {"type": "fire", "amount": 5}}],
        "duration": {"kind": "save_ends"},
    }
    # the payloads exactly as the previous release stored them (validated, defaults filled in)
    old_log: list[tuple[str, dict[str, Any]]] = [
        ("EncounterStarted", {"encounter_id": ENC, "name": "Old fight", "participants": ["a", "b", "c"]}),
        ("InitiativeRolled", {"encounter_id": ENC, "creature": "a", "roll": d20(20)}),
        ("InitiativeRolled", {"encounter_id": ENC, "creature": "b", "roll": d20(15)}),
        ("InitiativeRolled", {"encounter_id": ENC, "creature": "c", "roll": d20(10)}),  # v1: a's turn starts
        ("EffectApplied", {"target": "b", "source": "a", "effect": fire}),  # e9
        ("TurnEnded", {"encounter_id": ENC}),  # v1: b's turn starts: the fire deals 5
        ("TurnDelayed", {"encounter_id": ENC, "creature": "b"}),  # v1: c's turn starts
        ("DelayedTurnTaken", {"encounter_id": ENC, "creature": "b"}),  # v1: b goes after c's turn
        ("TurnEnded", {"encounter_id": ENC}),  # v1: b's delayed turn resumes (no second tick)
        (
            "SavingThrowRolled",
            {"creature": "b", "effect_id": "e9", "roll": d20(15), "modifiers": []},
        ),  # the fire ends
        ("TurnEnded", {"encounter_id": ENC}),  # v1: round 2, a's turn starts
    ]
    for position, (fact_type, payload) in enumerate(old_log, start=5):
        insert_v1(store, cid, position, payload, fact_type)

    app = open_application(store)
    try:
        ledger = app.ledger(cid)
        assert ledger.orphans == {}
        assert ledger.entries[-1].payload == {"encounter_id": ENC, "start_next": True}
        view = app.summary(cid)["encounters"][ENC]
        assert (view["turn_of"], view["round"], view["phase"]) == ("a", 2, "in_turn")
        assert view["order"] == ["a", "c", "b"] and view["delayed"] == []
        b = app.creature_state(cid, "b")
        assert b["hp"] == 35 and b["effects"] == []  # one tick of 5 fire, then saved
        outcomes = ledger.outcomes_as_recorded([8, 10, 12, 15])
        assert outcomes[0]["turn_of"] == "a"  # the roll that settled the order started a's turn
        assert outcomes[1]["turns"][-1]["ongoing_damage"][0]["amount"] == 5
        assert outcomes[2]["acts_after"] == "c"
        assert (outcomes[3]["turn_of"], outcomes[3]["round_now"]) == ("a", 2)

        # new facts, v2: the end of a's turn leaves the encounter between turns
        ended = app.end_turn(cid, ENC)
        assert ended.outcome["turn_of"] is None and ended.outcome["next_turn_of"] == "c"
        assert ledger.entries[-1].version == 2 and ledger.entries[-1].payload["start_next"] is False
        started = app.start_turn(cid, ENC)
        assert started.outcome["turn_of"] == "c"
    finally:
        app.close()
    app = open_application(store)  # and the mixed log folds the same from the store
    try:
        view = app.summary(cid)["encounters"][ENC]
        assert (view["turn_of"], view["round"]) == ("c", 2) and app.ledger(cid).orphans == {}
    finally:
        app.close()
