"""The fault suite's tools: real servers, real clients, real faults (issue 13).

- :class:`Api`: a ``chronicle serve`` process (``api.cli.process``) on a store, restartable, and
  killable with SIGKILL;
- :func:`client`: the independent ``gql`` client over HTTP with a bearer token;
- :class:`Load`: writers that play notes and damage on one campaign through real clients, each
  request with an idempotency key, retried with the same key while the answer is
  ``STORE_UNAVAILABLE`` or the connection broke; they remember what was acknowledged;
- :func:`audit`: a fresh application (a new process's view of the store) loads the campaign and
  checks acknowledged == stored, no doubles, no gaps, and the state the API served == a fresh
  fold of the stored facts;
- :func:`terminate_backends`: ``pg_terminate_backend`` of exactly the connections that went
  through a test's :class:`~tests.faults.proxy.Proxy` (other people's tests share the server).

Fast versions run in ``make test``; the heavy loads are marked ``faults`` (``make faults``).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from gql import Client, gql
from gql.transport.exceptions import TransportConnectionFailed, TransportQueryError
from gql.transport.httpx import HTTPXTransport
from psycopg import sql

from api.cli.process import Proc, ProcessFailed, answers, clean_env, free_port, start, wait_until
from api.service.settings import Settings
from api.service.store import open_application
from tests.conftest import connect
from tests.faults.proxy import Proxy
from tests.graphql_helpers import gid

CREATE = """mutation($input: CreateCampaignInput!) { createCampaign(input: $input) {
  campaign { campaignId } gmToken replayed userErrors { code field message } } }"""
REGISTER = """mutation($input: RegisterCreatureInput!) { registerCreature(input: $input) {
  character { id } userErrors { code field message } } }"""
NOTE = """mutation($input: AddNoteInput!) { addNote(input: $input) {
  position replayed userErrors { code field message } } }"""
DAMAGE = """mutation($input: DealDamageInput!) { dealDamage(input: $input) {
  position replayed userErrors { code field message } } }"""
STARTUP = 120  # seconds a server may take to answer /healthz
STATE = """query($c: ID!) { campaign(id: $c) { position characters { creatureId raw } } }"""


@dataclass
class Api:
    """A ``chronicle serve`` process on ``settings``' store."""

    settings: Settings
    workdir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    proc: Proc | None = None

    def start(self) -> Api:
        env = clean_env(
            CHRONICLE_DATABASE_URL=self.settings.database_url,
            CHRONICLE_READY_MAX_LAG="0",
            CHRONICLE_LOG_FORMAT="text",
            **self.extra_env,
        )
        port = free_port()
        self.proc = start("api", ["serve", "--host", "127.0.0.1", "--port", str(port)], env, self.workdir)
        self.url = f"http://127.0.0.1:{port}"
        try:  # a loaded machine (two cores, several test suites) can take long to import everything
            wait_until(answers(f"{self.url}/healthz"), "api to answer /healthz", STARTUP, self.proc)
        except ProcessFailed:
            self.proc.terminate()
            raise
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush; what was acknowledged must be in the store anyway."""
        assert self.proc is not None
        self.proc.process.kill()
        self.proc.process.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.process.poll() is None:
            self.proc.terminate(timeout=30)

    def logs(self) -> str:
        return self.proc.logs() if self.proc is not None else ""


@pytest.fixture
def api_factory(tmp_path: Path) -> Iterator[Any]:
    started: list[Api] = []

    def make(settings: Settings, **extra_env: str) -> Api:
        api = Api(settings, tmp_path / f"api-{len(started)}", dict(extra_env)).start()
        started.append(api)
        return api

    yield make
    for api in started:
        try:
            api.stop()
        except Exception:  # noqa: BLE001 - a server that will not stop is killed; the test reported
            if api.proc is not None:
                api.proc.process.kill()


def client(url: str, token: str | None = None, timeout: float = 60) -> Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = HTTPXTransport(url=f"{url}/graphql", headers=headers, timeout=timeout)
    return Client(transport=transport, fetch_schema_from_transport=False, execute_timeout=timeout)


def execute(url: str, query: str, variables: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    """One request with the gql client: its data, or raises ``TransportQueryError`` (GraphQL errors).

    gql sends UTF-8, which cannot carry a lone surrogate; such variables go as JavaScript's
    ``JSON.stringify`` sends them, escaped (``"\\ud800"``), over plain httpx."""
    if not _utf8(variables):
        return _escaped(url, query, variables, token)
    with client(url, token) as session:
        result: dict[str, Any] = session.execute(request(query, variables))
        return result


def request(query: str, variables: dict[str, Any]) -> Any:
    """A gql request with its variables (gql 4's GraphQLRequest; gql 3 takes them apart)."""
    try:
        from gql import GraphQLRequest
    except ImportError:  # gql 3
        document = gql(query)
        document.variable_values = variables  # type: ignore[attr-defined]
        return document
    return GraphQLRequest(query, variable_values=variables)


def _utf8(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(url: str, query: str, variables: dict[str, Any], token: str | None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = json.dumps({"query": query, "variables": variables})  # ASCII: surrogates as \u escapes
    response = httpx.post(f"{url}/graphql", content=body.encode("ascii"), headers=headers, timeout=60)
    answer = response.json()
    if answer.get("errors"):
        raise TransportQueryError(str(answer["errors"][0]), errors=answer["errors"], data=answer.get("data"))
    data: dict[str, Any] = answer["data"]
    return data


def graphql_errors(exc: TransportQueryError) -> list[dict[str, Any]]:
    errors = exc.errors or []
    return [e for e in errors if isinstance(e, dict)]


@dataclass
class Table:
    """A campaign made through the API: its id, GM token and one creature to hit."""

    campaign_id: str
    gm: str
    target: str

    @property
    def campaign(self) -> str:
        return gid("Campaign", self.campaign_id, self.campaign_id)


def new_table(url: str, name: str = "Faults", max_hp: int = 100_000) -> Table:
    created = execute(url, CREATE, {"input": {"name": name, "idempotencyKey": str(uuid.uuid4())}})
    out = created["createCampaign"]
    assert out["userErrors"] == [], out
    cid, gm = out["campaign"]["campaignId"], out["gmToken"]
    sheet = {
        "campaignId": gid("Campaign", cid, cid),
        "name": "Tank",
        "kind": "MONSTER",
        "level": 1,
        "maxHp": max_hp,
        "defenses": {"ac": 10, "fort": 10, "ref": 10, "will": 10},
    }
    registered = execute(url, REGISTER, {"input": sheet}, gm)["registerCreature"]
    assert registered["userErrors"] == [], registered
    return Table(cid, gm, registered["character"]["id"])


_RUNNING: list[Load] = []


@pytest.fixture(autouse=True)
def _no_writers_left_behind() -> Iterator[None]:
    """A test that failed half-way leaves no writers hammering the next one's servers."""
    yield
    while _RUNNING:
        _RUNNING.pop().stop.set()


@dataclass
class Outcomes:
    acknowledged: list[str] = field(default_factory=list)  # idempotency keys answered with success
    refused: list[tuple[str, str]] = field(default_factory=list)  # (key, code) of typed refusals
    unavailable: int = 0  # STORE_UNAVAILABLE answers (then retried with the same key)
    unexpected: list[str] = field(default_factory=list)  # anything else: INTERNAL_SERVER_ERROR, ...
    lock: threading.Lock = field(default_factory=threading.Lock)


class Load:
    """``writers`` threads, each sending ``per_writer`` mutations (a note, then 1 damage, ...) to one
    campaign; every request has its own idempotency key and is retried with it after
    ``STORE_UNAVAILABLE`` or a broken connection (up to ``patience`` seconds). ``poison`` makes
    every such-many-th note of each writer a note with a lone surrogate (expected: INVALID_INPUT)."""

    def __init__(
        self,
        url: str | Any,
        table: Table,
        writers: int,
        per_writer: int,
        poison: int = 0,
        name: str = "",
        patience: float = 120,
    ) -> None:
        self.url_of = url if callable(url) else (lambda: url)
        self.table, self.writers, self.per_writer = table, writers, per_writer
        self.poison, self.patience, self.name = poison, patience, name
        self.out = Outcomes()
        self.threads = [threading.Thread(target=self._write, args=(n,), daemon=True) for n in range(writers)]
        self.stop = threading.Event()

    def start(self) -> Load:
        _RUNNING.append(self)
        for t in self.threads:
            t.start()
        return self

    def join(self, timeout: float = 600) -> Outcomes:
        for t in self.threads:
            t.join(timeout)
        assert not any(t.is_alive() for t in self.threads), "writers did not finish"
        return self.out

    def _write(self, n: int) -> None:
        try:
            self._play(n)
        except Exception as exc:  # noqa: BLE001 - reported by the test, not lost in a thread
            with self.out.lock:
                self.out.unexpected.append(f"writer {n} crashed: {exc!r}")

    def _play(self, n: int) -> None:
        connection = _Connection(self.table.gm)
        try:
            self._play_on(n, connection)
        finally:
            connection.close()

    def _play_on(self, n: int, connection: _Connection) -> None:
        for i in range(self.per_writer):
            if self.stop.is_set():
                return
            key = f"{self.name}w{n}-{i}-{uuid.uuid4().hex[:8]}"  # odd i: damage, even i: a note
            base = {"campaignId": self.table.campaign, "idempotencyKey": key}
            if i % 2:
                query, inp = DAMAGE, {**base, "characterId": self.table.target, "amount": 1}
            elif self.poison and i % (2 * self.poison) == 0:
                query, inp = NOTE, {**base, "text": f"{key} \ud800"}
            else:
                query, inp = NOTE, {**base, "text": key}
            self._send(connection, query, inp, key)

    def _send(self, connection: _Connection, query: str, inp: dict[str, Any], key: str) -> None:
        give_up = time.monotonic() + self.patience
        while True:
            try:
                data = connection.execute(self.url_of(), query, {"input": inp})
            except TransportQueryError as exc:
                errors = graphql_errors(exc)
                codes = [e.get("extensions", {}).get("code") for e in errors]
                if codes and all(c == "STORE_UNAVAILABLE" for c in codes):
                    assert all(e["extensions"].get("retryable") is True for e in errors), errors
                    with self.out.lock:
                        self.out.unavailable += 1
                elif codes and codes[0] == "INVALID_INPUT":
                    with self.out.lock:
                        self.out.refused.append((key, "INVALID_INPUT"))
                    return
                else:
                    with self.out.lock:
                        self.out.unexpected.append(f"{key}: {errors}")
                    return
            except (httpx.TransportError, OSError, TransportConnectionFailed):
                connection.close()  # the server is gone (killed, restarting): retry with the same key
            else:
                payload = next(iter(data.values()))
                with self.out.lock:
                    if payload["userErrors"]:
                        self.out.refused.append((key, payload["userErrors"][0]["code"]))
                    else:
                        self.out.acknowledged.append(key)
                return
            if time.monotonic() > give_up or self.stop.is_set():
                return
            time.sleep(0.2)


class _Connection:
    """One writer's gql session (a kept-alive HTTP connection), reopened after a failure or when
    the server moved (a fresh process on another port)."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.url: str | None = None
        self.client: Client | None = None
        self.session: Any = None

    def execute(self, url: str, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        if not _utf8(variables):
            return _escaped(url, query, variables, self.token)
        if self.session is None or url != self.url:
            self.close()
            self.client, self.url = client(url, self.token), url
            self.session = self.client.connect_sync()
        result: dict[str, Any] = self.session.execute(request(query, variables))
        return result

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.close_sync()
        self.client = self.session = self.url = None


@dataclass
class Audit:
    positions: list[int]
    keys: collections.Counter[str]
    hp: int


def audit(settings: Settings, table: Table, acknowledged: list[str]) -> Audit:
    """What a fresh process finds in the store: it must load the campaign; every acknowledged
    request's fact is there exactly once; positions run without gaps (the load checks that too)."""
    fresh = open_application(settings)
    try:
        from uuid import UUID

        cid = UUID(table.campaign_id)
        with fresh.reading(cid) as campaign:
            entries = list(campaign.ledger.entries)
            keys = collections.Counter(
                e.meta["idempotency_key"] for e in entries if "idempotency_key" in e.meta
            )
            positions = [e.seq for e in entries]
        summary = fresh.summary(cid)
    finally:
        fresh.close()
    assert positions == list(range(2, 2 + len(positions))), "the stored positions have a gap"
    doubled = [k for k, n in keys.items() if n > 1]
    assert doubled == [], f"stored twice: {doubled[:5]}"
    missing = sorted(set(acknowledged) - set(keys))
    assert missing == [], f"acknowledged but not stored: {missing[:5]}"
    hp = summary["creatures"]["tank"]["hp"]
    return Audit(positions, keys, hp)


def served_hp(url: str, table: Table) -> int:
    data = execute(url, STATE, {"c": table.campaign}, table.gm)["campaign"]
    raw = {c["creatureId"]: c["raw"] for c in data["characters"]}
    return int(raw["tank"]["hp"])


# --- PostgreSQL faults -----------------------------------------------------------------------
def terminate_backends(settings: Settings, proxy: Proxy) -> int:
    """``pg_terminate_backend`` for every server connection that goes through ``proxy`` (found by
    the client port the server sees), and nothing else. Returns how many were terminated."""
    ports = proxy.upstream_ports()
    if not ports:
        return 0
    with connect(settings.database) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE client_port = ANY(%s) AND pid <> pg_backend_pid()",
            (ports,),
        ).fetchall()
    return sum(1 for (ok,) in rows if ok)


@contextlib.contextmanager
def table_lock(settings: Settings) -> Iterator[None]:
    """Another session holds ``LOCK TABLE <events> IN ACCESS EXCLUSIVE MODE`` for the block (as a
    migration or a stuck maintenance job would): every append and read of the test's events waits."""
    db = settings.database
    with connect(db) as conn:
        conn.autocommit = False
        table = sql.Identifier(db.schema or "public", "chronicle_events")
        conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(table))
        try:
            yield
        finally:
            conn.rollback()


def through(settings: Settings, proxy: Proxy) -> Settings:
    """``settings`` with the database reached through ``proxy``."""
    parts = urlsplit(settings.database_url)
    userinfo = parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@127.0.0.1:{proxy.port}" if userinfo else f"127.0.0.1:{proxy.port}"
    return dataclasses.replace(settings, database_url=urlunsplit(parts._replace(netloc=netloc)))


@pytest.fixture
def pg_proxy(postgres_store: Settings) -> Iterator[tuple[Settings, Proxy]]:
    """A fresh PostgreSQL schema, reached through a proxy this test may break: (settings, proxy)."""
    db = postgres_store.database
    proxy = Proxy(db.host, db.port)
    try:
        yield through(postgres_store, proxy), proxy
    finally:
        proxy.close()
