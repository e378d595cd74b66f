"""Host-side service that answers `ms` calls from the kernel (read-only on EventLog).

Protocol: JSON lines over a unix socket. Request `{"id": n, "method": m, "params": {...}}`,
reply `{"id": n, "ok": true, "result": ...}` or `{"id": n, "ok": false, "error": "..."}`.
Methods: search, expand, payload, recent, sessions, headlines, ping. There is no write
method: nothing a client sends can append, change or delete events or payloads.

Robustness against hostile clients: lines above MAX_REQUEST bytes are refused and the
connection closed; malformed JSON, wrong types, unknown methods and failing calls get an
error reply; at most MAX_CONNS clients at once; replies are sent with a send timeout, a
client that stops reading is dropped. No exception escapes into the host.

`MsSocketServer` is pumped by its owner: `fds()` + `on_ready(fd)` plug into the kernel's
wait loop (scroll.kernel.process), so EventLog is only touched on the caller's thread.
`serve_in_thread` runs the same server in a thread with its own handler (notebook export).
"""
from __future__ import annotations

import base64
import json
import os
import select
import socket
import threading
from pathlib import Path
from typing import Any, Callable

MAX_REQUEST = 1 << 20
MAX_CONNS = 16
MAX_K = 1000
MAX_RANGE = 10_000
INLINE_TEXT = 64 * 1024  # event text above this (with a payload handle) is fetched lazily
SEND_TIMEOUT = 10.0


LOOP_KINDS = ("code", "output", "note", "headline", "final")


class RequestError(ValueError):
    pass


def _int(v: Any, name: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise RequestError(f"{name} must be an int")
    if v < lo or (hi is not None and v > hi):
        raise RequestError(f"{name} out of range [{lo}, {hi}]")
    return v


def _opt_str(v: Any, name: str) -> str | None:
    if v is not None and not isinstance(v, str):
        raise RequestError(f"{name} must be a string or None")
    return v


_EVENT_FIELDS = ("seq", "session", "time", "kind", "role", "meta", "payload", "tokens", "score")


def event_dict(ev: Any, store: Any = None) -> dict:
    """Event/Hit -> JSON-able dict; a large payload-backed text is left for lazy loading."""
    if isinstance(ev, dict):
        return ev
    d = {f: getattr(ev, f, None) for f in _EVENT_FIELDS}
    if d["score"] is None:
        del d["score"]
    size = None
    if d["payload"] and store is not None:
        try:
            size = store.size(d["payload"])
        except Exception:  # noqa: BLE001
            size = None
    if size is not None and size > INLINE_TEXT:
        d["text"] = None  # the client loads it lazily through the handle
        d["text_len"] = size
    else:
        d["text"] = ev.text
    return d


class MsHandler:
    """Maps requests to read-only EventLog calls."""

    def __init__(self, log: Any, headlines: Callable[[], list] | None = None):
        self.log = log
        self.headlines = headlines

    def handle(self, req: Any) -> dict:
        rid = req.get("id") if isinstance(req, dict) else None
        try:
            if not isinstance(req, dict):
                raise RequestError("request must be a JSON object")
            method, params = req.get("method"), req.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                raise RequestError("method must be a string and params an object")
            fn = getattr(self, f"m_{method}", None)
            if fn is None:
                raise RequestError(f"unknown method {method!r}")
            return {"id": rid, "ok": True, "result": fn(**params)}
        except TypeError as e:
            return {"id": rid, "ok": False, "error": f"bad params: {e}"}
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply
            return {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"}

    def _ev(self, ev: Any) -> dict:
        return event_dict(ev, getattr(self.log, "payloads", None))

    def m_ping(self) -> str:
        return "pong"

    def m_search(self, query, k=10, session=None, kind=None, role=None, since=None,
                 until=None, seq_range=None) -> list[dict]:
        if not isinstance(query, str):
            raise RequestError("query must be a string")
        k = _int(k, "k", 1, MAX_K)
        for name, v in (("session", session), ("kind", kind), ("role", role),
                        ("since", since), ("until", until)):
            _opt_str(v, name)
        if seq_range is not None:
            if not (isinstance(seq_range, list) and len(seq_range) == 2):
                raise RequestError("seq_range must be [lo, hi]")
            seq_range = (_int(seq_range[0], "lo"), _int(seq_range[1], "hi"))
        # the agent's own machinery (its cells, their outputs, notes...) would echo every query
        # back: left out unless asked for by kind (kind="*": every kind)
        exclude = LOOP_KINDS if kind is None else ()
        hits = self.log.search(query, k=k, session=session, kind=None if kind == "*" else kind, role=role,
                               since=since, until=until, seq_range=seq_range, exclude_kinds=exclude)
        return [self._ev(h) for h in hits]

    def m_expand(self, lo, hi=None) -> dict | list[dict]:
        lo = _int(lo, "lo")
        if hi is None:
            return self._ev(self.log.expand(lo))
        hi = _int(hi, "hi", lo, lo + MAX_RANGE)
        return [self._ev(e) for e in self.log.expand(lo, hi)]

    def m_payload(self, handle) -> dict:
        if not isinstance(handle, str):
            raise RequestError("handle must be a string")
        data = self.log.payloads.get(handle)
        try:
            return {"text": data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(data).decode("ascii")}

    def m_recent(self, n=10, session=None) -> list[dict]:
        n = _int(n, "n", 0, MAX_RANGE)
        return [self._ev(e) for e in self.log.recent(n, session=_opt_str(session, "session"))]

    def m_sessions(self) -> list[dict]:
        return list(self.log.sessions())

    def m_headlines(self) -> list:
        return list(self.headlines()) if self.headlines else []


class _Conn:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()


class MsSocketServer:
    """Non-blocking unix-socket server; the owner pumps it (see module docstring)."""

    def __init__(self, path: str | os.PathLike, handler: MsHandler, owner_uid: int | None = None):
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
            self.conns[s.fileno()] = _Conn(s)

    def _drop(self, c: _Conn) -> None:
        self.conns.pop(c.sock.fileno(), None)
        try:
            c.sock.close()
        except OSError:
            pass

    def _read(self, c: _Conn) -> None:
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
                self._reply(c, {"id": None, "ok": False, "error": "request too large"})
                return self._drop(c)
            self._answer(c, line)
            if c.sock.fileno() not in self.conns:
                return
        if len(c.buf) > MAX_REQUEST:
            self._reply(c, {"id": None, "ok": False, "error": "request too large"})
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
        try:
            c.sock.settimeout(SEND_TIMEOUT)
            c.sock.sendall(data)
            c.sock.setblocking(False)
        except OSError:
            self._drop(c)

    def close(self) -> None:
        for c in list(self.conns.values()):
            self._drop(c)
        self.listener.close()
        Path(self.path).unlink(missing_ok=True)


def serve_in_thread(path: str, make_handler: Callable[[], MsHandler]) -> tuple[threading.Thread, threading.Event]:
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
