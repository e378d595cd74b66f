"""The kernel's own uids: one per kernel, drawn from UID_BASE..UID_BASE+UID_SPAN (no passwd
entry needed), checked to be empty, killed whole on stop (scroll.kernel.sandbox has the
threat model these serve)."""
from __future__ import annotations

import os
import secrets
import signal
import time

from .errors import SandboxError

UID_BASE = 2_000_000_000
UID_SPAN = 1_000_000


def uid_pids(uid: int, zombies: bool = False) -> list[int]:
    """Live processes of `uid` (with `zombies`: also the dead but not yet reaped ones, which
    still count against RLIMIT_NPROC)."""
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
            if zombies or state not in (b"Z", b"X"):
                pids.append(int(d))
    return pids


def _uid_busy(uid: int) -> bool:
    return bool(uid_pids(uid, zombies=True))


def uid_tasks(uid: int) -> int:
    """Processes + threads of `uid`, zombies included: what RLIMIT_NPROC counts."""
    n = 0
    for pid in uid_pids(uid, zombies=True):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                n += max(1, int(f.read().rsplit(b")", 1)[1].split()[17]))
        except (OSError, IndexError, ValueError):
            pass
    return n


def uid_peak_vm(uid: int) -> int:
    """The largest peak virtual size (VmPeak, bytes) of `uid`'s processes: what RLIMIT_DATA bounds."""
    peak = 0
    for pid in uid_pids(uid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmPeak:"):
                        peak = max(peak, int(line.split()[1]) * 1024)
                        break
        except (OSError, ValueError, IndexError):
            continue
    return peak


def ns_init_pid(uid: int) -> int | None:
    """Host pid of the process of `uid` that is pid 1 of its own pid namespace (the kernel)."""
    for pid in uid_pids(uid):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("NSpid:"):
                        ids = line.split()[1:]
                        if len(ids) > 1 and ids[-1] == "1":
                            return pid
                        break
        except OSError:
            continue
    return None


def allocate_uid() -> int:
    for _ in range(50):
        uid = UID_BASE + secrets.randbelow(UID_SPAN)
        if not _uid_busy(uid):
            return uid
    raise SandboxError("could not find a free kernel uid")


def wait_uid_empty(uid: int, timeout: float = 2.0) -> bool:
    """Kill what is left of `uid` and wait until no process of it (zombies included) exists."""
    deadline = time.monotonic() + timeout
    while True:
        kill_uid(uid)
        if not _uid_busy(uid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


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
