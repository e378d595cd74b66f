"""Helpers shared by CLI commands: output as JSON or rich, errors as one clear line."""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, NoReturn

import typer

DB_HELP = "Event log file (SQLite). Default: $SCROLL_DB, else $SCROLL_HOME/scroll.db (SCROLL_HOME defaults to ./var)."
JSON_HELP = "Print machine-readable JSON on stdout instead of tables."


def db_path(db: Path | None) -> Path:
    from scroll.env import default_db

    return db.resolve() if db else default_db()


def existing_db(db: Path | None, as_json: bool = False) -> Path:
    """The event log a read-only command works on; a clear error when there is none."""
    path = db_path(db)
    if path.is_dir():
        fail(f"{path} is a directory, not an event log file", as_json=as_json)
    if not path.exists():
        fail(f"no event log at {path} (import something first, or pass --db)", as_json=as_json)
    return path


@contextmanager
def open_log_readonly(db: Path | None, as_json: bool = False) -> Iterator[Any]:
    """`with open_log_readonly(db) as log:` for the read-only commands (search, expand,
    stats, verify): never creates, migrates or writes the database; a missing file, a
    directory, a file that is not a Scroll event log or a newer schema is one clear error."""
    import sqlite3

    from scroll.events import EventLog, LogError

    path = existing_db(db, as_json)
    try:
        log = EventLog(path, readonly=True)
    except (LogError, sqlite3.DatabaseError, OSError) as e:
        fail(str(e), as_json=as_json)
    with log:
        try:
            yield log
        except sqlite3.DatabaseError as e:  # a damaged page met while reading: one line, not a traceback
            fail(f"{path}: the database file is damaged ({e}); run `scroll verify --db {path}`", as_json=as_json)


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


def emit(obj: dict, as_json: bool, text: str) -> None:
    """One JSON line with --json, else the human text."""
    typer.echo(json.dumps(obj, default=str) if as_json else text)


def fail_with(e: Exception, as_json: bool, code: int = 1) -> NoReturn:
    """An exception as a one-line error: {"ok": false, "error": type, "message"} with --json."""
    if as_json:
        typer.echo(json.dumps({"ok": False, "error": type(e).__name__, "message": str(e)}))
    else:
        typer.echo(f"error: {e}", err=True)
    raise typer.Exit(code)


def read_token(token: str | None, token_file: Path | None, as_json: bool = False) -> str | None:
    """The surfaces' access token: --token or the first line of --token-file (not both)."""
    if token is not None and token_file is not None:
        fail("pass --token or --token-file, not both", as_json=as_json)
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as e:
            fail(f"--token-file {token_file}: {e}", as_json=as_json)
    return token
