"""The contract every context manager meets, so a benchmark swaps them with one switch.

    ans = manager.answer(log, "Where did I run my first marathon?", sessions=granted, llm=llm,
                         budget=Budget(context_window=8192, max_new_tokens=256))
    ans.text, ans.prompt_tokens, ans.completion_tokens, ans.calls, ans.wall_s, ans.detail

A manager reads the granted history (history-origin events of `sessions`; None: every
session holding history) and answers with the same backbone `llm` under the same `Budget`.
It never writes the event log. Every prompt it sends, counted with `llm.count_tokens`, plus
that call's `max_tokens`, fits `budget.context_window`; the answer call's prompt fits
`budget.prompt_tokens`. Token use is the backend's own count when it reports one, else
ours. A failing backend raises `LLMError` (a benchmark records it; it is never an answer).

The shared answer prompt lives here too: one system message and one user message with the
context blocks (oldest first), the question and, when known, the question's date.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
import time
from typing import Any, Iterable, Protocol, runtime_checkable

from ..lcm.summarize import Usage, clean_reply

SYSTEM = ("You answer a question about a long chat history between a user and an assistant. You see parts of "
          "that history, oldest first: turns tagged [seq N | session | date | role]{extra}. Answer from them; "
          "prefer the most recent information when facts changed. If they do not contain the answer, say you "
          "don't know. Reply with the answer only, briefly.")
SUMMARY_NOTE = " and summaries of older turns tagged [summary id | ... | seqs a-b | ...]"
EMPTY = "(nothing from the history fits or matches)"
SLACK = 8   # tokens kept free for joins the additive counts do not see


@dataclass(frozen=True)
class Budget:
    """The one budget every manager gets: the model's window and the answer's length."""

    context_window: int              # prompt + completion tokens one call may use
    max_new_tokens: int = 256        # the answer call's max_tokens
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError("budget: max_new_tokens must be >= 1")
        if self.context_window < self.max_new_tokens + 64:
            raise ValueError(f"budget: context_window ({self.context_window}) must exceed max_new_tokens "
                             f"({self.max_new_tokens}) by >= 64 tokens")

    @property
    def prompt_tokens(self) -> int:
        """The most prompt tokens the answer call may send."""
        return self.context_window - self.max_new_tokens


@dataclass
class Answer:
    """A manager's answer and what it cost (all model calls, the build's included)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    calls: int
    wall_s: float
    manager: str = ""
    detail: dict = field(default_factory=dict)   # manager-specific: what was shown, build report, ...

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Manager(Protocol):
    """What a benchmark runner calls. `name` is what reports show."""

    name: str

    def answer(self, log: Any, question: str, *, sessions: Iterable[str] | None, llm: Any, budget: Budget,
               question_date: str | None = None) -> Answer: ...


def answer_messages(blocks: list[str], question: str, question_date: str | None = None, *,
                    summaries: bool = False) -> list[dict[str, str]]:
    """The answer prompt: context blocks (oldest first), then the question (and its date)."""
    context = "\n".join(blocks) if blocks else EMPTY
    when = f"\nThe question is asked on: {question_date}" if question_date else ""
    return [{"role": "system", "content": SYSTEM.format(extra=SUMMARY_NOTE if summaries else "")},
            {"role": "user", "content": f"History:\n{context}\n\nQuestion: {question}{when}"}]


def context_room(llm: Any, budget: Budget, question: str, question_date: str | None = None, *,
                 summaries: bool = False) -> int:
    """Tokens left for context blocks once the scaffold and the question are counted."""
    scaffold = answer_messages([""], question, question_date, summaries=summaries)
    return budget.prompt_tokens - llm.count_tokens(scaffold) - SLACK


def fit_blocks(llm: Any, budget: Budget, blocks: list[str], keep: list[int], question: str,
               question_date: str | None = None, *, summaries: bool = False) -> tuple[list[int], list[dict]]:
    """Messages for blocks[i] for i in `keep` (shown in index order), dropping from `keep`'s
    END (the least wanted) until the prompt, counted whole, fits `budget.prompt_tokens`."""
    keep = list(keep)
    while True:
        shown = sorted(keep)
        msgs = answer_messages([blocks[i] for i in shown], question, question_date, summaries=summaries)
        if llm.count_tokens(msgs) <= budget.prompt_tokens or not keep:
            return shown, msgs
        keep.pop()


def complete(llm: Any, messages: list[dict[str, str]], budget: Budget, usage: Usage) -> str:
    """The answer call (raises LLMError on failure); its tokens go to `usage`."""
    c = llm.complete(messages, max_tokens=budget.max_new_tokens, temperature=budget.temperature)
    text = c.text or ""
    usage.add_completion(c, llm.count_tokens(messages), llm.count_tokens(text) if text else 0)
    return text


def make_answer(text: str, usage: Usage, t0: float, manager: str, **detail: Any) -> Answer:
    """The Answer: the reply without reasoning blocks; wall time since `t0` (perf_counter)."""
    return Answer(clean_reply(text), usage.prompt_tokens, usage.completion_tokens, usage.calls,
                  round(time.perf_counter() - t0, 6), manager, detail)


__all__ = ["Answer", "Budget", "Manager", "answer_messages", "context_room", "fit_blocks", "complete",
           "make_answer", "SYSTEM"]
