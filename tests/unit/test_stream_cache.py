"""The subscription stream's cache: what the table saw at a position never changes, so a window
computed once serves every subscriber, even after later corrections."""

from __future__ import annotations

from typing import Any

from api.graphql import data


def test_a_cached_stream_window_equals_a_fresh_computation_after_later_corrections(table: Any) -> None:
    t = table
    first = t.deal_damage("vex", amount=5).position
    second = t.deal_damage("vex", amount=7).position
    window = data.facts_after(t.app, t.cid, first - 1, limit=2)
    assert [f["position"] for f in window] == [first, second]
    assert data.facts_after(t.app, t.cid, first - 1, limit=2) is window  # served from the cache
    t.revoke(first, "misread")  # a later correction: the table saw the damage back then
    with t.app.reading(t.cid) as campaign:
        fresh = data._facts_after(campaign.ledger, first, second)
    assert fresh == window
    assert window[0]["outcome"]["hp_lost"] == 5
