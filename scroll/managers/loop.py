"""`scroll`: the full system as a context manager — the agent loop over the log, with the
sandboxed kernel, `ms`, eviction and the headline index — behind the same contract as the
one-call baselines (`base.Manager`), so a benchmark swaps it in by name.

    make_manager("scroll").answer(log, question, sessions=granted, llm=llm, budget=Budget(8192, 200))

Unlike the baselines it writes to the log: its own agent session (task, replies, cells,
outputs; origin `agent`), which is how Scroll works. Give it a snapshot of the history
(scroll.runner does) when the history must stay untouched. The loop's view budget comes
from the Budget: hard = the prompt room minus a margin for the chat template, soft = 3/4 of
it, max_new_tokens = the Budget's.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace
from typing import Any, Iterable

from scroll.agent import Agent
from scroll.config import LoopConfig
from scroll.llm.base import LLMError
from .base import Answer, Budget

MARGIN = 200  # tokens of the window kept free for the chat template and counter drift
# the paper's ablations: the scroll manager with one part switched off (scroll.config.LoopConfig)
ABLATIONS = {"scroll": {}, "no_log": {"history_access": False}, "no_kernel": {"persistent_kernel": False},
             "no_index": {"headline_index": False}}


def task_text(question: str, question_date: str | None) -> str:
    """The task a loop manager gives the agent: the question (and the date it is asked on)."""
    return question + (f"\n(The question is asked on {question_date}.)" if question_date else "")


def raise_on_backend_error(res: Any) -> None:
    """The managers' contract: a failing backend raises (it is never an answer)."""
    if res.reason == "backend_error":
        raise LLMError(res.error or "the model backend failed")


@dataclass
class ScrollManager:
    """The agent loop as a manager. `loop`: a LoopConfig name or path (its steps, timeouts,
    sandbox); its budgets are replaced by the Budget's. `name`: scroll, or an ablation
    (no_log, no_kernel, no_index) that switches one part off."""

    loop: str | None = None
    name: str = "scroll"

    def __post_init__(self) -> None:
        if self.name not in ABLATIONS:
            raise ValueError(f"unknown scroll variant {self.name!r}; known: {sorted(ABLATIONS)}")

    def config(self, budget: Budget):
        base = LoopConfig.load(self.loop) if self.loop else LoopConfig()
        hard = budget.prompt_tokens - MARGIN
        return replace(base, hard_budget=hard, soft_budget=max(1, hard * 3 // 4),
                       max_new_tokens=budget.max_new_tokens, temperature=budget.temperature, **ABLATIONS[self.name])

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer:
        t0 = time.perf_counter()
        session = f"{self.name}-{uuid.uuid4().hex[:8]}"
        with Agent.open(log, llm, self.config(budget), session=session) as agent:
            res = agent.run(task_text(question, question_date), sessions=None if sessions is None else list(sessions))
        raise_on_backend_error(res)
        prompt = sum(s.prompt_tokens or 0 for s in res.steps)
        completion = sum(s.completion_tokens or 0 for s in res.steps)
        return Answer(res.answer or "", prompt, completion, len(res.steps), round(time.perf_counter() - t0, 6),
                      self.name, {"session": session, "reason": res.reason, "error": res.error,
                                  "evictions": res.evictions, "headlines": res.headlines,
                                  "code_cells": sum(1 for s in res.steps if s.had_code),
                                  "cell_errors": sum(1 for s in res.steps if s.had_code and s.error)})
