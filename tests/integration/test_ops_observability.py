"""Operations, in process: request ids, JSON logs, /metrics, readiness with projection lag, and
the event loop staying free while synchronous store calls wait in the thread pool."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from api.cli.process import free_port
from api.http.app import create_app
from api.service import observability
from api.service.application import ChronicleApplication
from api.service.settings import Settings
from api.service.store import open_application
from api.service.views import follower as make_follower
from tests.graphql_helpers import GQL, create_campaign, gid, pc
from tests.waiting import eventually


@pytest.fixture
def client(memory_app: ChronicleApplication) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url="memory:"), memory_app)) as test_client:
        yield test_client


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """The process's logging as ``chronicle serve`` configures it (JSON), captured."""
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    observability.configure_logging("info", "json", stream)
    try:
        yield stream
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_a_sane_request_id_is_echoed_and_on_the_request_log_line(
    client: TestClient, json_logs: io.StringIO
) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": "abc-123.x:y_z"})
    assert response.headers["x-request-id"] == "abc-123.x:y_z"
    response = client.post("/graphql", json={"query": "{ version }"}, headers={"X-Request-ID": "gql-1"})
    assert response.headers["x-request-id"] == "gql-1"
    logged = [line for line in lines(json_logs) if line["request_id"] == "gql-1"]
    assert logged and logged[-1]["message"] == "POST /graphql 200"
    assert {"time", "level", "logger", "message", "request_id", "status", "duration_ms"} <= set(logged[-1])


@pytest.mark.parametrize("bad", ["", "x" * 129, "has space", "semi;colon", "ünïcode"])
def test_an_insane_request_id_is_replaced(client: TestClient, bad: str) -> None:
    response = client.get("/healthz", headers={"X-Request-ID": bad.encode()})
    rid = response.headers["x-request-id"]
    assert rid != bad and len(rid) == 16


def test_a_masked_graphql_error_names_the_same_request_id(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, json_logs: io.StringIO
) -> None:
    g = GQL(client)
    cid, gm = create_campaign(g)

    def broken(*_: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(ChronicleApplication, "view", broken)
    response = client.post(
        "/graphql",
        json={
            "query": "query($c: ID!) { campaign(id: $c) { position } }",
            "variables": {"c": gid("Campaign", cid, cid)},
        },
        headers={"Authorization": f"Bearer {gm}"},
    )
    rid = response.headers["x-request-id"]
    error = response.json()["errors"][0]
    assert error["extensions"]["requestId"] == rid and rid in error["message"]
    traced = [line for line in lines(json_logs) if line["logger"] == "chronicle.graphql"]
    assert traced and traced[0]["request_id"] == rid and "secret internals" in traced[0]["exc_info"]


def test_metrics_parse_as_prometheus_text(client: TestClient) -> None:
    g = GQL(client)
    cid, gm = create_campaign(g)
    pc(g, cid, gm, "Vex")
    client.post("/graphql", json={"query": "query Version { version }"})
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    for name in (
        "chronicle_http_requests",
        "chronicle_http_request_duration_seconds",
        "chronicle_graphql_operations",
        "chronicle_graphql_operation_duration_seconds",
        "chronicle_facts_appended",
        "chronicle_projection_lag",
        "chronicle_graphql_subscriptions_active",
    ):
        assert name in families, sorted(families)
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value for f in families.values() for s in f.samples
    }
    assert (
        samples[
            (
                "chronicle_graphql_operations_total",
                (("operation", "Version"), ("outcome", "ok"), ("type", "query")),
            )
        ]
        >= 1
    )
    assert (
        samples[
            (
                "chronicle_graphql_operations_total",
                (("operation", "registerCreature"), ("outcome", "ok"), ("type", "mutation")),
            )
        ]
        >= 1
    )
    assert samples[("chronicle_facts_appended_total", (("fact_type", "CreatureRegistered"),))] >= 1
    assert samples[("chronicle_projection_lag", ())] == -1  # the memory store has no read models
    assert (
        samples[
            ("chronicle_http_requests_total", (("method", "POST"), ("route", "/graphql"), ("status", "200")))
        ]
        >= 3
    )


@pytest.mark.postgres
def test_readyz_reports_projection_lag_against_the_threshold(postgres_store: Settings) -> None:
    settings = Settings(database_url=postgres_store.database_url, ready_max_lag=3)
    app = open_application(settings)
    try:
        with TestClient(create_app(settings, app)) as client:
            g = GQL(client)
            cid, gm = create_campaign(g)
            ready = client.get("/readyz")
            assert ready.json()["projection_lag"] >= 1  # nobody projects: no worker yet
            for name in ("A", "B", "C", "D"):
                pc(g, cid, gm, name)
            behind = client.get("/readyz")
            lag = behind.json()["projection_lag"]
            assert behind.status_code == 503 and lag == ready.json()["projection_lag"] + 4
            assert f"projection lag {lag} > CHRONICLE_READY_MAX_LAG 3" in behind.json()["reason"]
            worker = make_follower(settings)  # what `chronicle worker` runs
            try:
                worker.catch_up()
            finally:
                worker.close()
            again = client.get("/readyz")
            assert (again.status_code, again.json()) == (200, {"status": "ready", "projection_lag": 0})
    finally:
        app.close()


@contextlib.contextmanager
def _served(app: ChronicleApplication) -> Iterator[str]:
    """A real uvicorn server of ``app`` on a free port, in a thread: its URL, once it serves."""
    web = create_app(Settings(database_url="memory:"), app)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(web, host="127.0.0.1", port=port, log_config=None, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)


class _Held:
    """Mutations held inside the (synchronous) application: each one that reaches
    ``record_many`` counts itself in ``inside``, releases ``entered`` and waits for ``release``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.entered = threading.Semaphore(0)
        self.release = threading.Event()


@contextlib.contextmanager
def _holding_record_many(app: ChronicleApplication) -> Iterator[_Held]:
    """``app.record_many`` held (see :class:`_Held`) inside the block, restored after it."""
    held = _Held()
    original = app.record_many

    def held_record_many(*args: Any, **kwargs: Any) -> Any:
        with held.lock:
            held.inside += 1
        held.entered.release()
        assert held.release.wait(60), "never released"
        return original(*args, **kwargs)

    app.record_many = held_record_many  # type: ignore[method-assign]
    try:
        yield held
    finally:
        held.release.set()
        app.record_many = original  # type: ignore[method-assign]


def _deal_one_damage(url: str, cid: str, vex: str, gm: str, key: str) -> None:
    """One ``dealDamage`` of 1 to Vex on a connection of its own; it must be accepted."""
    with httpx.Client(base_url=url, timeout=90) as own:
        out = GQL(own).mutate(
            "dealDamage",
            {"campaignId": gid("Campaign", cid, cid), "characterId": vex, "amount": 1, "idempotencyKey": key},
            gm,
        )
        assert out["userErrors"] == [], out


def test_healthz_answers_while_mutations_wait_in_the_thread_pool(memory_app: ChronicleApplication) -> None:
    """Every store call runs in a worker thread: with N mutations blocked inside the (synchronous)
    application, the event loop still answers /healthz. No timing: the mutations are held on an
    event until /healthz has answered, so the order of events is the proof."""
    n = 12
    with _served(memory_app) as url, httpx.Client(base_url=url, timeout=30) as http:
        g = GQL(http)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        finished: list[int] = []

        def mutate(i: int) -> None:
            _deal_one_damage(url, cid, vex, gm, f"storm-{i}")
            finished.append(i)

        with ThreadPoolExecutor(n) as pool, _holding_record_many(memory_app) as held:
            futures = [pool.submit(mutate, i) for i in range(n)]
            for _ in range(n):  # all n mutations are now inside the application, blocked
                assert held.entered.acquire(timeout=30), "mutations did not reach the application"
            health = http.get("/healthz")
            in_flight_at_answer = n - len(finished)
            held.release.set()
            for future in futures:
                future.result()
        assert health.status_code == 200
        assert in_flight_at_answer == n  # /healthz answered while all n were in flight
        assert len(finished) == n
        assert memory_app.summary(memory_app_campaign(cid))["creatures"]["vex"]["hp"] == 30 - n


def test_operations_past_the_thread_pool_wait_in_line_and_are_all_answered(
    memory_app: ChronicleApplication,
) -> None:
    """Operations run on at most ``OPERATION_THREADS`` threads at once (api.graphql.schema): with
    that many mutations held inside the application, the next ones do not get in -- they wait
    for a thread -- and once released every one is answered and stored. No timing: the held
    mutations wait on an event, and the count inside is read while they do."""
    from api.graphql import schema
    from api.graphql.schema import OPERATION_THREADS

    extra = 3
    n = OPERATION_THREADS + extra
    with _served(memory_app) as url, httpx.Client(base_url=url, timeout=30) as http:
        g = GQL(http)
        cid, gm = create_campaign(g)
        vex = pc(g, cid, gm, "Vex")
        with ThreadPoolExecutor(n) as pool, _holding_record_many(memory_app) as held:
            futures = [pool.submit(_deal_one_damage, url, cid, vex, gm, f"line-{i}") for i in range(n)]
            for _ in range(OPERATION_THREADS):  # every thread holds one now
                assert held.entered.acquire(timeout=30), "mutations did not reach the application"
            # the others wait in line for a thread (read, not timed: all n were sent)
            assert eventually(lambda: schema._POOL._work_queue.qsize() == extra, 30), (
                "the operations past the pool's threads did not wait in line for one"
            )
            assert http.get("/healthz").status_code == 200
            with held.lock:
                inside_while_held = held.inside
            held.release.set()
            for future in futures:
                future.result()
        assert inside_while_held == OPERATION_THREADS
        assert held.inside == n
        assert memory_app.summary(memory_app_campaign(cid))["creatures"]["vex"]["hp"] == 30 - n


def memory_app_campaign(cid: str) -> Any:
    from uuid import UUID

    return UUID(cid)
