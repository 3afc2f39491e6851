"""A long cold load freezes the heap it builds (``gc.freeze()``), and must not freeze garbage with it.

``gc.freeze()`` moves every object the collector tracks -- garbage not yet collected included --
to the permanent generation, where no collection ever reaches it (until an eviction's
``gc.unfreeze()``). So the load collects before each freeze, and freezes nothing while another
thread pauses the collector (a refold holding ``gc_paused``): the reference cycles any thread
drops during the load are freed after it. (Found in review: freezing after each page without a
collection froze 5 of 7 such cycles for good.)"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import pytest

from api.service import application as service
from api.service.settings import Settings
from api.service.store import open_application
from domain.ledger import Ledger
from domain.rulesets import get_ruleset
from tests.stored_campaigns import generated_facts, stored_campaign

RULES = get_ruleset("stellar-winds")
HEADER = {"name": "Freeze", "ruleset": "stellar-winds", "flags": {}, "meta": {}}


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.mark.sqlite
def test_cyclic_garbage_dropped_during_a_cold_load_is_still_collected(
    sqlite_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = generated_facts(600, seed=5)
    monkeypatch.setattr(service, "LOAD_PAGE", 97)
    monkeypatch.setattr(service, "FREEZE_AFTER", 150)
    settings, cid = stored_campaign(sqlite_store.database_url, HEADER, facts)

    app = open_application(settings)
    dropped: list[weakref.ref[Any]] = []
    real = app._read_facts

    def reading(*args: Any, **kwargs: Any) -> Any:
        dropped.append(weakref.ref(Node()))  # what another request drops meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(app, "_read_facts", reading)
    was = gc.isenabled()
    gc.collect()
    gc.disable()  # as while another thread's refold holds gc_paused()
    try:
        app.ledger(cid)  # a cold load of 600 facts: collected and frozen at its end (past 150)
    finally:
        if was:
            gc.enable()
    try:
        gc.collect()
        alive = [r for r in dropped if r() is not None]
        assert len(dropped) >= 5
        assert not alive, f"{len(alive)} of {len(dropped)} dropped cycles were frozen by the load"
    finally:
        app.close()
        gc.unfreeze()
        gc.collect()


@pytest.mark.sqlite
def test_a_cold_load_restored_from_a_snapshot_freezes_the_heap_it_built(
    sqlite_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A campaign of FREEZE_AFTER facts or more restored from its snapshot (as every imported
    campaign is served) is frozen like one folded from its facts: no full collection walks it
    again. (It was not: in a bench session at 100k facts, gen-2 collections of 100-260 ms each.)
    The garbage dropped before the freeze is collected, not frozen."""
    facts = generated_facts(400, seed=5)
    writer = open_application(sqlite_store)
    try:
        cid = writer.import_campaign(HEADER, facts)
        writer.write_snapshot(cid)
    finally:
        writer.close()

    def cold_load(freeze_after: int) -> tuple[bool, int, bool]:
        monkeypatch.setattr(service, "FREEZE_AFTER", freeze_after)
        app = open_application(sqlite_store)
        gc.collect()
        gc.unfreeze()
        before = gc.get_freeze_count()
        was = gc.isenabled()
        gc.disable()  # the cycle below is garbage only the collector frees
        try:
            dropped = [weakref.ref(Node())]
            ledger = app.ledger(cid)
        finally:
            if was:
                gc.enable()
        frozen = gc.get_freeze_count() - before
        state_frozen = not any(o is ledger._state for o in gc.get_objects())
        assert app.cache_stats["from_snapshot"] == 1
        assert gc.is_tracked(ledger._state)
        app.close()
        gc.collect()  # (frozen objects are out of its reach)
        return state_frozen, frozen, dropped[0]() is None

    try:
        state_frozen, frozen, freed = cold_load(freeze_after=len(facts))
        assert frozen > 0 and state_frozen, "the restored campaign was left to every full collection"
        assert freed, "garbage dropped before the load was frozen with it"
        state_frozen, frozen, _ = cold_load(freeze_after=len(facts) + 1)  # smaller: not frozen
        assert frozen == 0 and not state_frozen
    finally:
        gc.unfreeze()
        gc.collect()


@pytest.mark.sqlite
def test_a_cold_load_folds_with_the_collector_paused_then_resumes_it(
    sqlite_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load's burst of long-lived objects is not answered with collections (``gc_paused``
    around ``Ledger.load``); the collector runs again once the campaign is loaded."""
    facts = generated_facts(300, seed=5)
    monkeypatch.setattr(service, "LOAD_PAGE", 97)
    settings, cid = stored_campaign(sqlite_store.database_url, HEADER, facts)
    app = open_application(settings)
    enabled: list[bool] = []
    fold = Ledger._fold_resolved

    def folding(self: Ledger, *args: Any, **kwargs: Any) -> Any:
        enabled.append(gc.isenabled())
        return fold(self, *args, **kwargs)

    monkeypatch.setattr(Ledger, "_fold_resolved", folding)
    assert gc.isenabled()
    try:
        ledger = app.ledger(cid)
        assert enabled and not any(enabled), enabled  # every stretch folded while paused
        assert gc.isenabled()
        assert ledger.last_seq == len(facts) + 1
    finally:
        app.close()


@pytest.mark.sqlite
def test_a_correction_that_refolds_a_large_campaign_collects_then_freezes_what_it_built(
    sqlite_store: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A correction whose refold covers FREEZE_AFTER facts or more: when its pause of the collector
    ends, everything is collected, then frozen (``gc_paused``'s ``freeze``) -- the refold's state is
    out of every later collection's reach, and the cycles dropped before and during the refold are
    freed, not frozen. A correction that refolds fewer facts leaves the collector as it was."""
    facts = generated_facts(400, seed=5)
    settings, cid = stored_campaign(sqlite_store.database_url, HEADER, facts)
    monkeypatch.setattr(service, "FREEZE_AFTER", 10**9)  # the cold load itself freezes nothing
    app = open_application(settings)
    try:
        ledger = app.ledger(cid)
        kinds = ("DamageTaken", "HealingApplied", "AttackMade", "ExperienceAwarded")
        early = [
            p
            for p in range(ledger.first_seq + 5, ledger.first_seq + 100)
            if ledger.entry(p).type in kinds and p not in ledger.resolution.revoked
        ]
        dropped: list[weakref.ref[Any]] = []
        prepare = Ledger.prepare

        def preparing(self: Ledger, *args: Any, **kwargs: Any) -> Any:
            dropped.append(weakref.ref(Node()))  # what another request drops meanwhile
            return prepare(self, *args, **kwargs)

        monkeypatch.setattr(Ledger, "prepare", preparing)

        def revoke(target: int, freeze_after: int) -> tuple[int, bool]:
            monkeypatch.setattr(service, "FREEZE_AFTER", freeze_after)
            gc.collect()
            gc.unfreeze()
            before = gc.get_freeze_count()
            dropped.append(weakref.ref(Node()))  # dropped before the correction
            app.revoke(cid, target, "never happened")
            state = app.ledger(cid)._state
            return gc.get_freeze_count() - before, not any(o is state for o in gc.get_objects())

        frozen, state_frozen = revoke(early[0], freeze_after=200)  # refolds about 390 facts
        assert frozen > 0 and state_frozen, "the refold's heap was left to every collection"
        assert len(dropped) == 2 and all(r() is None for r in dropped), "garbage was frozen with it"
        frozen, state_frozen = revoke(early[1], freeze_after=ledger.last_seq)  # fewer than that: no
        assert frozen == 0 and not state_frozen
    finally:
        app.close()
        gc.unfreeze()
        gc.collect()
