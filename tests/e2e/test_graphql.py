"""The GraphQL API end to end: a real ``chronicle serve`` process and independent clients
(Python ``gql`` over HTTP and WebSocket, the npm ``graphql-ws`` client, schemathesis)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.httpx import HTTPXTransport
from gql.transport.websockets import WebsocketsTransport

from api.cli.process import clean_env as server_env
from api.cli.process import served
from api.service.settings import Settings
from api.service.store import open_application
from tests.conftest import in_ci
from tests.e2e.test_serve import REPO, Server
from tests.graphql_helpers import GQL, create_campaign, gid, issue, pc

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
JS = REPO / "tests" / "e2e" / "js"


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("graphql") / "var" / "chronicle.sqlite"


@pytest.fixture(scope="module")
def server(db_path: Path) -> Iterator[Server]:
    env = server_env(
        CHRONICLE_DATABASE_URL=f"sqlite:///{db_path}",
        CHRONICLE_SUBSCRIPTION_POLL_SECONDS="0.5",
        CHRONICLE_MAX_BODY_BYTES="200000",
    )
    with served(env, db_path.parent.parent) as (url, proc):
        yield Server(url, proc)


@pytest.fixture
def g(server: Server) -> Iterator[GQL]:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield GQL(client)


def gql_http(server: Server, token: str) -> Client:
    transport = HTTPXTransport(
        url=f"{server.url}/graphql", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )
    return Client(transport=transport, fetch_schema_from_transport=False)


def test_a_table_over_http_with_gql(server: Server, g: GQL) -> None:
    cid, gm = create_campaign(g, "Over HTTP")
    aria, brom = pc(g, cid, gm, "Aria"), pc(g, cid, gm, "Brom", surgesPerDay=1)
    campaign = gid("Campaign", cid, cid)
    with gql_http(server, gm) as session:
        attack = session.execute(
            gql("""
            mutation($i: AttackInput!) { attack(input: $i) {
              userErrors { code } position
              facts { type outcome dice { expression faces } }
              characters { creatureId hitPoints { current max } } } }"""),
            variable_values={
                "i": {
                    "campaignId": campaign,
                    "attackerId": aria,
                    "idempotencyKey": "swing-1",
                    "power": {"kind": "MELEE", "defense": "AC", "attackBonus": 6, "damage": "1d8+3"},
                    "targets": [
                        {
                            "characterId": brom,
                            "attackRoll": {"expression": "1d20", "faces": [17]},
                            "damageRoll": {"expression": "1d8+3", "faces": [5]},
                        }
                    ],
                }
            },
        )["attack"]
        assert attack["userErrors"] == []
        assert [d["faces"] for d in attack["facts"][0]["dice"]] == [[17], [5]]
        hp = {c["creatureId"]: c["hitPoints"]["current"] for c in attack["characters"]}
        assert hp == {"aria": 30, "brom": 22}
        surge = """mutation($i: SpendHealingSurgeInput!) { spendHealingSurge(input: $i) {
            userErrors { code field }
            character { ... on StellarWindsCharacter { healingSurges { remaining } } } } }"""
        first = session.execute(
            gql(surge), variable_values={"i": {"campaignId": campaign, "characterId": brom}}
        )
        assert first["spendHealingSurge"]["character"]["healingSurges"]["remaining"] == 0
        again = session.execute(
            gql(surge), variable_values={"i": {"campaignId": campaign, "characterId": brom}}
        )
        assert again["spendHealingSurge"]["userErrors"][0]["code"] == "NO_HEALING_SURGE"
        stale = session.execute(
            gql(surge),
            variable_values={"i": {"campaignId": campaign, "characterId": aria, "expectedPosition": 2}},
        )
        assert stale["spendHealingSurge"]["userErrors"][0]["code"] == "CONFLICT"
        # server-rolled dice show their faces too
        rolled = session.execute(
            gql("""mutation($i: RollDiceInput!) { rollDice(input: $i) {
            facts { dice { expression faces total } } } }"""),
            variable_values={"i": {"campaignId": campaign, "roll": {"expression": "3d6"}}},
        )["rollDice"]["facts"][0]["dice"][0]
        assert len(rolled["faces"]) == 3 and rolled["total"] == sum(rolled["faces"])
    # history cursors are store positions: stable when facts are added
    page = g.ok(
        """query($c: ID!) { campaign(id: $c) { history(first: 2) {
        pageInfo { endCursor hasNextPage } nodes { position } } } }""",
        {"c": campaign},
        gm,
    )
    cursor = page["campaign"]["history"]["pageInfo"]["endCursor"]
    g.mutate("advanceTime", {"campaignId": campaign, "minutes": 10}, gm)
    nxt = g.ok(
        """query($c: ID!, $a: String) { campaign(id: $c) { history(first: 3, after: $a) {
        nodes { position type status } } } }""",
        {"c": campaign, "a": cursor},
        gm,
    )
    assert [n["position"] for n in nxt["campaign"]["history"]["nodes"]] == [3, 4, 5]
    too_big = g.raw(
        """query($c: ID!) { campaign(id: $c) { history(first: 101) { totalCount } } }""", {"c": campaign}, gm
    )
    assert too_big["errors"][0]["extensions"]["code"] == "PAGE_SIZE_OUT_OF_RANGE"


def test_idempotent_retries(g: GQL) -> None:
    cid, gm = create_campaign(g, "Retries", key=f"create-{uuid.uuid4()}")
    brom = pc(g, cid, gm, "Brom")
    campaign = gid("Campaign", cid, cid)
    hit = {"campaignId": campaign, "characterId": brom, "amount": 5, "idempotencyKey": "dmg-1"}
    first = g.mutate("dealDamage", hit, gm, "character { hitPoints { current } }")
    for _ in range(3):
        again = g.mutate("dealDamage", hit, gm, "character { hitPoints { current } }")
        assert again["replayed"] is True and again["facts"] == first["facts"]
    assert again["character"]["hitPoints"]["current"] == 25
    reused = g.mutate("dealDamage", {**hit, "amount": 6}, gm)
    assert reused["userErrors"][0]["code"] == "IDEMPOTENCY_KEY_REUSED"
    # createCampaign with the same key returns the same campaign and GM token
    key = f"create-{uuid.uuid4()}"
    assert create_campaign(g, "Same", key) == create_campaign(g, "Same", key)


def test_twenty_concurrent_clients_lose_and_double_nothing(server: Server, db_path: Path) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        g = GQL(client)
        cid, gm = create_campaign(g, "Crowd")
        target = pc(g, cid, gm, "Tank", maxHp=5000)
    campaign = gid("Campaign", cid, cid)
    errors: list[Any] = []

    def worker(n: int) -> None:
        try:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                w = GQL(client)
                for k in range(3):
                    inp = {
                        "campaignId": campaign,
                        "characterId": target,
                        "amount": 1,
                        "idempotencyKey": f"w{n}-{k}",
                    }
                    for _retry in range(2):  # every request is sent twice (a flaky phone)
                        out = w.mutate("dealDamage", inp, gm)
                        if out["userErrors"]:
                            errors.append(out["userErrors"])
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with httpx.Client(base_url=server.url, timeout=60) as client:
        g = GQL(client)
        got = g.ok(
            """query($c: ID!) { campaign(id: $c) { position
            history(first: 100, filter: {types: ["DamageTaken"]}) { totalCount }
            characters { creatureId raw } } }""",
            {"c": campaign},
            gm,
        )["campaign"]
    assert got["history"]["totalCount"] == 60
    assert got["characters"][0]["raw"]["hp"] == 5000 - 60
    # the final state equals a from-scratch fold of the stored facts
    fresh = open_application(Settings(database_url=f"sqlite:///{db_path}"))
    try:
        summary = fresh.summary(uuid.UUID(cid))
    finally:
        fresh.close()
    assert summary["position"] == got["position"]
    assert {c["creatureId"]: c["raw"] for c in got["characters"]} == json.loads(
        json.dumps(summary["creatures"])
    )


def test_subscription_and_a_mutation_over_websocket(server: Server, g: GQL) -> None:
    cid, gm = create_campaign(g, "Live")
    aria = pc(g, cid, gm, "Aria")
    campaign = gid("Campaign", cid, cid)
    start = g.ok("query($c: ID!) { campaign(id: $c) { position } }", {"c": campaign}, gm)["campaign"][
        "position"
    ]
    g.mutate("advanceTime", {"campaignId": campaign, "minutes": 5}, gm)  # caught up from the ledger

    async def run() -> list[dict[str, Any]]:
        transport = WebsocketsTransport(
            url=server.url.replace("http", "ws") + "/graphql", init_payload={"authorization": f"Bearer {gm}"}
        )
        async with Client(transport=transport, fetch_schema_from_transport=False) as session:
            got: list[dict[str, Any]] = []

            async def listen() -> None:
                sub = gql("""subscription($c: ID!, $a: Int) {
                    campaignFacts(campaignId: $c, afterPosition: $a) {
                    position type outcome changes { creatureId fields { field before after } } } }""")
                async for event in session.subscribe(sub, variable_values={"c": campaign, "a": start}):
                    got.append(event["campaignFacts"])
                    if len(got) == 2:
                        return

            task = asyncio.create_task(listen())
            await asyncio.sleep(0.3)
            out = await session.execute(
                gql("""mutation($i: DealDamageInput!) { dealDamage(input: $i) {
                userErrors { code } position } }"""),
                variable_values={"i": {"campaignId": campaign, "characterId": aria, "amount": 4}},
            )
            assert out["dealDamage"]["userErrors"] == []
            await asyncio.wait_for(task, 15)
            assert transport.subprotocol == "graphql-transport-ws"
            return got

    events = asyncio.run(run())
    assert [e["position"] for e in events] == [start + 1, start + 2]
    assert events[1]["type"] == "DamageTaken"
    assert events[1]["changes"][0]["creatureId"] == "aria"
    assert {"field": "hp", "before": 30, "after": 26} in events[1]["changes"][0]["fields"]


def test_the_npm_graphql_ws_client_resumes_without_gap_or_duplicate(server: Server, g: GQL) -> None:
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "graphql-ws").exists():
        reason = "node or tests/e2e/js/node_modules missing (run `make js`)"
        if in_ci():
            pytest.fail(f"{reason} (CI=true: required)")
        pytest.skip(reason)
    cid, gm = create_campaign(g, "Resume")
    campaign = gid("Campaign", cid, cid)
    player = issue(g, cid, gm, "VIEWER")  # a viewer can follow; the script's writes use the GM token
    start = g.ok("query($c: ID!) { campaign(id: $c) { position } }", {"c": campaign}, player)["campaign"][
        "position"
    ]
    result = subprocess.run(
        [node, "resume.mjs", server.url, gm, campaign, str(start)],
        cwd=JS,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["positions"] == list(range(start + 1, out["final"] + 1))


def test_limits(server: Server, g: GQL) -> None:
    cid, gm = create_campaign(g, "Limits")
    deep = "{ campaigns { " + "characters { campaign { " * 10 + "name" + " } }" * 10 + " } }"
    body = g.raw(deep, token=gm)
    assert "exceeds maximum operation depth" in body["errors"][0]["message"]
    aliases = "{ " + " ".join(f"a{i}: version" for i in range(40)) + " }"
    assert "aliases" in g.raw(aliases)["errors"][0]["message"]
    huge = httpx.post(
        f"{server.url}/graphql", json={"query": "{ version }", "pad": "x" * 300_000}, timeout=30
    )
    assert huge.status_code == 413
    assert g.raw("{ version }")["data"]["version"]


def test_schemathesis_fuzz_finds_no_server_error(server: Server, g: GQL) -> None:
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from schemathesis.graphql import nodes

    schemathesis.graphql.scalar(
        "JSON", st.one_of(st.integers(-5, 5).map(nodes.Int), st.text(max_size=5).map(nodes.String))
    )
    cid, gm = create_campaign(g, "Fuzz")
    pc(g, cid, gm, "Aria")
    auth = {"Authorization": f"Bearer {gm}"}
    schema = schemathesis.graphql.from_url(f"{server.url}/graphql", headers=auth)
    failures: list[str] = []
    deadline = time.monotonic() + 45
    examples = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if time.monotonic() > deadline or examples >= 100:
            break

        @settings(
            max_examples=2,
            deadline=None,
            phases=[Phase.generate],
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            nonlocal examples
            examples += 1
            response = case.call(headers=auth, timeout=10)
            if response.status_code >= 500:
                failures.append(f"{response.status_code} {case.body}")

        check()
    assert examples > 20
    assert failures == []
