"""Numbered schema migrations for the event log, recorded in the database itself.

Each migration runs once, in order, inside one transaction with the row that records it
in `schema_migrations`. Append-only is enforced by the schema: triggers abort any UPDATE
or DELETE on `events`, whatever connection or tool issues it.
"""
from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime, timezone

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "events, append-only triggers, log identity",
        """
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
        CREATE TRIGGER events_no_update BEFORE UPDATE ON events
            BEGIN SELECT RAISE(ABORT, 'scroll: events are append-only (UPDATE refused)'); END;
        CREATE TRIGGER events_no_delete BEFORE DELETE ON events
            BEGIN SELECT RAISE(ABORT, 'scroll: events are append-only (DELETE refused)'); END;
        CREATE TRIGGER log_info_no_update BEFORE UPDATE ON log_info
            BEGIN SELECT RAISE(ABORT, 'scroll: log_info is write-once'); END;
        CREATE TRIGGER log_info_no_delete BEFORE DELETE ON log_info
            BEGIN SELECT RAISE(ABORT, 'scroll: log_info is write-once'); END;
        """,
    ),
]

LATEST = MIGRATIONS[-1][0]


def apply(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date; returns the schema version now in force."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    for version, name, sql in MIGRATIONS:
        if version in done:
            continue
        now = datetime.now(timezone.utc).isoformat()
        conn.execute("BEGIN IMMEDIATE")
        try:
            # re-check under the write lock: another process may have migrated meanwhile
            if conn.execute("SELECT 1 FROM schema_migrations WHERE version=?", (version,)).fetchone():
                conn.execute("COMMIT")
                continue
            for statement in _split(sql):
                conn.execute(statement)
            if version == 1:
                conn.execute("INSERT INTO log_info(key, value) VALUES ('log_id', ?)", (uuid.uuid4().hex,))
                conn.execute("INSERT INTO log_info(key, value) VALUES ('created', ?)", (now,))
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, now),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return max(done | {v for v, _, _ in MIGRATIONS})


def _split(sql: str) -> list[str]:
    """Split a migration into statements (triggers contain ';' inside BEGIN ... END)."""
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
