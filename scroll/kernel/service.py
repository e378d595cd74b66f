"""Host-side socket service that carries `ms` calls from the kernel to the capability.

Protocol: JSON lines over a unix socket. Request `{"id": n, "method": m, "params": {...}}`,
reply `{"id": n, "ok": true, "result": ...}` or `{"id": n, "ok": false, "error": "..."}`.
What a request may do is decided by the handler: `scroll.capability.Capability` (scopes,
budgets, no write method). This module only moves bytes, with its own bounds.

Robustness against hostile clients: lines above MAX_REQUEST bytes are refused and the
connection closed; malformed JSON, wrong types, unknown methods and failing calls get an
error reply; at most MAX_CONNS clients at once; a reply waits for a slow reader at most
until the handler's deadline (`send_budget()`, the cell's), then the client is dropped;
a client that connected during an earlier cell (the handler's `epoch`) is dropped when it
speaks again, so a backlog queued by one cell is never worked off in the next. No
exception escapes into the host.

`MsSocketServer` is pumped by its owner: `fds()` + `on_ready(fd)` plug into the kernel's
wait loop (scroll.kernel.process), so EventLog is only touched on the caller's thread.
`serve_in_thread` runs the same server in a thread with its own handler (notebook export).
"""
from __future__ import annotations

import json
import os
import select
import socket
import threading
from pathlib import Path
from typing import Any, Callable, Protocol

MAX_REQUEST = 1 << 20
TOO_LARGE = f"request too large: the limit is {MAX_REQUEST:,} bytes (1 MiB) per request line"
MAX_CONNS = 16
SEND_TIMEOUT = 10.0


class Handler(Protocol):
    def handle(self, req: Any) -> dict: ...

    # optional: `send_budget() -> float | None`, seconds a reply may wait for a slow reader


class _Conn:
    def __init__(self, sock: socket.socket, epoch: int):
        self.sock = sock
        self.buf = bytearray()
        self.epoch = epoch  # the handler's epoch (its cell) when this client connected


class MsSocketServer:
    """Non-blocking unix-socket server; the owner pumps it (see module docstring)."""

    def __init__(self, path: str | os.PathLike, handler: Handler, owner_uid: int | None = None):
        self.path = str(path)
        self.handler = handler
        Path(self.path).unlink(missing_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        os.chmod(self.path, 0o600)
        if owner_uid is not None:
            os.chown(self.path, owner_uid, owner_uid)
        self.listener.listen(MAX_CONNS)
        self.listener.setblocking(False)
        self.conns: dict[int, _Conn] = {}

    def fds(self) -> list[int]:
        return [self.listener.fileno(), *self.conns]

    def on_ready(self, fd: int) -> None:
        try:
            if fd == self.listener.fileno():
                self._accept()
            elif fd in self.conns:
                self._read(self.conns[fd])
        except Exception:  # noqa: BLE001 - a client problem never reaches the host
            if fd in self.conns:
                self._drop(self.conns[fd])

    def pump(self, timeout: float = 0.0) -> None:
        r, _, _ = select.select(self.fds(), [], [], timeout)
        for fd in r:
            self.on_ready(fd)

    def _accept(self) -> None:
        while True:
            try:
                s, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            if len(self.conns) >= MAX_CONNS:
                s.close()
                continue
            s.setblocking(False)
            self.conns[s.fileno()] = _Conn(s, self._epoch())

    def _epoch(self) -> int:
        return getattr(self.handler, "epoch", 0)

    def _drop(self, c: _Conn) -> None:
        self.conns.pop(c.sock.fileno(), None)
        try:
            c.sock.close()
        except OSError:
            pass

    def _read(self, c: _Conn) -> None:
        if c.epoch != self._epoch():
            # connected during an earlier cell: whatever it still sends (a backlog queued by a
            # hostile cell) is not answered in this one; an honest client reconnects and retries
            return self._drop(c)
        try:
            data = c.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return self._drop(c)
        if not data:
            return self._drop(c)
        c.buf += data
        while True:
            i = c.buf.find(b"\n")
            if i < 0:
                break
            line = bytes(c.buf[:i])
            del c.buf[: i + 1]
            if len(line) > MAX_REQUEST:
                self._reply(c, {"id": None, "ok": False, "error": TOO_LARGE})
                return self._drop(c)
            self._answer(c, line)
            if c.sock.fileno() not in self.conns:
                return
        if len(c.buf) > MAX_REQUEST:
            self._reply(c, {"id": None, "ok": False, "error": TOO_LARGE})
            self._drop(c)

    def _answer(self, c: _Conn, line: bytes) -> None:
        if not line.strip():
            return
        try:
            req = json.loads(line)
        except (ValueError, RecursionError):
            return self._reply(c, {"id": None, "ok": False, "error": "malformed JSON"})
        self._reply(c, self.handler.handle(req))

    def _reply(self, c: _Conn, obj: dict) -> None:
        try:
            data = json.dumps(obj, default=str).encode() + b"\n"
        except (TypeError, ValueError) as e:
            data = json.dumps({"id": obj.get("id"), "ok": False, "error": f"unserializable: {e}"}).encode() + b"\n"
        # a client that does not read its replies must not hold the host: wait for it at most
        # until the handler's deadline (the cell's), not at all after it
        budget = getattr(self.handler, "send_budget", None)
        timeout = SEND_TIMEOUT if budget is None else budget()
        timeout = SEND_TIMEOUT if timeout is None else min(SEND_TIMEOUT, timeout)
        try:
            if timeout > 0:
                c.sock.settimeout(timeout)
            c.sock.sendall(data)
            c.sock.setblocking(False)
        except OSError:
            self._drop(c)

    def close(self) -> None:
        for c in list(self.conns.values()):
            self._drop(c)
        self.listener.close()
        Path(self.path).unlink(missing_ok=True)


def serve_in_thread(path: str, make_handler: Callable[[], Handler]) -> tuple[threading.Thread, threading.Event]:
    """Serve in a daemon thread; the handler (and its EventLog) is created in that thread."""
    stop = threading.Event()
    ready = threading.Event()

    def main() -> None:
        server = MsSocketServer(path, make_handler())
        ready.set()
        try:
            while not stop.is_set():
                server.pump(0.1)
        finally:
            server.close()

    t = threading.Thread(target=main, name="scroll-ms-service", daemon=True)
    t.start()
    ready.wait(30)
    return t, stop
