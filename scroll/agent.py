"""The Scroll agent loop: view -> model -> code cell -> kernel -> exposure -> log.

Every step is in the log before the next one starts: the model's reply (kind="message",
role="assistant", with the view it saw in `meta`), the cell and its output (logged by the
kernel: kind="code" / "output"), notes (kind="note": no code, backend errors, stop
reason), headlines of evicted steps (kind="headline") and the answer (kind="final"), all
with origin `agent` (the task too, unless the caller says it is history, as `scroll chat`
does for the lines a user types). The loop ends on `final(answer)` (a call through the
`ms` capability, never printed text), the step limit, the token limit, repeated replies
without code, or a backend that keeps failing, and always says which (`reason`).

Scope: the kernel's `ms` sees the sessions the run grants (`sessions=`: by default every
session that holds history events; `ALL_SESSIONS` for the whole log) plus the agent's
own session.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from .capability import ALL_SESSIONS
from .config import LoopConfig
from .controls import show_controls
from .executor import Executor
from .files.attach import file_refs
from .headlines import render_files
from .llm.base import LLMError
from .llm.constraints import REPLY_PATTERN, Regex, Support, probe
from .origin import Origin
from .prompts import SYSTEM_PROMPT, system_prompt as pack_system_prompt
from .records import estimate_tokens
from .reply import NO_CODE, extract_code, extract_headline
from .session import Session, history_sessions, open_session
from .view import Step, View, chatml, history_preamble, prefix_reuse


@dataclass
class StepRecord:
    step: int
    reply_seq: int
    last_seq: int
    view_tokens: int
    prompt_tokens: int | None
    completion_tokens: int | None
    model_latency_s: float
    overhead_s: float          # view build + kernel + log, the model excluded
    exposure_chars: int
    exposure_tokens: int
    prefix_reuse: float | None
    evicted: int
    had_code: bool
    error: str | None = None


@dataclass
class RunResult:
    session: str
    task: str
    answer: str | None
    reason: str
    steps: list[StepRecord] = field(default_factory=list)
    backend: dict = field(default_factory=dict)
    evictions: int = 0
    headlines: int = 0
    error: str | None = None  # the backend's last error when reason == "backend_error"
    sessions: list[str] | None = None  # the history sessions in scope (None: the whole log)
    pack: str | None = None  # the task pack the run had (scroll.packs), None: the core only

    def to_dict(self) -> dict:
        return asdict(self)


class Agent:
    def __init__(self, session: Session, *, on_step: Callable[[StepRecord, str, str], None] | None = None,
                 system_prompt: str | None = None):
        """One agent loop over a composed session (scroll.session.open_session; `Agent.open` composes
        and constructs in one call). `system_prompt`: the rules the model gets (default: scroll.prompts'
        core prompt in the config's `prompt` style; another executor needs its own, e.g. the LCM
        baseline's tool cells). A custom prompt is logged with the task."""
        self.sess = session
        self.log, self.llm, self.cfg, self.session = session.log, session.llm, session.config, session.name
        self._reply_constraint: Regex | None = None  # LoopConfig.constrain_replies, once the backend is probed
        self.pack, self.pack_name = session.pack, session.pack_name
        self.system_prompt = system_prompt or pack_system_prompt(self.pack, self.cfg.prompt)
        self.on_step = on_step
        count = getattr(self.llm, "count_tokens", None)
        self.count = count if callable(count) else estimate_tokens
        self.exact = bool(getattr(self.llm, "token_counter_exact", False))
        self.view: View | None = None
        self.capability = session.capability  # the one `ms` of this session; each run sets its scope

    @classmethod
    def open(cls, log, llm, config: LoopConfig | None = None, *, session: str, kernel: Executor | None = None,
             on_step: Callable[[StepRecord, str, str], None] | None = None, system_prompt: str | None = None,
             map_llm=None, delegation=None) -> "Agent":
        """Compose the session and the agent: `kernel` is any Executor (default: the sandboxed Kernel
        with `ms` and the toolkit, started on first use); `map_llm`, `delegation`: ms.llm_map's
        backend and the agent_map task tree (scroll.operators). Sub-sessions open the same way."""
        sess = open_session(log, llm, config, name=session, executor=kernel, sub_agent=cls.open,
                            map_llm=map_llm, delegation=delegation)
        return cls(sess, on_step=on_step, system_prompt=system_prompt)

    def close(self) -> None:
        self.sess.close()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ helpers
    def _derive_headline(self, task: str) -> Callable[[Step], tuple[str, str, str]]:
        def derive(s: Step) -> tuple[str, str, str]:
            code = extract_code(s.reply) or ""
            first_code = next((ln.strip() for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("#")), "(no code)")
            first_out = next((ln.strip() for ln in s.exposure.splitlines() if ln.strip()), "(nothing printed)")
            return task, f"ran `{first_code[:80]}` -> {first_out[:100]}", "continue from the latest step"
        return derive

    def _append(self, role: str, kind: str, text: str, meta: dict | None = None, origin: Origin = Origin.AGENT) -> int:
        return self.log.append(session=self.session, role=role, kind=kind, text=text, meta=meta, origin=origin)

    def _files(self, lo: int, hi: int) -> tuple:
        """Files attached between seq lo and hi (ms.attach): the step's headline keeps them."""
        return file_refs(e for e in self.log.events(session=self.session, after=lo, kind="file") if e.seq <= hi)

    def _note(self, text: str, **meta: Any) -> int:
        return self._append("scroll", "note", text, meta)

    def _call_model(self, messages):
        last: Exception | None = None
        kw = {} if self._reply_constraint is None else {"constraint": self._reply_constraint}
        for attempt in range(self.cfg.backend_retries + 1):
            try:
                return self.llm.complete(messages, max_tokens=self.cfg.max_new_tokens, temperature=self.cfg.temperature,
                                         **kw), None
            except LLMError as e:
                last = e
                self._note(f"model call failed (attempt {attempt + 1}): {e}", error=str(e), attempt=attempt + 1)
        return None, last

    def _reply_format(self) -> Support | None:
        """LoopConfig.constrain_replies: whether this backend enforces the reply pattern (probed once per
        backend); the run goes on unconstrained, with a note, where it does not. None when not asked for."""
        self._reply_constraint = None
        if not self.cfg.constrain_replies:
            return None
        support = probe(self.llm)
        if support.enforced:
            self._reply_constraint = Regex(REPLY_PATTERN)
        return support

    # ------------------------------------------------------------------ resume
    def _open_task(self) -> tuple[Any, list] | None:
        """The session's last task event and the events after it, if it has no final yet."""
        events = list(self.log.events(session=self.session))
        last_task = max((i for i, e in enumerate(events) if e.kind == "task"), default=None)
        if last_task is None or any(e.kind == "final" for e in events[last_task + 1:]):
            return None
        return events[last_task], events[last_task + 1:]

    def _rebuild_view(self, after: list) -> int:
        """Rebuild the view from logged events exactly as the loop built it; returns steps done."""
        return replay_view(self.view, after)

    def _safe_count(self, x) -> int:
        """The backend's counter; if it fails mid-session, the approximate one (noted once)."""
        try:
            return self.count(x)
        except LLMError as e:
            if self.count is not estimate_tokens:
                self._note(f"token counter failed ({e}); counting approximately from here on", error=str(e))
                self.count, self.exact = estimate_tokens, False
            return estimate_tokens(x)

    def _preamble(self, granted: list[str] | None) -> str:
        """no_log: the newest granted history that fits half the soft budget (the rest is gone)."""
        hist = frozenset({Origin.HISTORY.value})
        events = self.log.recent(5000, sessions=granted, origins=hist) if granted is None or granted else []
        # what the view has left beside the system prompt and a margin for the task and one step
        room = self.cfg.hard_budget - self._safe_count(self.system_prompt) - 512
        return history_preamble(reversed(events), max(0, min(self.cfg.soft_budget // 2, room)), self._safe_count)

    # --------------------------------------------------------------------- loop
    def _scope(self, sessions: Iterable[str] | str | None) -> list[str] | None:
        if sessions == ALL_SESSIONS:
            return None
        if sessions is None:
            return history_sessions(self.log)
        if isinstance(sessions, str):
            raise TypeError("sessions must be a list of session names, None or ALL_SESSIONS")
        return list(sessions)

    def run(self, task: str | None = None, meta: dict | None = None, *,
            sessions: Iterable[str] | str | None = None, task_origin: Origin | str = Origin.AGENT,
            resume: bool = False) -> RunResult:
        """Run one task to its end.

        `sessions`: the history the kernel's `ms` may read (default: every session holding
        history events; `ALL_SESSIONS`: the whole log); the agent's own session is always in
        scope. `task_origin`: AGENT for a question put to the agent (a benchmark's), HISTORY
        for a line a user types (it is part of the conversation). `meta` is logged with the
        task and readable by the agent: never put labels in it. `resume=True` continues the
        session's unfinished task from the log (after a crash): the view is rebuilt and the
        kernel replays its cells."""
        cfg = self.cfg
        backend = self.llm.describe() if hasattr(self.llm, "describe") else {"backend": type(self.llm).__name__}
        replies = self._reply_format()
        opened = self._open_task() if resume else None
        if resume and opened is None and task is None:
            raise ValueError(f"session {self.session!r} has no unfinished task to resume")
        if opened is not None:
            task = opened[0].text
            granted = opened[0].meta.get("sessions")
            self.system_prompt = opened[0].meta.get("system_prompt") or self.system_prompt
            preamble = opened[0].meta.get("preamble", "")
        elif task is None:
            raise ValueError("run() needs a task")
        else:
            granted = self._scope(sessions)
            preamble = "" if cfg.history_access else self._preamble(granted)
            self._append("user", "task", task,
                         {**(meta or {}), "backend": backend, "config": cfg.to_dict(), "sessions": granted,
                          "pack": self.pack_name,
                          "token_counter": "exact" if self.exact else "approximate",
                          **({"constrained_replies": replies.to_dict()} if replies is not None else {}),
                          **({"system_prompt": self.system_prompt} if self.system_prompt != SYSTEM_PROMPT else {}),
                          **({"preamble": preamble} if preamble else {})},
                         origin=Origin.parse(task_origin))
        if replies is not None and not replies.enforced:
            self._note(f"constrain_replies: {replies.reason}; the replies are not constrained", reason="unconstrained")
        # no_log ablation: `ms` reads only the agent's own session; the history is the preamble
        self.capability.set_scope(granted if cfg.history_access else [])
        self.view = View(system=self.system_prompt, task=task, count=self._safe_count, exact=self.exact,
                         soft_budget=cfg.soft_budget, hard_budget=cfg.hard_budget,
                         use_index=cfg.headline_index, preamble=preamble)
        self.view.index.tier_cap = cfg.tier_cap
        self.sess.headlines.index = self.view.index
        done = self._rebuild_view(opened[1]) if opened is not None else 0
        kernel = self.sess.executor()
        derive = self._derive_headline(task)
        result = RunResult(self.session, task, None, "max_steps", backend=backend, sessions=granted,
                           pack=self.pack_name)
        used_tokens, strikes, prev_prompt = 0, 0, ""
        for step_no in range(done + 1, cfg.max_steps + 1):
            t0 = time.perf_counter()
            messages = self.view.messages()
            prompt_text = chatml(messages)
            reuse = prefix_reuse(prev_prompt, prompt_text) if prev_prompt else None
            prev_prompt = prompt_text
            view_tokens = self.view.tokens()
            t_view = time.perf_counter() - t0
            completion, err = self._call_model(messages)
            if completion is None:
                result.reason, result.error = "backend_error", str(err)
                self._note(f"stopping: the model backend kept failing: {err}", reason="backend_error")
                break
            t1 = time.perf_counter()
            reply = completion.text or ""
            used_tokens += (completion.prompt_tokens or view_tokens) + (completion.completion_tokens or self._safe_count(reply))
            reply_seq = self._append(
                "assistant", "message", reply,
                {"step": step_no, "backend": completion.backend, "model": completion.model,
                      "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
                      "latency_s": round(completion.latency_s, 4), "finish_reason": completion.finish_reason,
                      "prompt_sha256": hashlib.sha256(prompt_text.encode("utf-8")).hexdigest(),
                      "view": {"tokens": view_tokens, "steps": [[s.lo, s.hi] for s in self.view.steps],
                               "headlines": len(self.view.index), "prefix_reuse": reuse}},
            )
            code = extract_code(reply)
            answer = error = output_seq = None
            if code is None:
                strikes += 1
                exposure = NO_CODE
                last_seq = self._note(NO_CODE, step=step_no, reason="no_code")
            else:
                strikes = 0
                r = kernel.execute(code, timeout=cfg.cell_timeout)
                answer, error = r.final, r.error
                exposure = exposure_text(r.stdout, r.error, r.notice, answer)
                last_seq = output_seq = r.seqs[-1]
            step = Step(lo=reply_seq, hi=last_seq, reply=reply, exposure=exposure, output_seq=output_seq,
                        headline=extract_headline(reply), files=self._files(reply_seq, last_seq))
            self.view.add_step(step)
            evicted = self.view.fit(derive)
            for s in evicted:  # only leaves are logged; merges are rebuilt deterministically
                task_h, state_h, next_h = s.headline
                self._append("scroll", "headline",
                             f"[{s.lo}..{s.hi}] task: {task_h} | state: {state_h} | next: {next_h}"
                             f"{render_files(s.files)}",
                             {"lo": s.lo, "hi": s.hi, "task": task_h, "state": state_h, "next": next_h,
                              "files": [asdict(f) for f in s.files]})
            overhead = t_view + (time.perf_counter() - t1)
            rec = StepRecord(step=step_no, reply_seq=reply_seq, last_seq=last_seq, view_tokens=view_tokens,
                             prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                             model_latency_s=completion.latency_s, overhead_s=overhead,
                             exposure_chars=len(exposure), exposure_tokens=step.exposure_tokens,
                             prefix_reuse=reuse, evicted=len(evicted), had_code=code is not None, error=error)
            result.steps.append(rec)
            result.evictions += len(evicted)
            if self.on_step:
                self.on_step(rec, reply, exposure)
            if answer is not None:
                result.answer, result.reason = answer, "final"
                break
            if strikes >= cfg.no_code_strikes:
                result.reason = "no_code"
                break
            if used_tokens >= cfg.max_total_tokens:
                result.reason = "max_tokens"
                break
        result.headlines = len(self.view.index)
        self._append("assistant", "final", result.answer or "",
                     {"reason": result.reason, "steps": len(result.steps), "answered": result.answer is not None})
        return result


def replay_view(view: View, events: Iterable, on_reply: Callable[[Any, list], None] | None = None) -> int:
    """Feed a task's logged events (those after its task event) through `view` exactly as the
    loop did: steps added, folded and evicted (evictions come from the logged headline
    events, not from recounting). `on_reply(reply_event, messages)` sees the messages the
    model was shown at each step. Returns the number of steps."""
    steps_done = 0
    pending: Step | None = None
    for e in events:
        if e.kind == "message" and e.role == "assistant":
            view.fold_last()  # what `fit` did after the previous step's evictions
            if on_reply is not None:
                on_reply(e, view.messages())
            pending = Step(lo=e.seq, hi=e.seq, reply=e.text, exposure="", headline=extract_headline(e.text))
            steps_done += 1
        elif pending is not None and e.kind == "file":
            pending.files += file_refs([e])
        elif pending is not None and e.kind == "output":
            pending.hi, pending.output_seq = e.seq, e.seq
            pending.exposure = exposure_text(e.text, e.meta.get("error"), e.meta.get("notice"), e.meta.get("final"))
            view.add_step(pending)
            pending = None
        elif pending is not None and e.kind == "note" and e.meta.get("reason") == "no_code":
            pending.hi, pending.exposure = e.seq, NO_CODE
            view.add_step(pending)
            pending = None
        elif e.kind == "headline":
            if not (view.steps and view.steps[0].lo == e.meta["lo"]):
                raise ValueError(f"headline event {e.seq} is out of step with the view")
            if len(view.steps) == 1:  # `fit` folds a lone step over the hard budget before evicting it
                view.fold_last()
            view.steps[0].headline = (e.meta["task"], e.meta["state"], e.meta["next"])
            view.evict_oldest(derive=lambda s: s.headline)
        elif e.kind in ("task", "final"):
            break
    return steps_done


def prompt_sha256(messages: list[dict]) -> str:
    return hashlib.sha256(chatml(messages).encode("utf-8")).hexdigest()


@dataclass
class StepPrompt:
    reply: Any                 # the reply event (kind="message", role="assistant")
    messages: list[dict]       # exactly what the model was shown at that step
    logged_sha256: str | None  # what the loop logged at run time
    matches: bool              # the rebuilt prompt hashes to the logged one


def step_prompts(log, session: str, count: Callable[[str], int] = estimate_tokens) -> list[StepPrompt]:
    """Every step of every task in `session`: the messages the model saw, rebuilt from the
    log and checked against the prompt hash the loop logged (trajectory export). `count`
    must be the counter the run used when it folded exposures (approximate by default)."""
    events = list(log.events(session=session))
    out: list[StepPrompt] = []
    for i, t in enumerate(events):
        if t.kind != "task":
            continue
        cfg = LoopConfig(**{k: v for k, v in (t.meta.get("config") or {}).items()
                            if k in LoopConfig.__dataclass_fields__})
        view = View(system=t.meta.get("system_prompt") or SYSTEM_PROMPT, task=t.text, count=count,
                    exact=t.meta.get("token_counter") == "exact",
                    soft_budget=cfg.soft_budget, hard_budget=cfg.hard_budget,
                    use_index=cfg.headline_index, preamble=t.meta.get("preamble", ""))
        view.index.tier_cap = cfg.tier_cap

        def keep(ev, messages):
            sha = (ev.meta or {}).get("prompt_sha256")
            out.append(StepPrompt(ev, messages, sha, sha == prompt_sha256(messages)))
        replay_view(view, events[i + 1:], keep)
    return out


def exposure_text(shown: str, error: str | None, notice: str | None, answer: str | None) -> str:
    """What the model sees of a cell: its printout, its error, kernel notices, the final answer; control
    characters (ANSI escapes, NUL) shown as escapes (scroll.controls), the log keeps them verbatim."""
    parts = [shown.rstrip("\n") if shown.strip() else "(the cell printed nothing)"]
    if error:
        parts.append(f"Error: {error}")
    if notice:
        parts.append(f"[kernel: {notice}]")
    if answer is not None:
        parts.append(f"[final answer submitted: {answer!r}]")
    return show_controls("\n".join(parts))
