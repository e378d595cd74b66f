"""The one protocol every LLM backend speaks, its result type, its error, and shared helpers.

    c = llm.complete([{"role": "user", "content": "hi"}], max_tokens=32)
    c.text, c.prompt_tokens, c.completion_tokens, c.finish_reason, c.latency_s

Nothing here imports anything outside the stdlib.
"""
from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from scroll.llm.constraints import Constraint

Message = dict[str, str]
ROLES = ("system", "user", "assistant", "tool")
INSTALL_MODEL = "pip install 'scroll-agent[model]'"


class LLMError(RuntimeError):
    """A model call failed (transport, server status, bad response, scripted run-out).

    The message names the backend and, for HTTP, the URL and status. `status` is the HTTP
    status when there was one; `retryable` says whether a retry could have helped.
    """

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None,
                 retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.url = url
        self.retryable = retryable


@dataclass
class Completion:
    """One model reply. Token counts are the backend's own (server usage, tokenizer), or
    None when the backend did not report them."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str
    latency_s: float
    backend: str
    finish_reason: str | None = None
    raw: dict | None = None

    def to_dict(self, *, with_raw: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_raw:
            d.pop("raw")
        return d


@runtime_checkable
class LLM(Protocol):
    """What the agent loop (and everything else) may call. Nothing else knows the backend."""

    def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None,
                 constraint: "Constraint | None" = None) -> Completion:
        """`constraint` (scroll.llm.constraints): decode only replies that match it, where the
        backend can; one that cannot ignores it (`constraints.probe` tells which)."""

    def count_tokens(self, text_or_messages: str | list[Message]) -> int: ...

    @property
    def token_counter_exact(self) -> bool: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


def check_messages(messages: Any) -> list[Message]:
    """Validate chat messages: a non-empty list of {role, content: str} dicts."""
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content': {m!r:.200}")
        if m["role"] not in ROLES:
            raise ValueError(f"messages[{i}]['role'] is {m['role']!r}; expected one of {ROLES}")
        if not isinstance(m["content"], str):
            raise ValueError(f"messages[{i}]['content'] must be a str, "
                             f"got {type(m['content']).__name__}")
    return messages


def check_stop(stop: Any) -> list[str] | None:
    if stop is None:
        return None
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, (list, tuple)) or not all(isinstance(s, str) and s for s in stop):
        raise ValueError(f"stop must be a non-empty string or a list of them, got {stop!r}")
    return list(stop)


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """Cut `text` before the earliest stop string (OpenAI semantics: the stop is excluded)."""
    if not stop:
        return text, False
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


# --- approximate token counting -------------------------------------------------------------

_PIECES = re.compile(r"\w+|[^\w\s]", re.UNICODE)
# ChatML-style framing per message (`<|im_start|>role\n ... <|im_end|>\n`) and the
# generation prompt (`<|im_start|>assistant\n`).
PER_MESSAGE_OVERHEAD = 4
GENERATION_PROMPT = 3


def approx_count_text(text: str) -> int:
    """An upper-leaning estimate of BPE tokens: the larger of (UTF-8 bytes / 3.5) and the
    number of word/punctuation pieces. Not any model's tokenizer: callers must say so."""
    if not text:
        return 0
    by_bytes = math.ceil(len(text.encode("utf-8")) / 3.5)
    return max(by_bytes, len(_PIECES.findall(text)))


def approx_count(text_or_messages: str | list[Message]) -> int:
    if isinstance(text_or_messages, str):
        return approx_count_text(text_or_messages)
    msgs = check_messages(text_or_messages)
    return GENERATION_PROMPT + sum(
        PER_MESSAGE_OVERHEAD + approx_count_text(m["role"]) + approx_count_text(m["content"])
        for m in msgs)


class ApproxCounterMixin:
    """count_tokens with the approximate counter (token_counter_exact is False)."""

    def count_tokens(self, text_or_messages: str | list[Message]) -> int:
        return approx_count(text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return False


def complete_many(llm: LLM, batch: Iterable[list[Message]], *, max_workers: int = 8,
                  **kwargs: Any) -> list[Completion | LLMError]:
    """Run `llm.complete` over many prompts with a thread pool; results keep input order.

    A failed call yields its LLMError in place (other exceptions propagate), so one bad
    prompt does not lose the rest. Backends are thread-safe (local ones serialize).
    """
    batch = list(batch)

    def one(msgs: list[Message]) -> Completion | LLMError:
        try:
            return llm.complete(msgs, **kwargs)
        except LLMError as e:
            return e

    if not batch:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(batch)))) as pool:
        return list(pool.map(one, batch))
