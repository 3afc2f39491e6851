"""``POST /graphql`` goes straight to the GraphQL router (``api.graphql.router.GraphQLPost``),
past FastAPI's routing: it answers every request exactly as the FastAPI route answers it (status,
content type, body) -- good operations, refusals, errors, malformed and oversized bodies -- and
the HTTP metrics still label it ``/graphql``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from eventsourcing.persistence import IntegrityError, InterfaceError
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.graphql.router import ChronicleRouter, GraphQLPost
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid


def _without_fast_path(app: FastAPI) -> FastAPI:
    app.user_middleware = [m for m in app.user_middleware if m.cls is not GraphQLPost]
    return app


@pytest.fixture
def clients(memory_app: ChronicleApplication) -> Iterator[tuple[TestClient, TestClient]]:
    settings = Settings(database_url="memory:", max_body_bytes=4096)
    fast = create_app(settings, memory_app)
    assert any(m.cls is GraphQLPost for m in fast.user_middleware)
    slow = _without_fast_path(create_app(settings, memory_app))
    with TestClient(fast) as a, TestClient(slow) as b:
        yield a, b


def _answer(client: TestClient, body: bytes, headers: dict[str, str]) -> tuple[int, str, Any]:
    r = client.post("/graphql", content=body, headers=headers)
    kind = r.headers.get("content-type", "").split(";")[0]
    payload: Any = r.json() if kind == "application/json" else r.text
    if isinstance(payload, dict):  # request ids differ between the two calls
        text = json.dumps(payload)
        for e in payload.get("errors") or []:
            rid = (e.get("extensions") or {}).get("requestId")
            if rid:
                text = text.replace(rid, "RID")
        payload = json.loads(text)
    return r.status_code, kind, payload


def test_the_fast_path_answers_as_the_fastapi_route(clients: tuple[TestClient, TestClient]) -> None:
    fast, slow = clients
    cid, gm = create_campaign(GQL(fast))
    campaign = gid("Campaign", cid, cid)
    auth = {"authorization": f"Bearer {gm}"}
    note = "mutation($i: AddNoteInput!) { addNote(input: $i) { userErrors { code field } facts { type } } }"
    bodies: list[tuple[Any, dict[str, str]]] = [
        ({"query": "{ campaigns { name } }"}, auth),
        ({"query": "{ campaigns { name } }"}, {}),
        ({"query": "{ campaigns { nope } }"}, auth),
        ({"query": "{ campaigns { name "}, auth),
        (
            {"query": note, "variables": {"i": {"campaignId": campaign, "text": ""}}},
            auth,
        ),
        (
            {"query": note, "variables": {"i": {"campaignId": "bad", "text": "x"}}},
            auth,
        ),
        ({"query": "query { __typename }", "operationName": "Missing"}, {}),
        ({"nothing": 1}, {}),
        (b"{not json", {}),
        (b'{"query": "{ __typename }", "variables": ' + b"[" * 200 + b"]" * 200 + b"}", {}),
        (b'{"query": "' + b"x" * 5000 + b'"}', {}),
        ({"query": "mutation { __typename }"}, {"content-type": "text/plain"}),
    ]
    for body, headers in bodies:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent = {"content-type": "application/json", **headers}
        assert _answer(fast, raw, sent) == _answer(slow, raw, sent), body


def test_a_fast_path_request_is_counted_under_its_route(clients: tuple[TestClient, TestClient]) -> None:
    fast, _ = clients

    def count() -> float:
        line = 'chronicle_http_requests_total{method="POST",route="/graphql",status="200"} '
        found = [x for x in fast.get("/metrics").text.splitlines() if x.startswith(line)]
        return float(found[0].split()[-1]) if found else 0.0

    before = count()
    fast.post("/graphql", json={"query": "{ __typename }"})
    assert count() == before + 1


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (InterfaceError("the connection is closed"), 503, "STORE_UNAVAILABLE"),
        (IntegrityError("a constraint failed"), 500, "INTERNAL_SERVER_ERROR"),
    ],
    ids=["an outage", "another store error"],
)
def test_a_store_error_escaping_the_router_is_answered_as_the_fastapi_route_answers_it(
    clients: tuple[TestClient, TestClient],
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    status: int,
    code: str,
) -> None:
    """Outside the app's exception middleware, the fast path hands an exception escaping the
    router to the app's own handler: a store outage is 503 STORE_UNAVAILABLE (retryable), not a
    plain 500."""
    fast, slow = clients

    async def failing(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(ChronicleRouter, "run", failing)
    sent = {"content-type": "application/json"}
    raw = json.dumps({"query": "{ campaigns { name } }"}).encode()
    answer = _answer(fast, raw, sent)
    assert answer == _answer(slow, raw, sent)
    assert answer[0] == status and answer[2]["error"]["code"] == code
