"""A TCP proxy in front of PostgreSQL that a test can break: the store "goes away" for one test
only (other people's tests on the same server are untouched).

Modes:

- ``up``: bytes flow both ways;
- ``down``: established connections are cut and new ones are refused (the server is stopped);
- ``hang``: connections are accepted and kept, but nothing is forwarded either way (the server
  or the network hangs: the kernel still acknowledges, nobody answers).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Iterator


class Proxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.mode = "up"
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._held: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self.port = 0
        self._stop = threading.Event()
        self._listen()
        self._thread = threading.Thread(target=self._loop, name="fault-proxy", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ control
    def up(self) -> None:
        with self._lock:
            for sock in self._held:
                sock.close()
            self._held.clear()
            self.mode = "up"
            if self._listener is None:
                self._listen()

    def down(self) -> None:
        with self._lock:
            self.mode = "down"
            self._cut_all()
            if self._listener is not None:
                self._listener.close()
                self._listener = None

    def hang(self) -> None:
        with self._lock:
            self.mode = "hang"

    def upstream_ports(self) -> list[int]:
        """The local ports of the proxy's connections to the server (``client_port`` there)."""
        with self._lock:
            ports = []
            for _, upstream in self._pairs:
                with contextlib.suppress(OSError):
                    ports.append(upstream.getsockname()[1])
            return ports

    def close(self) -> None:
        self._stop.set()
        self.down()
        self._thread.join(5)

    # ---------------------------------------------------------------- internals
    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        listener.setblocking(False)
        self.port = listener.getsockname()[1]
        self._listener = listener

    def _cut_all(self) -> None:
        for a, b in self._pairs:
            for sock in (a, b):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
        self._pairs.clear()
        for sock in self._held:
            sock.close()
        self._held.clear()

    def _loop(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                listener, mode = self._listener, self.mode
                pairs = list(self._pairs)
            readable: list[socket.socket] = []
            watch = [s for pair in pairs for s in pair] if mode == "up" else []
            if listener is not None:
                watch.append(listener)
            if watch:
                sel = selectors.DefaultSelector()
                for sock in watch:
                    with contextlib.suppress(ValueError, OSError):
                        sel.register(sock, selectors.EVENT_READ)
                with contextlib.suppress(OSError, ValueError):
                    readable = [key.fileobj for key, _ in sel.select(0.05)]  # type: ignore[misc]
                sel.close()
            else:
                self._stop.wait(0.05)
            for sock in readable:
                if sock is listener:
                    self._accept(listener)
                else:
                    self._pump(sock)

    def _accept(self, listener: socket.socket) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            client, _ = listener.accept()
            with self._lock:
                if self.mode == "hang":
                    self._held.append(client)
                    return
                if self.mode == "down":
                    client.close()
                    return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                return
            with self._lock:
                self._pairs.append((client, upstream))

    def _pump(self, sock: socket.socket) -> None:
        with self._lock:
            pair = next((p for p in self._pairs if sock in p), None)
            if pair is None or self.mode != "up":
                return
        other = pair[1] if sock is pair[0] else pair[0]
        try:
            data = sock.recv(65536)
            if data:
                other.sendall(data)
                return
        except OSError:
            pass
        with self._lock:
            if pair in self._pairs:
                self._pairs.remove(pair)
        for s in pair:
            with contextlib.suppress(OSError):
                s.close()


@contextlib.contextmanager
def proxy_to(host: str, port: int) -> Iterator[Proxy]:
    p = Proxy(host, port)
    try:
        yield p
    finally:
        p.close()
