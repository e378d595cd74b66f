"""`scroll distill sft`: fine-tune a student on exported agent steps (distill/sft.py).

scroll/cli/distill_cmds.py calls `register_sft(distill_app)`; heavy imports stay inside.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer


def _progress_printer(console):
    """Phase and data events as short lines on stderr (the trainer's own bar shows steps)."""
    def show(ev: dict) -> None:
        kind = ev.get("event")
        if kind == "phase":
            extra = {k: v for k, v in ev.items() if k not in ("event", "phase") and v is not None}
            console.print(f"[bold cyan]sft[/] {ev['phase']}" + (f" {extra}" if extra else ""), highlight=False)
        elif kind == "data":
            for name in ("train", "dev"):
                s = ev.get(name)
                if s:
                    console.print(f"[bold cyan]sft[/] {name}: {s['kept']}/{s['samples']} samples kept, "
                                  f"{s['dropped_overlong']} dropped (> max_length), {s['tokens']} tokens, "
                                  f"{s['completion_tokens']} completion tokens, longest {s['longest']}",
                                  highlight=False)
    return show


def register_sft(distill_app: typer.Typer) -> None:
    """Add the `sft` command to the `scroll distill` group."""

    @distill_app.command("sft")
    def sft(
        config: str = typer.Option(..., "--config", "-c", help="YAML path, or NAME for distill/NAME.yaml "
                                   "in the config dirs (e.g. tiny-ci, smollm2-135m-cpu, qwen3-1.7b-gpu)."),
        data: Optional[Path] = typer.Option(None, "--data", help="Folder with train.jsonl and dev.jsonl "
                                            "(overrides the config's)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Output folder (overrides the config's)."),
        model: Optional[str] = typer.Option(None, "--model", help="Base model folder (overrides the config's)."),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Stop after N optimizer steps "
                                                "(overrides epochs)."),
        resume: Optional[bool] = typer.Option(None, "--resume/--no-resume", help="Continue from OUT's last "
                                              "checkpoint [default: the config's, true]. --no-resume refuses "
                                              "an OUT that holds checkpoints."),
        as_json: bool = typer.Option(False, "--json", help="Print only the result JSON on stdout."),
    ) -> None:
        """Fine-tune (LoRA or full) with completion-only loss; write checkpoints, metrics.jsonl,
        loss.png, result.json and a merged HF folder OUT/merged."""
        from scroll.cli.common import emit_json, fail

        try:
            from distill.sft import train
            from distill.sft_config import ConfigError, load_config
        except ImportError as e:  # pragma: no cover
            fail(str(e), as_json=as_json)
        try:
            cfg = load_config(config, data=str(data) if data else None, out=str(out) if out else None,
                              model=model, max_steps=max_steps, resume=resume)
        except ConfigError as e:
            fail(str(e), as_json=as_json)
        from rich.console import Console

        err = Console(stderr=True)  # progress goes to stderr, with or without --json (stdout: the result)
        err.print(f"[bold cyan]sft[/] config {json.dumps(cfg.to_dict())}", highlight=False)
        try:
            result = train(cfg, progress=_progress_printer(err), show_bar=True)
        except ConfigError as e:
            fail(str(e), as_json=as_json)
        except ImportError as e:
            fail(str(e), as_json=as_json)
        if as_json:
            emit_json(result)
            return
        sys.stdout.write(
            f"done: {result['steps']} steps, train loss {result['first_train_loss']:.4g} -> "
            f"{result['final_train_loss']:.4g}, dev loss {result['final_dev_loss']}, "
            f"{result['tokens_per_s']} tokens/s, {result['dropped_overlong']} samples dropped (too long)\n"
            f"merged model: {result['files'].get('merged')}\nloss curve: {result['files']['loss_png']}\n"
            f"summary: {Path(result['out']) / 'result.json'}\n")
