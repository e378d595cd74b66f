"""What the MCP server does, without the MCP SDK: one session's view of a Scroll log.

    svc = McpService(McpConfig(db=Path("agent.db"), session="claude"))
    svc.log_events([{"role": "user", "text": "the deploy key is in vault"}])   # -> [seq]
    svc.ms("search", query="deploy key", k=5)                                  # ms.search
    svc.run_python("print(len(ms.search('deploy')))")                          # sandboxed kernel
    svc.close()

Everything crosses the one capability (scroll.capability.Capability), the same as the
loop's kernel: reads go through `Capability.handle` (scopes, budgets, paging and error
replies decided there), and `run_python` runs in the session's sandboxed Kernel with its
own Capability instance inside. What this module adds:

* **`log` writes one place only.** Events go to the server's own session with the
  `history` origin (so later searches find them); a row naming another session or another
  origin is refused, never rewritten. Rows are checked like imported ones
  (scroll.importers.check_event), and all of a call's rows are appended in one
  transaction or none.
* **`run_python` fails closed.** The kernel sandbox needs root; when it is unavailable the
  tool raises `RunPythonUnavailable` with the reason and the other tools keep working.
  There is no unsandboxed fallback on this surface. The kernel starts on the first cell
  and lives as long as the service (earlier cells of the session are replayed at start);
  cells run one at a time.
* **Headlines** are rebuilt from the session's logged leaf headlines of the `agent` origin
  (a client cannot forge one by logging kind="headline": its events are `history`).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..capability import Capability
from ..config import LoopConfig
from ..events import EventLog
from ..files import FileAttacher
from ..headlines import FileRef, HeadlineIndex
from ..importers import check_event
from ..kernel import Kernel, SandboxError
from ..kernel.sandbox import check_sandbox
from ..origin import Origin

MAX_LOG_EVENTS = 1000  # rows one `log` call may append
_ROW_KEYS = {"role", "text", "kind", "time", "meta"}


class McpError(ValueError):
    """A request the MCP surface refuses (the message is what the client sees)."""


class RunPythonUnavailable(McpError):
    """run_python cannot run here (no kernel sandbox); the other tools still work."""


@dataclass
class McpConfig:
    db: Path
    session: str = "mcp"                 # the server's own session: `log` and `run_python` write here
    sessions: list[str] | None = None    # sessions `ms` may read besides its own (None: the whole log)
    cell_timeout: float = 30.0           # run_python: the loop's kernel limits (LoopConfig defaults)
    memory_limit: str = "4G"
    max_output_chars: int = 4_000
    tier_cap: int = 10                   # headline index rebuild (LoopConfig.tier_cap)
    extra: dict[str, Any] = field(default_factory=dict)  # kernel keyword overrides (tests)

    def __post_init__(self) -> None:
        if not isinstance(self.session, str) or not self.session.strip():
            raise McpError("--session must be a non-empty name")
        if self.sessions is not None and not all(isinstance(s, str) and s for s in self.sessions):
            raise McpError("--sessions must be non-empty session names")
        if not self.cell_timeout > 0:
            raise McpError("cell timeout must be > 0")
        if self.max_output_chars < 200:
            raise McpError("max_output_chars must be >= 200")

    @classmethod
    def from_loop(cls, db: Path, session: str, *, loop_config: str | None = None, **overrides: Any) -> "McpConfig":
        """The run_python limits of the loop's kernel (loop.yaml, scroll.config), then `overrides`."""
        loop = LoopConfig.load(loop_config)
        base = {"cell_timeout": loop.cell_timeout, "memory_limit": loop.memory_limit,
                "max_output_chars": loop.max_output_chars, "tier_cap": loop.tier_cap}
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(db=db, session=session, **base)


def check_log_rows(rows: Any, session: str) -> list[dict]:
    """`log` rows -> rows for EventLog.append_many in `session`, origin history; a row that
    names another session or origin, or is malformed, is refused with its index."""
    if not isinstance(rows, list) or not rows:
        raise McpError("events must be a non-empty list of {role, text, kind?, time?, meta?}")
    if len(rows) > MAX_LOG_EVENTS:
        raise McpError(f"{len(rows)} events in one call; the limit is {MAX_LOG_EVENTS}")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise McpError(f"event {i}: expected an object, got {type(row).__name__}")
        row = {k: v for k, v in row.items() if v is not None}
        if "session" in row and row.pop("session") != session:
            raise McpError(f"event {i}: this server logs only to its own session {session!r}")
        if "origin" in row and row.pop("origin") != Origin.HISTORY.value:
            raise McpError(f"event {i}: events logged through MCP have the 'history' origin; "
                           "no other origin may be written")
        unknown = set(row) - _ROW_KEYS
        if unknown:
            raise McpError(f"event {i}: unknown field(s) {sorted(unknown)}; allowed: {sorted(_ROW_KEYS)}")
        try:
            out.append(check_event({**row, "session": session}))
        except ValueError as e:
            raise McpError(f"event {i}: {e}") from None
    return out


def sandbox_unavailable() -> str | None:
    """Why the kernel sandbox cannot run in this process (None: it can). Without the
    kernel's advice to pass sandbox='off': this surface has no unsandboxed mode."""
    import sys

    try:
        check_sandbox(sys.executable)
    except SandboxError as e:
        return str(e).split(". Pass sandbox=")[0]
    return None


class McpService:
    """One session's MCP surface over a Scroll log (thread-safe: the SDK calls tools from
    worker threads)."""

    def __init__(self, cfg: McpConfig, *, log: Any = None):
        self.cfg = cfg
        self._own_log = log is None
        self.log = EventLog(cfg.db) if log is None else log
        self.capability = self._capability()
        self._kernel = None
        self._kernel_lock = threading.Lock()
        self._closed = False

    # ---- the one capability ----------------------------------------------------------------
    def _capability(self) -> Capability:
        return Capability(self.log, sessions=self.cfg.sessions, own_session=self.cfg.session,
                          headlines=self.headline_entries, files=FileAttacher(self.log, self.cfg.session))

    def ms(self, method: str, **params: Any) -> Any:
        """An `ms` call through Capability.handle (the kernel's wire entry point): the
        result, or McpError with the capability's error reply."""
        reply = self.capability.handle({"id": 0, "method": method, "params": params})
        if not reply["ok"]:
            raise McpError(reply["error"])
        return reply["result"]

    def headline_entries(self) -> list[dict]:
        """The session's headline index, rebuilt from its logged (agent-origin) leaves."""
        index = HeadlineIndex(self.cfg.tier_cap)
        for ev in self.log.events(session=self.cfg.session, kind="headline"):
            m = ev.meta or {}
            if ev.origin is not Origin.AGENT or not {"lo", "hi", "task", "state", "next"} <= set(m):
                continue
            try:
                files = tuple(FileRef(int(f["seq"]), str(f["name"])) for f in m.get("files") or ())
                index.add(int(m["lo"]), int(m["hi"]), str(m["task"]), str(m["state"]), str(m["next"]), files)
            except (ValueError, TypeError, KeyError):
                continue  # a leaf out of order (another task's index): not this view's
        return [h.to_dict() for h in index.entries()]

    # ---- writing ---------------------------------------------------------------------------
    def log_events(self, rows: Any) -> list[int]:
        """Append rows to the own session with the history origin, all or none; their seqs."""
        return self.log.append_many(check_log_rows(rows, self.cfg.session))

    # ---- run_python ------------------------------------------------------------------------
    def run_python(self, code: str, timeout: float | None = None) -> dict:
        """A cell in the session's sandboxed kernel: {stdout, error, timed_out, notice, seqs,
        truncated, handle}. Print is the only exposure (bare expression values are dropped)."""
        if not isinstance(code, str):
            raise McpError("code must be a string")
        if timeout is not None and not 0 < timeout <= self.cfg.cell_timeout:
            raise McpError(f"timeout must be in (0, {self.cfg.cell_timeout}] seconds (the server's cell limit)")
        # wait for a running cell at most as long as it may take, plus its restart
        if not self._kernel_lock.acquire(timeout=self.cfg.cell_timeout + 30):
            raise McpError("the kernel is busy with another cell; try again")
        try:
            kernel = self._kernel_or_raise()
            r = kernel.execute(code, timeout=timeout)
        finally:
            self._kernel_lock.release()
        out = r.to_dict()
        out.pop("final", None)  # no final answer on this surface
        return out

    def _kernel_or_raise(self):
        if self._closed:
            raise McpError("the server is shutting down")
        if self._kernel is not None:
            return self._kernel
        why = sandbox_unavailable()
        if why is not None:
            raise RunPythonUnavailable(
                f"run_python is unavailable: {why}. This server runs no "
                "unsandboxed code: run `scroll mcp` as root (e.g. a root-owned service over streamable "
                "HTTP, see docs/mcp.md); log, search, expand and headlines keep working.")

        kw = {"memory_limit": self.cfg.memory_limit, "max_output_chars": self.cfg.max_output_chars,
              "timeout": self.cfg.cell_timeout, **self.cfg.extra}
        try:
            self._kernel = Kernel(self.log, self.cfg.session, capability=self._capability(), **kw)
        except (RuntimeError, OSError, ValueError) as e:
            raise McpError(f"the kernel did not start: {e}") from None
        return self._kernel

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._kernel_lock:
            if self._kernel is not None:
                self._kernel.close()
                self._kernel = None
        self.capability.close()
        if self._own_log:
            self.log.close()
