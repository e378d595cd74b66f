"""Loop configuration: a dataclass filled from `loop.yaml`, overridden by flags, validated first.

    LoopConfig.load()                 # loop.yaml from scroll.env.config_dirs(), else built-ins
    LoopConfig.load("my-loop.yaml", max_steps=4)
    LoopConfig.load("smollm2")        # a name: loop/smollm2.yaml in the config dirs
    LoopConfig.from_yaml(None)        # built-in defaults only
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from . import env
from .packs import pack_names


@dataclass
class LoopConfig:
    max_steps: int = 12              # model calls per task
    max_total_tokens: int = 200_000  # prompt + completion tokens per task
    soft_budget: int = 6_000         # view tokens: evict oldest steps above this
    hard_budget: int = 8_000         # view tokens: never exceeded
    max_new_tokens: int = 1_024
    temperature: float = 0.0
    cell_timeout: float = 30.0       # seconds of wall time per cell
    max_output_chars: int = 4_000    # exposure cap per cell (full output kept in the log)
    memory_limit: str = "4G"
    tier_cap: int = 10               # headline index: entries per tier before a merge
    no_code_strikes: int = 3         # consecutive replies without code before giving up
    backend_retries: int = 2         # extra tries of a failed model call (the backend retries HTTP itself)
    sandbox: bool = True             # False = run model code unsandboxed (loudly warned)
    # the paper's ablations (all True = Scroll); scroll.managers names them no_log / no_kernel / no_index
    history_access: bool = True      # False: `ms` cannot read history; the newest history that fits is in the view
    persistent_kernel: bool = True   # False: every cell starts from an empty namespace (ms + helpers only)
    headline_index: bool = True      # False: evicted steps leave the view without a headline index
    # ms.llm_map / ms.agent_map (scroll.operators): their own budget, apart from the cell's host time
    map_llm: str | None = None       # an LLM config (path or preset name) for llm_map; None: this loop's backend
    model_calls_budget: int = 10_000       # operator model calls per root task (sub-sessions included)
    model_tokens_budget: int = 20_000_000  # their prompt + completion tokens
    map_max_items: int = 20_000      # items per map
    map_max_new_tokens: int = 512    # max_tokens of each llm_map reply
    map_structured: bool = True      # llm_map with a schema asks the backend for it when it enforces it
    agent_map_depth: int = 3         # sub-session depth below the root task
    agent_map_sessions: int = 64     # sub-sessions per root task
    # ms.attach (scroll.files): a file stored whole behind a reference, its summary in the log
    attach_max_bytes: int = 256 << 20  # one attached file; larger: refused before any byte moves
    file_summary_tokens: int = 600     # a file event's text (reference + exploration summary)
    # a task pack (scroll.packs): prompt text + kernel helpers of one task generator; None = the core only
    pack: str | None = None
    # the core system prompt: "full" (documents ms and every helper, ~1,210 SmolLM2 tokens) or "compact" (~420,
    # for small fine-tuned students: scroll.prompts.COMPACT_PROMPT)
    prompt: str = "full"
    # constrained replies (scroll.llm.constraints.REPLY_PATTERN): the backend may only write one HEADLINE line and
    # one ```python block, so a small model's every step parses; needs a backend that enforces it (probed per run)
    constrain_replies: bool = False

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        checks = [
            (self.max_steps >= 1, "max_steps must be >= 1"),
            (self.max_total_tokens >= 1, "max_total_tokens must be >= 1"),
            (0 < self.soft_budget <= self.hard_budget, "need 0 < soft_budget <= hard_budget"),
            (self.hard_budget >= 1024, "hard_budget must be >= 1024 tokens (the system prompt must fit)"),
            (self.max_new_tokens >= 1, "max_new_tokens must be >= 1"),
            (self.cell_timeout > 0, "cell_timeout must be > 0"),
            (self.max_output_chars >= 200, "max_output_chars must be >= 200"),
            (self.tier_cap >= 2, "tier_cap must be >= 2"),
            (self.no_code_strikes >= 1, "no_code_strikes must be >= 1"),
            (self.backend_retries >= 0, "backend_retries must be >= 0"),
            (self.map_llm is None or (isinstance(self.map_llm, str) and self.map_llm.strip() != ""),
             "map_llm must be an LLM config name or path (or null)"),
            (self.model_calls_budget >= 0 and self.model_tokens_budget >= 0, "model budgets must be >= 0"),
            (self.map_max_items >= 1, "map_max_items must be >= 1"),
            (self.map_max_new_tokens >= 1, "map_max_new_tokens must be >= 1"),
            (self.agent_map_depth >= 0, "agent_map_depth must be >= 0"),
            (self.agent_map_sessions >= 0, "agent_map_sessions must be >= 0"),
            (self.attach_max_bytes >= 0, "attach_max_bytes must be >= 0"),
            (self.file_summary_tokens >= 64, "file_summary_tokens must be >= 64"),
            (isinstance(self.map_structured, bool) and isinstance(self.constrain_replies, bool),
             "map_structured and constrain_replies must be true or false"),
            (self.prompt in ("full", "compact"), f"prompt must be 'full' or 'compact' (got {self.prompt!r})"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"loop config: {msg}")
        if self.pack is not None:
            if self.pack not in pack_names():
                raise ValueError(f"loop config: unknown task pack {self.pack!r} (known: {pack_names()})")

    @classmethod
    def from_yaml(cls, path: str | Path | None = None, **overrides: Any) -> "LoopConfig":
        data: dict[str, Any] = {}
        if path is not None:
            data = dict(env.read_yaml(path, section="loop"))
        data.update({k: v for k, v in overrides.items() if v is not None})
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"loop config: unknown keys {sorted(unknown)} (known: {sorted(known)})")
        return cls(**data)

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> "LoopConfig":
        """`path`, else the first `loop.yaml` on the config search path
        (`scroll.env.config_dirs()`), else the built-in defaults; then `overrides`.
        A bare name (no `/`, no suffix, not an existing file) is `loop/NAME.yaml` on the
        config search path."""
        if path is None:
            path = default_path()
        else:
            path = find_named(path)
        return cls.from_yaml(path, **overrides)

    def to_dict(self) -> dict:
        return asdict(self)


def find_named(path: str | Path) -> Path:
    """An existing file as is; a bare name -> the first `loop/NAME.yaml` on the config path."""
    p = Path(path).expanduser()
    name = str(path)
    if p.is_file() or "/" in name or p.suffix:
        return p
    found = env.config_file(f"loop/{name}.yaml")
    if found is None:
        known = sorted({c.stem for d in env.config_dirs() for c in (d / "loop").glob("*.yaml")})
        raise ValueError(f"loop config {name!r}: no such file or named config (named: {known}; "
                         f"looked in {[str(d / 'loop') for d in env.config_dirs()]})")
    return found


def default_path() -> Path | None:
    """The loop config used when none is given: `loop.yaml` in the first config dir that has one."""
    return env.config_file("loop.yaml")
