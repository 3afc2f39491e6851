"""R2: two replicas -- two ``chronicle serve`` processes on one PostgreSQL store, clients on both.

Two phases, each ``Plan.replica_mutations`` mutations (the MUT mix) from ``Plan.replica_clients``
clients, client ``w`` sending to replica ``w % 2``:

- **one campaign**: every client writes to the cell's campaign (the live encounter of the MUT
  mix), so the two processes race for the same positions: the loser of a race gets the
  store's unique-key error, takes its unsaved facts back out, reads the other's and checks its
  command again;
- **two campaigns**: two fresh campaigns (each with the mix's encounter), client ``w`` writing to
  campaign ``(w // 2) % 2``, so each campaign is written through both replicas, at half the rate.

Every mutation carries an idempotency key of its own; a request that fails in transport, with an
HTTP error, a GraphQL error or a retryable refusal (``CONFLICT``, ``STORE_UNAVAILABLE``) is sent
again with the same key (up to ``ATTEMPTS`` times), as a client should. The latency of a
mutation is from its first send to its accepted answer, retries included.

After each phase the store is read back (the facts after the phase's first position, per
campaign) and compared with the accepted answers: **lost** = an accepted mutation whose facts
are not stored at the positions it was told (or not at all), **doubled** = a key stored as more
than one action (more facts than its answer named); also checked: every stored fact of the phase
carries a key some client sent, and positions are gap-free. Goals (issue 21): no mutation over
2 s, 0 lost, 0 doubled. The floor of the latency figures is the slowest of 50 bare
``Application.save()`` calls on the same store. PostgreSQL only (a SQLite store is one file on
one machine; its server runs the read models in process).
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from api.service.settings import Settings
from api.service.store import open_application
from bench import client as gq
from bench.cell import Cell
from bench.client import Table
from bench.core import Context, Figure, OverBudget, percentile
from bench.figures.requests import bare_saves
from bench.procs import Server

IDS = ("R2",)
ATTEMPTS = 6
RETRYABLE = {"CONFLICT", "STORE_UNAVAILABLE"}
FLOOR = "slowest of 50 bare Application.save(), same store"
LOST_RACES = "chronicle_lost_races_total"


@dataclass
class Outcome:
    """What the clients of one phase saw."""

    accepted: dict[str, list[int]] = field(default_factory=dict)  # key -> positions answered
    replayed: int = 0  # answers that said "an idempotent repeat" (a retry whose first try landed)
    latencies: list[float] = field(default_factory=list)  # per accepted mutation, retries included
    requests: list[float] = field(default_factory=list)  # per HTTP request
    retries: dict[str, int] = field(default_factory=dict)  # why -> count
    refused: list[str] = field(default_factory=list)  # non-retryable refusals (there should be none)
    gave_up: list[str] = field(default_factory=list)  # keys abandoned after ATTEMPTS
    sent: set[str] = field(default_factory=set)
    wall: float = 0.0
    reloads: int = 0  # campaign cold loads in the servers during the phase
    lost_races: int = 0  # commits that lost the race for their positions (caught up or reloaded)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _send(client: httpx.Client, query: str, variables: dict[str, Any], token: str) -> tuple[str, Any]:
    """One HTTP request: ("ok", payload) or (reason to retry, None) or ("refused: ...", None)."""
    try:
        r = client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
        )
    except httpx.TimeoutException:
        return "timeout", None
    except httpx.TransportError as exc:
        return f"transport {type(exc).__name__}", None
    if r.status_code != 200:
        return f"HTTP {r.status_code}", None
    body = r.json()
    if body.get("errors"):
        codes = {(e.get("extensions") or {}).get("code", "?") for e in body["errors"]}
        return f"GraphQL error {'/'.join(sorted(map(str, codes)))}", None
    payload = next(iter(body["data"].values()))
    errors = payload.get("userErrors") or []
    if errors:
        code = errors[0].get("code")
        if code in RETRYABLE:
            return f"refused {code}", None
        return f"refused: {errors}", None
    return "ok", payload


def _phase(
    ctx: Context, urls: list[str], tables: list[Table], n_clients: int, total: int, seed: int
) -> Outcome:
    out = Outcome()
    per = [total // n_clients + (1 if k < total % n_clients else 0) for k in range(n_clients)]
    barrier = threading.Barrier(n_clients + 1)
    deadline = time.monotonic() + ctx.budgets.phase_s
    errors: list[BaseException] = []
    run = uuid.uuid4().hex[:8]

    def worker(w: int, count: int) -> None:
        rng = random.Random(seed * 1000 + w)
        table = tables[(w // 2) % len(tables)]
        try:
            with httpx.Client(base_url=urls[w % len(urls)], timeout=ctx.budgets.request_s) as client:
                client.get("/healthz")
                barrier.wait()
                for k in range(count):
                    if time.monotonic() > deadline:
                        break
                    query, variables = gq.mutation(table, w + k * n_clients, rng)
                    key = f"r2-{run}-{w}-{k}"
                    variables["i"]["idempotencyKey"] = key
                    with out.lock:
                        out.sent.add(key)
                    began = time.perf_counter()
                    for _attempt in range(ATTEMPTS):
                        t0 = time.perf_counter()
                        status, payload = _send(client, query, variables, table.token)
                        took = time.perf_counter() - t0
                        with out.lock:
                            out.requests.append(took)
                            if status == "ok":
                                out.latencies.append(time.perf_counter() - began)
                                out.accepted[key] = [int(f["position"]) for f in payload["facts"]]
                                out.replayed += bool(payload.get("replayed"))
                            elif status.startswith("refused: "):
                                out.refused.append(status)
                            else:
                                out.retries[status] = out.retries.get(status, 0) + 1
                        if status == "ok" or status.startswith("refused: "):
                            break
                    else:
                        with out.lock:
                            out.gave_up.append(key)
        except threading.BrokenBarrierError:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
            barrier.abort()

    out.wall = gq.run_together(worker, per, barrier)
    if errors:
        raise RuntimeError(f"a client failed: {errors[0]!r}")
    return out


@dataclass
class Audit:
    lost: list[str]
    doubled: list[str]
    strangers: list[int]  # stored positions of the phase with no key a client sent
    gaps: list[str]
    stored: int
    unacknowledged: list[str]  # stored, but the client never got an answer (it gave up)


def _audit(url: str, starts: dict[UUID, int], out: Outcome) -> Audit:
    """Read every fact stored after each campaign's start position; compare with the answers."""
    app = open_application(Settings(database_url=url))
    stored: dict[str, list[int]] = {}
    strangers: list[int] = []
    gaps: list[str] = []
    count = 0
    try:
        for cid, start in starts.items():
            expect = start + 1
            for row in app.recorder.select_events(cid, gt=start):
                if row.originator_version != expect:
                    gaps.append(f"{cid}: {expect} missing before {row.originator_version}")
                expect = row.originator_version + 1
                count += 1
                meta = json.loads(row.state).get("meta") or {}
                key = meta.get("idempotency_key")
                if key in out.sent:
                    stored.setdefault(key, []).append(row.originator_version)
                else:
                    strangers.append(row.originator_version)
    finally:
        app.close()
    lost = [k for k, positions in out.accepted.items() if not set(positions) <= set(stored.get(k, []))]
    doubled = [k for k, positions in stored.items() if len(positions) > len(out.accepted.get(k, positions))]
    unacknowledged = [k for k in stored if k not in out.accepted]
    return Audit(lost, doubled, strangers, gaps, count, unacknowledged)


def _fresh_table(url: str, tag: str) -> Table:
    """A new campaign (through the API, with its GM token) and the mix's encounter on it."""
    with httpx.Client(base_url=url, timeout=60) as c:
        r = c.post(
            "/graphql",
            json={
                "query": "mutation($i: CreateCampaignInput!) { createCampaign(input: $i) { "
                "campaign { campaignId } gmToken userErrors { code message } } }",
                "variables": {"i": {"name": f"replicas {tag}", "ruleset": "stellar-winds"}},
            },
        )
        made = r.json()["data"]["createCampaign"]
        if made["userErrors"]:
            raise RuntimeError(f"createCampaign refused: {made['userErrors']}")
        table = Table(UUID(made["campaign"]["campaignId"]), made["gmToken"])
        gq.start_encounter(c, table, tag)
    return table


def _counted(urls: list[str], metric: str) -> int:
    """A counter's total so far, every label, both servers (``/metrics``)."""
    total = 0.0
    for url in urls:
        text = httpx.get(f"{url}/metrics", timeout=30).text
        for line in text.splitlines():
            if line.startswith(metric + "{"):
                total += float(line.rsplit(" ", 1)[1])
    return int(total)


def _cold_loads(urls: list[str]) -> int:
    """Campaign cold loads so far, both servers: a server that lost a race for a position and
    could not take its unsaved facts back out drops its copy and loads the campaign again."""
    return _counted(urls, "chronicle_campaign_loads_total")


def _head(url: str, table: Table) -> int:
    with httpx.Client(base_url=url, timeout=60) as c:
        _, data = gq.gql(c, "query($c: ID!) { campaign(id: $c) { position } }", {"c": table.gid}, table.token)
    return int(data["campaign"]["position"])


def run(ctx: Context, cell: Cell) -> list[Figure]:
    if cell.store.kind != "postgresql" or not ctx.wants("R2"):
        return []
    plan = ctx.plan
    _, floor_lat = bare_saves(cell.store.url, 50)
    floor = max(floor_lat) * 1e3
    servers = [Server(cell.store.url, ctx.budgets.memory_mb) for _ in range(2)]
    figures: list[Figure] = []
    try:
        for s in servers:
            s.start()
        urls = [s.url for s in servers]
        main = Table(UUID(cell.store.campaign_id), cell.store.token)
        with httpx.Client(base_url=urls[0], timeout=ctx.budgets.request_s) as c:
            gq.start_encounter(c, main, "r2")
        fresh = [_fresh_table(urls[0], f"r2-{k}") for k in range(2)]
        # each replica loads each campaign before the clock starts (COLD measures that)
        for url in urls:
            for t in (main, *fresh):
                _head(url, t)
        for label, tables in (("one campaign", [main]), ("two campaigns", fresh)):
            ctx.log(f"  [{cell.label}] two replicas, {label}: {plan.replica_clients} clients")
            starts = {t.campaign_id: _head(urls[0], t) for t in tables}
            loads, lost = _cold_loads(urls), _counted(urls, LOST_RACES)
            try:
                out = _phase(ctx, urls, tables, plan.replica_clients, plan.replica_mutations, ctx.seed)
            except OverBudget as exc:
                figures.append(_over(cell, label, exc, floor))
                continue
            out.reloads = _cold_loads(urls) - loads
            out.lost_races = _counted(urls, LOST_RACES) - lost
            audit = _audit(cell.store.url, starts, out)
            figures += _figures(cell, label, out, audit, floor, plan.replica_clients)
    finally:
        for s in servers:
            s.stop()
    return figures


def _over(cell: Cell, label: str, exc: OverBudget, floor: float) -> Figure:
    return Figure(
        "R2",
        f"two replicas, {label}: slowest mutation (ms)",
        None if exc.bound is None else exc.bound * 1e3,
        floor,
        "ms",
        FLOOR,
        goal="<= 2000",
        goal_on="value",
        store=cell.store.kind,
        size=cell.facts,
        budget=exc.what,
        bound=">",
    )


def _figures(cell: Cell, label: str, out: Outcome, audit: Audit, floor: float, clients: int) -> list[Figure]:
    n = len(out.latencies)
    detail = {
        "clients": clients,
        "accepted": n,
        "sent": len(out.sent),
        "http_requests": len(out.requests),
        "slowest_http_request_ms": round(max(out.requests, default=0) * 1e3, 1),
        "retries": out.retries,
        "replayed_answers": out.replayed,
        "server_reloads": out.reloads,
        "lost_races": out.lost_races,
        "refused": out.refused[:5],
        "gave_up": len(out.gave_up),
        "stored_facts": audit.stored,
        "unacknowledged_keys": len(audit.unacknowledged),
        "strangers": audit.strangers[:10],
        "gaps": audit.gaps[:10],
        "mutations_per_s": round(n / out.wall, 1) if out.wall else None,
        "p50_ms": round(percentile(out.latencies, 50) * 1e3, 1) if n else None,
    }
    common = {"store": cell.store.kind, "size": cell.facts, "samples": n}
    slowest = max(out.latencies, default=float("nan")) * 1e3
    figures = [
        Figure(
            "R2",
            f"two replicas, {label}: slowest mutation, retries included (ms)",
            slowest,
            floor,
            "ms",
            FLOOR,
            goal="<= 2000",
            goal_on="value",
            detail=detail,
            **common,
        ),
        Figure(
            "R2",
            f"two replicas, {label}: mutation p99 (ms)",
            percentile(out.latencies, 99) * 1e3 if n else None,
            floor,
            "ms",
            FLOOR,
            **common,
        ),
        Figure(
            "R2",
            f"two replicas, {label}: accepted mutations lost (stored facts vs answers)",
            float(len(audit.lost)),
            None,
            "mutations",
            "",
            goal="<= 0",
            goal_on="value",
            detail={"lost": audit.lost[:10]},
            **common,
        ),
        Figure(
            "R2",
            f"two replicas, {label}: mutations stored twice (idempotency keys)",
            float(len(audit.doubled)),
            None,
            "mutations",
            "",
            goal="<= 0",
            goal_on="value",
            detail={"doubled": audit.doubled[:10]},
            **common,
        ),
    ]
    if audit.gaps or audit.strangers or out.refused or out.gave_up:
        # not a race the store can lose: say so loudly in the table
        figures.append(
            Figure(
                "R2",
                f"two replicas, {label}: gaps, unknown facts, refusals, abandoned keys",
                float(len(audit.gaps) + len(audit.strangers) + len(out.refused) + len(out.gave_up)),
                None,
                "count",
                "",
                goal="<= 0",
                goal_on="value",
                detail=detail,
                **common,
            )
        )
    return figures
