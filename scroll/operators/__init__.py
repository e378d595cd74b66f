"""LCM's operators inside the Scroll kernel: `ms.llm_map` and `ms.agent_map`.

Modules: engine (OperatorEngine: the capability's operator methods, staging, jobs,
replay), jobs (Job: a map in its own worker threads, JSONL results), llm_map (one
stateless call per item, schema validation, retries, logging), agent_map (sub-sessions
and the scope-reduction rule), schema (the JSON-schema subset), budget (ModelBudget:
model calls and tokens per root task), limits (OperatorLimits).
"""
from __future__ import annotations

from .agent_map import Delegation, TaskTree, check_delegation
from .budget import MeteredLLM, ModelBudget
from .engine import OperatorEngine
from .jobs import Job, JobState
from .limits import OperatorLimits
from .schema import SchemaError, check_schema, parse_reply, validate

__all__ = ["Delegation", "Job", "JobState", "MeteredLLM", "ModelBudget", "OperatorEngine", "OperatorLimits",
           "SchemaError", "TaskTree", "check_delegation", "check_schema", "parse_reply", "validate"]
