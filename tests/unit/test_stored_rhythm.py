"""How often a stored checkpoint series holds a full state (``Points.full_rhythm``), and the law
every rhythm keeps: a checkpoint rebuilt from its stored rows (the full state at or before it and
the deltas after that) reads as a fold from scratch reads there, in either time axis.

A full row every ``full_rhythm`` checkpoints: about as many as it takes for the deltas to weigh
what a full state does (creatures and encounters counted), a power of two within bounds -- a
10k-fact campaign's as-of no longer decodes up to 127 deltas, a 300k one's no more than before.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from hypothesis import assume, given
from hypothesis import strategies as st

from domain.checkpoints import Delta, Point, Series, rebuild
from domain.ledger import CORRECTED, FULL_ROWS_DELTA, FULL_ROWS_MAX, FULL_ROWS_MIN, RECORDED, Points
from domain.rulesets import summary as whole_state
from tests.unit.test_state_snapshots import RULES, SETTINGS, generated, prefix

EVERY = 16


@SETTINGS
@given(size=st.integers(120, 700), seed=st.integers(0, 10_000), kind=st.sampled_from([CORRECTED, RECORDED]))
def test_every_stored_checkpoint_rebuilds_as_a_fold_from_scratch_reads_there(
    size: int, seed: int, kind: str
) -> None:
    source = generated(size, seed)
    lived = prefix(source, size, EVERY)  # as a table played it: checkpoints every EVERY facts
    scratch = prefix(source, size, 1 << 30)  # no checkpoint at all: every as-of folds from the start
    capture = lived.capture()
    rhythm = capture.full_rhythm(capture.series[kind])
    rows = {
        seq: (full, json.loads(json.dumps(data))) for seq, _, full, data in capture.point_rows(kind, set())
    }
    positions = sorted(rows)
    assume(positions)  # (a series may hold no checkpoint: nothing to store)
    fulls = [i for i, p in enumerate(positions) if rows[p][0]]
    assert fulls[0] == 0 and all(b - a <= rhythm for a, b in zip(fulls, fulls[1:], strict=False))
    assert len(positions) - fulls[-1] <= rhythm, "no chain longer than the rhythm"
    for i, p in enumerate(positions):
        base = max(f for f in fulls if f <= i)
        state, orphans = rebuild(RULES, [rows[q] for q in positions[base : i + 1]])
        want_state, want_orphans = scratch.state_at(p, kind)
        # read alike (the summary a client sees; a refolded state may hold a dictionary in
        # another order than a fold from scratch, as it did before anything was stored)
        assert whole_state(RULES, state) == whole_state(RULES, want_state), (kind, p)
        assert dict(orphans) == dict(want_orphans), (kind, p)


def _series(deltas: list[int]) -> Series:
    """A series whose checkpoints hold deltas of these many creatures each."""
    series = Series(EVERY, 4)
    for j, k in enumerate(deltas):
        delta = Delta({f"c{i}": object() for i in range(k)}, {}, {})
        series.points.append(Point((j + 1) * EVERY, (j + 1) * EVERY, None, delta, None))
    return series


def _rhythm(creatures: int, series: Series) -> int:
    present = SimpleNamespace(creatures=dict.fromkeys(range(creatures)), encounters={})
    return Points.full_rhythm(SimpleNamespace(state=present), series)  # type: ignore[arg-type]


@given(
    creatures=st.integers(0, 100_000),
    deltas=st.lists(st.integers(0, 400), max_size=12),
)
def test_the_rhythm_is_the_power_of_two_at_which_the_deltas_weigh_about_a_full_state(
    creatures: int, deltas: list[int]
) -> None:
    rhythm = _rhythm(creatures, _series(deltas))
    assert FULL_ROWS_MIN <= rhythm <= FULL_ROWS_MAX and rhythm & (rhythm - 1) == 0
    each = sum(k + 1 for k in deltas) / len(deltas) if deltas else FULL_ROWS_DELTA
    ratio = (creatures + 1) / each
    if FULL_ROWS_MIN < rhythm:
        assert rhythm <= ratio, "the deltas of a chain never weigh much more than its full state"
    if rhythm < FULL_ROWS_MAX:
        assert ratio < 2 * rhythm, "nor much less"


def test_a_grown_campaign_stores_full_states_less_often_and_a_capture_without_a_present_at_the_most() -> None:
    small, big = _rhythm(40, _series([9, 9])), _rhythm(4000, _series([9, 9]))
    assert small == FULL_ROWS_MIN and small < big <= FULL_ROWS_MAX
    assert Points.full_rhythm(SimpleNamespace(), _series([9])) == FULL_ROWS_MAX  # type: ignore[arg-type]
