"""Run ``chronicle`` commands as real processes: for end-to-end tests and the benchmarks.

One place that knows how to start ``chronicle serve`` / ``chronicle worker`` with a clean
environment, capture their output, wait until they answer, and stop them with SIGTERM as
a supervisor would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

STARTUP_TIMEOUT = 120.0  # a loaded 2-core machine: a serve took ~27 s to import and build its schema


class ProcessFailed(RuntimeError):
    """A chronicle process exited early or did not get ready in time (its logs attached)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(**overrides: str) -> dict[str, str]:
    """This process's environment without any CHRONICLE_* setting, plus ``overrides``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")}
    env.update(overrides)
    return env


@dataclass
class Proc:
    name: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def logs(self) -> str:
        out, err = self.stdout.read_text(), self.stderr.read_text()
        return f"--- {self.name} stdout\n{out}\n--- {self.name} stderr\n{err}"

    def json_lines(self) -> list[dict[str, Any]]:
        """The structured log lines it wrote (one JSON object a line, on stderr)."""
        return [json.loads(line) for line in self.stderr.read_text().splitlines() if line.startswith("{")]

    def terminate(self, timeout: float = 30) -> int:
        """SIGTERM, then wait; kill it (and raise) if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise ProcessFailed(
                f"{self.name} did not stop within {timeout}s of SIGTERM\n{self.logs()}"
            ) from None


def start(name: str, args: list[str], env: dict[str, str], workdir: Path) -> Proc:
    """Start ``python -m api.cli.main ARGS`` with its output in ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)
    run = len(list(workdir.glob(f"{name}-*.out")))
    stdout, stderr = workdir / f"{name}-{run}.out", workdir / f"{name}-{run}.err"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "api.cli.main", *args], env=env, stdout=out, stderr=err
        )
    return Proc(name, process, stdout, stderr)


def wait_until(
    check: Callable[[], bool], what: str, timeout: float = STARTUP_TIMEOUT, proc: Proc | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc is not None and proc.process.poll() is not None:
            raise ProcessFailed(
                f"{proc.name} exited with {proc.process.returncode} while waiting for {what}\n{proc.logs()}"
            )
        if time.monotonic() > deadline:
            raise ProcessFailed(f"timed out waiting for {what}" + (f"\n{proc.logs()}" if proc else ""))
        time.sleep(0.05)


def answers(url: str, status: int = 200) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return httpx.get(url, timeout=5).status_code == status
        except httpx.TransportError:
            return False

    return check


def start_api(
    env: dict[str, str], workdir: Path, port: int | None = None, name: str = "api"
) -> tuple[str, Proc]:
    """``chronicle serve`` on 127.0.0.1, once it answers /healthz: (base URL, process)."""
    port = port or free_port()
    proc = start(name, ["serve", "--host", "127.0.0.1", "--port", str(port)], env, workdir)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(answers(f"{url}/healthz"), f"{name} to answer /healthz", proc=proc)
    except ProcessFailed:
        proc.terminate()
        raise
    return url, proc


@contextmanager
def served(env: dict[str, str], workdir: Path, port: int | None = None) -> Iterator[tuple[str, Proc]]:
    """A running API for the block; SIGTERM when it ends."""
    url, proc = start_api(env, workdir, port)
    try:
        yield url, proc
    finally:
        proc.terminate(timeout=15)
