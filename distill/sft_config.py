"""The SFT run's configuration: a dataclass from YAML (configs/distill/NAME.yaml), flags
override, validated before any model loads; errors name what to fix (distill/sft.py trains)."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scroll.env import read_yaml


class ConfigError(ValueError):
    """A config or data problem found before any model loads; the message says what to fix."""


@dataclass
class LoraSpec:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: Any = "all-linear"   # "all-linear" = every linear projection except lm_head


@dataclass
class SFTRunConfig:
    model: str = ""                 # local HF model folder (the student's base)
    data: str = ""                  # folder with train.jsonl and dev.jsonl
    out: str = ""                   # output folder
    full: bool = False              # full fine-tuning instead of LoRA
    lora: LoraSpec = field(default_factory=LoraSpec)
    max_length: int = 2048          # longer samples are dropped and counted
    epochs: float = 1.0
    max_steps: int = -1             # > 0 overrides epochs
    lr: float = 2e-4
    lr_scheduler: str = "cosine"
    warmup_ratio: float = 0.03
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    batch_size: int = 1             # per device
    grad_accum: int = 8
    eval_batch_size: int = 1
    bf16: Any = "auto"              # auto | true | false
    dtype: str = "auto"             # weights as loaded: auto (bf16 on CUDA, fp32 on CPU) | float32 | bfloat16
    gradient_checkpointing: bool = False
    device: str = "auto"            # auto | cpu | cuda
    seed: int = 0
    eval_steps: int = 50            # 0 = evaluate only at the end
    save_steps: int = 50
    save_total_limit: int = 2
    logging_steps: int = 1
    max_train_samples: int = 0      # 0 = all
    max_dev_samples: int = 0        # 0 = all (dev eval is a forward pass per sample: cap it on CPU)
    resume: bool = True             # continue from OUT's last checkpoint when there is one
    merge: bool = True              # write OUT/merged at the end

    # ---- loading -----------------------------------------------------------------------
    @classmethod
    def from_dict(cls, raw: dict, source: str = "config") -> "SFTRunConfig":
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: expected a mapping of keys, got {type(raw).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown}; known: {sorted(names)}")
        kw = dict(raw)
        lora = kw.pop("lora", None) or {}
        if not isinstance(lora, dict):
            raise ConfigError(f"{source}: 'lora' must be a mapping (r, alpha, dropout, target_modules)")
        lnames = {f.name for f in dataclasses.fields(LoraSpec)}
        if set(lora) - lnames:
            raise ConfigError(f"{source}: unknown lora key(s) {sorted(set(lora) - lnames)}; known: {sorted(lnames)}")
        cfg = cls(**kw, lora=LoraSpec(**lora))
        cfg._coerce(source)
        return cfg

    def _coerce(self, source: str) -> None:
        ints = ("max_length", "max_steps", "batch_size", "grad_accum", "eval_batch_size", "seed",
                "eval_steps", "save_steps", "save_total_limit", "logging_steps",
                "max_train_samples", "max_dev_samples")
        floats = ("epochs", "lr", "warmup_ratio", "weight_decay", "max_grad_norm")
        for k in ints:
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{source}: {k} must be an integer, got {v!r}")
        for k in floats:
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"{source}: {k} must be a number, got {v!r}")
            setattr(self, k, float(v))
        for k in ("full", "gradient_checkpointing", "resume", "merge"):
            if not isinstance(getattr(self, k), bool):
                raise ConfigError(f"{source}: {k} must be true or false, got {getattr(self, k)!r}")
        for k in ("r", "alpha"):
            v = getattr(self.lora, k)
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(f"{source}: lora.{k} must be an integer, got {v!r}")
        for k in ("model", "data", "out"):
            setattr(self, k, "" if getattr(self, k) is None else str(getattr(self, k)))

    def with_overrides(self, **over: Any) -> "SFTRunConfig":
        """A copy with the non-None keyword values replacing the config's (CLI flags)."""
        return dataclasses.replace(self, **{k: v for k, v in over.items() if v is not None})

    def validate(self) -> "SFTRunConfig":
        """Check every value (and that the model folder and data files exist) before any
        model loads; paths become absolute. Raises ConfigError with one clear message."""
        errs: list[str] = []
        for k in ("model", "data", "out"):
            if not getattr(self, k):
                errs.append(f"{k} is not set (in the YAML or by --{k})")
        pos = ("max_length", "batch_size", "grad_accum", "eval_batch_size", "save_steps",
               "save_total_limit", "logging_steps")
        errs += [f"{k} must be > 0, got {getattr(self, k)}" for k in pos if getattr(self, k) <= 0]
        errs += [f"{k} must be >= 0, got {getattr(self, k)}" for k in
                 ("eval_steps", "max_train_samples", "max_dev_samples", "weight_decay") if getattr(self, k) < 0]
        if self.max_steps == 0 or self.max_steps < -1:
            errs.append(f"max_steps must be > 0 (or -1: use epochs), got {self.max_steps}")
        if self.max_steps == -1 and not self.epochs > 0:
            errs.append(f"epochs must be > 0 when max_steps is not set, got {self.epochs}")
        if not 0 < self.lr < 1:
            errs.append(f"lr must be in (0, 1), got {self.lr}")
        if not 0 <= self.warmup_ratio < 1:
            errs.append(f"warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        sched = ("linear", "cosine", "constant", "constant_with_warmup", "cosine_with_min_lr")
        if self.lr_scheduler not in sched:
            errs.append(f"lr_scheduler must be one of {sched}, got {self.lr_scheduler!r}")
        if str(self.bf16).lower() not in ("auto", "true", "false"):
            errs.append(f"bf16 must be auto, true or false, got {self.bf16!r}")
        if self.dtype not in ("auto", "float32", "bfloat16"):
            errs.append(f"dtype must be auto, float32 or bfloat16, got {self.dtype!r}")
        if self.device not in ("auto", "cpu", "cuda"):
            errs.append(f"device must be auto, cpu or cuda, got {self.device!r}")
        if not self.full:
            if self.lora.r <= 0 or self.lora.alpha <= 0:
                errs.append(f"lora.r and lora.alpha must be > 0, got {self.lora.r}, {self.lora.alpha}")
            if not 0 <= float(self.lora.dropout) < 1:
                errs.append(f"lora.dropout must be in [0, 1), got {self.lora.dropout}")
            tm = self.lora.target_modules
            if not (tm == "all-linear" or (isinstance(tm, list) and tm and all(isinstance(t, str) for t in tm))):
                errs.append(f"lora.target_modules must be 'all-linear' or a list of module names, got {tm!r}")
        if errs:
            raise ConfigError("invalid SFT config: " + "; ".join(errs))
        model = resolve_model_dir(self.model)
        if not (model / "config.json").is_file():
            raise ConfigError(f"model folder {model} has no config.json (build it first, e.g. "
                              "`scroll tiny-model DIR` or `scroll models smollm2 DIR`)")
        data = Path(self.data).expanduser().resolve()
        if not (data / "train.jsonl").is_file():
            raise ConfigError(f"no {data / 'train.jsonl'} (export the SFT data first)")
        if self.eval_steps > 0 and not (data / "dev.jsonl").is_file():
            raise ConfigError(f"no {data / 'dev.jsonl'} (needed for dev loss; or set eval_steps: 0)")
        out = Path(self.out).expanduser().resolve()
        if out.exists() and not out.is_dir():
            raise ConfigError(f"out {out} exists and is not a folder")
        return dataclasses.replace(self, model=str(model), data=str(data), out=str(out))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def resolve_model_dir(model: str) -> Path:
    """A model path as given when it exists (or is absolute), else under SCROLL_MODELS_DIR."""
    p = Path(model).expanduser()
    if p.is_absolute() or p.exists():
        return p.resolve()
    from scroll.env import models_dir

    cand = models_dir() / p
    return cand.resolve() if cand.exists() else p.resolve()


def find_config(name_or_path: str | os.PathLike) -> Path:
    """A YAML path as given, else `distill/NAME(.yaml)` over the config search path."""
    p = Path(name_or_path).expanduser()
    if p.is_file():
        return p.resolve()
    from scroll.env import config_dirs, config_file

    name = p.name if p.suffix in (".yaml", ".yml") else p.name + ".yaml"
    found = config_file(Path("distill") / name)
    if found is None:
        raise ConfigError(f"no SFT config {name_or_path!s}: not a file, and no distill/{name} in "
                          f"{[str(d) for d in config_dirs()]}")
    return found


def load_config(name_or_path: str | os.PathLike, **overrides: Any) -> SFTRunConfig:
    """Read the YAML, apply non-None overrides, validate. No model loads."""
    path = find_config(name_or_path)
    try:
        raw = read_yaml(path)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return SFTRunConfig.from_dict(raw, source=str(path)).with_overrides(**overrides).validate()
