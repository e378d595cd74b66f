"""A kernel-free harness to run a policy on a task: `SimKernel` + `run_episode`.

    log, tasks = build_demo_log("demo.db")
    ep = run_episode(ReferencePolicy(), log, tasks[0].question)
    ep.answer, ep.exposure_tokens, ep.steps

`SimKernel` exec()s cells in one persistent namespace where `ms` is the kernel's own client
answered in-process by a `scroll.capability.Capability` (the same scopes and budgets as
the sandboxed kernel) and `final(answer)` is the loop's prelude (a call through `ms`).
Only printed output comes back, capped like the real kernel's. It is NOT a sandbox: use
it for the reference policy in tests and CPU demos, never for model-written code. Its
`execute` returns the real kernel's ExecResult shape, so `scroll.agent.Agent.open(kernel=...)`
can drive it too. `run_episode` is a minimal stand-in for the agent loop with the same
message layout (system, `Task: ...`, then reply/exposure pairs).
"""
from __future__ import annotations

import contextlib
import io
import json
import time
import traceback
from dataclasses import dataclass
from typing import Any

from scroll.capability import Capability
from scroll.executor import ExecResult
from scroll.files import FileAttacher
from scroll.kernel.ms_client import Ms, MsError
from scroll.origin import Origin
from scroll.packs import check_kernel_pack, get_pack
from scroll.prompts import kernel_prelude
from scroll.records import estimate_tokens
from scroll.reply import extract_code


class LocalMs(Ms):
    """The kernel's own `ms` client class, answered in-process by a Capability (no socket):
    the same methods, results and rules as in the sandboxed kernel."""

    def __init__(self, capability: Capability):
        super().__init__(path=None)
        self._cap = capability

    def _call(self, method, **params):
        rep = self._cap.handle({"id": 0, "method": method, "params": params})
        if not rep.get("ok"):
            raise MsError(rep.get("error"))
        return json.loads(json.dumps(rep["result"]))  # the same JSON round trip as the socket


class SimKernel:
    """Persistent exec() namespace with `ms` and `final` (see the module docstring)."""

    def __init__(self, log, session: str = "sim", *, max_output_chars: int = 20_000, record: bool = True,
                 fail_first: int = 0, sessions=None, capability: Capability | None = None, pack: str | None = None):
        self.log, self.session, self.max_output_chars, self.record = log, session, max_output_chars, record
        self.answer: str | None = None
        self.cells: list[str] = []
        self._fail_first = fail_first  # tests: make the first N cells' ms.search raise
        self.capability = capability or Capability(log, sessions=sessions, own_session=session,
                                                   files=FileAttacher(log, session))
        self.ns: dict[str, Any] = {"__name__": "__sim__"}
        ms = LocalMs(self.capability)
        self.ns["ms"] = _FlakyMs(ms, self) if fail_first else ms
        self.capability.begin_cell(None, replay=True)
        self.pack = pack  # a task pack's helpers after the core's (scroll.packs), as the real kernel's prelude
        exec(compile(kernel_prelude(get_pack(pack)), "<prelude>", "exec"), self.ns)
        self.capability.end_cell()

    def execute(self, code: str, timeout: float = 30) -> ExecResult:
        self.cells.append(code)
        seqs = []
        if self.record:
            seqs.append(self.log.append(session=self.session, role="assistant", kind="code", text=code,
                                        origin=Origin.AGENT))
        buf = io.StringIO()
        error = None
        self.capability.begin_cell(time.monotonic() + timeout)
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                exec(compile(code, f"<cell {len(self.cells)}>", "exec"), self.ns)
            except BaseException as e:  # noqa: BLE001 - report any failure, like a kernel
                tb = traceback.format_exception(type(e), e, e.__traceback__)
                error = "".join(tb[-3:]).strip()
        answer = self.capability.end_cell()
        if answer is not None:
            self.answer = answer
        out = buf.getvalue()
        truncated = len(out) > self.max_output_chars
        if truncated:
            out = out[: self.max_output_chars] + f"\n[output cut at {self.max_output_chars} characters]\n"
        if self.record:
            seqs.append(self.log.append(session=self.session, role="kernel", kind="output", text=out,
                                        meta={"error": error, "truncated": truncated, "sandbox": "sim",
                                              "final": answer}, origin=Origin.AGENT))
        return ExecResult(stdout=out, error=error, seqs=seqs, truncated=truncated, final=answer)

    def close(self) -> None:
        pass


class _FlakyMs:
    def __init__(self, ms, kernel):
        self._ms, self._k = ms, kernel

    def search(self, *a, **kw):
        if len(self._k.cells) <= self._k._fail_first:
            raise ConnectionError("ms service unavailable (simulated)")
        return self._ms.search(*a, **kw)

    def __getattr__(self, name):
        return getattr(self._ms, name)


@dataclass
class Episode:
    question: str
    answer: str | None
    steps: int
    replies: list[str]
    exposures: list[str]
    exposure_chars: int
    exposure_tokens: int            # approximate (characters / 4)
    seconds: float
    reason: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def run_episode(policy, log, question: str, *, kernel: SimKernel | None = None, max_steps: int = 8, sessions=None,
                system: str = "You write Python against `ms`; only printed output comes back.") -> Episode:
    """Drive `policy` on one question: the loop's message layout, exposures fed back."""
    pack = getattr(policy, "pack", None)
    kernel = kernel or SimKernel(log, session=f"episode-{log.max_seq() + 1}", sessions=sessions, pack=pack)
    check_kernel_pack(kernel, pack)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"Task: {question}"}]
    replies, exposures = [], []
    t0 = time.perf_counter()
    reason, answer = "max_steps", None
    for _ in range(max_steps):
        reply = policy.complete(messages).text
        replies.append(reply)
        messages.append({"role": "assistant", "content": reply})
        code = extract_code(reply)
        if code is None:
            exposure = "Your reply had no ```python code block, so nothing ran."
            reason = "no_code"
            exposures.append(exposure)
            break
        r = kernel.execute(code)
        answer = r.final
        exposure = r.stdout.rstrip("\n") if r.stdout.strip() else "(the cell printed nothing)"
        if r.error:
            exposure += f"\nError: {r.error}"
        exposures.append(exposure)
        messages.append({"role": "user", "content": exposure})
        if answer is not None:
            reason = "final"
            break
    text = "".join(exposures)
    return Episode(question=question, answer=answer, steps=len(replies), replies=replies, exposures=exposures,
                   exposure_chars=len(text), exposure_tokens=sum(estimate_tokens(e) for e in exposures),
                   seconds=time.perf_counter() - t0, reason=reason)
