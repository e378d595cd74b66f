"""Read histories from files into event rows, validating everything before any write.

Formats:
* `jsonl`: one event per line, `{"session", "role", "text", "time"?, "kind"?, "meta"?}`.
* `longmemeval`: LongMemEval JSON (a list of instances, or one instance). One instance
  per log, the way the benchmark is run: each question has its own haystack. Sessions are
  named by haystack session id, one event per turn, and `meta` carries `question_id`,
  the turn index, the session date and `has_answer`.

Errors name the place (`file:line: reason` or `file: instance N: reason`) and are raised
before anything is written, so a failed import leaves the log as it was.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


class BadInputError(ValueError):
    """Bad input: the message says where and why."""


@dataclass
class Parsed:
    rows: list[dict]
    format: str
    skipped: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)


_EVENT_KEYS = {"session", "role", "text", "time", "kind", "meta"}


def detect_format(path: Path, head: bytes) -> str:
    s = head.lstrip()
    if not s:
        raise BadInputError(f"{path}: empty file")
    if s[:1] == b"[":
        return "longmemeval"
    if s[:1] == b"{":
        first_line = s.split(b"\n", 1)[0]
        try:
            json.loads(first_line)
            return "jsonl"
        except ValueError:
            return "longmemeval"  # one pretty-printed JSON object
    raise BadInputError(f"{path}:1: not JSON or JSONL (starts with {s[:20]!r})")


def parse_file(path: str | Path, fmt: str = "auto", *, instance: str | None = None, skip_bad: bool = False) -> Parsed:
    path = Path(path)
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    if path.is_dir():
        raise BadInputError(f"{path}: is a directory")
    data = path.read_bytes()
    if fmt == "auto":
        fmt = detect_format(path, data[:4096])
    if fmt == "jsonl":
        return _parse_jsonl(path, data, skip_bad)
    if fmt == "longmemeval":
        return _parse_longmemeval(path, data, instance)
    raise BadInputError(f"unknown format {fmt!r} (use auto, jsonl or longmemeval)")


def check_event(obj: object) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - _EVENT_KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(_EVENT_KEYS)}")
    for key in ("session", "role", "text"):
        if key not in obj:
            raise ValueError(f"missing field {key!r}")
    for key in ("session", "role", "kind", "time"):
        if key in obj and obj[key] is not None and not isinstance(obj[key], str):
            raise ValueError(f"field {key!r} must be a string, got {type(obj[key]).__name__}")
    for key in ("session", "role", "kind"):
        if key in obj and not obj[key]:
            raise ValueError(f"field {key!r} must not be empty")
    if not isinstance(obj["text"], str):
        raise ValueError(f"field 'text' must be a string, got {type(obj['text']).__name__}")
    if "meta" in obj and obj["meta"] is not None and not isinstance(obj["meta"], dict):
        raise ValueError(f"field 'meta' must be an object, got {type(obj['meta']).__name__}")
    return {"session": obj["session"], "role": obj["role"], "text": obj["text"],
            "kind": obj.get("kind") or "message", "time": obj.get("time"), "meta": obj.get("meta") or {}}


def _parse_jsonl(path: Path, data: bytes, skip_bad: bool) -> Parsed:
    rows, skipped = [], []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ValueError(f"not valid UTF-8 (byte {e.start})") from None
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"invalid JSON: {e.msg} at column {e.colno}") from None
            rows.append(check_event(obj))
        except ValueError as e:
            msg = f"{path}:{lineno}: {e}"
            if not skip_bad:
                raise BadInputError(msg) from None
            skipped.append(msg)
    if not rows:
        raise BadInputError(f"{path}: no events" + (f" ({len(skipped)} bad lines skipped)" if skipped else ""))
    return Parsed(rows, "jsonl", skipped)


_LME_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})(?: \(\w+\))? (\d{2}):(\d{2})$")


def lme_date_to_iso(value: str) -> str:
    """'2023/05/30 (Tue) 23:40' -> '2023-05-30T23:40:00'; other strings unchanged."""
    m = _LME_DATE.match(value.strip()) if isinstance(value, str) else None
    if not m:
        return value
    y, mo, d, h, mi = m.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:00"


def _parse_longmemeval(path: Path, data: bytes, instance: str | None) -> Parsed:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInputError(f"{path}:{line}: not valid UTF-8 (byte {e.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInputError(f"{path}:{e.lineno}: invalid JSON: {e.msg} at column {e.colno}") from None
    items = doc if isinstance(doc, list) else [doc]
    if not items:
        raise BadInputError(f"{path}: no LongMemEval instances")
    for i, inst in enumerate(items):
        if not isinstance(inst, dict) or "haystack_sessions" not in inst:
            raise BadInputError(f"{path}: instance {i}: not a LongMemEval instance (no 'haystack_sessions')")
    if instance is None:
        if len(items) > 1:
            ids = ", ".join(str(x.get("question_id")) for x in items[:5])
            raise BadInputError(f"{path}: {len(items)} instances; choose one with --instance QID (e.g. {ids})")
        inst, idx = items[0], 0
    else:
        found = [(j, x) for j, x in enumerate(items) if str(x.get("question_id")) == instance]
        if not found:
            raise BadInputError(f"{path}: no instance with question_id {instance!r}")
        idx, inst = found[0]
    where = f"{path}: instance {idx} ({inst.get('question_id')})"
    sessions, ids, dates = inst["haystack_sessions"], inst.get("haystack_session_ids"), inst.get("haystack_dates")
    if not isinstance(sessions, list):
        raise BadInputError(f"{where}: 'haystack_sessions' must be a list")
    ids = ids if isinstance(ids, list) else [f"session_{i}" for i in range(len(sessions))]
    dates = dates if isinstance(dates, list) else [None] * len(sessions)
    if not (len(ids) == len(dates) == len(sessions)):
        raise BadInputError(f"{where}: haystack_session_ids/dates/sessions differ in length "
                           f"({len(ids)}/{len(dates)}/{len(sessions)})")
    qid = inst.get("question_id")
    rows = []
    for s_i, (sid, date, turns) in enumerate(zip(ids, dates, sessions)):
        if not isinstance(turns, list):
            raise BadInputError(f"{where}: session {s_i} ({sid}) is not a list of turns")
        for t_i, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) \
                    or not isinstance(turn.get("content"), str) or not turn.get("role"):
                raise BadInputError(f"{where}: session {s_i} ({sid}) turn {t_i}: expected {{role, content}} strings")
            meta = {"question_id": qid, "turn": t_i, "date": date, "has_answer": bool(turn.get("has_answer", False))}
            rows.append({"session": str(sid), "role": turn["role"], "text": turn["content"], "kind": "message",
                         "time": lme_date_to_iso(date) if date else None, "meta": meta})
    if not rows:
        raise BadInputError(f"{where}: no turns")
    info = {"question_id": qid, "question_type": inst.get("question_type"), "question": inst.get("question"),
            "answer": inst.get("answer"), "question_date": inst.get("question_date"),
            "answer_session_ids": inst.get("answer_session_ids"), "instances_in_file": len(items)}
    return Parsed(rows, "longmemeval", [], info)


def import_rows(log, rows: list[dict], batch: int = 5000, progress=None) -> list[int]:
    """Append validated rows in ONE transaction (all or nothing); `progress(n)` per batch."""
    if progress is None:
        return log.append_many(rows)
    # one transaction for the whole import, reported in batches
    return log.append_many(_Counted(rows, batch, progress))


class _Counted:
    def __init__(self, rows, batch, progress):
        self.rows, self.batch, self.progress = rows, batch, progress

    def __iter__(self):
        for i, r in enumerate(self.rows, 1):
            yield r
            if i % self.batch == 0:
                self.progress(self.batch)
        self.progress(len(self.rows) % self.batch)
