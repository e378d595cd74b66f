"""`LLMConfig`: which backend, which model, how to call it. Filled from `configs/llm/*.yaml`
(found through `scroll.env.config_dirs`),
overridden by keyword arguments (CLI flags), validated before anything loads.

    cfg = LLMConfig.from_yaml("configs/llm/openai.yaml", base_urls=["http://127.0.0.1:8011/v1"])
    cfg = LLMConfig.from_yaml("tiny-transformers")      # a preset name: configs/llm/<name>.yaml
    cfg.to_dict()                                        # resolved, API key redacted (for logs)

Environment: the only variable this package reads is the one named by `api_key_env`
(default `SCROLL_LLM_API_KEY`), in `LLMConfig.resolve_api_key()`. The transformers backend
*sets* `HF_HUB_OFFLINE=1` / `TRANSFORMERS_OFFLINE=1` before importing transformers.
"""
from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit
from scroll import env

BACKENDS = ("openai", "transformers", "scripted")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16", "float16")


@dataclass
class LLMConfig:
    backend: str = "openai"
    # openai: the served model name ("auto": the first id of GET /v1/models);
    # transformers: a local model folder (relative: cwd, then $SCROLL_MODELS_DIR / ./var/models).
    model: str = "auto"
    # --- generation defaults (complete() arguments override them) ---
    max_tokens: int = 512
    temperature: float = 0.0            # 0 = greedy
    top_p: float = 1.0
    stop: list[str] | None = None
    seed: int | None = None
    # --- openai (HTTP) ---
    base_urls: list[str] = field(default_factory=lambda: ["http://127.0.0.1:8000/v1"])
    api_key: str | None = None          # prefer api_key_env; never logged
    api_key_env: str | None = "SCROLL_LLM_API_KEY"
    connect_timeout_s: float = 5.0
    timeout_s: float = 120.0            # per socket read (a stream may run longer in total)
    max_retries: int = 3                # extra rounds over all URLs after the first
    backoff_base_s: float = 0.5
    backoff_max_s: float = 8.0
    stream: bool = False
    tokenizer_path: str | None = None   # local folder for exact counting; else server /tokenize
    use_server_tokenize: bool = True
    extra_body: dict[str, Any] = field(default_factory=dict)   # e.g. {"top_k": 20}
    # --- transformers (local) ---
    device: str = "auto"
    dtype: str = "auto"
    # --- scripted ---
    responses: list[str] = field(default_factory=list)
    description: str = ""

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None = None, **overrides: Any) -> "LLMConfig":
        """Build from a mapping plus overrides; `None` overrides are ignored (unset flags)."""
        merged = dict(data or {})
        merged.update({k: v for k, v in overrides.items() if v is not None})
        names = {f.name for f in dataclasses.fields(cls)}
        if "base_url" in merged:                       # convenience alias: one URL
            url = merged.pop("base_url")
            merged.setdefault("base_urls", [url] if isinstance(url, str) else url)
        unknown = sorted(set(merged) - names)
        if unknown:
            raise ValueError(f"unknown LLM config key(s) {unknown}; valid keys: {sorted(names)}")
        cfg = cls(**merged)
        return cfg.validate()

    @classmethod
    def from_yaml(cls, path: str | os.PathLike, **overrides: Any) -> "LLMConfig":
        """Load a YAML preset (a path, or a name under configs/llm/) and apply overrides."""
        p = find_preset(path)
        data = env.read_yaml(p)
        try:
            return cls.from_dict(data, **overrides)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{p}: {e}") from None

    @classmethod
    def from_flags(cls, url: str | None = None, preset: str | None = None, **overrides: Any) -> "LLMConfig":
        """The one way command-line flags become a backend config: `preset` (a name under configs/llm/
        or a path; default "openai") with `url` (comma-separated base URLs) and every other override
        that is not None; validated."""
        over = {k: v for k, v in overrides.items() if v is not None}
        if url:
            over["base_urls"] = [u.strip() for u in url.split(",") if u.strip()]
        cfg = cls.from_yaml(preset or "openai", **over)
        cfg.validate()
        return cfg

    # ------------------------------------------------------------------ validation
    def validate(self) -> "LLMConfig":
        """Check every field (types, ranges, URLs); raise ValueError naming the field."""
        def bad(name: str, why: str) -> None:
            raise ValueError(f"LLM config {name}={getattr(self, name)!r}: {why}")

        if self.backend not in BACKENDS:
            bad("backend", f"must be one of {BACKENDS}")
        if not isinstance(self.model, str) or not self.model:
            bad("model", "must be a non-empty string")
        for name in ("max_tokens", "max_retries"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < (1 if name == "max_tokens" else 0):
                bad(name, "must be an integer " + (">= 1" if name == "max_tokens" else ">= 0"))
        for name in ("temperature", "top_p", "connect_timeout_s", "timeout_s",
                     "backoff_base_s", "backoff_max_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                bad(name, "must be a number")
        if self.temperature < 0:
            bad("temperature", "must be >= 0")
        if not 0 < self.top_p <= 1:
            bad("top_p", "must be in (0, 1]")
        for name in ("connect_timeout_s", "timeout_s"):
            if getattr(self, name) <= 0:
                bad(name, "must be > 0")
        if self.backoff_base_s < 0 or self.backoff_max_s < 0:
            bad("backoff_base_s", "backoff times must be >= 0")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            bad("seed", "must be an integer or null")
        if self.stop is not None:
            if isinstance(self.stop, str):
                self.stop = [self.stop]
            if not isinstance(self.stop, list) or not all(isinstance(s, str) and s for s in self.stop):
                bad("stop", "must be a list of non-empty strings")
        if isinstance(self.base_urls, str):
            self.base_urls = [self.base_urls]
        if not isinstance(self.base_urls, list) or not self.base_urls:
            bad("base_urls", "must be a non-empty list of http(s) URLs")
        self.base_urls = [normalize_base_url(u) for u in self.base_urls]
        if len(set(self.base_urls)) != len(self.base_urls):
            bad("base_urls", "has duplicates")
        for name in ("api_key", "api_key_env", "tokenizer_path"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise ValueError(f"LLM config {name}: must be a non-empty string or null")
        if not isinstance(self.extra_body, dict):
            bad("extra_body", "must be a mapping")
        reserved = {"model", "messages", "stream", "max_tokens", "temperature", "stop"} & set(self.extra_body)
        if reserved:
            bad("extra_body", f"may not set {sorted(reserved)} (use the config fields)")
        for name in ("stream", "use_server_tokenize"):
            if not isinstance(getattr(self, name), bool):
                bad(name, "must be true or false")
        if self.device not in DEVICES:
            bad("device", f"must be one of {DEVICES}")
        if self.dtype not in DTYPES:
            bad("dtype", f"must be one of {DTYPES}")
        if not isinstance(self.responses, list) or not all(isinstance(r, str) for r in self.responses):
            bad("responses", "must be a list of strings")
        if self.backend == "transformers" and self.model == "auto":
            bad("model", "the transformers backend needs a local model folder")
        return self

    # ------------------------------------------------------------------ helpers
    def resolve_api_key(self) -> str | None:
        """The API key: `api_key` if set, else the env var named by `api_key_env`.
        The one place this package reads the environment."""
        if self.api_key:
            return self.api_key
        if self.api_key_env:
            return os.environ.get(self.api_key_env) or None
        return None

    def model_folder(self) -> Path:
        """The transformers model folder: absolute, cwd-relative, or under the models dir."""
        p = Path(os.path.expandvars(self.model)).expanduser()
        if p.is_absolute() or p.exists():
            return p.resolve()
        alt = env.models_dir() / p  # SCROLL_MODELS_DIR, /models, ./var/models
        return alt if alt.exists() else p.resolve()

    def to_dict(self) -> dict[str, Any]:
        """Resolved config for logs and reports; the API key is never included."""
        d = dataclasses.asdict(self)
        d["api_key"] = "<set>" if self.api_key else None
        return d


def normalize_base_url(url: Any) -> str:
    """`http://host:port` -> `http://host:port/v1`; keep any other path; drop a trailing '/'."""
    if not isinstance(url, str):
        raise ValueError(f"LLM config base_urls: {url!r} is not a string")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"LLM config base_urls: {url!r} is not an http(s) URL with a host")
    if parts.query or parts.fragment:
        raise ValueError(f"LLM config base_urls: {url!r} must not have a query or fragment")
    try:
        parts.port
    except ValueError:
        raise ValueError(f"LLM config base_urls: {url!r} has a bad port") from None
    path = parts.path.rstrip("/") or "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def preset_dirs() -> list[Path]:
    """`<dir>/llm` for every config dir (scroll.env.config_dirs: $SCROLL_CONFIG_DIR, the
    checkout's configs/, the packaged defaults), first match wins."""
    return [d / "llm" for d in env.config_dirs()]


def find_preset(path_or_name: str | os.PathLike) -> Path:
    p = Path(path_or_name).expanduser()
    if p.is_file():
        return p
    name = str(path_or_name)
    if "/" not in name and not p.suffix:
        for d in preset_dirs():
            cand = d / f"{name}.yaml"
            if cand.is_file():
                return cand
    known = sorted({c.stem for d in preset_dirs() if d.is_dir() for c in d.glob("*.yaml")})
    raise ValueError(f"LLM config {path_or_name!s}: no such file or preset (presets: {known}; "
                     f"looked in {[str(d) for d in preset_dirs()]})")
