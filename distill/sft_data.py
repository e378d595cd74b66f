"""The SFT data, checked line by line, and the length filter (over-long samples are dropped and
counted, never truncated: see distill/sft.py). One file holds one of TRL's two conversational
formats: prompt-completion rows (one agent step each: the loss on the completion) or
`{"messages": [...]}` rows (a chain of steps: the loss on every assistant reply)."""
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


def row_format(row: dict) -> str:
    """'messages' or 'prompt-completion' (what `read_samples` checked)."""
    return "messages" if "messages" in row else "prompt-completion"


def _check_row(row: Any, where: str) -> dict:
    if isinstance(row, dict) and "messages" in row:
        _check_messages(row["messages"], where, "messages")
        if row["messages"][-1]["role"] != "assistant":
            raise ConfigError(f"{where}: 'messages' must end with the assistant's reply")
        return {"messages": row["messages"]}
    if not isinstance(row, dict) or "prompt" not in row or "completion" not in row:
        raise ConfigError(f"{where}: expected {{'prompt': [...], 'completion': [...]}} or {{'messages': [...]}}")
    _check_messages(row["prompt"], where, "prompt")
    _check_messages(row["completion"], where, "completion")
    if len(row["completion"]) != 1 or row["completion"][0]["role"] != "assistant":
        raise ConfigError(f"{where}: completion must be exactly one assistant message")
    return {"prompt": row["prompt"], "completion": row["completion"]}


def read_samples(path: Path, limit: int = 0) -> list[dict]:
    """The rows of one JSONL file, checked (line numbers in errors); one format per file."""
    rows: list[dict] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{where}: not JSON ({e})") from None
            row = _check_row(obj, where)
            if rows and row_format(row) != row_format(rows[0]):
                raise ConfigError(f"{where}: a {row_format(row)} row in a file of {row_format(rows[0])} rows")
            rows.append(row)
            if limit and len(rows) >= limit:
                break
    if not rows:
        raise ConfigError(f"{path}: no samples")
    return rows


def token_lengths(tokenizer, row: dict) -> tuple[int, int]:
    """(total, trained) token counts as TRL will tokenize the row: trained = the completion's
    tokens, or every assistant reply's (the template's generation mask) for a messages row."""
    def render(msgs, **kw):
        return tokenizer.apply_chat_template(msgs, tokenize=True, return_dict=True, **kw)

    if "messages" in row:
        out = render(row["messages"], return_assistant_tokens_mask=True)
        return len(out["input_ids"]), sum(out["assistant_masks"])
    p = list(render(row["prompt"], add_generation_prompt=True)["input_ids"])
    pc = list(render(row["prompt"] + row["completion"])["input_ids"])
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
