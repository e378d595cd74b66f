"""Local generation with `transformers` from a model folder. Offline only.

    llm = TransformersLLM(LLMConfig(backend="transformers", model="var/models/tiny-qwen3"))
    llm.complete([{"role": "user", "content": "hi"}], max_tokens=16)

- `HF_HUB_OFFLINE=1` / `TRANSFORMERS_OFFLINE=1` are set before transformers is imported, and
  every load passes `local_files_only=True`: a missing file is an error, never a download.
- the prompt is the tokenizer's chat template with `add_generation_prompt=True`;
- temperature 0 is greedy, > 0 samples (`top_p`, `seed`); stop strings end generation and are
  cut from the text (OpenAI semantics); EOS and `<|im_end|>` end it too;
- CPU by default; `device: auto` uses CUDA when torch sees a GPU;
- tokens are counted with the model's own tokenizer (`token_counter_exact` is True).
Heavy imports live inside functions and fail with the install command.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from scroll import env
from scroll.llm.base import (
    INSTALL_MODEL, Completion, LLMError, Message, check_messages, check_stop, cut_at_stop,
)
from scroll.llm.config import LLMConfig
from scroll.llm.constraints import Constraint
from scroll.llm.grammar import GrammarCache
from scroll.provenance import cpu_auto_dtype

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1"}
_END_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<end_of_turn>")


def set_offline_env() -> None:
    """Force the hub libraries offline (before they are imported)."""
    os.environ.update(OFFLINE)


def _import_transformers():
    set_offline_env()
    try:
        import torch
        import transformers
    except ImportError as e:
        raise ImportError(f"the transformers backend needs torch and transformers ({e}); "
                          f"install them with: {INSTALL_MODEL}") from None
    return torch, transformers


def _check_folder(path: str | os.PathLike, what: str) -> Path:
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"{what} {str(path)!r} is not a local folder (the {what} must be a "
                         f"model folder on disk; nothing is downloaded). A relative name is looked up "
                         f"under SCROLL_MODELS_DIR (else /models, else ./var/models; now {env.models_dir()}). "
                         f"Build one offline with `scroll models tiny DIR` or `scroll models smollm2 DIR`.")
    return p


def load_tokenizer(path: str | os.PathLike):
    """AutoTokenizer from a local folder, offline."""
    folder = _check_folder(path, "tokenizer_path")
    _, transformers = _import_transformers()
    try:
        return transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError) as e:
        raise LLMError(f"could not load a tokenizer from {folder}: {e}") from None


def render_chat(tokenizer: Any, messages: list[Message]) -> str:
    if not getattr(tokenizer, "chat_template", None):
        raise LLMError(f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r} has no chat "
                       f"template; chat models need one in tokenizer_config.json")
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def count_with_tokenizer(tokenizer: Any, text_or_messages: str | list[Message]) -> int:
    """Exact count: plain text without special tokens; messages through the chat template
    with the generation prompt (what the model actually reads)."""
    if isinstance(text_or_messages, str):
        text = text_or_messages
    else:
        text = render_chat(tokenizer, check_messages(text_or_messages))
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


class TransformersLLM:
    backend = "transformers"

    def __init__(self, cfg: LLMConfig):
        self.cfg = cfg.validate()
        self.folder = _check_folder(cfg.model_folder(), "model")
        torch, transformers = _import_transformers()
        self._torch = torch
        if cfg.device == "auto":
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        else:
            if cfg.device == "cuda" and not torch.cuda.is_available():
                raise ValueError("LLM config device='cuda' but torch sees no CUDA device")
            self.device = cfg.device
        dtype = {"auto": "auto", "float32": torch.float32, "bfloat16": torch.bfloat16,
                 "float16": torch.float16}[cfg.dtype]
        if dtype == "auto" and self.device == "cpu":  # the rule `scroll serve` uses: bf16 only with AMX-BF16
            dtype = getattr(torch, cpu_auto_dtype())
        t0 = time.perf_counter()
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                str(self.folder), local_files_only=True)
            self.model = transformers.AutoModelForCausalLM.from_pretrained(
                str(self.folder), local_files_only=True, dtype=dtype)
        except (OSError, ValueError) as e:
            raise LLMError(f"transformers backend: could not load {self.folder}: {e}") from None
        self.model.to(self.device).eval()
        self.load_s = time.perf_counter() - t0
        self.name = self.folder.name
        self._lock = threading.Lock()
        vocab = self.tokenizer.get_vocab()
        ends = {self.tokenizer.eos_token_id} | {vocab[t] for t in _END_TOKENS if t in vocab}
        gen_eos = getattr(self.model.generation_config, "eos_token_id", None)
        ends |= set(gen_eos) if isinstance(gen_eos, (list, tuple)) else {gen_eos}
        self._eos = sorted(i for i in ends if i is not None)
        self._pad = (self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None
                     else (self._eos[0] if self._eos else 0))
        self._grammars = None  # scroll.llm.grammar.GrammarCache, built at the first constrained call

    # ------------------------------------------------------------------ protocol
    def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None,
                 constraint: Constraint | None = None) -> Completion:
        check_messages(messages)
        if self.model is None:
            raise LLMError("transformers backend: used after close()")
        stop = check_stop(stop) if stop is not None else self.cfg.stop
        max_new = int(max_tokens if max_tokens is not None else self.cfg.max_tokens)
        temp = float(temperature if temperature is not None else self.cfg.temperature)
        torch = self._torch
        t0 = time.perf_counter()
        prompt = render_chat(self.tokenizer, messages)
        enc = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt").to(self.device)
        n_prompt = int(enc["input_ids"].shape[1])
        kw: dict[str, Any] = dict(max_new_tokens=max_new, eos_token_id=self._eos,
                                  pad_token_id=self._pad)
        if temp > 0:
            kw.update(do_sample=True, temperature=temp, top_p=self.cfg.top_p, top_k=0)
        else:
            kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if stop:
            kw.update(stop_strings=stop, tokenizer=self.tokenizer)
        with self._lock:
            if constraint is not None:
                kw["logits_processor"] = [self._grammar_cache().processor(constraint)]
            if self.cfg.seed is not None:
                torch.manual_seed(self.cfg.seed)
            try:
                with torch.inference_mode():
                    out = self.model.generate(**enc, **kw)
            except (RuntimeError, ValueError) as e:
                raise LLMError(f"transformers backend: generation failed on {self.folder}: "
                               f"{e}") from None
        new_ids = out[0, n_prompt:].tolist()
        ended_eos = bool(new_ids) and new_ids[-1] in self._eos
        text = self.tokenizer.decode(new_ids, skip_special_tokens=True)
        text, hit_stop = cut_at_stop(text, stop)
        if hit_stop or ended_eos:
            finish = "stop"
        elif len(new_ids) >= max_new:
            finish = "length"
        else:
            finish = "stop"
        return Completion(
            text=text, prompt_tokens=n_prompt, completion_tokens=len(new_ids), model=self.name,
            latency_s=time.perf_counter() - t0, backend=self.backend, finish_reason=finish,
            raw={"device": self.device, "do_sample": temp > 0, "stop": stop, "constrained": constraint is not None,
                 "stopped_on": "stop_string" if hit_stop else ("eos" if ended_eos else None)})

    def _grammar_cache(self):
        if self._grammars is None:
            self._grammars = GrammarCache(self.tokenizer, int(self.model.config.vocab_size))
        return self._grammars

    def count_tokens(self, text_or_messages: str | list[Message]) -> int:
        return count_with_tokenizer(self.tokenizer, text_or_messages)

    @property
    def token_counter_exact(self) -> bool:
        return True

    def describe(self) -> dict[str, Any]:
        d = {"backend": self.backend, "model": self.name, "path": str(self.folder),
             "device": self.device, "token_counter": f"tokenizer:{self.folder}",
             "max_tokens": self.cfg.max_tokens, "temperature": self.cfg.temperature,
             "load_s": round(self.load_s, 3)}
        if self.model is not None:
            d["dtype"] = str(self.model.dtype).replace("torch.", "")
            d["params"] = sum(p.numel() for p in self.model.parameters())
        return d

    def close(self) -> None:
        self.model = None
        if self.device == "cuda":
            self._torch.cuda.empty_cache()

    def __enter__(self) -> "TransformersLLM":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
