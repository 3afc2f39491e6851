"""A long generated campaign (encounters, effects, corrections) read through checkpoints.

The ledger keeps a checkpoint every few hundred facts; reads and corrections start from
the nearest one. Whatever the path, the answer must be the one a fold from the start gives.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from bench.generator import CampaignGenerator
from domain.ledger import CORRECTED, Entry, Ledger
from domain.rulesets import summary


@pytest.fixture(scope="module")
def ledger() -> Ledger:
    gen = CampaignGenerator(1500, seed=11, corrections=0.05)
    for _ in gen.facts():
        pass
    assert len(gen.ledger.entries) >= 1500 and gen.ledger._checkpoints, "the campaign must span checkpoints"
    return gen.ledger


def _full(ledger: Ledger) -> dict[int, Any]:
    seen: dict[int, Any] = {}
    ledger.replay(lambda e, outcome, orphan: seen.__setitem__(e.seq, (outcome, orphan)))
    return seen


def test_a_page_read_from_a_checkpoint_equals_a_fold_from_the_start(ledger: Ledger) -> None:
    full = _full(ledger)
    rng = random.Random(5)
    for _ in range(10):
        start = rng.randint(ledger.first_seq, ledger.last_seq)
        stop = min(ledger.last_seq, start + rng.randint(0, 120))
        walked = {e.seq: (o, r) for e, o, r, _ in ledger.walk(start, stop, CORRECTED)}
        assert walked == {s: full[s] for s in range(start, stop + 1)}


def test_state_at_any_position_equals_a_fold_up_to_it(ledger: Ledger) -> None:
    rules = ledger.ruleset
    rng = random.Random(7)
    for position in sorted(rng.sample(range(ledger.first_seq, ledger.last_seq + 1), 8)):
        state, orphans = ledger.state_at(position)
        expected = ledger.replay(lambda *_: None, upto=position)
        assert summary(rules, state) == summary(rules, expected), position


def test_folding_the_long_campaign_at_once_equals_the_live_ledger(ledger: Ledger) -> None:
    fresh = Ledger(ledger.ruleset, {}, first_seq=ledger.first_seq)
    for e in ledger.entries:
        fresh.append(Entry(e.seq, e.type, e.version, e.payload, e.meta))
    assert summary(ledger.ruleset, fresh.state) == summary(ledger.ruleset, ledger.state)
    assert fresh.orphans == ledger.orphans
