"""`lcm`: LCM's own way of answering — the agent loop whose only actions are LCM's tools over
the summary DAG (grep, describe, expand_query delegated to a sub-call, final), with the DAG's
active context (summaries + recent turns) in the system prompt. Same contract and Budget as
every manager (`base.Manager`); the one-call variant is `lcm-context`.

    make_manager("lcm").answer(log, question, sessions=granted, llm=llm, budget=Budget(8192, 200))

The DAG lives in `<log>.lcm.db` (never in the log); the loop logs its tool cells in its own
agent session, like the kernel's cells. Budget split: the active context gets half of the
loop's hard budget, the steps (replies + tool outputs) the other half.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable

from scroll.agent import Agent
from scroll.lcm.config import LcmConfig, sizes_for
from scroll.lcm.store import store_path
from scroll.lcm.toolbox import LcmToolbox
from .base import Answer, Budget
from .loop import ScrollManager, raise_on_backend_error, task_text


@dataclass
class LcmLoopManager:
    loop: str | None = None                        # LoopConfig name/path (steps); budgets come from the Budget
    options: dict = field(default_factory=dict)    # LcmConfig fields (context_tokens and window come from the budget)
    store_path: str | None = None                  # default: <log>.lcm.db
    store_dir: str | None = None                   # else: <store_dir>/<log id>.lcm.db, shared by every
                                                   # snapshot of one history (the runner sets it)
    token_cap: int = 400                           # expand_query's answer cap
    name: str = "lcm"

    def __post_init__(self) -> None:
        bad = {"context_tokens", "window"} & set(self.options)
        if bad:
            raise ValueError(f"lcm: {sorted(bad)} come from the budget, not options")

    def config(self, budget: Budget):
        cfg = ScrollManager(loop=self.loop).config(budget)
        w = budget.context_window
        ctx = max(128, cfg.hard_budget // 2)
        return cfg, LcmConfig(context_tokens=ctx, window=w, **{**sizes_for(w, ctx), **self.options})

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer:
        t0 = time.perf_counter()
        loop_cfg, lcm_cfg = self.config(budget)
        granted = None if sessions is None else list(sessions)
        session = f"{self.name}-{uuid.uuid4().hex[:8]}"

        box = LcmToolbox(log, session, llm, config=lcm_cfg, store_path=store_path(log, self.store_path, self.store_dir),
                         token_cap=self.token_cap,
                         max_output_chars=loop_cfg.max_output_chars)
        try:
            box.set_scope(granted)
            system = box.system_prompt()          # builds (or resumes) the DAG: its calls go to box.usage
            with Agent.open(log, llm, loop_cfg, session=session, kernel=box, system_prompt=system) as agent:
                res = agent.run(task_text(question, question_date), sessions=granted)
        finally:
            box.close()
        raise_on_backend_error(res)
        prompt = sum(s.prompt_tokens or 0 for s in res.steps) + box.usage.prompt_tokens
        completion = sum(s.completion_tokens or 0 for s in res.steps) + box.usage.completion_tokens
        return Answer(res.answer or "", prompt, completion, len(res.steps) + box.usage.calls,
                      round(time.perf_counter() - t0, 6), self.name,
                      {"session": session, "reason": res.reason, "error": res.error, "loop_calls": len(res.steps),
                       "lcm_calls": box.usage.calls, "context_tokens": lcm_cfg.context_tokens})
