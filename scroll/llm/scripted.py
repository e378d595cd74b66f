"""`ScriptedLLM`: a test double that replies from a list (or a function of the messages).

    llm = ScriptedLLM(["```python\nprint(1)\n```", "done"])
    llm = ScriptedLLM(lambda messages: "echo: " + messages[-1]["content"])

Every Completion and `describe()` say `backend="scripted"`, so nothing it produces can pass
for a model result. Replies are returned verbatim (stop strings are not applied). It raises
LLMError when the list runs out. Token counts use the approximate counter.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterable

from scroll.llm.base import (
    ApproxCounterMixin, Completion, LLMError, Message, approx_count, check_messages,
)

Responder = Callable[[list[Message]], str]


class ScriptedLLM(ApproxCounterMixin):
    backend = "scripted"

    def __init__(self, responses: Iterable[str] | Responder, *, model: str = "scripted"):
        if callable(responses):
            self._fn: Responder | None = responses
            self._responses: list[str] = []
        else:
            self._fn = None
            self._responses = list(responses)
            bad = [i for i, r in enumerate(self._responses) if not isinstance(r, str)]
            if bad:
                raise ValueError(f"ScriptedLLM responses must be strings (not at {bad[:5]})")
        self.model = model
        self.calls: list[dict[str, Any]] = []       # every call: messages and arguments
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int | None:
        return None if self._fn else len(self._responses) - len(self.calls)

    def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None,
                 constraint: Any = None) -> Completion:
        """A scripted reply; a `constraint` is recorded in `calls`, never enforced."""
        check_messages(messages)
        t0 = time.perf_counter()
        with self._lock:
            i = len(self.calls)
            if self._fn is None and i >= len(self._responses):
                raise LLMError(f"scripted backend ran out of responses after "
                               f"{len(self._responses)} call(s)")
            self.calls.append({"messages": [dict(m) for m in messages], "max_tokens": max_tokens,
                               "temperature": temperature, "stop": stop, "constraint": constraint})
            if self._fn is None:
                text = self._responses[i]
        if self._fn is not None:
            text = self._fn(messages)
            if not isinstance(text, str):
                raise LLMError(f"scripted backend: the responder returned "
                               f"{type(text).__name__}, not str")
        return Completion(
            text=text, prompt_tokens=approx_count(messages), completion_tokens=approx_count(text),
            model=self.model, latency_s=time.perf_counter() - t0, backend=self.backend,
            finish_reason="stop", raw={"call": i})

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model,
                "responses": "callable" if self._fn else len(self._responses),
                "token_counter": "approximate"}

    def close(self) -> None:
        pass
