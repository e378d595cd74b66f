"""The SFT data: TRL prompt-completion JSONL rows, checked line by line, and the length filter
(over-long samples are dropped and counted, never truncated: see distill/sft.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .sft_config import ConfigError


def _check_messages(msgs: Any, where: str, what: str) -> None:
    if not isinstance(msgs, list) or not msgs:
        raise ConfigError(f"{where}: '{what}' must be a non-empty list of messages")
    for i, m in enumerate(msgs):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise ConfigError(f"{where}: {what}[{i}] is not a message with a role")
        if not isinstance(m.get("content"), (str, list)):
            raise ConfigError(f"{where}: {what}[{i}] has no content")


def read_samples(path: Path, limit: int = 0) -> list[dict]:
    """The prompt-completion rows of one JSONL file, checked (line numbers in errors)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{where}: not JSON ({e})") from None
            if not isinstance(row, dict) or "prompt" not in row or "completion" not in row:
                raise ConfigError(f"{where}: expected {{'prompt': [...], 'completion': [...]}}")
            _check_messages(row["prompt"], where, "prompt")
            _check_messages(row["completion"], where, "completion")
            if len(row["completion"]) != 1 or row["completion"][0]["role"] != "assistant":
                raise ConfigError(f"{where}: completion must be exactly one assistant message")
            rows.append({"prompt": row["prompt"], "completion": row["completion"]})
            if limit and len(rows) >= limit:
                break
    if not rows:
        raise ConfigError(f"{path}: no samples")
    return rows


def token_lengths(tokenizer, row: dict) -> tuple[int, int]:
    """(total, completion) token counts as TRL will tokenize the row."""
    def ids(msgs, **kw):
        out = tokenizer.apply_chat_template(msgs, tokenize=True, return_dict=True, **kw)
        return list(out["input_ids"])

    p = ids(row["prompt"], add_generation_prompt=True)
    pc = ids(row["prompt"] + row["completion"])
    k = 0
    while k < min(len(p), len(pc)) and p[k] == pc[k]:
        k += 1
    return len(pc), len(pc) - k


def filter_by_length(tokenizer, rows: list[dict], max_length: int) -> tuple[list[dict], dict]:
    kept, dropped, total_tokens, completion_tokens, longest = [], 0, 0, 0, 0
    for row in rows:
        n, c = token_lengths(tokenizer, row)
        longest = max(longest, n)
        if n > max_length:
            dropped += 1
            continue
        kept.append(row)
        total_tokens += n
        completion_tokens += c
    stats = {"samples": len(rows), "kept": len(kept), "dropped_overlong": dropped,
             "tokens": total_tokens, "completion_tokens": completion_tokens, "longest": longest}
    return kept, stats
