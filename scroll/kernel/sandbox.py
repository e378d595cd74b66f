"""Launch recipe for the sandboxed kernel, and its threat model.

The kernel process is started (as root, from one long-lived spawner thread) through

    setpriv --pdeathsig SIGKILL --
      unshare --mount --net --pid --fork --kill-child=SIGKILL --propagation private --
        sh -c SETUP                 # root, inside the new namespaces (see `setup_script`)
          exec prlimit --data=MEM --nproc=N --fsize=F --core=0 --
            setpriv --reuid=UID --regid=UID --clear-groups --no-new-privs --bounding-set=-all
                    --inh-caps=-all --pdeathsig SIGKILL -- PYTHON -m ipykernel_launcher -f CONN

SETUP, as root inside the private mount namespace, before dropping to UID:
  * moves itself into the kernel's memory cgroup (when one is writable);
  * mounts a fresh /proc (the kernel is pid 1 of its own pid namespace: it sees no host
    process);
  * hides the project: an empty read-only tmpfs over the checkout root, over the installed
    package dirs of scroll / distill / serve and over the log's and payload store's dirs;
    the venv and the runtime dir are bound back where they lie below a hidden dir;
  * mounts ONE size-capped tmpfs (`Limits.tmp`, default 256 MiB) and binds it on /tmp,
    /var/tmp and /dev/shm (so the three together hold at most that much); a venv that lies
    below one of them (a clone under /tmp) is bound back at its path, read-only;
  * sets umask 077 (files the kernel creates are 0600).

transport="ipc" (TCP cannot cross the network namespace), a clean environment and a
per-kernel runtime directory ``/run/scroll-kernels/<random>`` (base 0711, root-owned; not
under /tmp, which the kernel sees as its own tmpfs):

    <rt>/conn.json   connection file (HMAC key), owned by the kernel uid, 0400
    <rt>/ipc/        the kernel's zmq ipc sockets (owned by the kernel uid, 0700); removed and
                     made again at every start, whatever the cell put there
    <rt>/work/       the kernel's working dir and HOME (kernel uid, 0700)
    <rt>/ns/         root-only scratch for the mount setup (0700)
    <rt>/ms.sock     the host-side `ms` service socket (kernel uid, 0600)

The kernel never opens the log; it asks the host-side service (scroll.kernel.service), which
only offers read-only methods.

Lifetime. The kernel is pid 1 of a fresh pid namespace: when it dies, the Linux kernel kills
every process in that namespace and reaps them (no zombie outlives it, so nothing keeps
counting against RLIMIT_NPROC), and the namespace's tmpfs is freed. The kernel dies with the
`unshare` process above it (parent-death signal), which dies with the host process
(parent-death signal; the host forks it from a spawner thread that lives as long as the
process, because PR_SET_PDEATHSIG fires when the forking THREAD exits). So a SIGKILLed host
leaves no kernel behind.

UIDs. Every kernel gets its own uid, drawn from UID_BASE..UID_BASE+UID_SPAN (no passwd
entry needed) and checked to have no process (zombies included). RLIMIT_NPROC counts all
processes and threads of a real uid, so a per-kernel uid gives every kernel its own process
cap, and kernels cannot signal, ptrace or read /proc/<pid>/environ of each other. On close
or restart every process of that uid is killed (SIGKILL, repeated until none is left); a
restart waits until the uid holds no process, zombies included, and moves to a fresh uid
when some remain.

Threat model (one test per claim in tests/test_kernel_sandbox.py, marker `sandbox`)

Covered:
  1. Python infinite loop: wall-time limit, SIGINT, session goes on.
  2. Loop inside C code (`sum(range(10**13))`) ignores SIGINT: the kernel is killed and
     restarted, logged successful cells are replayed.
  3. Memory: one process cannot hold more than `memory_limit` of data (RLIMIT_DATA),
     a big allocation raises MemoryError inside the kernel. Where a cgroup memory
     controller is writable (v2, or v1 as on this machine) the whole kernel (all its
     processes) is also capped at memory_limit (OOM kill -> restart + replay).
  4. Fork bomb: RLIMIT_NPROC on the kernel's own uid (default 256 threads+processes); when a
     cell leaves the uid at its process cap, the kernel is restarted (pid namespace: all of
     the bomb's processes die and are reaped), so later cells work.
  5. Network: a fresh network namespace; not even the host's loopback is reachable.
  6. The log and the payload store cannot be read, written, dropped or deleted: their dirs
     are hidden in the kernel's mount namespace, the kernel runs as an unprivileged uid
     without capabilities and no_new_privs, the files are root-owned; the `ms` protocol has
     no write method.
  7. Host secrets: the kernel gets a fresh environment; it sees no host process in /proc
     (own pid namespace), and /proc/<pid>/environ of root processes is unreadable anyway.
  8. Privilege: setuid(0) fails (no capabilities, no_new_privs blocks setuid binaries);
     root's home is not writable.
  9. Output floods: exposure is capped at max_output_chars; collection stops at
     max_output_bytes (then the cell is interrupted); the kernel sends streams in 1 MiB
     pieces, and a hostile single message above 16 MiB is refused by the host socket
     (ZMQ_MAXMSGSIZE; the output channel is then re-opened and the cell's notice says
     output may be missing), so host memory stays bounded.
 10. Kernel death (os._exit, OOM kill): detected, restarted, cells replayed.
 11. The `ms` socket and the kernel's files are owned by the kernel's own uid (0600/0700);
     other kernels (other uids) cannot connect to them or read its connection key.
 12. Temp space: /tmp, /var/tmp and /dev/shm are one private tmpfs capped at `Limits.tmp`;
     filling it gives ENOSPC inside the kernel, it is freed at restart and close, and
     other kernels do not see it (files are 0600 anyway: umask 077).
 13. Label hygiene: `import scroll`, `import distill`, `import serve` fail in the kernel and
     the project's source (e.g. the task generator) cannot be read by its path.
 14. Orphans: a SIGKILLed host takes its kernels (and everything they started) with it.
 15. Leftovers: restarts work after C loops, memory bombs and fork bombs (fresh pid
     namespace each start, zombies reaped, the uid checked empty).

 16. A minimal root: the kernel is chrooted into a tree built for it (minimal_root): the
     system runtime read-only (/usr and the /bin, /sbin, /lib* links), /dev/{null,zero,full,
     random,urandom}, its own /proc, an /etc of two copied files (ld.so.cache, localtime),
     its private /tmp, /var/tmp and /dev/shm, its venv read-only and its runtime dir. No
     other host path exists for it: /home, /root, /opt, /srv, /var, /etc, /sys, the
     checkout, the log's dir, other services' unix sockets.
 17. The work dir (HOME) is a tmpfs capped at `Limits.work` (1 GiB), mounted on the host so
     ms.attach reads it; a cell that fills it (or the memory or process cap) is logged with
     meta `limit` and never replayed.

Not covered (know these):
  - Reads: everything under /usr (world-readable system files and installed programs) and
    the venv (the packages installed there) is readable. Secrets belong elsewhere.
  - CPU: no CPU share limit beyond the wall-time limit per cell; background threads that
    outlive a cell keep running until the next restart (their prints and `ms` calls are
    fenced off kernel-side, scroll_ms.fence_threads).
  - Kernel exploits, side channels. This is process isolation, not a VM.
  - With several kernels, each has its own caps; the machine total is their sum.
  - Model code can read every session the capability grants through `ms`: by design.
Docker: `unshare --mount --net --pid` needs CAP_SYS_ADMIN, and setpriv needs
CAP_SETUID/CAP_SETGID (in Docker's default set): run with `docker run --cap-add SYS_ADMIN ...`
(the default seccomp profile allows unshare once CAP_SYS_ADMIN is granted).
"""
from __future__ import annotations

import importlib.util
import json
import os
import queue
import secrets
import shutil
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .cgroup import MemoryCgroup
from .errors import SandboxError
from .mounts import _SYSTEM_DIRS, setup_script
from .uids import UID_BASE, kill_uid

RUNTIME_BASE = Path("/run/scroll-kernels")
TOOLS = ("unshare", "prlimit", "setpriv", "mount", "umount", "chroot", "env")
HIDDEN_PACKAGES = ("scroll", "distill", "serve")  # the kernel's Python must not import these
# never hidden, even when a log lies directly in one of them




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
        p = subprocess.run(["unshare", "--mount", "--net", "--pid", "--fork", "--", "sh", "-c",
                            "mount -t tmpfs -o size=4k scroll-check /tmp"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            reason = (f"`unshare --mount --net --pid` failed ({p.stderr.strip()}); in Docker run "
                      "with --cap-add SYS_ADMIN")
    _CHECKED[python] = reason
    if reason:
        raise SandboxError(f"kernel sandbox unavailable: {reason}. Pass sandbox='off' "
                           "(CLI: --no-sandbox) to run model code UNSANDBOXED.")


class _Spawner:
    """Starts child processes from ONE thread that lives as long as the host process.

    PR_SET_PDEATHSIG fires when the thread that forked the child exits, not the process: a
    Kernel created in a short-lived worker thread would lose its kernel when that thread
    ends. Forking from this daemon thread ties the kernels to the process instead."""

    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.pid = 0

    def popen(self, argv: list[str], **kw) -> subprocess.Popen:
        with self.lock:
            if self.thread is None or not self.thread.is_alive() or self.pid != os.getpid():
                self.jobs, self.pid = queue.Queue(), os.getpid()  # (again after a fork)
                self.thread = threading.Thread(target=self._main, args=(self.jobs,),
                                               name="scroll-kernel-spawner", daemon=True)
                self.thread.start()
            jobs = self.jobs
        box: dict = {}
        done = threading.Event()
        jobs.put((argv, kw, box, done))
        done.wait()
        if "error" in box:
            raise box["error"]
        return box["proc"]

    @staticmethod
    def _main(jobs: queue.Queue) -> None:
        while True:
            argv, kw, box, done = jobs.get()
            try:
                box["proc"] = subprocess.Popen(argv, **kw)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box["error"] = e
            done.set()


spawner = _Spawner()


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
            for uid in {(d / sub).stat().st_uid for sub in ("work", "ipc") if (d / sub).exists()}:
                if uid >= UID_BASE:
                    kill_uid(uid)
        except OSError:
            pass
        MemoryCgroup.remove_named(d.name)
        _unmount_work(d)
        shutil.rmtree(d, ignore_errors=True)


def _unmount_work(rt_path: Path) -> None:
    """Detach a runtime dir's work tmpfs (if it has one) so that removing the dir frees it."""
    work = rt_path / "work"
    if os.path.ismount(work):
        subprocess.run(["umount", "-l", str(work)], capture_output=True)


@dataclass
class RuntimeDir:
    """Per-kernel runtime dir: connection file, ipc sockets, work dir, ms socket."""

    path: Path
    uid: int | None  # None: unsandboxed (files stay with the host user)
    key: str = field(default_factory=lambda: secrets.token_hex(32))

    @classmethod
    def create(cls, uid: int | None, base: Path = RUNTIME_BASE, work_size: int | None = None) -> "RuntimeDir":
        """`work_size`: with a sandbox (uid given), the work dir is a tmpfs of that many bytes, mounted
        on the host so that ms.attach reads it and a cell cannot fill the host's disk."""
        base = _base_dir(Path(base))
        sweep_stale(base)
        path = base / secrets.token_hex(6)
        path.mkdir(mode=0o711)
        (path / "host.pid").write_text(str(os.getpid()))
        rt = cls(path, uid)
        (path / "work").mkdir(mode=0o700)
        if uid is not None and work_size:
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={int(work_size)},mode=0700,uid={uid},gid={uid},"
                            "nosuid,nodev", "scroll-work", str(path / "work")], check=True, capture_output=True)
        rt.give(path / "work")
        (path / "ns").mkdir(mode=0o700)  # root-only: mount setup scratch
        rt.reset_ipc()
        return rt

    def give(self, p: Path) -> None:
        if self.uid is not None:
            os.chown(p, self.uid, self.uid)

    def reset_ipc(self) -> None:
        """Remove <rt>/ipc whatever it holds (the kernel owns it: a cell may have put dirs,
        fifos or links there) and make it again, empty."""
        ipc = self.path / "ipc"
        try:
            if ipc.is_symlink() or not ipc.is_dir():
                ipc.unlink()
            else:
                shutil.rmtree(ipc)
        except FileNotFoundError:
            pass
        ipc.mkdir(mode=0o700)
        self.give(ipc)

    def change_uid(self, uid: int) -> None:
        """Hand the runtime dir to a fresh uid (the old one still has processes left)."""
        self.uid = uid
        self.reset_ipc()
        for root, dirs, files in os.walk(self.work):
            for name in dirs + files:
                try:
                    os.lchown(os.path.join(root, name), uid, uid)
                except OSError:
                    pass
        self.give(self.work)
        if self.ms_socket.exists():
            self.give(self.ms_socket)

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
        self.reset_ipc()  # stale sockets from a killed kernel, or whatever a cell put there
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
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": w, "TMPDIR": "/tmp",
                "USER": "scroll-kernel", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
                "IPYTHONDIR": f"{w}/.ipython", "JUPYTER_CONFIG_DIR": f"{w}/.jupyter",
                "JUPYTER_DATA_DIR": f"{w}/.jupyter", "JUPYTER_RUNTIME_DIR": f"{w}/.jupyter",
                "MPLCONFIGDIR": f"{w}/.mpl", "MPLBACKEND": "Agg", "PYTHONNOUSERSITE": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
                "MKL_NUM_THREADS": threads}

    def work_used(self) -> int:
        """Bytes in use on the work dir's file system (its tmpfs when capped)."""
        st = os.statvfs(self.work)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def remove(self) -> None:
        _unmount_work(self.path)
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass
class Limits:
    memory: int = 4 << 30
    nproc: int = 256
    fsize: int = 1 << 30
    tmp: int = 256 << 20  # /tmp + /var/tmp + /dev/shm together (one private tmpfs)
    work: int = 1 << 30   # the work dir (HOME): a tmpfs of this size, on the host (ms.attach reads it)


def _venv_root(python: str) -> Path:
    """The venv (dir with pyvenv.cfg) or install prefix a python executable belongs to."""
    bindir = Path(python).absolute().parent
    return bindir.parent if (bindir.parent / "pyvenv.cfg").exists() else bindir


def project_paths() -> list[Path]:
    """What the kernel must not see: the checkout root and the dirs of the packages that
    hold the answer key's generator and the training/serving code (found without importing
    them, whether installed editable or not)."""
    out: list[Path] = []
    for name in HIDDEN_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec else []:
            pkg = Path(loc).resolve()
            out.append(pkg)
            if (pkg.parent / "pyproject.toml").exists() and pkg.parent not in _SYSTEM_DIRS:
                out.append(pkg.parent)  # a checkout (editable install): hide all of it
    return out


def kernel_command(python: str, conn_file: Path, uid: int | None, limits: Limits, *,
                   hide: list[Path] = (), cgroup: Path | None = None) -> list[str]:
    """argv for the kernel; sandboxed when uid is given (`hide`: extra dirs to hide, e.g.
    the log's; the project's own paths are always hidden)."""
    kernel = [python, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", str(conn_file),
              "--HistoryManager.enabled=False", "--IPKernelApp.quiet=True"]
    if uid is None:
        return kernel
    rt = Path(conn_file).parent
    keep = [_venv_root(python), _venv_root(os.path.realpath(python)), rt,
            Path(sys.base_prefix)]
    script = setup_script(rt, limits, [*project_paths(), *map(Path, hide)], keep, cgroup)
    return ["setpriv", "--pdeathsig", "SIGKILL", "--",
            "unshare", "--mount", "--net", "--pid", "--fork", "--kill-child=SIGKILL",
            "--propagation", "private", "--",
            "sh", "-c", script, "scroll-kernel-setup",
            "prlimit", f"--data={limits.memory}", f"--nproc={limits.nproc}",
            f"--fsize={limits.fsize}", "--core=0", "--",
            "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all",
            "--pdeathsig", "SIGKILL", "--", *kernel]
