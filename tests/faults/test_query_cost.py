"""Issue 13 §4: a query's cost is bounded before it runs, and no request blocks the server.

Against real ``chronicle serve`` processes, with a viewer token (enough for the attack), a
campaign of 40 creatures (120 where a query must run for seconds), and real clients (httpx,
gql over WebSocket):

- the issue's query (character -> campaign -> characters ..., depth 7) is refused, and so is a
  query of the same cost that still validates: ``QUERY_TOO_COMPLEX`` with the estimate, before
  anything runs; page sizes and variables count; a mutation over the limit stores nothing;
- a query whose lists are longer than estimated is stopped while it runs (``QUERY_TOO_COMPLEX``);
- on a server whose limit admits a query of seconds, ``/healthz`` answers while that query runs,
  and the query is stopped at ``CHRONICLE_GRAPHQL_TIMEOUT`` with ``QUERY_TIMEOUT``.

No timing assertion decides these tests, except one generous bound on ``/healthz`` while the
heavy query is in flight (1 s, against a query that runs for seconds).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from api.cli.process import Proc, clean_env, start_api
from tests.graphql_helpers import GQL, create_campaign, gid, issue, pc

pytestmark = [pytest.mark.e2e]

CREATURES = 40  # more than the estimate of 30 per list of characters
ISSUE_QUERY = (
    "query($c: ID!) { campaign(id: $c) { characters { campaign { characters { campaign { characters "
    "{ campaign { name } } } } } } } }"
)
SCALARS = "id creatureId name kind level lifeState position ruleset conditions raw hitPoints { current }"
SHEET = (
    f"{SCALARS} conditions raw hitPoints {{ current max temporary }} "
    "effects { effectId name conditions duration { kind } } "
    "... on StellarWindsCharacter { xp xpLevel secondWindUsed actionPoints initiativeBonus "
    "deathSaveFailures bloodied bloodiedValue "
    "wounds { current max } healingSurges { remaining perDay value } "
    "defenses { ac { base current againstRanged modifiers { source value } } "
    "fort { base current againstRanged modifiers { source value } } "
    "ref { base current againstRanged modifiers { source value } } "
    "will { base current againstRanged modifiers { source value } } } }"
)


@dataclass
class Table:
    url: str
    proc: Proc
    campaign: str  # global id
    campaign_id: str
    gm: str
    viewer: str

    def post(self, query: str, variables: dict[str, Any] | None = None, token: str | None = None) -> Any:
        response = httpx.post(
            f"{self.url}/graphql",
            json={"query": query, "variables": variables or {}},
            headers={"Authorization": f"Bearer {token or self.viewer}"},
            timeout=120,
        )
        assert response.status_code == 200, response.text
        return response.json()


def serve_table(workdir: Path, creatures: int = CREATURES, **settings: str) -> Iterator[Table]:
    env = clean_env(CHRONICLE_DATABASE_URL="memory:", CHRONICLE_LOG_LEVEL="warning", **settings)
    url, proc = start_api(env, workdir)
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            g = GQL(http)
            cid, gm = create_campaign(g, "Crowded")
            for i in range(creatures):
                pc(g, cid, gm, f"Creature {i}")
            viewer = issue(g, cid, gm, "VIEWER")
        yield Table(url, proc, gid("Campaign", cid, cid), cid, gm, viewer)
    finally:
        proc.terminate()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    """A server with the default limits (subscriptions poll the store once an hour)."""
    yield from serve_table(tmp_path_factory.mktemp("cost"), CHRONICLE_SUBSCRIPTION_POLL_SECONDS="3600")


@pytest.fixture(scope="module")
def generous(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    """A server whose cost limit admits a query of seconds (300 creatures), with a 1 s time limit."""
    yield from serve_table(
        tmp_path_factory.mktemp("generous"),
        creatures=300,
        CHRONICLE_GRAPHQL_MAX_COST="1000000",
        CHRONICLE_GRAPHQL_TIMEOUT="1",
    )


def code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors") or []
    return errors[0].get("extensions", {}).get("code") if errors else None


def as_of_aliases(n: int) -> str:
    return " ".join(f"a{i}: asOf(position: {2 + i}) {{ name }}" for i in range(n))


def test_the_issue_query_is_refused_and_so_is_any_query_of_its_cost(table: Table) -> None:
    attack = table.post(ISSUE_QUERY, {"c": table.campaign})
    assert attack.get("data") is None and attack["errors"], str(attack)[:300]

    # The same cost through fields that still exist: 30 (estimated) characters x 20 replays.
    same_cost = table.post(f"{{ campaigns {{ characters {{ {as_of_aliases(20)} }} }} }}")
    assert code(same_cost) == "QUERY_TOO_COMPLEX", str(same_cost)[:300]
    assert same_cost["data"] is None
    extensions = same_cost["errors"][0]["extensions"]
    assert extensions["cost"] > extensions["maxCost"] == 10_000


def test_page_sizes_and_variables_count(table: Table) -> None:
    pages = " ".join(
        f"h{i}: history(first: $n) {{ nodes {{ position type payload dice {{ faces }} }} }}"
        for i in range(10)
    )
    query = f"query($n: Int) {{ campaigns {{ {pages} }} }}"
    assert code(table.post(query, {"n": 100})) == "QUERY_TOO_COMPLEX"
    small = table.post(query, {"n": 5})
    assert "errors" not in small, small
    assert len(small["data"]["campaigns"][0]["h0"]["nodes"]) == 5


def test_a_mutation_over_the_limit_is_refused_and_stores_nothing(table: Table) -> None:
    before = table.post("{ campaigns { position } }")["data"]["campaigns"][0]["position"]
    mutation = (
        "mutation($i: AddNoteInput!) { addNote(input: $i) { position campaign { characters { "
        f"{as_of_aliases(20)} }} }} }} }}"
    )
    body = table.post(mutation, {"i": {"campaignId": table.campaign, "text": "heavy"}}, table.gm)
    assert code(body) == "QUERY_TOO_COMPLEX", str(body)[:300]
    after = table.post("{ campaigns { position } }")["data"]["campaigns"][0]["position"]
    assert after == before


def test_lists_longer_than_estimated_are_stopped_while_the_query_runs(table: Table) -> None:
    # Estimated 25 x (1 + 30 x 13) = 9,775 <= 10,000; with 40 creatures it resolves 13,025 fields.
    copies = " ".join(f"c{i}: campaigns {{ characters {{ {SCALARS} }} }}" for i in range(25))
    body = table.post(f"{{ {copies} }}")
    assert code(body) == "QUERY_TOO_COMPLEX", str(body)[:300]
    assert body["data"] is None
    assert "resolved more than 10000 fields" in body["errors"][0]["message"]
    fewer = " ".join(f"c{i}: campaigns {{ characters {{ {SCALARS} }} }}" for i in range(15))
    assert "errors" not in table.post(f"{{ {fewer} }}")  # 15 x 521 = 7,815 fields: answered


def test_the_limit_holds_over_websocket_too(table: Table) -> None:
    """Refused over graphql-transport-ws as over HTTP; a normal query is answered; and a mutation,
    which now runs on a worker thread, still wakes a subscription at once (the server's poll is
    an hour here, so only the wake-up can deliver the fact)."""

    async def run() -> tuple[Any, dict[str, Any], dict[str, Any]]:
        transport = WebsocketsTransport(
            url=table.url.replace("http", "ws") + "/graphql",
            init_payload={"authorization": f"Bearer {table.viewer}"},
        )
        async with Client(transport=transport, fetch_schema_from_transport=False) as session:
            try:
                await session.execute(gql(f"{{ campaigns {{ characters {{ {as_of_aliases(20)} }} }} }}"))
                refused: Any = None
            except TransportQueryError as exc:
                refused = exc.errors
            answered = await session.execute(gql("{ campaigns { name } }"))

            async def first_event() -> dict[str, Any]:
                sub = gql("subscription($c: ID!) { campaignFacts(campaignId: $c) { position type } }")
                sub.variable_values = {"c": table.campaign}
                async for event in session.subscribe(sub):
                    return dict(event["campaignFacts"])
                raise AssertionError("the subscription ended")

            listening = asyncio.create_task(first_event())
            await asyncio.sleep(0.5)
            mutation = "mutation($i: AddNoteInput!) { addNote(input: $i) { position } }"
            await asyncio.to_thread(
                table.post, mutation, {"i": {"campaignId": table.campaign, "text": "hi"}}, table.gm
            )
            return refused, answered, await asyncio.wait_for(listening, 30)

    refused, answered, event = asyncio.run(run())
    assert refused and refused[0]["extensions"]["code"] == "QUERY_TOO_COMPLEX"
    assert answered == {"campaigns": [{"name": "Crowded"}]}
    assert event["type"] == "NoteAdded"


@dataclass
class Probe:
    sent: float
    answered: float
    status: int


def probe_healthz(url: str, stop: threading.Event, into: list[Probe]) -> None:
    with httpx.Client(timeout=30) as http:
        while not stop.is_set():
            sent = time.monotonic()
            status = http.get(f"{url}/healthz").status_code
            into.append(Probe(sent, time.monotonic(), status))
            stop.wait(0.02)


def test_healthz_answers_while_the_heaviest_allowed_query_runs_which_stops_at_the_time_limit(
    generous: Table,
) -> None:
    # 30 full sheets of 300 creatures: about 500,000 fields, seconds of work.
    copies = " ".join(f"c{i}: campaigns {{ characters {{ {SHEET} }} }}" for i in range(30))
    probes: list[Probe] = []
    stop = threading.Event()
    sent = time.monotonic()
    prober = threading.Thread(target=probe_healthz, args=(generous.url, stop, probes))
    prober.start()
    try:
        body = generous.post(f"{{ {copies} }}")
    finally:
        answered = time.monotonic()
        stop.set()
        prober.join(30)
    during = [p for p in probes if p.sent >= sent + 0.1 and p.answered <= answered]
    assert len(during) >= 3, f"/healthz was answered {len(during)} times while the query ran"
    assert all(p.status == 200 for p in probes)
    slowest = max(p.answered - p.sent for p in during)
    assert slowest < 1.0, f"/healthz took {slowest:.2f}s while the query ran"
    assert code(body) == "QUERY_TIMEOUT", str(body)[:300]
    assert body["data"] is None


@pytest.mark.faults
def test_healthz_keeps_answering_under_many_heavy_queries_at_once(generous: Table) -> None:
    """The heavy version: 12 clients send the heaviest allowed query for 20 s."""
    copies = " ".join(f"c{i}: campaigns {{ characters {{ {SHEET} }} }}" for i in range(30))
    probes: list[Probe] = []
    stop = threading.Event()
    outcomes: list[str | None] = []

    def heavy() -> None:
        while not stop.is_set():
            outcomes.append(code(generous.post(f"{{ {copies} }}")))

    clients = [threading.Thread(target=heavy) for _ in range(12)]
    prober = threading.Thread(target=probe_healthz, args=(generous.url, stop, probes))
    for t in [*clients, prober]:
        t.start()
    time.sleep(20)
    stop.set()
    for t in [*clients, prober]:
        t.join(60)
    assert outcomes and set(outcomes) == {"QUERY_TIMEOUT"}
    assert len(probes) > 50 and all(p.status == 200 for p in probes)
    assert max(p.answered - p.sent for p in probes) < 1.0
