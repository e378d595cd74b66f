"""What a read of the event log returns (`Event`, a search `Hit`), and the checks of the
arguments the log's methods take."""
from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any

from .origin import Origin
from .payloads import Handle


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# an ISO 8601 date or date-time, or a prefix of one ("2023", "2023-05"): groups year .. second
ISO_TIME = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?)?)?)?"
                      r"(?:Z|[+-]\d{2}:?\d{2})?")


def iso_time_ok(value: str, *, prefix: bool = False) -> bool:
    """True for a real ISO 8601 date or date-time ("2023-05-17", "2023-05-17T10:00:00Z"); with `prefix`,
    a year or a year-month too (a search bound). Events are compared as strings, so a stored time that
    is not one ("9999-zz") would pass every --since filter."""
    m = ISO_TIME.fullmatch(value)
    if not m or (not prefix and m.group(3) is None):
        return False
    y, mo, d, h, mi, s = (int(g) if g else None for g in m.groups())
    try:
        datetime(y, mo or 1, d or 1, h or 0, mi or 0, s or 0)
    except ValueError:
        return False
    return True


def check_time(value: str) -> str:
    """An event's time, refused unless iso_time_ok (ValueError names the field and shows the value)."""
    if not iso_time_ok(value):
        raise ValueError(f"field 'time' must be an ISO 8601 date or date-time like 2023-05-17 or "
                         f"2023-05-17T10:00:00Z, got {value[:40]!r}")
    return value


def estimate_tokens(text: str) -> int:
    """A model-free token estimate (~4 characters a token); the View recounts exactly."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


class Event:
    """One logged event. `text` is always the full text (loaded lazily from a payload).
    `origin` is an Origin (None only for a v1 log, which predates origins)."""

    __slots__ = ("seq", "session", "time", "kind", "role", "meta", "payload", "tokens", "origin", "_text", "_store")

    def __init__(self, seq, session, time, kind, role, text, meta, payload, tokens, store=None, origin=None):
        self.seq, self.session, self.time, self.kind, self.role = seq, session, time, kind, role
        self.meta, self.payload, self.tokens = meta, payload, tokens
        self.origin = Origin(origin) if origin is not None else None
        self._text = None if payload else text
        self._store = store

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._store.open_text(self.payload) if self._store else ""
        return self._text

    @property
    def handle(self) -> Handle | None:
        return Handle(self.payload, self._store) if self.payload and self._store else None

    _FIELDS = ("seq", "session", "time", "kind", "role", "origin", "text", "meta", "payload", "tokens")

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self._FIELDS}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        text = self.text
        short = text if len(text) <= 60 else text[:57] + "..."
        return (f"{type(self).__name__}(seq={self.seq}, session={self.session!r}, role={self.role!r}, "
                f"kind={self.kind!r}, origin={str(self.origin) if self.origin else None!r}, text={short!r})")


class Hit(Event):
    __slots__ = ("score",)
    _FIELDS = Event._FIELDS + ("score",)

    def __init__(self, *args, score: float, **kw):
        super().__init__(*args, **kw)
        self.score = score


# Argument checks of the log's public methods: a wrong type or an empty name is a clear error.
def check_str(name: str, value: Any, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not empty_ok and not value:
        raise ValueError(f"{name} must not be empty")
    return value


def str_set(values: Any, name: str) -> frozenset[str] | None:
    """None -> None (no filter); a set/list/tuple of strings -> frozenset."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a set of strings (e.g. {{{values!r}}}), not a string")
    out = frozenset(values)
    for v in out:
        check_str(name[:-1], v, empty_ok=True)
    return out


def origin_set(values: Any) -> frozenset[str] | None:
    if values is None:
        return None
    if isinstance(values, (str, bytes)):
        raise TypeError(f"origins must be a set of origins (e.g. {{{values!r}}}), not a string")
    return frozenset(Origin.parse(v).value for v in values)
