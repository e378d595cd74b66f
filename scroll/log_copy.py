"""Copies of an event log into a NEW file: `snapshot` (the same log, point in time: same seqs,
same hash chain) and `copy_log` (any schema into a new v2 log: `scroll migrate`)."""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from .migrations import AGENT_KINDS, MIGRATION_RULE, LogError, _now


def snapshot(conn: sqlite3.Connection, lock, payload_root: Path, dest: str | os.PathLike) -> Path:
    """Copy the log open on `conn` (events by SQLite's backup API, under `lock`; then the payloads
    under `payload_root`, hard-linked where possible: content-addressed, never rewritten) to a NEW
    file `dest`; on any failure nothing is left behind."""
    dest = Path(dest)
    if dest.exists():
        raise FileExistsError(f"{dest} exists; a snapshot needs a new path")
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        target = sqlite3.connect(dest)
        try:
            with lock:
                conn.backup(target)
        finally:
            target.close()
        src = Path(payload_root)
        if src.is_dir():
            for f in src.rglob("*"):
                if f.is_file():
                    to = Path(str(dest) + ".payloads") / f.relative_to(src)
                    to.parent.mkdir(parents=True, exist_ok=True)
                    try:
                        os.link(f, to)  # content-addressed and never rewritten: a hard link is a copy
                    except OSError:
                        shutil.copy2(f, to)
    except BaseException:
        for p in (dest, Path(str(dest) + "-wal"), Path(str(dest) + "-shm")):
            p.unlink(missing_ok=True)
        shutil.rmtree(str(dest) + ".payloads", ignore_errors=True)
        raise
    return dest


def copy_log(old_path, new_path) -> dict:
    """Copy every event of `old_path` (any schema up to LATEST) into a NEW v2 log at
    `new_path`, in seq order, keeping seq numbers, times, texts, meta and payloads.
    Rows without an origin (v1) get one by MIGRATION_RULE; the rule and the source log_id
    are recorded in the new log's log_info (`migrated_from`, `migration_rule`)."""
    from .events import EventLog

    new_path = Path(new_path)
    if new_path.exists() or Path(str(new_path) + ".payloads").exists():
        raise LogError(f"{new_path} already exists; copy_log writes a NEW log")
    counts = {"history": 0, "agent": 0, "system": 0}
    n_payloads = 0
    with EventLog(old_path, readonly=True) as old:
        if old.schema_version >= 2:  # never launder a broken chain into a fresh valid one
            check = old.verify()
            if not check["ok"]:
                raise LogError(f"{old_path} does not verify ({check['reason']}); not copied")
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
