"""`copy_log`: every event of a log of any schema up to LATEST into a NEW v2 log (`scroll migrate`)."""
from __future__ import annotations

from pathlib import Path

from .events import EventLog
from .migrations import AGENT_KINDS, MIGRATION_RULE, LogError, _now


def copy_log(old_path, new_path) -> dict:
    """Copy every event of `old_path` (any schema up to LATEST) into a NEW v2 log at
    `new_path`, in seq order, keeping seq numbers, times, texts, meta and payloads.
    Rows without an origin (v1) get one by MIGRATION_RULE; the rule and the source log_id
    are recorded in the new log's log_info (`migrated_from`, `migration_rule`)."""
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
