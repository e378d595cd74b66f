"""Start, health-check and stop a vLLM OpenAI-compatible server from a local model folder.

    from serve.presets import load_preset
    from serve.server import start, status, stop
    handle = start(load_preset("tiny", {"model": "var/models/tiny-qwen3"}))
    ...  # POST handle.url + "/v1/chat/completions"
    stop(handle.name)

Each server owns a run dir, `var/serve/<name>/` by default:
    server.json   pid, process group, url, argv, model, backend, start time
    server.log    the server's stdout and stderr
    home/ tmp/ cache/ config/ ...   every cache, config and temp file (see serve/env.py)
The server runs in its own session (process group), so `stop` signals the whole group
(API server + engine core + workers) and waits until no member is left.

Errors (all `ServeError`): `ModelFolderError` (missing/incomplete folder, before starting),
`PortInUseError` (port taken, before starting), `ServerDiedError` (exited while starting; the
message carries the log tail), `StartupTimeoutError` (not healthy in time; stopped, log tail),
`AlreadyRunningError`.
"""
from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from serve import env as serve_env
from serve.presets import (ConfigError, ModelFolderError, ServeConfig, ServeError,
                           build_command, check_model_folder, resolve_backend)

PID_FILE = "server.json"
LOG_FILE = "server.log"

__all__ = ["ServeError", "ModelFolderError", "PortInUseError", "ServerDiedError",
           "StartupTimeoutError", "AlreadyRunningError", "ServerHandle", "start", "stop",
           "status", "health", "run_dir_for", "log_tail"]


class PortInUseError(ServeError):
    pass


class ServerDiedError(ServeError):
    pass


class StartupTimeoutError(ServeError):
    pass


class AlreadyRunningError(ServeError):
    pass


@dataclass
class ServerHandle:
    name: str
    pid: int
    pgid: int
    host: str
    port: int
    url: str                 # http://host:port
    base_urls: list[str]     # OpenAI base URLs (this server + replicas)
    served_model_name: str
    model: str
    backend: str
    run_dir: str
    log_path: str
    argv: list[str]
    started_at: float
    ready_s: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


# Popen objects of servers started by this process, so stop() can reap them (no zombies).
_CHILDREN: dict[int, subprocess.Popen] = {}


def run_dir_for(name: str, run_root: str | os.PathLike | None = None) -> Path:
    root = Path(run_root) if run_root is not None else Path.cwd() / "var" / "serve"
    return (root / name).resolve()


def log_tail(path: str | os.PathLike, lines: int = 40) -> str:
    try:
        data = Path(path).read_bytes()[-64_000:]
    except OSError:
        return "(no log)"
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


def port_free(host: str, port: int) -> bool:
    """Can a server listen on host:port now? The bind test sets SO_REUSEADDR, as servers do
    (uvicorn, and so vLLM, does): connections of a just-stopped server left in TIME-WAIT do
    not block a restart, while a live listener still does."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            if e.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    # Something may listen on the wildcard or loopback address without blocking our bind.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) != 0


def listener_pids(port: int) -> set[int] | None:
    """The pids that hold a listening TCP socket on `port` (any address of this network namespace),
    read from /proc; None when /proc cannot tell (no such socket seen, or no /proc)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f[9])
    if not inodes:
        return None
    pids: set[int] = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{d}/fd"):
                link = os.readlink(f"/proc/{d}/fd/{fd}")
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    pids.add(int(d))
                    break
        except OSError:
            continue
    return pids or None


def _in_group(pid: int, pgid: int) -> bool:
    try:
        return os.getpgid(pid) == pgid
    except OSError:
        return False


def _get(url: str, timeout: float = 2.0, api_key: str | None = None) -> tuple[int, bytes]:
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    # Never go through an HTTP proxy for the local server.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def health(url: str, timeout: float = 2.0) -> bool:
    try:
        code, _ = _get(url.rstrip("/") + "/health", timeout)
        return code == 200
    except (OSError, urllib.error.URLError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone once reaped.
    p = _CHILDREN.get(pid)
    if p is not None and p.poll() is not None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def group_alive(pgid: int) -> bool:
    """Any non-zombie process left in process group `pgid`?"""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _read_state(run_dir: Path) -> dict | None:
    try:
        return json.loads((run_dir / PID_FILE).read_text())
    except (OSError, ValueError):
        return None


def start(
    cfg: ServeConfig,
    *,
    run_root: str | os.PathLike | None = None,
    wait: bool = True,
    timeout: float | None = None,
    models_dir: Path | None = None,
    python: str | None = None,
    build_model: Callable[[Path], object] | None = None,
) -> ServerHandle:
    """Start the server for `cfg`; with `wait`, return once /health answers 200.

    `build_model(path)` builds a missing model folder when the preset allows it
    (`auto_build_tiny`); the CLI passes distill's tiny-model builder, since serve/ never
    depends on distill/. Without it a missing folder is a ModelFolderError."""
    run_dir = run_dir_for(cfg.name, run_root)
    if cfg.auto_build_tiny and build_model is not None and not cfg.model_path(models_dir).exists():
        build_model(cfg.model_path(models_dir))
    model_path = check_model_folder(cfg, models_dir)  # ModelFolderError before anything runs
    backend = resolve_backend(cfg, python)
    argv = build_command(cfg, backend, model_path, python=python)

    state = _read_state(run_dir)
    if state and group_alive(state["pgid"]):
        raise AlreadyRunningError(
            f"server {cfg.name!r} already runs (pid {state['pid']}, {state['url']}); "
            f"stop it with `scroll serve down {cfg.name}`")
    if not port_free(cfg.host, cfg.port):
        raise PortInUseError(
            f"port {cfg.port} on {cfg.host} is already in use; pick another with --port "
            f"or stop whatever listens there (e.g. `ss -ltnp 'sport = :{cfg.port}'`)")

    run_dir.mkdir(parents=True, exist_ok=True)
    env = serve_env.server_env(run_dir, cpu=backend == "cpu",
                               cpu_kvcache_space_gib=cfg.cpu_kvcache_space_gib,
                               host_ip="127.0.0.1" if cfg.nodes == 1 else None,
                               extra=cfg.extra_env)
    env["TMPDIR"] = str(_short_tmpdir(run_dir, Path(env["TMPDIR"])))
    log_path = run_dir / LOG_FILE
    t0 = time.time()
    with open(log_path, "ab") as log:
        log.write(f"\n=== scroll serve start {time.strftime('%Y-%m-%dT%H:%M:%S')} "
                  f"backend={backend}\n=== {' '.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, cwd=run_dir, env=env,
                                start_new_session=True, close_fds=True)
    _CHILDREN[proc.pid] = proc
    handle = ServerHandle(
        name=cfg.name, pid=proc.pid, pgid=proc.pid, host=cfg.host, port=cfg.port,
        url=cfg.url, base_urls=cfg.base_urls, served_model_name=cfg.served_model_name,
        model=str(model_path), backend=backend, run_dir=str(run_dir), log_path=str(log_path),
        argv=argv, started_at=t0)
    _write_state(run_dir, handle)
    if wait:
        try:
            wait_healthy(handle, timeout if timeout is not None else cfg.startup_timeout_s)
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C while waiting: leave nothing behind
            _kill_group(handle.pgid, grace=5, since=handle.started_at)
            _cleanup_state(run_dir)
            raise
        _write_state(run_dir, handle)
    return handle


def _write_state(run_dir: Path, handle: ServerHandle) -> None:
    tmp = run_dir / (PID_FILE + ".tmp")
    tmp.write_text(json.dumps(handle.to_dict(), indent=2))
    os.replace(tmp, run_dir / PID_FILE)


def wait_healthy(handle: ServerHandle, timeout: float) -> ServerHandle:
    deadline = time.time() + timeout
    while True:
        proc = _CHILDREN.get(handle.pid)
        code = proc.poll() if proc is not None else (None if _alive(handle.pid) else -1)
        if code is not None:
            _kill_group(handle.pgid, grace=5, since=handle.started_at)
            _cleanup_state(Path(handle.run_dir))
            raise ServerDiedError(
                f"vLLM server {handle.name!r} exited with code {code} while starting "
                f"(log: {handle.log_path}); last lines:\n{log_tail(handle.log_path)}")
        if health(handle.url, timeout=2.0):
            # ready only when OUR process group answers: another server on the port answers /health too
            holders = listener_pids(handle.port)
            if holders is not None and not any(_in_group(p, handle.pgid) for p in holders):
                _kill_group(handle.pgid, grace=5, since=handle.started_at)
                _cleanup_state(Path(handle.run_dir))
                raise PortInUseError(
                    f"port {handle.port} answers /health, but from pid(s) {sorted(holders)}, not this server "
                    f"(pid {handle.pid}, stopped): another server holds the port. Pick another --port or stop "
                    f"it (e.g. `ss -ltnp 'sport = :{handle.port}'`); log: {handle.log_path}")
            handle.ready_s = round(time.time() - handle.started_at, 2)
            return handle
        if time.time() > deadline:
            _kill_group(handle.pgid, grace=10, since=handle.started_at)
            _cleanup_state(Path(handle.run_dir))
            raise StartupTimeoutError(
                f"vLLM server {handle.name!r} not healthy after {timeout:.0f}s; stopped it "
                f"(log: {handle.log_path}); last lines:\n{log_tail(handle.log_path)}")
        time.sleep(0.5)


def _shm_in_use() -> set[str]:
    used: set[str] = set()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            for fd in (proc / "fd").iterdir():
                try:
                    t = os.readlink(fd)
                except OSError:
                    continue
                if t.startswith("/dev/shm/"):
                    used.add(t)
            for line in (proc / "maps").read_text().splitlines():
                if "/dev/shm/" in line:
                    used.add(line[line.index("/dev/shm/"):].split(" ")[0])
        except OSError:
            continue
    return used


def reap_shm(since: float) -> list[str]:
    """Remove POSIX shared memory a SIGKILLed server left behind: /dev/shm/psm_* and
    sem.* files created after `since` that no live process has open or mapped.
    (vLLM's message queues unlink theirs on a clean exit; SIGKILL skips that.)"""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        return []
    cands = []
    for f in list(shm.glob("psm_*")) + list(shm.glob("sem.mp-*")):
        try:
            if f.stat().st_mtime >= since - 1 and f.stat().st_uid == os.getuid():
                cands.append(f)
        except OSError:
            continue
    if not cands:
        return []
    used = _shm_in_use()
    removed = []
    for f in cands:
        if str(f) not in used:
            try:
                f.unlink()
                removed.append(str(f))
            except OSError:
                pass
    return removed


def _kill_group(pgid: int, grace: float = 30.0, since: float | None = None) -> bool:
    """SIGTERM the group, SIGKILL after `grace` s; True when no member is left.
    After a SIGKILL, shared memory the server left behind is removed (see reap_shm)."""

    def wait_gone(seconds: float) -> bool:
        deadline = time.time() + seconds
        while time.time() < deadline:
            proc = _CHILDREN.get(pgid)
            if proc is not None:
                proc.poll()  # reap our own child so it does not linger as a zombie
            if not group_alive(pgid):
                return True
            time.sleep(0.2)
        return not group_alive(pgid)

    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    gone = wait_gone(grace)
    if not gone:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        gone = wait_gone(10.0)
        if since is not None:
            reap_shm(since)
    proc = _CHILDREN.pop(pgid, None)
    if proc is not None:
        proc.poll()
    return gone


# vLLM binds ZMQ ipc sockets at $TMPDIR/<uuid4>; a Unix socket path has at most 107 bytes.
_MAX_TMPDIR = 107 - len("/") - 36 - 4


def _tmp_link(run_dir: Path) -> Path:
    import hashlib

    return Path("/tmp") / f"scroll-{hashlib.sha256(str(run_dir).encode()).hexdigest()[:12]}"


def _short_tmpdir(run_dir: Path, tmpdir: Path) -> Path:
    """`tmpdir` when short enough for Unix socket paths, else a short symlink to it
    (/tmp/scroll-<hash>, removed again by stop)."""
    if len(str(tmpdir)) <= _MAX_TMPDIR:
        return tmpdir
    link = _tmp_link(run_dir)
    if link.is_symlink() and Path(os.readlink(link)) != tmpdir:
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(tmpdir, target_is_directory=True)
    return link


def _cleanup_state(run_dir: Path) -> None:
    link = _tmp_link(run_dir)
    if link.is_symlink() and Path(os.readlink(link)) == run_dir / "tmp":
        link.unlink()
    for f in (PID_FILE, PID_FILE + ".tmp"):
        try:
            (run_dir / f).unlink()
        except FileNotFoundError:
            pass


def stop(name: str, *, run_root: str | os.PathLike | None = None, grace: float = 30.0) -> dict:
    """Stop server `name` (SIGTERM to its process group, SIGKILL after `grace` s)."""
    run_dir = run_dir_for(name, run_root)
    state = _read_state(run_dir)
    if state is None:
        return {"name": name, "stopped": False, "reason": "not running (no server.json)",
                "run_dir": str(run_dir)}
    was_alive = group_alive(state["pgid"])
    gone = (_kill_group(state["pgid"], grace, since=state.get("started_at"))
            if was_alive else True)
    if not gone:
        raise ServeError(f"server {name!r} (pgid {state['pgid']}) survived SIGKILL")
    _cleanup_state(run_dir)
    return {"name": name, "stopped": was_alive, "pid": state["pid"], "pgid": state["pgid"],
            "run_dir": str(run_dir), "log_path": state.get("log_path")}


def status(name: str, *, run_root: str | os.PathLike | None = None) -> dict:
    run_dir = run_dir_for(name, run_root)
    state = _read_state(run_dir)
    if state is None:
        return {"name": name, "running": False, "healthy": False, "run_dir": str(run_dir)}
    running = group_alive(state["pgid"])
    out = dict(state)
    out.update(running=running, healthy=running and health(state["url"]))
    if running and out["healthy"]:
        try:
            code, body = _get(state["url"] + "/v1/models")
            if code == 200:
                out["models"] = [m["id"] for m in json.loads(body)["data"]]
        except (OSError, ValueError, KeyError):
            pass
    return out


def list_servers(run_root: str | os.PathLike | None = None) -> list[dict]:
    root = Path(run_root) if run_root is not None else Path.cwd() / "var" / "serve"
    return [status(p.parent.name, run_root=root) for p in sorted(root.glob(f"*/{PID_FILE}"))]


def chat(url: str, model: str, messages: list[dict], timeout: float = 60.0, **params) -> dict:
    """One chat completion over plain HTTP (a smoke check; scroll/llm is the real client)."""
    body = json.dumps({"model": model, "messages": messages, **params}).encode()
    req = urllib.request.Request(url.rstrip("/") + "/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=timeout) as r:
        return json.loads(r.read())


_ = (ConfigError, ModelFolderError)  # re-exported
