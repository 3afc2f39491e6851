"""GET /campaigns/{campaign}/table: the live table page's shell and its assets, served by the
product (in-process HTTP). The shell carries no campaign data (the script reads it through
GraphQL with the page's token), so it answers without a token; what it shows is in
tests/e2e/test_table_page.py (headless Chromium)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from urllib.parse import urljoin
from uuid import UUID, uuid4

import pytest
from fastapi.testclient import TestClient

from api.graphql.ids import campaign_gid, encode
from api.http.app import create_app
from api.http.table import ASSETS
from api.service.application import ChronicleApplication
from api.service.demo import create_demo
from api.service.settings import Settings


@pytest.fixture
def served(memory_app: ChronicleApplication) -> Iterator[tuple[TestClient, UUID]]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as client:
        yield client, create_demo(memory_app)


def test_the_page_is_served_by_uuid_or_graphql_id_for_the_campaign(served: tuple[TestClient, UUID]) -> None:
    client, cid = served
    by_uuid = client.get(f"/campaigns/{cid}/table")
    by_gid = client.get(f"/campaigns/{campaign_gid(cid)}/table")
    for page in (by_uuid, by_gid):
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        assert f'data-campaign="{campaign_gid(cid)}"' in page.text
    assert by_uuid.text == by_gid.text


def test_the_shell_holds_no_campaign_data_and_is_the_same_for_any_campaign(
    served: tuple[TestClient, UUID],
) -> None:
    client, cid = served
    page = client.get(f"/campaigns/{cid}/table").text
    assert "Kestrel" not in page and "Traze" not in page  # the demo's name and characters
    other = uuid4()
    stranger = client.get(f"/campaigns/{other}/table")
    assert stranger.status_code == 200
    assert stranger.text == page.replace(campaign_gid(cid), campaign_gid(other))


def test_a_reference_that_is_no_campaign_is_one_clear_error(served: tuple[TestClient, UUID]) -> None:
    client, cid = served
    for bad in ("nope", encode("Character", cid, "traze")):
        answer = client.get(f"/campaigns/{bad}/table")
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert (error["code"], error["field"]) == ("INVALID_ID", "campaign")


def test_the_page_loads_only_its_own_assets_under_a_strict_policy(served: tuple[TestClient, UUID]) -> None:
    client, cid = served
    url = f"http://testserver/campaigns/{cid}/table"
    page = client.get(url)
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert "connect-src 'self' ws://testserver wss://testserver" in policy
    assert "frame-ancestors 'none'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"
    assets = re.findall(r'(?:src|href)="(\.\./[^"]+)"', page.text)
    assert len(assets) == 2  # the stylesheet and the script
    for ref in assets:
        name, version = re.fullmatch(r"\.\./\.\./static/table/([\w.]+)\?v=(\w+)", ref).groups()  # type: ignore[union-attr]
        asset = client.get(urljoin(url, ref))
        assert asset.status_code == 200
        assert asset.content == (ASSETS / name).read_bytes()
        assert version == hashlib.sha256(asset.content).hexdigest()[:12]  # a new script, a new URL
    graphql = re.search(r'data-graphql="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    assert urljoin(url, graphql) == "http://testserver/graphql"
