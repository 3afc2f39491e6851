"""``Ledger.load``: a paged ledger that appends stored facts and folds as it reads reads exactly
like a ledger that holds every fact and folded them all (issue 21, P2).

Random campaigns (``tests/unit/test_paged_ledger.py``: rulings cited by later facts, multi-fact
actions, consequences, revocations with every cascade, restorations, amendments, ruling
decisions, retroactive rules flags) are stored, then loaded into a fresh paged ledger with a
random window, look-ahead and checkpoint rhythm. The fold trails the reading, so corrections
that reach back further than the look-ahead rewind it mid-load: the state, orphans, resolution
and as-of states in both time axes must still equal the reference's. Some facts come with the
ruling ids they cite already known (``Entry.cites``, as the application's reader gives them:
none when the stored JSON has no ``"ruling`` in it), the rest without.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from domain.ledger import CORRECTED, INDEXED, INF, RECORDED, Entry, Ledger
from tests.unit.test_paged_ledger import RULES, SETTINGS, Pair, Store, ops, play


def stored(store: Store, hint: list[bool]) -> list[Entry]:
    out = []
    for k, seq in enumerate(sorted(store.rows)):
        raw = store.rows[seq]
        t, v, p, m, ts = json.loads(raw)
        cites = (None if '"ruling' in raw else ()) if hint[k % len(hint)] else None
        out.append(Entry(seq, t, v, p, m, ts, cites))
    return out


@SETTINGS
@given(
    st.lists(ops, min_size=8, max_size=45),
    st.tuples(st.integers(0, 12), st.integers(0, 8), st.integers(2, 7), st.integers(1, 4)),
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.data(),
)
def test_a_ledger_loaded_as_it_reads_folds_like_one_that_holds_every_fact(
    steps: list[tuple[Any, ...]], config: tuple[int, int, int, int], hint: list[bool], data: Any
) -> None:
    pair = Pair(window=1000, page=64, every=256, full_every=64)
    play(pair, data, steps)
    ref = pair.ref
    window, lookahead, every, full_every = config
    ledger = Ledger(RULES, {}, first_seq=2, checkpoint_every=every, full_every=full_every)
    ledger.attach(pair.store.load, window, page=3, pages_kept=1)
    n = ledger.load(stored(pair.store, hint), lookahead=lookahead)

    assert n == ref.last_seq - 1 and ledger.last_seq == ref.last_seq
    assert pair.view(ledger) == pair.view(ref)
    assert dict(ledger.orphans) == dict(ref.orphans)
    a, b = ledger.resolution, ref.resolution
    assert (a.revoked, a.amended, a.ruling_values, a.ruling_status, a.retro_flags) == (
        b.revoked,
        b.amended,
        b.ruling_values,
        b.ruling_status,
        b.retro_flags,
    )
    assert ledger._citations == ref._citations  # the hints name what the ledger would have found
    assert ledger.entries.resident <= window + 2 * 3 + 1
    for _ in range(3):
        p = data.draw(st.integers(ref.first_seq - 1, ref.last_seq), label="as of")
        for view in (CORRECTED, RECORDED):
            sa, oa = ref.state_at(p, view)
            sb, ob = ledger.state_at(p, view)
            assert pair.view(ref, sa) == pair.view(ledger, sb), (p, view)
            assert dict(oa) == dict(ob), (p, view)


def fetch(store: Store, positions: list[int]) -> list[Entry]:
    """What the application's point read gives: the stored facts at those positions (fresh copies)."""
    return [e for p in positions if p in store.rows for e in store.load(p, p)]


@SETTINGS
@given(
    st.lists(ops, min_size=8, max_size=45),
    st.tuples(
        st.integers(1, 12), st.integers(2, 7), st.integers(1, 4)
    ),  # (a window of 0 holds nothing to fold)
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.data(),
)
def test_a_load_that_knows_the_corrections_first_folds_like_appending_everything_then_folding(
    steps: list[tuple[Any, ...]], config: tuple[int, int, int], missed: list[bool], data: Any
) -> None:
    """The law of ``Ledger.load(entries, corrections=..., lookup=...)``: told the campaign's
    corrections first (as the store's correction query gives them), a paged ledger folds each
    fact once, in order, and reads exactly like a ledger that appended every fact and then
    folded: state, orphans, resolution, fingerprint, as-of states in both time axes -- with
    revocations by every cascade (actions, consequences), restorations, amendments, ruling
    decisions and retroactive flags that reach back past the window and orphan facts. When the
    query gives them all, nothing is read back; when it misses some (``missed``), the load
    still ends the same (the usual refold corrects the guess)."""
    pair = Pair(window=1000, page=64, every=256, full_every=64)
    play(pair, data, steps)
    window, every, full_every = config
    ref = Ledger(RULES, {}, first_seq=2, checkpoint_every=every, full_every=full_every)
    for e in stored(pair.store, [False]):
        ref.append(e)
    ref_state = pair.view(ref)  # one fold, of everything appended

    drop = data.draw(st.booleans(), label="the query misses corrections")
    corrections = [e for e in stored(pair.store, [False]) if e.type in INDEXED]
    if drop:
        corrections = [e for k, e in enumerate(corrections) if not missed[k % len(missed)]]
    ledger = Ledger(RULES, {}, first_seq=2, checkpoint_every=every, full_every=full_every)
    ledger.attach(pair.store.load, window, page=3, pages_kept=1)
    n = ledger.load(
        stored(pair.store, [True]), corrections=corrections, lookup=lambda ps: fetch(pair.store, ps)
    )

    assert n == ref.last_seq - 1 and ledger.last_seq == ref.last_seq
    if not drop:
        assert ledger.entries.loads == 0  # every fact folded as it came: none read back
        # and none folded twice (a reset for retroactive flags is no refold: nothing was folded)
        assert ledger.refolded_from == (ledger.first_seq if ledger.resolution.retro_flags else INF)
    targets = {e.payload["target"] for e in corrections if e.type == "FactRevoked"}
    event(f"cascades past their targets: {bool(set(ref.resolution.revoked) - targets)}")
    event(f"orphans: {len(ref.orphans) > 0}")
    assert pair.view(ledger) == ref_state
    assert dict(ledger.orphans) == dict(ref.orphans)
    a, b = ledger.resolution, ref.resolution
    assert (
        a.revoked,
        a.amended,
        a.amended_by,
        a.ruling_values,
        a.ruling_status,
        a.overrides,
        a.retro_flags,
    ) == (
        b.revoked,
        b.amended,
        b.amended_by,
        b.ruling_values,
        b.ruling_status,
        b.overrides,
        b.retro_flags,
    )
    assert ledger.fingerprint() == ref.fingerprint()
    assert ledger.entries.resident <= window + 2 * 3 + 1
    for _ in range(3):
        p = data.draw(st.integers(ref.first_seq - 1, ref.last_seq), label="as of")
        for view in (CORRECTED, RECORDED):
            sa, oa = ref.state_at(p, view)
            sb, ob = ledger.state_at(p, view)
            assert pair.view(ref, sa) == pair.view(ledger, sb), (p, view)
            assert dict(oa) == dict(ob), (p, view)
