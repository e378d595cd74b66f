"""`scroll import | search | expand | stats`: the event log from the shell."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, console, db_path, emit_json, existing_db, fail


def _short(text: str, n: int = 160) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(
        file: Path = typer.Argument(..., help="Events JSONL (one {session, role, text, time?, kind?, meta?} a line) or LongMemEval JSON."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        fmt: str = typer.Option("auto", "--format", help="auto | jsonl | longmemeval (auto looks at the content)."),
        instance: Optional[str] = typer.Option(None, "--instance", help="LongMemEval question_id to import (one haystack per log)."),
        skip_bad: bool = typer.Option(False, "--skip-bad", help="JSONL: skip malformed lines and report them instead of stopping."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Import a history into the event log: all of it in one transaction, or nothing."""
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from scroll.events import EventLog
        from scroll.importers import BadInputError, import_rows, parse_file

        try:
            parsed = parse_file(file, fmt, instance=instance, skip_bad=skip_bad)
        except BadInputError as e:
            fail(str(e), as_json=as_json)
        path = db_path(db)
        try:
            with EventLog(path) as log:
                before = log.max_seq()
                if as_json:
                    seqs = import_rows(log, parsed.rows)
                    log.index.flush()
                else:
                    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console(), transient=True) as prog:
                        task = prog.add_task("importing", total=len(parsed.rows))
                        seqs = import_rows(log, parsed.rows, progress=lambda n: prog.advance(task, n))
                        prog.update(task, description="indexing")
                        log.index.flush()
        except (ValueError, TypeError) as e:
            fail(f"{file}: {e}", as_json=as_json)
        result = {"db": str(path), "format": parsed.format, "imported": len(seqs),
                  "first_seq": seqs[0] if seqs else None, "last_seq": seqs[-1] if seqs else None,
                  "previous_max_seq": before, "skipped": parsed.skipped, "info": parsed.info}
        if as_json:
            emit_json(result)
            return
        c = console()
        c.print(f"imported [bold]{len(seqs)}[/] events ({parsed.format}) into {path} "
                f"(seq {result['first_seq']}..{result['last_seq']})")
        for s in parsed.skipped:
            c.print(f"[yellow]skipped[/] {s}", highlight=False)

    @app.command()
    def search(
        query: str = typer.Argument(..., help="Free-text query (BM25)."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        k: int = typer.Option(10, "--k", "-k", help="How many hits."),
        session: Optional[str] = typer.Option(None, "--session", help="Only this session."),
        kind: Optional[str] = typer.Option(None, "--kind", help="Only this kind (message, code, output, ...)."),
        role: Optional[str] = typer.Option(None, "--role", help="Only this role (user, assistant, a speaker's name, ...)."),
        since: Optional[str] = typer.Option(None, "--since", help="Only events at or after this ISO 8601 time."),
        until: Optional[str] = typer.Option(None, "--until", help="Only events at or before this ISO 8601 time (inclusive at its precision)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Find events by their words: BM25 over the whole log, newest first on ties."""
        from scroll.events import EventLog

        path = existing_db(db, as_json)
        with EventLog(path) as log:
            hits = log.search(query, k=k, session=session, kind=kind, role=role, since=since, until=until)
            if as_json:
                emit_json([h.to_dict() for h in hits])
                return
            from rich.table import Table

            t = Table(title=f"{len(hits)} hits for {query!r}")
            for col in ("seq", "score", "session", "role", "time", "text"):
                t.add_column(col, overflow="fold")
            for h in hits:
                t.add_row(str(h.seq), f"{h.score:.3f}", h.session, h.role, h.time, _short(h.text))
            console().print(t)

    @app.command()
    def expand(
        seq: int = typer.Argument(..., help="The event's seq (or the first of a range)."),
        hi: Optional[int] = typer.Argument(None, help="Last seq of an inclusive range."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Show the exact events: one seq, or every event from SEQ to HI inclusive."""
        from scroll.events import EventLog

        path = existing_db(db, as_json)
        with EventLog(path) as log:
            try:
                events = [log.expand(seq)] if hi is None else log.expand(seq, hi)
            except KeyError as e:
                fail(str(e.args[0]), as_json=as_json)
            except ValueError as e:
                fail(str(e), as_json=as_json)
            if as_json:
                emit_json(events[0].to_dict() if hi is None else [e.to_dict() for e in events])
                return
            c = console()
            for e in events:
                c.rule(f"seq {e.seq} · {e.session} · {e.role} · {e.kind} · {e.time}")
                c.print(e.text, markup=False, highlight=False)
                if e.meta:
                    c.print(f"[dim]meta {e.meta}[/]")

    @app.command()
    def stats(
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Counts and sizes: events, sessions, kinds, payloads, index."""
        from scroll.events import EventLog

        path = existing_db(db, as_json)
        with EventLog(path) as log:
            s = log.stats()
            idx = log.index
            idx.sync()
            s["index"] = {"segments": len(idx.segments), "tail_docs": idx.n_tail, "docs": idx.n_docs,
                          "vocabulary": len(idx.vocab), "disk_bytes": idx.disk_bytes(), "k1": idx.k1, "b": idx.b}
        if as_json:
            emit_json(s)
            return
        from rich.table import Table

        t = Table(title=str(path), show_header=False)
        for key, value in s.items():
            t.add_row(key, str(value))
        console().print(t)
