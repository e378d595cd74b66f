"""Read histories from files into event rows, validating everything before any write.

Formats (`FORMATS`; `parse_file(path)` tells them apart by content, or takes `fmt`):
* `jsonl`: one event per line, `{"session", "role", "text", "time"?, "kind"?, "meta"?}`
  (scroll.importers.events_jsonl).
* `chat-jsonl`: OpenAI chat-completions logs, one `{"messages": [...]}` conversation per line
  (scroll.importers.chat).
* `longmemeval`: LongMemEval JSON, one instance per log (scroll.importers.longmemeval).
* `locomo`: LoCoMo JSON, one conversation per log (scroll.importers.locomo).
* `llm-logs`: simonw/llm's `logs.db`, read-only (scroll.importers.llm_logs).

Every event's origin is `history`. Formats with answers (LongMemEval, LoCoMo) put them in
label records (`Parsed.labels`) that go to the log's sidecar (scroll.labels) only after the
events are committed (`write_labels`); events carry none. Errors name the place
(`file:line: reason`, `file: instance N: reason`) and are raised before anything is written: a
row that `parse_file` returns is one `EventLog.append_many` accepts. JSON is parsed strictly
(scroll.importers.strict_json).
"""
from __future__ import annotations

import re
from pathlib import Path

from . import chat, events_jsonl, llm_logs, locomo, longmemeval
from .longmemeval import lme_date_to_iso, longmemeval_instance, neutral_session_names
from .rows import (EVENT_KEYS, BadInputError, Parsed, check_event, check_row, history_row, import_rows,
                   labels_with_seqs, type_name, write_labels)
from .strict_json import BOM, MAX_DEPTH, MAX_INT_DIGITS, load_json_doc, loads_line, read_json_file

FORMATS = {
    "jsonl": "events JSONL, one {session, role, text, time?, kind?, meta?} a line",
    "chat-jsonl": "OpenAI chat-completions logs, one {\"messages\": [...]} conversation a line",
    "longmemeval": "LongMemEval JSON (instances with haystack_sessions)",
    "locomo": "LoCoMo JSON (samples with conversation and qa)",
    "llm-logs": "simonw/llm's logs.db (SQLite, read-only)",
}

__all__ = ["FORMATS", "BadInputError", "Parsed", "parse_file", "detect_format", "check_event", "check_row",
           "history_row", "import_rows", "labels_with_seqs", "write_labels", "read_json_file", "load_json_doc",
           "lme_date_to_iso", "longmemeval_instance", "neutral_session_names", "MAX_DEPTH", "MAX_INT_DIGITS",
           "EVENT_KEYS", "type_name"]


def supported() -> str:
    return "; ".join(f"{k} ({v})" for k, v in FORMATS.items())


def _doc_format(path: Path, doc) -> str:
    first = doc[0] if isinstance(doc, list) and doc else doc
    if isinstance(first, dict) and "haystack_sessions" in first:
        return "longmemeval"
    if isinstance(first, dict) and "conversation" in first and "qa" in first:
        return "locomo"
    raise BadInputError(f"{path}: a JSON document that is neither LongMemEval nor LoCoMo; the formats read "
                        f"here: {supported()}")


def _line_format(obj) -> str | None:
    if chat.is_chat_line(obj):
        return "chat-jsonl"
    if isinstance(obj, dict) and {"session", "role", "text"} <= set(obj):
        return "jsonl"
    return None


def detect_format(path: Path, data: bytes) -> str:
    """The format of a file's bytes (the whole file, so a long first line is fine)."""
    if data.startswith(llm_logs.SQLITE_MAGIC):
        return "llm-logs"
    m = re.search(rb"\S", data)
    if m is None:
        raise BadInputError(f"{path}: empty file")
    start = m.start()
    c = data[start:start + 1]
    if c == b"{":
        end = data.find(b"\n", start)
        try:
            obj = loads_line(data[start:] if end < 0 else data[start:end])
        except ValueError:
            obj = None  # one pretty-printed JSON object (or a broken one: parsed, and reported, whole)
        if obj is not None and not (isinstance(obj, dict) and ("haystack_sessions" in obj or "qa" in obj)):
            fmt = _line_format(obj)
            if fmt is None:
                line = data[:start].count(b"\n") + 1
                raise BadInputError(f"{path}:{line}: a JSON line of no known format (keys {sorted(obj)[:8]}); "
                                    f"the formats read here: {supported()}")
            return fmt
    if c in (b"[", b"{"):
        return _doc_format(path, load_json_doc(path, data[start:]))
    line = data[:start].count(b"\n") + 1
    raise BadInputError(f"{path}:{line}: not JSON, JSONL or SQLite (starts with {data[start:start + 20]!r}); "
                        f"the formats read here: {supported()}")


def parse_file(path: str | Path, fmt: str = "auto", *, instance: str | None = None,
               skip_bad: bool = False) -> Parsed:
    """A file's rows and label records; BadInputError (with the place) on anything wrong.
    `instance`: the LongMemEval question_id / LoCoMo sample_id of a file that holds several;
    `skip_bad`: events JSONL only, skip malformed lines and list them in `Parsed.skipped`."""
    path = Path(path)
    if fmt != "auto" and fmt not in FORMATS:
        raise BadInputError(f"unknown format {fmt!r}; the formats read here: auto, {', '.join(FORMATS)}")
    if path.is_dir():
        raise BadInputError(f"{path}: is a directory")
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BadInputError(f"{path}: cannot read: {e.strerror or e}") from None
    data = data.removeprefix(BOM)
    detected = fmt == "auto"
    if detected:
        fmt = detect_format(path, data)
    if instance is not None and fmt not in ("longmemeval", "locomo"):
        raise BadInputError(f"--instance goes with LongMemEval or LoCoMo files, not {fmt}")
    if skip_bad and fmt != "jsonl":
        raise BadInputError(f"--skip-bad goes with events JSONL, not {fmt}")
    try:
        if fmt == "llm-logs":
            return llm_logs.parse(path)
        if fmt in ("longmemeval", "locomo"):
            doc = load_json_doc(path, data)
            return (longmemeval if fmt == "longmemeval" else locomo).parse(path, doc, instance)
        if data.startswith(llm_logs.SQLITE_MAGIC):
            raise BadInputError(f"{path}: a SQLite database, not {fmt} (--format llm-logs reads llm's logs.db)")
        return chat.parse(path, data) if fmt == "chat-jsonl" else events_jsonl.parse(path, data, skip_bad)
    except BadInputError as e:
        if detected and fmt in ("jsonl", "chat-jsonl"):  # a later line of another format: say what was assumed
            raise BadInputError(f"{e} (read as {fmt}, detected from the first line; one format per file: "
                                f"{', '.join(FORMATS)})") from None
        raise
