"""The deployment shape, as plain processes: ``chronicle serve`` and ``chronicle worker`` against
one fresh PostgreSQL schema (what deploy/compose.yaml and deploy/systemd start).

- SIGTERM to both in the middle of a mutation storm, then restart: every acknowledged fact is
  stored, and the read models catch up (``/readyz`` lag 0, the view equals the fold);
- ``/readyz`` turns not-ready when the store becomes unreachable and ready again when it is
  back, without restarting the API (the API reaches PostgreSQL through a TCP proxy run by the
  test, which it closes and reopens; the shared cluster is never touched);
- a request's log line carries its request id; ``/metrics`` parses as Prometheus text.
"""

from __future__ import annotations

import signal
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from api.cli.process import Proc, free_port, start, start_api, wait_until
from api.cli.process import answers as process_answers
from api.cli.process import clean_env as server_env
from api.service import views as wiring
from api.service.settings import Settings
from api.service.store import open_application
from tests.graphql_helpers import GQL, create_campaign, gid, pc

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.slow]


# --------------------------------------------------------------------------- a TCP proxy
class Proxy:
    """127.0.0.1:port -> target; :meth:`cut` refuses new connections and drops open ones."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._server: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.open()

    def open(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen(64)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        with self._lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self.cut()


# ------------------------------------------------------------------------------ processes
def until(check: Callable[[], bool], what: str, timeout: float = 30, proc: Proc | None = None) -> None:
    wait_until(check, what, timeout, proc)


def answers(url: str, path: str, status: int = 200) -> Callable[[], bool]:
    return process_answers(url + path, status)


@dataclass
class Deployment:
    store: Settings
    tmp: Path
    proxy: Proxy
    api_port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def api_env(self) -> dict[str, str]:
        db = self.store.database
        via_proxy = f"postgresql://{db.user}@127.0.0.1:{self.proxy.port}/{db.dbname}?schema={db.schema}&connect_timeout=2"
        return server_env(
            CHRONICLE_DATABASE_URL=via_proxy,
            CHRONICLE_LOG_FORMAT="json",
            CHRONICLE_READY_MAX_LAG="100000",
            CHRONICLE_SHUTDOWN_TIMEOUT="15",
        )

    def worker_env(self) -> dict[str, str]:
        return server_env(CHRONICLE_DATABASE_URL=self.store.database_url, CHRONICLE_LOG_FORMAT="json")

    def start_api(self) -> Proc:
        _url, api = start_api(self.api_env(), self.tmp, self.api_port)
        return api

    def start_worker(self) -> Proc:
        return start("worker", ["worker", "--batch-size", "50"], self.worker_env(), self.tmp)


@pytest.fixture
def deployment(postgres_store: Settings, tmp_path: Path) -> Iterator[Deployment]:
    db = postgres_store.database
    proxy = Proxy((db.host, db.port))
    try:
        yield Deployment(postgres_store, tmp_path, proxy)
    finally:
        proxy.close()


# ------------------------------------------------------------------------------ the test
def test_sigterm_mid_load_restart_readiness_logs_and_metrics(deployment: Deployment) -> None:
    d = deployment
    api, worker = d.start_api(), d.start_worker()
    procs = [api, worker]
    try:
        with httpx.Client(base_url=d.url, timeout=30) as http:
            g = GQL(http)
            cid, gm = create_campaign(g, "Storm table")
            vex = pc(g, cid, gm, "Vex", maxHp=10_000)

        # --- a mutation storm; SIGTERM to both processes in the middle of it
        acked: dict[str, int] = {}  # idempotency key -> position, for every mutation answered OK
        stop = threading.Event()
        lock = threading.Lock()

        def storm(worker_no: int) -> None:
            with httpx.Client(base_url=d.url, timeout=30) as own:
                g = GQL(own)
                for i in range(10_000):
                    if stop.is_set():
                        return
                    key = f"w{worker_no}-{i}"
                    try:
                        out = g.mutate(
                            "dealDamage",
                            {
                                "campaignId": gid("Campaign", cid, cid),
                                "characterId": vex,
                                "amount": 1,
                                "idempotencyKey": key,
                            },
                            gm,
                        )
                    except (httpx.TransportError, AssertionError):
                        return  # the server went away: this one was not acknowledged
                    assert out["userErrors"] == [], out
                    with lock:
                        acked[key] = out["facts"][0]["position"]

        # the worker's SIGTERM must find it running (on a busy machine its start-up imports can
        # outlast 40 mutations, and a signal before its handler is set just kills it)
        until(
            lambda: any(line["message"] == "worker started" for line in worker.json_lines()),
            "the worker started",
            proc=worker,
        )
        threads = [threading.Thread(target=storm, args=(n,), daemon=True) for n in range(4)]
        for t in threads:
            t.start()
        until(lambda: len(acked) >= 40, "40 acknowledged mutations", proc=api)
        api.process.send_signal(signal.SIGTERM)
        worker.process.send_signal(signal.SIGTERM)
        for proc in (api, worker):
            code = proc.terminate()
            assert code in (0, -signal.SIGTERM), f"unclean exit {code}\n{proc.logs()}"
        stop.set()
        for t in threads:
            t.join(30)
        assert "Application shutdown complete" in api.stderr.read_text(), api.logs()
        stopped = [line for line in worker.json_lines() if line["message"] == "worker stopped"]
        assert stopped, worker.logs()
        assert any("SIGTERM received" in line["message"] for line in worker.json_lines()), worker.logs()

        # --- every acknowledged fact is in the store
        app = open_application(d.store)
        try:
            ledger = app.ledger(UUID(cid))
            stored = {e.meta.get("idempotency_key"): e.seq for e in ledger.entries if e.type == "DamageTaken"}
            missing = {k: p for k, p in acked.items() if stored.get(k) != p}
            assert not missing, f"acknowledged but not stored: {missing}"
            hp = app.summary(UUID(cid))["creatures"]["vex"]["hp"]
            assert hp == 10_000 - len(stored)
        finally:
            app.close()

        # --- restart both: the views catch up with everything stored
        api, worker = d.start_api(), d.start_worker()
        procs = [api, worker]

        def caught_up() -> bool:
            body = httpx.get(f"{d.url}/readyz", timeout=5).json()
            return body.get("projection_lag") == 0

        until(caught_up, "the read models to catch up (/readyz lag 0)", proc=worker)
        views = wiring.open_views(d.store)
        try:
            row = views.get_creature(cid, "vex")
            assert row is not None and row["hp"] == hp
        finally:
            views.close()

        # --- readiness follows the store, without restarting the API
        assert httpx.get(f"{d.url}/readyz").status_code == 200
        d.proxy.cut()
        until(answers(d.url, "/readyz", 503), "/readyz to report the store unreachable", proc=api)
        body = httpx.get(f"{d.url}/readyz", timeout=10).json()
        assert body["status"] == "not ready" and body["reason"], body
        assert httpx.get(f"{d.url}/healthz").status_code == 200  # alive all the same
        d.proxy.open()
        until(answers(d.url, "/readyz", 200), "/readyz to recover", timeout=30, proc=api)
        with httpx.Client(base_url=d.url, timeout=30) as http:  # and writes work again
            out = GQL(http).mutate(
                "dealDamage",
                {
                    "campaignId": gid("Campaign", cid, cid),
                    "characterId": vex,
                    "amount": 1,
                    "idempotencyKey": str(uuid.uuid4()),
                },
                gm,
            )
            assert out["userErrors"] == [], out

            # --- a request's log line carries its id; /metrics parses
            rid = f"e2e-{uuid.uuid4().hex[:8]}"
            answer = http.post("/graphql", json={"query": "{ version }"}, headers={"X-Request-ID": rid})
            assert answer.headers["x-request-id"] == rid
            metrics = http.get("/metrics")
        names = {f.name for f in text_string_to_metric_families(metrics.text)}
        assert {
            "chronicle_facts_appended",
            "chronicle_graphql_operations",
            "chronicle_projection_lag",
        } <= names
    finally:
        for proc in procs:
            proc.terminate()
    logged = [line for line in api.json_lines() if line.get("request_id") == rid]
    assert any(line["message"] == "POST /graphql 200" for line in logged), api.logs()
    assert all({"time", "level", "logger", "message"} <= set(line) for line in api.json_lines())
