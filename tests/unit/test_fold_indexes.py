"""The fold's indexes change no reading (issue 21: a fold's cost per fact must not grow with the
campaign).

``TableState.anchored`` (turn boundaries read only the holders of effects timed by that
creature's turns), ``TableState.holding`` (by duration kind: rounds, rests),
``TableState.carrier`` (finding an effect by its id), ``TableState.registered`` (who rests
when nobody is named) and the watched pruning of ``holders``
replace scans of every creature that ever held an effect. The law: folding with them gives
exactly what folding with the scans gives
-- every outcome, every orphan, the state and the order of ``holders`` (which reports follow).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.checkpoints import OrphanLog
from domain.core import effects as core_effects
from domain.core.state import PENDING, TableState
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset

SETTINGS = settings(
    max_examples=max(4, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 6),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")


def _scan_prune(self: Any) -> None:
    """What forgetting holders was: check every holder."""
    for cid in list(self.holders):
        c = self.creatures.get(cid)
        if c is None or not getattr(c, "effects", None) or getattr(c, "life", None) == "dead":
            del self.holders[cid]
    self.watch = {}
    self.known = len(self.holders)


def _scan_anchored(self: Any, cid: str) -> list[Any]:
    """What turn boundaries did: every living holder, those with an effect anchored to ``cid``."""
    return [c for c in self.with_effects() if core_effects.anchored_to(c, cid)]


def _scan_carrier(self: Any, effect_id: str) -> Any:
    """What finding an effect did: the first living holder carrying it."""
    return next((c for c in self.with_effects() if any(e["effect_id"] == effect_id for e in c.effects)), None)


def _scan_holding(self: Any, *kinds: str) -> list[Any]:
    """What rounds, rests and encounter ends did: every living holder, those with an effect of
    these kinds (or a pending one)."""

    def of(e: dict[str, Any]) -> bool:
        return any(bool(e.get("pending")) if k == PENDING else e["duration"].get("kind") == k for k in kinds)

    return [c for c in self.with_effects() if any(of(e) for e in c.effects)]


SCANS = {
    "_prune": _scan_prune,
    "anchored": _scan_anchored,
    "carrier": _scan_carrier,
    "holding": _scan_holding,
}


@contextmanager
def scanning() -> Iterator[None]:
    saved = {name: getattr(TableState, name) for name in SCANS}
    for name, scan in SCANS.items():
        setattr(TableState, name, scan)
    try:
        yield
    finally:
        for name, method in saved.items():
            setattr(TableState, name, method)


def fold(entries: list[Entry]) -> tuple[list[Any], Any]:
    ledger = Ledger(RULES, {}, first_seq=entries[0].seq)
    for e in entries:
        ledger.append(Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp))
    res = ledger.resolution
    state = ledger._initial(res)
    got = [
        (e.seq, json.dumps(outcome, default=repr), orphan)
        for e, outcome, orphan in ledger._steps(state, OrphanLog(), 0, len(ledger.entries), res)
    ]
    return got, state


@SETTINGS
@given(st.integers(200, 900), st.integers(0, 10**6))
def test_folding_with_the_indexes_equals_folding_with_scans(size: int, seed: int) -> None:
    gen = CampaignGenerator(size, seed=seed, corrections=0.05)
    for _ in gen.facts():
        pass
    entries = list(gen.ledger.entries)
    indexed, state = fold(entries)
    with scanning():
        scanned, reference = fold(entries)
    assert indexed == scanned
    assert RULES.dump_state(state) == RULES.dump_state(reference)
    assert list(state.holders) == list(reference.holders)


def test_the_reference_can_tell_a_difference() -> None:
    """The comparison above is not vacuous: anchored lookups that missed a holder would show."""
    gen = CampaignGenerator(400, seed=3, corrections=0.0)
    for _ in gen.facts():
        pass
    entries = list(gen.ledger.entries)
    saved = TableState.anchored
    TableState.anchored = lambda self, cid: []  # type: ignore[method-assign,assignment]
    try:
        broken, _ = fold(entries)
    finally:
        TableState.anchored = saved  # type: ignore[method-assign]
    right, _ = fold(entries)
    assert broken != right
