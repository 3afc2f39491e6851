"""The figures P1-P6 and the subscription fan-out, each against a floor measured in the same run."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import random
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any
from uuid import UUID

import httpx

from api.exports import jsonl
from api.exports.service import export
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from api.service.views import open_views
from api.service.views import rebuild as rebuild_views
from bench import library_runner
from bench.campaigns import Stored, campaign
from bench.core import Context, Figure, median, paired, percentile, pg_schema, server, timed
from bench.generator import REVOCABLE
from domain.campaign import Campaign
from domain.ledger import CORRECTED, RECORDED, Entry, Ledger
from domain.rulesets import get_ruleset
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts

HEADER = {"name": "Bench", "ruleset": "stellar-winds", "flags": {}, "meta": {}}


def _ledger(entries: list[Stored]) -> Ledger:
    ledger = Ledger(get_ruleset("stellar-winds"), {}, first_seq=2)
    for i, (t, v, p, m) in enumerate(entries):
        ledger.append(Entry(i + 2, t, v, p, m))
    return ledger


def _full_fold(entries: list[Stored]) -> float:
    """Seconds to fold a fresh ledger of ``entries`` (checkpoints included), appends excluded."""
    ledger = _ledger(entries)
    gc.collect()
    t, _ = timed(lambda: ledger.state)
    return t


# ------------------------------------------------------------------------------- P1
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


def _create_campaign(client: httpx.Client, name: str) -> tuple[str, str, str]:
    """(campaign uuid, campaign global id, GM token)."""
    out = _gql(
        client,
        "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { campaign { id campaignId } "
        "gmToken userErrors { code } } }",
        {"i": {"name": name}},
    )["createCampaign"]
    return out["campaign"]["campaignId"], out["campaign"]["id"], out["gmToken"]


def _mutate(client: httpx.Client, campaign_gid: str, token: str) -> tuple[float, int]:
    began = time.perf_counter()
    out = _gql(client, MUTATION, {"i": {"campaignId": campaign_gid, "minutes": 1}}, token)["advanceTime"]
    took = time.perf_counter() - began
    if out["userErrors"]:
        raise RuntimeError(f"mutation refused: {out['userErrors']}")
    return took, int(out["position"])


def _clients(
    url: str, campaign_gid: str, token: str, n_clients: int, total: int
) -> tuple[float, list[float]]:
    """``total`` mutations from ``n_clients`` threads (one HTTP connection each): (wall s, latencies)."""
    latencies: list[float] = []
    errors: list[BaseException] = []
    per = [total // n_clients + (1 if k < total % n_clients else 0) for k in range(n_clients)]
    barrier = threading.Barrier(n_clients + 1)
    lock = threading.Lock()

    def worker(count: int) -> None:
        mine = []
        try:
            with httpx.Client(base_url=url, timeout=120) as client:
                _mutate(client, campaign_gid, token)  # connect + warm this connection
                barrier.wait()
                for _ in range(count):
                    mine.append(_mutate(client, campaign_gid, token)[0])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker, args=(c,)) for c in per]
    for t in threads:
        t.start()
    barrier.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    if errors:
        raise RuntimeError(f"a client failed: {errors[0]!r}")
    return wall, latencies


def _bare_saves(app: ChronicleApplication, n: int) -> tuple[float, list[float]]:
    """The floor: ``n`` facts of the same kind, one ``Application.save()`` each, no rules."""
    c = Campaign(name="floor", ruleset="stellar-winds", flags={}, meta={})
    app.save(c)
    latencies = []
    version = facts.versions["TimeAdvanced"]
    began = time.perf_counter()
    for _ in range(n):
        t0 = time.perf_counter()
        c.record(Entry(c.ledger.next_seq, "TimeAdvanced", version, {"minutes": 1}, {"recorded_at": "now"}))
        app.save(c)
        latencies.append(time.perf_counter() - t0)
    return time.perf_counter() - began, latencies


def p1(ctx: Context) -> list[Figure]:
    n = ctx.sizes.p1_requests
    out: list[Figure] = []
    with pg_schema(ctx, "p1") as settings:
        app = open_application(settings)
        try:
            with server(settings) as srv, httpx.Client(base_url=srv.url, timeout=120) as client:
                _, campaign_gid, token = _create_campaign(client, "P1")
                for _ in range(20):
                    _mutate(client, campaign_gid, token)  # warm up the server and the campaign
                _bare_saves(app, 20)
                runs: dict[int, list[tuple[float, list[float]]]] = {1: [], 20: []}
                floors: list[tuple[float, list[float]]] = []
                for r in range(ctx.repeat):
                    ctx.log(f"  P1 repetition {r + 1}/{ctx.repeat}")
                    floors.append(_bare_saves(app, n))
                    for k in (1, 20):
                        runs[k].append(_clients(srv.url, campaign_gid, token, k, n))
        finally:
            app.close()
    floor_rates = [n / w for w, _ in floors]
    floor_lat = [x for _, lat in floors for x in lat]
    for k in (1, 20):
        rates = [n / w for w, _ in runs[k]]
        ratios = [r / f for r, f in zip(rates, floor_rates, strict=True)]
        lat = [x for _, ls in runs[k] for x in ls]
        out.append(
            Figure(
                "P1",
                f"GraphQL mutations over HTTP, {k} client{'s' if k > 1 else ''} (facts/s)",
                median(rates),
                median(floor_rates),
                "facts/s",
                "bare Application.save(), 1 fact per save, same store",
                median(ratios),
                ">= 0.5",
                samples=ctx.repeat,
                detail={"requests_per_sample": n, "clients": k, "store": "postgresql"},
            )
        )
        for p in (50, 99):
            v, f = percentile(lat, p) * 1e3, percentile(floor_lat, p) * 1e3
            out.append(
                Figure(
                    "P1",
                    f"mutation latency p{p}, {k} client{'s' if k > 1 else ''} (ms)",
                    v,
                    f,
                    "ms",
                    f"p{p} of one bare Application.save()",
                    v / f,
                    samples=len(lat),
                )
            )
    return out


# ------------------------------------------------------------------------------- P2
def _import(app: ChronicleApplication, entries: list[Stored], chunk: int = 5_000) -> UUID:
    """Store a campaign, ``chunk`` facts per ``save()``.

    Not ``import_campaign`` (one save for the whole campaign): on PostgreSQL that single
    ``save()`` of 100k events never returned here (eventsourcing's pipelined executemany of
    every row in one transaction stalled with the server waiting on the client; 20k events
    took 2 s) — see bench/README.md.
    """
    c = Campaign(name=HEADER["name"], ruleset=HEADER["ruleset"], flags={}, meta={})
    pending = 1
    for t, v, p, m in entries:
        c.record(Entry(c.ledger.next_seq, t, v, p, m))
        pending += 1
        if pending >= chunk:
            app.save(c)
            pending = 0
    app.save(c)
    return c.id


def p2(ctx: Context) -> list[Figure]:
    entries = campaign(ctx.sizes.fold, ctx.seed, ctx.cache_dir)
    n = len(entries)
    with pg_schema(ctx, "p2") as settings:
        app = open_application(settings)
        try:
            ctx.log(f"  P2 storing {n:,} facts in PostgreSQL")
            cid = _import(app, entries)
            app._campaigns.clear()
            gc.collect()

            def decode() -> float:
                gc.collect()
                t, _ = timed(lambda: [app.mapper.to_domain_event(s) for s in app.recorder.select_events(cid)])
                return t

            split: list[tuple[float, float]] = []
            orphans: list[int] = []

            def full() -> float:
                gc.collect()
                t_load, agg = timed(lambda: app.repository.get(cid))
                t_fold, _ = timed(lambda: agg.ledger.state)
                split.append((t_load, t_fold))
                orphans.append(len(agg.ledger.orphans))
                return t_load + t_fold

            decode()
            v, f, ratio, _ = paired(ctx, full, decode)
        finally:
            app.close()
    # the ratio is a throughput ratio: decode time / full time
    load = median([a for a, _ in split])
    fold = median([b for _, b in split])
    detail = {
        "facts": n,
        "store": "postgresql",
        "decode_us_per_fact": f / n * 1e6,
        "load_us_per_fact": load / n * 1e6,
        "fold_only_us_per_fact": fold / n * 1e6,
        "full_us_per_fact": v / n * 1e6,
        "full_s": v,
        "decode_s": f,
        "orphans": orphans[-1] if orphans else None,
    }
    return [
        Figure(
            "P2",
            f"full Stellar Winds fold of {n:,} facts from the store (facts/s)",
            n / v,
            n / f,
            "facts/s",
            "read + decode the same stored events (recorder + mapper), no rules",
            1 / ratio,
            ">= 0.8",
            samples=ctx.repeat,
            detail=detail,
        ),
        Figure(
            "P2",
            "fold only, decoding excluded (us per fact)",
            fold / n * 1e6,
            f / n * 1e6,
            "us/fact",
            "decode cost per fact",
            fold / f,
            samples=ctx.repeat,
        ),
    ]


# --------------------------------------------------------------------------- P3, P4
def _revocable(ledger: Ledger, index: int) -> int:
    revoked = ledger.resolution.revoked
    for e in ledger.entries[index:] + ledger.entries[:index][::-1]:
        if e.type in REVOCABLE and e.seq not in revoked:
            return e.seq
    raise RuntimeError("no revocable fact")


def p3(ctx: Context) -> list[Figure]:
    entries = campaign(ctx.sizes.fold, ctx.seed, ctx.cache_dir)
    n = len(entries)
    ledger = _ledger(entries)
    ledger.state  # noqa: B018 - fold once, building the checkpoints
    out = []
    for pct, goal in ((1, "<= 1.0"), (50, "<= 1.0"), (99, "<= 0.1")):
        seq = _revocable(ledger, n * pct // 100)
        payload = facts.validate("FactRevoked", {"target": seq, "reason": "bench", "cascade": "fact"})

        def measure(seq: int = seq, payload: dict[str, Any] = payload) -> float:
            gc.collect()
            t, _ = timed(lambda: ledger.prepare("FactRevoked", payload, {"recorded_at": "now"}))
            return t

        v, f, ratio, _ = paired(ctx, measure, lambda: _full_fold(entries))
        out.append(
            Figure(
                "P3",
                f"recompute after revoking the fact at {pct}% (position {seq} of {n + 1:,}) (s)",
                v,
                f,
                "s",
                f"full fold of {n:,} facts",
                ratio,
                goal,
                samples=ctx.repeat,
                detail={"facts": n, "target": seq, "path": "Ledger.prepare(FactRevoked)"},
            )
        )
    return out


def p4(ctx: Context) -> list[Figure]:
    entries = campaign(ctx.sizes.fold, ctx.seed, ctx.cache_dir)
    n = len(entries)
    ledger = _ledger(entries)
    ledger.state  # noqa: B018
    rng = random.Random(ctx.seed)
    positions = [rng.randint(2, n + 1) for _ in range(ctx.sizes.p4_positions)]
    out = []
    for view in (CORRECTED, RECORDED):

        def measure(view: str = view) -> float:
            times = []
            for p in positions:
                gc.collect()
                t, _ = timed(lambda p=p: ledger.state_at(p, view))
                times.append(t)
            return median(times)

        v, f, ratio, _ = paired(ctx, measure, lambda: _full_fold(entries))
        out.append(
            Figure(
                "P4",
                f"state as of a random position, view {view!r} (s, median of {len(positions)} positions)",
                v,
                f,
                "s",
                f"full fold of {n:,} facts",
                ratio,
                "<= 0.05",
                samples=ctx.repeat,
                detail={"facts": n, "positions": positions, "view": view},
            )
        )
    return out


# ------------------------------------------------------------------------------- P5
def p5(ctx: Context) -> list[Figure]:
    entries = campaign(ctx.sizes.p5, ctx.seed, ctx.cache_dir)
    samples: dict[str, list[float]] = {"ours": [], "batch1": [], "library": []}
    with pg_schema(ctx, "p5") as settings:
        app = open_application(settings)
        views = open_views(settings)  # creates the view tables
        try:
            _import(app, entries)
            events = app.recorder.max_notification_id() or 0

            def ours(batch: int) -> float:
                gc.collect()
                result = rebuild_views(settings, batch_size=batch)
                return result.events / result.seconds

            def library() -> float:
                views.reset()
                library_runner.reset(settings)
                gc.collect()
                return library_runner.run(settings, app)

            for r in range(ctx.repeat):
                ctx.log(f"  P5 repetition {r + 1}/{ctx.repeat}")
                samples["library"].append(library())
                samples["ours"].append(ours(500))
                samples["batch1"].append(ours(1))
        finally:
            views.close()
            app.close()
    v = median(samples["ours"])
    out = []
    for key, floor_name, goal in (
        (
            "library",
            "eventsourcing ProjectionRunner + PostgresTrackingRecorder view writing the same rows, "
            "one event per transaction",
            ">= 4",
        ),
        ("batch1", "the same follower at batch size 1 (one transaction per event)", None),
    ):
        ratios = [a / b for a, b in zip(samples["ours"], samples[key], strict=True)]
        out.append(
            Figure(
                "P5",
                f"projection rebuild, 4 views, batch 500, {events:,} events, vs "
                f"{'library runner' if key == 'library' else 'our follower at batch 1'} (events/s)",
                v,
                median(samples[key]),
                "events/s",
                floor_name,
                median(ratios),
                goal,
                samples=ctx.repeat,
                detail={"events": events, "store": "postgresql", "samples": samples[key]},
            )
        )
    return out


# ------------------------------------------------------------------------------- P6
class _Sink(io.TextIOBase):
    """Counts what is written (a stand-in for a file or an HTTP response)."""

    def __init__(self) -> None:
        self.chars = 0

    def write(self, s: str) -> int:  # type: ignore[override]
        self.chars += len(s)
        return len(s)


def p6(ctx: Context) -> list[Figure]:
    entries = campaign(ctx.sizes.fold, ctx.seed, ctx.cache_dir)
    n = len(entries)
    app = open_application(Settings(database_url="memory:"))
    try:
        cid = _import(app, entries)
        app.campaign(cid)

        def run_export() -> float:
            gc.collect()
            sink = _Sink()
            t, _ = timed(lambda: [sink.write(line) for line in export(app, cid, "jsonl")])
            return n / t

        def floor() -> float:
            """json.dumps of the same fact objects, no ledger copy, no checksum."""
            gc.collect()
            sink = _Sink()
            ledger = app.ledger(cid)

            def go() -> None:
                for e in ledger.entries:
                    sink.write(
                        jsonl.dumps(
                            {
                                "position": e.seq,
                                "type": e.type,
                                "version": e.version,
                                "payload": e.payload,
                                "meta": e.meta,
                            }
                        )
                        + "\n"
                    )

            t, _ = timed(go)
            return n / t

        v, f, ratio, _ = paired(ctx, run_export, floor)
        size = sum(len(line.encode()) for line in export(app, cid, "jsonl"))
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            sink = _Sink()
            for line in export(app, cid, "jsonl"):
                sink.write(line)
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    finally:
        app.close()
    mb = 1024 * 1024
    return [
        Figure(
            "P6",
            f"JSONL export of {n:,} facts (facts/s; {size / mb:.0f} MB)",
            v,
            f,
            "facts/s",
            "json.dumps of the same facts, no ledger copy and no checksum",
            ratio,
            samples=ctx.repeat,
            detail={"facts": n, "bytes": size, "mb_per_s": v * size / n / mb},
        ),
        Figure(
            "P6",
            "JSONL export: peak memory growth (MB, tracemalloc)",
            peak / mb,
            size / mb,
            "MB",
            "size of the export file",
            peak / size,
            "< 50",
            goal_on="value",
            detail={"facts": n, "method": "tracemalloc peak minus baseline, campaign already loaded"},
        ),
    ]


# --------------------------------------------------------------------- subscriptions
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


def subscriptions(ctx: Context) -> list[Figure]:
    n, rounds = ctx.sizes.subscribers, ctx.sizes.sub_rounds * ctx.repeat
    with pg_schema(ctx, "subs") as settings:
        with server(settings) as srv, httpx.Client(base_url=srv.url, timeout=120) as client:
            _, campaign_gid, token = _create_campaign(client, "Subscriptions")
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
                v / f,
                samples=len(many),
                detail={"subscribers": n, "rounds": rounds, "protocol": "graphql-transport-ws"},
            )
        )
    return out


FIGURES: dict[str, Callable[[Context], list[Figure]]] = {
    "P1": p1,
    "P2": p2,
    "P3": p3,
    "P4": p4,
    "P5": p5,
    "P6": p6,
    "SUB": subscriptions,
}
