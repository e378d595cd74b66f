"""`Kernel`: one persistent, sandboxed Python kernel per session, with `ms` inside.

    k = Kernel(log, session="s1")          # also a context manager; k.close()
    r = k.execute(code, timeout=30)        # ExecResult(stdout, error, timed_out, notice, seqs)

Covered here: every cell is logged (kind="code", role="assistant") before it runs and its
result (kind="output", role="kernel", meta: code_seq, error, timed_out, truncated, handle,
chars, sandbox) before `execute` returns; print is the only exposure (stream output, plus
the error in `r.error`; bare-expression values are ignored); the exposure is capped with
the full output kept in the payload store; wall-time limit = SIGINT, then restart when
ignored; kernel death and resume rebuild resident state by replaying logged successful
cells (scroll.kernel.replay), reported in `r.notice`. Sandbox recipe and threat model:
scroll.kernel.sandbox. Fail closed: without a working sandbox, Kernel() raises
SandboxError unless sandbox="off" is passed explicitly (loud warning, recorded in meta).

`prelude` (optional): host code run silently and unlogged after every (re)start, before
replay (e.g. the agent loop's `final()` helper).

`capability` (scroll.capability.Capability) is the host side of `ms`; by default a bare
kernel sees only its own session. Around every user cell the kernel calls
`capability.begin_cell(deadline)` / `end_cell()`, whose answer (`ms.final(...)`) comes back
as `ExecResult.final`; boot, prelude and replay runs use `begin_cell(..., replay=True)`.

Restarts (C loop, death, output limit, process cap held by leftovers) replay at most
`max_replay_cells` of the most recent successful cells and stop after
`max_replay_seconds`; the notice says what was and was not replayed.

`ms` calls are answered while a cell runs (the service is pumped by execute's wait loop,
on the caller's thread). A background thread ends with the cell that started it, as far as
the host can tell (scroll_ms.fence_threads): once a later cell runs, its prints reach no
exposure and its `ms` calls are refused. One caller at a time: Kernel is not thread-safe.

The work dir (the kernel's HOME) is a tmpfs of `work_size` bytes mounted on the host
(ms.attach reads it there); a cell that fills it, the memory cap or the process cap is
logged with meta `limit` and never replayed.
"""
from __future__ import annotations

import secrets
import sys
import time
import weakref
from pathlib import Path
from typing import Any, Callable

from ..capability import Capability
from ..executor import ExecResult
from ..files import FileAttacher
from ..origin import Origin
from .output import OutputCollector, format_error
from .process import KernelDied, KernelProcess
from .replay import Cell, replayable_cells
from .sandbox import Limits, RuntimeDir, check_sandbox, parse_size
from .service import MsSocketServer
from .uids import allocate_uid, uid_peak_vm, uid_tasks, wait_uid_empty

MS_CLIENT_SOURCE = (Path(__file__).parent / "ms_client.py").read_text()

# Kernel start (and iopub re-open) timeout, from measurement (2-core machine, load average
# ~22 with other test runs): one kernel through `sum(range(10**13))` (timeout 1 s), a 6 GiB
# bytearray and a fork bomb, then 10 restarts (os._exit -> detect, stop, wait for an empty
# uid, start, boot, replay): p50 0.47 s, p95 0.60 s, max 0.77 s. Before the pid namespace the
# fork bomb's ~245 processes stayed alive under the kernel's uid (interrupts reach only the
# kernel process) and held RLIMIT_NPROC (256) with the kernel's own threads, so the next
# cell hung and the iopub re-open / restart never became ready ("did not start within
# 10.0s"); killed, they lingered as zombies under the same uid. 15 s is ~25x the p95.
START_TIMEOUT = 15.0
# a cell that leaves the kernel uid at this share of its process cap (it gets a restart), or takes a process's
# peak virtual size or the work dir's use this close to their caps, ran into that limit
LIMIT_SHARE = 0.9

# Runs in the kernel at every start (before `ms` exists): ipykernel packs messages with
# json + utf-8, which raises on a lone surrogate ('\ud800') in printed text and drops the
# stream; pack a copy with such code points replaced by U+FFFD instead.
SAFE_PACK_SOURCE = """
def _scroll_safe_pack():
    import re
    sess = get_ipython().kernel.session
    bad = re.compile('[\\ud800-\\udfff]')
    orig = sess.pack

    def clean(o):
        if isinstance(o, str):
            return bad.sub('\\ufffd', o)
        if isinstance(o, dict):
            return {clean(k): clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        return o

    def pack(obj):
        try:
            return orig(obj)
        except UnicodeEncodeError:
            return orig(clean(obj))

    sess.pack = pack
_scroll_safe_pack()
del _scroll_safe_pack
"""


def _warn_unsandboxed() -> None:
    msg = ("WARNING: scroll kernel running WITHOUT SANDBOX (sandbox='off'): model code runs "
           "with your uid, your files and the network.")
    try:
        from rich.console import Console

        Console(stderr=True).print(f"[bold red]{msg}[/]")
    except Exception:  # noqa: BLE001
        print(msg, file=sys.stderr)


class Kernel:
    def __init__(self, log: Any, session: str, *, memory_limit: str | int = "4G",
                 max_output_chars: int = 20_000, max_output_bytes: int = 64 << 20,
                 timeout: float = 30, sandbox: bool | str = True, python: str | None = None,
                 nproc: int = 256, headlines: Callable[[], list] | None = None,
                 interrupt_grace: float = 1.0, runtime_base: str | None = None,
                 replay_on_open: bool = True, prelude: str | None = None,
                 capability: Capability | None = None, tmp_size: str | int = "256M", work_size: str | int = "1G",
                 max_replay_cells: int = 200, max_replay_seconds: float = 60.0,
                 start_timeout: float = START_TIMEOUT, stateless: bool = False):
        if not isinstance(session, str) or not session:
            raise ValueError("session must be a non-empty string")
        self.log, self.session = log, session
        self.run_id = secrets.token_hex(8)  # in the meta of each cell and output it logs: replay's proof
        self.max_output_chars, self.max_output_bytes = max_output_chars, max_output_bytes
        self.timeout, self.interrupt_grace = timeout, interrupt_grace
        self.max_replay_cells, self.max_replay_seconds = max_replay_cells, max_replay_seconds
        self.start_timeout = start_timeout
        self.python = python or sys.executable
        self.prelude = prelude  # host-provided code run (silently, unlogged) at every start
        self.sandboxed = sandbox not in ("off", False, None)
        if sandbox not in (True, "on", "off", False, None):
            raise ValueError("sandbox must be True or 'off'")
        if self.sandboxed:
            check_sandbox(self.python)
        else:
            _warn_unsandboxed()
        self.limits = Limits(memory=parse_size(memory_limit), nproc=nproc, tmp=parse_size(tmp_size),
                             work=parse_size(work_size))
        self._closed = False
        self._broken: str | None = None  # why the last restart failed; retried on next execute
        self._notice: str | None = None
        # stateless (the no_kernel ablation): every cell starts from the namespace boot and
        # prelude left (ms, final, the helpers); nothing to replay after a restart
        self.stateless = stateless
        self._cells = replayable_cells(log, session) if replay_on_open and not stateless else []
        uid = allocate_uid() if self.sandboxed else None
        kw = {"base": Path(runtime_base)} if runtime_base else {}
        self.rt = RuntimeDir.create(uid, work_size=self.limits.work, **kw)
        if capability is None:  # a bare kernel sees only its own session
            capability = Capability(log, sessions=[session], own_session=session, headlines=headlines,
                                    files=FileAttacher(log, session))
        self.capability = capability
        self.server = MsSocketServer(self.rt.ms_socket, capability, owner_uid=uid)
        self.proc = KernelProcess(self.rt, self.python, self.limits, max_msg_bytes=16 << 20,
                                  hide=_log_dirs(log))
        self._finalizer = weakref.finalize(self, _cleanup, self.proc, self.server, self.rt)
        try:
            t0 = time.monotonic()
            self._start()
            self.start_seconds = time.monotonic() - t0
            if self._cells:
                self._notice = "resumed session: " + self._replay()
        except BaseException:
            self.close()
            raise

    # ---- lifecycle -----------------------------------------------------------------
    def _start(self) -> None:
        self.proc.start(self.start_timeout)
        boot = (f"{SAFE_PACK_SOURCE}\n"
                f"def _scroll_boot():\n"
                f"    import sys, types\n"
                f"    m = types.ModuleType('scroll_ms')\n"
                f"    exec(compile({MS_CLIENT_SOURCE!r}, 'scroll_ms', 'exec'), m.__dict__)\n"
                f"    sys.modules['scroll_ms'] = m\n"
                f"    m.chunk_streams()\n"
                f"    m.fence_threads()\n"
                f"    return m.Ms({str(self.rt.ms_socket)!r})\n"
                f"ms = _scroll_boot()\n"
                f"del _scroll_boot\n")
        run = self._run_silent(boot, time.monotonic() + 30)
        if run.status != "ok":
            raise RuntimeError(f"kernel bootstrap failed: {run.ename}: {run.evalue}")
        if self.prelude:
            run = self._run_silent(self.prelude, time.monotonic() + 30)
            if run.status != "ok":
                raise RuntimeError(f"kernel prelude failed: {run.ename}: {run.evalue}")
        if self.stateless:  # the names every cell starts from (see _FORGET)
            self._run_silent("_scroll_keep = frozenset(globals())", time.monotonic() + 30)

    def _run_silent(self, code: str, deadline: float, on_deadline=None):
        """Boot, prelude and replay runs: unlogged, output dropped, finals ignored."""
        self.capability.begin_cell(deadline, replay=True)
        try:
            return self.proc.run(code, deadline, lambda n, t: None, service=self.server,
                                 on_deadline=on_deadline, silent=True)
        finally:
            self.capability.end_cell()

    def _stop_clean(self) -> None:
        """Stop the kernel; if its uid still holds processes (zombies included), which would
        count against the restarted kernel's RLIMIT_NPROC, move to a fresh uid."""
        self.proc.stop()
        if self.rt.uid is not None and not wait_uid_empty(self.rt.uid):
            self.rt.change_uid(allocate_uid())

    def _restart(self, reason: str) -> str:
        """Restart + replay; never raises (a failure is reported and retried next cell)."""
        try:
            msg = self._restart_inner(reason)
            self._broken = None
            return msg
        except Exception as e:  # noqa: BLE001
            self._broken = f"{type(e).__name__}: {e}"
            return f"kernel restart FAILED ({reason}): {self._broken}; will retry on the next cell"

    def _restart_inner(self, reason: str) -> str:
        t0 = time.monotonic()
        self._stop_clean()
        self._start()
        msg = f"kernel restarted ({reason})"
        if self._cells:
            msg += "; " + self._replay()
        return msg + f" [{time.monotonic() - t0:.2f}s]"

    def _replay(self) -> str:
        """Run the most recent successful cells again, silently (at most max_replay_cells,
        for at most max_replay_seconds). Cells that fail or hang are skipped."""
        t0 = time.monotonic()
        older = max(0, len(self._cells) - self.max_replay_cells)
        todo = self._cells[older:]
        dropped: list[int] = []  # hung or killed the kernel: removed from the replay list
        failed: set[int] = set()  # raised on replay: kept (may work next time)
        stopped_at: int | None = None  # index in todo where the time budget ran out
        i = 0
        while i < len(todo):
            if time.monotonic() - t0 > self.max_replay_seconds:
                stopped_at = i
                break
            cell = todo[i]
            state = {"interrupted": False}

            def on_deadline() -> bool:
                if state["interrupted"]:
                    return False
                state["interrupted"] = True
                self.proc.interrupt()
                self.proc.deadline = time.monotonic() + self.interrupt_grace
                return True

            try:
                run = self._run_silent(cell.code, time.monotonic() + self.timeout, on_deadline)
            except KernelDied:
                run = None
            if run is None or run.status == "timeout":
                dropped.append(cell.seq)
                self._stop_clean()
                self._start()
                # state from cells before i is gone: replay them again, without the bad one
                self._cells = [c for c in self._cells if c.seq != cell.seq]
                todo = [c for c in todo if c.seq != cell.seq]
                failed.clear()
                i = 0
                continue
            if run.status != "ok":
                failed.add(cell.seq)
            i += 1
        done = todo if stopped_at is None else todo[:stopped_at]
        n = len(done) - len(failed)
        msg = f"replayed {n} logged cell(s) in {time.monotonic() - t0:.2f}s"
        if older:
            msg += (f"; NOT replayed: {older} older cell(s) (seq {self._cells[0].seq}.."
                    f"{self._cells[older - 1].seq}; replay keeps the {self.max_replay_cells} most "
                    "recent), state they built is gone")
        if stopped_at is not None:
            rest = todo[stopped_at:]
            msg += (f"; NOT replayed: {len(rest)} cell(s) (seq {rest[0].seq}..{rest[-1].seq}): "
                    f"the replay time limit of {self.max_replay_seconds}s was reached")
        if failed:
            msg += f"; cell(s) that raised on replay: seq {sorted(failed)}"
        if dropped:
            msg += f"; dropped cell(s) that hung or killed the kernel on replay: seq {dropped}"
        return msg

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._finalizer()

    def __enter__(self) -> "Kernel":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- execution -----------------------------------------------------------------
    def execute(self, code: str, timeout: float | None = None) -> ExecResult:
        if self._closed:
            raise RuntimeError("kernel is closed")
        if not isinstance(code, str):
            raise TypeError("code must be a string")
        timeout = self.timeout if timeout is None else timeout
        sandbox_meta = "on" if self.sandboxed else "off"
        # no fsync for the cell: its output event follows at once with a full, synced commit
        scope = self.capability.sessions_scope  # what `ms` may read: a notebook export replays with it
        code_seq = self.log.append(session=self.session, role="assistant", text=code, kind="code",
                                   meta={"sandbox": sandbox_meta, "kernel": self.run_id,
                                         "sessions": None if scope is None else sorted(scope)},
                                   sync=False, origin=Origin.AGENT)
        notices = [self._notice] if self._notice else []
        self._notice = None
        if self._broken:
            notices.append(self._restart(f"previous restart failed: {self._broken}"))
        elif self.stateless:
            self._run_silent(_FORGET, time.monotonic() + 10)
        # SIGINT up to 3 times, interrupt_grace/3 apart (one can land where it is swallowed,
        # e.g. inside ipykernel's stream code); then give up and restart the kernel. A cell that
        # takes the interrupt stops within milliseconds; the grace (1 s) plus a restart (0.65 s on
        # a 2-core AMD EPYC VM) keep a cell that ignores SIGINT within its timeout + 2 s.
        state = {"interrupts": 0, "timed_out": False, "overflow": False}
        step = self.interrupt_grace / 3

        def interrupt_now() -> None:
            state["interrupts"] += 1
            self.proc.interrupt()
            self.proc.deadline = time.monotonic() + step

        def on_overflow() -> None:
            if not state["overflow"]:
                state["overflow"] = True
                interrupt_now()

        def on_deadline() -> bool:
            if state["interrupts"] >= 3:
                return False  # every interrupt was ignored
            if not state["overflow"]:
                state["timed_out"] = True
            interrupt_now()
            return True

        out = OutputCollector(self.max_output_chars, self.max_output_bytes, on_overflow)
        peak_before = uid_peak_vm(self.rt.uid) if self.rt.uid is not None else 0
        work_before = self.rt.work_used() if self.rt.uid is not None else 0
        error: str | None = None
        success = False
        run = None
        failure: Exception | None = None
        deadline = time.monotonic() + timeout
        self.capability.begin_cell(deadline)
        try:
            run = self.proc.run(code, deadline, out.write, service=self.server,
                                on_deadline=on_deadline)
        except Exception as e:  # noqa: BLE001 - KernelDied, or the kernel is down
            failure = e
        finally:
            final = self.capability.end_cell()  # before any restart: replays reset the cell
        timed_out = state["timed_out"]
        try:
            if failure is None and run.iopub_lost:
                notices.append("the output channel was reset (a message above the size cap was "
                               "refused); output of this cell may be incomplete")
                self.proc.reconnect_iopub(self.start_timeout)
        except Exception as e:  # noqa: BLE001
            failure = e
        if isinstance(failure, KernelDied):
            error = f"KernelDied: {failure}"
            notices.append(self._restart("the kernel process died"))
        elif failure is not None:
            error = f"KernelError: {type(failure).__name__}: {failure}"
            notices.append(self._restart("kernel unusable"))
        elif run.status == "timeout" and not timed_out:
            notices.append(self._restart("the cell ignored the interrupt after the output limit"))
            error = "kernel restarted"
        elif run.status == "timeout":
            notices.append(self._restart(f"cell exceeded {timeout}s and ignored the interrupt"))
            error = f"TimeoutError: cell exceeded the {timeout}s wall-time limit; kernel restarted"
        elif timed_out:
            error = f"TimeoutError: cell exceeded the {timeout}s wall-time limit; interrupted"
        elif run.status == "ok":
            success = not state["overflow"]
        else:
            error = format_error(run.ename, run.evalue, run.traceback)
        limit = None  # a resource limit the cell ran into, caught or not: such a cell is never replayed
        if failure is None and run.status != "timeout" and self.rt.uid is not None:
            used = uid_tasks(self.rt.uid)
            if used >= LIMIT_SHARE * self.limits.nproc:
                limit = "processes"
                notices.append(self._restart(
                    f"processes left running hold {used} of the kernel's {self.limits.nproc} "
                    "processes+threads"))
            elif peak_before < uid_peak_vm(self.rt.uid) >= LIMIT_SHARE * self.limits.memory:
                limit = "memory"  # a MemoryError the cell caught still means it ran into the cap
            elif work_before < self.rt.work_used() >= LIMIT_SHARE * self.limits.work:
                limit = "workdir"  # it filled the work dir (ENOSPC caught or not): never written again by replay
        exp = out.finish(self.log.payloads.put)
        if exp.overflow:
            note = f"OutputLimit: output exceeded {self.max_output_bytes} bytes; collection stopped"
            error = note + ("; cell interrupted" if not error else f"\n{error}")
            limit = limit or "output"
        if limit:
            success = False
        meta = {"code_seq": code_seq, "error": error, "timed_out": timed_out,
                "truncated": exp.truncated, "handle": exp.handle, "chars": exp.full_chars,
                "sandbox": sandbox_meta, "kernel": self.run_id}
        if limit:
            meta["limit"] = limit  # replay skips it (scroll.kernel.replay)
        if notices:
            meta["notice"] = "; ".join(notices)
        if final is not None:
            meta["final"] = final  # the answer submitted through ms.final(): in the record, not the text
        out_seq = self.log.append(session=self.session, role="kernel", text=exp.text,
                                  kind="output", meta=meta, origin=Origin.AGENT)
        if success and not self.stateless:
            self._cells.append(Cell(code_seq, code))
        return ExecResult(stdout=exp.text, error=error, timed_out=timed_out,
                          notice="; ".join(notices) or None, seqs=[code_seq, out_seq],
                          handle=exp.handle, truncated=exp.truncated, final=final)


# the no_kernel ablation's reset: drop every name a cell defined (boot + prelude names stay)
_FORGET = ("for _scroll_k in [k for k in globals() if k not in _scroll_keep and k != '_scroll_keep']:\n"
           "    del globals()[_scroll_k]\n")


def _log_dirs(log: Any) -> list[Path]:
    """The log's dir and its payload store's: hidden from the kernel (it asks `ms`)."""
    out = []
    path = getattr(log, "path", None)
    if path is not None:
        out.append(Path(path).absolute().parent)
    root = getattr(getattr(log, "payloads", None), "root", None)
    if root is not None:
        out.append(Path(root).absolute())
    return out


def _cleanup(proc: KernelProcess, server: MsSocketServer, rt: RuntimeDir) -> None:
    for fn in (server.close, proc.close, rt.remove):
        try:
            fn()
        except Exception:  # noqa: BLE001 - best effort at close/exit
            pass
