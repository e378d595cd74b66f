"""The granted history, as events and as text: what every context manager reads.

    events = history_events(log, ["s001", "s002"])   # history-origin events, seq order
    line = format_event(events[0])                     # "[seq 3 | s001 | 2023/05/30 | user] ..."

Only events whose origin is `history` are history: the agent's own machinery (tasks,
replies, cells, finals: origin `agent`) and Scroll's bookkeeping (`system`) never are. A
v1 log (no origins) therefore has no history here. `sessions=None` means every session
that holds history events (the agent loop's default scope); an empty list means none.

The date shown is the event's `meta["date"]` (the importers' raw haystack date) when it
has one, else its `time`. Nothing here writes anything.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..origin import Origin

HISTORY = Origin.HISTORY.value


def granted_sessions(log: Any, sessions: Iterable[str] | None) -> list[str]:
    """The session list a manager may read: `sessions` as given (order kept, duplicates
    dropped), or every session holding history events when None."""
    if sessions is None:
        return [s["session"] for s in log.sessions(origins=frozenset({HISTORY}))]
    if isinstance(sessions, (str, bytes)):
        raise TypeError("sessions must be a list of session names (or None for all history sessions)")
    return list(dict.fromkeys(sessions))


def history_events(log: Any, sessions: Iterable[str] | None, *, after: int = 0,
                   upto: int | None = None) -> Iterator[Any]:
    """History-origin events of the granted sessions with after < seq <= upto (default: the
    log's last seq), in seq order (streamed)."""
    granted = granted_sessions(log, sessions)
    if not granted:
        return iter(())
    hi = log.max_seq() if upto is None else upto
    if hi <= after:
        return iter(())
    return (e for e in log.iter_range(after + 1, hi, sessions=granted)
            if e.origin is not None and e.origin.value == HISTORY)


def event_date(event: Any) -> str:
    """The date to show for an event: meta["date"] if it is a non-empty string, else its time."""
    meta = event.meta if isinstance(event.meta, dict) else {}
    date = meta.get("date")
    return date if isinstance(date, str) and date.strip() else (event.time or "")


def format_event(event: Any) -> str:
    """One turn as one block: `[seq N | session | date | role] text`."""
    return f"[seq {event.seq} | {event.session} | {event_date(event)} | {event.role}] {event.text}"


def events_digest(events: Sequence[Any]) -> str:
    """SHA-256 over the fields that make an event what it is (seq, session, time, kind, role,
    text): a stored summary's pointers are checked against it (`SummaryDag.verify`)."""
    h = hashlib.sha256()
    for e in events:
        h.update(json.dumps([e.seq, e.session, e.time, e.kind, e.role, e.text], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def cut_to_tokens(text: str, limit: int, count: Callable[[str], int], *, keep: str = "head",
                  marker: str = "") -> str:
    """The longest head (or tail) of `text`, plus `marker`, that counts at most `limit` tokens.

    Deterministic and always terminates (a binary search over the character length). If
    even the marker alone is over the limit, the marker is dropped; with `limit <= 0` the
    result is "". The result counts <= limit, always."""
    if limit <= 0 or not text:
        return ""
    if count(text) <= limit:
        return text
    if marker and count(marker) > limit:
        marker = ""

    def piece(n: int) -> str:
        if keep == "head":
            return text[:n] + marker
        return marker + text[len(text) - n:] if n else marker

    lo, hi = 0, len(text)          # piece(lo) fits (or is the marker alone), piece(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count(piece(mid)) <= limit:
            lo = mid
        else:
            hi = mid
    out = piece(lo)
    if count(out) > limit:         # a counter that is not monotone in the length: be safe
        out = ""
    return out


__all__ = ["HISTORY", "granted_sessions", "history_events", "event_date", "format_event", "events_digest",
           "cut_to_tokens"]
