"""Every environment variable serve/ reads or sets, in one place.

Read: nothing of its own. `SCROLL_MODELS_DIR` (where relative model paths resolve) and
`SCROLL_CONFIG_DIR` (config search path) are read by `scroll.env` (`models_dir`,
`config_dirs`), the one place for Scroll's variables; serve/ uses those functions.

Set for a vLLM server process (`server_env`): offline switches so nothing reaches a hub or
sends usage stats, and every cache/config/temp path pointed into the server's run dir, so a
server leaves no files outside the project's own dirs (HOME included: libraries that write
under `~` write under the run dir instead).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from scroll.env import models_dir  # noqa: F401  (serve.env.models_dir: one definition)

# Never reach a hub, never phone home.
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_DO_NOT_TRACK": "1",
    "DO_NOT_TRACK": "1",
}

# env var -> sub-directory of the run dir
CACHE_DIRS: dict[str, str] = {
    "HOME": "home",
    "TMPDIR": "tmp",
    "XDG_CACHE_HOME": "cache",
    "XDG_CONFIG_HOME": "config",
    "XDG_DATA_HOME": "data",
    "XDG_STATE_HOME": "state",
    "HF_HOME": "cache/huggingface",
    "VLLM_CACHE_ROOT": "cache/vllm",
    "VLLM_CONFIG_ROOT": "config/vllm",
    "TORCHINDUCTOR_CACHE_DIR": "cache/torchinductor",
    "TRITON_CACHE_DIR": "cache/triton",
    "TORCH_HOME": "cache/torch",
    "NUMBA_CACHE_DIR": "cache/numba",
    "OUTLINES_CACHE_DIR": "cache/outlines",
    "CUDA_CACHE_PATH": "cache/nv",
    "MPLCONFIGDIR": "cache/matplotlib",
}

# Variables dropped from the inherited environment: they would send caches elsewhere or
# turn a hub back on.
_DROP_PREFIXES = ("HF_", "HUGGING_FACE_", "VLLM_", "XDG_", "TORCHINDUCTOR_", "TRITON_")
# Variables a server may keep from the caller (paths, locale, GPUs, threads, Ray).
_KEEP = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "USER", "LOGNAME", "SHELL",
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "LD_LIBRARY_PATH", "LD_PRELOAD",
    "VIRTUAL_ENV", "PYTHONPATH", "RAY_ADDRESS", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
    "VLLM_HOST_IP", "VLLM_CPU_OMP_THREADS_BIND", "VLLM_CPU_NUM_OF_RESERVED_CPU",
)


def offline_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default os.environ) plus the offline switches."""
    env = dict(os.environ if base is None else base)
    env.update(OFFLINE_ENV)
    return env


def server_env(
    run_dir: Path,
    *,
    cpu: bool,
    cpu_kvcache_space_gib: int = 1,
    host_ip: str | None = "127.0.0.1",
    extra: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A clean environment for a vLLM server whose files all live under `run_dir`."""
    src = dict(os.environ if base is None else base)
    env = {k: v for k, v in src.items() if k in _KEEP and not k.startswith(_DROP_PREFIXES)}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    for var, sub in CACHE_DIRS.items():
        p = run_dir / sub
        p.mkdir(parents=True, exist_ok=True)
        env[var] = str(p)
    env.update(OFFLINE_ENV)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # never write .pyc files into the installation
    # Without it vLLM finds "its" IP by connect()ing a UDP socket to 8.8.8.8 (no packet is
    # sent, but it is an outbound attempt). One node: loopback. Multi-node (Ray): the
    # caller's VLLM_HOST_IP (the node's fast interface) is kept.
    if host_ip and "VLLM_HOST_IP" not in env:
        env["VLLM_HOST_IP"] = host_ip
    if cpu:
        env["VLLM_CPU_KVCACHE_SPACE"] = str(int(cpu_kvcache_space_gib))
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env
