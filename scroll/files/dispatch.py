"""The exploration summary of one file: its type detected, the type's summarizer run (a parse
error falls back to the plain-text summary and says so), the result bounded by its token cap."""
from __future__ import annotations

from typing import BinaryIO

from ..records import estimate_tokens
from .code import summarize_code, summarize_python
from .structured import summarize_csv, summarize_json, summarize_jsonl
from .summary import (FileSummary, FileType, Summarizer, SummaryLimits, clip, detect_type, summarize_binary,
                      summarize_empty, summarize_markdown, summarize_text)


SUMMARIZERS: dict[FileType, Summarizer] = {
    FileType.CSV: summarize_csv, FileType.TSV: summarize_csv, FileType.JSON: summarize_json,
    FileType.JSONL: summarize_jsonl, FileType.PYTHON: summarize_python, FileType.CODE: summarize_code,
    FileType.MARKDOWN: summarize_markdown, FileType.TEXT: summarize_text,
    FileType.BINARY: summarize_binary, FileType.EMPTY: summarize_empty}


def bound(lines: list[str], max_tokens: int, more: str) -> str:
    """The lines that fit `max_tokens` (estimate), then a note that the rest was cut."""
    text = "\n".join(lines)
    if estimate_tokens(text) <= max_tokens:
        return text
    room = max_tokens * 4 - len(more) - 8
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            if not kept:  # one line longer than the whole budget
                kept.append(line[: max(0, room - 1)] + "…")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept + [more])


def summarize(fh: BinaryIO, size: int, name: str, limits: SummaryLimits | None = None) -> FileSummary:
    """The exploration summary of one file (see the module docstring)."""
    limits = limits or SummaryLimits()
    fh.seek(0)
    head = fh.read(min(limits.head_bytes, 1 << 16))
    ftype = detect_type(name, head, size)
    try:
        lines, facts = SUMMARIZERS[ftype](fh, size, name, limits)
    except (ValueError, SyntaxError, RecursionError, MemoryError, UnicodeError, LookupError) as e:
        fallback = FileType.TEXT if ftype is not FileType.BINARY else FileType.BINARY
        lines, facts = SUMMARIZERS[fallback](fh, size, name, limits)
        lines = [f"(could not be read as {ftype}: {clip(f'{type(e).__name__}: {e}', 160)}; shown as {fallback})"] + lines
        facts = {**facts, "parse_error": clip(str(e), 160)}
        ftype = fallback
    text = bound(lines, limits.max_tokens, "… [summary cut at its token cap; the whole file is in the payload]")
    return FileSummary(ftype, text, facts)
