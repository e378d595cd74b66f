"""The event log's schema, its numbered versions and its integrity checks.

Versions (recorded in the database, table `schema_migrations`):

* v1 - events, append-only triggers, log identity. No origin, no hash chain.
* v2 - every event stores its `origin` (scroll.origin.Origin) and a hash chain
  (`prev_hash`, `hash`); INSERT triggers refuse a `seq` at or below the highest one and a
  `prev_hash` that is not the current head; `log_info` keys are write-once on INSERT too.

A fresh log is created at the latest version directly (`create`). Later versions that can
be reached in place are listed in `UPGRADES` and applied in order by `apply`. v1 -> v2 is
NOT an in-place migration: a v1 row has no origin, and the no-UPDATE triggers forbid
filling one in. A v1 log opens read-only; `log_copy.copy_log(old, new)` (the CLI's
`scroll migrate OLD NEW`) copies it into a new v2 log, keeping every seq, and assigns
origins by `MIGRATION_RULE`, applied only there and recorded in the new log's log_info.

The hash chain: `hash = sha256(encode(seq, session, time, kind, role, origin, text,
meta, payload, tokens, prev_hash))` (see `event_hash`; `text` is what the row stores,
i.e. the preview when a payload holds the text; the payload handle is the payload's
SHA-256, so the chain covers payload bytes too). The first `prev_hash` is
`genesis_hash(log_id)`. `verify` recomputes it, streaming.

What SQLite cannot prevent (and what is done about it):
  Triggers stop every UPDATE, DELETE, INSERT OR REPLACE and out-of-order INSERT issued
  through SQL, whatever the tool. But someone with write access to the FILE can
  `DROP TRIGGER` (or edit bytes on disk), rewrite rows, and put the triggers back.
  * Dropped or altered triggers/tables: every open compares the schema with the expected
    SQL; a writable open refuses ("tampered"), a read-only open works and says so.
  * Rows rewritten: the chain no longer matches; `verify` names the first bad seq.
  * Rows rewritten AND the whole chain recomputed from there on: nothing inside the file
    can detect that (the attacker holds everything the file holds). The head hash that
    `verify` prints, kept somewhere else (a receipt, a commit message, another machine),
    detects even that: a rewritten history ends in a different head.
"""
from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import time
import urllib.parse
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

logger = logging.getLogger("scroll.events")  # open-time warnings belong to the log's logger

LATEST = 2

_APPEND_ONLY_TRIGGERS = """
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'scroll: events are append-only (UPDATE refused)'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'scroll: events are append-only (DELETE refused)'); END;
CREATE TRIGGER log_info_no_update BEFORE UPDATE ON log_info
    BEGIN SELECT RAISE(ABORT, 'scroll: log_info is write-once'); END;
CREATE TRIGGER log_info_no_delete BEFORE DELETE ON log_info
    BEGIN SELECT RAISE(ABORT, 'scroll: log_info is write-once'); END;
"""

SCHEMA_V1 = """
CREATE TABLE log_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: a seq is never reused
    session TEXT    NOT NULL,
    time    TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    role    TEXT    NOT NULL,
    text    TEXT    NOT NULL,   -- full text, or a preview when `payload` holds it
    meta    TEXT    NOT NULL DEFAULT '{}',
    payload TEXT,               -- handle into the payload store, or NULL
    tokens  INTEGER NOT NULL
);
CREATE INDEX events_by_session ON events(session, seq);
""" + _APPEND_ONLY_TRIGGERS

SCHEMA_V2 = """
CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE log_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,  -- always given explicitly: head + 1
    session   TEXT    NOT NULL,
    time      TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    role      TEXT    NOT NULL,
    text      TEXT    NOT NULL,   -- full text, or a preview when `payload` holds it
    meta      TEXT    NOT NULL DEFAULT '{}',
    payload   TEXT,               -- handle into the payload store, or NULL
    tokens    INTEGER NOT NULL,
    origin    TEXT    NOT NULL CHECK (origin IN ('history', 'agent', 'system')),
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL
);
CREATE INDEX events_by_session ON events(session, seq);
CREATE INDEX events_by_origin ON events(origin, seq);
""" + _APPEND_ONLY_TRIGGERS + """
CREATE TRIGGER events_seq_ascending BEFORE INSERT ON events
    WHEN NEW.seq IS NULL OR NEW.seq <= (SELECT COALESCE(MAX(seq), 0) FROM events)
    BEGIN SELECT RAISE(ABORT, 'scroll: events are append-only (seq at or below the head refused)'); END;
CREATE TRIGGER events_chain_link BEFORE INSERT ON events
    WHEN NEW.prev_hash IS NOT COALESCE((SELECT hash FROM events ORDER BY seq DESC LIMIT 1),
                                      (SELECT value FROM log_info WHERE key = 'genesis'))
    BEGIN SELECT RAISE(ABORT, 'scroll: prev_hash is not the head of the hash chain'); END;
CREATE TRIGGER log_info_write_once BEFORE INSERT ON log_info
    WHEN EXISTS (SELECT 1 FROM log_info WHERE key = NEW.key)
    BEGIN SELECT RAISE(ABORT, 'scroll: log_info is write-once'); END;
CREATE TRIGGER schema_migrations_no_update BEFORE UPDATE ON schema_migrations
    BEGIN SELECT RAISE(ABORT, 'scroll: schema_migrations is write-once'); END;
CREATE TRIGGER schema_migrations_no_delete BEFORE DELETE ON schema_migrations
    BEGIN SELECT RAISE(ABORT, 'scroll: schema_migrations is write-once'); END;
"""

NAMES = {1: "events, append-only triggers, log identity",
         2: "origin + hash chain; INSERT triggers: seq ascending, chain link, write-once log_info"}
SCHEMA = SCHEMA_V2  # what a fresh log gets

# version -> (name, SQL) taking a log from `version` to `version + 1` in place.
# (1 -> 2 is not in place: see copy_log.)
UPGRADES: dict[int, tuple[str, str]] = {}

# Applied by copy_log to rows of a log that has no origin column (v1), never elsewhere.
AGENT_KINDS = ("task", "code", "output", "note", "headline", "final")
MIGRATION_RULE = (f"origin = 'agent' if kind in {list(AGENT_KINDS)} else 'history' "
                  "(applied by scroll migrate to v1 rows, which had no origin)")


class LogError(ValueError):
    """The file is not a log this code may open that way (missing, foreign, newer,
    tampered, read-only), or a write to a read-only log. The message is one line."""


class SchemaError(LogError):
    """The database's schema is not what this code expects (newer, foreign, tampered)."""


def enable_wal(conn: sqlite3.Connection, wait_s: float = 30.0) -> str:
    """PRAGMA journal_mode=WAL, retried while another connection holds the lock: switching a
    new database to WAL needs an exclusive lock, and SQLite answers "database is locked" at once
    there instead of calling the busy handler (seen with 3 threads opening one new file: 32 of
    600 opens failed). Returns the journal mode now in force."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


# ------------------------------------------------------------------------ hash chain
def genesis_hash(log_id: str) -> str:
    return hashlib.sha256(b"scroll-genesis\x00" + log_id.encode("utf-8")).hexdigest()


def _enc(v: Any) -> bytes:
    if v is None:
        return b"n;"
    if isinstance(v, int):
        return b"i%d;" % v
    b = v.encode("utf-8")
    return b"s%d:" % len(b) + b


def event_hash(seq: int, session: str, time: str, kind: str, role: str, origin: str, text: str,
               meta: str, payload: str | None, tokens: int, prev_hash: str) -> str:
    """sha256 over a length-prefixed encoding: `n;` for NULL, `i<int>;`, `s<bytes>:<utf-8>`."""
    return hashlib.sha256(b"".join((b"scroll-event-v2\x00", *map(_enc, (
        seq, session, time, kind, role, origin, text, meta, payload, tokens, prev_hash))))).hexdigest()


# ------------------------------------------------------------------------ schema
def _split(sql: str) -> list[str]:
    """Split a schema script into statements (triggers contain ';' inside BEGIN ... END)."""
    out, buf = [], []
    for line in sql.strip().splitlines():
        buf.append(line)
        joined = "\n".join(buf).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            out.append(joined)
            buf = []
    if "".join(buf).strip():
        out.append("\n".join(buf))
    return out


def _norm(sql: str | None) -> str:
    return re.sub(r"\s+", " ", sql or "").strip()


_EXPECTED: dict[int, dict[tuple[str, str], str]] = {}


def expected_objects(version: int) -> dict[tuple[str, str], str]:
    """(type, name) -> normalized SQL of every schema object a log of `version` has."""
    if version not in _EXPECTED:
        mem = sqlite3.connect(":memory:")
        if version == 1:
            mem.execute("CREATE TABLE schema_migrations ( version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                        " applied_at TEXT NOT NULL)")
        for stmt in _split({1: SCHEMA_V1, 2: SCHEMA_V2}[version]):
            mem.execute(stmt)
        _EXPECTED[version] = _objects(mem)
        mem.close()
    return _EXPECTED[version]


def _objects(conn: sqlite3.Connection) -> dict[tuple[str, str], str]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return {(t, n): _norm(s) for t, n, s in rows if not n.startswith("sqlite_")}


def schema_problem(conn: sqlite3.Connection, version: int) -> str | None:
    """None if the schema objects are exactly the expected ones, else the first difference."""
    want, have = expected_objects(version), _objects(conn)
    for key, sql in want.items():
        if key not in have:
            return f"{key[0]} {key[1]} is missing"
        if have[key] != sql:
            return f"{key[0]} {key[1]} was altered"
    for key in have:
        if key not in want:
            return f"unexpected {key[0]} {key[1]}"
    return None


def version_of(conn: sqlite3.Connection) -> int | None:
    """The schema version of a Scroll log; 0 for an empty database; None for a foreign one."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
        return 0
    if not {"events", "log_info", "schema_migrations"} <= tables:
        return None
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0] or None


def create(conn: sqlite3.Connection, info: dict[str, str] | None = None) -> int:
    """Create the latest schema in an empty database (no-op if another process just did).
    `info`: extra write-once log_info entries. Returns the schema version in force."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
            conn.execute("COMMIT")  # created meanwhile by another process
            return version_of(conn) or 0
        for stmt in _split(SCHEMA):
            conn.execute(stmt)
        log_id, now = uuid.uuid4().hex, _now()
        entries = {"log_id": log_id, "created": now, "genesis": genesis_hash(log_id), **(info or {})}
        conn.executemany("INSERT INTO log_info(key, value) VALUES (?, ?)", list(entries.items()))
        conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                     (LATEST, NAMES[LATEST], now))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return LATEST


def apply(conn: sqlite3.Connection) -> int:
    """Create the schema in an empty database, or apply in-place upgrades; returns the
    version now in force (1 for a v1 log, which cannot be upgraded in place)."""
    version = version_of(conn)
    if version is None:
        raise SchemaError("not a Scroll event log (foreign database)")
    if version == 0:
        return create(conn)
    if version > LATEST:
        raise SchemaError(f"written by a newer Scroll (schema v{version} > v{LATEST}); upgrade")
    while version in UPGRADES:
        name, sql = UPGRADES[version]
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version=?", (version + 1,)).fetchone():
                conn.execute("COMMIT")  # another process upgraded meanwhile
            else:
                for stmt in _split(sql):
                    conn.execute(stmt)
                conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                             (version + 1, name, _now()))
                conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version += 1
    return version


# ------------------------------------------------------------------------ opening
_SQLITE_HEADER = b"SQLite format 3\x00"


def _ro_uri(path: Path, immutable: bool) -> str:
    return "file:" + urllib.parse.quote(str(path.resolve())) + ("?immutable=1" if immutable else "?mode=ro")


def connect_readonly(path: Path) -> sqlite3.Connection:
    """A connection that cannot write the database or create its -wal/-shm.

    `mode=ro` on a WAL database creates -wal/-shm when they are missing (and fails with
    "attempt to write a readonly database" where it cannot): with no -wal file there is
    no live writer and nothing to recover, so such a database is opened `immutable`."""
    with path.open("rb") as fh:
        header = fh.read(100)
    wal = Path(str(path) + "-wal")
    wal_mode = len(header) >= 20 and header[18] == 2 and header[19] == 2
    wal_empty = not wal.exists() or wal.stat().st_size == 0
    immutable = wal_mode and not wal.exists()
    conn = sqlite3.connect(_ro_uri(path, immutable), uri=True, isolation_level=None,
                           check_same_thread=False, timeout=60)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError as e:
        conn.close()
        if immutable or not wal_empty:
            raise LogError(f"{path}: cannot be read read-only ({e}); its -wal file holds commits that need "
                           "a writable -shm: open it once writable, or copy it") from None
        conn = sqlite3.connect(_ro_uri(path, True), uri=True, isolation_level=None,
                               check_same_thread=False, timeout=60)
    conn.execute("PRAGMA busy_timeout=60000")
    return conn


@dataclass
class Opened:
    conn: sqlite3.Connection
    version: int
    readonly: bool
    readonly_reason: str | None = None
    tampered: str | None = None


def open_log(path: Path, *, readonly: bool, durability: str, info: dict | None = None) -> Opened:
    """Open (or create) an event log file, refusing what may not be opened that way BEFORE
    anything is written: a directory, a missing file (read-only), not SQLite, a foreign or
    newer database, a tampered schema (writable). A v1 log comes back read-only."""
    if path.is_dir():
        raise LogError(f"{path} is a directory, not an event log file")
    exists = path.exists()
    if readonly and not exists:
        raise LogError(f"no event log at {path}")
    version, tampered, reason = 0, None, None
    if exists and path.stat().st_size > 0:
        with path.open("rb") as fh:
            if fh.read(16) != _SQLITE_HEADER:
                raise LogError(f"{path} is not a SQLite database, so not a Scroll event log; nothing was written")
        try:
            ro = connect_readonly(path)
            try:
                version, tampered, reason = _inspect(ro, path, readonly)
            except BaseException:
                ro.close()
                raise
        except sqlite3.DatabaseError as e:
            raise LogError(f"{path}: not a usable Scroll event log ({e}); nothing was written") from None
        if readonly or reason:
            return Opened(ro, version, True, reason, tampered)
        ro.close()
    elif readonly:
        raise LogError(f"{path} is an empty file, not a Scroll event log")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = None
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)
        conn.execute("PRAGMA busy_timeout=60000")
        mode = enable_wal(conn)
        if mode.lower() != "wal":
            raise sqlite3.OperationalError(f"could not enable WAL (journal_mode={mode})")
        conn.execute(f"PRAGMA synchronous={'FULL' if durability == 'full' else 'NORMAL'}")
        version = create(conn, info) if version == 0 else apply(conn)
    except (sqlite3.DatabaseError, SchemaError) as e:
        if conn is not None:
            conn.close()
        if isinstance(e, SchemaError):
            raise LogError(f"{path}: {e}") from None
        raise LogError(f"{path}: not a usable Scroll event log ({e})") from None
    return Opened(conn, version, False)


def _inspect(conn: sqlite3.Connection, path: Path, readonly: bool) -> tuple[int, str | None, str | None]:
    """(version, tampered, read-only reason) of an existing file; refuses what may not be opened."""
    version = version_of(conn)
    if version is None:
        raise LogError(f"{path} is not a Scroll event log (foreign database); nothing was written")
    if version == 0:
        if readonly:
            raise LogError(f"{path} is an empty SQLite database, not a Scroll event log")
        return 0, None, None
    if version > LATEST:
        raise LogError(f"{path} was written by a newer Scroll (schema v{version} > v{LATEST}); upgrade")
    if version < 2:
        return version, None, (f"{path} is a schema v{version} log (no origins, no hash chain), so it opens "
                               f"read-only; copy it into a new log with `scroll migrate {path} NEW.db`")
    problem = schema_problem(conn, version)
    if problem:
        if not readonly:
            raise LogError(f"{path}: the event log's schema was tampered with ({problem}); refusing to open it "
                           "for writing. Open it read-only and run `scroll verify`")
        logger.warning("%s: the event log's schema was tampered with (%s); run `scroll verify`", path, problem)
    return version, problem, None


# ------------------------------------------------------------------------ verify
def integrity_problem(conn: sqlite3.Connection, *, full: bool = True) -> str | None:
    """SQLite's own check of the file (every table and index b-tree: `PRAGMA integrity_check`, or the
    faster `quick_check` that skips the index-content cross-check); None when it says ok."""
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA {'integrity_check' if full else 'quick_check'}(10)")]
    except sqlite3.DatabaseError as e:
        return f"the database file is damaged ({e})"
    if rows == ["ok"]:
        return None
    lines = [ln for r in rows for ln in str(r).splitlines() if ln.strip() and not ln.startswith("***")]
    return f"SQLite integrity check failed: {'; '.join(lines[:3])}" + (" ..." if len(lines) > 3 else "")


def verify(conn: sqlite3.Connection, payloads, *, version: int, batch: int = 2000) -> dict:
    """SQLite's integrity check, then recompute the hash chain (streaming), check payload digests
    and the schema. Reports the FIRST broken link."""
    out = {"ok": False, "events": 0, "first_bad_seq": None, "reason": None, "head_hash": ""}
    damaged = integrity_problem(conn)
    if damaged:  # a corrupt page (an index's too) is broken whatever the chain says
        out["reason"] = f"{damaged}; copy what is readable with `scroll migrate OLD NEW` or restore a backup"
        return out
    if version < 2:
        out["reason"] = f"schema v{version} has no hash chain; run `scroll migrate OLD NEW` to copy it into a v2 log"
        out["events"] = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        return out
    info = dict(conn.execute("SELECT key, value FROM log_info").fetchall())
    problem = schema_problem(conn, version)
    prev = info.get("genesis")
    if info.get("log_id") is None or prev != genesis_hash(info["log_id"]):
        problem = problem or "log_info genesis does not match log_id"
    n, last, bad, reason = 0, 0, None, None
    while True:
        rows = conn.execute(
            "SELECT seq, session, time, kind, role, origin, text, meta, payload, tokens, prev_hash, hash "
            "FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch)).fetchall()
        if not rows:
            break
        for row in rows:
            seq, payload, stored_prev, stored = row[0], row[8], row[10], row[11]
            n += 1
            last = seq
            if bad is not None:
                continue  # keep counting, report the first break only
            if stored_prev != prev:
                bad, reason = seq, "prev_hash does not link to the previous event (a row was inserted, removed or reordered)"
            elif event_hash(*row[:11]) != stored:
                bad, reason = seq, "hash does not match the row (the row was rewritten)"
            elif payload is not None and not _payload_ok(payloads, payload):
                bad, reason = seq, f"payload {payload} is missing or corrupted"
            prev = stored
    out.update(events=n, head_hash=prev or "")
    if bad is not None:
        out.update(first_bad_seq=bad, reason=f"seq {bad}: {reason}")
    elif problem:
        out["reason"] = f"schema tampered: {problem}"
    else:
        out["ok"] = True
    return out


def _payload_ok(payloads, handle: str) -> bool:
    try:
        path = payloads.path(handle)
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except (OSError, KeyError):
        return False
    return "sha256:" + h.hexdigest() == handle


__all__ = ["LATEST", "SCHEMA", "LogError", "SchemaError", "connect_readonly", "open_log", "apply", "create", "event_hash", "genesis_hash",
           "integrity_problem", "schema_problem", "verify", "version_of", "MIGRATION_RULE", "AGENT_KINDS"]
