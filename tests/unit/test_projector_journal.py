"""The projector's creature and encounter rows follow the fold's journal of changes (issue 21:
read models touch only the rows a fact changes).

``TableState.journal_changes`` reports the creatures owned or added and the encounters open or
added since the journal was last taken, across the fold's clones (checkpoints, lends). The
projector writes, per batch, the views among those that differ from the ones it last wrote, and
no longer lends (clones) the present for it. The law: the rows a batch writes are exactly those
whose view changed -- the ones a full diff of every view before and after the batch finds, new
ones included -- and the rows it deletes exactly those gone; over random campaigns (with
corrections that rewind the fold to a checkpoint) cut into random batches.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.campaign import Campaign
from domain.core.state import TableState
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset
from projections.projector import PROJECTIONS, Batch, Projector

SETTINGS = settings(
    max_examples=max(4, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 6),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")
_CAMPAIGNS: dict[tuple[int, int], list[Entry]] = {}


def _entries(size: int, seed: int) -> list[Entry]:
    key = (size, seed)
    if key not in _CAMPAIGNS:
        gen = CampaignGenerator(size, seed=seed, corrections=0.08)
        for _ in gen.facts():
            pass
        _CAMPAIGNS[key] = list(gen.ledger.entries)
    return _CAMPAIGNS[key]


def _campaign() -> Campaign:
    campaign = Campaign(name="Journal", ruleset="stellar-winds", flags={}, meta={})
    # checkpoints every 8 facts: a correction rewinds the fold to a recent one (its journal
    # continues an earlier batch's), or to one rebuilt from deltas (its journal is not known)
    campaign.ledger = Ledger(RULES, {}, first_seq=2, checkpoint_every=8, full_every=4)
    return campaign


def _all_views(state: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        {c: RULES.creature_view(state, c) for c in state.creatures},
        {e: RULES.encounter_view(state, e) for e in state.encounters},
    )


def _written(batch: Batch, cid: str) -> tuple[set[str], set[str], set[str], set[str]]:
    return (
        {r["creature_id"] for r in batch.creatures.get(cid, [])},
        {r["encounter_id"] for r in batch.encounters.get(cid, [])},
        set(batch.creatures_gone.get(cid, [])),
        set(batch.encounters_gone.get(cid, [])),
    )


def _expected(
    before: tuple[dict[str, Any], dict[str, Any]], after: tuple[dict[str, Any], dict[str, Any]]
) -> tuple[set[str], set[str], set[str], set[str]]:
    """The full diff: the ids whose view is new or differs, and the ids gone."""
    (c0, e0), (c1, e1) = before, after
    return (
        {k for k, v in c1.items() if c0.get(k) != v},
        {k for k, v in e1.items() if e0.get(k) != v},
        set(c0) - set(c1),
        set(e0) - set(e1),
    )


def in_batches(entries: list[Entry], cuts: list[int]) -> Iterator[tuple[int, list[Entry]]]:
    """``entries`` cut into batches (``cuts``: batch sizes, cycled), numbered from 1, each fact a
    fresh copy (a ledger may change what it is given)."""
    i, k = 0, 0
    while i < len(entries):
        size = max(1, cuts[k % len(cuts)])
        batch = [
            Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp) for e in entries[i : i + size]
        ]
        i, k = i + size, k + 1
        yield k, batch


def project_in_batches(entries: list[Entry], cuts: list[int], lend_every: int = 0) -> list[str]:
    """Append ``entries`` to a campaign in batches (``cuts``: batch sizes, cycled), derive each
    batch's rows and compare them with the full diff; returns the mismatches (empty: none).
    ``lend_every``: hand the present out (``ledger.state``) before every n-th batch, as a server
    sharing the ledger would (the fold then clones; the journal must survive it)."""
    campaign, projector = _campaign(), Projector(source=None)  # type: ignore[arg-type]
    cid = str(campaign.id)
    ledger = campaign.ledger
    shown: tuple[dict[str, Any], dict[str, Any]] = ({}, {})
    errors: list[str] = []
    for k, appended in in_batches(entries, cuts):
        for e in appended:
            ledger.append(e)
        if lend_every and k % lend_every == 0:
            ledger.state  # noqa: B018
        batch = Batch()
        projector._rows(campaign, batch, PROJECTIONS)
        now = _all_views(ledger.present())
        got, want = _written(batch, cid), _expected(shown, now)
        if k > 1 and got != want:  # the first batch replaces the campaign's rows whole
            errors.append(f"batch {k} (to fact {appended[-1].seq}): wrote {got}, changed {want}")
        shown = now
    return errors


@SETTINGS
@given(
    st.integers(150, 500),
    st.integers(0, 10**6),
    st.lists(st.integers(1, 40), min_size=1, max_size=8),
    st.sampled_from([0, 3]),
)
def test_a_batch_writes_exactly_the_rows_whose_view_changed(
    size: int, seed: int, cuts: list[int], lend_every: int
) -> None:
    assert project_in_batches(_entries(size, seed), cuts, lend_every) == []


def test_the_law_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not vacuous: a journal that forgets creatures owned (a handler's change) misses rows."""
    entries = _entries(300, 7)
    assert project_in_batches(entries, [5, 1, 12]) == []
    real = TableState.own

    def own_unjournaled(self: TableState, cid: str) -> Any:
        c = real(self, cid)
        self._jowned.pop(cid, None)
        return c

    monkeypatch.setattr(TableState, "own", own_unjournaled)
    assert project_in_batches(entries, [5, 1, 12]) != []


def test_the_projector_no_longer_clones_the_present_per_batch() -> None:
    """Between batches nothing holds the present: the next batch folds into the same state
    object (before, every batch lent it and the next fold cloned it to diff by identity)."""
    entries = _entries(300, 11)
    campaign, projector = _campaign(), Projector(source=None)  # type: ignore[arg-type]
    ledger = campaign.ledger
    for e in entries[:100]:
        ledger.append(e)
    projector._rows(campaign, Batch(), PROJECTIONS)
    present = ledger.present()
    for e in entries[100:103]:
        if e.type in ("FactRevoked", "FactAmended", "OutcomeOverridden", "RulingOverturned"):
            break  # a correction may rewind the fold: not this test's case
        ledger.append(e)
    projector._rows(campaign, Batch(), PROJECTIONS)
    assert ledger.present() is present


def test_one_creature_changing_among_many_is_the_only_one_viewed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The journal lists what the batch's facts touched: a batch that damages one creature of a
    campaign with hundreds views that creature (and its encounter), not every creature."""
    entries = _entries(2000, 3)
    campaign, projector = _campaign(), Projector(source=None)  # type: ignore[arg-type]
    ledger = campaign.ledger
    for e in entries:
        ledger.append(e)
    projector._rows(campaign, Batch(), PROJECTIONS)
    state = ledger.present()
    assert len(state.creatures) > 50
    target = next(c for c, v in state.creatures.items() if getattr(v, "life", None) == "active")
    viewed: list[str] = []
    real = type(RULES).creature_view

    def counting(self: Any, state: Any, creature_id: str) -> dict[str, Any]:
        viewed.append(creature_id)
        return real(self, state, creature_id)

    monkeypatch.setattr(type(RULES), "creature_view", counting)
    like = next(e for e in entries if e.type == "TemporaryHitPointsGranted")
    payload = {**like.payload, "target": target}
    ledger.append(Entry(ledger.next_seq, like.type, like.version, payload, {}))
    batch = Batch()
    projector._rows(campaign, batch, PROJECTIONS)
    assert viewed == [target]
    assert [r["creature_id"] for r in batch.creatures[str(campaign.id)]] == [target]
