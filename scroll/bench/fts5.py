"""SQLite FTS5 peer for the search benchmark (what other Scroll-like systems use).

One SQLite file (WAL; `synchronous` FULL like EventLog's default durability, or NORMAL): an `events` table like Scroll's and an external
content FTS5 table (`tokenize='porter unicode61'`) kept in sync by a trigger, so an
append is indexed in the same transaction. A query is the OR of its tokens (each quoted,
so punctuation and FTS5 syntax in user text cannot break it), ranked `ORDER BY bm25`,
with the same filters as `EventLog.search` applied in SQL. That is `Fts5Config.raw()`: what
the public Scroll and LCM code do.

`Fts5Config.like(doc_model)` is FTS5's best reasonable configuration against ours: the same
query cleaning (English stopwords and question words dropped) and the same extra fields
(speaker, month/year, the previous turn of the session) as columns of a contentless FTS5
table, weighted with our document model's field weights in `bm25(events_fts, w...)`.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass
from typing import Iterable
from scroll.search.documents import PREV_CHARS, identifier_parts, month_year
from scroll.search.tokens import QUESTION_WORDS, STOPWORDS_EN

_TOKEN = re.compile(r"\w+", re.UNICODE)
_COLUMNS = ("text", "role", "date", "prev", "parts")

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, time TEXT, kind TEXT, role TEXT,
  text TEXT NOT NULL, meta TEXT);
CREATE INDEX IF NOT EXISTS events_session ON events(session, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
  text, content='events', content_rowid='seq', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS events_ai AFTER INSERT ON events BEGIN
  INSERT INTO events_fts(rowid, text) VALUES (new.seq, new.text);
END;
"""


@dataclass
class FtsHit:
    seq: int
    score: float
    session: str
    role: str
    kind: str
    time: str
    text: str
    meta: dict


def or_query(query: str, drop: frozenset[str] = frozenset()) -> str:
    """FTS5 MATCH string: the OR of the query's tokens not in `drop`, each quoted ('' if none)."""
    toks = [t for t in dict.fromkeys(t.lower() for t in _TOKEN.findall(query)) if t not in drop]
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)


@dataclass(frozen=True)
class Fts5Config:
    """Which FTS5 peer: column weights (text only = the raw peer) and the query's dropped words."""

    weights: tuple[tuple[str, float], ...] = (("text", 1.0),)
    clean_query: bool = False
    prev_max_tokens: int = 0      # as DocModel: the previous turn only with short events

    @classmethod
    def raw(cls) -> "Fts5Config":
        return cls()

    @classmethod
    def like(cls, doc_model) -> "Fts5Config":
        w = tuple((f, wt / doc_model.scale) for f, wt in doc_model.weights if f in _COLUMNS and wt)
        return cls(w, True, doc_model.prev_max_tokens)

    @property
    def fields(self) -> bool:
        return self.weights != (("text", 1.0),)

    def label(self) -> str:
        if not self.fields and not self.clean_query:
            return "fts5 (OR of the raw question)"
        return ("fts5 (cleaned query, columns " + ", ".join(f"{f}x{w:g}" for f, w in self.weights)
                + (f", prev if <= {self.prev_max_tokens} tokens" if self.prev_max_tokens else "") + ")")


def _drop_words() -> frozenset[str]:
    return frozenset(STOPWORDS_EN) | QUESTION_WORDS


_FIELDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, time TEXT, kind TEXT, role TEXT,
  text TEXT NOT NULL, meta TEXT);
CREATE INDEX IF NOT EXISTS events_session ON events(session, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS events_fts USING fts5(
  text, role, date, prev, parts, content='', tokenize='porter unicode61');
"""


class Fts5Log:
    def __init__(self, path: str | os.PathLike, synchronous: str = "full", config: Fts5Config = Fts5Config()):
        if synchronous.lower() not in ("full", "normal"):
            raise ValueError("synchronous must be 'full' or 'normal'")
        self.path = str(path)
        self.config = config
        self._drop = _drop_words() if config.clean_query else frozenset()
        self._last: dict[str, str] = {}
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self.db.executescript(_FIELDS_SCHEMA if config.fields else SCHEMA)
        weights = dict(config.weights)
        self._rank = ("bm25(events_fts)" if not config.fields else
                      "bm25(events_fts, " + ", ".join(repr(float(weights.get(c, 0.0))) for c in _COLUMNS) + ")")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def _row(session, role, text, kind="message", time=None, meta=None):
        return (session, time, kind, role, text, json.dumps(meta or {}))

    def append(self, session: str, role: str, text: str, kind: str = "message", time: str | None = None,
               meta: dict | None = None) -> int:
        cur = self.db.execute("INSERT INTO events(session,time,kind,role,text,meta) VALUES (?,?,?,?,?,?)",
                              self._row(session, role, text, kind, time, meta))
        self._index_fields(cur.lastrowid, session, role, text, time)
        return cur.lastrowid

    def _index_fields(self, seq: int, session: str, role: str, text: str, time: str | None) -> None:
        """The fields peer: one contentless FTS5 row per event (text, speaker, month/year, previous turn)."""
        if not self.config.fields:
            return
        prev = self._last.get(session)
        if prev is None:
            row = self.db.execute("SELECT text FROM events WHERE session = ? AND seq < ? ORDER BY seq DESC LIMIT 1",
                                  (session, seq)).fetchone()
            prev = row[0][:PREV_CHARS] if row else ""
        self._last[session] = text[:PREV_CHARS]
        if self.config.prev_max_tokens and len(_TOKEN.findall(text)) > self.config.prev_max_tokens:
            prev = ""
        self.db.execute("INSERT INTO events_fts(rowid, text, role, date, prev, parts) VALUES (?,?,?,?,?,?)",
                        (seq, text, role or "", month_year(time or ""), prev, identifier_parts(text)))

    def append_many(self, rows: Iterable[dict]) -> list[int]:
        seqs = []
        self.db.execute("BEGIN")
        try:
            for r in rows:
                cur = self.db.execute("INSERT INTO events(session,time,kind,role,text,meta) VALUES (?,?,?,?,?,?)",
                                      self._row(r["session"], r.get("role", ""), r["text"], r.get("kind", "message"),
                                                r.get("time"), r.get("meta")))
                self._index_fields(cur.lastrowid, r["session"], r.get("role", ""), r["text"], r.get("time"))
                seqs.append(cur.lastrowid)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self._last.clear()   # it may hold rolled-back turns
            raise
        return seqs

    def search(self, query: str, k: int = 10, session: str | None = None, kind: str | None = None,
               role: str | None = None, since: str | None = None, until: str | None = None,
               seq_range: tuple[int, int] | None = None) -> list[FtsHit]:
        match = or_query(query, self._drop)
        if not match:
            return []
        where, args = ["events_fts MATCH ?"], [match]
        for col, val in (("session", session), ("kind", kind), ("role", role)):
            if val is not None:
                where.append(f"e.{col} = ?")
                args.append(val)
        if since is not None:
            where.append("e.time >= ?")
            args.append(since)
        if until is not None:
            where.append("e.time <= ?")
            args.append(until)
        if seq_range is not None:
            where.append("e.seq BETWEEN ? AND ?")
            args.extend(seq_range)
        sql = (f"SELECT e.seq, {self._rank} AS s, e.session, e.role, e.kind, e.time, e.text, e.meta "
               "FROM events_fts JOIN events e ON e.seq = events_fts.rowid WHERE " + " AND ".join(where) +
               " ORDER BY s, e.seq DESC LIMIT ?")
        rows = self.db.execute(sql, (*args, k)).fetchall()
        return [FtsHit(r[0], -r[1], r[2], r[3], r[4], r[5], r[6], json.loads(r[7] or "{}")) for r in rows]

    def disk_bytes(self) -> int:
        """Bytes of the FTS5 index alone (its shadow tables), via dbstat when available."""
        try:
            row = self.db.execute("SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'events_fts%'").fetchone()
            return int(row[0] or 0)
        except sqlite3.Error:
            return 0

    def file_bytes(self) -> int:
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))
