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
