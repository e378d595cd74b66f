"""`RuleMapper`: a labelled, non-LLM answerer of `ms.llm_map` labelling calls (a test double).

An llm_map call (scroll.operators.llm_map.item_messages) is two messages: MAP_SYSTEM, then
"<instruction>\\n\\nItem:\\n<item>" and, with a schema, "Reply with only a JSON value that
matches this JSON schema:\\n<schema>". The mapper reads the ITEM TEXT only (the instance
after "Instance:" when the item is an OOLONG line) and labels it by a rule over the question's
wording, a small TREC-coarse question classifier:

    abbreviation                       "... stand for", "full form of", "acronym"
    human being                        "Who ...", "Whom ...", "Whose ..."
    location                           "Where ...", "In which country/city ...", "Which country ..."
    numeric value                      "How many/much/tall/far/long/old ...", "When ...", "What year ..."
    description and abstract concept   "What is the meaning of ...", "How does/do ... work", "Why ..."
    entity                             "What kind/type of ...", "Which ...", any other "What ..."

It never sees labels, answers or the label sidecar: only the messages of the call. The label
it picks must be one of the schema's enum (matched by name or a short alias); otherwise the
reply is `unknown`, which fails validation, and llm_map reports that item's failure. Its
replies say `backend="rule-mapper"` so they never pass for a model's.

    m = RuleMapper()
    m.complete(item_messages(prompt, "Date: Jun 16, 2024 || User: 1 || Instance: Where is Lyon ?",
                             {"type": "object", "properties": {"label": {"enum": [...]}}}))
    # -> Completion(text='{"label": "location"}', backend="rule-mapper", ...)
"""
from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

from scroll.llm.base import Completion, approx_count
from scroll.operators.llm_map import MAP_SYSTEM

BACKEND = "rule-mapper"
VERSION = 1

# (label, wording rule), first match wins; matched against the instance, case-insensitively
RULES: tuple[tuple[str, re.Pattern], ...] = tuple((label, re.compile(rx, re.I)) for label, rx in (
    ("abbreviation", r"\bstands? for\b|\bfull form of\b|\bacronym\b|\babbreviat"),
    ("human being", r"^(?:who|whom|whose)\b|^what is the name of the (?:person|man|woman)\b"),
    ("location", r"^where\b|^in (?:which|what) (?:country|city|continent|state|region)\b"
                 r"|^(?:which|what) (?:country|city|continent|state|region)\b"),
    ("numeric value", r"^how (?:many|much|tall|far|long|old|big|high|deep|fast|often|large)\b|^when\b"
                      r"|^(?:in )?what year\b|^what (?:is the )?(?:population|temperature|distance|date)\b"),
    ("description and abstract concept", r"^what is the meaning of\b|^how (?:does|do|did|is|are|can)\b|^why\b"
                                         r"|^(?:define|describe)\b|^what does .+ mean\b"),
    ("entity", r"^what (?:kind|type|sort) of\b|^which\b|^what\b"),
))
ALIASES = {"abbreviation": ("abbreviation", "abbr", "abbrev"),
           "human being": ("human being", "human", "person", "hum"),
           "location": ("location", "loc", "place"),
           "numeric value": ("numeric value", "numeric", "number", "num"),
           "description and abstract concept": ("description and abstract concept", "description", "desc"),
           "entity": ("entity", "enty", "thing")}
_ITEM = re.compile(r"\n\nItem:\n(?P<item>.*?)(?:\n\nReply with only a JSON value that matches this JSON schema:\n"
                   r"(?P<schema>.*))?\Z", re.S)
_INSTANCE = re.compile(r"\|\|\s*Instance:\s*(?P<text>.*?)(?:\s*\|\|.*)?$", re.S)


class MapCallError(ValueError):
    """The messages are not an llm_map call the mapper can read."""


def classify(text: str) -> str | None:
    """The TREC-coarse label the rule gives a question's wording (None: no rule matches)."""
    q = " ".join(str(text).split())
    for label, rx in RULES:
        if rx.search(q):
            return label
    return None


def instance_of(item: str) -> str:
    """The instance of an OOLONG item line ("Date: .. || User: .. || Instance: <text>"), else the item."""
    m = _INSTANCE.search(item)
    return m.group("text").strip() if m else item.strip()


def read_call(messages: list[dict]) -> tuple[str, dict | None]:
    """(item text, schema or None) of an llm_map call's first user message; MapCallError if none."""
    for m in messages:
        if m.get("role") == "user":
            found = _ITEM.search(str(m.get("content", "")))
            if found is None:
                raise MapCallError("not an llm_map call: no 'Item:' section in the first user message")
            schema = None
            if found.group("schema"):
                try:
                    schema = json.loads(found.group("schema"))
                except ValueError as e:
                    raise MapCallError(f"the call's schema is not JSON: {e}") from None
            return found.group("item"), schema
    raise MapCallError("not an llm_map call: no user message")


def _enum(schema: dict | None) -> tuple[list | None, bool]:
    """(the allowed labels, whether the value is an object {"label": ...})."""
    if not isinstance(schema, dict):
        return None, False
    prop = (schema.get("properties") or {}).get("label") if schema.get("type") == "object" else None
    if isinstance(prop, dict):
        return prop.get("enum"), True
    return schema.get("enum"), False


def pick(label: str | None, allowed: list | None) -> str | None:
    """`label` as the allowed set spells it (by name or alias), or None when it has none."""
    if label is None or allowed is None:
        return label
    names = {str(a).strip().lower(): a for a in allowed}
    for alias in ALIASES.get(label, (label,)):
        if alias in names:
            return names[alias]
    return None


def is_map_call(messages: list[dict]) -> bool:
    """Whether `messages` are an llm_map item call (its fixed system message)."""
    return bool(messages) and messages[0].get("role") == "system" and messages[0].get("content") == MAP_SYSTEM


class RuleMapper:
    """Answers llm_map labelling calls by RULES over the item's wording (module docstring)."""

    backend = BACKEND

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def reply(self, messages: list[dict]) -> str:
        item, schema = read_call(messages)
        allowed, as_object = _enum(schema)
        label = pick(classify(instance_of(item)), allowed)
        if label is None:
            return "unknown"
        if as_object:
            return json.dumps({"label": label})
        return json.dumps(label) if schema is not None else label

    def complete(self, messages: list[dict], *, max_tokens: int | None = None, temperature: float | None = None,
                 stop: list[str] | None = None, **kw: Any) -> Completion:
        t0 = time.perf_counter()
        text = self.reply(messages)
        with self._lock:
            self.calls += 1
        return Completion(text=text, prompt_tokens=approx_count(messages), completion_tokens=approx_count(text),
                          model=BACKEND, latency_s=time.perf_counter() - t0, backend=BACKEND,
                          finish_reason="stop", raw={"backend": BACKEND, "version": VERSION})

    def count_tokens(self, text_or_messages) -> int:
        return approx_count(text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return False

    def describe(self) -> dict[str, Any]:
        return {"backend": BACKEND, "model": BACKEND, "version": VERSION,
                "policy": "scroll.policies.mapper.RuleMapper",
                "note": "deterministic non-LLM labeller of llm_map items by the wording of the item "
                        "(TREC-coarse rules); never reads labels; not a model result",
                "token_counter": "approximate"}

    def close(self) -> None:
        pass
