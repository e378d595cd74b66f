"""Truncation baseline: the newest turns of the granted history that fit, then ONE call.

    TruncateManager().answer(log, question, sessions=granted, llm=llm, budget=Budget(8192, 256))

The context is the last N tokens of the history, in log order and in whole turns (each
`[seq | session | date | role] text`), where N is what the budget leaves once the prompt
scaffold, the question and `max_new_tokens` are counted with the model's own counter. If
even the newest turn alone does not fit, its end is shown with its header and a marker
(the one case a turn is cut), so the model never gets an empty history by accident.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from ..lcm.history import cut_to_tokens, event_date, format_event, history_events
from ..lcm.summarize import Usage
from .base import Answer, Budget, complete, context_room, fit_blocks, make_answer


@dataclass
class TruncateManager:
    name: str = "truncate"

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer:
        t0, usage = time.perf_counter(), Usage()
        events = list(history_events(log, sessions))
        room = context_room(llm, budget, question, question_date)
        blocks: list[str] = []
        used = 0
        for ev in reversed(events):                  # newest first, whole turns, while they fit
            block = format_event(ev)
            n = llm.count_tokens(block) + 1           # + the newline that joins it
            if used + n > room:
                break
            blocks.append(block)
            used += n
        cut = False
        if not blocks and events and room > 0:       # the newest turn alone is too long: its end
            ev = events[-1]
            head = f"[seq {ev.seq} | {ev.session} | {event_date(ev)} | {ev.role}] [... start of this turn cut] "
            tail = cut_to_tokens(ev.text, room - llm.count_tokens(head) - 1, llm.count_tokens, keep="tail")
            blocks, cut = [head + tail], True
        blocks.reverse()                             # log order
        first = len(events) - len(blocks)
        shown, messages = fit_blocks(llm, budget, blocks, list(range(len(blocks) - 1, -1, -1)), question,
                                     question_date)  # drop the oldest first if the whole count is over
        text = complete(llm, messages, budget, usage)
        seqs = [events[first + i].seq for i in shown]
        return make_answer(text, usage, t0, self.name, history_events=len(events), shown_events=len(shown),
                           seqs=seqs, cut_turn=cut, context_room=room,
                           prompt_counted=llm.count_tokens(messages))


__all__ = ["TruncateManager"]
