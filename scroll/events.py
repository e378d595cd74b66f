"""The append-only event log: the source of truth for everything a session did.

SQLite in WAL mode. Every event gets a `seq` (strictly increasing, never reused:
AUTOINCREMENT), a session, a time (a string stored verbatim; ISO 8601 recommended,
the current UTC time when not given), a kind and a role (free strings), the text,
a JSON `meta` object, an optional payload handle, and a token estimate.

* Append-only is enforced by the database: triggers abort UPDATE and DELETE on
  `events` from any connection (see migrations.py).
* An append is committed (its own transaction) before `append` returns. The default
  `durability="full"` (WAL + synchronous=FULL) fsyncs every commit, so it survives a
  killed process and a power loss (~0.6 ms an append here); `durability="normal"`
  survives a killed process but may lose the last commits on power loss.
* Texts longer than `inline_max` characters go whole into the payload store; the row
  keeps a preview and the handle, and `Event.text` always returns the full text.
* `search` goes through the BM25 `SearchIndex` in `<db>.index/`, which catches up from
  the log's highest seq before every query, so an event is searchable as soon as its
  append has returned, whichever process appended it.
"""
from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from . import migrations
from .payloads import Handle, PayloadError, PayloadStore

INLINE_MAX = 64 * 1024  # characters kept in the row; longer texts go to the payload store
PREVIEW_CHARS = 2000


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def estimate_tokens(text: str) -> int:
    """A model-free token estimate (~4 characters a token); the View recounts exactly."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


class Event:
    """One logged event. `text` is always the full text (loaded lazily from a payload)."""

    __slots__ = ("seq", "session", "time", "kind", "role", "meta", "payload", "tokens", "_text", "_store")

    def __init__(self, seq, session, time, kind, role, text, meta, payload, tokens, store=None):
        self.seq, self.session, self.time, self.kind, self.role = seq, session, time, kind, role
        self.meta, self.payload, self.tokens = meta, payload, tokens
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

    _FIELDS = ("seq", "session", "time", "kind", "role", "text", "meta", "payload", "tokens")

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self._FIELDS}

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        text = self.text
        short = text if len(text) <= 60 else text[:57] + "..."
        return f"{type(self).__name__}(seq={self.seq}, session={self.session!r}, role={self.role!r}, kind={self.kind!r}, text={short!r})"


class Hit(Event):
    __slots__ = ("score",)
    _FIELDS = Event._FIELDS + ("score",)

    def __init__(self, *args, score: float, **kw):
        super().__init__(*args, **kw)
        self.score = score


_COLS = "seq, session, time, kind, role, text, meta, payload, tokens"


def _check_str(name: str, value: Any, *, empty_ok: bool = False) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if not empty_ok and not value:
        raise ValueError(f"{name} must not be empty")
    return value


class EventLog:
    """Append-only event log with payloads and BM25 search. Thread-safe; no threads."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        durability: str = "full",
        inline_max: int = INLINE_MAX,
        index_options: dict | None = None,
    ):
        self.path = Path(path)
        if self.path.is_dir():
            raise IsADirectoryError(f"{self.path} is a directory, not an event log file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if durability not in ("normal", "full"):
            raise ValueError("durability must be 'normal' or 'full'")
        self.inline_max = int(inline_max)
        self.durability = durability
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60)
            self._conn.execute("PRAGMA busy_timeout=60000")
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise sqlite3.OperationalError(f"could not enable WAL (journal_mode={mode})")
            self._conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
            self.schema_version = migrations.apply(self._conn)
        except sqlite3.DatabaseError as e:
            raise sqlite3.DatabaseError(f"{self.path}: not a usable Scroll event log ({e})") from e
        self.log_id = self._conn.execute("SELECT value FROM log_info WHERE key='log_id'").fetchone()[0]
        self.payloads = PayloadStore(str(self.path) + ".payloads")
        self._index = None
        self._index_options = dict(index_options or {})

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the database; the live index tail is written as a segment first, so the
        next open does not re-tokenize it (small segments are merged on schedule)."""
        with self._lock:
            if self._index is not None and self._index.n_tail > 0 and self._conn is not None:
                try:
                    self._index.flush()
                except OSError:
                    pass  # the index is derived data: it catches up from the log next time
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "EventLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"event log {self.path} is closed")
        return self._conn

    @property
    def index(self):
        """The BM25 SearchIndex (loaded or rebuilt on first use)."""
        with self._lock:
            if self._index is None:
                from .search import SearchIndex

                self._index = SearchIndex(
                    str(self.path) + ".index", log_id=self.log_id,
                    fetch_after=self._index_docs_after, max_seq=self.max_seq, prev_text=self._prev_text,
                    **self._index_options,
                )
            return self._index

    # ----------------------------------------------------------------- append
    def _prepare(self, session, role, text, kind, time, meta) -> tuple:
        _check_str("session", session)
        _check_str("role", role)
        _check_str("kind", kind)
        _check_str("text", text, empty_ok=True)
        if time is None:
            time = utc_now()
        _check_str("time", time)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict, not {type(meta).__name__}")
        try:
            meta_json = json.dumps(meta, ensure_ascii=False, allow_nan=False, sort_keys=True)
        except (TypeError, ValueError) as e:
            raise ValueError(f"meta is not JSON-serializable: {e}") from None
        try:
            for value in (session, role, kind, time, meta_json):
                value.encode("utf-8")
            if len(text) > self.inline_max:
                payload = self.payloads.put(text)  # durable before the row refers to it
                stored = text[:PREVIEW_CHARS]
            else:
                text.encode("utf-8")
                payload, stored = None, text
        except UnicodeEncodeError as e:
            raise ValueError(f"text is not valid Unicode (lone surrogate?): {e}") from None
        return (session, time, kind, role, stored, meta_json, payload, estimate_tokens(text)), text

    def append(self, session: str, role: str, text: str, kind: str = "message",
               time: str | None = None, meta: dict | None = None, *, sync: bool = True) -> int:
        """Append one event; returns its seq once committed.

        `sync=False` commits without an fsync (it survives a killed process, and the next
        synced append makes it durable against power loss too); for an event that is
        always followed by another, like a cell before its output."""
        row, full = self._prepare(session, role, text, kind, time, meta)
        with self._lock:
            conn = self.conn
            relax = not sync and self.durability == "full"
            if relax:
                conn.execute("PRAGMA synchronous=NORMAL")
            try:
                cur = conn.execute(
                    "INSERT INTO events(session, time, kind, role, text, meta, payload, tokens) VALUES (?,?,?,?,?,?,?,?)",
                    row,
                )
            finally:
                if relax:
                    conn.execute("PRAGMA synchronous=FULL")
            seq = cur.lastrowid
            if self._index is not None:
                self._index.add([self._index_doc(seq, row, full)])
        return seq

    def append_many(self, rows: Iterable[dict]) -> list[int]:
        """Append many events in ONE transaction: all of them, or (on error) none."""
        prepared = []
        for i, r in enumerate(rows):
            try:
                prepared.append(self._prepare(r["session"], r["role"], r["text"], r.get("kind", "message"),
                                              r.get("time"), r.get("meta")))
            except KeyError as e:
                raise ValueError(f"row {i}: missing field {e}") from None
            except (TypeError, ValueError) as e:
                raise type(e)(f"row {i}: {e}") from None
        seqs: list[int] = []
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                for row, _ in prepared:
                    seqs.append(conn.execute(
                        "INSERT INTO events(session, time, kind, role, text, meta, payload, tokens) VALUES (?,?,?,?,?,?,?,?)",
                        row,
                    ).lastrowid)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if self._index is not None:
                self._index.add(self._index_doc(s, row, full) for s, (row, full) in zip(seqs, prepared))
        return seqs

    @staticmethod
    def _index_doc(seq: int, row: tuple, full: str):
        from .search import IndexDoc

        session, time, kind, role = row[0], row[1], row[2], row[3]
        return IndexDoc(seq=seq, session=session, kind=kind, role=role, time=time, text=full)

    def _prev_text(self, session: str, before: int) -> str:
        """The text (or its stored preview) of the session's last event before seq `before`."""
        with self._lock:
            row = self.conn.execute("SELECT text FROM events WHERE session = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
                                    (session, before)).fetchone()
        return row[0] if row else ""

    def _index_docs_after(self, after: int, limit: int):
        from .search import IndexDoc

        with self._lock:
            rows = self.conn.execute(
                "SELECT seq, session, time, kind, role, text, payload FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, limit),
            ).fetchall()
        return [
            IndexDoc(seq=s, session=se, kind=k, role=r, time=t, text=self.payloads.open_text(p) if p else x)
            for s, se, t, k, r, x, p in rows
        ]

    # ------------------------------------------------------------------- read
    def _event(self, row, cls=Event, **extra) -> Event:
        seq, session, time, kind, role, text, meta, payload, tokens = row
        return cls(seq, session, time, kind, role, text, json.loads(meta), payload, tokens, store=self.payloads, **extra)

    def max_seq(self) -> int:
        with self._lock:
            return self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]

    def expand(self, lo: int, hi: int | None = None):
        """`expand(seq)` -> the Event (KeyError if unknown); `expand(lo, hi)` -> events lo..hi inclusive."""
        if hi is None:
            if isinstance(lo, bool) or not isinstance(lo, int):
                raise TypeError(f"seq must be an int, not {type(lo).__name__}")
            with self._lock:
                row = self.conn.execute(f"SELECT {_COLS} FROM events WHERE seq = ?", (lo,)).fetchone()
            if row is None:
                raise KeyError(f"no event with seq {lo}")
            return self._event(row)
        if hi < lo:
            raise ValueError(f"expand({lo}, {hi}): hi must be >= lo")
        with self._lock:
            rows = self.conn.execute(
                f"SELECT {_COLS} FROM events WHERE seq BETWEEN ? AND ? ORDER BY seq", (lo, hi)
            ).fetchall()
        return [self._event(r) for r in rows]

    def events(self, session: str | None = None, after: int = 0, kind: str | None = None):
        """Iterate events in seq order (optionally one session / kind), streaming."""
        sql = f"SELECT {_COLS} FROM events WHERE seq > ?"
        args: list = [after]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        sql += " ORDER BY seq LIMIT 1000"
        while True:
            with self._lock:
                rows = self.conn.execute(sql, args).fetchall()
            if not rows:
                return
            for r in rows:
                yield self._event(r)
            args[0] = rows[-1][0]

    def recent(self, n: int = 10, session: str | None = None) -> list[Event]:
        """The last n events (of one session if given), in seq order."""
        sql = f"SELECT {_COLS} FROM events" + (" WHERE session = ?" if session else "") + " ORDER BY seq DESC LIMIT ?"
        args = ((session,) if session else ()) + (int(n),)
        with self._lock:
            rows = self.conn.execute(sql, args).fetchall()
        return [self._event(r) for r in reversed(rows)]

    def sessions(self) -> list[dict]:
        with self._lock:
            rows = self.conn.execute(
                "SELECT session, COUNT(*), MIN(seq), MAX(seq), MIN(time), MAX(time) FROM events "
                "GROUP BY session ORDER BY MIN(seq)"
            ).fetchall()
        keys = ("session", "events", "first_seq", "last_seq", "first_time", "last_time")
        return [dict(zip(keys, r)) for r in rows]

    def stats(self) -> dict:
        with self._lock:
            n, tokens = self.conn.execute("SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM events").fetchone()
            payloads = self.conn.execute("SELECT COUNT(*) FROM events WHERE payload IS NOT NULL").fetchone()[0]
            kinds = dict(self.conn.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())
            n_sessions = self.conn.execute("SELECT COUNT(DISTINCT session) FROM events").fetchone()[0]
        size = sum(os.path.getsize(p) for p in (self.path, Path(str(self.path) + "-wal")) if p.exists())
        return {
            "path": str(self.path), "log_id": self.log_id, "schema_version": self.schema_version,
            "events": n, "sessions": n_sessions, "max_seq": self.max_seq(), "tokens_estimate": tokens,
            "events_with_payload": payloads, "kinds": kinds, "db_bytes": size,
        }

    def payload(self, handle: str) -> bytes:
        return self.payloads.get(handle)

    # ----------------------------------------------------------------- search
    def search(self, query: str, k: int = 10, session: str | None = None, kind: str | None = None,
               role: str | None = None, since: str | None = None, until: str | None = None,
               seq_range: tuple[int, int] | None = None, exclude_kinds: tuple[str, ...] = ()) -> list[Hit]:
        """BM25 hits, best first (ties: newest first). No hit ever has score 0."""
        from .search import Filters

        _check_str("query", query, empty_ok=True)
        filters = Filters(session=session, kind=kind, role=role, since=since, until=until,
                          seq_range=tuple(seq_range) if seq_range is not None else None,
                          exclude_kinds=tuple(exclude_kinds))
        with self._lock:
            ranked = self.index.search(query, k=int(k), filters=filters)
            if not ranked:
                return []
            marks = ",".join("?" * len(ranked))
            rows = {r[0]: r for r in self.conn.execute(
                f"SELECT {_COLS} FROM events WHERE seq IN ({marks})", [s for s, _ in ranked])}
        return [self._event(rows[s], Hit, score=score) for s, score in ranked]


__all__ = ["Event", "EventLog", "Hit", "PayloadError", "utc_now", "estimate_tokens"]
