"""What every importer produces: checked event rows (`Parsed`), the label records that go to
the sidecar once the rows are committed, and the one-transaction append."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..labels import LabelStore
from ..origin import Origin
from ..records import check_time


class BadInputError(ValueError):
    """Bad input: the message says where and why."""


@dataclass
class Parsed:
    """A file's rows, ready for `EventLog.append_many`, and what goes beside them.

    `labels` maps a sidecar key (e.g. "longmemeval/<question_id>") to its record; a record's
    `evidence_rows` (indices into `rows`) become `evidence_seqs` once the rows are appended.
    Formats without answers (events JSONL, chat logs) have none."""

    rows: list[dict]
    format: str
    skipped: list[str] = field(default_factory=list)
    info: dict = field(default_factory=dict)                 # what was read (no labels): safe to print
    labels: dict[str, dict] = field(default_factory=dict)

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(r["session"] for r in self.rows))


EVENT_KEYS = {"session", "role", "text", "time", "kind", "meta"}


def type_name(v) -> str:
    """A JSON value's type as an error message names it ("null" for None)."""
    return "null" if v is None else type(v).__name__


def utf8(value: str, name: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"field {name!r} is not valid Unicode (lone surrogate at index {e.start})") from None


def check_row(row: dict) -> dict:
    """What EventLog.append_many would refuse, refused here, before any log is opened."""
    for key in ("session", "role", "kind", "text"):
        utf8(row[key], key)
    if row.get("time") is not None:
        utf8(row["time"], "time")
        check_time(row["time"])
    try:
        json.dumps(row["meta"], ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as e:
        raise ValueError(f"field 'meta' cannot be stored: {e}") from None
    return row


def history_row(session: str, role: str, text: str, *, time: str | None = None, kind: str = "message",
                meta: dict | None = None) -> dict:
    """A checked row of origin `history` (ValueError says what is wrong)."""
    return check_row({"session": session, "role": role, "text": text, "kind": kind, "time": time,
                      "meta": meta or {}, "origin": Origin.HISTORY})


def check_event(obj: object) -> dict:
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    unknown = set(obj) - EVENT_KEYS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(EVENT_KEYS)}")
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
    return history_row(obj["session"], obj["role"], obj["text"], kind=obj.get("kind") or "message",
                       time=obj.get("time"), meta=obj.get("meta"))


def check_labels(where: str, labels: dict[str, dict]) -> None:
    for key, record in labels.items():
        try:
            json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, RecursionError) as e:
            raise BadInputError(f"{where}: labels of {key} cannot be stored: {e}") from None


def labels_with_seqs(parsed: Parsed, seqs: list[int]) -> dict[str, dict]:
    """The sidecar records once the rows are appended: evidence rows become `evidence_seqs`."""
    out = {}
    for key, rec in parsed.labels.items():
        record = {k: v for k, v in rec.items() if k != "evidence_rows"}
        if "evidence_rows" in rec:
            record["evidence_seqs"] = [seqs[i] for i in rec["evidence_rows"]]
        record["seq_range"] = [seqs[0], seqs[-1]] if seqs else None
        out[key] = record
    return out


def write_labels(log_path, parsed: Parsed, seqs: list[int]) -> list[str]:
    """Write the parsed labels to the log's sidecar; call only after the events committed.
    Returns the keys written (none when the format has no labels)."""
    records = labels_with_seqs(parsed, seqs)
    if records:
        LabelStore(log_path).put_many(records)
    return list(records)


def import_rows(log, rows: list[dict], batch: int = 5000, progress=None) -> list[int]:
    """Append validated rows in ONE transaction (all or nothing); `progress(n)` per batch."""
    if progress is None:
        return log.append_many(rows)
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
