"""Requests through the real server: cold load, queries, mutations at 1/20/50 clients, as-of (P4),
revokes (P3), and the server's memory -- one ``chronicle serve`` process per (store, size) cell.

Figures (ids):

- COLD: a fresh server process answering its first query (one character's HP) on the
  campaign, vs the full fold a process without snapshots must do (read + decode + fold).
- QRY: warm queries from one client -- one character's HP, the live encounter, a history
  page at a random position (positions, types, statuses), the same page with each fact's
  outcome and narrated line (these fold the page's stretch from the checkpoint before it) --
  p50/p99, each vs the same query on a 1k campaign (same store, same run): per-request cost
  must not grow with the campaign.
- MUT: the mutation mix (attack, damage, heal, end of turn) from 1 and from 20 clients:
  mutations/s vs bare saves (the library's ``Application.save()`` of one event per save, same
  store, same fact count), p50/p99; and the 1-client p50 vs the same on a 1k campaign.
- W50: 50 writers on one campaign at once: p99 latency.
- P4: ``asOf`` at seeded random positions, views CORRECTED and RECORDED (one character's HP
  as of the position), vs a full fold.
- P3: ``revokeFact`` of a fact in the last 1 %, at 50 %, and early (an XP award at ~1 %,
  three times), vs a full fold.
- MEM: the server's RSS growth after the cold load per 100k facts (vs the campaign's own
  JSONL size per 100k facts), and its RSS after the three early revokes.

Budgets: each request has ``--budget-request`` seconds, each phase ``--budget-phase``; the
server is killed past ``--mem-budget``. A request over budget makes its figure ``MISS (>
budget)`` and the server is restarted (a fresh process, cold-loaded again) for the next phase.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from api.service.settings import Settings
from api.service.store import open_application
from bench import client as gq
from bench.cell import Cell, Floors
from bench.client import Table
from bench.core import Context, Figure, OverBudget, median, percentile
from bench.procs import Server
from domain.campaign import Campaign
from domain.ledger import Entry
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts

IDS = ("COLD", "QRY", "MUT", "W50", "P4", "P3", "MEM")
QUERIES = (
    ("character", "one character's HP"),
    ("encounter", "the live encounter"),
    ("history", "a history page (20 facts)"),
    ("narrated", "a history page with outcomes and lines (20 facts)"),
)
FOLD_FLOOR = "full fold of the campaign, loaded, in a fresh process (bench.work fold)"
COLD_FLOOR = "read + decode + full fold of the campaign in a fresh process (bench.work fold)"
SAVE_FLOOR = "bare Application.save(), one event per save, same store"


@dataclass
class Baseline:
    """The per-request figures on the 1k campaign of one store: what QRY and MUT compare against."""

    size: int = 0
    p50: dict[str, float] = field(default_factory=dict)  # kind -> seconds
    p99: dict[str, float] = field(default_factory=dict)

    def name(self) -> str:
        return f"the same on a {self.size:,}-fact campaign, same store, same run"


def bare_saves(url: str, n: int) -> tuple[float, list[float]]:
    """The mutation floor: ``n`` facts, one ``Application.save()`` each, on a campaign of its own
    in the same store; no rules, no HTTP. (wall seconds, per-save latencies)."""
    app = open_application(Settings(database_url=url))
    try:
        c = Campaign(name="floor", ruleset="stellar-winds", flags={}, meta={})
        app.save(c)
        version = facts.version("DamageTaken")
        payload = {"target": "x", "amount": 5, "types": [], "roll": None}
        latencies = []
        began = time.perf_counter()
        for _ in range(n):
            t0 = time.perf_counter()
            c.record(Entry(c.ledger.next_seq, "DamageTaken", version, payload, {"recorded_at": "now"}))
            app.save(c)
            latencies.append(time.perf_counter() - t0)
        return time.perf_counter() - began, latencies
    finally:
        app.close()


def ms(x: float) -> float:
    return x * 1e3


class Session:
    """One server process on a cell's store (restarted when a phase leaves it unusable), the
    figures it produced, and what the clients know of the campaign."""

    def __init__(self, ctx: Context, cell: Cell) -> None:
        self.ctx, self.cell = ctx, cell
        self.server = Server(cell.store.url, ctx.budgets.memory_mb)
        self.table = Table(UUID(cell.store.campaign_id), cell.store.token)
        self.rng = random.Random(ctx.seed)
        self.position = cell.facts + 1
        self.notes: list[str] = []
        self.figures: list[Figure] = []

    # ----------------------------------------------------------------- figures
    def add(
        self,
        id_: str,
        name: str,
        value: float | None,
        floor: float | None,
        unit: str,
        floor_name: str,
        **kw: Any,
    ) -> None:
        self.figures.append(
            Figure(
                id_,
                name,
                value,
                floor,
                unit,
                floor_name,
                store=self.cell.store.kind,
                size=self.cell.facts,
                **kw,
            )
        )

    def over(
        self,
        id_: str,
        name: str,
        unit: str,
        floor: float | None,
        floor_name: str,
        exc: OverBudget,
        goal: str | None,
        scale: float = 1.0,
    ) -> None:
        bound = None if exc.bound is None else exc.bound * scale
        self.add(
            id_,
            name,
            bound,
            floor,
            unit,
            floor_name,
            goal=goal,
            budget=exc.what,
            bound=">" if bound else "",
            detail=exc.partial,
        )

    # ---------------------------------------------------------------- requests
    @property
    def timeout(self) -> float:
        return self.ctx.budgets.request_s

    def deadline(self) -> float:
        return time.monotonic() + self.ctx.budgets.phase_s

    def call(self, query: str, variables: dict[str, Any], timeout: float | None = None) -> tuple[float, Any]:
        try:
            with self.server.client(timeout or self.timeout) as c:
                took, data = gq.gql(c, query, variables, self.table.token)
        except httpx.TransportError:
            if self.server.killed() == "memory":
                raise OverBudget(f"{self.ctx.budgets.memory_mb} MB") from None
            raise
        self.seen(data)
        return took, data

    def seen(self, data: Any) -> None:
        self.table.stored(data)
        for payload in data.values():
            if isinstance(payload, dict) and payload.get("position"):
                self.position = max(self.position, int(payload["position"]))

    def clients(
        self,
        n: int,
        total: int,
        request: Callable[[int, random.Random], tuple[str, dict[str, Any]]],
        seed: int,
    ) -> gq.Sample:
        try:
            return gq.clients(
                self.server.url,
                n,
                total,
                request,
                token=self.table.token,
                timeout=self.timeout,
                deadline=self.deadline(),
                on_data=self.seen,
                seed=seed,
            )
        except gq.RequestFailed:
            if self.server.killed() == "memory":
                raise OverBudget(f"{self.ctx.budgets.memory_mb} MB") from None
            raise

    def first_answer(self) -> float:
        """A fresh server's first answer: it loads and folds the whole campaign first, so its
        budget is the request budget or three full folds, whichever is longer."""
        floors = self.cell._floors
        timeout = max(self.timeout, 3 * floors.full_s) if floors else self.timeout
        took, _ = self.call(gq.CHARACTER_HP, {"id": self.table.character("traze")}, timeout)
        return took

    def guarded(self, phase: str, body: Callable[[], None], on_over: Callable[[OverBudget], None]) -> None:
        """Run a phase; over budget: report it, and restart the server (cold-loaded) for the next."""
        try:
            body()
        except OverBudget as exc:
            self.ctx.log(f"  [{self.cell.label}] {phase}: over budget ({exc.what})")
            on_over(exc)
            self.restart(f"{phase} over budget ({exc.what})")

    def restart(self, why: str) -> None:
        """A fresh server (the old one may still be busy with the request that ran out), loaded."""
        self.notes.append(f"{why}: server restarted")
        self.server.restart()
        self.first_answer()

    def close(self) -> None:
        self.server.stop()
        for f in self.figures:
            if self.notes:
                f.detail.setdefault("session_notes", self.notes)


# ------------------------------------------------------------------------ phases
def cold(s: Session, floors: Floors | None) -> None:
    full = None if floors is None else floors.full_s
    name = "cold load: fresh server, first answer (one character's HP) (s)"
    s.guarded(
        "COLD",
        lambda: s.add("COLD", name, s.first_answer(), full, "s", COLD_FLOOR, goal="<= 0.1"),
        lambda e: s.over("COLD", name, "s", full, COLD_FLOOR, e, "<= 0.1"),
    )


def queries(s: Session, baseline: Baseline, record: bool) -> None:
    for kind, label in QUERIES:
        s.ctx.log(f"  [{s.cell.label}] queries: {label}")
        try:
            sample = s.clients(
                1, s.ctx.plan.queries, lambda k, rng, kind=kind: gq.query(s.table, kind, rng, s.cell.facts), 1
            )
        except OverBudget as exc:
            s.over("QRY", f"query: {label}, one request (s)", "s", None, "", exc, None)
            s.restart(f"QRY {kind} over budget ({exc.what})")
            continue
        p50, p99 = percentile(sample.latencies, 50), percentile(sample.latencies, 99)
        if record:
            baseline.p50[kind], baseline.p99[kind] = p50, p99
            continue
        b50, b99 = baseline.p50.get(kind), baseline.p99.get(kind)
        detail = {"requests": len(sample.latencies), "capped": sample.capped}
        n = len(sample.latencies)
        s.add(
            "QRY",
            f"query p50: {label} (ms)",
            ms(p50),
            None if b50 is None else ms(b50),
            "ms",
            baseline.name(),
            goal="<= 1.5" if kind == "character" else None,
            samples=n,
            detail=detail,
        )
        s.add(
            "QRY",
            f"query p99: {label} (ms)",
            ms(p99),
            None if b99 is None else ms(b99),
            "ms",
            baseline.name(),
            samples=n,
            detail=detail,
        )


def mutations(s: Session, baseline: Baseline, record: bool) -> None:
    plan = s.ctx.plan
    counts = (1,) if record else (1, 20)
    bare_saves(s.cell.store.url, 10)  # warm the floor's connection
    floors: list[tuple[float, list[float]]] = []
    for k in counts:
        s.ctx.log(f"  [{s.cell.label}] mutations: {k} client(s)")
        floors.append(bare_saves(s.cell.store.url, plan.mutations_1))
        who = f"{k} client{'s' if k > 1 else ''}"
        total = plan.mutations_1 if k == 1 else plan.mutations_20
        try:
            sample = s.clients(k, total, lambda j, rng: gq.mutation(s.table, j, rng), s.ctx.seed + k)
        except OverBudget as exc:
            s.over("MUT", f"mutations, {who}: one request (s)", "s", None, "", exc, ">= 0.5")
            s.restart(f"MUT {who} over budget ({exc.what})")
            continue
        p50, p99 = percentile(sample.latencies, 50), percentile(sample.latencies, 99)
        if record:
            baseline.p50["mutation"], baseline.p99["mutation"] = p50, p99
            continue
        floor_rate = median([plan.mutations_1 / w for w, _ in floors])
        floor_lat = [x for _, lat in floors for x in lat]
        rate = len(sample.latencies) / sample.wall if sample.wall else float("nan")
        n = len(sample.latencies)
        detail = {
            "requests": n,
            "capped": sample.capped,
            "clients": k,
            "p50_ms_by_kind": sample.kind_p50_ms(),
        }
        s.add(
            "MUT",
            f"mutations/s, {who} (attack/damage/heal/endTurn)",
            rate,
            floor_rate,
            "facts/s",
            SAVE_FLOOR,
            goal=">= 0.5",
            samples=n,
            detail=detail,
        )
        for p, v in ((50, p50), (99, p99)):
            s.add(
                "MUT",
                f"mutation latency p{p}, {who} (ms)",
                ms(v),
                ms(percentile(floor_lat, p)),
                "ms",
                f"p{p} of one bare Application.save(), same store",
                samples=n,
            )
        if k == 1:
            b = baseline.p50.get("mutation")
            s.add(
                "MUT",
                "mutation p50, 1 client, vs the same on a 1k campaign (ms)",
                ms(p50),
                None if b is None else ms(b),
                "ms",
                baseline.name(),
                goal="<= 1.5",
                samples=n,
            )


def writers(s: Session) -> None:
    s.ctx.log(f"  [{s.cell.label}] 50 writers")
    _, floor_lat = bare_saves(s.cell.store.url, 50)
    name = "50 writers on one campaign: latency p99 (ms)"

    def body() -> None:
        sample = s.clients(
            50, s.ctx.plan.writers_50, lambda j, rng: gq.mutation(s.table, j, rng), s.ctx.seed + 50
        )
        s.add(
            "W50",
            name,
            ms(percentile(sample.latencies, 99)),
            ms(percentile(floor_lat, 99)),
            "ms",
            "p99 of one bare Application.save(), same store",
            goal="< 250",
            goal_on="value",
            samples=len(sample.latencies),
            detail={
                "requests": len(sample.latencies),
                "capped": sample.capped,
                "p50_ms": ms(percentile(sample.latencies, 50)),
            },
        )

    s.guarded("W50", body, lambda e: s.over("W50", name, "ms", None, "", e, "< 250", scale=1e3))


def as_of(s: Session, floors: Floors | None) -> None:
    fold = None if floors is None else floors.fold_s
    positions = sorted(s.rng.randint(10, s.cell.facts + 1) for _ in range(s.ctx.plan.as_of_positions))
    for view in ("CORRECTED", "RECORDED"):
        s.ctx.log(f"  [{s.cell.label}] as-of, view {view}")
        name = f"as-of a random position, view {view} (s, median of {len(positions)})"

        def body(view: str = view, name: str = name) -> None:
            times = []
            for p in positions:
                took, _ = s.call(gq.AS_OF, {"id": s.table.character("traze"), "p": p, "v": view})
                times.append(took)
            s.add(
                "P4",
                name,
                median(times),
                fold,
                "s",
                FOLD_FLOOR,
                goal="<= 0.05",
                samples=len(times),
                detail={"positions": positions, "times": times},
            )

        s.guarded(
            f"P4 {view}", body, lambda e, name=name: s.over("P4", name, "s", fold, FOLD_FLOOR, e, "<= 0.05")
        )


def revokes(s: Session, floors: Floors | None, rss_cold: float) -> None:
    """Revoke in the last 1 %, at 50 %, then three early XP awards; the server's RSS after."""
    cell, fold = s.cell, None if floors is None else floors.fold_s
    head = s.position
    window = max(1, head // 100)
    ours = s.table.positions.get("DamageTaken", [])  # the damage the mix just dealt
    last = [p for p in ours if p >= head - window] or cell.revocable(head - window, head) or ours[-1:]
    mid = cell.revocable(cell.facts // 2, cell.facts)[:1]
    early = cell.revocable(max(2, cell.facts // 100), cell.facts, ("ExperienceAwarded",))[:3]
    if len(early) < 3:
        early = cell.revocable(max(2, cell.facts // 100), cell.facts)[:3]
    plan = [("in the last 1%", last[-1:], "<= 0.1"), ("at 50%", mid, "<= 1.0")]
    plan += [(f"early #{i + 1} (XP award at ~1%)", [p], "<= 1.0") for i, p in enumerate(early)]
    rss_before = s.server.rss()
    starts = s.server.starts
    for what, targets, goal in plan:
        if not targets:
            continue
        target = targets[0]
        name = f"revoke {what}: fact {target} of {head:,} (s)"
        s.ctx.log(f"  [{cell.label}] {name}")

        def body(target: int = target, name: str = name, goal: str = goal) -> None:
            took, _ = s.call(
                gq.REVOKE,
                {"i": {"campaignId": s.table.gid, "position": target, "reason": "bench", "cascade": "FACT"}},
            )
            s.add(
                "P3",
                name,
                took,
                fold,
                "s",
                FOLD_FLOOR,
                goal=goal,
                detail={"target": target, "rss_after_mb": s.server.rss()},
            )

        s.guarded(
            f"P3 {what}",
            body,
            lambda e, name=name, goal=goal: s.over("P3", name, "s", fold, FOLD_FLOOR, e, goal),
        )
        if s.server.starts != starts and what.startswith("early"):
            break  # restarted: "after 3 early revokes" would no longer be one process's memory
    if not s.ctx.wants("MEM"):
        return
    name = "server RSS after 3 early revokes (MB)"
    floor_name = "server RSS after the cold load"
    if s.server.starts == starts:
        s.add(
            "MEM",
            name,
            s.server.rss(),
            rss_cold,
            "MB",
            floor_name,
            detail={"hwm_mb": s.server.hwm(), "rss_before_revokes_mb": rss_before},
        )
    else:
        s.add(
            "MEM",
            name,
            None,
            rss_cold,
            "MB",
            floor_name,
            budget=f"{s.ctx.budgets.memory_mb} MB / {s.ctx.budgets.request_s:g} s",
            detail={"notes": s.notes},
        )


# ---------------------------------------------------------------------------- run
def run(ctx: Context, cell: Cell, baseline: Baseline, *, record: bool = False) -> list[Figure]:
    """Every server phase for this cell. ``record``: this is the baseline cell -- only the
    queries and the 1-client mutations, their percentiles stored in ``baseline``."""
    floors = None if record else cell.floors()
    s = Session(ctx, cell)
    try:
        s.server.start()
        s.call("query { version }", {})
        rss0 = s.server.rss()
        ctx.log(f"  [{cell.label}] cold load (a fresh server's first answer)")
        if record:
            s.first_answer()
        else:
            cold(s, floors)
        rss1 = s.server.rss()
        if not record and ctx.wants("MEM"):
            s.add(
                "MEM",
                "server RSS growth after the cold load, per 100k facts (MB)",
                (rss1 - rss0) / cell.facts * 100_000,
                cell.bytes_per_100k() / 2**20,
                "MB",
                "the campaign's JSONL export size per 100k facts",
                detail={"rss_before_mb": rss0, "rss_after_mb": rss1, "facts": cell.facts},
            )
        with s.server.client(s.timeout) as c:
            gq.start_encounter(c, s.table, "a")
        for k in range(8):  # warm the mutation path
            s.call(*gq.mutation(s.table, k, s.rng))
        if record or ctx.wants("QRY"):
            queries(s, baseline, record)
        if record or ctx.wants("MUT"):
            mutations(s, baseline, record)
        if record:
            return []
        if ctx.wants("W50"):
            writers(s)
        if ctx.wants("P4"):
            as_of(s, floors)
        if ctx.wants("P3", "MEM"):
            revokes(s, floors, rss1)
    except OverBudget as exc:  # even a restarted server could not answer within budget
        ctx.log(f"  [{cell.label}] server session abandoned: over budget ({exc.what})")
        s.notes.append(f"session abandoned: a fresh server did not answer within budget ({exc.what})")
    finally:
        s.close()
    return s.figures
