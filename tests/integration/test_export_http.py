"""GET /campaigns/{id}/export.{md,jsonl,html}: streamed downloads through the export router."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.application import ChronicleApplication
from api.demo import ENCOUNTER, create_demo
from api.exports import service
from api.exports.http import router


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[tuple[TestClient, UUID]]:
    web = FastAPI()
    web.state.application = memory_app
    web.include_router(router)
    cid = create_demo(memory_app)
    with TestClient(web) as c:
        yield c, cid


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
