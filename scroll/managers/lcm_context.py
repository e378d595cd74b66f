"""LCM without a loop: build the summary DAG of the granted history, answer from its context.

    LcmContextManager().answer(log, question, sessions=granted, llm=llm, budget=Budget(8192, 256))

The DAG (`scroll.lcm.SummaryDag`) is built with the same backbone and window: its active
context (summary nodes for older turns, raw recent turns) is given `context_tokens` = what
the budget leaves after the answer scaffold and the question, so the answer call fits.
Then ONE answer call. The build is resumable (`<log>.lcm.db`): a second question over the
same history reuses every node, and `detail["dag_usage"]` reports what the nodes in use
cost when they were made, so a report can charge the build once or per question.

This is the "LCM context" baseline. LCM proper is an agent loop whose tools are grep /
describe / expand_query over this DAG (scroll.lcm.tools); that needs scroll/agent.py.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..lcm.config import LcmConfig, sizes_for
from ..lcm.dag import SummaryDag
from ..lcm.store import DagStore, store_path
from ..lcm.summarize import Usage
from .base import Answer, Budget, complete, context_room, fit_blocks, make_answer


QUESTION_ALLOWANCE = 400   # characters of question the context leaves room for


@dataclass
class LcmContextManager:
    options: dict = field(default_factory=dict)   # LcmConfig fields (context_tokens and window come from the budget)
    store_path: str | None = None                  # default: <log>.lcm.db
    store_dir: str | None = None                   # else: <store_dir>/<log id>.lcm.db, shared by every
                                                   # snapshot of one history (the runner sets it)
    name: str = "lcm-context"

    def __post_init__(self) -> None:
        bad = {"context_tokens", "window"} & set(self.options)
        if bad:
            raise ValueError(f"lcm-context: {sorted(bad)} come from the budget, not options")

    def config(self, llm: Any, budget: Budget, question: str, question_date: str | None = None) -> LcmConfig:
        """The DAG's settings for this budget: the context gets what the answer prompt leaves;
        sizes default to LCM's reference values (600 / 900 / 512 / 2000 for an 8k context at an
        8k window), scaled down for smaller windows or contexts (`sizes_for`); `options` override them."""
        # the room left by a question of QUESTION_ALLOWANCE characters, not by this question: every
        # question over one history gets the same config, so they share one DAG (fit_blocks still
        # drops the oldest blocks if a longer question does not fit)
        room = context_room(llm, budget, "?" * QUESTION_ALLOWANCE, question_date, summaries=True)
        w = budget.context_window
        return LcmConfig(context_tokens=room, window=w, **{**sizes_for(w, room), **self.options})

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer:
        t0, usage = time.perf_counter(), Usage()
        cfg = self.config(llm, budget, question, question_date)
        store = DagStore.for_log(log, store_path(log, self.store_path, self.store_dir))
        try:
            dag = SummaryDag(log, sessions, config=cfg, store=store)
            report = dag.build(llm)
            usage.add(report.usage)
            context = dag.context()
            nodes = dag.reachable()
        finally:
            store.close()
        blocks = [text for _, text in context]
        newest_first = list(range(len(blocks) - 1, -1, -1))
        shown, messages = fit_blocks(llm, budget, blocks, newest_first, question, question_date, summaries=True)
        text = complete(llm, messages, budget, usage)
        dag_usage = Usage()
        for n in nodes.values():
            dag_usage.calls += n.usage.get("calls", 0)
            dag_usage.prompt_tokens += n.usage.get("prompt_tokens", 0)
            dag_usage.completion_tokens += n.usage.get("completion_tokens", 0)
        items = [context[i][0] for i in shown]
        return make_answer(text, usage, t0, self.name, build=report.to_dict(), dag_usage=dag_usage.to_dict(),
                           shown_items=len(items), dropped_items=len(blocks) - len(items),
                           shown_nodes=[it.ref for it in items if it.kind == "node"],
                           shown_seqs=[it.ref for it in items if it.kind == "event"],
                           nodes=len(nodes), context_tokens=cfg.context_tokens,
                           prompt_counted=llm.count_tokens(messages))


__all__ = ["LcmContextManager"]
