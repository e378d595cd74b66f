"""The append-only event log: the source of truth for everything a session did.

SQLite in WAL mode. Every event gets a `seq` (strictly increasing, never reused), a
session, a time (a string stored verbatim; ISO 8601 recommended, the current UTC time
when not given), a kind and a role (free strings), its `origin` (who wrote it:
scroll.origin.Origin, stated by the writer), the text, a JSON `meta` object, an optional
payload handle, a token estimate, and a link in a SHA-256 hash chain (see migrations.py).

* Append-only is enforced by the database: triggers abort UPDATE and DELETE, an INSERT
  (or INSERT OR REPLACE) at or below the highest seq, and a row that does not extend the
  hash chain, from any connection. Every open checks those triggers are intact; a log
  whose schema was tampered with opens read-only, and `verify()` names the first
  rewritten row.
* An append computes its seq and chain link inside `BEGIN IMMEDIATE`, so concurrent
  writers (threads or processes) keep one valid chain; it is committed before `append`
  returns. `durability="full"` (WAL + synchronous=FULL) fsyncs every commit, so it
  survives a killed process and a power loss; `"normal"` may lose the last commits on
  power loss. A failure of the search index after the commit is logged, never raised
  (the seq is committed: a caller that saw an exception would append it twice).
* Texts longer than `inline_max` characters go whole into the payload store; the row
  keeps a preview and the handle, and `Event.text` always returns the full text.
* `EventLog(path, readonly=True)` never creates, migrates or writes anything: not the
  database, not its -wal/-shm, not the index directory. A WAL log with no -wal file (no
  live writer) is opened `immutable` (a snapshot: reopen to see later appends).
  A v1 log (before origins and the chain) always opens read-only: `scroll migrate`.
* `search` goes through the BM25 `SearchIndex` in `<db>.index/`, which catches up from
  the log's highest seq before every query, so an event is searchable as soon as its
  append has returned, whichever process appended it.
"""
from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Iterable, Iterator

from . import migrations
from .log_copy import snapshot
from .migrations import LogError, connect_readonly
from .origin import Origin
from .payloads import PayloadError, PayloadStore
from .records import Event, Hit, check_str, check_time, estimate_tokens, origin_set, str_set, utc_now

logger = logging.getLogger(__name__)

INLINE_MAX = 64 * 1024  # characters kept in the row; longer texts go to the payload store
PREVIEW_CHARS = 2000
_BATCH = 256  # rows per fetch when streaming


def _search():
    """scroll.search, imported on first use: numpy and bm25s load when a log is searched or indexed,
    not on every open (an append-only command stays fast)."""
    from . import search  # lazy: numpy + bm25s cost ~0.25 s, paid only by a log that searches

    return search


class EventLog:
    """Append-only event log with payloads and BM25 search. Thread-safe; no threads."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        readonly: bool = False,
        durability: str = "full",
        inline_max: int = INLINE_MAX,
        index_options: dict | None = None,
        _info: dict[str, str] | None = None,
    ):
        self.path = Path(path)
        if durability not in ("normal", "full"):
            raise ValueError("durability must be 'normal' or 'full'")
        self.inline_max = int(inline_max)
        self.durability = durability
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._index = None
        self.readonly = bool(readonly)
        self.readonly_reason = f"{self.path} was opened read-only" if readonly else None
        self.tampered: str | None = None  # what the schema check found (read-only opens only)
        opened = migrations.open_log(self.path, readonly=self.readonly, durability=durability, info=_info)
        self._conn, self.schema_version = opened.conn, opened.version
        self.readonly, self.tampered = opened.readonly, opened.tampered
        self.readonly_reason = opened.readonly_reason or self.readonly_reason
        row = self._conn.execute("SELECT value FROM log_info WHERE key='log_id'").fetchone()
        if row is None:
            self.close()
            raise LogError(f"{self.path}: log_info has no log_id (damaged or tampered); run `scroll verify`")
        self.log_id = row[0]
        row = self._conn.execute("SELECT value FROM log_info WHERE key='genesis'").fetchone()
        self._genesis = row[0] if row else migrations.genesis_hash(self.log_id)
        has_origin = self.schema_version >= 2
        self._cols = "seq, session, time, kind, role, text, meta, payload, tokens, " + ("origin" if has_origin else "NULL")
        self.payloads = PayloadStore(str(self.path) + ".payloads")
        self._index = None
        self._index_options = dict(index_options or {})

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Close the database; the live index tail is written as a segment first, so the
        next open does not re-tokenize it (small segments are merged on schedule)."""
        with self._lock:
            if self._index is not None and self._index.n_tail > 0 and self._conn is not None and not self.readonly:
                try:
                    self._index.flush()
                except Exception as e:  # noqa: BLE001 - the index is derived data: it catches up next time
                    logger.warning("%s: could not write the search index on close (%s)", self.path, e)
            if self._index is not None:
                self._index.close()
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
        """The BM25 SearchIndex (loaded or rebuilt on first use; in memory only when read-only)."""
        with self._lock:
            if self._index is None:
                self._index = _search().SearchIndex(
                    str(self.path) + ".index", log_id=self.log_id,
                    fetch_after=self._index_docs_after, max_seq=self.max_seq, prev_text=self._prev_text,
                    readonly=self.readonly, **self._index_options,
                )
            return self._index

    def info(self) -> dict[str, str]:
        """The log's write-once log_info entries (log_id, created, genesis, migrated_from...)."""
        with self._lock:
            return dict(self.conn.execute("SELECT key, value FROM log_info").fetchall())

    # ----------------------------------------------------------------- append
    def _writable(self) -> sqlite3.Connection:
        conn = self.conn
        if self.readonly:
            raise LogError(f"cannot write: {self.readonly_reason}")
        return conn

    def _prepare(self, session, role, text, kind, time, meta) -> tuple:
        check_str("session", session)
        check_str("role", role)
        check_str("kind", kind)
        check_str("text", text, empty_ok=True)
        if time is None:
            time = utc_now()
        check_str("time", time)
        check_time(time)
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict, not {type(meta).__name__}")
        try:
            meta_json = json.dumps(meta, ensure_ascii=False, allow_nan=False, sort_keys=True) if meta else "{}"
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

    def _insert(self, conn: sqlite3.Connection, rows: list[tuple], seqs: list[int] | None = None) -> list[int]:
        """Insert rows (session, time, kind, role, text, meta, payload, tokens, origin) extending
        the chain; inside the caller's BEGIN IMMEDIATE. `seqs`: explicit seqs (copy_log)."""
        head = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        last, prev = head if head else (0, self._genesis)
        out, values = [], []
        for i, row in enumerate(rows):
            seq = seqs[i] if seqs is not None else last + 1
            h = migrations.event_hash(seq, *row[:4], row[8], *row[4:8], prev)
            values.append((seq, *row, prev, h))
            last, prev = seq, h
            out.append(seq)
        conn.executemany("INSERT INTO events(seq, session, time, kind, role, text, meta, payload, tokens, origin, "
                         "prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", values)
        return out

    def _commit_rows(self, rows: list[tuple], seqs: list[int] | None = None, relax: bool = False) -> list[int]:
        conn = self._writable()
        if relax:
            conn.execute("PRAGMA synchronous=NORMAL")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = self._insert(conn, rows, seqs)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            if relax:
                conn.execute("PRAGMA synchronous=FULL")
        return out

    def append(self, session: str, role: str, text: str, kind: str = "message", time: str | None = None,
               meta: dict | None = None, *, origin: Origin | str = Origin.HISTORY, sync: bool = True) -> int:
        """Append one event; returns its seq once committed.

        `origin`: who writes it (history / agent / system; see scroll.origin).
        `sync=False` commits without an fsync (it survives a killed process, and the next
        synced append makes it durable against power loss too); for an event that is
        always followed by another, like a cell before its output."""
        origin = Origin.parse(origin).value
        row, full = self._prepare(session, role, text, kind, time, meta)
        with self._lock:
            self._writable()
            seq = self._commit_rows([row + (origin,)], relax=not sync and self.durability == "full")[0]
            self._index_add([(seq, row, full, origin)])
        return seq

    def append_many(self, rows: Iterable[dict]) -> list[int]:
        """Append many events in ONE transaction: all of them, or (on error) none.
        A row is a dict like append's arguments (origin defaults to history)."""
        prepared = []
        for i, r in enumerate(rows):
            try:
                origin = Origin.parse(r.get("origin", Origin.HISTORY)).value
                prepared.append(self._prepare(r["session"], r["role"], r["text"], r.get("kind", "message"),
                                              r.get("time"), r.get("meta")) + (origin,))
            except KeyError as e:
                raise ValueError(f"row {i}: missing field {e}") from None
            except (TypeError, ValueError) as e:
                raise type(e)(f"row {i}: {e}") from None
        if not prepared:
            return []
        with self._lock:
            self._index_presplit([full for _, full, _ in prepared])
            seqs = self._commit_rows([row + (origin,) for row, _, origin in prepared])
            self._index_add([(s, row, full, origin) for s, (row, full, origin) in zip(seqs, prepared)])
        return seqs

    def _insert_raw(self, rows: list[tuple]) -> list[int]:
        """copy_log: rows (seq, session, time, kind, role, text, meta, payload, tokens, origin) stored
        as given (text = the stored text or preview), with their seqs; one transaction."""
        with self._lock:
            seqs = self._commit_rows([tuple(r[1:]) for r in rows], seqs=[r[0] for r in rows])
            self._index = None  # rebuilt from the log on the next search
        return seqs

    def _raw_rows(self) -> Iterator[tuple]:
        """Every row as stored (seq, session, time, kind, role, text, meta, payload, tokens, origin)."""
        return self._stream(f"SELECT {self._cols} FROM events WHERE seq > ? ORDER BY seq LIMIT ?", [0], raw=True)

    def _index_presplit(self, texts: list[str]) -> None:
        """Let a live index start on a big batch's words while the commit runs (on the other core)."""
        if self._index is None:
            return
        try:
            self._index.presplit(texts)
        except Exception as e:  # noqa: BLE001 - an optimisation: the add after the commit does it all
            logger.warning("%s: could not presplit a batch for the index (%s: %s)", self.path, type(e).__name__, e)

    def _index_add(self, items: list[tuple]) -> None:
        """Keep a live index up to date; a failure here must not escape a committed append."""
        if self._index is None:
            return
        try:
            self._index.add(self._index_doc(*item) for item in items)
        except Exception as e:  # noqa: BLE001
            logger.warning("%s: search index update failed after seq %s was committed (%s: %s); the index "
                           "will be reloaded from disk and the log on the next search",
                           self.path, items[-1][0], type(e).__name__, e)
            self._index = None

    @staticmethod
    def _index_doc(seq: int, row: tuple, full: str, origin: str):
        session, time, kind, role = row[0], row[1], row[2], row[3]
        return _search().IndexDoc(seq=seq, session=session, kind=kind, role=role, time=time, text=full, origin=origin)

    def _prev_text(self, session: str, before: int) -> str:
        """The text (or its stored preview) of the session's last event before seq `before`."""
        with self._lock:
            row = self.conn.execute("SELECT text FROM events WHERE session = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
                                    (session, before)).fetchone()
        return row[0] if row else ""

    def _index_docs_after(self, after: int, limit: int):
        origin = "origin" if self.schema_version >= 2 else "''"
        with self._lock:
            rows = self.conn.execute(
                f"SELECT seq, session, time, kind, role, text, payload, {origin} FROM events WHERE seq > ? "
                "ORDER BY seq LIMIT ?", (after, limit),
            ).fetchall()
        doc = _search().IndexDoc
        return [doc(seq=s, session=se, kind=k, role=r, time=t, text=self.payloads.open_text(p) if p else x, origin=o)
                for s, se, t, k, r, x, p, o in rows]

    # ------------------------------------------------------------------- read
    def _event(self, row, cls=Event, **extra) -> Event:
        seq, session, time, kind, role, text, meta, payload, tokens, origin = row
        return cls(seq, session, time, kind, role, text, json.loads(meta), payload, tokens, store=self.payloads,
                   origin=origin, **extra)

    def _stream(self, sql: str, args: list, raw: bool = False) -> Iterator:
        """Rows of `sql` (selecting seq first, `seq > ?` as args[0], `LIMIT ?` last) in batches."""
        args = list(args) + [_BATCH]
        while True:
            with self._lock:
                rows = self.conn.execute(sql, args).fetchall()
            for r in rows:
                yield r if raw else self._event(r)
            if len(rows) < _BATCH:
                return
            args[0] = rows[-1][0]

    def max_seq(self) -> int:
        with self._lock:
            return self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]

    def expand(self, lo: int, hi: int | None = None):
        """`expand(seq)` -> the Event (KeyError if unknown); `expand(lo, hi)` -> events lo..hi inclusive."""
        if hi is None:
            if isinstance(lo, bool) or not isinstance(lo, int):
                raise TypeError(f"seq must be an int, not {type(lo).__name__}")
            with self._lock:
                row = self.conn.execute(f"SELECT {self._cols} FROM events WHERE seq = ?", (lo,)).fetchone()
            if row is None:
                raise KeyError(f"no event with seq {lo}")
            return self._event(row)
        if hi < lo:
            raise ValueError(f"expand({lo}, {hi}): hi must be >= lo")
        return list(self.iter_range(lo, hi))

    def iter_range(self, lo: int, hi: int, *, sessions: Iterable[str] | None = None) -> Iterator[Event]:
        """Events lo..hi inclusive in seq order (only `sessions` if given), streamed in batches."""
        for name, v in (("lo", lo), ("hi", hi)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(f"{name} must be an int, not {type(v).__name__}")
        sessions = str_set(sessions, "sessions")
        if hi < lo or sessions is not None and not sessions:
            return iter(())
        sql = f"SELECT {self._cols} FROM events WHERE seq > ? AND seq <= ?"
        args: list = [lo - 1, hi]
        if sessions is not None:
            sql += " AND session IN (SELECT value FROM json_each(?))"
            args.append(json.dumps(sorted(sessions)))
        return self._stream(sql + " ORDER BY seq LIMIT ?", args)

    def events(self, session: str | None = None, after: int = 0, kind: str | None = None):
        """Iterate events in seq order (optionally one session / kind), streaming."""
        sql = f"SELECT {self._cols} FROM events WHERE seq > ?"
        args: list = [after]
        if session is not None:
            sql += " AND session = ?"
            args.append(session)
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        return self._stream(sql + " ORDER BY seq LIMIT ?", args)

    def recent(self, n: int = 10, *, sessions: Iterable[str] | None = None,
               origins: Iterable[Origin | str] | None = None) -> list[Event]:
        """The last n events (of `sessions` / `origins` if given), in seq order."""
        sessions, origins = str_set(sessions, "sessions"), origin_set(origins)
        if (sessions is not None and not sessions) or (origins is not None and not origins):
            return []
        where, args = [], []
        if sessions is not None:
            where.append("session IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(sorted(sessions)))
        if origins is not None:
            if self.schema_version < 2:
                return []  # a v1 log has no origins
            where.append("origin IN (SELECT value FROM json_each(?))")
            args.append(json.dumps(sorted(origins)))
        sql = f"SELECT {self._cols} FROM events" + (" WHERE " + " AND ".join(where) if where else "")
        with self._lock:
            rows = self.conn.execute(sql + " ORDER BY seq DESC LIMIT ?", args + [int(n)]).fetchall()
        return [self._event(r) for r in reversed(rows)]

    def sessions(self, *, origins: Iterable[str] | None = None) -> list[dict]:
        """One dict per session (events, first/last seq and time, tokens: the sum of the events'
        token estimates); `origins`: only sessions holding events of these origins, counted over
        those events."""
        where, args = "", []
        if origins is not None:
            values = [Origin.parse(o).value for o in origins]
            where = f" WHERE origin IN ({','.join('?' * len(values))})"
            args = values
        with self._lock:
            rows = self.conn.execute(
                "SELECT session, COUNT(*), MIN(seq), MAX(seq), MIN(time), MAX(time), COALESCE(SUM(tokens), 0)"
                " FROM events"
                f"{where} GROUP BY session ORDER BY MIN(seq)", args
            ).fetchall()
        keys = ("session", "events", "first_seq", "last_seq", "first_time", "last_time", "tokens")
        return [dict(zip(keys, r)) for r in rows]

    def stats(self) -> dict:
        with self._lock:
            n, tokens = self.conn.execute("SELECT COUNT(*), COALESCE(SUM(tokens), 0) FROM events").fetchone()
            payloads = self.conn.execute("SELECT COUNT(*) FROM events WHERE payload IS NOT NULL").fetchone()[0]
            kinds = dict(self.conn.execute("SELECT kind, COUNT(*) FROM events GROUP BY kind").fetchall())
            origins = (dict(self.conn.execute("SELECT origin, COUNT(*) FROM events GROUP BY origin").fetchall())
                       if self.schema_version >= 2 else {})
            n_sessions = self.conn.execute("SELECT COUNT(DISTINCT session) FROM events").fetchone()[0]
        size = sum(os.path.getsize(p) for p in (self.path, Path(str(self.path) + "-wal")) if p.exists())
        return {
            "path": str(self.path), "log_id": self.log_id, "schema_version": self.schema_version,
            "readonly": self.readonly, "tampered": self.tampered,
            "events": n, "sessions": n_sessions, "max_seq": self.max_seq(), "tokens_estimate": tokens,
            "events_with_payload": payloads, "kinds": kinds, "origins": origins, "db_bytes": size,
        }

    def payload(self, handle: str) -> bytes:
        return self.payloads.get(handle)

    def snapshot(self, dest: str | os.PathLike) -> Path:
        """Copy this log (events and payloads; not the index, not the label sidecar) to a NEW
        file `dest`: a consistent point-in-time copy (SQLite's backup API) whose seqs and hash
        chain are the same. Runs that must not change a shared log work on a snapshot."""
        return snapshot(self.conn, self._lock, self.payloads.root, dest)

    def check_integrity(self) -> None:
        """Raise LogError when SQLite finds the file damaged (`PRAGMA quick_check`: every page, O(size)):
        bulk writers call it before their first write, so nothing is added to a damaged log."""
        with self._lock:
            problem = migrations.integrity_problem(self.conn, full=False)
        if problem:
            raise LogError(f"{self.path}: {problem}; nothing was written. Run `scroll verify --db {self.path}`")

    def verify(self) -> dict:
        """{"ok", "events", "first_bad_seq", "reason", "head_hash"}: recomputes the hash chain
        (streaming, one read snapshot), checks payload digests and the schema's triggers.
        Keep `head_hash` somewhere else: it detects even a rewrite that recomputed the chain."""
        conn = connect_readonly(self.path)
        try:
            conn.execute("BEGIN")  # one snapshot, even while others append
            return migrations.verify(conn, self.payloads, version=self.schema_version)
        finally:
            conn.close()

    # ----------------------------------------------------------------- search
    def search(self, query: str, k: int = 10, *, sessions: Iterable[str] | None = None,
               origins: Iterable[Origin | str] | None = None, kind: str | None = None, role: str | None = None,
               since: str | None = None, until: str | None = None,
               seq_range: tuple[int, int] | None = None) -> list[Hit]:
        """BM25 hits, best first (ties: newest first). No hit ever has score 0.
        `sessions` / `origins`: the allowed sets (None: all)."""
        check_str("query", query, empty_ok=True)
        for name, v in (("kind", kind), ("role", role), ("since", since), ("until", until)):
            if v is not None:
                check_str(name, v, empty_ok=True)
        filters = _search().Filters(sessions=str_set(sessions, "sessions"), origins=origin_set(origins), kind=kind,
                                    role=role, since=since, until=until,
                                    seq_range=tuple(seq_range) if seq_range is not None else None)
        with self._lock:
            ranked = self.index.search(query, k=int(k), filters=filters)
            if not ranked:
                return []
            marks = ",".join("?" * len(ranked))
            rows = {r[0]: r for r in self.conn.execute(
                f"SELECT {self._cols} FROM events WHERE seq IN ({marks})", [s for s, _ in ranked])}
        return [self._event(rows[s], Hit, score=score) for s, score in ranked]


__all__ = ["Event", "EventLog", "Hit", "LogError", "PayloadError", "connect_readonly", "utc_now", "estimate_tokens"]
