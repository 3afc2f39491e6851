"""Rebuilding persisted checkpoints (``api.service.snapshots.point_loader``) from rows it keeps.

A history page at a random position rebuilds the stored checkpoint before it: the full state at
or before it and up to 127 deltas after that. The rows loaded are kept (within a budget, in a
cache every loader of the application shares), so the next page in the same stretch decodes
only the rows it does not share with them, whichever loader loaded them. A checkpoint rebuilt
from kept rows must be the very state decoding every row gives.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.service import snapshots
from api.service.snapshots import encode, point_loader
from domain.checkpoints import rebuild
from domain.ledger import CORRECTED
from tests.unit.test_state_snapshots import RULES, generated, prefix, same

EVERY = 16
FULL_EVERY = 8  # a full state every 8 checkpoints in storage, deltas between


class Rows:
    """A campaign's persisted checkpoints of the corrected series, as the snapshot table holds
    them (zlib-compressed JSON), and the chain query's answer."""

    def __init__(self) -> None:
        lived = prefix(generated(600, 21), 600, EVERY)
        self.rows: dict[int, tuple[bool, bytes]] = {}
        have: set[int] = set()
        for seq, _, full, data in lived.capture().point_rows(CORRECTED, have, full_every=FULL_EVERY):
            self.rows[seq] = (full, encode(data))
        self.positions = sorted(self.rows)

    def chain(self, position: int) -> list[tuple[int, bool, bytes]]:
        base = max(p for p, (full, _) in self.rows.items() if full and p <= position)
        return [(p, *self.rows[p]) for p in self.positions if base <= p <= position]

    def decoded(self, position: int) -> Any:
        """The checkpoint rebuilt from every row of its chain, decoded afresh."""
        return rebuild(
            RULES, [(full, json.loads(zlib.decompress(data))) for _, full, data in self.chain(position)]
        )


ROWS = Rows()
PROPS = settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def test_the_rows_have_full_states_and_deltas() -> None:
    fulls = [p for p, (full, _) in ROWS.rows.items() if full]
    assert len(fulls) >= 3 and len(ROWS.rows) > 2 * len(fulls)


@PROPS
@given(
    picks=st.lists(st.integers(0, len(ROWS.positions) - 1), min_size=1, max_size=12),
    budget=st.sampled_from([0, 30_000, 10**9]),
)
def test_a_checkpoint_rebuilt_from_kept_rows_is_the_one_decoding_every_row_gives(
    picks: list[int], budget: int
) -> None:
    """Checkpoints asked in any order (earlier, later, in other stretches, again), with the
    loader keeping nothing, some or all of its rows: each is the state and orphans that
    decoding its whole chain gives, and handing one out changes no later one."""
    cache = snapshots.CheckpointRows(budget)
    load = point_loader(RULES, EVERY, ROWS.chain, cache)
    for i in picks:
        position = ROWS.positions[i]
        got_state, got_orphans = load(position)
        want_state, want_orphans = ROWS.decoded(position)
        same(got_state, want_state)
        assert dict(got_orphans) == dict(want_orphans)
        got_state.creatures.clear()  # the caller owns its copy: nothing the loader keeps changes
        assert cache.size <= budget  # the rows kept stay within the budget


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the checkpoint rows decompressed (decoded) from here on."""
    sizes: list[int] = []
    real = snapshots.zlib.decompress

    def counting(data: bytes, *args: Any) -> bytes:
        sizes.append(len(data))
        return real(data, *args)

    monkeypatch.setattr(snapshots.zlib, "decompress", counting)
    return sizes


def test_a_checkpoint_earlier_in_a_stretch_already_loaded_decodes_no_row(decoded: list[int]) -> None:
    """A page late in a stretch loads its full state and deltas; a page earlier in the same
    stretch, and one later than the first, then decode only rows never loaded."""
    fulls = sorted(p for p, (full, _) in ROWS.rows.items() if full)
    stretch = [p for p in ROWS.positions if fulls[1] <= p < fulls[2]]
    load = point_loader(RULES, EVERY, ROWS.chain)
    load(stretch[-2])
    assert len(decoded) == len(stretch) - 1
    decoded.clear()
    load(stretch[2])
    assert decoded == [], "the full state and the deltas before it were kept"
    load(stretch[-1])
    assert len(decoded) == 1, "only the delta never loaded"


def test_loaders_sharing_the_rows_decode_each_row_once(decoded: list[int]) -> None:
    """The application's loaders share one cache of loaded rows: a loader made afresh (the
    campaign reloaded after eviction, the other series, another campaign with the same rows)
    rebuilds a checkpoint another one loaded without decoding a row; the least recently used
    rows go beyond the budget."""
    rows = snapshots.CheckpointRows()
    position = ROWS.positions[-1]
    point_loader(RULES, EVERY, ROWS.chain, rows)(position)
    assert len(decoded) == len(ROWS.chain(position))
    decoded.clear()
    state, orphans = point_loader(RULES, EVERY, ROWS.chain, rows)(position)
    assert decoded == [], "the rows another loader loaded were shared"
    want_state, want_orphans = ROWS.decoded(position)
    same(state, want_state)
    assert dict(orphans) == dict(want_orphans)
    assert rows.hits == len(ROWS.chain(position))
    # a budget that holds about one row: the newest row is kept, the others let go
    small = snapshots.CheckpointRows(max(len(zlib.decompress(d)) for _, _, d in ROWS.chain(position)))
    point_loader(RULES, EVERY, ROWS.chain, small)(position)
    assert 1 <= len(small) < len(ROWS.chain(position)) and small.size <= small.budget


def test_a_rebuilt_state_shares_no_open_encounter_with_the_rows_it_came_from() -> None:
    """The rows stay loaded for the next rebuild, so the state handed out owns every encounter
    a fold may change (ended ones are never changed: shared, as in a series' own deltas)."""
    from domain.checkpoints import load_row, rebuild_loaded

    position = max(p for p in ROWS.positions if not ROWS.rows[p][0])
    rows = [
        load_row(RULES, full, json.loads(zlib.decompress(data))) for _, full, data in ROWS.chain(position)
    ]
    state, _ = rebuild_loaded(rows)
    kept = {id(e) for r in rows for e in (r.delta.encounters if r.delta else r.state.encounters).values()}
    open_ = [e for e in state.encounters.values() if e.state != "ended"]
    assert open_, "the checkpoint has an open encounter"
    assert not [e for e in open_ if id(e) in kept]
    same(state, ROWS.decoded(position)[0])
