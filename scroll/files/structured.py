"""Summaries of structured data: CSV/TSV (columns, types, rows, samples) and JSON/JSONL
(a schema outline: keys, types, nesting, counts; and samples). See scroll.files.summary."""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from typing import Any, BinaryIO

from .summary import SummaryLimits, clip, count_lines, head_lines, text_stream

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
_BOOL = frozenset({"true", "false", "yes", "no"})
_ORDER = ("int", "float", "bool", "date", "datetime")


def _kind(v: str) -> str:
    s = v.strip()
    if not s:
        return "empty"
    if _INT.fullmatch(s):
        return "int"
    if _FLOAT.fullmatch(s):
        return "float"
    if s.lower() in _BOOL:
        return "bool"
    if _DATE.fullmatch(s):
        return "date"
    if _DATETIME.fullmatch(s):
        return "datetime"
    return "str"


def column_type(values: list[str], limits: SummaryLimits) -> str:
    """'int [1..90]', 'float [..]', 'date [..]', 'str (12 distinct, e.g. a, b)' over the sampled values."""
    kinds = Counter(_kind(v) for v in values)
    empty = kinds.pop("empty", 0)
    filled = [v.strip() for v in values if v.strip()]
    if not kinds:
        return "empty"
    if set(kinds) <= {"int", "float"}:
        t = "float" if "float" in kinds else "int"
        nums = [float(v) for v in filled]
        lo, hi = min(nums), max(nums)
        fmt = (lambda x: str(int(x))) if t == "int" else (lambda x: f"{x:g}")
        desc = f"{t} [{fmt(lo)}..{fmt(hi)}]"
    elif len(kinds) == 1 and next(iter(kinds)) in ("date", "datetime"):
        desc = f"{next(iter(kinds))} [{min(filled)}..{max(filled)}]"
    elif len(kinds) == 1 and "bool" in kinds:
        desc = "bool"
    else:
        distinct = Counter(filled)
        top = ", ".join(clip(v, limits.cell_chars // 2) for v, _ in distinct.most_common(3))
        desc = f"str ({len(distinct)} distinct, e.g. {top})"
    return desc + (f", {empty} empty" if empty else "")


def summarize_csv(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    text = text_stream(fh)
    try:
        sample = text.read(64 << 10)
        tab = name.lower().endswith((".tsv", ".tab"))
        try:
            dialect: Any = csv.Sniffer().sniff(sample, delimiters="\t" if tab else ",;\t|")
        except csv.Error:
            dialect = csv.excel_tab if tab else csv.excel
        text.seek(0)
        reader = csv.reader(text, dialect)
        header = next(reader, None)
        if not header:
            raise ValueError("no header row")
        width = len(header)
        cols: list[list[str]] = [[] for _ in header]
        samples: list[list[str]] = []
        rows = ragged = 0
        for row in reader:
            rows += 1
            if len(row) != width:
                ragged += 1
            if rows <= limits.infer_rows:
                for i, v in enumerate(row[:width]):
                    cols[i].append(v[:1000])
                if len(samples) < limits.sample_rows:
                    samples.append(row)
    except csv.Error as e:
        raise ValueError(f"CSV: {e}") from None
    finally:
        text.detach()
    delim = {",": "comma", "\t": "tab", ";": "semicolon", "|": "pipe"}.get(dialect.delimiter, repr(dialect.delimiter))
    out = [f"{rows} rows x {width} columns ({delim}-separated; header row not counted)"
           + (f"; {ragged} rows with another number of fields" if ragged else "")]
    out.append(f"columns (types from the first {min(rows, limits.infer_rows)} rows):")
    for i, h in enumerate(header[: limits.outline_lines]):
        out.append(f"  {clip(h, limits.cell_chars) or f'(column {i + 1})'}: {column_type(cols[i], limits)}")
    if width > limits.outline_lines:
        out.append(f"  … {width - limits.outline_lines} more columns")
    out.append("sample rows:")
    for r in samples:
        out.append("  " + clip(" | ".join(clip(v, limits.cell_chars) for v in r), limits.line_chars))
    return out, {"rows": rows, "columns": width, "header": [clip(h, limits.cell_chars) for h in header[:50]],
                 "ragged_rows": ragged}


# ---- JSON ----------------------------------------------------------------------------------
def _tname(v: Any) -> str:
    if v is None:
        return "null"
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "object"}.get(type(v), "?")


class _Outline:
    """The schema outline of sampled values: one line per key path, merged over samples."""

    def __init__(self, limits: SummaryLimits, max_depth: int = 5, per_list: int = 200):
        self.limits, self.max_depth, self.per_list = limits, max_depth, per_list
        self.lines: list[str] = []
        self.cut = 0

    def add(self, label: str, values: list, depth: int) -> None:
        if len(self.lines) >= self.limits.outline_lines:
            self.cut += 1
            return
        types = Counter(_tname(v) for v in values)
        parts = []
        for t, n in types.most_common():
            if t == "list":
                lens = [len(v) for v in values if isinstance(v, list)]
                rng = f"{min(lens)}" if min(lens) == max(lens) else f"{min(lens)}..{max(lens)}"
                parts.append(f"list[{rng}]")
            elif t == "object":
                keys = [len(v) for v in values if isinstance(v, dict)]
                parts.append(f"object({max(keys)} keys)" if keys else "object")
            else:
                parts.append(t)
        self.lines.append(f"{'  ' * depth}{label}: {' | '.join(parts)}")
        if depth >= self.max_depth:
            return
        dicts = [v for v in values if isinstance(v, dict)]
        if dicts:
            keys: dict[str, list] = {}
            for d in dicts:
                for k, v in list(d.items())[:100]:
                    keys.setdefault(k, []).append(v)
            for k, vs in list(keys.items())[:40]:
                seen = f" ({len(vs)}/{len(dicts)})" if len(vs) < len(dicts) else ""
                self.add(clip(k, 40) + seen, vs, depth + 1)
            if len(keys) > 40:
                self.lines.append(f"{'  ' * (depth + 1)}… {len(keys) - 40} more keys")
        items = [x for v in values if isinstance(v, list) for x in v[: self.per_list]][: self.per_list * 5]
        if items:
            self.add("[]", items, depth + 1)


def _outline(values: list, label: str, limits: SummaryLimits) -> list[str]:
    o = _Outline(limits)
    o.add(label, values, 0)
    return o.lines + ([f"… {o.cut} more paths"] if o.cut else [])


def _sample(v: Any, limits: SummaryLimits) -> str:
    return clip(json.dumps(v, ensure_ascii=False, sort_keys=True, default=str), limits.line_chars)


def summarize_json(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    if size > limits.parse_bytes:
        lines = count_lines(fh, size)
        out = [f"JSON of {size} bytes, {lines} lines: larger than the {limits.parse_bytes}-byte parse limit, "
               "so no schema outline; first lines:"]
        return out + [f"  {x}" for x in head_lines(fh, limits, 8)], {"lines": lines, "parsed": False}
    fh.seek(0)
    doc = json.loads(fh.read().decode("utf-8-sig"))
    top = _tname(doc)
    count = len(doc) if isinstance(doc, (list, dict)) else 1
    out = [f"top level: {top}" + (f" with {count} {'items' if top == 'list' else 'keys'}" if top in ("list", "object")
                                  else ""), "schema outline (key: types; (n/m) = present in n of m):"]
    out += ["  " + x for x in _outline([doc], "$", limits)]
    if isinstance(doc, list) and doc:
        out.append("samples:")
        out += [f"  [{i}] {_sample(x, limits)}" for i, x in enumerate(doc[: limits.sample_rows])]
    elif isinstance(doc, dict):
        out.append("sample: " + _sample(doc, limits))
    return out, {"top": top, "count": count, "parsed": True}


def summarize_jsonl(fh: BinaryIO, size: int, name: str, limits: SummaryLimits) -> tuple[list[str], dict]:
    values: list = []
    samples: list[str] = []
    n = bad = scanned = 0
    fh.seek(0)
    for raw in fh:
        if not raw.strip():
            continue
        n += 1
        if scanned < limits.infer_rows:
            scanned += 1
            try:
                v = json.loads(raw.decode("utf-8-sig")) if len(raw) <= limits.head_bytes else None
                if v is None and len(raw) > limits.head_bytes:
                    raise ValueError("line too long to sample")
                values.append(v)
                if len(samples) < limits.sample_rows:
                    samples.append(_sample(v, limits))
            except (ValueError, UnicodeDecodeError, RecursionError):
                bad += 1
    if n and bad == scanned:
        raise ValueError(f"none of the first {scanned} lines is JSON")
    out = [f"{n} records (JSON lines)" + (f"; {bad} of the first {scanned} lines are not JSON" if bad else ""),
           f"schema outline over the first {len(values)} records (key: types; (n/m) = present in n of m):"]
    out += ["  " + x for x in _outline(values, "record", limits)] if values else ["  (no records)"]
    out.append("samples:")
    out += [f"  {s}" for s in samples]
    return out, {"records": n, "bad_lines_sampled": bad}
