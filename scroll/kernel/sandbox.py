"""Launch recipe for the sandboxed kernel, and its threat model.

The kernel process is started (as root) through

    unshare --net -- prlimit --data=MEM --nproc=N --fsize=F --core=0 --
        setpriv --reuid=UID --regid=UID --clear-groups --no-new-privs
                --bounding-set=-all --inh-caps=-all -- PYTHON -m ipykernel_launcher -f CONN

with transport="ipc" (TCP cannot cross the network namespace), a clean environment and
a per-kernel runtime directory ``/tmp/scroll-kernels/<random>`` (base 0711, root-owned):

    <rt>/conn.json   connection file (HMAC key), owned by the kernel uid, 0400
    <rt>/ipc/        the kernel's zmq ipc sockets (owned by the kernel uid, 0700)
    <rt>/work/       the kernel's working dir, HOME and TMPDIR (kernel uid, 0700)
    <rt>/ms.sock     the host-side `ms` service socket (kernel uid, 0600)

The runtime dir is outside the log's directory on purpose: the log may live in a 0700
directory (pytest's tmp_path) that the kernel user cannot traverse, and the kernel never
opens the log anyway; it asks the host-side service (scroll.kernel.service), which only
offers read-only methods.

UIDs. Every kernel gets its own uid, drawn from UID_BASE..UID_BASE+UID_SPAN (no passwd
entry needed) and checked to have no running process. RLIMIT_NPROC counts all processes and
threads of a real uid, so a per-kernel uid gives every kernel its own process cap, and
kernels cannot signal, ptrace or read /proc/<pid>/environ of each other. On close or
restart every process of that uid is killed (SIGKILL, repeated until none is left).

Threat model (one test per claim in tests/test_kernel_sandbox.py, marker `sandbox`)

Covered:
  1. Python infinite loop: wall-time limit, SIGINT, session goes on.
  2. Loop inside C code (`sum(range(10**13))`) ignores SIGINT: the kernel is killed and
     restarted, logged successful cells are replayed.
  3. Memory: one process cannot hold more than `memory_limit` of data (RLIMIT_DATA),
     a big allocation raises MemoryError inside the kernel. Where a cgroup memory
     controller is writable (v2, or v1 as on this machine) the whole kernel (all its
     processes) is also capped at memory_limit (OOM kill -> restart + replay).
  4. Fork bomb: RLIMIT_NPROC on the kernel's own uid (default 256 threads+processes).
  5. Network: a fresh network namespace; not even the host's loopback is reachable.
  6. The log and the payload store cannot be written, dropped or deleted: the kernel runs
     as an unprivileged uid without capabilities and no_new_privs, and the log/payload
     files are root-owned; the `ms` protocol has no write method.
  7. Host secrets: the kernel gets a fresh environment; /proc/<ppid>/environ and
     /proc/1/environ belong to root and are unreadable for the kernel uid.
  8. Privilege: setuid(0) fails (no capabilities, no_new_privs blocks setuid binaries);
     root's home is not writable.
  9. Output floods: exposure is capped at max_output_chars; collection stops at
     max_output_bytes (then the cell is interrupted); the kernel sends streams in 1 MiB
     pieces, and a hostile single message above 16 MiB is refused by the host socket
     (ZMQ_MAXMSGSIZE; the output channel is then re-opened and the cell's notice says
     output may be missing), so host memory stays bounded.
 11. The `ms` socket and the kernel's files are owned by the kernel's own uid (0600/0700);
     other kernels (other uids) cannot connect to them or read its connection key.
 10. Kernel death (os._exit, OOM kill): detected, restarted, cells replayed.

Not covered (know these):
  - Reads: any world-readable file on the machine is readable (including a 0644 log
    file if the user placed it in a traversable directory). Secrets belong in 0600 files.
  - Disk: the kernel may fill /tmp or its work dir (RLIMIT_FSIZE caps single files only).
  - CPU: no CPU share limit beyond the wall-time limit per cell; background threads that
    outlive a cell keep running until the next restart.
  - Filesystem unix sockets of other services are reachable if their permissions allow it
    (the network namespace only hides network and abstract sockets).
  - Kernel exploits, side channels. This is process isolation, not a VM.
  - With several kernels, each has its own caps; the machine total is their sum.
  - Zombie processes count towards RLIMIT_NPROC until PID 1 reaps them; a restart keeps
    the kernel's uid, so a fork bomb's leftovers can briefly limit the restarted kernel.
  - Model code can read the whole log through `ms` (all sessions): by design.
Docker: `unshare --net` needs CAP_SYS_ADMIN, and setpriv needs CAP_SETUID/CAP_SETGID
(in Docker's default set): run with `docker run --cap-add SYS_ADMIN ...` (the default
seccomp profile allows unshare once CAP_SYS_ADMIN is granted).
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

RUNTIME_BASE = Path("/tmp/scroll-kernels")
UID_BASE = 2_000_000_000
UID_SPAN = 1_000_000
TOOLS = ("unshare", "prlimit", "setpriv")


class SandboxError(RuntimeError):
    """The sandbox cannot be set up; model code is refused (fail closed)."""


def parse_size(value: str | int) -> int:
    """'4G' / '512M' / '1024' -> bytes."""
    if isinstance(value, int):
        return value
    s = str(value).strip().upper().removesuffix("B").removesuffix("I")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    return int(s)


def _other_can(path: Path, bits: int) -> bool:
    try:
        return bool(path.stat().st_mode & bits)
    except OSError:
        return False


def python_reachable(python: str) -> str | None:
    """Why an unprivileged uid (no groups) cannot run `python`, or None if it can."""
    real = Path(os.path.realpath(python))
    for exe in {Path(python).absolute(), real}:
        for parent in list(exe.parents)[::-1]:
            if not _other_can(parent, stat.S_IXOTH):
                return f"{parent} is not traversable by other users (needed by {exe})"
    if not _other_can(real, stat.S_IXOTH | stat.S_IROTH):
        return f"{real} is not executable by other users"
    return None


_CHECKED: dict[str, str | None] = {}


def check_sandbox(python: str) -> None:
    """Raise SandboxError with the reason when the sandbox recipe cannot run here."""
    if python in _CHECKED:
        if _CHECKED[python]:
            raise SandboxError(_CHECKED[python])
        return
    reason = None
    if os.geteuid() != 0:
        reason = "the kernel sandbox needs root (to drop to an unprivileged uid and unshare the network)"
    elif missing := [t for t in TOOLS if shutil.which(t) is None]:
        reason = f"missing tools: {', '.join(missing)} (util-linux)"
    elif why := python_reachable(python):
        reason = (f"the kernel user cannot execute {python}: {why}. Make the venv from a system "
                  "Python, e.g. /usr/bin/python3 -m venv .venv")
    else:
        p = subprocess.run(["unshare", "--net", "--", "true"], capture_output=True, text=True)
        if p.returncode != 0:
            reason = (f"`unshare --net` failed ({p.stderr.strip()}); in Docker run with "
                      "--cap-add SYS_ADMIN")
    _CHECKED[python] = reason
    if reason:
        raise SandboxError(f"kernel sandbox unavailable: {reason}. Pass sandbox='off' "
                           "(CLI: --no-sandbox) to run model code UNSANDBOXED.")


def uid_pids(uid: int) -> list[int]:
    """Live (non-zombie) processes of `uid`."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.stat(f"/proc/{d}").st_uid != uid:
                    continue
                with open(f"/proc/{d}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in (b"Z", b"X"):
                pids.append(int(d))
    return pids


def _uid_busy(uid: int) -> bool:
    return bool(uid_pids(uid))


def allocate_uid() -> int:
    for _ in range(50):
        uid = UID_BASE + secrets.randbelow(UID_SPAN)
        if not _uid_busy(uid):
            return uid
    raise SandboxError("could not find a free kernel uid")


def kill_uid(uid: int, rounds: int = 20) -> None:
    """SIGKILL every process of `uid` (a fork bomb keeps forking: repeat until none)."""
    if uid < UID_BASE:  # never kill processes of a real user
        raise ValueError(f"refusing to kill uid {uid}")
    for _ in range(rounds):
        pids = uid_pids(uid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _base_dir(base: Path) -> Path:
    base.mkdir(mode=0o711, exist_ok=True)
    st = base.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise SandboxError(f"{base} exists but is not a directory owned by us; remove it")
    if st.st_mode & 0o777 != 0o711:
        os.chmod(base, 0o711)
    return base


def sweep_stale(base: Path) -> None:
    """Remove runtime dirs (and kill the kernels) left by a host process that died."""
    for d in base.iterdir():
        try:
            pid = int((d / "host.pid").read_text())
            os.kill(pid, 0)
            continue  # host alive
        except ProcessLookupError:
            pass
        except (OSError, ValueError):
            continue
        try:
            uid = (d / "work").stat().st_uid
            if uid >= UID_BASE:
                kill_uid(uid)
        except OSError:
            pass
        MemoryCgroup.remove_named(d.name)
        shutil.rmtree(d, ignore_errors=True)


@dataclass
class RuntimeDir:
    """Per-kernel runtime dir: connection file, ipc sockets, work dir, ms socket."""

    path: Path
    uid: int | None  # None: unsandboxed (files stay with the host user)
    key: str = field(default_factory=lambda: secrets.token_hex(32))

    @classmethod
    def create(cls, uid: int | None, base: Path = RUNTIME_BASE) -> "RuntimeDir":
        base = _base_dir(Path(base))
        sweep_stale(base)
        path = base / secrets.token_hex(6)
        path.mkdir(mode=0o711)
        (path / "host.pid").write_text(str(os.getpid()))
        rt = cls(path, uid)
        for sub in ("ipc", "work"):
            (path / sub).mkdir(mode=0o700)
            rt.give(path / sub)
        return rt

    def give(self, p: Path) -> None:
        if self.uid is not None:
            os.chown(p, self.uid, self.uid)

    @property
    def conn_file(self) -> Path:
        return self.path / "conn.json"

    @property
    def work(self) -> Path:
        return self.path / "work"

    @property
    def ms_socket(self) -> Path:
        return self.path / "ms.sock"

    def write_connection(self) -> dict:
        for f in (self.path / "ipc").iterdir():  # stale sockets from a killed kernel
            f.unlink(missing_ok=True)
        info = {"transport": "ipc", "ip": str(self.path / "ipc" / "k"), "shell_port": 1,
                "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5,
                "key": self.key, "signature_scheme": "hmac-sha256", "kernel_name": "scroll"}
        self.conn_file.unlink(missing_ok=True)
        self.conn_info = info
        fd = os.open(self.conn_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        with os.fdopen(fd, "w") as f:
            json.dump(info, f)
        self.give(self.conn_file)
        return info

    def env(self) -> dict[str, str]:
        w = str(self.work)
        threads = str(min(4, os.cpu_count() or 1))
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": w, "TMPDIR": w,
                "USER": "scroll-kernel", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "IPYTHONDIR": f"{w}/.ipython", "JUPYTER_CONFIG_DIR": f"{w}/.jupyter",
                "JUPYTER_DATA_DIR": f"{w}/.jupyter", "JUPYTER_RUNTIME_DIR": f"{w}/.jupyter",
                "MPLCONFIGDIR": f"{w}/.mpl", "MPLBACKEND": "Agg", "PYTHONNOUSERSITE": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
                "MKL_NUM_THREADS": threads}

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass
class Limits:
    memory: int = 4 << 30
    nproc: int = 256
    fsize: int = 1 << 30


def kernel_command(python: str, conn_file: Path, uid: int | None, limits: Limits) -> list[str]:
    """argv for the kernel; sandboxed when uid is given."""
    kernel = [python, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", str(conn_file),
              "--HistoryManager.enabled=False", "--IPKernelApp.quiet=True"]
    if uid is None:
        return kernel
    return ["unshare", "--net", "--",
            "prlimit", f"--data={limits.memory}", f"--nproc={limits.nproc}",
            f"--fsize={limits.fsize}", "--core=0", "--",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--", *kernel]


class MemoryCgroup:
    """Best-effort aggregate memory cap for all processes of one kernel.

    Uses cgroup v2 (memory.max) when the unified hierarchy has the memory controller,
    else cgroup v1 (memory.limit_in_bytes) next to our own memory cgroup. Silently
    absent (path None) where neither is writable; RLIMIT_DATA still caps each process.
    """

    def __init__(self, name: str, limit: int):
        self.path: Path | None = None
        for parent, knob in self._candidates():
            try:
                p = parent / name
                p.mkdir()
                (p / knob).write_text(str(limit))
                if knob == "memory.limit_in_bytes":
                    try:
                        (p / "memory.memsw.limit_in_bytes").write_text(str(limit))
                    except OSError:
                        pass
                self.path = p
                return
            except OSError:
                try:
                    (parent / name).rmdir()
                except OSError:
                    pass

    @staticmethod
    def _candidates():
        root = Path("/sys/fs/cgroup")
        out = []
        try:
            if (root / "cgroup.controllers").exists():  # pure v2
                rel = Path("/proc/self/cgroup").read_text().split("::", 1)[1].strip()
                out.append((root / rel.lstrip("/"), "memory.max"))
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, ctrls, rel = line.split(":", 2)
                if "memory" in ctrls.split(","):
                    out.append((root / "memory" / rel.lstrip("/"), "memory.limit_in_bytes"))
        except (OSError, IndexError, ValueError):
            pass
        return out

    def prefix(self) -> list[str]:
        """argv prefix that moves the launched process into the cgroup, then execs."""
        if self.path is None:
            return []
        return ["sh", "-c", f'echo $$ > "{self.path}/cgroup.procs" && exec "$@"', "sh"]

    @classmethod
    def remove_named(cls, name: str) -> None:
        for parent, _ in cls._candidates():
            try:
                (parent / name).rmdir()
            except OSError:
                pass

    def remove(self) -> None:
        if self.path is not None:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.02)
