"""The query cost estimate is cached per document, operation and page-size variables
(``api.graphql.extensions.CostCache``): a cached document is still refused over the limit
(typed ``QUERY_TOO_COMPLEX``, nothing stored), a page-size variable still counts, and the cached
cost is always the estimate's."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from graphql import parse
from hypothesis import given, settings
from hypothesis import strategies as st

from api.graphql.extensions import CostCache, estimate_cost
from api.graphql.schema import build_schema
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid

PAGES = " ".join(
    f"h{i}: history(first: $n) {{ nodes {{ position type payload dice {{ faces }} }} }}" for i in range(10)
)
PAGED = f"query($n: Int) {{ campaigns {{ {PAGES} }} }}"
HEAVY_NOTE = (
    "mutation($i: AddNoteInput!) { addNote(input: $i) { position campaign { characters { "
    + " ".join(f"a{k}: asOf(position: 1) {{ name }}" for k in range(20))
    + " } } } }"
)


@functools.cache
def _schema() -> Any:
    return build_schema()._schema


@pytest.fixture
def g(memory_app: ChronicleApplication) -> Iterator[GQL]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as client:
        yield GQL(client)


def _code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors") or []
    return errors[0].get("extensions", {}).get("code") if errors else None


def test_a_cached_document_is_still_refused_and_page_sizes_still_count(g: GQL) -> None:
    cid, gm = create_campaign(g)
    for _ in range(3):  # the same document, again and again (cached after the first)
        assert _code(g.raw(PAGED, {"n": 100}, gm)) == "QUERY_TOO_COMPLEX"
        small = g.raw(PAGED, {"n": 5}, gm)
        assert "errors" not in small, small
    campaign = gid("Campaign", cid, cid)
    position = g.ok("{ campaigns { position } }", None, gm)["campaigns"][0]["position"]
    for _ in range(3):
        body = g.raw(HEAVY_NOTE, {"i": {"campaignId": campaign, "text": "heavy"}}, gm)
        assert _code(body) == "QUERY_TOO_COMPLEX" and body["data"] is None
        assert body["errors"][0]["extensions"]["cost"] > body["errors"][0]["extensions"]["maxCost"]
    assert g.ok("{ campaigns { position } }", None, gm)["campaigns"][0]["position"] == position


DOCUMENTS = [
    PAGED,
    "query($a: Int, $b: Int) { campaigns { history(first: $a, last: $b) { nodes { position } } } }",
    "query Q($n: Int) { campaigns { ...F } } "
    "fragment F on Campaign { history(first: $n) { nodes { type } } }",
    HEAVY_NOTE,
]


@settings(max_examples=60, deadline=None)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(range(len(DOCUMENTS))),
            st.dictionaries(
                st.sampled_from(["n", "a", "b", "i"]),
                st.none() | st.integers(-5, 300) | st.text(max_size=3),
                max_size=3,
            ),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_cached_cost_is_the_estimate(calls: list[tuple[int, dict[str, Any]]]) -> None:
    """Law: whatever the order of documents and variables, the cache answers the estimate."""
    schema = _schema()
    cache = CostCache(maxsize=2)
    for k, variables in calls:
        query = DOCUMENTS[k]
        document = parse(query)
        expected = estimate_cost(schema, document, None, variables)
        assert cache.cost(schema, query, document, None, variables) == expected


def test_a_repeated_document_is_not_estimated_again() -> None:
    schema = _schema()
    cache = CostCache()
    document = parse(PAGED)
    first = cache.cost(schema, PAGED, document, None, {"n": 5})
    assert cache.cost(schema, PAGED, document, None, {"n": 5}) == first
    assert cache.hits == 1
    assert cache.cost(schema, PAGED, document, None, {"n": 50}) > first  # another page size: estimated
    assert cache.hits == 1
