"""simonw/llm's `logs.db` (SQLite), read read-only: its conversations become sessions.

Every row of `responses` (ordered by `datetime_utc`, then `id`) becomes, in its conversation's
session (the `conversation_id`; a response without one gets `response-<id>`): a `system`
event when its system prompt differs from the previous one in that conversation, a `user`
event (the prompt), `tool` events for the tool results sent with it (when the database has
llm's `tool_results` table), an `assistant` event (the response) and `tool call NAME(ARGS)`
lines for its tool calls (table `tool_calls`). Times are `datetime_utc` to the second; meta
keeps the response id and model. The file is opened with `mode=ro` and never written."""
from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from .rows import BadInputError, Parsed, history_row

SQLITE_MAGIC = b"SQLite format 3\x00"


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.DatabaseError as e:
        raise BadInputError(f"{path}: cannot read the SQLite database: {e}") from None


def _tables(conn: sqlite3.Connection) -> dict[str, set[str]]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {n: {r[1] for r in conn.execute(f'PRAGMA table_info("{n}")')} for n in names}


def is_llm_logs(path: Path) -> bool:
    with _connect(path) as conn:
        cols = _tables(conn).get("responses", set())
    return {"prompt", "response", "conversation_id"} <= cols


def _time(value) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).replace(tzinfo=None) \
            .isoformat(timespec="seconds")
    except ValueError:
        return None


def _by_response(conn, table: str, cols: set[str], text_col: str) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    if not {"response_id", "name", text_col} <= cols:
        return out
    for rid, name, text in conn.execute(f'SELECT response_id, name, "{text_col}" FROM "{table}" ORDER BY id'):
        out.setdefault(str(rid), []).append((str(name or ""), "" if text is None else str(text)))
    return out


def parse(path: Path) -> Parsed:
    conn = _connect(path)
    try:
        tables = _tables(conn)
        cols = tables.get("responses", set())
        need = {"id", "prompt", "response", "conversation_id", "datetime_utc"}
        if not need <= cols:
            raise BadInputError(f"{path}: not an llm logs.db (table 'responses' with {', '.join(sorted(need))} "
                                "is missing)")
        calls = _by_response(conn, "tool_calls", tables.get("tool_calls", set()), "arguments")
        results = _by_response(conn, "tool_results", tables.get("tool_results", set()), "output")
        system = "system" if "system" in cols else "NULL"
        model = "model" if "model" in cols else "NULL"
        cur = conn.execute(f"SELECT id, conversation_id, datetime_utc, prompt, {system}, response, {model} "
                           "FROM responses ORDER BY datetime_utc, id")
        rows: list[dict] = []
        last_system: dict[str, str] = {}
        n = 0
        for rid, conv, when, prompt, sys_prompt, response, model_name in cur:
            n += 1
            rid = str(rid)
            session = str(conv) if conv not in (None, "") else f"response-{rid}"
            meta = {"response_id": rid, **({"model": str(model_name)} if model_name else {})}
            time = _time(when)
            try:
                if sys_prompt and sys_prompt != last_system.get(session):
                    rows.append(history_row(session, "system", str(sys_prompt), time=time, meta=meta))
                    last_system[session] = sys_prompt
                if prompt:
                    rows.append(history_row(session, "user", str(prompt), time=time, meta=meta))
                for name, output in results.get(rid, []):
                    rows.append(history_row(session, "tool", output, time=time, meta={**meta, "name": name}))
                text = "\n".join([str(response or "")] + [f"tool call {nm}({args})" for nm, args in calls.get(rid, [])])
                rows.append(history_row(session, "assistant", text.strip("\n"), time=time, meta=meta))
            except ValueError as e:
                raise BadInputError(f"{path}: response {rid}: {e}") from None
    except sqlite3.DatabaseError as e:
        raise BadInputError(f"{path}: cannot read the SQLite database: {e}") from None
    finally:
        conn.close()
    if not rows:
        raise BadInputError(f"{path}: no responses")
    return Parsed(rows, "llm-logs", [], {"responses": n, "conversations": len({r["session"] for r in rows})})
