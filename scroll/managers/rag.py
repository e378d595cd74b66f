"""Retrieval baseline: the top-k BM25 turns of the granted history, in time order, then ONE call.

    RagManager(k=50).answer(log, question, sessions=granted, llm=llm, budget=Budget(8192, 256))

The question is the query to `EventLog.search` restricted to the granted sessions and to
history-origin events (the same BM25 index the agent's `ms.search` uses). Hits are taken
best first while they fit the room the budget leaves (a hit too long to fit is skipped,
the next one tried), then shown in chronological (seq) order with their session, date and
role. If the whole prompt counts over the budget, the lowest-ranked shown hits go first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from ..lcm.history import HISTORY, format_event, granted_sessions
from .base import Answer, Budget, complete, context_room, fit_blocks, make_answer
from ..lcm.summarize import Usage


@dataclass
class RagManager:
    k: int = 50
    name: str = "rag"

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError("rag: k must be >= 1")

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer:
        t0, usage = time.perf_counter(), Usage()
        granted = granted_sessions(log, sessions)
        hits = log.search(question, self.k, sessions=granted, origins={HISTORY}) if granted else []
        allowed = set(granted)
        hits = [h for h in hits if h.origin is not None and h.origin.value == HISTORY and h.session in allowed]
        room = context_room(llm, budget, question, question_date)
        chosen, used = [], 0                          # indices into hits, best first
        for i, h in enumerate(hits):
            n = llm.count_tokens(format_event(h)) + 1
            if used + n <= room:
                chosen.append(i)
                used += n
        order = sorted(chosen, key=lambda i: hits[i].seq)         # chronological
        blocks = [format_event(hits[i]) for i in order]
        rank_of = {i: pos for pos, i in enumerate(order)}
        shown, messages = fit_blocks(llm, budget, blocks, [rank_of[i] for i in chosen], question, question_date)
        text = complete(llm, messages, budget, usage)
        shown_hits = [hits[order[p]] for p in shown]
        return make_answer(text, usage, t0, self.name, hits=len(hits), shown_events=len(shown_hits),
                           seqs=[h.seq for h in shown_hits], scores=[round(h.score, 4) for h in shown_hits],
                           context_room=room, prompt_counted=llm.count_tokens(messages))


__all__ = ["RagManager"]
