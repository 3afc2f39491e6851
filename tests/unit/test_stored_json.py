"""Stored facts are decoded by orjson where it reads exactly what json reads (issue 21, P2).

``api.service.jsonio.loads_exact`` decodes a stored fact's JSON with orjson (about half the CPU of
json) and falls back to json where orjson would differ: an integer past 64 bits (orjson turns it
into a float without a word), or what orjson refuses and json reads (NaN, Infinity, 1e400). The
law: for any JSON the store could hold, ``loads_exact`` is ``json.loads`` -- same values, same types.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from api.service.application import _decoded
from api.service.jsonio import loads_exact as _json

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same JSON types all the way down (1.8e19 is not 18446744073709551616)."""
    return bool(a == b and json.dumps(a) == json.dumps(b))


@given(values, st.booleans())
def test_stored_json_decodes_exactly_as_json_does(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":")).encode()
    assert same(_json(raw), json.loads(raw))


def test_integers_past_64_bits_stay_integers() -> None:
    for n in (2**64, 2**64 + 1, -(2**63) - 1, 10**30 + 7, -(10**25)):
        raw = json.dumps({"payload": {"n": n, "in": [n]}}).encode()
        got = _json(raw)
        assert got == {"payload": {"n": n, "in": [n]}}
        assert type(got["payload"]["n"]) is int and type(got["payload"]["in"][0]) is int


def test_what_orjson_refuses_is_read_as_json_reads_it() -> None:
    for raw in (b'{"a":NaN}', b'{"a":Infinity,"b":-Infinity}', b'{"a":1e400}'):
        assert json.dumps(_json(raw)) == json.dumps(json.loads(raw))


def test_a_stored_fact_becomes_the_same_entry_whichever_decoder_reads_it() -> None:
    fact = {
        "timestamp": {"_type_": "datetime_iso", "_data_": "2026-12-07T04:23:17.914963+00:00"},
        "fact_type": "DamageDealt",
        "fact_version": 2,
        "payload": {"amount": 2**65 + 3, "note": "héros ☄ 𝔘 \u0000", "ruling_id": "r1"},
        "meta": {"causation_id": 7, "tags": [{"deep": [1.5, -0.0, None]}]},
    }
    raw = json.dumps(fact, separators=(",", ":")).encode()
    entry = _decoded(9, raw)
    assert (entry.seq, entry.type, entry.version) == (9, "DamageDealt", 2)
    assert same(entry.payload, fact["payload"]) and same(entry.meta, fact["meta"])
    assert entry.timestamp == "2026-12-07T04:23:17.914963+00:00"
    assert entry.cites is None  # '"ruling' is in the JSON: the ledger looks for citations
