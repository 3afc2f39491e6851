"""A cold load reads each stored fact once and folds as it reads (issue 21, P2).

A paged ledger keeps only a window of facts in memory. Loading a long campaign by appending
every fact and folding afterwards read every fact outside the window twice: once to append
it, once to fold it. The load now folds as it reads (``Ledger.load``: the fold trails the
newest fact by a look-ahead, so the corrections are known before the facts they reinterpret
are folded). Here the store's own recorder -- a subclass of the real one that counts the rows
it returns -- shows that every position is read exactly once, on SQLite and PostgreSQL, and
the loaded campaign reads exactly like a ledger that folded every fact in memory.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any
from uuid import UUID

import pytest

from api.service import application as service
from api.service.settings import Settings
from api.service.store import open_application
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets import summary as whole_state
from tests.stored_campaigns import generated_facts, stored_campaign

RULES = get_ruleset("stellar-winds")
HEADER = {"name": "Load once", "ruleset": "stellar-winds", "flags": {}, "meta": {}}
FACTS = 2_500
WINDOW = 1_200  # the generated corrections of this campaign reach back less than this
PAGE = 97  # facts per query while loading (a prime: pages never line up with checkpoints)
# a window the generated corrections reach back past (and the late one below, at either): the
# load reads the corrections first (``ChronicleApplication._stored_corrections``), so it still
# folds each fact once, in order, and reads none back
FAR = 40


def counting(app: Any, monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """Make the application's recorder count, per position, the stored events it returns
    (the real recorder's class, subclassed: every read still goes to the store), and the
    plain rows a load reads (``_select_states``, which passes the library's events by)."""
    reads: Counter[int] = Counter()
    real = type(app.recorder)
    select_states = service._select_states

    def states(*args: Any, **kwargs: Any) -> Any:
        rows = list(select_states(*args, **kwargs))
        reads.update(r[0] for r in rows)
        return rows

    monkeypatch.setattr(service, "_select_states", states)

    class Counting(real):  # type: ignore[misc,valid-type]
        def select_events(self, *args: Any, **kwargs: Any) -> Any:
            rows = list(super().select_events(*args, **kwargs))
            reads.update(r.originator_version for r in rows)
            return rows

    app.recorder.__class__ = Counting
    return reads


def folded_in_memory(facts: list[tuple[str, int, dict[str, Any], dict[str, Any]]]) -> Ledger:
    ledger = Ledger(RULES, {}, first_seq=2)
    for seq, (t, v, p, m) in enumerate(facts, start=2):
        ledger.append(Entry(seq, t, v, p, m, ""))
    return ledger


@pytest.mark.parametrize("window", [WINDOW, FAR])
def test_a_cold_load_reads_each_stored_fact_once_and_folds_like_memory(
    store: Settings, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    facts = generated_facts(FACTS, seed=3)
    # and a late revocation of an early action, with its consequences: it reaches back ~2,400
    # facts, past any window here, and orphans what came of it
    early = next(k for k, f in enumerate(facts) if f[0] == "ExperienceAwarded") + 2
    revoke = {"target": early, "reason": "misremembered", "cascade": "consequences"}
    facts.append(("FactRevoked", 1, revoke, {}))
    monkeypatch.setattr(service, "LOAD_PAGE", PAGE)
    # no snapshot: the load folds every fact
    settings, cid = stored_campaign(store.database_url, HEADER, facts, ledger_window=window)
    reference = folded_in_memory(facts)
    assert reference.resolution.revoked and reference.resolution.amended and reference.orphans
    assert reference.resolution.revoked[early] == len(facts) + 1

    app = open_application(settings)
    try:
        reads = counting(app, monkeypatch)
        ledger = app.ledger(cid)  # a cold load: this process never saw the campaign
        state, orphans = ledger.state, dict(ledger.orphans)  # the fold (done by the load)
        assert app.cache_stats["cold_loads"] == 1
        twice = {seq: n for seq, n in reads.items() if n > 1}
        assert not twice, f"{len(twice)} facts read more than once, e.g. {sorted(twice)[:5]}"
        assert set(reads) == set(range(1, len(facts) + 2))  # the campaign's start and every fact
        assert ledger.entries.loads == 0  # the ledger never read a fact back
        assert ledger.entries.resident <= window + 512
        assert whole_state(RULES, state) == whole_state(RULES, reference.state)
        assert orphans == dict(reference.orphans)
        res, ref = ledger.resolution, reference.resolution
        assert (res.revoked, res.amended, res.ruling_values) == (ref.revoked, ref.amended, ref.ruling_values)
    finally:
        app.close()


@pytest.mark.parametrize("fails_after", [3 * PAGE, 1], ids=["a later page", "the first page"])
def test_a_store_error_while_reading_ahead_fails_the_load_and_caches_nothing(
    store: Settings, monkeypatch: pytest.MonkeyPatch, fails_after: int
) -> None:
    """The next page is read on a thread while the current one is folded (the first one while
    the corrections are read): a store that fails on a page fails the load with the store's
    own error (not a hang, not a short campaign), nothing is cached, and the next load reads
    the whole campaign."""
    facts = generated_facts(600, seed=5)
    monkeypatch.setattr(service, "LOAD_PAGE", PAGE)
    settings, cid = stored_campaign(store.database_url, HEADER, facts)

    app = open_application(settings)
    try:
        real = type(app.recorder)
        failing = {"after": fails_after}

        class Failing(real):  # type: ignore[misc,valid-type]
            def select_events(self, *args: Any, **kwargs: Any) -> Any:
                if (kwargs.get("gt") or 0) >= failing["after"]:
                    raise OSError("the store went away")
                return super().select_events(*args, **kwargs)

        app.recorder.__class__ = Failing
        select_states = service._select_states

        def states(recorder: Any, campaign_id: UUID, gt: int | None, *args: Any) -> Any:
            if (gt or 0) >= failing["after"]:
                raise OSError("the store went away")
            return select_states(recorder, campaign_id, gt, *args)

        monkeypatch.setattr(service, "_select_states", states)
        with pytest.raises(OSError, match="the store went away"):
            app.ledger(cid)
        assert cid not in app._campaigns
        failing["after"] = 1 << 62
        ledger = app.ledger(cid)
        assert ledger.last_seq == len(facts) + 1
        assert dict(ledger.orphans) == dict(folded_in_memory(facts).orphans)
    finally:
        app.close()


def test_a_store_error_while_reading_the_corrections_waits_for_the_first_page_and_caches_nothing(
    store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first page is read on a thread while the corrections are read: when their query
    fails, the load fails with its error once the page's read is over (no read left running),
    nothing is cached, and the next load reads the whole campaign."""
    facts = generated_facts(300, seed=5)
    monkeypatch.setattr(service, "LOAD_PAGE", PAGE)
    settings, cid = stored_campaign(store.database_url, HEADER, facts)

    app = open_application(settings)
    try:
        reads: list[str] = []
        select_states = service._select_states
        select_typed = service._select_typed
        failed = threading.Event()

        def states(*args: Any, **kwargs: Any) -> Any:
            reads.append("began")
            rows = list(select_states(*args, **kwargs))
            # the page's read is still running when the corrections fail, and for a while after
            failed.wait(10)
            time.sleep(0.3)
            reads.append("ended")
            return rows

        def typed(*args: Any, **kwargs: Any) -> Any:
            failed.set()
            raise OSError("the store went away")

        monkeypatch.setattr(service, "_select_states", states)
        monkeypatch.setattr(service, "_select_typed", typed)
        with pytest.raises(OSError, match="the store went away"):
            app.ledger(cid)
        assert reads == ["began", "ended"]  # the first page was read, and is over
        assert cid not in app._campaigns
        monkeypatch.setattr(service, "_select_typed", select_typed)
        ledger = app.ledger(cid)
        assert ledger.last_seq == len(facts) + 1
        assert dict(ledger.orphans) == dict(folded_in_memory(facts).orphans)
    finally:
        app.close()
