"""The operators' model-call budget: calls and tokens per root task, apart from host time.

One `ModelBudget` per root task (an agent session and every sub-session it starts through
`agent_map` share it). A map reserves what its first attempts may cost before it starts,
so a request that cannot fit is refused up front (nothing runs); retries and sub-session
steps beyond the reservation draw from what is still free, and stop (the item fails
explicitly) when nothing is. Tokens are reserved by estimate (prompt estimate + the
reply's max_tokens) and charged as the backend reports them.

    budget = ModelBudget(calls=10_000, tokens=20_000_000)
    res = budget.reserve(200, 200 * 900, what="llm_map of 200 items")   # BudgetExceeded if it cannot fit
    if res.acquire(est_tokens):      # before each model call
        ... call ...
        res.settle(est_tokens, actual_tokens)
    res.release()                    # the unused rest goes back
"""
from __future__ import annotations

import threading
from typing import Any

from ..capability import BudgetExceeded
from ..llm.base import LLMError, approx_count


class ModelBudget:
    def __init__(self, calls: int, tokens: int):
        if calls < 0 or tokens < 0:
            raise ValueError("model budget: calls and tokens must be >= 0")
        self.limit_calls, self.limit_tokens = calls, tokens
        self.used_calls = self.used_tokens = 0
        self.held_calls = self.held_tokens = 0  # reserved (or in flight), not yet charged
        self.lock = threading.Lock()

    def free(self) -> tuple[int, int]:
        with self.lock:
            return self._free()

    def _free(self) -> tuple[int, int]:
        return (self.limit_calls - self.used_calls - self.held_calls,
                self.limit_tokens - self.used_tokens - self.held_tokens)

    def check(self, calls: int, tokens: int, what: str) -> None:
        """Raise BudgetExceeded (saying what is left) if `calls`/`tokens` cannot be reserved now."""
        with self.lock:
            self._check(calls, tokens, what)

    def _check(self, calls: int, tokens: int, what: str) -> None:
        fc, ft = self._free()
        if calls > fc:
            raise BudgetExceeded(f"{what} needs up to {calls} model calls; this task has {max(fc, 0)} of "
                                 f"{self.limit_calls} left (config model_calls_budget): nothing was run")
        if tokens > ft:
            raise BudgetExceeded(f"{what} needs about {tokens} model tokens; this task has {max(ft, 0)} of "
                                 f"{self.limit_tokens} left (config model_tokens_budget): nothing was run")

    def reserve(self, calls: int, tokens: int, what: str) -> "Reservation":
        with self.lock:
            self._check(calls, tokens, what)
            self.held_calls += calls
            self.held_tokens += tokens
        return Reservation(self, calls, tokens)

    def to_dict(self) -> dict:
        with self.lock:
            fc, ft = self._free()
            return {"calls_used": self.used_calls, "calls_limit": self.limit_calls, "calls_free": fc,
                    "tokens_used": self.used_tokens, "tokens_limit": self.limit_tokens, "tokens_free": ft}


class Reservation:
    """A share of a ModelBudget held for one map (thread-safe through the budget's lock)."""

    def __init__(self, budget: ModelBudget, calls: int, tokens: int):
        self.budget, self.calls, self.tokens = budget, calls, tokens
        self.spent_calls = self.spent_tokens = 0

    def acquire(self, est_tokens: int, *, extra: bool = False) -> bool:
        """Hold one call and `est_tokens` for the next model call: from the reservation, the
        shortfall from the budget's free share; False (nothing held) when it does not fit.
        `extra` (a retry): from the free share only, so retries never eat the reservation
        of items still waiting for their first attempt."""
        b = self.budget
        with b.lock:
            own_c, own_t = (0, 0) if extra else (self.calls, self.tokens)
            need_c, need_t = max(0, 1 - own_c), max(0, est_tokens - own_t)
            fc, ft = b._free()
            if need_c > fc or need_t > ft:
                return False
            b.held_calls += need_c
            b.held_tokens += need_t
            self.calls -= 1 - need_c
            self.tokens -= est_tokens - need_t
            return True

    def settle(self, est_tokens: int, actual_tokens: int) -> None:
        """The call held by `acquire(est_tokens)` is done and cost `actual_tokens`."""
        b = self.budget
        with b.lock:
            b.held_calls -= 1
            b.held_tokens -= est_tokens
            b.used_calls += 1
            b.used_tokens += actual_tokens
            self.spent_calls += 1
            self.spent_tokens += actual_tokens

    def release(self) -> None:
        b = self.budget
        with b.lock:
            b.held_calls -= self.calls
            b.held_tokens -= self.tokens
            self.calls = self.tokens = 0


class MeteredLLM:
    """An LLM whose every call is held and charged against a Reservation, and that stops
    (LLMError) once `cancelled` is set or the budget is spent. Sub-sessions' loops use it."""

    def __init__(self, llm: Any, reservation: Reservation, cancelled: threading.Event):
        while isinstance(llm, MeteredLLM):  # a sub-session's sub-session: charge each call once
            llm = llm.llm
        self.llm, self.reservation, self.cancelled = llm, reservation, cancelled

    def complete(self, messages, *, max_tokens=None, temperature=None, stop=None, **kw):
        if self.cancelled.is_set():
            raise LLMError("cancelled: the agent_map job was cancelled or its session closed")
        est = approx_count(messages) + (max_tokens or 512)
        if not self.reservation.acquire(est):
            raise LLMError("model-call budget of the task is spent (config model_calls_budget / "
                           "model_tokens_budget)")
        actual = est
        try:
            c = self.llm.complete(messages, max_tokens=max_tokens, temperature=temperature, stop=stop, **kw)
            actual = (c.prompt_tokens or approx_count(messages)) + (c.completion_tokens or approx_count(c.text))
            return c
        finally:
            self.reservation.settle(est, actual)

    def __getattr__(self, name: str) -> Any:  # count_tokens, token_counter_exact, describe, close
        return getattr(self.llm, name)
