"""Read histories from files into event rows, validating everything before any write.

Formats:
* `jsonl`: one event per line, `{"session", "role", "text", "time"?, "kind"?, "meta"?}`.
  `meta` is the user's own and is kept as given; every event's origin is `history`.
* `longmemeval`: LongMemEval JSON (a list of instances, or one instance). One instance
  per log, the way the benchmark is run: each question has its own haystack. One event
  per turn, origin `history`.

Label hygiene (LongMemEval): events carry NO label data. Their `meta` is only
`{"turn": <index in its session>, "date": <the session's haystack date>}`, and sessions
get neutral names in haystack date order: `s001`, `s002`, ... (zero-padded to at least
3 digits; sessions with a date LongMemEval's "2023/05/30 (Tue) 23:40" form does not
match, or none, come after the dated ones; ties keep file order). The events are
appended in that order. Everything an evaluation scores against - question_id,
question_type, question, answer, question_date, answer_session_ids, the evidence turns
(`has_answer`) and, once appended, their seqs, and the map from neutral names back to
the data set's session ids - goes to the label sidecar (`scroll.labels.LabelStore`)
under `longmemeval/<question_id>`, written by `write_labels` only after the events are
committed. `Parsed.labels` holds that record before the append (evidence as row indices,
`evidence_rows`).

Errors name the place (`file:line: reason` or `file: instance N: reason`) and are raised
before anything is written: a row that `parse_file` returns is one `EventLog.append_many`
accepts. JSON is parsed strictly: no NaN/Infinity (nor a number that overflows to
infinity), integers of at most MAX_INT_DIGITS digits, nesting at most MAX_DEPTH deep.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .origin import Origin

MAX_DEPTH = 64          # JSON nesting (arrays and objects) in any imported document or line
MAX_INT_DIGITS = 4300   # Python's own default limit for int <-> str
_BOM = b"\xef\xbb\xbf"


class BadInputError(ValueError):
    """Bad input: the message says where and why."""


@dataclass
class Parsed:
    rows: list[dict]
    format: str
    skipped: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)       # what was read (no labels): safe to print
    label_key: str | None = None                   # e.g. "longmemeval/<question_id>"
    labels: dict | None = None                     # the sidecar record; evidence as row indices


_EVENT_KEYS = {"session", "role", "text", "time", "kind", "meta"}


# ---------------------------------------------------------------- strict JSON
class _Refused(ValueError):
    """JSON that parses in Python but is refused here (NaN, huge ints, deep nesting)."""


def _no_constant(name: str):
    raise _Refused(f"{name} is not allowed (JSON has no NaN or Infinity)")


def _int(s: str) -> int:
    digits = len(s.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"an integer with {digits} digits (the limit is {MAX_INT_DIGITS})")
    return int(s)


def _float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise _Refused(f"number {s[:40]} is out of range (it would be infinite)")
    return v


def _depth_ok(obj) -> bool:
    """Iterative: True when no array/object is nested deeper than MAX_DEPTH."""
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            children = o.values()
        elif isinstance(o, list):
            children = o
        else:
            continue
        if d > MAX_DEPTH:
            return False
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return True


def _loads(text: str):
    """json.loads, strictly (see the module docstring); raises json.JSONDecodeError or _Refused."""
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_int=_int, parse_float=_float)
    except RecursionError:
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels") from None
    if not _depth_ok(obj):
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
    return obj


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|NaN|-?Infinity|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def _locate_refusal(text: str) -> int | None:
    """The 1-based line of the first thing _loads refuses (strings skipped), or None.
    Only run after a refusal, so its cost does not matter."""
    depth = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c == '"':
            continue
        if c in "[{":
            depth += 1
            bad = depth > MAX_DEPTH
        elif c in "]}":
            depth -= 1
            bad = False
        elif tok.lstrip("-")[0] in "NI":
            bad = True
        elif tok.lstrip("-").isdigit():
            bad = len(tok.lstrip("-")) > MAX_INT_DIGITS
        else:
            bad = not math.isfinite(float(tok))
        if bad:
            return text.count("\n", 0, m.start()) + 1
    return None


# ---------------------------------------------------------------- row checks
def _utf8(value: str, name: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"field {name!r} is not valid Unicode (lone surrogate at index {e.start})") from None


def check_row(row: dict) -> dict:
    """What EventLog.append_many would refuse, refused here, before any log is opened."""
    for key in ("session", "role", "kind", "text"):
        _utf8(row[key], key)
    if row.get("time") is not None:
        _utf8(row["time"], "time")
    try:
        json.dumps(row["meta"], ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:
        raise ValueError(f"field 'meta' cannot be stored: {e}") from None
    return row


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
    return check_row({"session": obj["session"], "role": obj["role"], "text": obj["text"],
                      "kind": obj.get("kind") or "message", "time": obj.get("time"),
                      "meta": obj.get("meta") or {}, "origin": Origin.HISTORY})


# ---------------------------------------------------------------- files
def detect_format(path: Path, data: bytes) -> str:
    """'jsonl' or 'longmemeval' from the content (the whole file, so a long first line is fine)."""
    m = re.search(rb"\S", data)
    if m is None:
        raise BadInputError(f"{path}: empty file")
    start = m.start()
    c = data[start:start + 1]
    if c == b"[":
        return "longmemeval"
    if c == b"{":
        end = data.find(b"\n", start)
        first = data[start:] if end < 0 else data[start:end]
        try:
            obj = _loads(first.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return "longmemeval"  # one pretty-printed JSON object (or a broken one: parsed, and reported, whole)
        return "longmemeval" if isinstance(obj, dict) and "haystack_sessions" in obj else "jsonl"
    line = data[:start].count(b"\n") + 1
    raise BadInputError(f"{path}:{line}: not JSON or JSONL (starts with {data[start:start + 20]!r})")


def parse_file(path: str | Path, fmt: str = "auto", *, instance: str | None = None, skip_bad: bool = False) -> Parsed:
    path = Path(path)
    if fmt not in ("auto", "jsonl", "longmemeval"):
        raise BadInputError(f"unknown format {fmt!r} (use auto, jsonl or longmemeval)")
    if path.is_dir():
        raise BadInputError(f"{path}: is a directory")
    if not path.exists():
        raise BadInputError(f"{path}: no such file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise BadInputError(f"{path}: cannot read: {e.strerror or e}") from None
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if fmt == "auto":
        fmt = detect_format(path, data)
    if fmt == "jsonl":
        return _parse_jsonl(path, data, skip_bad)
    return _parse_longmemeval(path, data, instance)


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
                obj = _loads(line)
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


def neutral_session_names(dates: list) -> list[str]:
    """Neutral names for sessions in haystack date order: names[i] is session i's name.
    Sessions whose date is not LongMemEval's form (or missing) come last; ties keep file order."""
    def key(i):
        d = dates[i]
        m = _LME_DATE.match(d.strip()) if isinstance(d, str) else None
        return (0, lme_date_to_iso(d), i) if m else (1, "", i)

    order = sorted(range(len(dates)), key=key)
    width = max(3, len(str(len(dates))))
    names = [""] * len(dates)
    for rank, i in enumerate(order, start=1):
        names[i] = f"s{rank:0{width}d}"
    return names


def read_json_file(path: Path):
    """A JSON file's document with clear `file:line` errors (BadInputError): a leading BOM
    dropped, invalid UTF-8, invalid JSON and refused constants (NaN, Infinity) located."""
    return _load_json_doc(path, Path(path).read_bytes().removeprefix(_BOM))


def _load_json_doc(path: Path, data: bytes):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInputError(f"{path}:{line}: not valid UTF-8 (byte {e.start})") from None
    try:
        return _loads(text)
    except json.JSONDecodeError as e:
        raise BadInputError(f"{path}:{e.lineno}: invalid JSON: {e.msg} at column {e.colno}") from None
    except _Refused as e:
        line = _locate_refusal(text)
        raise BadInputError(f"{path}:{line}: {e}" if line else f"{path}: {e}") from None


def _parse_longmemeval(path: Path, data: bytes, instance: str | None) -> Parsed:
    doc = _load_json_doc(path, data)
    items = doc if isinstance(doc, list) else [doc]
    if not items:
        raise BadInputError(f"{path}: no LongMemEval instances")
    for i, inst in enumerate(items):
        if not isinstance(inst, dict) or "haystack_sessions" not in inst:
            raise BadInputError(f"{path}: instance {i}: not a LongMemEval instance (no 'haystack_sessions')")
        qid = inst.get("question_id")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == "":
            raise BadInputError(f"{path}: instance {i}: 'question_id' must be a non-empty string")
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
    return longmemeval_instance(path, inst, idx, len(items))


def longmemeval_instance(path: Path, inst: dict, idx: int, n_items: int) -> Parsed:
    """One LongMemEval instance (already read, e.g. the idx-th of a file's n_items) ->
    Parsed rows + its label record (BadInputError `file: instance i (qid): reason`)."""
    qid = str(inst["question_id"])
    where = f"{path}: instance {idx} ({qid})"
    try:
        _utf8(qid, "question_id")
    except ValueError as e:
        raise BadInputError(f"{where}: {e}") from None
    sessions, ids, dates = inst["haystack_sessions"], inst.get("haystack_session_ids"), inst.get("haystack_dates")
    if not isinstance(sessions, list):
        raise BadInputError(f"{where}: 'haystack_sessions' must be a list")
    ids = ids if isinstance(ids, list) else [f"session_{i}" for i in range(len(sessions))]
    dates = dates if isinstance(dates, list) else [None] * len(sessions)
    if not (len(ids) == len(dates) == len(sessions)):
        raise BadInputError(f"{where}: haystack_session_ids/dates/sessions differ in length "
                            f"({len(ids)}/{len(dates)}/{len(sessions)})")
    for s_i, (sid, date) in enumerate(zip(ids, dates)):
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            raise BadInputError(f"{where}: haystack_session_ids[{s_i}] must be a string")
        if date is not None and not isinstance(date, str):
            raise BadInputError(f"{where}: haystack_dates[{s_i}] must be a string")
    names = neutral_session_names(dates)
    rows: list[dict] = []
    evidence_rows: list[int] = []
    evidence_turns: list[dict] = []
    for s_i in sorted(range(len(sessions)), key=lambda i: names[i]):
        turns, date, name = sessions[s_i], dates[s_i], names[s_i]
        if not isinstance(turns, list):
            raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) is not a list of turns")
        for t_i, turn in enumerate(turns):
            if not isinstance(turn, dict) or not isinstance(turn.get("role"), str) \
                    or not isinstance(turn.get("content"), str) or not turn.get("role"):
                raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) turn {t_i}: expected {{role, content}} strings")
            row = {"session": name, "role": turn["role"], "text": turn["content"], "kind": "message",
                   "time": lme_date_to_iso(date) if date else None, "meta": {"turn": t_i, "date": date},
                   "origin": Origin.HISTORY}
            try:
                check_row(row)
            except ValueError as e:
                raise BadInputError(f"{where}: session {s_i} ({ids[s_i]}) turn {t_i}: {e}") from None
            if turn.get("has_answer") is True:
                evidence_rows.append(len(rows))
                evidence_turns.append({"session": name, "turn": t_i})
            rows.append(row)
    if not rows:
        raise BadInputError(f"{where}: no turns")
    original = {names[i]: str(ids[i]) for i in range(len(ids))}
    to_neutral = {str(ids[i]): names[i] for i in range(len(ids))}
    answer_ids = inst.get("answer_session_ids")
    labels = {
        "source": "longmemeval", "file": str(path), "question_id": qid,
        "question_type": inst.get("question_type"), "question": inst.get("question"),
        "answer": inst.get("answer"), "question_date": inst.get("question_date"),
        "abstention": qid.endswith("_abs"),
        "answer_session_ids": answer_ids,
        "answer_sessions": sorted(to_neutral[str(a)] for a in answer_ids if str(a) in to_neutral)
        if isinstance(answer_ids, list) else None,
        "sessions": dict(sorted(original.items())),
        "evidence_turns": evidence_turns,
        "evidence_rows": evidence_rows,
    }
    try:
        json.dumps(labels, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:
        raise BadInputError(f"{where}: labels cannot be stored: {e}") from None
    info = {"instances_in_file": n_items, "sessions": len(sessions), "label_key": f"longmemeval/{qid}"}
    return Parsed(rows, "longmemeval", [], info, label_key=f"longmemeval/{qid}", labels=labels)


def labels_with_seqs(parsed: Parsed, seqs: list[int]) -> dict | None:
    """The sidecar record once the rows are appended: evidence rows become `evidence_seqs`."""
    if parsed.labels is None:
        return None
    record = {k: v for k, v in parsed.labels.items() if k != "evidence_rows"}
    record["evidence_seqs"] = [seqs[i] for i in parsed.labels["evidence_rows"]]
    record["seq_range"] = [seqs[0], seqs[-1]] if seqs else None
    return record


def write_labels(log_path, parsed: Parsed, seqs: list[int]) -> str | None:
    """Write the parsed labels to the log's sidecar; call only after the events committed.
    Returns the key written (None when the format has no labels)."""
    record = labels_with_seqs(parsed, seqs)
    if record is None:
        return None
    from .labels import LabelStore

    LabelStore(log_path).put(parsed.label_key, record)
    return parsed.label_key


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
