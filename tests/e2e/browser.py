"""Headless Chromium driven over the DevTools protocol, with the network cut off.

Chromium runs with every non-loopback request sent to a proxy of ours that refuses everything
(and notes what was asked of it); loopback (the server under test) is reached directly. Every
request the page makes is recorded from the DevTools ``Network`` events, so a test can check
that a page loaded nothing from anywhere else.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.conftest import in_ci

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = "CHRONICLE_ARTIFACTS"


def keep_artifact(path: Path) -> Path | None:
    """Copy a test's artefact (a screenshot) to ``$CHRONICLE_ARTIFACTS`` when it is set (CI
    uploads that directory); it stays under the test's tmp dir either way."""
    target = os.environ.get(ARTIFACTS)
    if not target:
        return None
    folder = Path(target)
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(path, folder / path.name))


def require_chromium() -> Path:
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing (Debian package chromium; `make test` installs it when run as root)"
        if in_ci():
            pytest.fail(f"{reason}; CI=true requires it", pytrace=False)
        pytest.skip(reason)
    return CHROMIUM


class RefusingProxy:
    """An HTTP proxy on 127.0.0.1 that answers 403 to everything and keeps the request lines."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.asked: list[str] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    line = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                    self.asked.append(line)
                    conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


class Page:
    """One tab: evaluate JavaScript, wait for a condition, see every request it made."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._next = 0
        self.requests: list[str] = []  # every URL the page asked for (HTTP and WebSocket)
        self.console: list[str] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Network.webSocketCreated":
            self.requests.append(params["url"])
        elif method == "Runtime.consoleAPICalled":
            self.console.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console.append(details.get("exception", {}).get("description") or details.get("text", ""))

    def evaluate(self, expression: str) -> Any:
        out = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def wait_for(self, expression: str, what: str, timeout: float = 30) -> Any:
        """Poll ``expression`` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; console: {self.console[-10:]}")
            time.sleep(0.1)

    def goto(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", f"{url} to load")

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))


@contextmanager
def offline_page(
    tmp_path: Path, width: int = 1280, height: int = 900
) -> Iterator[tuple[Page, RefusingProxy]]:
    """A Chromium tab that can reach 127.0.0.1 only (the rest goes to a refusing proxy)."""
    chromium = require_chromium()
    proxy = RefusingProxy()
    profile = tmp_path / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    args = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        f"--proxy-server=http://127.0.0.1:{proxy.port}",  # loopback bypasses it; the rest is refused
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "about:blank",
    ]
    port_file = profile / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)
    log = (tmp_path / "chromium.log").open("wb")
    process = subprocess.Popen(args, stdout=log, stderr=log, env={**os.environ, "HOME": str(tmp_path)})
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"chromium did not start:\n{(tmp_path / 'chromium.log').read_text()[-2000:]}"
                )
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        target = next(t for t in targets if t["type"] == "page")
        with connect(target["webSocketDebuggerUrl"], max_size=None, open_timeout=10) as ws:
            page = Page(ws)
            page.send("Network.enable")
            page.send("Runtime.enable")
            page.send("Page.enable")
            yield page, proxy
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        proxy.close()
