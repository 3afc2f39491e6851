"""GraphiQL works without the internet: a real ``chronicle serve``, headless Chromium that can
reach 127.0.0.1 only; a query and a subscription run in the page, and the page asks nothing of
any other host. Screenshots are kept under the test's tmp dir (and $CHRONICLE_ARTIFACTS) as artefacts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from api.cli.process import clean_env, served
from tests.e2e.browser import Page, keep_artifact, offline_page, require_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# The text in GraphiQL's result pane (a CodeMirror editor), or null before there is one.
RESULT = (
    "(() => { const e = document.querySelector('.result-window .CodeMirror');"
    " return e ? e.CodeMirror.getValue() : null; })()"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_chromium()
    tmp = tmp_path_factory.mktemp("graphiql")
    env = clean_env(CHRONICLE_DATABASE_URL=f"sqlite:///{tmp / 'chronicle.sqlite'}")
    with served(env, tmp) as (url, _proc):
        yield url


def graphql(
    url: str, query: str, variables: dict[str, object], token: str | None = None
) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = httpx.post(f"{url}/graphql", json={"query": query, "variables": variables}, headers=headers).json()
    assert "errors" not in body, body
    data: dict[str, object] = body["data"]
    return data


def campaign(url: str, name: str) -> tuple[str, str]:
    made = graphql(
        url,
        "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { id } gmToken } }",
        {"i": {"name": name}},
    )["createCampaign"]
    assert isinstance(made, dict)
    return made["campaign"]["id"], made["gmToken"]


def advance(url: str, campaign_id: str, token: str) -> int:
    out = graphql(
        url,
        "mutation($i: AdvanceTimeInput!) { advanceTime(input: $i) { position userErrors { code } } }",
        {"i": {"campaignId": campaign_id, "minutes": 10}},
        token,
    )["advanceTime"]
    assert isinstance(out, dict) and out["userErrors"] == [], out
    return int(out["position"])


def open_graphiql(page: Page, url: str, query: str, variables: dict[str, object], token: str) -> None:
    """GraphiQL with the editors prefilled from the URL, then the Run button pressed."""
    params = {
        "q": query,
        "variables": json.dumps(variables),
        "headers": json.dumps({"Authorization": f"Bearer {token}"}),
    }
    page.goto(f"{url}/graphql?{urlencode(params)}")
    page.wait_for("!!document.querySelector('.graphiql-execute-button')", "GraphiQL to render")
    page.wait_for(
        "(() => { const e = document.querySelector('.graphiql-query-editor .CodeMirror');"
        f" return !!e && e.CodeMirror.getValue() === {json.dumps(query)}; }})()",
        "the query editor to hold the query",
    )
    page.evaluate("document.querySelector('.graphiql-execute-button').click()")


def result(page: Page, contains: str, what: str) -> dict[str, object]:
    text = page.wait_for(
        f"(() => {{ const r = {RESULT}; return r && r.includes({json.dumps(contains)}) ? r : null; }})()",
        what,
    )
    data: dict[str, object] = json.loads(text)
    return data


def assert_only_this_server(page: Page, url: str) -> None:
    ws = url.replace("http://", "ws://", 1)
    foreign = [u for u in page.requests if not (u.startswith((url + "/", ws + "/", "data:")))]
    assert foreign == [], f"the page asked for something elsewhere: {foreign}"


def test_a_query_runs_in_graphiql_offline(server: str, tmp_path: Path) -> None:
    campaign_id, token = campaign(server, "Offline table")
    with offline_page(tmp_path) as (page, _proxy):
        open_graphiql(page, server, "query Mine { campaigns { id name } }", {}, token)
        answer = result(page, "Offline table", "the query's answer in the result pane")
        assert answer == {"data": {"campaigns": [{"id": campaign_id, "name": "Offline table"}]}}
        assert f"{server}/static/graphiql/vendor/graphiql.min.js" in page.requests
        assert_only_this_server(page, server)
        page.screenshot(tmp_path / "graphiql-query.png")
        keep_artifact(tmp_path / "graphiql-query.png")


def test_a_subscription_runs_in_graphiql_offline_and_goes_live(server: str, tmp_path: Path) -> None:
    campaign_id, token = campaign(server, "Offline live")
    first = advance(server, campaign_id, token)
    query = (
        "subscription Watch($c: ID!, $after: Int) "
        "{ campaignFacts(campaignId: $c, afterPosition: $after) { position type } }"
    )
    with offline_page(tmp_path) as (page, _proxy):
        open_graphiql(page, server, query, {"c": campaign_id, "after": first - 1}, token)
        caught_up = result(page, f'"position": {first}', "the stored fact, caught up over the subscription")
        assert caught_up == {"data": {"campaignFacts": {"position": first, "type": "TimeAdvanced"}}}
        live = advance(server, campaign_id, token)  # recorded while the page listens
        pushed = result(page, f'"position": {live}', "the new fact, pushed live")
        assert pushed == {"data": {"campaignFacts": {"position": live, "type": "TimeAdvanced"}}}
        ws = server.replace("http://", "ws://", 1) + "/graphql"
        assert ws in page.requests, "the subscription went over a WebSocket to this server"
        assert_only_this_server(page, server)
        page.screenshot(tmp_path / "graphiql-subscription.png")
        keep_artifact(tmp_path / "graphiql-subscription.png")
