"""Supervised fine-tuning of a student on exported agent steps: TRL SFTTrainer + PEFT LoRA.

    scroll distill sft --config configs/distill/tiny-ci.yaml            # seconds, tiny random Qwen3
    scroll distill sft --config smollm2-135m-cpu --data var/distill/data --out var/distill/smol
    python -m distill.sft --config configs/distill/tiny-ci.yaml --max-steps 10
    accelerate launch --num_processes 8 -m distill.sft --config configs/distill/qwen3-1.7b-gpu.yaml

Data: `DATA/train.jsonl` and `DATA/dev.jsonl` in one of TRL's conversational formats:
prompt-completion (one agent step a line: `{"prompt": [messages...], "completion":
[{"role": "assistant", ...}]}`; the loss falls on the completion only: TRL masks the prompt's
tokens with -100), or messages (`scroll distill export --trajectories`: one chain of steps a
line, `{"messages": [...]}`; the loss falls on every assistant reply through the chat
template's generation markers, `assistant_only_loss`). A chain costs one pass over its last
prompt instead of one pass per step over a prompt that repeats the system prompt.

Over-long samples: a sample whose rendered prompt+completion exceeds `max_length` tokens is
DROPPED and counted (`dropped_overlong` in result.json), never truncated: cutting the prompt's
start would remove the system prompt the agent always sees, and cutting the completion would
teach half a code cell.

Outputs in OUT: `sft-config.json` (resolved config + data sha256), `checkpoint-N/` (last 2),
`metrics.jsonl` (trainer log history), `loss.png`, `adapter/` (LoRA), `merged/` (complete HF
folder: weights, tokenizer, chat template, `scroll-model.json`), `result.json`.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scroll.provenance import file_sha256, machine, versions

from .folders import publish_folder
from .sft_config import ConfigError, SFTRunConfig, load_config
from .sft_data import filter_by_length, read_samples, row_format

_INSTALL_HINT = "pip install -e '.[model]'  (needs torch, transformers, trl, peft, datasets, matplotlib)"
MODEL_STAMP = "scroll-model.json"
CONFIG_NAME = "sft-config.json"
Progress = Callable[[dict], None]


# ---- machine / versions ------------------------------------------------------------------
VERSION_PACKAGES = ("torch", "transformers", "trl", "peft", "accelerate", "datasets")


def use_cuda(cfg: SFTRunConfig) -> bool:
    import torch

    return cfg.device == "cuda" or (cfg.device == "auto" and torch.cuda.is_available())


def bf16_supported(cuda: bool) -> bool:
    import torch

    if cuda:
        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    info = machine()
    return info["avx512_bf16"] or info["amx_bf16"]


def resolve_bf16(cfg: SFTRunConfig, cuda: bool) -> bool:
    v = str(cfg.bf16).lower()
    return bf16_supported(cuda) if v == "auto" else v == "true"


# ---- training -----------------------------------------------------------------------------
def _last_checkpoint(out: Path) -> Path | None:
    from transformers.trainer_utils import get_last_checkpoint

    return Path(c) if out.is_dir() and (c := get_last_checkpoint(str(out))) else None


def _emit(progress: Progress | None, **event: Any) -> None:
    if progress is not None:
        progress(event)


def _tokens_trained(history: list[dict]) -> int:
    """TRL's `num_tokens` is cumulative per process run and restarts at 0 after a resume:
    add each run's last value."""
    total, prev = 0, 0
    for h in history:
        if "num_tokens" in h and "loss" in h:
            n = int(h["num_tokens"])
            if n < prev:
                total += prev
            prev = n
    return total + prev


@dataclass
class Prepared:
    """A ready SFTTrainer plus what `finish` needs to report (from `prepare`)."""
    cfg: SFTRunConfig
    trainer: Any
    tokenizer: Any
    last: Path | None
    do_eval: bool
    cuda: bool
    bf16: bool
    base_arch: list
    data_info: dict
    train_stats: dict
    dev_stats: dict | None
    t_start: float
    progress: Progress | None = None


def train(cfg: SFTRunConfig, progress: Progress | None = None, show_bar: bool = True) -> dict:
    """Run SFT as configured (cfg must come from `validate()`); returns the result summary
    (also written to OUT/result.json). `progress` receives dict events: phase changes and
    every trainer log (step, loss, eval_loss, ...)."""
    return finish(prepare(cfg, progress=progress, show_bar=show_bar))


def prepare(cfg: SFTRunConfig, progress: Progress | None = None, show_bar: bool = True) -> Prepared:
    """Check the output dir (resume), read and length-filter the data, load the model and
    build the SFTTrainer (TRL tokenizes and masks the prompt here)."""
    try:
        import torch
        from peft import LoraConfig
        from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
        from transformers.trainer_callback import PrinterCallback, ProgressCallback
        from trl import SFTConfig, SFTTrainer
        import datasets
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ImportError(f"SFT needs the model extra: {_INSTALL_HINT} ({e})") from None

    t_start = time.time()
    out, data = Path(cfg.out), Path(cfg.data)
    out.mkdir(parents=True, exist_ok=True)
    files = {"train": data / "train.jsonl"}
    if (data / "dev.jsonl").is_file():
        files["dev"] = data / "dev.jsonl"
    data_info = {k: {"file": str(p), "sha256": file_sha256(p)} for k, p in files.items()}

    last = _last_checkpoint(out)
    prev_cfg_path = out / CONFIG_NAME
    if last is not None:
        if not cfg.resume:
            raise ConfigError(f"{out} already holds {last.name}; pass --resume to continue it "
                              "or choose another --out")
        try:
            prev = json.loads(prev_cfg_path.read_text())
        except (OSError, ValueError):
            prev = {}
        prev_data = {k: v.get("sha256") for k, v in prev.get("data_files", {}).items()}
        now_data = {k: v["sha256"] for k, v in data_info.items()}
        if prev_data and prev_data != now_data:
            raise ConfigError(f"{out}/{last.name} was trained on other data (sha256 differs); "
                              "resume with the same data or choose another --out")
    cuda = use_cuda(cfg)
    bf16 = resolve_bf16(cfg, cuda)
    resolved = {**cfg.to_dict(), "resolved": {"cuda": cuda, "bf16": bf16,
                                              "resume_from": str(last) if last else None},
                "data_files": data_info, "versions": versions(VERSION_PACKAGES), "machine": machine()}
    prev_cfg_path.write_text(json.dumps(resolved, indent=2) + "\n")

    quiet = not show_bar
    if quiet:
        datasets.disable_progress_bars()
    _emit(progress, event="phase", phase="tokenizer", model=cfg.model)
    tok = AutoTokenizer.from_pretrained(cfg.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if not tok.chat_template:
        raise ConfigError(f"{cfg.model}: the tokenizer has no chat template")

    _emit(progress, event="phase", phase="data", data=str(data))
    train_rows, train_stats = filter_by_length(tok, read_samples(files["train"], cfg.max_train_samples),
                                               cfg.max_length)
    if not train_rows:
        raise ConfigError(f"every train sample is longer than max_length {cfg.max_length} "
                          f"(longest {train_stats['longest']} tokens)")
    dev_rows, dev_stats = [], None
    if "dev" in files:
        dev_rows, dev_stats = filter_by_length(tok, read_samples(files["dev"], cfg.max_dev_samples),
                                               cfg.max_length)
    do_eval = bool(dev_rows)
    multi_turn = row_format(train_rows[0]) == "messages"
    if dev_rows and row_format(dev_rows[0]) != row_format(train_rows[0]):
        raise ConfigError("train and dev data must have the same format (prompt-completion or messages)")
    _emit(progress, event="data", train=train_stats, dev=dev_stats)

    _emit(progress, event="phase", phase="model")
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(
        cfg.dtype, torch.bfloat16 if (cuda and bf16) else torch.float32)
    model = AutoModelForCausalLM.from_pretrained(cfg.model, dtype=dtype)
    base_arch = list(getattr(model.config, "architectures", None) or [type(model).__name__])

    peft_config = None
    if not cfg.full:
        peft_config = LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=float(cfg.lora.dropout),
                                 target_modules=cfg.lora.target_modules, task_type="CAUSAL_LM", bias="none")
    eval_steps = cfg.eval_steps if cfg.eval_steps > 0 else None
    args = SFTConfig(
        output_dir=str(out), seed=cfg.seed, data_seed=cfg.seed,
        num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        learning_rate=cfg.lr, lr_scheduler_type=cfg.lr_scheduler, warmup_steps=cfg.warmup_ratio,  # < 1: a ratio
        weight_decay=cfg.weight_decay, max_grad_norm=cfg.max_grad_norm,
        per_device_train_batch_size=cfg.batch_size, gradient_accumulation_steps=cfg.grad_accum,
        per_device_eval_batch_size=cfg.eval_batch_size,
        bf16=bf16, use_cpu=not cuda, gradient_checkpointing=cfg.gradient_checkpointing,
        logging_steps=cfg.logging_steps, logging_first_step=True,
        eval_strategy="steps" if (do_eval and eval_steps) else "no", eval_steps=eval_steps,
        save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=cfg.save_total_limit,
        max_length=cfg.max_length, packing=False, completion_only_loss=not multi_turn,
        assistant_only_loss=multi_turn,
        report_to="none", disable_tqdm=quiet, dataloader_num_workers=0,
        dataset_num_proc=None, remove_unused_columns=True,
    )
    trainer = SFTTrainer(model=model, args=args, processing_class=tok,
                         train_dataset=datasets.Dataset.from_list(train_rows),
                         eval_dataset=datasets.Dataset.from_list(dev_rows) if do_eval else None,
                         peft_config=peft_config)
    # Both default log printers write to stdout, which the CLI reserves for --json: the bar
    # (stderr) stays, log lines go to stderr too.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    if show_bar:
        class _StderrProgress(ProgressCallback):
            def on_log(self, a, state, control, logs=None, **kw):
                if state.is_world_process_zero and self.training_bar is not None and logs:
                    keep = ("loss", "eval_loss", "learning_rate", "grad_norm", "num_tokens")
                    line = {k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in logs.items() if k in keep}
                    self.training_bar.write(f"step {state.global_step}: {line}", file=sys.stderr)
        trainer.add_callback(_StderrProgress())
    if progress is not None:
        class _Relay(TrainerCallback):
            def on_log(self, a, state, control, logs=None, **kw):
                _emit(progress, event="log", step=state.global_step, max_steps=state.max_steps, **(logs or {}))
        trainer.add_callback(_Relay())
    # Every label that survives preparation is a completion token: nothing was cut.
    n_labels = sum(sum(1 for x in r if x != -100) for r in trainer.train_dataset["labels"])
    if n_labels != train_stats["completion_tokens"]:
        raise RuntimeError(f"prepared data has {n_labels} loss tokens, expected "
                           f"{train_stats['completion_tokens']} (completion tokens): a completion was cut")
    return Prepared(cfg=cfg, trainer=trainer, tokenizer=tok, last=last, do_eval=do_eval, cuda=cuda,
                    bf16=bf16, base_arch=base_arch, data_info=data_info, train_stats=train_stats,
                    dev_stats=dev_stats, t_start=t_start, progress=progress)


def finish(p: Prepared) -> dict:
    """Train (resuming when `p.last`), evaluate, write metrics/plot/adapter/merged/result."""
    import torch

    cfg, trainer, tok, last, progress = p.cfg, p.trainer, p.tokenizer, p.last, p.progress
    do_eval, cuda, bf16, data_info = p.do_eval, p.cuda, p.bf16, p.data_info
    train_stats, dev_stats, base_arch, t_start = p.train_stats, p.dev_stats, p.base_arch, p.t_start
    out = Path(cfg.out)
    trainable = sum(w.numel() for w in trainer.model.parameters() if w.requires_grad)
    total_params = sum(w.numel() for w in trainer.model.parameters())
    _emit(progress, event="phase", phase="train", resume_from=str(last) if last else None,
          trainable_params=trainable)

    t_train = time.time()
    train_out = trainer.train(resume_from_checkpoint=str(last) if last else None)
    train_wall = time.time() - t_train
    final_dev = None
    if do_eval:
        _emit(progress, event="phase", phase="eval")
        final_dev = trainer.evaluate().get("eval_loss")
    history = list(trainer.state.log_history)
    if not trainer.is_world_process_zero():
        return {"ok": True, "rank": int(os.environ.get("RANK", "0"))}

    from distill.plots import plot_loss

    with open(out / "metrics.jsonl", "w") as f:
        for h in history:
            f.write(json.dumps(h) + "\n")
    plot_loss(history, out / "loss.png", title=f"SFT {Path(cfg.model).name} -> {out.name}")

    train_losses = [h["loss"] for h in history if "loss" in h]
    session_tokens = max((int(h["num_tokens"]) for h in history
                          if "num_tokens" in h and "loss" in h and h.get("step", 0) > (
                              int(last.name.split("-")[-1]) if last else 0)), default=0)
    runtime = float(train_out.metrics.get("train_runtime", train_wall))
    summary = {
        "ok": True, "out": str(out), "base_model": cfg.model, "base_architectures": base_arch,
        "method": "full" if cfg.full else "lora", "steps": trainer.state.global_step,
        "max_steps": trainer.state.max_steps, "epochs": trainer.state.epoch,
        "resumed_from": str(last) if last else None,
        "final_train_loss": train_losses[-1] if train_losses else None,
        "first_train_loss": train_losses[0] if train_losses else None,
        "final_dev_loss": final_dev,
        "tokens_trained": _tokens_trained(history), "session_tokens": session_tokens,
        "session_train_s": round(runtime, 2),
        "tokens_per_s": round(session_tokens / runtime, 1) if runtime > 0 else None,
        "wall_s": None, "bf16": bf16, "cuda": cuda, "trainable_params": trainable,
        "total_params": total_params,
        "data": {"train": {**data_info["train"], **train_stats},
                 "dev": {**data_info["dev"], **dev_stats} if dev_stats else None},
        "dropped_overlong": train_stats["dropped_overlong"] + (dev_stats or {}).get("dropped_overlong", 0),
        "max_length": cfg.max_length, "machine": machine(), "versions": versions(VERSION_PACKAGES),
        "files": {"metrics": str(out / "metrics.jsonl"), "loss_png": str(out / "loss.png")},
    }
    if cuda:
        summary["machine"]["gpu"] = torch.cuda.get_device_name(0)
        summary["machine"]["gpus"] = torch.cuda.device_count()

    if not cfg.full:
        trainer.model.save_pretrained(out / "adapter")
        summary["files"]["adapter"] = str(out / "adapter")
    if cfg.merge:
        _emit(progress, event="phase", phase="merge")
        summary["files"]["merged"] = str(save_merged(trainer.model, tok, cfg, out / "merged", summary))
    summary["wall_s"] = round(time.time() - t_start, 2)
    if cfg.merge:
        stamp = Path(summary["files"]["merged"]) / MODEL_STAMP
        info = json.loads(stamp.read_text())
        info["wall_s"] = summary["wall_s"]
        stamp.write_text(json.dumps(info, indent=2) + "\n")
    (out / "result.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    _emit(progress, event="phase", phase="done")
    return summary


def save_merged(model, tokenizer, cfg: SFTRunConfig, dest: Path, summary: dict) -> Path:
    """Merge LoRA into the base (or take the fully trained model) and write a complete HF
    folder atomically: weights, config, generation config, tokenizer + chat template, stamp."""
    import torch

    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    # Save in the base folder's dtype (a bf16 base trained in fp32 on CPU stays bf16 on disk).
    try:
        base_cfg = json.loads((Path(cfg.model) / "config.json").read_text())
        base_dtype = getattr(torch, str(base_cfg.get("dtype") or base_cfg.get("torch_dtype") or ""), None)
    except (OSError, ValueError):
        base_dtype = None
    if isinstance(base_dtype, torch.dtype) and base_dtype.is_floating_point:
        model = model.to(base_dtype)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    for extra in ("generation_config.json",):
        src = Path(cfg.model) / extra
        if src.is_file() and not (tmp / extra).is_file():
            shutil.copy2(src, tmp / extra)
    base_tc = Path(cfg.model) / "tokenizer_config.json"
    if base_tc.is_file():  # keep the base's tokenizer_class (e.g. loadable by older transformers)
        cls = json.loads(base_tc.read_text()).get("tokenizer_class")
        tc = json.loads((tmp / "tokenizer_config.json").read_text())
        if cls:
            tc["tokenizer_class"] = cls
            (tmp / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n")
    stamp = {k: summary[k] for k in ("base_model", "base_architectures", "method", "steps",
                                     "final_train_loss", "final_dev_loss", "tokens_trained",
                                     "tokens_per_s", "session_train_s", "bf16", "max_length")}
    stamp["data"] = {k: {"file": v["file"], "sha256": v["sha256"], "samples_used": v["kept"]}
                     for k, v in summary["data"].items() if v}
    stamp["lora"] = None if cfg.full else dataclasses.asdict(cfg.lora)
    stamp["versions"] = summary["versions"]
    stamp["created"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (tmp / MODEL_STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    return publish_folder(tmp, dest)


def main(argv: list[str] | None = None) -> int:
    """`python -m distill.sft --config NAME [--data D] [--out D] [--max-steps N]` (for
    `accelerate launch -m distill.sft ...`); prints the result JSON."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m distill.sft")
    ap.add_argument("--config", required=True)
    ap.add_argument("--data")
    ap.add_argument("--out")
    ap.add_argument("--model")
    ap.add_argument("--max-steps", type=int)
    ap.add_argument("--no-resume", action="store_true")
    a = ap.parse_args(argv)
    try:
        cfg = load_config(a.config, data=a.data, out=a.out, model=a.model, max_steps=a.max_steps,
                          resume=False if a.no_resume else None)
        res = train(cfg, progress=None, show_bar=sys.stderr.isatty())
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
