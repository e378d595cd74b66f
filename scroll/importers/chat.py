"""OpenAI chat-completions logs: JSONL, one conversation per line, `{"messages": [...], ...}`.

Each line becomes one session, named by its first id field (`session`, `session_id`,
`conversation_id`, `id`; a string or an integer) or, without one, `line-<N>` (its line
number). Each message becomes one event (kind `message`, role as given, origin `history`):
`content` as a string, or its text parts joined by newlines (other parts as `[image]`,
`[audio]`, `[<type>]`); an assistant's `tool_calls` as lines `tool call NAME(ARGUMENTS)`;
`name` and `tool_call_id` kept in `meta` with the message's index (`turn`). A line's
`created` (Unix seconds) becomes every event's time. Other fields of a line (model, usage,
the request's options) are not history and are not imported. A chat log has no answers: it
writes no labels."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from .rows import BadInputError, Parsed, history_row
from .strict_json import loads_line

ID_FIELDS = ("session", "session_id", "conversation_id", "id")
_PART_TAGS = {"image_url": "[image]", "input_image": "[image]", "input_audio": "[audio]", "file": "[file]"}


def is_chat_line(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("messages"), list)


def _text(msg: dict) -> str:
    content = msg.get("content")
    if content is None:
        parts: list[str] = []
    elif isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict) and p.get("type") in ("text", "input_text", "output_text") \
                    and isinstance(p.get("text"), str):
                parts.append(p["text"])
            elif isinstance(p, dict) and isinstance(p.get("type"), str):
                parts.append(_PART_TAGS.get(p["type"], f"[{p['type']}]"))
            else:
                raise ValueError("a content part must be a string or an object with a 'type'")
    else:
        raise ValueError(f"'content' must be a string, a list of parts or null, got {type(content).__name__}")
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise ValueError("a tool call needs function.name")
        args = fn.get("arguments", "")
        parts.append(f"tool call {fn['name']}({args if isinstance(args, str) else ''})")
    return "\n".join(parts)


def _session(obj: dict, lineno: int) -> str:
    for key in ID_FIELDS:
        v = obj.get(key)
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (str, int)) and str(v).strip():
            return str(v).strip()
        raise ValueError(f"field {key!r} must be a non-empty string or an integer")
    return f"line-{lineno}"


def _time(obj: dict) -> str | None:
    c = obj.get("created")
    if c is None:
        return None
    if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 <= c < 1e11:
        raise ValueError(f"'created' must be Unix seconds, got {c!r}")
    return dt.datetime.fromtimestamp(c, dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds")


def conversation_rows(obj: dict, lineno: int) -> list[dict]:
    """One line's rows (ValueError says what is wrong)."""
    session, time = _session(obj, lineno), _time(obj)
    rows = []
    for i, msg in enumerate(obj["messages"]):
        try:
            if not isinstance(msg, dict) or not isinstance(msg.get("role"), str) or not msg["role"]:
                raise ValueError("expected an object with a non-empty 'role'")
            meta: dict[str, Any] = {"turn": i}
            for key in ("name", "tool_call_id"):
                if isinstance(msg.get(key), str):
                    meta[key] = msg[key]
            rows.append(history_row(session, msg["role"], _text(msg), time=time, meta=meta))
        except ValueError as e:
            raise ValueError(f"messages[{i}]: {e}") from None
    if not rows:
        raise ValueError("'messages' is empty")
    return rows


def parse(path: Path, data: bytes) -> Parsed:
    rows: list[dict] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_line(raw)
            if not is_chat_line(obj):
                raise ValueError("not a chat-completions line (an object with a 'messages' list)")
            new = conversation_rows(obj, lineno)
        except ValueError as e:
            raise BadInputError(f"{path}:{lineno}: {e}") from None
        session = new[0]["session"]
        if session in seen:
            raise BadInputError(f"{path}:{lineno}: session {session!r} repeats line {seen[session]} (one "
                                "conversation per line; give each line its own id)")
        seen[session] = lineno
        rows += new
    if not rows:
        raise BadInputError(f"{path}: no conversations")
    return Parsed(rows, "chat-jsonl", [], {"conversations": len(seen)})
