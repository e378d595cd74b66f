"""`llm_map`'s per-item work: one stateless model call per item, validated, retried.

For item i the backend gets two messages (MAP_SYSTEM, then the prompt with the item and,
when a schema is given, the schema). The reply is the item's value: its stripped text
without a schema; with one, the JSON value parsed from it (scroll.operators.schema) that
must match the schema. A reply that does not parse or match, or a failed backend call, is
retried up to `retries` more times; a retry's messages are the first two plus the bad
reply and the validation error as guidance (only the latest bad reply, so a retry's
prompt stays bounded). Every model call is logged in the calling session (kind
"map_call", origin agent): the exact messages and reply as JSON text, with the item,
attempt, token counts and the error it had in `meta`.

Structured outputs: when the map backend enforces constraints (`constraints.probe`, asked once
per backend and recorded in the job's start record) and the map has a schema, every call asks
the backend for that schema (`JsonSchema`), so even a small model's reply parses. The
validator still decides; its retries stay the fallback. A schema the backend refuses to
compile (an LLMError with a 4xx status) turns guidance off for the rest of the map, with the
reason in the call's `meta.guided_off`, and the same attempt runs again unguided.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from ..llm.base import LLMError, approx_count
from ..llm.constraints import JsonSchema, Support
from ..origin import Origin
from .budget import Reservation
from .jobs import Job
from .schema import SchemaError, parse_reply, validate

MAP_SYSTEM = ("You process one item of a list for a program. Follow the instruction exactly, "
              "using only the item. Reply with the answer only: no preamble, no explanation.")
RETRY = ("Your reply could not be used: {error}\nReply again with only a JSON value that matches "
         "the schema, nothing else.")
RETRY_TEXT = "Your reply could not be used: {error}\nReply again with the answer only."


def render_item(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, sort_keys=True)


def item_messages(prompt: str, item: Any, schema: dict | None) -> list[dict]:
    user = f"{prompt}\n\nItem:\n{render_item(item)}"
    if schema is not None:
        user += ("\n\nReply with only a JSON value that matches this JSON schema:\n"
                 + json.dumps(schema, ensure_ascii=False, sort_keys=True))
    return [{"role": "system", "content": MAP_SYSTEM}, {"role": "user", "content": user}]


@dataclass
class LlmMapSpec:
    """What one llm_map runs: the same for every item."""

    prompt: str
    schema: dict | None
    retries: int
    max_tokens: int
    session: str          # the calling session: where every model call is logged
    llm: Any
    log: Any
    reservation: Reservation
    structured: Support | None = None   # the map backend's probe; None: not asked (no schema, or off)
    guided_off: str | None = None       # why guidance was turned off mid-map (a schema it cannot compile)

    @property
    def guided(self) -> bool:
        return (self.schema is not None and self.structured is not None and self.structured.enforced
                and self.guided_off is None)

    def estimate(self, item: Any) -> int:
        """Tokens a first attempt may cost: its prompt (approximate count) + the reply cap."""
        return approx_count(item_messages(self.prompt, item, self.schema)) + self.max_tokens

    def run_item(self, job: Job, i: int, item: Any) -> dict:
        base = item_messages(self.prompt, item, self.schema)
        messages, error, text = base, None, None
        for attempt in range(1, self.retries + 2):
            if job.cancelled.is_set():
                return {"ok": False, "error": "cancelled" + (f" (last error: {error})" if error else ""),
                        "attempts": attempt - 1, "text": text}
            est = approx_count(messages) + self.max_tokens
            if not self.reservation.acquire(est, extra=attempt > 1):
                why = "the task's model-call budget is spent (config model_calls_budget / model_tokens_budget)"
                return {"ok": False, "error": why + (f"; last error: {error}" if error else ""),
                        "attempts": attempt - 1, "text": text}
            t0, completion, actual = time.perf_counter(), None, approx_count(messages)
            guided, dropped = self.guided, None
            try:
                try:
                    completion = self._complete(messages, guided)
                except LLMError as e:
                    if not (guided and e.status is not None and 400 <= e.status < 500):
                        raise
                    dropped = self.guided_off = f"the backend refused the schema: {str(e)[:300]}"
                    guided = False
                    completion = self._complete(messages, False)
                text = completion.text or ""
                actual = ((completion.prompt_tokens or approx_count(messages))
                          + (completion.completion_tokens or approx_count(text)))
                error, value = None, text.strip()
                if self.schema is not None:
                    value = parse_reply(text)
                    validate(value, self.schema)
            except LLMError as e:
                error = f"backend error: {e}"
            except SchemaError as e:
                error = str(e)
            finally:
                self.reservation.settle(est, actual)
            self._log(job, i, attempt, messages, completion, error, time.perf_counter() - t0, guided, dropped)
            if error is None:
                return {"ok": True, "value": value, "attempts": attempt}
            if completion is not None:  # guide the retry with what was wrong
                again = (RETRY if self.schema is not None else RETRY_TEXT).format(error=error)
                messages = base + [{"role": "assistant", "content": text},
                                   {"role": "user", "content": again}]
        return {"ok": False, "error": f"failed after {self.retries + 1} attempt(s): {error}",
                "attempts": self.retries + 1, "text": text}

    def _complete(self, messages: list[dict], guided: bool) -> Any:
        if guided:
            return self.llm.complete(messages, max_tokens=self.max_tokens, temperature=0.0,
                                     constraint=JsonSchema(self.schema, "item"))
        return self.llm.complete(messages, max_tokens=self.max_tokens, temperature=0.0)

    def _log(self, job: Job, i: int, attempt: int, messages: list[dict], c: Any, error: str | None,
             seconds: float, guided: bool, guided_off: str | None) -> None:
        body = json.dumps({"messages": messages, "reply": c.text if c is not None else None},
                          ensure_ascii=False)
        meta = {"op": "llm_map", "job": job.id, "item": i, "attempt": attempt, "error": error,
                "ok": error is None, "latency_s": round(seconds, 4), "guided": guided,
                "prompt_sha256": hashlib.sha256(json.dumps(messages).encode("utf-8")).hexdigest()}
        if guided_off is not None:
            meta["guided_off"] = guided_off
        if c is not None:
            meta.update(backend=c.backend, model=c.model, prompt_tokens=c.prompt_tokens,
                        completion_tokens=c.completion_tokens, finish_reason=c.finish_reason)
        try:
            self.log.append(session=self.session, role="assistant", kind="map_call", text=body,
                            meta=meta, origin=Origin.AGENT, sync=False)
        except Exception:  # noqa: BLE001 - a closed log (session ended) must not kill the worker
            pass
