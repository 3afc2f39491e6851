"""The schema file, the error codes, masking, introspection switch (in process)."""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.graphql.errors import ALL_CODES
from api.graphql.served import schema_sdl
from api.http.app import create_app
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from tests.graphql_helpers import GQL, create_campaign, gid

REPO = Path(__file__).resolve().parents[2]


def test_schema_graphql_matches_the_code() -> None:
    assert (REPO / "schema.graphql").read_text(encoding="utf-8") == schema_sdl(), "run `make schema`"


def domain_codes() -> set[str]:
    """Every code the domain raises: error classes, code= arguments, require(...) and code tuples."""
    names: set[str] = set()
    found: set[str] = set()
    for path in (REPO / "domain").rglob("*.py"):
        if path.name in ("narrate.py", "narration.py"):
            continue  # sentences, not codes ("NPC")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"[A-Z][A-Z_]{2,}", node.value)
            ):
                found.add(node.value)
    return found - names


def test_every_domain_code_is_in_the_enum_and_documented() -> None:
    doc = (REPO / "docs" / "errors.md").read_text(encoding="utf-8")
    codes = domain_codes()
    assert "NO_HEALING_SURGE" in codes and "NOT_YOUR_TURN" in codes
    assert codes <= set(ALL_CODES), sorted(codes - set(ALL_CODES))
    for code in ALL_CODES:
        assert f"| `{code}` |" in doc, code


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as test_client:
        yield test_client


def test_unexpected_errors_are_masked_with_a_request_id_and_logged(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    g = GQL(client)
    cid, gm = create_campaign(g)

    def broken(*_: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(ChronicleApplication, "view", broken)
    with caplog.at_level(logging.ERROR, logger="chronicle.graphql"):
        body = g.raw("query($c: ID!) { campaign(id: $c) { position } }", {"c": gid("Campaign", cid, cid)}, gm)
    error = body["errors"][0]
    assert "secret" not in error["message"]
    rid = error["extensions"]["requestId"]
    assert error["extensions"]["code"] == "INTERNAL_SERVER_ERROR" and rid in error["message"]
    assert any(rid in r.getMessage() and r.exc_info for r in caplog.records)


def test_typed_errors_pass_through(client: TestClient) -> None:
    body = GQL(client).raw('{ campaign(id: "nope") { name } }', token="chr_x")
    assert body["errors"][0]["extensions"]["code"] in ("INVALID_ID", "UNAUTHENTICATED")


def test_introspection_can_be_switched_off(memory_app: ChronicleApplication) -> None:
    settings = Settings(database_url="memory:", graphql_introspection=False)
    with TestClient(create_app(settings, memory_app)) as off:
        assert GQL(off).raw("{ __schema { queryType { name } } }")["errors"]
        assert GQL(off).raw("{ version }")["data"]["version"]
    assert Settings.from_env({"CHRONICLE_GRAPHQL_INTROSPECTION": "false"}).graphql_introspection is False
