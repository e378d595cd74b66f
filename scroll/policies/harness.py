"""A kernel-free harness to run a policy on a task: `SimKernel` + `run_episode`.

    log, tasks = build_demo_log("demo.db")
    ep = run_episode(ReferencePolicy(), log, tasks[0].question)
    ep.answer, ep.exposure_tokens, ep.steps

`SimKernel` exec()s cells in one persistent namespace where `ms` is a thin adapter over
the EventLog (search / expand / recent / sessions / payload, the same objects) and
`final(answer)` prints the loop's final sentinel (scroll.prompts) and records the answer.
Only printed output comes back, capped like the real kernel's. It is NOT a sandbox: use
it for the reference policy in tests and CPU demos, never for model-written code. Its
`execute` returns the real kernel's ExecResult shape, so `scroll.agent.Agent(kernel=...)`
can drive it too. `run_episode` is a minimal stand-in for the agent loop with the same
message layout (system, `Task: ...`, then reply/exposure pairs).
"""
from __future__ import annotations

import contextlib
import io
import json
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from scroll.agent import split_final  # the loop's own parser

try:
    from scroll.prompts import FINAL_SENTINEL
except ImportError:  # pragma: no cover
    FINAL_SENTINEL = "\x1e[scroll-final]"


class MsAdapter:
    """`ms` over an EventLog, read-only (the same methods the kernel's `ms` has)."""

    def __init__(self, log):
        self._log = log

    def search(self, query, k=10, session=None, kind=None, role=None, since=None, until=None, seq_range=None):
        return self._log.search(query, k=k, session=session, kind=kind, role=role, since=since, until=until,
                                seq_range=seq_range)

    def expand(self, lo, hi=None):
        return self._log.expand(lo, hi)

    def recent(self, n=10, session=None):
        return self._log.recent(n, session=session)

    def sessions(self):
        return self._log.sessions()

    def payload(self, handle):
        return self._log.payloads.open_text(handle)

    def headlines(self):
        return []

    def __repr__(self):
        return "<ms (sim): search expand payload recent sessions headlines>"


@dataclass
class SimResult:
    stdout: str
    error: str | None = None
    timed_out: bool = False
    notice: str | None = None
    seqs: list[int] = field(default_factory=list)
    handle: str | None = None
    truncated: bool = False


class SimKernel:
    """Persistent exec() namespace with `ms` and `final` (see the module docstring)."""

    def __init__(self, log, session: str = "sim", *, max_output_chars: int = 20_000, record: bool = True,
                 fail_first: int = 0):
        self.log, self.session, self.max_output_chars, self.record = log, session, max_output_chars, record
        self.answer: str | None = None
        self.cells: list[str] = []
        self._fail_first = fail_first  # tests: make the first N cells' ms.search raise
        self.ns: dict[str, Any] = {"__name__": "__sim__"}
        self.ns["ms"] = _FlakyMs(MsAdapter(log), self) if fail_first else MsAdapter(log)
        self.ns["final"] = self._final

    def _final(self, answer):
        self.answer = str(answer)
        print(FINAL_SENTINEL + json.dumps(str(answer)), flush=True)

    def execute(self, code: str, timeout: float = 30) -> SimResult:
        self.cells.append(code)
        seqs = []
        if self.record:
            seqs.append(self.log.append(session=self.session, role="assistant", kind="code", text=code))
        buf = io.StringIO()
        error = None
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                exec(compile(code, f"<cell {len(self.cells)}>", "exec"), self.ns)
            except BaseException as e:  # noqa: BLE001 - report any failure, like a kernel
                tb = traceback.format_exception(type(e), e, e.__traceback__)
                error = "".join(tb[-3:]).strip()
        out = buf.getvalue()
        truncated = len(out) > self.max_output_chars
        if truncated:
            out = out[: self.max_output_chars] + f"\n[output cut at {self.max_output_chars} characters]\n"
        if self.record:
            seqs.append(self.log.append(session=self.session, role="kernel", kind="output", text=out,
                                        meta={"error": error, "truncated": truncated, "sandbox": "sim"}))
        return SimResult(stdout=out, error=error, seqs=seqs, truncated=truncated)

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


def run_episode(policy, log, question: str, *, kernel: SimKernel | None = None, max_steps: int = 8,
                system: str = "You write Python against `ms`; only printed output comes back.") -> Episode:
    """Drive `policy` on one question: the loop's message layout, exposures fed back."""
    from scroll.events import estimate_tokens
    from scroll.policies.reference import extract_code

    kernel = kernel or SimKernel(log, session=f"episode-{log.max_seq() + 1}")
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
        shown, answer = split_final(r.stdout)
        exposure = shown.rstrip("\n") if shown.strip() else "(the cell printed nothing)"
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
