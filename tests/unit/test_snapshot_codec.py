"""Stored fold snapshots and checkpoints read back exactly as they were written.

``api.service.snapshots.decode`` reads with orjson (fast) and falls back to the standard
library for what orjson refuses; either way the data is what ``encode`` was given."""

from __future__ import annotations

import functools
import json
import math
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.service import snapshots
from api.service.demo import create_demo, demo_rulesets
from api.service.settings import Settings
from api.service.snapshots import ENCODE_CHUNK, ENCODE_DEPTH, decode, encode, json_pieces
from api.service.store import open_application
from tests.stored_campaigns import generated_facts
from tests.unit.test_state_snapshots import generated, prefix

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


any_keys = st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
deep_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(any_keys, inner, max_size=4)
    ),
    max_leaves=30,
)


@given(st.dictionaries(any_keys, deep_values, max_size=6))
def test_the_encoded_text_is_exactly_json_dumps(data: dict) -> None:  # type: ignore[type-arg]
    # written piece by piece, it is still the text one json.dumps writes (key order, non-string
    # keys, tuples, NaN, escapes): what was stored before reads the same, and rows compare alike
    expected = json.dumps(data, separators=(",", ":"))
    assert "".join(json_pieces(data, ENCODE_DEPTH)) == expected
    assert zlib.decompress(encode(data)).decode() == expected


def test_a_large_snapshot_is_compressed_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # a state of many creatures: its JSON text is never whole in memory, the compressor gets
    # it in chunks of about ENCODE_CHUNK characters (one creature never split, none merged past it)
    creature = {"hp": 10, "name": "x" * 200, "effects": [{"id": n} for n in range(5)]}
    data = {"state": {"creatures": {f"c{n}": dict(creature) for n in range(2_000)}}, "orphans": []}
    text = json.dumps(data, separators=(",", ":"))
    fed: list[int] = []
    real = zlib.compressobj

    class Recording:
        def __init__(self, *args: object) -> None:
            self._z = real(*args)  # type: ignore[arg-type]

        def compress(self, chunk: bytes) -> bytes:
            fed.append(len(chunk))
            return self._z.compress(chunk)

        def flush(self) -> bytes:
            return self._z.flush()

    monkeypatch.setattr(snapshots.zlib, "compressobj", Recording)
    assert zlib.decompress(encode(data)).decode() == text
    assert sum(fed) == len(text.encode()) > 8 * ENCODE_CHUNK
    one = len(json.dumps(creature, separators=(",", ":"))) + 16
    assert max(fed) <= ENCODE_CHUNK + one


@given(st.dictionaries(st.text(), deep_values, max_size=6), st.integers(min_value=1, max_value=4))
def test_a_streamed_object_is_written_as_its_members_would_be(data: dict, depth: int) -> None:  # type: ignore[type-arg]
    # a Streamed object is opened wherever it is met (in an opened container, or another
    # Streamed object at any depth), its members made as they are written
    expected = json.dumps({"s": data, "t": [data]}, separators=(",", ":"))
    inner = snapshots.Streamed(data.items)
    assert "".join(json_pieces({"s": inner, "t": [data]}, depth)) == expected
    outer = snapshots.Streamed(lambda: [("s", inner), ("t", [data])])
    assert "".join(json_pieces(outer, depth - 2)) == expected


def _counting(rules: Any, sizes: list[int]) -> Callable[[Any], Any]:
    """``rules.dump_state``, noting how many creatures and encounters each call is given."""

    def dump(state: Any) -> Any:
        sizes.append(len(state.creatures) + len(state.encounters))
        return rules.dump_state(state)

    return dump


@pytest.mark.parametrize("ruleset", demo_rulesets())
def test_a_streamed_state_is_the_whole_dump_one_creature_at_a_time(ruleset: str) -> None:
    # the snapshot writer dumps the fold's state a creature or an encounter at a time: the same
    # bytes as the whole dump, never the whole state's data at once
    app = open_application(Settings(database_url="memory:"))
    try:
        capture = app.ledger(create_demo(app, ruleset)).capture()
    finally:
        app.close()
    assert len(capture.state.creatures) > 1 and capture.state.encounters
    sizes: list[int] = []
    streamed = functools.partial(snapshots.streamed_state, _counting(capture.ruleset, sizes))
    assert encode(capture.to_json(streamed)) == encode(capture.to_json())
    assert sizes and max(sizes) == 1


def test_full_checkpoints_are_streamed_too() -> None:
    # the full states among a capture's checkpoint rows, likewise (deltas are dumped as they were)
    capture = prefix(generated(600, 21), 600, 16).capture()
    for kind in capture.series:
        plain = [(s, t, f, encode(d)) for s, t, f, d in capture.point_rows(kind, set(), full_every=4)]
        assert sum(1 for *_, f, _ in plain if f) > 1
        sizes: list[int] = []
        dump = functools.partial(snapshots.streamed_state, _counting(capture.ruleset, sizes))
        rows = [(s, t, f, encode(d)) for s, t, f, d in capture.point_rows(kind, set(), 4, dump=dump)]
        assert rows == plain
        assert sizes and max(sizes) == 1


def test_a_streamed_object_keeps_nul_lone_surrogates_and_the_escape_character() -> None:
    # text the event store accepted (names, notes) is written member by member exactly as the
    # whole dump writes it, and reads back the same
    awkward = {"a\x00b": "nul\x00", "\ud800lone": ["\udfff", "\ue000"], "plain": {"x\x00": 1}}
    expected = json.dumps(awkward, separators=(",", ":"))
    streamed = snapshots.Streamed(awkward.items)
    assert "".join(json_pieces(streamed, 1)) == expected
    assert decode(encode({"state": snapshots.Streamed(awkward.items)})) == {"state": awkward}


def test_encode_calls_its_pause_after_each_chunk_and_writes_the_same_bytes() -> None:
    # the snapshot writer's pause point between chunks: a fold snapshot of a large campaign is
    # encoded in many small steps, and a command that starts meanwhile waits for one chunk at most
    creature = {"hp": 10, "name": "x" * 200, "effects": [{"id": n} for n in range(5)]}
    data = {"state": {"creatures": {f"c{n}": dict(creature) for n in range(2_000)}}, "orphans": []}
    calls: list[int] = []
    blob = encode(data, pause=lambda: calls.append(1))
    assert blob == encode(data)
    text = json.dumps(data, separators=(",", ":"))
    assert 4 < len(calls) <= len(text) // ENCODE_CHUNK  # one per chunk compressed (the last: none)


def test_a_snapshot_write_gives_way_inside_its_encodes(monkeypatch: pytest.MonkeyPatch) -> None:
    # ChronicleApplication._store_capture hands its pause point to every encode (the fold
    # snapshot's and each checkpoint row's), not only between them
    monkeypatch.setattr(snapshots, "ENCODE_CHUNK", 256)
    app = open_application(Settings(database_url="memory:"))
    try:
        header = {"name": "Codec", "ruleset": "stellar-winds", "flags": {}, "meta": {}}
        cid = app.import_campaign(header, generated_facts(400, seed=5))  # checkpoint rows too
        counted: list[str] = []
        app._pause_point = lambda: counted.append("pause")  # type: ignore[method-assign]
        real = snapshots.encode
        paused: list[bool] = []

        def encoding(data: Any, pause: Callable[[], object] | None = None) -> bytes:
            counted.append("encode")
            paused.append(pause is not None)
            return real(data, pause=pause)

        monkeypatch.setattr("api.service.application.encode", encoding)
        app.write_snapshot(cid)
    finally:
        app.close()
    encodes = counted.count("encode")
    assert encodes >= 3 and all(paused)  # the fold snapshot's and every checkpoint row's
    # more pauses than the ones between the steps (two per fold snapshot, one per row batch)
    assert counted.count("pause") > 2 + 2 * encodes
