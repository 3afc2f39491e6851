"""The campaign cache is bounded by configuration (issue 21): each campaign holds a window of its
facts, the cache drops least recently used campaigns beyond ``cache_max_facts``, and a dropped
campaign comes back (from its snapshot) reading exactly as before."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from api.service.application import ChronicleApplication
from bench.generator import CampaignGenerator
from domain.rulesets import get_ruleset

HEADER = {"name": "Cache", "ruleset": "stellar-winds", "flags": {}, "meta": {}}


def imported(app: ChronicleApplication, size: int, seed: int) -> UUID:
    gen = CampaignGenerator(size, seed=seed)
    rules = get_ruleset("stellar-winds")
    return app.import_campaign(HEADER, [(t, rules.catalogue.version(t), p, m) for t, p, m in gen.facts()])


def app(**kw: Any) -> ChronicleApplication:
    return ChronicleApplication(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}, **kw)


def test_a_campaign_holds_only_its_window_of_facts_and_reads_the_rest_back() -> None:
    a = app(ledger_window=50)
    cid = imported(a, 400, 1)
    before = a.summary(cid)
    ledger = a.ledger(cid)
    assert ledger.entries.resident <= 50 + 512
    assert len(ledger.entries) == ledger.last_seq - 1 > 300
    early = next(e.seq for e in ledger.entries if e.type == "AttackMade")  # read back from the store
    a.revoke(cid, early, "paged")
    a.restore(cid, a.ledger(cid).last_seq, "paged")
    assert a.summary(cid)["creatures"] == before["creatures"]
    assert ledger.entries.loads > 0


def test_least_recently_used_campaigns_are_dropped_beyond_the_bound_and_come_back_unchanged() -> None:
    a = app(cache_max_facts=500, ledger_window=200, snapshot_every=100)
    ids, seen = [], {}
    for seed in (1, 2, 3):
        cid = imported(a, 250, seed)
        ids.append(cid)
        seen[cid] = a.summary(cid)  # folding reads older facts back: the bound is kept at each load
        a.campaign(cid)
        held = [c.ledger.footprint for _, c in a._cached()]
        assert sum(held) <= 500 or len(held) == 1, held
    assert ids[0] not in [cid for cid, _ in a._cached()]  # the least recently used went first
    assert a.snapshot_writer is not None and a.snapshot_writer.flush(30)
    for cid in ids:
        assert a.summary(cid) == seen[cid]
    assert a.cache_stats["evicted"] >= 1
    assert a.cache_stats["from_snapshot"] >= 1  # a dropped campaign came back from its snapshot
    a.close()


def test_one_campaign_larger_than_the_bound_is_still_served() -> None:
    a = app(cache_max_facts=10, ledger_window=5)
    cid = imported(a, 120, 4)
    assert a.summary(cid)["position"] == a.ledger(cid).last_seq
    assert [c for c, _ in a._cached()] == [cid]
