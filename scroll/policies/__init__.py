"""Policies that drive the agent loop without a model.

    from scroll.policies import ReferencePolicy
    llm = ReferencePolicy()            # the LLM protocol; backend="reference-policy"

Modules: reference (ReferencePolicy: the state machine over the chat), programs (the
code cells it writes per question template), oolong_programs (its ms.llm_map programs for
OOLONG-style aggregation questions), mapper (RuleMapper: answers llm_map item calls from the
item's wording; the reference policy routes those calls to it), harness (SimKernel + run_episode: run a
policy on a task without the real kernel; tests and CPU demos only, not a sandbox).
"""
from __future__ import annotations

from .reference import BACKEND, ReferencePolicy, extract_code

__all__ = ["BACKEND", "ReferencePolicy", "extract_code"]
