"""Stored fold snapshots and checkpoints read back exactly as they were written.

``api.service.snapshots.decode`` reads with orjson (fast) and falls back to the standard
library for what orjson refuses; either way the data is what ``encode`` was given."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from api.service.snapshots import decode, encode

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_what_is_encoded_decodes_equal(data: dict) -> None:  # type: ignore[type-arg]
    assert decode(encode(data)) == data


def test_what_orjson_refuses_is_read_by_the_standard_library() -> None:
    data = {"huge": 2**70, "negative": -(2**80), "nan": math.nan, "inf": math.inf}
    back = decode(encode(data))
    assert back["huge"] == 2**70 and back["negative"] == -(2**80)
    assert math.isnan(back["nan"]) and back["inf"] == math.inf


def test_an_integer_past_64_bits_alone_stays_an_integer() -> None:
    """orjson reads such an integer as a float without complaint (nothing else in the row makes
    it refuse the row): the decoder must not let it."""
    for n in (2**64, -(2**63) - 1, 10**30, -(10**25)):
        back = decode(encode({"n": n, "list": [n, 1]}))
        assert back == {"n": n, "list": [n, 1]} and type(back["n"]) is int
    assert decode(encode({"x": 0.12345678901234568})) == {"x": 0.12345678901234568}
