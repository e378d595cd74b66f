"""Events JSONL: one event per line, `{"session", "role", "text", "time"?, "kind"?, "meta"?}`.
`meta` is the user's own and is kept as given; every event's origin is `history`."""
from __future__ import annotations

from pathlib import Path

from .rows import BadInputError, Parsed, check_event
from .strict_json import loads_line


def parse(path: Path, data: bytes, skip_bad: bool) -> Parsed:
    rows, skipped = [], []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            rows.append(check_event(loads_line(raw)))
        except ValueError as e:
            msg = f"{path}:{lineno}: {e}"
            if not skip_bad:
                raise BadInputError(msg) from None
            skipped.append(msg)
    if not rows:
        raise BadInputError(f"{path}: no events" + (f" ({len(skipped)} bad lines skipped)" if skipped else ""))
    return Parsed(rows, "jsonl", skipped)
