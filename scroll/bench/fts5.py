"""SQLite FTS5 peer for the search benchmark (what other Scroll-like systems use).

One SQLite file (WAL; `synchronous` FULL like EventLog's default durability, or NORMAL): an `events` table like Scroll's and an external
content FTS5 table (`tokenize='porter unicode61'`) kept in sync by a trigger, so an
append is indexed in the same transaction. A query is the OR of its tokens (each quoted,
so punctuation and FTS5 syntax in user text cannot break it), ranked `ORDER BY bm25`,
with the same filters as `EventLog.search` applied in SQL.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass
from typing import Iterable

_TOKEN = re.compile(r"\w+", re.UNICODE)

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


def or_query(query: str) -> str:
    """FTS5 MATCH string: the OR of the query's tokens, each quoted ('' if none)."""
    toks = list(dict.fromkeys(t.lower() for t in _TOKEN.findall(query)))
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in toks)


class Fts5Log:
    def __init__(self, path: str | os.PathLike, synchronous: str = "full"):
        if synchronous.lower() not in ("full", "normal"):
            raise ValueError("synchronous must be 'full' or 'normal'")
        self.path = str(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self.db.executescript(SCHEMA)

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
        return cur.lastrowid

    def append_many(self, rows: Iterable[dict]) -> list[int]:
        seqs = []
        self.db.execute("BEGIN")
        try:
            for r in rows:
                cur = self.db.execute("INSERT INTO events(session,time,kind,role,text,meta) VALUES (?,?,?,?,?,?)",
                                      self._row(r["session"], r.get("role", ""), r["text"], r.get("kind", "message"),
                                                r.get("time"), r.get("meta")))
                seqs.append(cur.lastrowid)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return seqs

    def search(self, query: str, k: int = 10, session: str | None = None, kind: str | None = None,
               role: str | None = None, since: str | None = None, until: str | None = None,
               seq_range: tuple[int, int] | None = None) -> list[FtsHit]:
        match = or_query(query)
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
        sql = ("SELECT e.seq, bm25(events_fts) AS s, e.session, e.role, e.kind, e.time, e.text, e.meta "
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
