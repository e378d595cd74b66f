"""`snapshot`: a copy of an event log into a NEW file, the same log at one point in time (same
seqs, same hash chain). Below scroll.events (EventLog.snapshot calls it); copying a log of any
schema into a new v2 log is scroll.log_migrate."""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path


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
