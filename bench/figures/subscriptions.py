"""SUB: subscription fan-out -- 200 graphql-transport-ws subscribers (``campaignFacts``) on one
campaign of one server process: the time from sending a mutation (HTTP) until every subscriber
has the fact, vs the same with one subscriber. PostgreSQL, a fresh campaign; reported, no goal.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from bench.core import Context, Figure, percentile
from bench.procs import serving
from bench.stores import scratch

MUTATION = (
    "mutation($i: AdvanceTimeInput!) { advanceTime(input: $i) { position "
    "facts { position type outcome } userErrors { code message } } }"
)


def _gql(client: httpx.Client, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    r = client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    r.raise_for_status()
    body = r.json()
    if body.get("errors"):
        raise RuntimeError(f"GraphQL errors: {body['errors']}")
    return body["data"]


def _create_campaign(client: httpx.Client, name: str) -> tuple[str, str]:
    """(campaign global id, GM token)."""
    out = _gql(
        client,
        "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { id } "
        "gmToken userErrors { code } } }",
        {"i": {"name": name}},
    )["createCampaign"]
    return out["campaign"]["id"], out["gmToken"]


def _mutate(client: httpx.Client, campaign_gid: str, token: str) -> None:
    out = _gql(client, MUTATION, {"i": {"campaignId": campaign_gid, "minutes": 1}}, token)["advanceTime"]
    if out["userErrors"]:
        raise RuntimeError(f"mutation refused: {out['userErrors']}")


SUBSCRIPTION = (
    "subscription($c: ID!, $a: Int) { campaignFacts(campaignId: $c, afterPosition: $a) { position type } }"
)


async def _fanout(url: str, campaign_gid: str, token: str, subscribers: int, rounds: int) -> list[float]:
    """Open ``subscribers`` graphql-transport-ws subscriptions, then ``rounds`` times: send one
    mutation over HTTP and time until every subscriber has received its fact."""
    from websockets.asyncio.client import connect

    arrivals: dict[int, list[float]] = {}
    got = asyncio.Condition()
    ws_url = url.replace("http", "ws", 1) + "/graphql"
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:

        async def mutate() -> tuple[float, int]:
            began = time.perf_counter()
            r = await client.post(
                "/graphql",
                json={"query": MUTATION, "variables": {"i": {"campaignId": campaign_gid, "minutes": 1}}},
                headers={"Authorization": f"Bearer {token}"},
            )
            return began, int(r.json()["data"]["advanceTime"]["position"])

        q = "query($c: ID!) { campaign(id: $c) { position } }"
        r = await client.post(
            "/graphql",
            json={"query": q, "variables": {"c": campaign_gid}},
            headers={"Authorization": f"Bearer {token}"},
        )
        start = int(r.json()["data"]["campaign"]["position"])

        async def subscriber(ready: asyncio.Event, stop: asyncio.Event) -> None:
            protocols: Any = ["graphql-transport-ws"]
            async with connect(ws_url, subprotocols=protocols, max_queue=None) as ws:
                init = {"type": "connection_init", "payload": {"authorization": f"Bearer {token}"}}
                await ws.send(json.dumps(init))
                while json.loads(await ws.recv())["type"] != "connection_ack":
                    pass
                await ws.send(
                    json.dumps(
                        {
                            "id": "1",
                            "type": "subscribe",
                            "payload": {"query": SUBSCRIPTION, "variables": {"c": campaign_gid, "a": start}},
                        }
                    )
                )
                ready.set()
                recv = asyncio.ensure_future(ws.recv())
                halt = asyncio.ensure_future(stop.wait())
                while True:
                    done, _ = await asyncio.wait({recv, halt}, return_when=asyncio.FIRST_COMPLETED)
                    if halt in done:
                        recv.cancel()
                        return
                    msg = json.loads(recv.result())
                    now = time.perf_counter()
                    if msg["type"] == "next":
                        pos = msg["payload"]["data"]["campaignFacts"]["position"]
                        async with got:
                            arrivals.setdefault(pos, []).append(now)
                            got.notify_all()
                    elif msg["type"] == "ping":
                        await ws.send(json.dumps({"type": "pong"}))
                    elif msg["type"] in ("error", "complete"):
                        raise RuntimeError(f"subscription ended: {msg}")
                    recv = asyncio.ensure_future(ws.recv())

        stop = asyncio.Event()
        readies = [asyncio.Event() for _ in range(subscribers)]
        tasks = []
        for ev in readies:
            tasks.append(asyncio.create_task(subscriber(ev, stop)))
            await asyncio.sleep(0)  # do not open every connection in the same instant
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in readies)), 60)

        async def wait_all(pos: int) -> None:
            async with got:
                await asyncio.wait_for(got.wait_for(lambda: len(arrivals.get(pos, [])) >= subscribers), 60)

        latencies: list[float] = []
        try:
            _, pos = await mutate()  # warm-up: proves every subscription is live
            await wait_all(pos)
            for _ in range(rounds):
                await asyncio.sleep(0.2)
                began, pos = await mutate()
                await wait_all(pos)
                latencies.extend(t - began for t in arrivals[pos])
        finally:
            stop.set()
            await asyncio.gather(*tasks, return_exceptions=True)
        for t in tasks:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()  # type: ignore[misc]
        return latencies


def run(ctx: Context) -> list[Figure]:
    if not ctx.wants("SUB"):
        return []
    n, rounds = ctx.plan.subscribers, ctx.plan.sub_rounds * ctx.repeats(0)
    with scratch(ctx, "postgresql", "subs") as store:
        with (
            serving(store.url, ctx.budgets.memory_mb) as srv,
            httpx.Client(base_url=srv.url, timeout=120) as client,
        ):
            campaign_gid, token = _create_campaign(client, "Subscriptions")
            for _ in range(5):
                _mutate(client, campaign_gid, token)
            ctx.log("  subscriptions: 1 subscriber")
            one = asyncio.run(_fanout(srv.url, campaign_gid, token, 1, rounds))
            ctx.log(f"  subscriptions: {n} subscribers")
            many = asyncio.run(_fanout(srv.url, campaign_gid, token, n, rounds))
    out = []
    for p in (50, 99):
        v, f = percentile(many, p) * 1e3, percentile(one, p) * 1e3
        out.append(
            Figure(
                "SUB",
                f"fan-out latency p{p}, {n} WebSocket subscribers, one server (ms)",
                v,
                f,
                "ms",
                f"p{p} with 1 subscriber (mutation sent -> fact received)",
                store="postgresql",
                samples=len(many),
                detail={"subscribers": n, "rounds": rounds, "protocol": "graphql-transport-ws"},
            )
        )
    return out
