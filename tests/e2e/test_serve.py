"""A real ``chronicle serve`` process, talked to over the network by a real GraphQL client."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from gql import Client, gql
from gql.transport.httpx import HTTPXTransport
from gql.transport.websockets import WebsocketsTransport

from api.cli.process import Proc, free_port, start_api
from api.cli.process import clean_env as server_env

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def chronicle(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "api.cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Server:
    url: str
    proc: Proc

    @property
    def stdout(self) -> Path:
        return self.proc.stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve")
    env = server_env(CHRONICLE_DATABASE_URL=f"sqlite:///{tmp / 'var' / 'chronicle.sqlite'}")
    url, proc = start_api(env, tmp)
    try:
        yield Server(url, proc)
    finally:
        code = proc.terminate(timeout=15)
    # A graceful stop on SIGTERM exits 0 (docs/operations.md), not 143 (killed by the signal).
    assert code == 0, f"exit {code}\n{proc.logs()}"
    assert "Application shutdown complete" in proc.stderr.read_text(), proc.logs()


def test_prints_where_graphiql_is(server: Server) -> None:
    first_line = server.stdout.read_text().splitlines()[0]
    assert first_line.startswith(f"Chronicle serving GraphiQL at {server.url}/graphql (store: sqlite ")


def test_a_graphql_client_gets_an_answer(server: Server) -> None:
    transport = HTTPXTransport(url=f"{server.url}/graphql", timeout=10)
    with Client(transport=transport, fetch_schema_from_transport=False) as session:
        result = session.execute(gql("{ __typename }"))
    assert result == {"__typename": "Query"}


def test_a_websocket_client_is_answered_over_graphql_transport_ws(server: Server) -> None:
    # gql offers the legacy graphql-ws protocol first; the server must pick graphql-transport-ws.
    transport = WebsocketsTransport(url=server.url.replace("http://", "ws://") + "/graphql")

    async def query() -> dict[str, Any]:
        async with Client(transport=transport, fetch_schema_from_transport=False) as session:
            result: dict[str, Any] = await session.execute(gql("{ __typename }"))
            return result

    assert asyncio.run(query()) == {"__typename": "Query"}
    assert transport.subprotocol == "graphql-transport-ws"


def test_health_and_readiness(server: Server) -> None:
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz")
    # SQLite: the read models run in process, so readiness also reports their lag.
    assert (ready.status_code, ready.json()["status"]) == (200, "ready")
    assert isinstance(ready.json()["projection_lag"], int)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "mysql://root@127.0.0.1/chronicle",
            "chronicle: configuration error: CHRONICLE_DATABASE_URL: unknown store scheme 'mysql' "
            "(use sqlite:///path or postgresql://...)",
        ),
        (
            "postgresql://postgres@127.0.0.1:1/chronicle",
            "chronicle: configuration error: CHRONICLE_DATABASE_URL: "
            "cannot reach PostgreSQL at 127.0.0.1:1/chronicle: ",
        ),
    ],
    ids=["unknown-scheme", "unreachable-postgres"],
)
def test_a_bad_store_exits_with_one_clear_line(url: str, message: str) -> None:
    result = chronicle("serve", "--port", str(free_port()), env=server_env(CHRONICLE_DATABASE_URL=url))
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(message)
    assert result.stdout == ""


def test_a_bad_port_exits_with_one_clear_line() -> None:
    result = chronicle("serve", env=server_env(CHRONICLE_PORT="eighty"))
    assert result.returncode != 0
    assert result.stderr.strip() == (
        "chronicle: configuration error: "
        "CHRONICLE_PORT: must be a TCP port number from 1 to 65535, got 'eighty'"
    )


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("chronicle")
    if not script.exists():
        pytest.skip(f"no console script next to {sys.executable} (package not installed with pip)")
    result = subprocess.run([str(script), "serve", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "--port" in result.stdout


def test_ctrl_c_stops_the_server_gracefully_with_0(tmp_path: Path) -> None:
    env = server_env(CHRONICLE_DATABASE_URL=f"sqlite:///{tmp_path / 'chronicle.sqlite'}")
    _url, proc = start_api(env, tmp_path)
    proc.process.send_signal(signal.SIGINT)
    assert proc.process.wait(30) == 0, proc.logs()
    assert "Application shutdown complete" in proc.stderr.read_text(), proc.logs()


def test_a_port_in_use_is_one_line_and_exit_69_without_serving_at(tmp_path: Path) -> None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = server_env(CHRONICLE_DATABASE_URL=f"sqlite:///{tmp_path / 'chronicle.sqlite'}")
        result = chronicle("serve", "--host", "127.0.0.1", "--port", str(port), env=env)
    assert result.returncode == 69
    assert result.stdout == ""  # never "serving at ..." for a server that does not serve
    assert result.stderr == (
        f"chronicle: cannot listen on 127.0.0.1:{port}: "
        "the address is already in use (is another server running there?)\n"
    )
