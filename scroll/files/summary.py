"""Type-aware exploration summaries of a stored file (LCM's large-file handling).

    summarize(fh, size, name, limits) -> FileSummary(type, text, facts, tokens)   (scroll.files.dispatch)

`fh` is a binary file object positioned at 0 (the host reads the payload store's copy,
never a path a cell named). The type comes from the name's extension and the first bytes
(`detect_type`); each type has its summarizer:

    csv / tsv      columns, inferred types (sample), row count (whole file), sample rows
    json / jsonl   schema outline (keys, types, nesting, counts) and samples
    python         classes / functions / methods with line numbers (ast; regex if it does not parse)
    code           the same outline by regex (other languages)
    markdown       the headings outline with line numbers
    text           size, line count, first lines and a short extractive summary (no model call)
    binary / empty what is known without reading it as text

Bounded whatever the file: reads are capped (`SummaryLimits`), each sample line or cell
is clipped, and the text is cut at `max_tokens` (scroll.records.estimate_tokens). A
summarizer that fails on malformed input falls back to the text (or binary) summary and
says why; `summarize` itself only raises on I/O errors. This module holds the types, the
shared readers and the plain-text summarizers; code.py and structured.py build on it.
"""
from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import BinaryIO, Callable, Iterator

from ..records import estimate_tokens


class FileType(str, Enum):
    CSV = "csv"
    TSV = "tsv"
    JSON = "json"
    JSONL = "jsonl"
    PYTHON = "python"
    CODE = "code"
    MARKDOWN = "markdown"
    TEXT = "text"
    BINARY = "binary"
    EMPTY = "empty"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class SummaryLimits:
    max_tokens: int = 600            # the summary's size, whatever the file's
    head_bytes: int = 1 << 20        # read for sniffing, first lines, the text summary
    parse_bytes: int = 16 << 20      # JSON / Python parsed whole up to this size
    infer_rows: int = 1000           # CSV rows / JSONL lines sampled for types and schema
    sample_rows: int = 3
    cell_chars: int = 60             # one sample value
    line_chars: int = 160            # one sample line
    outline_lines: int = 80          # entries of an outline before "... N more"

    def __post_init__(self) -> None:
        for name in ("max_tokens", "head_bytes", "parse_bytes", "infer_rows", "cell_chars", "line_chars",
                     "outline_lines"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"summary limits: {name} must be an int >= 1, got {v!r}")
        if self.max_tokens < 32:
            raise ValueError("summary limits: max_tokens must be >= 32")


@dataclass(frozen=True)
class FileSummary:
    type: FileType
    text: str                         # bounded: at most limits.max_tokens
    facts: dict = field(default_factory=dict)  # JSON-able numbers (rows, lines, columns, ...)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


Summarizer = Callable[[BinaryIO, int, str, SummaryLimits], "tuple[list[str], dict]"]

_EXT = {
    "csv": FileType.CSV, "tsv": FileType.TSV, "tab": FileType.TSV, "json": FileType.JSON,
    "jsonl": FileType.JSONL, "ndjson": FileType.JSONL, "py": FileType.PYTHON, "pyi": FileType.PYTHON,
    "md": FileType.MARKDOWN, "markdown": FileType.MARKDOWN, "txt": FileType.TEXT, "log": FileType.TEXT,
    "rst": FileType.TEXT,
}
CODE_EXTS = frozenset("js jsx ts tsx mjs java kt kts scala c h cc cpp cxx hpp hh cs go rs rb php swift m mm lua "
                      "r jl pl pm sh bash zsh ex exs erl hs ml fs dart groovy sql".split())
_MAGIC = [(b"\x89PNG", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
          (b"%PDF", "PDF document"), (b"PK\x03\x04", "ZIP archive (or docx/xlsx/jar)"),
          (b"\x1f\x8b", "gzip data"), (b"\x7fELF", "ELF executable"), (b"SQLite format 3", "SQLite database"),
          (b"BZh", "bzip2 data"), (b"\xfd7zXZ", "xz data"), (b"PAR1", "Parquet file")]


def is_text(head: bytes) -> bool:
    """UTF-8 without NUL bytes (a multi-byte character cut at the end of `head` is fine)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
        return True
    except UnicodeDecodeError as e:
        return e.start >= len(head) - 3 and e.reason in ("unexpected end of data",)


def detect_type(name: str, head: bytes, size: int) -> FileType:
    if size == 0:
        return FileType.EMPTY
    if not is_text(head):
        return FileType.BINARY
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in _EXT:
        return _EXT[ext]
    if ext in CODE_EXTS:
        return FileType.CODE
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"#!") and b"python" in text.split(b"\n", 1)[0]:
        return FileType.PYTHON
    if text[:1] in (b"{", b"["):
        first = text.split(b"\n", 1)[0].strip()
        return FileType.JSONL if first.endswith(b"}") and text.count(b"\n") > 0 and first.startswith(b"{") \
            else FileType.JSON
    return FileType.TEXT


def clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: max(1, n - 1)] + "…"


def text_stream(fh: BinaryIO) -> io.TextIOWrapper:
    """A text view of `fh` (UTF-8, bad bytes replaced, newlines kept as they are for csv)."""
    fh.seek(0)
    return io.TextIOWrapper(fh, encoding="utf-8-sig", errors="replace", newline="")


def text_lines(fh: BinaryIO) -> Iterator[str]:
    """The file's lines as text; `fh` stays open afterwards (the wrapper is detached)."""
    t = text_stream(fh)
    try:
        yield from t
    finally:
        t.detach()


def count_lines(fh: BinaryIO, size: int) -> int:
    """Lines in the file (a last line without a newline counts), reading in 1 MiB blocks."""
    fh.seek(0)
    n, last = 0, b""
    while True:
        block = fh.read(1 << 20)
        if not block:
            break
        n += block.count(b"\n")
        last = block
    return n + (1 if size and not last.endswith(b"\n") else 0)


def head_lines(fh: BinaryIO, limits: SummaryLimits, n: int) -> list[str]:
    """The first `n` lines of the file's head, each clipped (one huge line reads at most head_bytes)."""
    fh.seek(0)
    text = fh.read(limits.head_bytes).decode("utf-8", "replace").lstrip("\ufeff")
    return [clip(x, limits.line_chars) for x in text.splitlines()[:n]]


# ---- text, markdown, binary ---------------------------------------------------------------
_SENT = re.compile(r"[^.!?\n]{20,400}[.!?]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
STOP = frozenset("the and for that with this from have has had was were are but not you your they their them "
                 "his her its our out who what when where which will would can could should there then than "
                 "into about also been being more most some such only other any all one two may".split())


def extractive(text: str, k: int = 3, chars: int = 200) -> list[str]:
    """The k sentences with the most frequent content words (Luhn), in their original order."""
    sents = list(dict.fromkeys(s.strip() for s in _SENT.findall(text)))[:5000]
    if not sents:
        return []
    freq = Counter(w for w in _WORD.findall(text.lower()) if w not in STOP)

    def score(s: str) -> float:
        words = [w for w in _WORD.findall(s.lower()) if w not in STOP]
        return sum(freq[w] for w in set(words)) / (1 + len(words)) ** 0.5

    best = sorted(range(len(sents)), key=lambda i: (-score(sents[i]), i))[:k]
    return [clip(sents[i], chars) for i in sorted(best)]


def summarize_text(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    lines = count_lines(fh, size)
    fh.seek(0)
    head = fh.read(limits.head_bytes).decode("utf-8", "replace")
    words = len(head.split())
    scanned = "" if size <= limits.head_bytes else f" (words counted in the first {limits.head_bytes} bytes)"
    out = [f"{lines} lines, {words} words{scanned}", "first lines:"]
    out += [f"  {x}" for x in head_lines(fh, limits, 8)]
    summary = extractive(head)
    if summary:
        out.append("key sentences (extractive):")
        out += [f"  - {s}" for s in summary]
    return out, {"lines": lines, "words": words}


_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def summarize_markdown(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    heads: list[str] = []
    n_heads = lines = blocks = 0
    fence = None
    for lines, raw in enumerate(text_lines(fh), 1):
        line = raw.rstrip("\r\n")
        s = line.lstrip()
        if s.startswith(("```", "~~~")):
            if fence is None:
                fence, blocks = s[:3], blocks + 1
            elif s.startswith(fence):
                fence = None
            continue
        m = _ATX.match(line) if fence is None else None
        if m:
            n_heads += 1
            if len(heads) < limits.outline_lines:
                heads.append(f"{'  ' * (len(m.group(1)) - 1)}L{lines} {m.group(1)} {clip(m.group(2), 100)}")
    out = [f"{lines} lines, {n_heads} headings, {blocks} code blocks", "outline:"]
    out += [f"  {h}" for h in heads] or ["  (no headings)"]
    if n_heads > len(heads):
        out.append(f"  … {n_heads - len(heads)} more headings")
    return out, {"lines": lines, "headings": n_heads, "code_blocks": blocks}


def summarize_binary(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    fh.seek(0)
    head = fh.read(64)
    kind = next((what for magic, what in _MAGIC if head.startswith(magic)), "unknown binary data")
    return [f"binary: {kind}; not summarized as text", f"first bytes: {head[:32].hex(' ')}"], {"magic": kind}


def summarize_empty(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    return ["empty file (0 bytes)"], {}
