"""The projector's row building and the values a ``COPY`` sends, against their general forms.

Laws:
- a history/log row pair from :func:`projections.projector.fact_rows` reads as the fact's
  :class:`~projections.narrate.FactStatus` says, whichever corrections touch it: the status
  columns are its flags and the log line is :func:`~projections.narrate.annotate` of the
  sentence (the rows of a fact no correction touches are built without a ``FactStatus``);
- the values :func:`projections.storage._copy_values` gives a row for PostgreSQL's ``COPY``
  are the values :meth:`ViewStore._values` stores with JSON written as text
  (:func:`projections.codec.dumps`, as SQLite stores it): text escaped, conveniences NULL when
  not 32-bit integers, whatever the row holds.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain.entries import Entry
from domain.ledger import Resolution
from projections.narrate import FactStatus, annotate
from projections.projector import _Reading, fact_rows
from projections.storage import _COLUMNS, SQLiteViews, _copy_values

CID = "6f1c1c9e-0000-4000-8000-00000000000a"


class _Ledger:
    """What ``fact_rows`` reads of a ledger: the facts at positions (the corrections' reasons)."""

    def __init__(self, entries: dict[int, Entry]) -> None:
        self.entries = entries

    def has(self, seq: int) -> bool:
        return seq in self.entries

    def entry(self, seq: int) -> Entry:
        return self.entries[seq]


def _entry(seq: int, type_: str, payload: dict[str, Any]) -> Entry:
    return Entry(seq, type_, 1, payload, {"recorded_at": f"2026-12-07T00:00:{seq:02d}"}, "2026-12-07")


@given(
    revoked=st.booleans(),
    amended=st.integers(0, 2),
    orphan=st.sampled_from([None, "", "its attack was revoked"]),
    overrides=st.sampled_from([None, {}, {"damage": 3}]),
    reasoned=st.booleans(),
)
def test_a_fact_row_reads_as_its_status_says(
    revoked: bool, amended: int, orphan: str | None, overrides: dict[str, Any] | None, reasoned: bool
) -> None:
    fact = _entry(5, "DamageTaken", {"target": "orc", "amount": 4})
    reason = {"reason": "misread die"} if reasoned else {}
    entries = {5: fact, 9: _entry(9, "FactRevoked", {"target": 5, **reason})}
    res = Resolution()
    if revoked:
        res.revoked[5] = 9
    if amended:
        res.amended[5] = {"target": "orc", "amount": 6}
        res.amended_by[5] = [10 + k for k in range(amended)]
        for k in range(amended):
            entries[10 + k] = _entry(10 + k, "FactAmended", {"target": 5, "reason": f"r{k}"})
    if overrides is not None:
        res.overrides[5] = overrides
    ledger = _Ledger(entries)
    reading = _Reading(fact, {"hp": 3}, orphan, "enc", 2, "Orc takes 4 damage.")

    row, line = fact_rows(CID, ledger, res, reading, 77)  # type: ignore[arg-type]

    status = FactStatus(
        revoked_at=9 if revoked else None,
        revoked_reason=("misread die" if reasoned else "") if revoked else "",
        amended_at=tuple(10 + k for k in range(amended)),
        amended_reasons=tuple(f"r{k}" for k in range(amended)),
        orphan_reason=orphan,
        overrides=dict(overrides or {}),
    )
    flags = status.flags
    assert line["line"] == annotate("Orc takes 4 damage.", status)
    assert line["struck"] is revoked
    assert row["active"] is (flags == ["active"])
    for flag in ("revoked", "amended", "orphaned", "overridden"):
        assert row[flag] is (flag in flags)
    assert row["payload"] == ({"target": "orc", "amount": 6} if amended else fact.payload)
    assert (row["revoked_by"], row["orphan_reason"]) == (9 if revoked else None, orphan)
    assert row["creatures"] == ["orc"]
    assert (row["notification_id"], line["notification_id"]) == (77, 77)


text = st.text(alphabet=st.characters(codec=None, blacklist_categories=()), max_size=8)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=10,
)
cell = st.one_of(scalars, st.lists(text, max_size=2), json_values)


@given(st.sampled_from(sorted(_COLUMNS)), st.data())
def test_copy_values_are_the_stored_values_with_json_as_text(table: str, data: st.DataObject) -> None:
    row = {c: data.draw(cell, label=c) for c in _COLUMNS[table]}
    stored = SQLiteViews._values(SQLiteViews.__new__(SQLiteViews), table, row)
    copied = _copy_values(table)(row)
    assert len(copied) == len(stored)
    for c, a, b in zip(_COLUMNS[table], copied, stored, strict=True):
        same = a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
        assert same and type(a) is type(b), (c, a, b)
