"""`OperatorLimits`: the bounds of llm_map / agent_map for one session (and its task tree).

The loop config (scroll.config.LoopConfig) sets the ones a user tunes (`map_llm`,
`model_calls_budget`, `model_tokens_budget`, `map_max_items`, `map_max_new_tokens`, `map_structured`,
`agent_map_depth`, `agent_map_sessions`); the rest are protocol bounds.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class OperatorLimits:
    map_llm: str | None = None            # an LLM config (path or preset name); None: the loop's backend
    model_calls_budget: int = 10_000      # model calls per root task (all its maps and sub-sessions)
    model_tokens_budget: int = 20_000_000  # prompt + completion tokens per root task
    map_max_items: int = 20_000           # items per map (a larger list: map it in parts)
    map_max_new_tokens: int = 512         # max_tokens of each llm_map reply
    map_structured: bool = True           # ask the map backend for the schema when it enforces constraints
    agent_map_depth: int = 3              # sub-session depth below the root task
    agent_map_sessions: int = 64          # sub-sessions per root task
    map_max_bytes: int = 64 << 20         # one map's items as JSON
    map_max_item_bytes: int = 256 << 10   # one item as JSON
    map_max_concurrency: int = 64
    agent_map_max_concurrency: int = 8
    map_max_retries: int = 10
    max_live_jobs: int = 8                # running or staged maps per session
    max_prompt_chars: int = 65_536
    max_schema_chars: int = 16_384
    wait_slice: float = 0.25              # longest one job_wait holds the thread that answers `ms`
    results_page_bytes: int = 2 << 20     # one job_results reply

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "map_structured":
                if not isinstance(v, bool):
                    raise ValueError(f"operator limits: map_structured must be true or false, got {v!r}")
                continue
            if f.name != "map_llm" and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise ValueError(f"operator limits: {f.name} must be a number >= 0, got {v!r}")
        if self.agent_map_depth < 0 or self.map_max_concurrency < 1 or self.agent_map_max_concurrency < 1:
            raise ValueError("operator limits: concurrency caps must be >= 1")

    @classmethod
    def from_config(cls, cfg: Any) -> "OperatorLimits":
        """The fields a LoopConfig (or any object) carries under the same names."""
        return cls(**{f.name: getattr(cfg, f.name) for f in fields(cls) if hasattr(cfg, f.name)})
