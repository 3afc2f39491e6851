"""Loading a campaign in pages and reading the state between pages (as a live campaign does, and
as a cold load that folds while it reads would) ends in exactly the state of loading every fact
and folding once -- corrections in a later page that reach back before earlier pages included
(the ledger rewinds to a checkpoint before their reach and reads the older facts back).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generator import CampaignGenerator
from domain.ledger import Entry, Ledger
from domain.rulesets import get_ruleset

SETTINGS = settings(
    max_examples=max(4, int(os.environ.get("CHRONICLE_PROPERTY_EXAMPLES", "60")) // 6),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
RULES = get_ruleset("stellar-winds")


def copy(e: Entry) -> Entry:
    return Entry(e.seq, e.type, e.version, e.payload, e.meta, e.timestamp)


def ledger_of(entries: list[Entry], window: int | None) -> Ledger:
    ledger = Ledger(RULES, {}, first_seq=entries[0].seq, checkpoint_every=16, full_every=4)
    if window is not None:
        by_seq = {e.seq: e for e in entries}
        ledger.attach(lambda first, last: [copy(by_seq[s]) for s in range(first, last + 1)], window, page=8)
    return ledger


def reading(ledger: Ledger) -> tuple[Any, ...]:
    state = ledger.state
    return (
        RULES.dump_state(state),
        list(ledger.orphans.pairs()),
        [
            (e.seq, outcome, orphan)
            for e, outcome, orphan, _ in ledger.walk(ledger.first_seq, ledger.last_seq)
        ],
    )


@SETTINGS
@given(st.integers(150, 600), st.integers(0, 10**6), st.data())
def test_pages_with_folds_in_between_equal_folding_at_once(size: int, seed: int, data: Any) -> None:
    gen = CampaignGenerator(size, seed=seed, corrections=0.08)
    for _ in gen.facts():
        pass
    entries = list(gen.ledger.entries)
    once = ledger_of(entries, None)
    for e in entries:
        once.append(copy(e))
    window = data.draw(st.sampled_from([None, 24, 64]), label="window")
    paged = ledger_of(entries, window)
    i = 0
    while i < len(entries):
        step = data.draw(st.integers(1, 120), label="page")
        for e in entries[i : i + step]:
            paged.append(copy(e))
        i += step
        paged.state  # noqa: B018 - fold what has arrived, as a live or page-folding load does
    assert reading(paged) == reading(once)
