"""GET /campaigns/{id}/export.{md,jsonl,html}: streamed downloads through the export router."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID, uuid4

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.exports import service
from api.graphql.ids import campaign_gid
from api.http.exports import router
from api.rulesets.stellar_winds.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.demo import create_demo
from tests.graphql_helpers import gid


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[tuple[TestClient, UUID]]:
    web = FastAPI()
    web.state.application = memory_app
    web.include_router(router)
    cid = create_demo(memory_app)
    viewer = AccessControl(memory_app)
    gm = viewer.grant_gm(cid)
    token = viewer.issue(cid, "viewer", [], "a reader", None).token  # a viewer may export
    with TestClient(web, headers={"Authorization": f"Bearer {token}"}) as c:
        c.gm_token = gm  # type: ignore[attr-defined]
        yield c, cid


def test_exports_need_a_token_of_this_campaign(
    client: tuple[TestClient, UUID], memory_app: ChronicleApplication
) -> None:
    c, cid = client
    anonymous = c.get(f"/campaigns/{cid}/export.md", headers={"Authorization": ""})
    assert anonymous.status_code == 401
    assert (
        c.get(f"/campaigns/{cid}/export.md", headers={"Authorization": "Bearer chr_bogus"}).status_code == 401
    )
    other = create_demo(memory_app)
    other_gm = AccessControl(memory_app).grant_gm(other)
    # a token of another campaign learns nothing: the same 404 as a campaign that does not exist
    stranger = c.get(f"/campaigns/{cid}/export.md", headers={"Authorization": f"Bearer {other_gm}"})
    missing = c.get(f"/campaigns/{uuid4()}/export.md", headers={"Authorization": f"Bearer {other_gm}"})
    assert stranger.status_code == missing.status_code == 404
    assert stranger.json() == missing.json() | {
        "error": {"code": "NOT_FOUND", "message": f"no campaign {cid}", "field": "campaign"}
    }
    assert anonymous.json() == {
        "error": {"code": "UNAUTHENTICATED", "message": "a valid bearer token is required", "field": None}
    }
    assert anonymous.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize("fmt", service.FORMATS)
def test_each_format_streams_the_same_bytes_as_the_cli(
    client: tuple[TestClient, UUID], memory_app: ChronicleApplication, fmt: str
) -> None:
    c, cid = client
    r = c.get(f"/campaigns/{cid}/export.{fmt}")
    assert r.status_code == 200
    assert r.headers["content-type"] == service.MEDIA_TYPES[fmt]
    assert r.headers["content-disposition"].endswith(f'.{fmt}"')
    assert r.text == "".join(service.export(memory_app, cid, fmt))  # type: ignore[arg-type]


def test_parts_and_refusals(client: tuple[TestClient, UUID]) -> None:
    c, cid = client
    part = c.get(f"/campaigns/{cid}/export.md", params={"encounter": ENCOUNTER})
    assert part.status_code == 200 and "**#9**" in part.text and "**#64**" not in part.text
    ranged = c.get(f"/campaigns/{cid}/export.jsonl", params={"from": 3, "to": 5})
    assert len(ranged.text.splitlines()) == 5
    assert c.get(f"/campaigns/{uuid4()}/export.md").status_code == 404
    missing = c.get(f"/campaigns/{cid}/export.html", params={"encounter": "nope"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"
    backwards = c.get(f"/campaigns/{cid}/export.md", params={"from": 9, "to": 3})
    assert backwards.status_code == 400 and backwards.json()["error"]["field"] == "from"


def test_the_campaign_is_named_by_its_id_or_its_graphql_id(client: tuple[TestClient, UUID]) -> None:
    c, cid = client
    by_id = c.get(f"/campaigns/{cid}/export.jsonl")
    by_gid = c.get(f"/campaigns/{campaign_gid(cid)}/export.jsonl")
    assert by_id.status_code == by_gid.status_code == 200
    assert by_gid.content == by_id.content


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("kestrel-relay", "'kestrel-relay' is neither a campaign's id (a UUID) nor its GraphQL ID"),
        (
            "Q2hhcmFjdGVyOjA6eA==",
            "'Q2hhcmFjdGVyOjA6eA==' is neither a campaign's id (a UUID) nor its GraphQL ID",
        ),
    ],
)
def test_anything_else_is_one_clear_invalid_id(
    client: tuple[TestClient, UUID], ref: str, message: str
) -> None:
    c, _ = client
    r = c.get(f"/campaigns/{ref}/export.md")
    assert r.status_code == 400
    assert r.json() == {"error": {"code": "INVALID_ID", "message": message, "field": "campaign"}}


def test_the_id_of_another_kind_of_object_is_named_as_such(client: tuple[TestClient, UUID]) -> None:
    c, cid = client
    character = gid("Character", str(cid), "traze")
    r = c.get(f"/campaigns/{character}/export.md")
    assert r.status_code == 400
    assert r.json()["error"] == {
        "code": "INVALID_ID",
        "message": f"{character!r} is the GraphQL ID of a Character, not of a campaign",
        "field": "campaign",
    }


def test_a_query_parameter_that_is_not_a_number_is_the_same_shape(client: tuple[TestClient, UUID]) -> None:
    c, cid = client
    r = c.get(f"/campaigns/{cid}/export.md", params={"from": "ten"})
    assert r.status_code == 400
    error = r.json()["error"]
    assert set(r.json()) == {"error"} and (error["code"], error["field"]) == ("INVALID_INPUT", "from")
    assert "'ten'" in error["message"]


def test_every_refusal_has_the_one_documented_shape(client: tuple[TestClient, UUID]) -> None:
    c, cid = client
    refusals = [
        c.get(f"/campaigns/{cid}/export.md", headers={"Authorization": ""}),
        c.get(f"/campaigns/{uuid4()}/export.md"),
        c.get("/campaigns/nope/export.md"),
        c.get(f"/campaigns/{cid}/export.md", params={"to": "x"}),
        c.get(f"/campaigns/{cid}/export.md", params={"from": 9, "to": 3}),
        c.get(f"/campaigns/{cid}/export.md", params={"encounter": "nope"}),
    ]
    doc = (Path(__file__).resolve().parents[2] / "docs" / "exports.md").read_text(encoding="utf-8")
    for r in refusals:
        body = r.json()
        assert list(body) == ["error"] and set(body["error"]) == {"code", "message", "field"}, body
        assert f"| {r.status_code} | `{body['error']['code']}` |" in doc, (r.status_code, body)
