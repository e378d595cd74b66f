"""LCM's three-level escalation: a summary always comes out strictly smaller than its input.

    s = Summarizer(llm, window=8192).summarize(text, target=600)
    s.text, s.level          # level: "normal" | "aggressive" | "truncate"

1. `normal`: a detail-preserving LLM summary (target `target` tokens).
2. `aggressive`: terse LLM bullet points (target `target // 2`).
3. `truncate`: deterministic, no LLM: the head of the input cut to at most
   `truncate_tokens` tokens, with a marker saying how long the input was.

A level's output is accepted only if it is clean text (after dropping `<think>` blocks:
non-empty, no control characters, not mostly symbols) and counts at most `limit` tokens,
where `limit` is at most `count(input) - 1`; otherwise the next level runs. A failed call
(`LLMError`) is raised by default (`on_error="raise"`): a backend outage must not turn into
stored truncations that every later run would reuse; `on_error="escalate"` counts it as a
failed level instead. Level 3 is a binary search over the input's length
with the model's own counter: it terminates and comes out <= limit < count(input) for any
input of at least one token, so the escalation always converges (the paper's guarantee).

Every call's prompt plus its `max_tokens` fits `window` (counted with `llm.count_tokens`):
an input too large for one call is cut (head kept, marked) for levels 1-2 only; level 3
and the `limit` always see the whole input. Token use of every call goes to `usage`.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..llm.base import LLMError
from .history import cut_to_tokens

LEVELS = ("normal", "aggressive", "truncate")
TRUNCATE_TOKENS = 512   # level 3's fixed size (the paper's example)

_PROMPTS = {
    "normal": ("Summarize {what} for the assistant's long-term memory. Keep every concrete fact: names, "
               "numbers, dates, places, preferences, plans, decisions, and who said what (user or assistant). "
               "Keep the dates from the headers. Plain prose, at most {target} tokens. Reply with the summary only."),
    "aggressive": ("Compress {what} into terse bullet points ('- ...'): only facts that may matter later "
                   "(entities, numbers, dates, decisions, who said it). No filler. At most {target} tokens. "
                   "Reply with the bullet points only."),
}
_WHAT = {"leaf": "this part of a conversation between a user and an assistant (turns, oldest first)",
         "condensed": "these summaries of consecutive parts of a conversation (oldest first) into one summary"}
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
_CUT_INPUT = "\n[... input cut to fit one model call ...]"


@dataclass
class Usage:
    """Model calls and their tokens (the backend's counts, else our own count)."""

    calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add_completion(self, completion: Any, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls += 1
        self.prompt_tokens += completion.prompt_tokens if completion.prompt_tokens is not None else prompt_tokens
        self.completion_tokens += (completion.completion_tokens if completion.completion_tokens is not None
                                   else completion_tokens)

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.failed_calls += other.failed_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Summary:
    """The accepted output of one escalation and how it got there."""

    text: str
    level: str                 # one of LEVELS
    tokens: int
    input_tokens: int
    limit: int
    attempts: list[dict] = field(default_factory=list)   # [{"level", "tokens", "reason"}] of rejected levels
    usage: Usage = field(default_factory=Usage)


def clean_reply(text: str) -> str:
    """The reply without reasoning blocks and surrounding whitespace."""
    return _THINK.sub("", text or "").strip()


def looks_like_text(text: str) -> bool:
    """Not empty, no control characters, and at least 30 % letters or digits (not garbage)."""
    if not text or _CONTROL.search(text):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    visible = [c for c in text if not c.isspace()]
    return bool(visible) and sum(c.isalnum() for c in visible) >= 0.3 * len(visible)


def call_llm(llm: Any, messages: list[dict[str, str]], *, max_tokens: int, temperature: float,
             usage: Usage, raise_errors: bool = False) -> str | None:
    """One completion; on LLMError: raised if `raise_errors`, else None (counted in
    `usage.failed_calls`)."""
    try:
        c = llm.complete(messages, max_tokens=max_tokens, temperature=temperature)
    except LLMError:
        usage.failed_calls += 1
        if raise_errors:
            raise
        return None
    text = c.text or ""
    usage.add_completion(c, llm.count_tokens(messages), llm.count_tokens(text) if text else 0)
    return text


def fit_messages(llm: Any, system: str, user_head: str, body: str, *, window: int,
                 max_tokens: int, marker: str = _CUT_INPUT) -> list[dict[str, str]] | None:
    """[system, user_head + body] with `body` cut (head kept, marked) so that the prompt plus
    `max_tokens` fits `window`; None when even an empty body does not fit."""
    def msgs(b: str) -> list[dict[str, str]]:
        return [{"role": "system", "content": system}, {"role": "user", "content": user_head + b}]

    room = window - max_tokens
    if llm.count_tokens(msgs("")) > room:
        return None
    if llm.count_tokens(msgs(body)) <= room:
        return msgs(body)
    budget = room - llm.count_tokens(msgs("")) - 8
    while budget > 0:
        m = msgs(cut_to_tokens(body, budget, llm.count_tokens, marker=marker))
        if llm.count_tokens(m) <= room:
            return m
        budget = budget * 9 // 10 - 1
    return msgs("")


class Summarizer:
    """Runs the escalation with one backend. `window`: the model's context (prompt + reply)."""

    def __init__(self, llm: Any, *, window: int, truncate_tokens: int = TRUNCATE_TOKENS,
                 temperature: float = 0.0, on_error: str = "raise"):
        if window < 64:
            raise ValueError(f"window must be >= 64 tokens, not {window}")
        if truncate_tokens < 1:
            raise ValueError("truncate_tokens must be >= 1")
        if on_error not in ("raise", "escalate"):
            raise ValueError("on_error must be 'raise' or 'escalate'")
        self.llm, self.window, self.truncate_tokens, self.temperature = llm, window, truncate_tokens, temperature
        self.on_error = on_error

    def count(self, text: str) -> int:
        return self.llm.count_tokens(text) if text else 0

    def summarize(self, text: str, *, target: int, limit: int | None = None, kind: str = "leaf",
                  levels: tuple[str, ...] = LEVELS) -> Summary | None:
        """Summarize `text` (kind "leaf": turns, "condensed": summaries) to at most
        min(limit, count(text) - 1) tokens. None only when that bound is negative (empty input)."""
        if kind not in _WHAT:
            raise ValueError(f"kind must be one of {sorted(_WHAT)}")
        if not levels or levels[-1] != "truncate" or any(lv not in LEVELS for lv in levels):
            raise ValueError(f"levels must be drawn from {LEVELS} and end with 'truncate'")
        input_tokens = self.count(text)
        bound = input_tokens - 1 if limit is None else min(int(limit), input_tokens - 1)
        if bound < 0:
            return None
        usage, attempts = Usage(), []
        for level in levels:
            if level == "truncate":
                out = self.truncate(text, min(self.truncate_tokens, bound), input_tokens)
                return Summary(out, level, self.count(out), input_tokens, bound, attempts, usage)
            goal = max(1, min(target if level == "normal" else target // 2, bound))
            reply, reason = self._ask(level, kind, text, goal, usage)
            if reply is not None:
                n = self.count(reply)
                if n <= bound:
                    return Summary(reply, level, n, input_tokens, bound, attempts, usage)
                reason = f"{n} tokens > limit {bound}"
            attempts.append({"level": level, "reason": reason})
        raise AssertionError("unreachable: the last level is 'truncate'")

    def _ask(self, level: str, kind: str, text: str, goal: int, usage: Usage) -> tuple[str | None, str]:
        system = _PROMPTS[level].format(what=_WHAT[kind], target=goal)
        messages = fit_messages(self.llm, system, "", text, window=self.window, max_tokens=goal)
        if messages is None:
            return None, "the prompt does not fit the window"
        raw = call_llm(self.llm, messages, max_tokens=goal, temperature=self.temperature, usage=usage,
                       raise_errors=self.on_error == "raise")
        if raw is None:
            return None, "the model call failed"
        reply = clean_reply(raw)
        if not looks_like_text(reply):
            return None, "empty or not text" if not reply else "garbage (control characters or mostly symbols)"
        return reply, ""

    def truncate(self, text: str, limit: int, input_tokens: int | None = None) -> str:
        """Level 3: the head of `text` with a marker, at most `limit` tokens (deterministic)."""
        n = self.count(text) if input_tokens is None else input_tokens
        return cut_to_tokens(text, limit, self.count, marker=f"\n[... truncated from {n} tokens]")


__all__ = ["LEVELS", "TRUNCATE_TOKENS", "Usage", "Summary", "Summarizer", "clean_reply", "looks_like_text",
           "call_llm", "fit_messages"]
