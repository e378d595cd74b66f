"""Where summary nodes live: a SQLite file NEXT TO the event log (`<log>.lcm.db`), never in it.

    store = DagStore.for_log(log)          # <log path>.lcm.db, bound to log.log_id
    store.get("sum_...") -> Node | None
    store.put(node)                        # insert once; a second put of the same id is a no-op

The log stays the source of truth; this file is a derived, rebuildable cache of model
work. It is append-only like the log: triggers abort UPDATE and DELETE of nodes, edges and
frontiers, so a node, once written, is what every later run reads (the resume contract).
The file records the `log_id` it was built for and refuses any other log. Schema changes
are numbered migrations recorded in `lcm_info` (`schema_version`).

A `Node` is a leaf (a summary of a contiguous run of history events: `seqs`) or a
condensed node (a summary of adjacent nodes: `children`, oldest first). `lo`/`hi` are the
first and last seq it covers; `digest` is `events_digest` of the leaf's events (checked by
`SummaryDag.verify`). A frontier is a built context at a point of the log (`upto_seq`):
the item list the active context held after the last event up to it was streamed in.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from scroll.migrations import enable_wal

SUFFIX = ".lcm.db"
NODE_PREFIX = "sum_"

_MIGRATIONS: list[str] = [
    # 1: nodes, edges, frontiers; append-only by triggers
    """
    CREATE TABLE nodes(
        node_id TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
        depth INTEGER NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL, seqs TEXT NOT NULL,
        children TEXT NOT NULL, text TEXT NOT NULL, tokens INTEGER NOT NULL, level TEXT NOT NULL,
        input_tokens INTEGER NOT NULL, sessions TEXT NOT NULL, first_date TEXT NOT NULL,
        last_date TEXT NOT NULL, digest TEXT NOT NULL, profile TEXT NOT NULL, usage TEXT NOT NULL,
        created TEXT NOT NULL);
    CREATE TABLE edges(parent TEXT NOT NULL, child TEXT NOT NULL, ordinal INTEGER NOT NULL,
        PRIMARY KEY (parent, child));
    CREATE INDEX edges_child ON edges(child);
    CREATE TABLE frontiers(key TEXT NOT NULL, upto_seq INTEGER NOT NULL, items TEXT NOT NULL,
        tokens INTEGER NOT NULL, created TEXT NOT NULL, PRIMARY KEY (key, upto_seq));
    CREATE TRIGGER nodes_no_update BEFORE UPDATE ON nodes BEGIN SELECT RAISE(ABORT, 'lcm nodes are immutable'); END;
    CREATE TRIGGER nodes_no_delete BEFORE DELETE ON nodes BEGIN SELECT RAISE(ABORT, 'lcm nodes are immutable'); END;
    CREATE TRIGGER edges_no_update BEFORE UPDATE ON edges BEGIN SELECT RAISE(ABORT, 'lcm edges are immutable'); END;
    CREATE TRIGGER edges_no_delete BEFORE DELETE ON edges BEGIN SELECT RAISE(ABORT, 'lcm edges are immutable'); END;
    CREATE TRIGGER frontiers_no_update BEFORE UPDATE ON frontiers
        BEGIN SELECT RAISE(ABORT, 'lcm frontiers are immutable'); END;
    CREATE TRIGGER frontiers_no_delete BEFORE DELETE ON frontiers
        BEGIN SELECT RAISE(ABORT, 'lcm frontiers are immutable'); END;
    """,
]
SCHEMA_VERSION = len(_MIGRATIONS)


class LcmError(ValueError):
    """The LCM store is unusable for this log (another log's file, a newer schema, damage)."""


def _statements(script: str) -> list[str]:
    """A script's statements (trigger bodies kept whole), to run inside one transaction."""
    out, buf = [], ""
    for part in script.split(";"):
        buf += part + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n;"):
                out.append(buf.strip())
            buf = ""
    return out


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Node:
    node_id: str
    kind: str                         # "leaf" | "condensed"
    depth: int                        # 0 for a leaf; 1 + the deepest child for a condensed node
    lo: int                           # first seq covered
    hi: int                           # last seq covered
    seqs: tuple[int, ...]             # leaf: its events' seqs, in order; condensed: ()
    children: tuple[str, ...]         # condensed: child node ids, oldest first; leaf: ()
    text: str                         # the summary
    tokens: int                       # count(text) with the builder's counter
    level: str                        # escalation level that produced it: normal | aggressive | truncate
    input_tokens: int                 # tokens of the rendered input it replaced
    sessions: tuple[str, ...]         # sessions covered, in order of first appearance
    first_date: str
    last_date: str
    digest: str                       # leaf: events_digest(events); condensed: ""
    profile: str                      # who summarized (backend/model/prompt version)
    usage: dict = field(default_factory=dict, compare=False)   # calls / tokens spent making it
    created: str = field(default="", compare=False)

    _COLS = ("node_id", "kind", "depth", "lo", "hi", "seqs", "children", "text", "tokens", "level",
             "input_tokens", "sessions", "first_date", "last_date", "digest", "profile", "usage", "created")

    def row(self) -> tuple:
        return (self.node_id, self.kind, self.depth, self.lo, self.hi, json.dumps(list(self.seqs)),
                json.dumps(list(self.children)), self.text, self.tokens, self.level, self.input_tokens,
                json.dumps(list(self.sessions), ensure_ascii=False), self.first_date, self.last_date,
                self.digest, self.profile, json.dumps(self.usage, sort_keys=True), self.created or _now())

    @classmethod
    def from_row(cls, r: tuple) -> "Node":
        d = dict(zip(cls._COLS, r))
        for k in ("seqs", "children", "sessions"):
            d[k] = tuple(json.loads(d[k]))
        d["usage"] = json.loads(d["usage"])
        return cls(**d)


class DagStore:
    """The node store of one log. Thread-safe (one connection, a lock)."""

    def __init__(self, path: str | os.PathLike, *, log_id: str):
        self.path = Path(path)
        self._lock = threading.RLock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn: sqlite3.Connection | None = sqlite3.connect(self.path, check_same_thread=False,
                                                                isolation_level=None, timeout=30)
        try:
            enable_wal(self._conn)
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate(log_id)
        except BaseException:
            self.close()
            raise
        self.log_id = log_id

    @classmethod
    def for_log(cls, log: Any, path: str | os.PathLike | None = None) -> "DagStore":
        """The store next to `log` (`<log path>.lcm.db`) unless `path` says otherwise."""
        return cls(path if path is not None else default_path(log), log_id=log.log_id)

    def _migrate(self, log_id: str) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS lcm_info(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            info = dict(conn.execute("SELECT key, value FROM lcm_info").fetchall())
            bound = info.get("log_id")
            if bound is not None and bound != log_id:
                raise LcmError(f"{self.path} was built for log {bound}, not {log_id}; use another path")
            version = int(info.get("schema_version", "0"))
            if version > SCHEMA_VERSION:
                raise LcmError(f"{self.path} has schema {version}; this Scroll knows up to {SCHEMA_VERSION}")
            for v in range(version, SCHEMA_VERSION):
                for statement in _statements(_MIGRATIONS[v]):
                    conn.execute(statement)
                conn.execute("INSERT OR REPLACE INTO lcm_info VALUES ('schema_version', ?)", (str(v + 1),))
                conn.execute("INSERT OR REPLACE INTO lcm_info VALUES (?, ?)", (f"migration_{v + 1}", _now()))
            if bound is None:
                conn.execute("INSERT INTO lcm_info VALUES ('log_id', ?)", (log_id,))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ lifecycle
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"lcm store {self.path} is closed")
        return self._conn

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "DagStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- nodes
    def get(self, node_id: str) -> Node | None:
        with self._lock:
            r = self.conn.execute(f"SELECT {', '.join(Node._COLS)} FROM nodes WHERE node_id = ?",
                                  (node_id,)).fetchone()
        return Node.from_row(r) if r else None

    def put(self, node: Node) -> Node:
        """Store `node` (and its child edges) unless its id is stored already; returns the stored node."""
        with self._lock:
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(f"INSERT OR IGNORE INTO nodes({', '.join(Node._COLS)}) "
                             f"VALUES ({','.join('?' * len(Node._COLS))})", node.row())
                conn.executemany("INSERT OR IGNORE INTO edges(parent, child, ordinal) VALUES (?, ?, ?)",
                                 [(node.node_id, c, i) for i, c in enumerate(node.children)])
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        stored = self.get(node.node_id)
        assert stored is not None
        return stored

    def parents(self, node_id: str) -> list[str]:
        """Ids of the stored nodes that have `node_id` as a child (any frontier's)."""
        with self._lock:
            return [r[0] for r in self.conn.execute(
                "SELECT parent FROM edges WHERE child = ? ORDER BY parent", (node_id,))]

    def count(self) -> int:
        with self._lock:
            return self.conn.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]

    def all_nodes(self) -> list[Node]:
        with self._lock:
            rows = self.conn.execute(f"SELECT {', '.join(Node._COLS)} FROM nodes ORDER BY lo, depth").fetchall()
        return [Node.from_row(r) for r in rows]

    # ------------------------------------------------------------ frontiers
    def save_frontier(self, key: str, upto_seq: int, items: Iterable[list], tokens: int) -> None:
        """Record the context built for `key` after streaming every event up to `upto_seq`."""
        with self._lock:
            self.conn.execute("INSERT OR IGNORE INTO frontiers(key, upto_seq, items, tokens, created) "
                              "VALUES (?, ?, ?, ?, ?)", (key, upto_seq, json.dumps(list(items)), tokens, _now()))

    def load_frontier(self, key: str, upto_max: int) -> tuple[int, list[list], int] | None:
        """The latest frontier of `key` at or before `upto_max`: (upto_seq, items, tokens)."""
        with self._lock:
            r = self.conn.execute("SELECT upto_seq, items, tokens FROM frontiers WHERE key = ? AND upto_seq <= ? "
                                  "ORDER BY upto_seq DESC LIMIT 1", (key, upto_max)).fetchone()
        return (r[0], json.loads(r[1]), r[2]) if r else None


def node_header(node_id: str, kind: str, depth: int, lo: int, hi: int, sessions: Iterable[str],
                first_date: str, last_date: str) -> str:
    ss = list(sessions)
    where = ", ".join(ss) if len(ss) <= 3 else f"{ss[0]}..{ss[-1]} ({len(ss)} sessions)"
    level = "leaf" if kind == "leaf" else f"condensed d{depth}"
    dates = first_date if first_date == last_date else f"{first_date} .. {last_date}"
    return f"[summary {node_id} | {level} | seqs {lo}-{hi} | {where} | {dates}]"


def render_node(node: Node) -> str:
    """A node as it appears in a context: its header line, then its summary."""
    return node_header(node.node_id, node.kind, node.depth, node.lo, node.hi, node.sessions,
                       node.first_date, node.last_date) + "\n" + node.text


def node_id_for(profile: str, kind: str, ident: Iterable, variant: str = "") -> str:
    """`sum_` + a hash of who summarized, the kind, the exact seqs or child ids, and a variant."""
    raw = json.dumps([profile, kind, list(ident), variant], ensure_ascii=False)
    return NODE_PREFIX + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def store_path(log: Any, path: str | os.PathLike | None = None, shared_dir: str | os.PathLike | None = None):
    """`path` if given; else `<shared_dir>/<log id>.lcm.db` (snapshots of one log share its id,
    so every question over one history shares one DAG); else None (`default_path`)."""
    if path:
        return Path(path)
    return Path(shared_dir) / f"{log.log_id}.lcm.db" if shared_dir else None


def default_path(log: Any) -> Path:
    """`<log path>.lcm.db`: a separate file, so the log itself is never written."""
    return Path(str(log.path) + SUFFIX)


__all__ = ["DagStore", "Node", "LcmError", "SCHEMA_VERSION", "SUFFIX", "default_path", "node_header", "node_id_for",
           "render_node"]
