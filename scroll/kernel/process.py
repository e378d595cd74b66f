"""One kernel process and its zmq channels (Jupyter protocol over ipc sockets).

`KernelProcess` starts ipykernel (through the sandbox recipe when a uid is given), waits
until it answers kernel_info, runs one cell at a time with `run`, and can interrupt
(SIGINT) or kill it. The wait loop polls the kernel's sockets together with extra file
descriptors (the `ms` service), so `ms` calls are answered on the caller's thread while a
cell runs, with no second thread touching the EventLog.

Host-memory guards: the iopub socket refuses messages above `max_msg_bytes`
(ZMQ_MAXMSGSIZE) and holds at most RCVHWM messages.
"""
from __future__ import annotations

import hmac
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import zmq
from jupyter_client.session import Session

from .cgroup import MemoryCgroup
from .sandbox import Limits, RuntimeDir, kernel_command, spawner
from .uids import kill_uid, ns_init_pid


class KernelDied(RuntimeError):
    pass


@dataclass
class CellRun:
    """Raw outcome of one execute_request."""

    status: str = "ok"  # ok | error | aborted | timeout | died
    ename: str | None = None
    evalue: str | None = None
    traceback: list[str] = field(default_factory=list)
    interrupted: bool = False
    iopub_lost: bool = False  # reply came but the idle status never did: iopub was reset


class KernelProcess:
    def __init__(self, rt: RuntimeDir, python: str | None = None, limits: Limits | None = None,
                 max_msg_bytes: int = 8 << 20, hide: list | tuple = ()):
        self.rt = rt
        self.hide = list(hide)  # extra dirs hidden from the kernel (the log's)
        self.kernel_pid: int | None = None  # host pid of the kernel (pid 1 of its namespace)
        self.python = python or sys.executable
        self.limits = limits or Limits()
        self.max_msg_bytes = max_msg_bytes
        self.ctx = zmq.Context.instance()
        self.proc: subprocess.Popen | None = None
        self.cgroup: MemoryCgroup | None = None
        self.sockets: dict[str, zmq.Socket] = {}
        self.session: Session | None = None

    # ---- lifecycle -------------------------------------------------------------------
    def start(self, timeout: float = 20.0) -> None:
        info = self.rt.write_connection()
        cgroup = None
        if self.rt.uid is not None:
            if self.cgroup is None:
                self.cgroup = MemoryCgroup(self.rt.path.name, self.limits.memory)
            cgroup = self.cgroup.path
        argv = kernel_command(self.python, self.rt.conn_file, self.rt.uid, self.limits,
                              hide=self.hide, cgroup=cgroup)
        env = self.rt.env()
        if self.rt.uid is None:  # unsandboxed: keep PATH etc. but not our secrets
            env["PATH"] = os.environ.get("PATH", env["PATH"])
        fd = os.open(self.rt.path / "kernel.stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._stderr = os.fdopen(fd, "wb")
        # forked by the spawner thread: the parent-death signal follows the host process,
        # not the (maybe short-lived) thread that created this Kernel
        self.proc = spawner.popen(argv, env=env, cwd=str(self.rt.work), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self._stderr,
                                  start_new_session=True)
        self.kernel_pid = None if self.rt.uid is not None else self.proc.pid
        self.session = Session(key=info["key"].encode(), signature_scheme="hmac-sha256",
                               username="scroll")
        base = f"ipc://{info['ip']}"
        self._connect("shell", zmq.DEALER, f"{base}-{info['shell_port']}")
        self._connect("control", zmq.DEALER, f"{base}-{info['control_port']}")
        io = self._connect("iopub", zmq.SUB, f"{base}-{info['iopub_port']}", sub=True)
        del io
        self._wait_ready(timeout)
        if self.rt.uid is not None:
            self.kernel_pid = ns_init_pid(self.rt.uid)

    def _connect(self, name: str, kind: int, url: str, sub: bool = False) -> zmq.Socket:
        s = self.ctx.socket(kind)
        s.linger = 0
        s.setsockopt(zmq.MAXMSGSIZE, self.max_msg_bytes)
        if sub:
            s.setsockopt(zmq.RCVHWM, 256)
            s.setsockopt(zmq.SUBSCRIBE, b"")
        s.connect(url)
        self.sockets[name] = s
        return s

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        got_reply = got_iopub = False
        last_sent = 0.0
        while not (got_reply and got_iopub):
            if time.monotonic() > deadline:
                raise KernelDied(f"kernel did not start within {timeout}s: {self.stderr_tail()}")
            if not self.alive():
                raise KernelDied(f"kernel exited at start (rc={self.proc.returncode}): "
                                 f"{self.stderr_tail()}")
            now = time.monotonic()
            if not got_reply and now - last_sent > 0.5:
                self.session.send(self.sockets["shell"], "kernel_info_request", {})
                last_sent = now
            for name in ("shell", "iopub"):
                sock = self.sockets[name]
                if sock.poll(10):
                    _, msg = self._recv(sock)
                    if msg is None:
                        continue
                    if name == "shell" and msg["msg_type"] == "kernel_info_reply":
                        got_reply = True
                    elif name == "iopub":
                        got_iopub = True
        # drain remaining startup status messages
        while self.sockets["iopub"].poll(0):
            self._recv(self.sockets["iopub"])
        while self.sockets["shell"].poll(0):
            self._recv(self.sockets["shell"])

    def reconnect_iopub(self, timeout: float = 10.0) -> None:
        """Replace the iopub socket (zmq drops a peer that sent an oversized message)."""
        self.sockets.pop("iopub").close(linger=0)
        info = self.rt.conn_info
        self._connect("iopub", zmq.SUB, f"ipc://{info['ip']}-{info['iopub_port']}", sub=True)
        self._wait_ready(timeout)

    def stderr_tail(self, n: int = 2000) -> str:
        try:
            data = (self.rt.path / "kernel.stderr").read_bytes()
            return data[-n:].decode("utf-8", "replace").strip()
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def interrupt(self) -> None:
        if self.alive() and self.kernel_pid is not None:
            try:
                os.kill(self.kernel_pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Kill the kernel and every process it left behind; close sockets."""
        for s in self.sockets.values():
            s.close(linger=0)
        self.sockets.clear()
        if self.proc is not None:
            if self.rt.uid is not None and self.kernel_pid is not None:
                # kernel first: its pid namespace dies with it and the Linux kernel reaps every
                # process in it; `unshare` exits once that is done
                kill_uid(self.rt.uid)
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
            try:  # the root setup part (unshare, sh) and, unsandboxed, the kernel itself
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if self.rt.uid is not None:
                kill_uid(self.rt.uid)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None
            self.kernel_pid = None
        if getattr(self, "_stderr", None):
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        self.stop()
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    # ---- messaging -------------------------------------------------------------------
    def _recv(self, sock: zmq.Socket):
        """One message, signature checked (HMAC), without jupyter_client's date parsing."""
        try:
            frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
        except zmq.Again:
            return None, None
        try:
            i = frames.index(b"<IDS|MSG>")
            sig, header, parent, _meta, content = frames[i + 1:i + 6]
            h = self.session.auth.copy()
            for f in (header, parent, _meta, content):
                h.update(f)
            if not hmac.compare_digest(h.hexdigest().encode(), sig):
                return None, None  # not signed with our key: drop it
            hd = json.loads(header)
            # a surrogate-escaped byte (print('\udcff')) reaches us as invalid UTF-8: replace it
            # rather than drop the whole message (and the cell's output with it)
            body = content.decode("utf-8", "replace")
            return frames[:i], {"msg_type": hd.get("msg_type"), "header": hd,
                                "parent_header": json.loads(parent), "content": json.loads(body)}
        except Exception:  # a malformed message: drop it
            return None, None

    def run(self, code: str, deadline: float, on_stream: Callable[[str, str], None],
            service=None,
            on_deadline: Callable[[], bool] | None = None, silent: bool = False) -> CellRun:
        """Execute `code`; stream text goes to on_stream(name, text).

        `service` (optional) has fds() and on_ready(fd): polled alongside the kernel.
        When the deadline passes, `on_deadline()` is called; it returns True to keep
        waiting (e.g. after sending SIGINT with a new deadline set via self.deadline) or
        False to give up (status "timeout"). Raises KernelDied if the process exits.
        """
        content = {"code": code, "silent": False, "store_history": not silent,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": False}
        msg = self.session.send(self.sockets["shell"], "execute_request", content)
        msg_id = msg["header"]["msg_id"]
        self.deadline = deadline
        result = CellRun()
        got_reply = got_idle = False
        reply_at = 0.0
        poller = zmq.Poller()
        poller.register(self.sockets["shell"], zmq.POLLIN)
        poller.register(self.sockets["iopub"], zmq.POLLIN)
        registered: list[int] = []
        while not (got_reply and got_idle):
            wait_ms = max(0, min(100, int((self.deadline - time.monotonic()) * 1000) + 1))
            fds = service.fds() if service is not None else []
            if fds != registered:
                for fd in set(registered) - set(fds):
                    poller.unregister(fd)
                for fd in set(fds) - set(registered):
                    poller.register(fd, zmq.POLLIN)
                registered = fds
            ready = dict(poller.poll(wait_ms))
            if self.sockets["iopub"] in ready:
                for _ in range(64):  # bounded: a flood must not starve the deadline check
                    _, m = self._recv(self.sockets["iopub"])
                    if m is None:
                        break
                    if m.get("parent_header", {}).get("msg_id") != msg_id:
                        continue
                    t, c = m["msg_type"], m["content"]
                    if t == "stream":
                        on_stream(c.get("name", "stdout"), c.get("text", ""))
                    elif t == "error":
                        result.ename, result.evalue = c.get("ename"), c.get("evalue")
                        result.traceback = c.get("traceback", [])
                    elif t == "status" and c.get("execution_state") == "idle":
                        got_idle = True
            if self.sockets["shell"] in ready:
                for _ in range(64):
                    _, m = self._recv(self.sockets["shell"])
                    if m is None:
                        break
                    if m.get("parent_header", {}).get("msg_id") == msg_id:
                        got_reply = True
                        reply_at = time.monotonic()
                        result.status = m["content"].get("status", "ok")
                        if result.status == "error" and result.ename is None:
                            result.ename = m["content"].get("ename")
                            result.evalue = m["content"].get("evalue")
            for fd in fds:
                if fd in ready:
                    service.on_ready(fd)
            if got_reply and (got_idle or time.monotonic() - reply_at > 1.0):
                # idle lost (iopub reset by an oversized message): don't hang, heal
                result.iopub_lost = not got_idle
                break
            if not self.alive():
                raise KernelDied(f"kernel died (exit code {self.proc.returncode})")
            if time.monotonic() >= self.deadline:
                if on_deadline is None or not on_deadline():
                    result.status = "timeout"
                    return result
        return result
