"""GET /campaigns/{id}/export.{md,jsonl,html}: streamed downloads through the export router."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.exports import service
from api.http.exports import router
from api.rulesets.stellar_winds.demo import ENCOUNTER
from api.service.application import ChronicleApplication
from api.service.auth import AccessControl
from api.service.demo import create_demo


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
    assert stranger.json() == {
        "detail": {"code": "NOT_FOUND", "message": f"no campaign {cid}", "field": "campaign"}
    }


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
