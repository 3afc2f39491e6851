"""The carrier index (``TableState.carriers``) answers ``TableState.carrier`` without a scan,
for effects in force and for effects that are not (issue 21: a save against an effect a
correction orphaned looked through every creature holding an effect, ~17% of an
orphan-heavy refold).

The law the lookup relies on: restricted to the effects in force, the index equals a scan of
every holder (effect id -> the holder carrying it) -- after every fact of a fold with
corrections that orphan, and on the states a fold hands out by clone, by checkpoint delta and
by a dump and load.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.checkpoints import OrphanLog
from domain.core.state import TableState
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset

SETTINGS = settings(
    max_examples=max(4, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 6),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")
MISSING = "e0.404"  # an effect id no fact gives


def scan(state: Any) -> dict[str, str]:
    """Effect id -> the living holder carrying it, read from every holder."""
    return {e["effect_id"]: c.id for c in state.with_effects() for e in c.effects}


def assert_law(state: Any, asked: set[str]) -> None:
    carried = scan(state)
    for eid, hid in carried.items():
        assert state.carriers.get(eid) == hid, f"{eid} is on {hid}, the index says {state.carriers.get(eid)}"
    for eid in asked | {MISSING}:  # ids once given, most no longer in force
        c = state.carrier(eid)
        assert (c.id if c is not None else None) == carried.get(eid)


def campaign(size: int, seed: int) -> Ledger:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    ledger = Ledger(RULES, {}, first_seq=gen.ledger.first_seq, checkpoint_every=50)
    for e in gen.ledger.entries:
        ledger.append(Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp))
    return ledger


def revoke_early_attack(ledger: Ledger) -> None:
    """A correction that orphans: the first attack that gave an effect never happened."""
    target = next(
        (e.seq for e in ledger.entries if e.type == "AttackMade" and e.seq not in ledger.resolution.revoked),
        None,
    )
    if target is None:
        return
    payload = {"target": target, "reason": "never happened", "cascade": "fact"}
    ledger.prepare("FactRevoked", payload, {})
    ledger.append(Entry(ledger.next_seq, "FactRevoked", 1, payload, {}))


@SETTINGS
@given(st.integers(200, 700), st.integers(0, 10**6))
def test_the_index_equals_the_scan_after_every_fact(size: int, seed: int) -> None:
    ledger = campaign(size, seed)
    revoke_early_attack(ledger)
    res = ledger.resolution
    state = ledger._initial(res)
    asked: set[str] = set()
    for e, _, _ in ledger._steps(state, OrphanLog(), 0, len(ledger.entries), res):
        asked.update(state.carriers)
        if "effect_id" in e.payload:
            asked.add(str(e.payload["effect_id"]))
        assert_law(state, asked)
        if e.seq % 37 == 0:
            state = state.clone()  # the fold goes on in a clone: the index goes with it
    assert any(state.carrier(eid) is None for eid in asked)  # effects not in force were asked


@SETTINGS
@given(st.integers(200, 700), st.integers(0, 10**6))
def test_the_index_equals_the_scan_on_restored_states(size: int, seed: int) -> None:
    ledger = campaign(size, seed)
    ledger.state  # noqa: B018 - the fold, with its checkpoints (deltas)
    revoke_early_attack(ledger)  # a refold from a restored checkpoint
    asked = set(ledger.state.carriers)
    assert_law(ledger.state, asked)
    for p in range(ledger.first_seq + 60, ledger.last_seq, 97):  # restored from checkpoint deltas
        state, _ = ledger.state_at(p)
        assert_law(state, asked)
    loaded = RULES.load_state(RULES.dump_state(ledger.state))  # persisted: the index is rebuilt
    assert_law(loaded, asked)


def test_the_law_can_fail() -> None:
    """Not vacuous: a ``hold`` that does not index the effect it gives breaks it (and the GUARD
    cross-check in ``carrier`` sees it too)."""
    saved = TableState.hold

    def forgetful(self: Any, cid: str, effect: dict[str, Any]) -> None:
        saved(self, cid, effect)
        self.carriers.pop(effect["effect_id"], None)

    ledger = campaign(300, 3)
    res = ledger.resolution
    state = ledger._initial(res)
    TableState.hold = forgetful  # type: ignore[method-assign]
    try:
        with pytest.raises(AssertionError):
            for _ in ledger._steps(state, OrphanLog(), 0, len(ledger.entries), res):
                assert_law(state, set())
    finally:
        TableState.hold = saved  # type: ignore[method-assign]
