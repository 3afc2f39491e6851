"""The input limits (issue 13 §2, §5; docs/errors.md "Input limits").

The law: whatever ``domain.core.limits.json_problem`` accepts, the store's transcoder encodes and
reads back unchanged — so an accepted input can never fail at the append.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest
from eventsourcing.persistence import JSONTranscoder
from hypothesis import given, settings
from hypothesis import strategies as st

from api.graphql import sanitize
from api.service.auth import check_secret_key
from domain.core import limits as facts
from domain.core.catalogue import CORE
from domain.errors import InvalidInput

ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=30)
NUMBERS = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True))
JSON_LIKE = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, ANY_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(ANY_TEXT, inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON_LIKE)
def test_what_the_limits_accept_the_store_encodes_and_reads_back_unchanged(value: Any) -> None:
    if facts.json_problem(value) is not None:
        return
    transcoder = JSONTranscoder()
    assert transcoder.decode(transcoder.encode({"v": value})) == {"v": value}


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT)
def test_text_is_refused_exactly_for_control_characters_and_lone_surrogates(text: str) -> None:
    bad = any(
        ("\x00" <= ch < " " and ch not in "\t\n\r") or "\x7f" <= ch <= "\x9f" or "\ud800" <= ch <= "\udfff"
        for ch in text
    )
    assert (facts.text_problem(text) is not None) == bad


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": "ok", "b": ["x", "\x00"]}, "b.1"),
        ({"a": math.inf}, "a"),
        ({"a": -(2**53)}, "a"),
        ({"a": {"k" * 201: 1}}, "a"),
        ({"a": "x" * 2001}, "a"),
        ({"a": ["x" * 2000] * 51}, ""),  # more than 100,000 characters in all
        ({"a": list(range(5001))}, ""),  # more than 5000 values
    ],
)
def test_json_problems_name_the_innermost_field(value: Any, where: str) -> None:
    found = facts.json_problem(value)
    assert found is not None and found[0] == where


def test_a_payload_is_checked_as_json_before_its_fields() -> None:
    with pytest.raises(InvalidInput) as refused:
        CORE.validate(
            "RulingRecorded", {"ruling_id": "r", "question": "q", "decision": "d", "value": math.nan}
        )
    assert refused.value.field == "value"
    assert CORE.validate("NoteAdded", {"text": "tab\tand\r\nlines"}) == {"text": "tab\tand\r\nlines"}


@pytest.mark.parametrize(
    "key",
    [str(uuid.uuid4()), uuid.uuid4().hex, "Xq3_-b8ZkLw0PqT2mNv7aR", "create-" + str(uuid.uuid4())],
)
def test_a_secret_idempotency_key_is_accepted(key: str) -> None:
    assert check_secret_key(key) == key


@pytest.mark.parametrize(
    "key",
    ["8c1e0a5e-create", "ana-phone-1", "create-1", "a" * 40, "0" * 32, "01" * 16, "", "k" * 201, "ключ" * 10],
)
def test_a_guessable_idempotency_key_cannot_issue_a_token(key: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_secret_key(key)
    assert refused.value.field == "idempotencyKey"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"a": ' + "[" * 65 + "]" * 65 + "}", "nested more than 64 levels"),
        ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than 64 levels"),
        ('{"a": ' + "9" * 31 + "}", "more than 30 digits"),
        ('{"a": NaN}', "not a JSON number"),
        (b'{"a": "\xff"}', "not UTF-8"),
    ],
)
def test_a_request_body_beyond_the_limits_is_refused_while_decoding(body: str | bytes, reason: str) -> None:
    with pytest.raises(sanitize.BodyRefused) as refused:
        sanitize.decode_json(body)
    assert reason in refused.value.reason


def test_a_request_body_within_the_limits_decodes_as_json() -> None:
    assert sanitize.decode_json('{"a": [1, 2.5, "x\\ud800"]}') == {"a": [1, 2.5, "x\ud800"]}
    assert sanitize.decode_json(b'{"a": "\xed\xa0\x80"}') == {"a": "\ud800"}  # for the sanitiser to name


BIG_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, ANY_TEXT, st.text(min_size=1990, max_size=2010)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=40),
        st.dictionaries(st.one_of(ANY_TEXT, st.text(min_size=199, max_size=202)), inner, max_size=6),
    ),
    max_leaves=400,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(JSON_LIKE, BIG_JSON), st.integers(1, 6))
def test_the_quick_check_finds_a_problem_exactly_when_the_full_walk_does(value: Any, depth: int) -> None:
    """``json_problem`` first walks without naming paths (the common, accepted input) and only
    then the full walk: both answer alike, near every limit too (depth, long text, long keys)."""
    assert facts.json_problem(value, "p", depth) == facts._problem(value, "p", depth)
    assert facts.json_problem(value) == facts._problem(value, "", facts.MAX_JSON_DEPTH)
