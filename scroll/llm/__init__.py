"""LLM backends behind one protocol, chosen by config. Nothing else knows which one runs.

    from scroll.llm import LLMConfig, make_llm
    llm = make_llm(LLMConfig.from_yaml("configs/llm/openai.yaml", model="tiny-qwen3"))
    c = llm.complete([{"role": "user", "content": "hi"}], max_tokens=64)
    llm.count_tokens(messages); llm.token_counter_exact; llm.describe(); llm.close()

Backends: `openai` (OpenAI-compatible HTTP: vLLM or any server; openai_http.py), `transformers`
(local model folder; local.py), `scripted` (test double; scripted.py). The light core imports
only the stdlib (+ pyyaml for presets); torch/transformers load inside the transformers
backend.
"""
from __future__ import annotations

from scroll.llm.base import (
    LLM, Completion, LLMError, Message, approx_count, complete_many,
)
from scroll.llm.config import LLMConfig
from scroll.llm.local import TransformersLLM
from scroll.llm.openai_http import OpenAILLM
from scroll.llm.scripted import ScriptedLLM

__all__ = ["LLM", "Completion", "LLMError", "LLMConfig", "Message", "ScriptedLLM",
           "OpenAILLM", "TransformersLLM", "make_llm", "approx_count", "complete_many"]


def make_llm(cfg: LLMConfig) -> LLM:
    """Build the backend `cfg.backend` names (config validated first, before any load)."""
    if not isinstance(cfg, LLMConfig):
        raise TypeError(f"make_llm needs an LLMConfig, got {type(cfg).__name__}")
    cfg.validate()
    if cfg.backend == "openai":
        return OpenAILLM(cfg)
    if cfg.backend == "transformers":
        return TransformersLLM(cfg)
    if cfg.backend == "scripted":
        if not cfg.responses:
            raise ValueError("LLM config backend='scripted' needs a non-empty `responses` list")
        return ScriptedLLM(cfg.responses, model=cfg.model if cfg.model != "auto" else "scripted")
    raise ValueError(f"unknown backend {cfg.backend!r}")  # validate() already refused it


def __getattr__(name: str):
    if name == "OpenAILLM":
        return OpenAILLM
    if name == "TransformersLLM":
        return TransformersLLM
    raise AttributeError(f"module 'scroll.llm' has no attribute {name!r}")
