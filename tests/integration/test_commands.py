"""Every ledger command and correction, through the real store (SQLite and PostgreSQL).

The same play is recorded, then read back by a second application that has
never seen it (so the state comes from the stored facts alone), and the two
must agree exactly.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

import pytest

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from domain.errors import Conflict, DomainError, RuleViolation

ABILITIES = {"str": 12, "con": 14, "dex": 14, "int": 10, "wis": 10, "cha": 10}
DEFENSES = {"ac": 18, "fort": 15, "ref": 15, "will": 14}


def setup(app: ChronicleApplication) -> UUID:
    cid = app.create_campaign("Integration")
    StellarWindsCommands(app).register_creature(
        cid,
        creature_id="traze",
        name="Traze",
        kind="pc",
        level=7,
        abilities=ABILITIES,
        max_hp=48,
        surges_per_day=2,
        defenses=DEFENSES,
    )
    StellarWindsCommands(app).register_creature(
        cid,
        creature_id="goblin",
        name="Goblin",
        kind="monster",
        level=3,
        abilities=ABILITIES,
        max_hp=30,
        defenses=DEFENSES,
        resist={"fire": 5},
    )
    return cid


def play(app: ChronicleApplication, cid: UUID) -> dict[str, int]:
    """One of every ledger command and every correction; returns a few positions."""
    pos = {}
    StellarWindsCommands(app).grant_temporary_hp(cid, "traze", 5, "shield")
    pos["damage"] = StellarWindsCommands(app).deal_damage(cid, "traze", "2d6+3", faces=[4, 6]).position
    StellarWindsCommands(app).heal(cid, "traze", surge_multiplier=1, requires_surge=True, magical=True)
    StellarWindsCommands(app).spend_surge(cid, "traze")
    StellarWindsCommands(app).spend_action_point(cid, "traze")
    app.record_ruling(cid, "r-1", "Is the goblin flanked?", "yes")
    pos["attack"] = (
        StellarWindsCommands(app)
        .attack(
            cid,
            "traze",
            {
                "name": "fireball",
                "kind": "area",
                "defense": "ref",
                "attack_bonus": 7,
                "damage": "3d6+5",
                "damage_types": ["fire"],
            },
            [
                {
                    "target": "goblin",
                    "face": 14,
                    "circumstances": [{"name": "combat_advantage", "ruling": "r-1"}],
                }
            ],
            damage_faces=[4, 6, 2],
        )
        .position
    )
    StellarWindsCommands(app).deal_damage(cid, "traze", amount=65)  # through HP into wounds: dying
    pos["death_save"] = StellarWindsCommands(app).death_save(cid, "traze", face=5).position
    StellarWindsCommands(app).stabilize(cid, "traze", healer=None, check="1d20+5", faces=[12])
    StellarWindsCommands(app).award_xp(cid, ["traze"], 2000, "goblins")
    app.record(cid, "MilestoneReached", {"creatures": ["traze"]})
    StellarWindsCommands(app).restore_wounds(cid, "traze", 1, "long_term_care")
    app.advance_time(cid, 60 * 24)
    StellarWindsCommands(app).extended_rest(cid, ["traze"])
    StellarWindsCommands(app).short_rest(cid, ["traze"])
    StellarWindsCommands(app).second_wind(cid, "traze")
    app.record(cid, "LevelSet", {"creature": "goblin", "level": 4})
    # corrections
    app.contest_ruling(cid, "r-1", "the rogue had moved away")
    app.resolve_ruling(cid, "r-1", "overturned", "no flank")
    rev = app.revoke(cid, pos["damage"], "misread die").position
    app.restore(cid, rev, "it was right after all")
    app.amend(
        cid,
        pos["damage"],
        {"roll": {"terms": [{"sides": 6, "faces": [3, 6], "sign": 1}, {"const": 3}]}},
        "a 3, not a 4",
    )
    app.override(cid, pos["attack"], "hit", False, "GM: it missed")
    app.set_flag(cid, "sw.death_save_failures_to_die", 4)
    return pos


def test_every_command_round_trips_through_the_store(app: ChronicleApplication, store: Settings) -> None:
    cid = setup(app)
    pos = play(app, cid)
    live = app.summary(cid)
    assert live["creatures"]["goblin"]["hp"] == 30  # the overridden miss dealt nothing
    other = open_application(store)
    try:
        assert other.summary(cid) == live
        for p in (pos["damage"], pos["attack"], pos["death_save"]):
            for view in ("corrected", "recorded"):
                assert other.summary(cid, p, view) == app.summary(cid, p, view)
    finally:
        other.close()


def test_a_refused_command_stores_nothing(app: ChronicleApplication) -> None:
    cid = setup(app)
    before = app.recorder.max_notification_id()
    with pytest.raises(RuleViolation) as err:
        StellarWindsCommands(app).second_wind(cid, "goblin")
    assert err.value.code == "NOT_ALLOWED"
    with pytest.raises(DomainError) as bad:
        StellarWindsCommands(app).deal_damage(cid, "traze", amount=-3)
    assert bad.value.code == "INVALID_INPUT"
    with pytest.raises(DomainError) as dice_err:
        StellarWindsCommands(app).deal_damage(cid, "traze", "1000d6")
    assert dice_err.value.code == "INVALID_DICE"
    assert app.recorder.max_notification_id() == before


def test_expected_position_detects_a_stale_client(app: ChronicleApplication) -> None:
    cid = setup(app)
    at = app.ledger(cid).last_seq
    StellarWindsCommands(app).grant_temporary_hp(cid, "traze", 3)
    with pytest.raises(Conflict):
        app.record(cid, "HealingSurgeSpent", {"creature": "traze"}, expected_position=at)


def test_two_writers_cannot_both_spend_the_last_surge(app: ChronicleApplication, store: Settings) -> None:
    """Two applications (two API processes) race for the campaign: one surge, one winner."""
    cid = setup(app)
    StellarWindsCommands(app).spend_surge(cid, "traze")  # one left of two
    second = open_application(store)
    results: list[Any] = []
    barrier = threading.Barrier(2)

    def spend(a: ChronicleApplication) -> None:
        a.ledger(cid)  # warm both caches at the same position
        barrier.wait()
        try:
            results.append(StellarWindsCommands(a).spend_surge(cid, "traze").position)
        except RuleViolation as exc:
            results.append(exc.code)

    try:
        threads = [threading.Thread(target=spend, args=(a,)) for a in (app, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        second.close()
    assert sorted(map(str, results))[-1] == "NO_HEALING_SURGE"
    assert sum(isinstance(r, int) for r in results) == 1
    fresh = open_application(store)
    try:
        assert fresh.creature_state(cid, "traze")["surges"] == 0
    finally:
        fresh.close()


def test_a_repeated_idempotency_key_returns_the_original_result(
    app: ChronicleApplication, store: Settings
) -> None:
    cid = setup(app)
    first = app.record(cid, "DamageTaken", {"target": "traze", "amount": 7}, idempotency_key="k-1")
    again = app.record(cid, "DamageTaken", {"target": "traze", "amount": 7}, idempotency_key="k-1")
    assert again.replayed and again.positions == first.positions and again.outcomes == first.outcomes
    assert app.creature_state(cid, "traze")["hp"] == 48 - 7
    restarted = open_application(store)  # a new process knows the key from the stored facts
    try:
        assert (
            restarted.record(
                cid, "DamageTaken", {"target": "traze", "amount": 7}, idempotency_key="k-1"
            ).positions
            == first.positions
        )
        with pytest.raises(DomainError) as err:
            restarted.record(cid, "DamageTaken", {"target": "traze", "amount": 8}, idempotency_key="k-1")
        assert err.value.code == "IDEMPOTENCY_KEY_REUSED"
        assert restarted.creature_state(cid, "traze")["hp"] == 48 - 7
    finally:
        restarted.close()
