"""Strict JSON for imported files: no NaN/Infinity (nor a number that overflows to infinity),
integers of at most MAX_INT_DIGITS digits, nesting at most MAX_DEPTH deep; errors located as
`file:line: reason` (BadInputError)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

from .rows import BadInputError

MAX_DEPTH = 64          # JSON nesting (arrays and objects) in any imported document or line
MAX_INT_DIGITS = 4300   # Python's own default limit for int <-> str


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


def loads(text: str):
    """json.loads, strictly (see the module docstring); raises json.JSONDecodeError or _Refused."""
    try:
        obj = json.loads(text, parse_constant=_no_constant, parse_int=_int, parse_float=_float)
    except RecursionError:
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels") from None
    if not _depth_ok(obj):
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
    return obj


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|NaN|-?Infinity|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def locate_refusal(text: str) -> int | None:
    """The 1-based line of the first thing `loads` refuses (strings skipped), or None.
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


BOM = b"\xef\xbb\xbf"


def read_json_file(path: Path):
    """A JSON file's document with clear `file:line` errors (BadInputError): a leading BOM
    dropped, invalid UTF-8, invalid JSON and refused constants (NaN, Infinity) located."""
    return load_json_doc(path, Path(path).read_bytes().removeprefix(BOM))


def load_json_doc(path: Path, data: bytes):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise BadInputError(f"{path}:{line}: not valid UTF-8 (byte {e.start})") from None
    try:
        return loads(text)
    except json.JSONDecodeError as e:
        raise BadInputError(f"{path}:{e.lineno}: invalid JSON: {e.msg} at column {e.colno}") from None
    except _Refused as e:
        line = locate_refusal(text)
        raise BadInputError(f"{path}:{line}: {e}" if line else f"{path}: {e}") from None




def loads_line(raw: bytes):
    """One JSONL line's object; ValueError says why (invalid UTF-8, invalid JSON, refused)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"not valid UTF-8 (byte {e.start})") from None
    try:
        return loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"invalid JSON: {e.msg} at column {e.colno}") from None
