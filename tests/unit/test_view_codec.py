"""The read models' escaping (projections/codec.py): whatever the event store accepted, the view
tables accept and give back exactly (issue 13 §3).

PostgreSQL's text and jsonb refuse NUL (and jsonb NaN/Infinity); neither store can encode a lone
surrogate as UTF-8. The laws: decoding inverts encoding; the encoded form holds none of those;
text without them is stored unchanged.
"""

from __future__ import annotations

import datetime
import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from projections import codec

# Any code point, with the troublesome ones drawn often.
chars = st.one_of(
    st.characters(exclude_categories=()),  # surrogates (Cs) included
    st.sampled_from(["\x00", "\ud800", "\udfff", "\ue000", "\\", "E", "0", "N"]),
)
texts = st.lists(chars, max_size=12).map("".join)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equality that counts NaN equal to NaN and tells 1 from 1.0 and True."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def storable(value: Any) -> bool:
    """Holds nothing PostgreSQL or UTF-8 refuse: no NUL, no lone surrogate, no non-finite float."""
    if isinstance(value, str):
        return not any(c == "\x00" or "\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(storable(v) for v in value)
    if isinstance(value, dict):
        return all(storable(k) and storable(v) for k, v in value.items())
    return True


def strict(text: str) -> Any:
    def refuse(token: str) -> None:
        raise ValueError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


@given(texts)
def test_text_round_trips_and_is_storable(text: str) -> None:
    encoded = codec.encode_text(text)
    assert codec.decode_text(encoded) == text
    assert storable(encoded)
    encoded.encode("utf-8")  # a lone surrogate would raise here


@given(texts)
def test_text_without_troublesome_characters_is_stored_unchanged(text: str) -> None:
    clean = "".join(c for c in text if c != "\ue000" and storable(c))
    assert codec.encode_text(clean) == clean


@given(values)
def test_json_round_trips_and_the_stored_text_is_strict_and_storable(value: Any) -> None:
    text = codec.dumps(value)
    text.encode("utf-8")
    assert storable(strict(text))  # what PostgreSQL's jsonb parses holds nothing it refuses
    assert same(codec.loads(text), value)
    assert same(codec.loads(text.encode("utf-8")), value)  # as psycopg hands jsonb over


@given(values)
def test_dumps_stores_the_value_the_json_module_stores(value: Any) -> None:
    """orjson writes the common case; the value stored (parsed back, as jsonb keeps it) is the one
    the json module's exact path writes, whatever the value holds (NaN, big integers, surrogates,
    NUL, the escape). The text itself may differ: orjson writes 1e-7 where json writes 1e-07."""
    reference = codec._dump_safe(codec.encode_json(value))
    assert same(strict(codec.dumps(value)), strict(reference))


def test_dumps_writes_a_null_with_orjson_unless_it_hides_a_nan_or_an_infinity() -> None:
    """Most rows hold a None: orjson's text stands when it parses back to the value (1e-7 is its
    spelling; the json module writes 1e-07); a NaN or an infinity orjson would write as null
    takes the json module's exact path, which marks it."""
    assert codec.dumps({"a": None, "b": 1e-7}) == '{"a":null,"b":1e-7}'
    assert codec.dumps([None, math.nan]) == '[null,"\ue000NaN"]'
    assert codec.dumps({"a": None, "b": [math.inf]}) == '{"a":null,"b":["\ue000+Inf"]}'


def test_dumps_refuses_what_the_json_module_refuses_and_writes_subclasses_as_it_does() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Name(str):
        pass

    with pytest.raises(TypeError):
        codec.dumps({"at": datetime.datetime(2026, 12, 7)})
    with pytest.raises(TypeError):
        codec.dumps({"when": datetime.date(2026, 12, 7)})
    assert codec.dumps({Name("k"): Level.HIGH, "big": 2**70, 1: None}) == json.dumps(
        {"k": 3, "big": 2**70, "1": None}, separators=(",", ":")
    )


def test_the_escape_is_documented_and_stable() -> None:
    assert codec.encode_text("a\x00b") == "a\ue0000000b"
    assert codec.encode_text("\ue000") == "\ue000E000"
    assert codec.dumps({"x": math.inf}) == '{"x":"\ue000+Inf"}'
    assert codec.dumps({"note": "plain"}) == '{"note":"plain"}'
    # a null beside a non-finite float deep inside (orjson writes both as null)
    assert codec.dumps({"x": None, "y": [(1, {"z": -math.inf})]}) == '{"x":null,"y":[[1,{"z":"\ue000-Inf"}]]}'
    assert codec.dumps({"x": None, "y": [1e-7]}) == '{"x":null,"y":[1e-7]}'  # orjson's text
