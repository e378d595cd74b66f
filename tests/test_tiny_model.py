"""The tiny Qwen3 model: builds locally, loads and generates in transformers, masks assistants."""
from __future__ import annotations

import json
import stat
import time

import pytest


pytestmark = pytest.mark.model


def test_folder_is_a_normal_hf_model(tiny_model_dir):
    from distill.tiny import REQUIRED_FILES, SPEC

    for f in REQUIRED_FILES + ("generation_config.json", "chat_template.jinja"):
        assert (tiny_model_dir / f).is_file(), f
        assert stat.S_IMODE((tiny_model_dir / f).stat().st_mode) & 0o004, f"{f} not world-readable"
    cfg = json.loads((tiny_model_dir / "config.json").read_text())
    assert cfg["architectures"] == ["Qwen3ForCausalLM"] and cfg["model_type"] == "qwen3"
    for k, v in SPEC.items():
        assert cfg.get(k, cfg.get("rope_parameters", {}).get(k)) == v, k
    size = (tiny_model_dir / "model.safetensors").stat().st_size
    assert 15e6 < size < 25e6


def test_loads_generates_and_counts_params(tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    n = sum(p.numel() for p in model.parameters())
    assert 4.0e6 < n < 5.0e6, n
    assert model.config.tie_word_embeddings
    assert len(tok) == 8192
    for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        ids = tok.encode(t, add_special_tokens=False)
        assert len(ids) == 1, (t, ids)
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    text = "def foo(bar):\n    return bar + 1\n"
    assert tok.decode(tok.encode(text, add_special_tokens=False)) == text  # byte-level: lossless
    enc = tok.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True,
                                  return_tensors="pt", return_dict=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=6, do_sample=False)
    assert out.shape[1] == enc["input_ids"].shape[1] + 6 or out[0, -1].item() in (
        tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>"))


def test_assistant_mask_marks_only_assistant_tokens(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    msgs = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "print 2+2"},
        {"role": "assistant", "content": "```python\nprint(2 + 2)\n```"},
        {"role": "user", "content": "4. Now done?"},
        {"role": "assistant", "content": "FINAL: yes"},
    ]
    out = tok.apply_chat_template(msgs, tokenize=True, return_dict=True,
                                  return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    assert len(ids) == len(mask) and 0 < sum(mask) < len(ids)
    masked = tok.decode([i for i, m in zip(ids, mask) if m])
    assert masked == "```python\nprint(2 + 2)\n```<|im_end|>FINAL: yes<|im_end|>"
    unmasked = tok.decode([i for i, m in zip(ids, mask) if not m])
    assert "You are terse." in unmasked and "print 2+2" in unmasked
    assert "FINAL" not in unmasked and "<|im_start|>assistant" in unmasked
    # The rendered text is plain ChatML.
    assert tok.apply_chat_template(msgs[:2], tokenize=False, add_generation_prompt=True) == (
        "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nprint 2+2<|im_end|>\n"
        "<|im_start|>assistant\n")


def test_content_parts_render_like_strings(tiny_model_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    a = tok.apply_chat_template([{"role": "user", "content": "abc"}], tokenize=False)
    b = tok.apply_chat_template([{"role": "user", "content": [{"type": "text", "text": "abc"}]}],
                                tokenize=False)
    assert a == b


def test_cached_rebuild_is_instant_and_deterministic(tiny_model_dir, tmp_path):
    from distill.tiny import build_tiny_model, is_cached

    t = time.time()
    assert build_tiny_model(tiny_model_dir) == tiny_model_dir
    assert time.time() - t < 2.0
    assert is_cached(tiny_model_dir) and not is_cached(tmp_path / "nothing")
    # Same seed -> same tokenizer (training is deterministic on the same corpus).
    other = build_tiny_model(tmp_path / "again", seed=0)
    assert (other / "tokenizer.json").read_bytes() == (tiny_model_dir / "tokenizer.json").read_bytes()
    assert not list(tmp_path.glob(".again.build-*")), "build temp dir left behind"


def test_cli_models_tiny_json(tiny_model_dir):
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["models", "tiny", str(tiny_model_dir), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["ok"] and info["cached"] and info["path"] == str(tiny_model_dir)
    assert 4.0e6 < info["params"] < 5.0e6
