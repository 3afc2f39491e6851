"""Event schema versioning: a fact STORED at an older payload version is read at the current one.

HealingSurgeSpent v1 had a free-text ``cause`` (default "rest"; tables typed "short rest",
"Short-Rest", "potion", "Lay on Hands"...). v2 makes it an enum
(``domain.rulesets.stellar_winds.facts.SURGE_CAUSES``) and keeps any other words in ``note``.
Nothing stored is rewritten: the Stellar Winds catalogue's upcaster runs whenever a v1 fact
is read (the ledger's append), so the campaign, its state, the read models and the exports all see v2.

The v1 rows here are written straight into the store's table with SQL, exactly as the
version before this change stored them (same topic, ``fact_version: 1``), then read by a
freshly opened application.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg import sql

from api.rulesets.stellar_winds.commands import StellarWindsCommands
from api.service import views as wiring
from api.service.settings import Settings
from api.service.store import open_application
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts
from projections.runner import Follower

ABILITIES = {"str": 12, "con": 14, "dex": 14, "int": 10, "wis": 10, "cha": 10}
DEFENSES = {"ac": 16, "fort": 13, "ref": 13, "will": 12}


def v1_state(payload: dict[str, Any], fact_type: str = "HealingSurgeSpent") -> bytes:
    """A FactRecorded event's stored state as the v1 code wrote it (eventsourcing's JSON transcoder)."""
    now = datetime.now(UTC).isoformat()
    return json.dumps(
        {
            "timestamp": {"_type_": "datetime_iso", "_data_": now},
            "fact_type": fact_type,
            "fact_version": 1,
            "payload": payload,
            "meta": {"recorded_at": now},
        },
        separators=(",", ":"),
    ).encode()


def insert_v1(
    store: Settings,
    campaign_id: UUID,
    version: int,
    payload: dict[str, Any],
    fact_type: str = "HealingSurgeSpent",
) -> None:
    """Store a fact at position ``version`` exactly as the release with v1 payloads wrote it."""
    topic = "chronicle:Campaign.FactRecorded"
    db = store.database
    if db.kind == "sqlite":
        with sqlite3.connect(db.path) as conn:
            conn.execute(
                "INSERT INTO stored_events (originator_id, originator_version, topic, state) "
                "VALUES (?, ?, ?, ?)",
                (campaign_id.hex, version, topic, v1_state(payload, fact_type)),
            )
        return
    with psycopg.connect(
        host=db.host, port=db.port, user=db.user, dbname=db.dbname, password=db.password, autocommit=True
    ) as conn:
        conn.execute(
            sql.SQL(
                "INSERT INTO {}.chronicle_events (originator_id, originator_version, topic, state) "
                "VALUES (%s, %s, %s, %s)"
            ).format(sql.Identifier(db.schema)),
            (campaign_id, version, topic, v1_state(payload, fact_type)),
        )


@pytest.mark.parametrize(
    ("v1_cause", "cause", "note"),
    [
        (None, "short_rest", ""),  # v1's default "rest" was never written out when omitted
        ("rest", "short_rest", ""),
        ("short rest", "short_rest", ""),
        ("Short-Rest", "short_rest", ""),
        ("long rest", "extended_rest", ""),
        ("potion", "consumable", ""),
        ("Lay on Hands", "other", "Lay on Hands"),
        ("", "short_rest", ""),
    ],
)
def test_the_upcaster_maps_v1_wordings(v1_cause: str | None, cause: str, note: str) -> None:
    v1 = {"creature": "vex"} if v1_cause is None else {"creature": "vex", "cause": v1_cause}
    v2 = facts.upcast("HealingSurgeSpent", 1, v1)
    assert v2 == {"creature": "vex", "cause": cause, "note": note}
    assert facts.validate("HealingSurgeSpent", v2) == v2  # a valid current payload
    assert facts.upcast("HealingSurgeSpent", 2, v2) == v2  # current payloads pass through


def test_v2_refuses_free_text_causes() -> None:
    with pytest.raises(Exception, match="cause must be one of"):
        facts.validate("HealingSurgeSpent", {"creature": "vex", "cause": "short rest"})


def test_a_stored_v1_fact_is_read_as_v2(store: Settings) -> None:
    app = open_application(store)
    try:
        cid = app.create_campaign("Old table")
        StellarWindsCommands(app).register_creature(
            cid,
            creature_id="vex",
            name="Vex",
            kind="pc",
            level=1,
            abilities=ABILITIES,
            max_hp=30,
            surges_per_day=3,
            defenses=DEFENSES,
        )
        StellarWindsCommands(app).deal_damage(cid, "vex", amount=12)
    finally:
        app.close()
    # Two surges spent under v1, stored by "the previous release" at positions 4 and 5.
    insert_v1(store, cid, 4, {"creature": "vex", "cause": "short rest"})
    insert_v1(store, cid, 5, {"creature": "vex", "cause": "Lay on Hands"})

    app = open_application(store)
    try:
        ledger = app.ledger(cid)
        assert [e.payload for e in ledger.entries[-2:]] == [
            {"creature": "vex", "cause": "short_rest", "note": ""},
            {"creature": "vex", "cause": "other", "note": "Lay on Hands"},
        ]
        vex = app.summary(cid)["creatures"]["vex"]
        assert vex["surges"] == 1  # 3 per day, two spent
        assert vex["hp"] == 30  # 30 - 12 + 7 + 7 (surge value: a quarter of 30, rounded down, is 7)
        # New facts are written at v2 beside the old ones, and the campaign keeps folding.
        recorded = StellarWindsCommands(app).spend_surge(cid, "vex", cause="short_rest")
        assert recorded.facts[0]["payload"] == {"creature": "vex", "cause": "short_rest", "note": ""}
        assert app.summary(cid)["creatures"]["vex"]["surges"] == 0
        # The read models see v2 too.
        views = wiring.open_views(store)
        follower = Follower(app, views)
        try:
            follower.catch_up()
            rows = views.history(str(cid), fact_types=["HealingSurgeSpent"])
        finally:
            follower.close()
            views.close()
        assert [r["payload"] for r in rows][:2] == [
            {"creature": "vex", "cause": "short_rest", "note": ""},
            {"creature": "vex", "cause": "other", "note": "Lay on Hands"},
        ]
    finally:
        app.close()
