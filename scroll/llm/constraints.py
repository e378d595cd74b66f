"""Constrained decoding: a reply that must match a JSON schema or a regular expression.

    llm.complete(messages, constraint=JsonSchema({"type": "object", ...}))
    llm.complete(messages, constraint=Regex(REPLY_PATTERN))

A backend that can enforce a constraint decodes only tokens that keep the reply inside it:
- `openai` (vLLM's structured outputs, xgrammar by default): a JsonSchema goes out as the
  OpenAI `response_format` {"type": "json_schema", ...}; a Regex as vLLM's
  `structured_outputs: {"regex": ...}`;
- `transformers`: an xgrammar logits processor (scroll.llm.grammar), the engine vLLM uses, so
  both backends accept the same schemas and patterns.
Other backends (scripted replies, the labelled reference policies) ignore it. Whether one
really enforces it is never assumed: `probe(llm)` asks for a nonce that only a constrained
decoder produces, so a server that silently drops `response_format` is caught.
Callers keep their own validation: a constraint makes a parseable reply likely, the
validator (scroll.operators.schema) decides.
"""
from __future__ import annotations

import json
import secrets
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Union

from .base import LLMError


@dataclass(frozen=True)
class JsonSchema:
    """The reply is one JSON value matching `schema` (scroll.operators.schema's subset)."""

    schema: dict
    name: str = "reply"


@dataclass(frozen=True)
class Regex:
    """The reply is a full match of `pattern` (the grammar engine's regex dialect: no lookaround,
    no backreferences, no lazy quantifiers)."""

    pattern: str


Constraint = Union[JsonSchema, Regex]

# The agent loop's reply (LoopConfig.constrain_replies): one HEADLINE line of at most 160 characters (an untrained
# model otherwise spends its whole max_tokens on the headline and never opens the cell), then ONE fenced python
# block, and nothing after it. The cell may hold single or double backticks, never three in a row; its length is
# bounded by max_tokens, not by the pattern: the grammar engine unrolls a bounded repeat, and a {1,6000} cell cost
# 200 ms of mask per token on this CPU (the 160-character headline: 0.04 ms).
REPLY_PATTERN = r"HEADLINE: [^\n]{1,160}\n```python\n([^`]|`[^`]|``[^`])+```"


def openai_fields(constraint: Constraint) -> dict[str, Any]:
    """The chat-completions request fields that ask an OpenAI-compatible server for it."""
    if isinstance(constraint, JsonSchema):
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": constraint.name, "schema": constraint.schema,
                                                    "strict": True}}}
    if isinstance(constraint, Regex):
        return {"structured_outputs": {"regex": constraint.pattern}}
    raise TypeError(f"not a constraint: {constraint!r}")


@dataclass(frozen=True)
class Support:
    """What `probe` found: whether the backend enforces constraints, and why not when it does not."""

    enforced: bool
    reason: str
    backend: str

    def to_dict(self) -> dict[str, Any]:
        return {"enforced": self.enforced, "reason": self.reason, "backend": self.backend}


PROBE_BACKENDS = ("openai", "transformers")  # the backends that may enforce a constraint
_PROBE_PROMPT = [{"role": "user", "content": "Reply with a JSON object."}]
_cache: "weakref.WeakKeyDictionary[Any, Support]" = weakref.WeakKeyDictionary()  # a backend's finding lives with it
_lock = threading.Lock()


def _backend(llm: Any) -> str:
    try:
        return str(llm.describe().get("backend", type(llm).__name__))
    except Exception:  # noqa: BLE001 - a backend that cannot describe itself enforces nothing we know of
        return type(llm).__name__


def probe(llm: Any, *, refresh: bool = False) -> Support:
    """Whether `llm` enforces constraints, asked once per backend object (cached).

    The probe's schema allows exactly one reply, {"probe": "<random nonce>"}, and the prompt does
    not name the nonce: only a decoder that applies the schema writes it. A request the server
    refuses (HTTP 4xx) or a reply without the nonce means "not enforced", with the reason."""
    with _lock:
        try:
            hit = None if refresh else _cache.get(llm)
        except TypeError:  # an object without weak references (or unhashable): asked every time
            hit = None
        if hit is not None:
            return hit
    backend = _backend(llm)
    if backend not in PROBE_BACKENDS:
        found = Support(False, f"the {backend!r} backend has no constrained decoding", backend)
    else:
        found = _ask(llm, backend)
    with _lock:
        try:
            _cache[llm] = found
        except TypeError:
            pass
    return found


def _ask(llm: Any, backend: str) -> Support:
    nonce = "p" + secrets.token_hex(4)
    schema = {"type": "object", "properties": {"probe": {"enum": [nonce]}}, "required": ["probe"],
              "additionalProperties": False}
    try:
        c = llm.complete(_PROBE_PROMPT, max_tokens=32, temperature=0.0, constraint=JsonSchema(schema, "probe"))
    except LLMError as e:
        return Support(False, f"the backend refused a JSON-schema request: {str(e)[:300]}", backend)
    except TypeError as e:  # a backend object without the `constraint` keyword
        return Support(False, f"the backend takes no constraint ({e})", backend)
    try:
        value = json.loads((c.text or "").strip())
    except ValueError:
        value = None
    if value == {"probe": nonce}:
        return Support(True, "the backend wrote the probe's nonce (schema enforced)", backend)
    return Support(False, "the backend ignored the schema (its reply to the probe was "
                          f"{(c.text or '')[:80]!r}, not the nonce)", backend)
