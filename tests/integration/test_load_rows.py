"""A load reads stored facts as plain rows, not the library's events (issue 21, P2).

``ChronicleApplication._read_facts`` reads ``(position, topic, state)`` rows with one plain
statement (PostgreSQL: tuple rows, bytea in binary; SQLite: the same columns) and decodes them
itself (``_json``: orjson where it is exact). The entries must be exactly those the library's
mapper gives for the same stored events -- odd payloads included: unicode, integers past 64
bits, floats, infinities, nested meta -- on both stores, for every page shape a load asks for.
"""

from __future__ import annotations

import json
from typing import Any

from api.service.settings import Settings
from api.service.store import open_application
from domain.ledger import Entry

ODD: list[tuple[dict[str, Any], dict[str, Any]]] = [
    ({"name": 'héros ☄ 𝔘 — \u0000 "quoted" \\ back'}, {"by": "Ünïcode"}),
    ({"big": 2**64 + 1, "neg": -(2**63) - 1, "huge": 10**30 + 7}, {"causation_id": 2}),
    ({"floats": [0.1, -0.0, 1e300, 2.5e-308], "inf": float("inf")}, {}),
    (
        {"digits": "1234567890123456789012", "n": 9_223_372_036_854_775_807},
        {"nested": {"a": [{"b": [None]}]}},
    ),
    ({"ruling_id": "r-1", "nested": {"ruling": "x"}}, {"correlation_id": "c-1", "tags": ["a", "ü"]}),
    ({}, {}),
]


def same(a: Entry, b: Entry) -> bool:
    """Equal entries whose payload and meta have the same JSON types (not merely equal values)."""
    return a == b and json.dumps([a.payload, a.meta]) == json.dumps([b.payload, b.meta])


def test_a_load_reads_plain_rows_that_decode_to_the_library_s_entries(store: Settings) -> None:
    app = open_application(Settings(database_url=store.database_url, snapshot_every=0))
    try:
        campaign = app.new_campaign("Odd payloads", "stellar-winds")
        for k in range(3):
            for payload, meta in ODD:
                campaign.record(Entry(0, "Note", 1 + k, payload, meta))
        app.save(campaign)
        cid = campaign.id
        calls = []
        real = type(app.recorder)

        class Watched(real):  # type: ignore[misc,valid-type]
            def select_events(self, *args: Any, **kwargs: Any) -> Any:
                calls.append(kwargs)
                return super().select_events(*args, **kwargs)

        app.recorder.__class__ = Watched
        for gt, lte, limit in [(1, None, None), (1, None, 5), (4, 12, None), (4, 12, 3), (18, None, 10)]:
            fast = app._read_facts(cid, gt=gt, lte=lte, limit=limit)
            calls_before = len(calls)
            slow = [e.entry() for e in app.events.get(cid, gt=gt, lte=lte, limit=limit)]
            assert len(calls) == calls_before + 1  # the library's read is watched
            assert len(fast) == len(slow) > 0
            assert all(same(f, s) for f, s in zip(fast, slow, strict=True)), (fast, slow)
        assert all(k.get("gt") is not None for k in calls)
        assert len(calls) == 5  # only the comparison's reads: the load's went by plain rows
    finally:
        app.close()
