"""Helpers shared by CLI commands: output as JSON or rich, errors as one clear line."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer

DB_HELP = "Event log file (SQLite). Default: $SCROLL_DB, else $SCROLL_HOME/scroll.db (SCROLL_HOME defaults to ./var)."
JSON_HELP = "Print machine-readable JSON on stdout instead of tables."


def db_path(db: Path | None) -> Path:
    from scroll.env import default_db

    return db.resolve() if db else default_db()


def existing_db(db: Path | None, as_json: bool = False) -> Path:
    """The event log a read-only command works on; a clear error when there is none."""
    path = db_path(db)
    if not path.exists():
        fail(f"no event log at {path} (import something first, or pass --db)", as_json=as_json)
    return path


def emit_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=str) + "\n")


def fail(msg: str, code: int = 1, as_json: bool = False) -> NoReturn:
    if as_json:
        emit_json({"error": msg})
    else:
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(msg)}", highlight=False)
    raise typer.Exit(code)


def console():
    from rich.console import Console

    return Console()
