"""The event log's schema, its numbered versions, its integrity checks, and `copy_log`.

Versions (recorded in the database, table `schema_migrations`):

* v1 - events, append-only triggers, log identity. No origin, no hash chain.
* v2 - every event stores its `origin` (scroll.origin.Origin) and a hash chain
  (`prev_hash`, `hash`); INSERT triggers refuse a `seq` at or below the highest one and a
  `prev_hash` that is not the current head; `log_info` keys are write-once on INSERT too.

A fresh log is created at the latest version directly (`create`). Later versions that can
be reached in place are listed in `UPGRADES` and applied in order by `apply`. v1 -> v2 is
NOT an in-place migration: a v1 row has no origin, and the no-UPDATE triggers forbid
filling one in. A v1 log opens read-only; `copy_log(old, new)` (the CLI's
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
import json
import re
import sqlite3
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

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


class SchemaError(ValueError):
    """The database's schema is not what this code expects (newer, foreign, tampered)."""


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
    h = hashlib.sha256(b"scroll-event-v2\x00")
    for v in (seq, session, time, kind, role, origin, text, meta, payload, tokens, prev_hash):
        h.update(_enc(v))
    return h.hexdigest()


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


# ------------------------------------------------------------------------ verify
def verify(conn: sqlite3.Connection, payloads, *, version: int, batch: int = 2000) -> dict:
    """Recompute the hash chain (streaming), check payload digests and the schema.
    Reports the FIRST broken link."""
    out = {"ok": False, "events": 0, "first_bad_seq": None, "reason": None, "head_hash": ""}
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


# ------------------------------------------------------------------------ copy_log
def copy_log(old_path, new_path) -> dict:
    """Copy every event of `old_path` (any schema up to LATEST) into a NEW v2 log at
    `new_path`, in seq order, keeping seq numbers, times, texts, meta and payloads.
    Rows without an origin (v1) get one by MIGRATION_RULE; the rule and the source log_id
    are recorded in the new log's log_info (`migrated_from`, `migration_rule`)."""
    from .events import EventLog, LogError

    new_path = Path(new_path)
    if new_path.exists() or Path(str(new_path) + ".payloads").exists():
        raise LogError(f"{new_path} already exists; copy_log writes a NEW log")
    counts = {"history": 0, "agent": 0, "system": 0}
    n_payloads = 0
    with EventLog(old_path, readonly=True) as old:
        info = {"migrated_from": old.log_id, "migrated_from_path": str(Path(old_path).resolve()),
                "migrated_from_schema": str(old.schema_version), "migrated_at": _now(),
                "migration_rule": MIGRATION_RULE if old.schema_version < 2 else "origins copied as stored"}
        with EventLog(new_path, _info=info) as new:
            batch: list[tuple] = []
            for row in old._raw_rows():
                seq, session, time, kind, role, text, meta, payload, tokens, origin = row
                if origin is None:
                    origin = "agent" if kind in AGENT_KINDS else "history"
                if payload is not None:
                    if not new.payloads.exists(payload):
                        new.payloads.put(old.payloads.get(payload, verify=True))
                    n_payloads += 1
                counts[origin] += 1
                batch.append((seq, session, time, kind, role, text, meta, payload, tokens, origin))
                if len(batch) >= 1000:
                    new._insert_raw(batch)
                    batch = []
            if batch:
                new._insert_raw(batch)
            result = new.verify()
            return {"from": str(old_path), "to": str(new_path), "source_log_id": old.log_id,
                    "source_schema": old.schema_version, "log_id": new.log_id, "events": result["events"],
                    "origins": counts, "payloads": n_payloads, "rule": info["migration_rule"],
                    "head_hash": result["head_hash"], "ok": result["ok"]}


__all__ = ["LATEST", "SCHEMA", "SchemaError", "apply", "copy_log", "create", "event_hash", "genesis_hash",
           "schema_problem", "verify", "version_of", "MIGRATION_RULE", "AGENT_KINDS"]
