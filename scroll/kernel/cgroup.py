"""Best-effort aggregate memory cap for all processes of one kernel (cgroup v2 or v1)."""
from __future__ import annotations

import time
from pathlib import Path


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
