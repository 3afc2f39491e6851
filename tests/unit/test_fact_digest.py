"""The digest the projector keeps of each history and log row as last written
(``projections.projector._digest``): after a correction only the rows whose digest changed are
written again (issue 21).

Laws: equal rows digest equal, whatever the identity of their values (a string built at run
time, a value shared between two columns or copied); rows that differ in any column (the
notification id aside, which a rewrite keeps) digest differently, types told apart (1, 1.0,
True; "" and None); and a digest is the same in another process with another hash seed, so a
persisted digest would stay valid (today they live in memory only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from projections.projector import _digest

ROOT = Path(__file__).resolve().parents[2]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)
COLUMNS = ("campaign_id", "position", "fact_type", "creatures", "payload", "outcome", "line")
rows = st.fixed_dictionaries({c: values for c in COLUMNS})


def _rebuilt(value: Any) -> Any:
    """An equal value made of new objects (strings included: not the same, not interned)."""
    if isinstance(value, str):
        return "".join(list(value)) if len(value) > 1 else (value + "x")[:-1] if value else "".join([])
    if isinstance(value, list):
        return [_rebuilt(v) for v in value]
    if isinstance(value, dict):
        return {_rebuilt(k): _rebuilt(v) for k, v in value.items()}
    return value


def _same(a: Any, b: Any) -> bool:
    """Equality that tells 1, 1.0 and True apart (the digest does), and -0.0 from 0.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return repr(a) == repr(b)
    return bool(a == b)


@given(rows, st.integers(0, 10**9), st.integers(0, 10**9))
def test_equal_rows_digest_equal_whatever_their_identity(row: dict[str, Any], n1: int, n2: int) -> None:
    copy = {**_rebuilt(row), "notification_id": n1}
    shared = {**row, "notification_id": n2, "outcome": row["payload"]}  # one object in two columns
    apart = {**_rebuilt(row), "notification_id": n2, "outcome": _rebuilt(row["payload"])}
    assert _digest(row) == _digest(copy)
    assert _digest(shared) == _digest(apart)
    assert _digest(row) != 0


@given(rows, st.sampled_from(COLUMNS), values)
def test_rows_that_differ_digest_differently(row: dict[str, Any], column: str, value: Any) -> None:
    other = {**row, column: value}
    if _same(row[column], value):
        assert _digest(other) == _digest(row)
    else:
        assert _digest(other) != _digest(row)


def test_types_and_the_payload_are_told_apart() -> None:
    base = {"campaign_id": "c", "position": 2, "round": 1, "payload": {"a": 1}}
    assert len({_digest({**base, "round": v}) for v in (1, 1.0, True, "1", None, "")}) == 6
    assert _digest({**base, "payload": {"a": 2}}) != _digest(base)
    # the fact's own payload never changes for a position: left out when the caller says so
    assert _digest({**base, "payload": {"a": 2}}, own_payload=True) == _digest(base, own_payload=True)
    # a value that is not plain data is digested through its JSON text (repr for the rest)
    assert _digest({**base, "outcome": object}) == _digest({**base, "outcome": object})


SAMPLE = [
    {
        "campaign_id": "c1",
        "position": 7,
        "notification_id": 9,
        "fact_type": "AttackMade",
        "payload": {"t": "ö\u2603"},
    },
    {"campaign_id": "c1", "position": 8, "line": "Vex hits the orc for 7.", "struck": False, "round": None},
    {"payload": {"nested": [1, 2.5, {"x": [True, None]}]}, "outcome": {"hp": -3}, "creatures": ["a", "b"]},
]


def test_a_digest_is_the_same_in_another_process_with_another_hash_seed() -> None:
    here = [_digest(r) for r in SAMPLE]
    code = (
        "import json, sys; from projections.projector import _digest; "
        "print(json.dumps([_digest(r) for r in json.loads(sys.stdin.read())]))"
    )
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(SAMPLE),
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        assert json.loads(out.stdout) == here
