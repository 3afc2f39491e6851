""" "Which creatures did these facts change" costs the changes, not the campaign (issue 21).

``changed_creatures(before, after)`` used to test every creature of ``after`` for identity with
``before``'s -- on every mutation, thousands of creatures on a long campaign. Now each state notes
the creatures it owns (``TableState.own``) or adds after each clone point, and remembers the last
few points (``LINKS``); only the creatures noted since the newest point both states descend from
are tested (``touched_between``). The law: the answer -- and its order, ``after``'s -- is exactly
the full identity scan's, kept here as the reference.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.core import state as core_state
from domain.core.catalogue import META_TYPES
from domain.core.state import CreatureBase, TableState, changed_creatures, new_creature, touched_between
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset

SETTINGS = settings(
    max_examples=max(10, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60"))),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
RULES = get_ruleset("stellar-winds")


def scan(before: Any, after: Any) -> list[str]:
    """The reference: every creature of ``after`` tested for identity, in ``after``'s order."""
    old = before.creatures
    return [cid for cid, c in after.creatures.items() if old.get(cid) is not c]


@pytest.fixture
def unguarded(monkeypatch: pytest.MonkeyPatch) -> None:
    # under GUARD changed_creatures checks itself against the scan and raises: here the test
    # compares, so that a difference shows as one
    monkeypatch.setattr(core_state, "GUARD", False)


class _Mob(CreatureBase):
    __slots__ = ("hp",)
    hp: int


def _add(state: TableState, n: int) -> None:
    c = new_creature(_Mob, f"c{n}")
    c.hp = n
    state.creatures[c.id] = c


OPS = st.one_of(
    st.tuples(st.just("own"), st.integers(0, 10**6)),
    st.tuples(st.just("add"), st.just(0)),
    st.tuples(st.just("keep"), st.just(0)),  # a checkpoint: the clone is kept, the state goes on
    st.tuples(st.just("switch"), st.just(0)),  # a command's check: the state is kept, its clone goes on
    st.tuples(st.just("branch"), st.integers(0, 10**6)),  # go on from a clone of a kept state
    st.tuples(st.just("untrack"), st.just(0)),  # changed outside a handler
)


@SETTINGS
@given(st.integers(0, 12), st.lists(OPS, max_size=60))
def test_the_lineage_answers_as_the_scan_for_any_two_states_of_a_fold(
    unguarded: None, start: int, ops: list[tuple[str, int]]
) -> None:
    state = TableState({})
    added = 0
    for _ in range(start):
        _add(state, added)
        added += 1
    kept: list[TableState] = [state.clone()]
    for op, k in ops:
        if op == "own" and state.creatures:
            cid = list(state.creatures)[k % len(state.creatures)]
            state.own(cid).hp += 1
        elif op == "add":
            _add(state, added)
            added += 1
        elif op == "keep":
            kept.append(state.clone())
        elif op == "switch":
            kept.append(state)
            state = state.clone()
        elif op == "branch":
            state = kept[k % len(kept)].clone()
        elif op == "untrack":
            state.untrack()
    kept.append(state)
    for a in kept:
        for b in kept:
            assert changed_creatures(a, b) == scan(a, b)


def _campaign(size: int, seed: int) -> list[Entry]:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    return list(gen.ledger.entries)


@settings(SETTINGS, max_examples=max(4, SETTINGS.max_examples // 6))
@given(st.integers(150, 600), st.integers(0, 10**6), st.integers(1, 4))
def test_a_command_and_the_story_walk_answer_as_the_scan(
    unguarded: None, size: int, seed: int, per: int
) -> None:
    """The request path (the present lent, each fact checked on a clone and adopted, checkpoints
    cloned on the way) and the story export (a clone before each fact of a replay)."""
    entries = _campaign(size, seed)
    ledger = Ledger(RULES, {}, first_seq=entries[0].seq, checkpoint_every=8, full_every=4)
    known = 0
    i = 0
    while i < len(entries):
        before = ledger.state
        corrected = False
        for e in entries[i : i + per]:
            fresh = Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp)
            if e.type in META_TYPES:
                corrected = True
            else:
                ledger.prepare(e.type, e.payload, e.meta)
            ledger.append(fresh)
        i += per
        after = ledger.state
        assert changed_creatures(before, after) == scan(before, after)
        if not corrected:
            assert touched_between(before, after) is not None  # not the scan
            known += 1
    assert known
    state = before = None
    for _e, _outcome, _orphan, state in ledger.replay_iter():
        if before is not None:
            assert touched_between(before, state) is not None
            assert changed_creatures(before, state) == scan(before, state)
        before = state.clone()


def test_the_lineage_tests_only_what_was_touched(unguarded: None) -> None:
    """On a state of many creatures, a command's first and last state share a clone point and
    only the creatures its facts touched are tested."""
    state = TableState({})
    for n in range(5_000):
        _add(state, n)
    present = state.clone()  # a fold hands out its present ...
    work = present.clone()  # ... and checks a command's facts on a clone
    work.own("c17").hp -= 1
    _add(work, 5_000)
    work.clone()  # a checkpoint on the way
    work.own("c4321").hp -= 3  # noted after c17 and c5000: the answer is in the creatures' order
    assert sorted(touched_between(present, work) or ()) == ["c17", "c4321", "c5000"]
    assert changed_creatures(present, work) == ["c17", "c4321", "c5000"]  # the creatures' order
    assert changed_creatures(work, present) == ["c17", "c4321"]


def test_the_reference_can_tell_a_difference(unguarded: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: a lineage that forgets what a clone owned gives another answer."""
    state = TableState({})
    for n in range(10):
        _add(state, n)
    before = state.clone()
    after = before.clone()
    after.own("c3").hp = 0
    saved = TableState.clone

    def forgetful(self: TableState) -> TableState:
        self._etouched = {}
        return saved(self)

    monkeypatch.setattr(TableState, "clone", forgetful)
    after.clone()
    assert changed_creatures(before, after) != scan(before, after)
