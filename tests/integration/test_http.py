"""The bootstrap in-process: routes, health, readiness and the GraphQL mount."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import api.http.app
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as test_client:
        yield test_client


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_readyz_when_the_store_answers(client: TestClient) -> None:
    response = client.get("/readyz")
    assert (response.status_code, response.json()) == (200, {"status": "ready"})


def test_readyz_when_the_store_does_not_answer(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_: object) -> None:
        raise OSError("connection refused\n(second line)")

    monkeypatch.setattr(api.http.app, "check_store", broken)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"status": "not ready", "reason": "connection refused (second line)"}


def test_graphql_over_http(client: TestClient) -> None:
    response = client.post("/graphql", json={"query": "{ __typename version }"})
    assert response.status_code == 200
    body = response.json()
    assert body["data"]["__typename"] == "Query"
    assert body["data"]["version"]


def test_graphiql_is_served_to_browsers(client: TestClient) -> None:
    response = client.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 200
    assert "graphiql" in response.text.lower()


def test_the_app_opens_and_closes_its_own_store(tmp_path: Path) -> None:
    path = tmp_path / "own.sqlite"
    settings = Settings(database_url=f"sqlite:///{path}")
    with TestClient(create_app(settings)) as test_client:
        assert test_client.get("/readyz").status_code == 200
    assert path.exists()
