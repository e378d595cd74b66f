"""The working view: the prompt the model sees, built under a token budget.

Layout, stable parts first so consecutive prompts share their prefix (and the server's
prefix cache hits):

    system   rules + the `ms` API                      (never changes)
    user     history preamble                          (only in the no_log ablation)
    user     Task: ...                                 (never changes)
    user     headline index of evicted steps           (only when something was evicted)
    assistant/user pairs: each step's reply and the exposure of its cell, oldest first

Between evictions a new prompt is the previous one plus one step, so the prefix is
reused whole. Over the soft budget the oldest steps leave the VIEW (never the log) and
get a headline. The hard budget is never exceeded: an exposure too large for it is
folded to head + tail with the `seq` of the full output, then the index and, last, the
task text are trimmed. Tokens are counted with the model's tokenizer when the backend
has one; otherwise with an approximate counter, and the view says so (`exact`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .headlines import FileRef, HeadlineIndex
from .records import estimate_tokens

MSG_OVERHEAD = 4  # <|im_start|>role\n ... <|im_end|>\n
GEN_PROMPT = 3


@dataclass
class Step:
    lo: int                 # first seq of the step's events (the model's reply)
    hi: int                 # last seq (the cell's output, or a note)
    reply: str              # what the model said (code included)
    exposure: str           # what the cell printed (+ error), as shown to the model
    output_seq: int | None = None  # seq of the full output event, for folding stubs
    headline: tuple[str, str, str] | None = None  # model-written (task, state, next)
    reply_tokens: int = 0
    exposure_tokens: int = 0
    folded: bool = False
    files: tuple[FileRef, ...] = ()  # files attached in the step (kept by its headline)

    @property
    def tokens(self) -> int:
        return self.reply_tokens + self.exposure_tokens + 2 * MSG_OVERHEAD


@dataclass
class View:
    system: str
    task: str
    count: Callable[[str], int] = estimate_tokens
    exact: bool = False
    soft_budget: int = 6000
    hard_budget: int = 8000
    index_share: float = 0.15   # of the hard budget, at most, for the headline index
    fold_share: float = 0.25    # an exposure above this share of the hard budget is folded
    index: HeadlineIndex = field(default_factory=HeadlineIndex)
    steps: list[Step] = field(default_factory=list)
    use_index: bool = True      # False (no_index ablation): evicted steps get no headline entry
    preamble: str = ""          # no_log ablation: the history shown before the task (fixed)

    def __post_init__(self) -> None:
        if not (0 < self.soft_budget <= self.hard_budget):
            raise ValueError(f"need 0 < soft_budget ({self.soft_budget}) <= hard_budget ({self.hard_budget})")
        self._system_tokens = self.count(self.system) + MSG_OVERHEAD
        self._task_text = self.task_message(self.task)
        self._task_tokens = self.count(self._task_text) + MSG_OVERHEAD
        if self._system_tokens + GEN_PROMPT + 64 > self.hard_budget:
            raise ValueError(f"the system prompt alone ({self._system_tokens} tokens) does not fit the hard budget")
        self._index_text = ""
        self._index_tokens = 0
        self._preamble_tokens = self.count(self.preamble) + MSG_OVERHEAD if self.preamble else 0

    @staticmethod
    def task_message(task: str) -> str:
        return f"Task: {task}"

    # ----------------------------------------------------------------- content
    def add_step(self, step: Step) -> None:
        step.reply_tokens = self.count(step.reply)
        step.exposure_tokens = self.count(step.exposure)
        limit = int(self.fold_share * self.hard_budget)
        if step.exposure_tokens > limit:
            self._fold(step, limit)
        self.steps.append(step)

    def _fold(self, step: Step, limit_tokens: int) -> None:
        """Replace a huge exposure by head + tail and where the full text lives."""
        text = step.exposure
        where = f"ms.expand({step.output_seq}).text" if step.output_seq else "the event log"
        keep = max(200, limit_tokens * 4 // 2 - 200)  # characters, each side (approx.)
        while True:
            stub = (f"{text[:keep]}\n… [folded by the view: {len(text)} characters; full output: {where}] …\n"
                    f"{text[-keep:]}")
            n = self.count(stub)
            if n <= limit_tokens or keep <= 50:
                break
            keep = keep * 2 // 3
        step.exposure, step.exposure_tokens, step.folded = stub, n, True

    def tokens(self) -> int:
        total = self._system_tokens + self._preamble_tokens + self._task_tokens + GEN_PROMPT
        if self._index_text:
            total += self._index_tokens + MSG_OVERHEAD
        return total + sum(s.tokens for s in self.steps)

    def messages(self) -> list[dict[str, str]]:
        msgs = [{"role": "system", "content": self.system}]
        if self.preamble:
            msgs.append({"role": "user", "content": self.preamble})
        msgs.append({"role": "user", "content": self._task_text})
        if self._index_text:
            msgs.append({"role": "user", "content": self._index_text})
        for s in self.steps:
            msgs.append({"role": "assistant", "content": s.reply})
            msgs.append({"role": "user", "content": s.exposure})
        return msgs

    # ----------------------------------------------------------------- budget
    def fit(self, derive: Callable[[Step], tuple[str, str, str]]) -> list[Step]:
        """Evict oldest steps while over the soft budget; guarantee the hard budget."""
        evicted: list[Step] = []
        while self.tokens() > self.soft_budget and len(self.steps) > 1:
            evicted.append(self.evict_oldest(derive))
        if self.tokens() > self.hard_budget and self.steps:
            self.fold_last()
            if self.tokens() > self.hard_budget:
                evicted.append(self.evict_oldest(derive))
        if self.tokens() > self.hard_budget:
            self._render_index(budget=max(32, self.hard_budget - (self.tokens() - self._index_tokens) - MSG_OVERHEAD))
        if self.tokens() > self.hard_budget:  # last resort: trim the task text itself
            room = self.hard_budget - (self.tokens() - self._task_tokens) - MSG_OVERHEAD
            text = self._task_text
            while self.count(text) > max(16, room) and len(text) > 40:
                text = text[: len(text) * 3 // 4]
            self._task_text = text + "… [task text trimmed to fit the hard budget; full task: the session's first event]"
            self._task_tokens = self.count(self._task_text) + MSG_OVERHEAD
        assert self.tokens() <= self.hard_budget, (self.tokens(), self.hard_budget)
        return evicted

    def fold_last(self) -> None:
        """Over the hard budget with one step left: fold its exposure to what is left (`fit`'s
        step, also replayed by scroll.agent.replay_view so rebuilt prompts match)."""
        if self.tokens() > self.hard_budget and self.steps:
            s = self.steps[-1]
            room = self.hard_budget - (self.tokens() - s.exposure_tokens)
            if room > 64:
                self._fold(s, room)

    def evict_oldest(self, derive: Callable[[Step], tuple[str, str, str]]) -> Step:
        """Move the oldest step from the view to the headline index (its own headline, else derived)."""
        s = self.steps.pop(0)
        s.headline = s.headline or derive(s)
        if self.use_index:
            self.index.add(s.lo, s.hi, *s.headline, files=s.files)
            self._render_index()
        return s

    def _render_index(self, budget: int | None = None) -> None:
        cap = int(self.index_share * self.hard_budget)
        budget = cap if budget is None else min(cap, budget)
        self._index_text = self.index.render(budget, self.count)
        self._index_tokens = self.count(self._index_text) if self._index_text else 0


def chatml(messages: list[dict[str, str]]) -> str:
    """The prompt as ChatML text (what a Qwen server sees), for prefix-reuse measurement."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages) + "<|im_start|>assistant\n"


def prefix_reuse(prev: str, cur: str) -> float:
    """Share of the previous prompt that is a prefix of the current one."""
    if not prev:
        return 0.0
    n = min(len(prev), len(cur))
    i, step = 0, 4096
    while i + step <= n and prev[i:i + step] == cur[i:i + step]:  # whole chunks first
        i += step
    while i < n and prev[i] == cur[i]:
        i += 1
    return i / len(prev)


def history_preamble(events_newest_first, budget: int, count: Callable[[str], int] = estimate_tokens) -> str:
    """The no_log ablation's view of the history: the newest events that fit `budget` tokens,
    shown oldest first as `[date | session | role] text`; older ones are gone."""
    head = "History (the most recent part; older history is not available):\n"
    lines: list[str] = []
    used = count(head)
    for e in events_newest_first:
        line = f"[{(e.time or '')[:10]} | {e.session} | {e.role}] {' '.join((e.text or '').split())}"
        n = count(line) + 1
        if used + n > budget:
            break
        lines.append(line)
        used += n
    return head + "\n".join(reversed(lines)) if lines else ""
