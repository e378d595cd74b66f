"""LCM settings: thresholds, sizes and the summarizer profile that node ids depend on.

    LcmConfig(context_tokens=6000, window=8192)    # validated on construction

`context_tokens` is the hard threshold of the active context; compaction starts past
`soft_ratio` of it and runs down to `target_ratio` of it (LCM's reference plugin starts at
0.75 and protects a fresh tail of 8 items; leaf 600 / condensed 900 tokens; level 3 cuts
to 512). Like lossless-claw, a routine sweep only makes full nodes (a leaf of a full chunk or
`leaf_min_events` events, a condensed node of `fanout` same-depth nodes) in at most
`max_passes` calls; only past the hard threshold may it condense pairs of any depths. `profile_of(llm, config)` names who summarizes: a node made by another backend,
model, prompt version or size setting gets another id, so a store never mixes them up.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

PROMPT_VERSION = 1


@dataclass(frozen=True)
class LcmConfig:
    context_tokens: int = 8000       # hard threshold: tokens of the rendered active context
    soft_ratio: float = 0.75         # compaction starts past soft_ratio * context_tokens ...
    target_ratio: float = 0.5        # ... and runs down to target_ratio * context_tokens
    fresh_tail: int = 8              # newest context items never compacted below the hard threshold
    leaf_chunk_tokens: int = 2000    # rendered events per leaf, at most (one bigger event goes alone)
    leaf_within_session: bool = False  # True: a leaf never spans two sessions (LCM compacts one
                                       # conversation by tokens; many short sessions would make many tiny leaves)
    leaf_target: int = 600           # level-1 target of a leaf summary (level 2: half)
    condensed_target: int = 900      # level-1 target of a condensed summary
    fanout: int = 4                  # children per condensed node; a routine sweep condenses only a full
                                     # run of `fanout` same-depth nodes (LCM's condensedMinFanout) ...
    fanout_hard: int = 2             # ... past the hard threshold runs down to this many, any depths
                                     # (condensedMinFanoutHard)
    leaf_min_events: int = 8         # a routine leaf pass needs this many raw events outside the fresh
                                     # tail, or a full chunk (LCM's leafMinFanout)
    max_passes: int = 12             # summarizer passes per routine sweep, at most (maxSweepIterations)
    truncate_tokens: int = 512       # level 3's fixed size
    min_gain: int = 8                # a new node must save at least this many context tokens
    window: int = 8192               # one summarizer call: prompt + reply tokens
    temperature: float = 0.0

    def __post_init__(self) -> None:
        checks = [
            (self.context_tokens >= 128, "context_tokens must be >= 128"),
            (0 < self.target_ratio <= self.soft_ratio <= 1, "need 0 < target_ratio <= soft_ratio <= 1"),
            (self.fresh_tail >= 0, "fresh_tail must be >= 0"),
            (self.leaf_chunk_tokens >= 64, "leaf_chunk_tokens must be >= 64"),
            (self.leaf_target >= 16 and self.condensed_target >= 16, "summary targets must be >= 16"),
            (self.fanout >= 2, "fanout must be >= 2"),
            (2 <= self.fanout_hard <= self.fanout, "need 2 <= fanout_hard <= fanout"),
            (self.leaf_min_events >= 1, "leaf_min_events must be >= 1"),
            (self.max_passes >= 1, "max_passes must be >= 1"),
            (self.truncate_tokens >= 16, "truncate_tokens must be >= 16"),
            (self.min_gain >= 1, "min_gain must be >= 1"),
            (self.window >= max(self.leaf_target, self.condensed_target) + 256,
             "window must exceed the summary targets by >= 256 tokens"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"lcm config: {msg}")

    @property
    def soft_tokens(self) -> int:
        return int(self.soft_ratio * self.context_tokens)

    @property
    def target_tokens(self) -> int:
        return int(self.target_ratio * self.context_tokens)

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def sizes_for(window: int, context_tokens: int) -> dict[str, int]:
    """LCM's reference sizes (leaf 600 / condensed 900 / level-3 512 / leaf chunk 2000 tokens for an
    8,000-token context at an 8 k window), scaled down with the smaller of the two ratios.

    Scaling by the window alone is not enough: a 2,000-token active context with 512-token leaf
    summaries holds two of them, so every new leaf forces a condensation and the DAG grows one
    level per few events (measured: 16 events summarized in 3 minutes of a 200 k-token history)."""
    scale = min(1.0, window / 8192, context_tokens / 8000)
    return dict(leaf_target=max(32, int(600 * scale)), condensed_target=max(48, int(900 * scale)),
                truncate_tokens=max(32, int(512 * scale)), leaf_chunk_tokens=max(64, int(2000 * scale)))


def profile_of(llm: Any, config: LcmConfig) -> str:
    """Who summarizes, as the node ids see it: backend, model, prompt version and sizes."""
    d = llm.describe() if hasattr(llm, "describe") else {}
    return (f"{d.get('backend', type(llm).__name__)}:{d.get('model', '?')}|p{PROMPT_VERSION}|"
            f"{config.leaf_target}/{config.condensed_target}/{config.truncate_tokens}/{config.window}")


__all__ = ["LcmConfig", "profile_of", "sizes_for", "PROMPT_VERSION"]
