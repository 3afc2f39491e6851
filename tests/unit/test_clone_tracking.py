"""A state's clone and the checkpoint deltas read only what changed since the last clone (issue 21:
a checkpoint must not cost a walk over every creature and encounter of the campaign).

``TableState`` tracks the creatures it owned or added and the encounters open or added since it
was last cloned (the ``TRACKING`` slots); ``clone`` marks only those shared and clones only those
open, and ``delta_between`` compares only those. The law: a fold with that tracking reads exactly
as a fold that checks everything -- every outcome, the state, and every checkpoint rebuilt from
its deltas (``state_at`` at each checkpoint).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.core import state as core_state
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
EVERY = 8  # checkpoints every 8 facts, a full state every 4th: most are rebuilt from deltas


@contextmanager
def untracked() -> Iterator[None]:
    """The reference: every clone checks every creature and encounter, every delta compares all."""
    saved = TableState._candidates
    TableState._candidates = lambda self: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        TableState._candidates = saved  # type: ignore[method-assign]


def _campaign(size: int, seed: int) -> list[Entry]:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    return list(gen.ledger.entries)


def reading(entries: list[Entry]) -> dict[str, Any]:
    """Everything a fold gives: outcomes, orphans, the state, and each checkpoint's state."""
    ledger = Ledger(RULES, {}, first_seq=entries[0].seq, checkpoint_every=EVERY, full_every=4)
    outcomes: list[tuple[int, str, str | None]] = []
    for e in entries:
        ledger.append(Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp))
        if e.seq % 97 == 0:  # fold as the table plays, now and then (lent states, live clones)
            ledger.state  # noqa: B018

    def sink(e: Entry, outcome: dict[str, Any] | None, orphan: str | None) -> None:
        outcomes.append((e.seq, json.dumps(outcome, default=repr), orphan))

    ledger.replay(sink)
    checkpoints = {}
    for p in ledger._checkpoints:
        state, orphans = ledger.state_at(p.seq)
        checkpoints[p.seq] = (RULES.dump_state(state), dict(orphans))
    return {
        "outcomes": outcomes,
        "state": RULES.dump_state(ledger.state),
        "orphans": dict(ledger.orphans),
        "checkpoints": checkpoints,
    }


@SETTINGS
@given(st.integers(150, 700), st.integers(0, 10**6))
def test_a_tracked_fold_reads_as_one_that_checks_everything(size: int, seed: int) -> None:
    entries = _campaign(size, seed)
    tracked = reading(entries)
    with untracked():
        reference = reading(entries)
    assert tracked["checkpoints"]  # the comparison covers rebuilt checkpoints
    assert tracked == reference


def test_the_clone_marks_only_what_changed_and_the_delta_lists_only_that() -> None:
    entries = _campaign(300, 5)
    ledger = Ledger(RULES, {}, first_seq=entries[0].seq)
    for e in entries:
        ledger.append(e)
    state = ledger.state.clone()
    cid = next(iter(state.creatures))
    before = state.clone()  # the reference clone: everything is shared now
    assert all(c.shared for c in state.creatures.values())
    state.own(cid).hp -= 1
    after = state.clone()
    creatures, _ = after.changed_since(before._token)
    assert creatures == [cid]
    assert after.creatures[cid] is not before.creatures[cid]
    assert after.creatures[cid].shared and state.creatures[cid].shared
    # a state changed outside a handler cannot tell what changed
    state.untrack()
    assert state.clone().changed_since(after._token) is None


def test_the_reference_can_tell_a_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: a clone that forgets an owned creature leaves it unshared, and the live fold
    then changes a checkpoint's creature in place (GUARD off, as in production)."""
    entries = _campaign(400, 3)
    right = reading(entries)
    saved = TableState.own

    def own_untracked(self: TableState, cid: str) -> Any:
        c = saved(self, cid)
        if self._dirty and self._dirty[-1] == cid:
            self._dirty.pop()
        return c

    monkeypatch.setattr(TableState, "own", own_untracked)
    monkeypatch.setattr(core_state, "GUARD", False)
    assert reading(entries) != right
    monkeypatch.setattr(core_state, "GUARD", True)  # and the tests' guard says so loudly
    with pytest.raises(AssertionError, match="untracked"):
        reading(entries)


class _Toy(core_state.CreatureBase):
    __slots__ = ("pc",)
    pc: bool


@SETTINGS
@given(st.lists(st.lists(st.booleans(), max_size=6), max_size=8))
def test_registered_reads_the_creatures_added_since_it_last_looked(batches: list[list[bool]]) -> None:
    """``TableState.registered`` (read from the end of the creatures) equals the scan of them all,
    whatever was added between two questions and whichever clone asks."""
    state = TableState({})
    n = 0
    for batch in batches:
        for is_pc in batch:
            c = core_state.new_creature(_Toy, f"c{n}")
            c.pc = is_pc
            state.creatures[c.id] = c
            n += 1
        state = state.clone() if n % 2 else state
        expected = tuple(cid for cid, c in state.creatures.items() if c.pc)
        assert state.registered("pcs", lambda c: c.pc) == expected
