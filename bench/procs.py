"""Processes measured from the outside: memory from ``/proc/PID/status``, budgets enforced by a
watchdog, the real ``chronicle serve`` (started with ``api.cli.process``) and ``chronicle``
commands.

Memory is the kernel's view of the process: ``VmRSS`` (resident now) and ``VmHWM`` (the peak
resident size; reset with ``/proc/PID/clear_refs`` to measure one phase). No tracemalloc: what
the operator sees is what counts. A :class:`Watchdog` samples a process every 50 ms, keeps the
peak, and SIGKILLs it when it passes the memory budget (or its deadline passes), so a
measurement that would take the machine's memory or minutes fails fast as ``MISS (> budget)``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from api.cli.process import Proc, clean_env, start, start_api
from bench.core import OverBudget

REPO = Path(__file__).resolve().parents[1]
MB = 1024 * 1024


def status_kb(pid: int, key: str) -> int | None:
    """A ``/proc/PID/status`` field in kB (``VmRSS``, ``VmHWM``), None if the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def rss_mb(pid: int) -> float | None:
    kb = status_kb(pid, "VmRSS")
    return None if kb is None else kb / 1024


def hwm_mb(pid: int) -> float | None:
    kb = status_kb(pid, "VmHWM")
    return None if kb is None else kb / 1024


def reset_peak(pid: int) -> bool:
    """Reset the process's VmHWM to its current RSS (Linux ``clear_refs`` 5); False if not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


@dataclass
class Watchdog:
    """Samples one process's RSS; kills it past ``memory_mb`` or ``deadline`` (monotonic)."""

    pid: int
    memory_mb: float
    deadline: float | None = None
    interval: float = 0.05
    peak_mb: float = 0.0
    killed: str | None = None  # "memory" or "time"
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Watchdog:
        self._thread = threading.Thread(target=self._run, name=f"watchdog-{self.pid}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = rss_mb(self.pid)
            if rss is None:
                return
            self.peak_mb = max(self.peak_mb, rss, hwm_mb(self.pid) or rss)
            if rss > self.memory_mb:
                self._kill("memory")
                return
            if self.deadline is not None and time.monotonic() > self.deadline:
                self._kill("time")
                return
            self._stop.wait(self.interval)

    def _kill(self, why: str) -> None:
        self.killed = why
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


# --------------------------------------------------------------------------- commands
@dataclass
class Run:
    """A finished (or killed) ``chronicle`` command."""

    returncode: int | None
    seconds: float
    peak_mb: float
    killed: str | None
    stdout: str
    stderr: str


def run_cli(
    args: list[str], env: dict[str, str], *, seconds: float, memory_mb: float, workdir: Path | None = None
) -> Run:
    """``python -m api.cli.main ARGS`` with its memory watched; killed past either budget."""
    workdir = workdir or logdir()
    proc = start(args[0], args, env, workdir)
    began = time.perf_counter()
    dog = Watchdog(proc.process.pid, memory_mb, time.monotonic() + seconds).start()
    try:
        code = proc.process.wait()
    finally:
        dog.stop()
    took = time.perf_counter() - began
    out, err = proc.stdout.read_text(errors="replace"), proc.stderr.read_text(errors="replace")
    return Run(None if dog.killed else code, took, dog.peak_mb, dog.killed, out, err)


def logdir() -> Path:
    """A fresh directory for one process's stdout/stderr files (left in the temp dir for a look)."""
    return Path(tempfile.mkdtemp(prefix="chronicle-bench-"))


def chronicle_env(database_url: str, **extra: str) -> dict[str, str]:
    """A clean environment for a chronicle process on this store (warnings only in its logs)."""
    return clean_env(CHRONICLE_DATABASE_URL=database_url, CHRONICLE_LOG_LEVEL="warning", **extra)


# ----------------------------------------------------------------------------- server
class Server:
    """A real ``chronicle serve`` process (started by ``api.cli.process.start_api``), watched.

    ``restart()`` replaces a process that was killed (or must be fresh, for a cold load).
    """

    def __init__(self, database_url: str, memory_mb: float, **env: str) -> None:
        self.env = chronicle_env(database_url, **env)
        self.memory_mb = memory_mb
        self.workdir = Path(tempfile.mkdtemp(prefix="chronicle-bench-serve-"))
        self.url = ""
        self.proc: Proc | None = None
        self.dog: Watchdog | None = None
        self.starts = 0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.process.pid

    def start(self) -> Server:
        self.url, self.proc = start_api(self.env, self.workdir, name="serve")
        self.dog = Watchdog(self.pid, self.memory_mb).start()
        self.starts += 1
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.process.poll() is None

    def killed(self) -> str | None:
        return None if self.dog is None else self.dog.killed

    def rss(self) -> float:
        return rss_mb(self.pid) or float("nan")

    def hwm(self) -> float:
        return hwm_mb(self.pid) or float("nan")

    def stop(self) -> None:
        if self.dog is not None:
            self.dog.stop()
        if self.proc is not None:
            try:
                if self.proc.process.poll() is None:
                    self.proc.terminate(timeout=20)
            except Exception:  # noqa: BLE001 - a server stuck in a long request is killed
                self.proc.process.kill()
                self.proc.process.wait()
            self.proc = None

    def restart(self) -> Server:
        self.stop()
        return self.start()

    def logs(self) -> str:
        return "" if self.proc is None else self.proc.logs()[-3000:]

    def client(self, timeout: float) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=timeout)


@contextlib.contextmanager
def serving(database_url: str, memory_mb: float, **env: str) -> Iterator[Server]:
    server = Server(database_url, memory_mb, **env).start()
    try:
        yield server
    finally:
        server.stop()


# ------------------------------------------------------------------------ bench workers
def work(
    task: str,
    args: dict[str, Any],
    *,
    seconds: float,
    memory_mb: float,
    label: str = "",
    inprocess: bool = False,
) -> dict[str, Any]:
    """Run ``python -m bench.work TASK`` (a fresh process), its JSON answer on the last stdout line.

    Raises :class:`OverBudget` when it was killed for time or memory; the partial answer (the
    last JSON line it printed, if any) is in ``partial``. ``inprocess`` (the smoke mode, where
    process start-up would dominate): call the task here, no budget.
    """
    import json

    if inprocess:
        from bench import work as tasks

        answers: list[dict[str, Any]] = []
        tasks.TASKS[task](answers.append, **args)
        answer = dict(answers[-1])
        answer["peak_mb"] = None  # not measured in process
        return answer
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.work", task, json.dumps(args)],
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if not k.startswith("CHRONICLE_")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    dog = Watchdog(proc.pid, memory_mb, time.monotonic() + seconds).start()
    try:
        out, err = proc.communicate()
    finally:
        dog.stop()
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    last = json.loads(lines[-1]) if lines else {}
    if dog.killed:
        what = f"{memory_mb:.0f} MB" if dog.killed == "memory" else f"{seconds:g} s"
        raise OverBudget(what, partial={**last, "peak_mb": dog.peak_mb, "killed": dog.killed})
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bench.work {task} {label} failed ({proc.returncode}):\n{err[-3000:]}")
    last["peak_mb"] = dog.peak_mb
    return last
