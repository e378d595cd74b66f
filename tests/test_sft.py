"""SFT (distill/sft.py) on the tiny random Qwen3: completion-only labels, LoRA weights change,
loss falls, resume continues, merged folder loads and generates, loss PNG, config errors, CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = "You are an agent. Reply with text and one ```python cell."


def reply(i: int) -> str:
    return f"Step {i}: search then answer.\n```python\nr = ms.search('item {i}')\nprint(r[:2])\n```"


def row(i: int, history: int = 1, pad: str = "") -> dict:
    prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Task {i % 4}: find item {i % 4}.{pad}"}]
    for h in range(history):  # earlier steps of the same episode: replies must NOT carry labels
        prompt += [{"role": "assistant", "content": f"EARLIER-REPLY {h}\n```python\nprint({h})\n```"},
                   {"role": "user", "content": f"output {h}"}]
    return {"prompt": prompt, "completion": [{"role": "assistant", "content": reply(i % 4)}]}


def multi_turn_row(i: int) -> dict:
    """A chain of two steps as one `messages` row (export --trajectories): both replies train."""
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Task {i % 4}: find item {i % 4}."},
            {"role": "assistant", "content": reply(i % 4)}, {"role": "user", "content": f"output {i}"},
            {"role": "assistant", "content": f"FINAL-REPLY {i % 4}\n```python\nfinal('item {i % 4}')\n```"}]
    return {"messages": msgs}


def write_data(d: Path, n_train: int = 24, n_dev: int = 4, overlong: int = 0) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "train.jsonl", "w") as f:
        for i in range(n_train):
            f.write(json.dumps(row(i, history=i % 3)) + "\n")
        for i in range(overlong):
            f.write(json.dumps(row(i, pad=" filler" * 2000)) + "\n")
    with open(d / "dev.jsonl", "w") as f:
        for i in range(n_dev):
            f.write(json.dumps(row(i + 1, history=1)) + "\n")
    (d / "train.meta.jsonl").write_text("{}\n")  # ignored
    return d


def cfg_for(model: Path, data: Path, out: Path, **kw):
    from distill.sft_config import SFTRunConfig

    base = {"model": str(model), "data": str(data), "out": str(out), "max_length": 512,
            "max_steps": 30, "lr": 3e-3, "batch_size": 4, "grad_accum": 1, "eval_batch_size": 4,
            "warmup_ratio": 0.0, "lr_scheduler": "constant", "eval_steps": 10, "save_steps": 10,
            "lora": {"r": 8, "alpha": 16, "dropout": 0.0}}
    base.update(kw)
    return SFTRunConfig.from_dict(base).validate()


# ---- config validation: no model needed ------------------------------------------------------
def test_shipped_configs_parse():
    import yaml

    from distill.sft_config import SFTRunConfig, find_config

    names = sorted(p.stem for p in (ROOT / "configs/distill").glob("*.yaml"))
    assert {"tiny-ci", "smollm2-135m-cpu", "qwen3-1.7b-gpu", "qwen3-0.6b-gpu"} <= set(names)
    for n in names:
        path = find_config(n)
        assert path.parent.name == "distill"
        cfg = SFTRunConfig.from_dict(yaml.safe_load(path.read_text()), str(path))
        assert cfg.max_length > 0 and cfg.lr > 0 and cfg.save_total_limit == 2
        assert cfg.lora.target_modules == "all-linear"


def test_config_errors_are_clear(tmp_path, tiny_model_dir):
    from distill.sft_config import ConfigError, SFTRunConfig, load_config

    data = write_data(tmp_path / "data")
    ok = {"model": str(tiny_model_dir), "data": str(data), "out": str(tmp_path / "o")}
    cases = [
        ({**ok, "learning_rate": 1e-3}, "unknown key(s) ['learning_rate']"),
        ({**ok, "lora": {"rank": 4}}, "unknown lora key(s) ['rank']"),
        ({**ok, "lr": 5}, "lr must be in (0, 1)"),
        ({**ok, "lr": "fast"}, "lr must be a number"),
        ({**ok, "max_length": 0}, "max_length must be > 0"),
        ({**ok, "batch_size": 1.5}, "batch_size must be an integer"),
        ({**ok, "max_steps": 0}, "max_steps must be > 0"),
        ({**ok, "bf16": "maybe"}, "bf16 must be auto, true or false"),
        ({**ok, "lora": {"target_modules": 3}}, "lora.target_modules"),
        ({**ok, "model": str(tmp_path / "nomodel")}, "has no config.json"),
        ({**ok, "data": str(tmp_path)}, "train.jsonl"),
        ({k: v for k, v in ok.items() if k != "out"}, "out is not set"),
    ]
    for raw, msg in cases:
        with pytest.raises(ConfigError) as e:
            SFTRunConfig.from_dict(raw).validate()
        assert msg in str(e.value), (msg, str(e.value))
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="no SFT config nope"):
        load_config("nope")


def test_bad_data_lines_name_the_line(tmp_path):
    from distill.sft_data import ConfigError, read_samples

    f = tmp_path / "train.jsonl"
    good = json.dumps(row(0))
    for line, msg in [("{not json", "not JSON"), ('{"messages": []}', "'messages' must be a non-empty list"),
                      ('{"text": "x"}', "expected {'prompt'"),
                      (json.dumps({"messages": [{"role": "user", "content": "x"}]}), "must end with the assistant"),
                      (json.dumps(multi_turn_row(0)), "a messages row in a file of prompt-completion rows"),
                      (json.dumps({"prompt": [{"role": "user", "content": "x"}],
                                   "completion": [{"role": "user", "content": "y"}]}), "exactly one assistant")]:
        f.write_text(good + "\n" + line + "\n")
        with pytest.raises(ConfigError, match=f"train.jsonl:2: .*{msg}"):
            read_samples(f)


# ---- training on the tiny model -----------------------------------------------------------
@pytest.fixture(scope="module")
def trained(tiny_model_dir, tmp_path_factory):
    """One 30-step LoRA run on a small repeated dataset: (prepared, before, result)."""
    from distill.sft import finish, prepare

    root = tmp_path_factory.mktemp("sft")
    data = write_data(root / "data", overlong=1)
    p = prepare(cfg_for(tiny_model_dir, data, root / "out"), show_bar=False)
    before = {n: w.detach().clone() for n, w in p.trainer.model.named_parameters() if w.requires_grad}
    result = finish(p)
    return p, before, result


@pytest.mark.model
def test_only_completion_tokens_carry_labels(tiny_model_dir, tmp_path):
    from distill.sft import prepare

    data = write_data(tmp_path / "data")
    p = prepare(cfg_for(tiny_model_dir, data, tmp_path / "out", batch_size=4), show_bar=False)
    tok = p.tokenizer
    batch = next(iter(p.trainer.get_train_dataloader()))  # the trainer's own collator output
    assert batch["labels"].shape == batch["input_ids"].shape
    replies = {reply(i) + "<|im_end|>\n" for i in range(4)}
    for ids, labels, attn in zip(batch["input_ids"], batch["labels"], batch["attention_mask"]):
        keep = labels != -100
        assert keep.any()
        assert (labels[keep] == ids[keep]).all()
        assert not (keep & (attn == 0)).any(), "padding carries labels"
        text = tok.decode(ids[keep].tolist())
        assert text in replies, text                 # exactly the step's reply + end of turn
        assert "EARLIER-REPLY" not in text and SYSTEM not in text
        # the labelled tokens are one contiguous run at the end of the sequence
        pos = keep.nonzero().flatten().tolist()
        assert pos == list(range(pos[0], pos[-1] + 1)) and pos[-1] == int(attn.sum()) - 1
        assert tok.decode(ids[:pos[0]].tolist()).startswith("<|im_start|>system\n" + SYSTEM)


@pytest.mark.model
def test_multi_turn_rows_train_every_reply_and_nothing_else(tiny_model_dir, tmp_path):
    from distill.sft import prepare
    from distill.sft_data import token_lengths

    data = tmp_path / "data"
    data.mkdir()
    (data / "train.jsonl").write_text("".join(json.dumps(multi_turn_row(i)) + "\n" for i in range(8)))
    p = prepare(cfg_for(tiny_model_dir, data, tmp_path / "out", batch_size=4, eval_steps=0), show_bar=False)
    assert p.trainer.args.assistant_only_loss and not p.trainer.args.completion_only_loss
    tok = p.tokenizer
    batch = next(iter(p.trainer.get_train_dataloader()))
    for ids, labels, attn in zip(batch["input_ids"], batch["labels"], batch["attention_mask"]):
        keep = labels != -100
        assert (labels[keep] == ids[keep]).all() and not (keep & (attn == 0)).any()
        pos = keep.nonzero().flatten().tolist()
        runs = [[pos[0]]]
        for x in pos[1:]:
            (runs[-1].append(x) if x == runs[-1][-1] + 1 else runs.append([x]))
        texts = [tok.decode(ids[r[0]:r[-1] + 1].tolist()) for r in runs]
        assert len(texts) == 2, texts                                  # the two replies, each with its end of turn
        assert texts[0] in {reply(i) + "<|im_end|>" for i in range(4)} and texts[1].startswith("FINAL-REPLY")
        assert texts[1].endswith("<|im_end|>") and not any(SYSTEM in t or "output" in t for t in texts)
    total, trained_tokens = token_lengths(tok, multi_turn_row(1))
    assert 0 < trained_tokens < total


@pytest.mark.model
def test_lora_weights_change_and_loss_falls(trained):
    import torch
    from safetensors.torch import load_file

    p, before, result = trained
    after = load_file(Path(result["files"]["adapter"]) / "adapter_model.safetensors")
    assert before and all("lora_" in n for n in before)
    assert len(after) == len(before)
    for n, w0 in before.items():  # trl's "parameter has not changed" check, on the saved adapter
        assert not torch.equal(w0, after[n.replace(".default", "")]), f"{n} has not changed"
    losses = [h["loss"] for h in p.trainer.state.log_history if "loss" in h]
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < 0.7 * sum(losses[:5]) / 5, losses
    assert result["final_dev_loss"] < result["first_train_loss"]
    assert result["steps"] == 30 and result["method"] == "lora"
    assert result["dropped_overlong"] == 1 and result["data"]["train"]["kept"] == 24
    assert result["tokens_trained"] > 0 and result["tokens_per_s"] > 0


@pytest.mark.model
def test_outputs_merged_folder_loads_and_generates(trained, tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    p, _, result = trained
    out = Path(result["out"])
    png = (out / "loss.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    from matplotlib.image import imread

    assert imread(out / "loss.png").shape[0] > 100
    hist = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert sum("loss" in h for h in hist) == 30 and sum("eval_loss" in h for h in hist) >= 3
    res = json.loads((out / "result.json").read_text())
    assert res["machine"]["cores"] and res["machine"]["cpu"] and res["versions"]["trl"]
    cfg_log = json.loads((out / "sft-config.json").read_text())
    assert cfg_log["max_steps"] == 30 and cfg_log["data_files"]["train"]["sha256"]
    assert sorted(c.name for c in out.glob("checkpoint-*")) == ["checkpoint-20", "checkpoint-30"]

    merged = out / "merged"
    stamp = json.loads((merged / "scroll-model.json").read_text())
    assert stamp["base_model"] == str(tiny_model_dir) and stamp["steps"] == 30
    assert len(stamp["data"]["train"]["sha256"]) == 64 and stamp["tokens_trained"] > 0
    for k in ("final_train_loss", "final_dev_loss", "tokens_per_s", "wall_s"):
        assert stamp[k] is not None, k
    base_cfg = json.loads((tiny_model_dir / "config.json").read_text())
    cfg = json.loads((merged / "config.json").read_text())
    assert cfg["architectures"] == base_cfg["architectures"] and cfg["model_type"] == base_cfg["model_type"]
    assert (merged / "chat_template.jinja").is_file()
    assert not any("lora" in k for k in __import__("safetensors.torch").torch.load_file(
        merged / "model.safetensors"))
    tok = AutoTokenizer.from_pretrained(merged)
    model = AutoModelForCausalLM.from_pretrained(merged)
    enc = tok.apply_chat_template(row(1)["prompt"], add_generation_prompt=True, return_tensors="pt",
                                  return_dict=True)
    with torch.no_grad():
        outp = model.generate(**enc, max_new_tokens=8, do_sample=False)
    assert outp.shape[1] > enc["input_ids"].shape[1]
    # The merged weights equal base + saved adapter: same loss on a train sample.
    from peft import PeftModel

    peft_model = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir),
                                           result["files"]["adapter"]).eval()
    ids = tok.apply_chat_template(row(1)["prompt"] + row(1)["completion"], return_tensors="pt",
                                  return_dict=True)["input_ids"]
    with torch.no_grad():
        a = model(ids, labels=ids).loss.item()
        b = peft_model(input_ids=ids, labels=ids).loss.item()
    assert abs(a - b) < 1e-3, (a, b)


@pytest.mark.model
def test_resume_continues_from_checkpoint(tiny_model_dir, tmp_path):
    from distill.sft import ConfigError, train

    data = write_data(tmp_path / "data", n_train=8)
    out = tmp_path / "out"
    kw = dict(batch_size=2, eval_steps=0, save_steps=3, merge=False)

    class Killed(Exception):
        pass

    def kill_at_5(ev):
        if ev.get("event") == "log" and ev.get("step") == 5 and "loss" in ev:
            raise Killed()

    with pytest.raises(Killed):  # a run that dies after its checkpoint at step 3
        train(cfg_for(tiny_model_dir, data, out, max_steps=6, **kw), progress=kill_at_5, show_bar=False)
    assert [c.name for c in out.glob("checkpoint-*")] == ["checkpoint-3"]
    with pytest.raises(ConfigError, match="pass --resume"):
        train(cfg_for(tiny_model_dir, data, out, max_steps=6, resume=False, **kw), show_bar=False)

    steps: list[int] = []
    res = train(cfg_for(tiny_model_dir, data, out, max_steps=6, **kw),
                progress=lambda ev: steps.append(ev["step"]) if ev.get("event") == "log" and "loss" in ev else None,
                show_bar=False)
    assert res["resumed_from"].endswith("checkpoint-3") and res["steps"] == 6
    assert steps == [4, 5, 6]  # the step counter continues
    # ... and again, to 2N from the final checkpoint
    res2 = train(cfg_for(tiny_model_dir, data, out, max_steps=12, **kw), show_bar=False)
    assert res2["resumed_from"].endswith("checkpoint-6") and res2["steps"] == 12
    hist = [h["step"] for h in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "loss" in h]
    assert hist == list(range(1, 13)), hist
    # other data in the same out dir is refused
    (data / "train.jsonl").write_text((data / "train.jsonl").read_text() + json.dumps(row(9)) + "\n")
    with pytest.raises(ConfigError, match="other data"):
        train(cfg_for(tiny_model_dir, data, out, max_steps=14, **kw), show_bar=False)


@pytest.mark.model
def test_cli_sft_json_and_max_steps_override(tiny_model_dir, tmp_path):
    from scroll.cli.sft_cmds import register_sft

    app = typer.Typer()
    distill_app = typer.Typer()
    register_sft(distill_app)
    app.add_typer(distill_app, name="distill")
    data = write_data(tmp_path / "data", n_train=8)
    cfg = tmp_path / "c.yaml"
    cfg.write_text((ROOT / "configs/distill/tiny-ci.yaml").read_text().replace(
        "model: tiny-qwen3", f"model: {tiny_model_dir}"))
    r = CliRunner().invoke(app, ["distill", "sft", "--config", str(cfg), "--data", str(data),
                                 "--out", str(tmp_path / "out"), "--max-steps", "3", "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)  # stdout holds only the result JSON
    assert res["steps"] == 3 and res["max_steps"] == 3
    assert Path(res["files"]["merged"], "scroll-model.json").is_file()

    r = CliRunner().invoke(app, ["distill", "sft", "--config", str(cfg), "--data", str(tmp_path),
                                 "--out", str(tmp_path / "o2"), "--json"])
    assert r.exit_code == 1 and "train.jsonl" in json.loads(r.stdout)["error"]
    r = CliRunner().invoke(app, ["distill", "sft", "--config", "no-such-config", "--data", str(data)])
    assert r.exit_code == 1 and "no SFT config" in r.output
