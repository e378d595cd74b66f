"""`scroll import | search | expand | stats | verify | migrate`: the event log from the shell.

Read-only commands (search, expand, stats, verify) open the log read-only: they never
create, migrate or write a database. `import` validates the whole file before it opens
(or creates) the log, and a failed import into a new path leaves no file behind.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Optional

import typer

from scroll.controls import show_controls

from .common import DB_HELP, JSON_HELP, console, db_path, emit_json, fail, open_log_readonly

SEQ_MAX = 2**63 - 1  # SQLite's INTEGER range


def _short(text: str, n: int = 160) -> str:
    t = " ".join(text.split())
    return t if len(t) <= n else t[: n - 1] + "…"


def _absent_files(path: Path) -> list[Path]:
    """The log's files (db, WAL, index, payloads, labels) that do not exist yet."""
    names = [str(path) + s for s in ("", "-wal", "-shm", "-journal", ".index", ".payloads", ".labels.json")]
    return [Path(n) for n in names if not Path(n).exists() and not Path(n).is_symlink()]


def _remove(paths: list[Path]) -> None:
    for p in paths:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists() or p.is_symlink():
            p.unlink(missing_ok=True)


def _check_k(value: int) -> int:
    from scroll.capability import MAX_K

    if not 1 <= value <= MAX_K:
        raise typer.BadParameter(f"{value} is not in 1..{MAX_K}")
    return value


def _check_time(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    from scroll.capability import CapabilityError, check_time_bound

    try:
        return check_time_bound(value, "the time")
    except CapabilityError as e:
        raise typer.BadParameter(str(e)) from None


def _check_origin(value: str) -> str:
    from scroll.capability import CapabilityError, parse_origin

    try:
        parse_origin(value)
    except CapabilityError as e:
        raise typer.BadParameter(str(e)) from None
    return value


ORIGIN_HELP = ("Whose events: history (the default: the imported or remembered conversation), agent (the loop's "
               "own task, replies, cells, outputs and notes), system (Scroll's bookkeeping), or * for all.")


def _check_attach(files: list[Path], session: Optional[str], as_json: bool):
    """--attach: every file checked (regular, within attach_max_bytes) before the log opens."""
    if not files:
        return None
    from scroll.config import LoopConfig
    from scroll.files import FileLimits, check_host_file

    if session is None:
        fail("--attach needs --attach-session NAME (there is no imported event to take the session from)",
             as_json=as_json)
    limits = FileLimits.from_config(LoopConfig.load())
    for f in files:
        try:
            check_host_file(f, limits)
        except ValueError as e:
            fail(str(e), as_json=as_json)
    return limits


def _attach(log, session: Optional[str], files: list[Path], limits) -> list:
    from scroll.files import import_file

    return [import_file(log, session, f, limits) for f in files]


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_(
        file: Optional[Path] = typer.Argument(None, help="A history: events JSONL, OpenAI chat-completions JSONL "
                                              "(messages), LongMemEval JSON, LoCoMo JSON or llm's logs.db."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        fmt: str = typer.Option("auto", "--format", help="auto | jsonl | chat-jsonl | longmemeval | locomo | llm-logs "
                                "(auto looks at the content)."),
        instance: Optional[str] = typer.Option(None, "--instance", help="LongMemEval question_id or LoCoMo sample_id "
                                               "to import, from a file that holds several (one history per log)."),
        skip_bad: bool = typer.Option(False, "--skip-bad", help="JSONL: skip malformed lines and report them instead of stopping."),
        attach: list[Path] = typer.Option([], "--attach", help="A file to store whole in the log (repeatable): one "
                                          "'file' event with a type-aware summary; the content stays reachable "
                                          "through ms.payload. Stored after FILE's events."),
        attach_session: Optional[str] = typer.Option(None, "--attach-session", help="Session of the --attach files "
                                                     "(default: the session of FILE's last event)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Import a history into the event log: all of it in one transaction, or nothing.

        Every event is stored with origin 'history'. Chat logs (OpenAI messages JSONL, llm's
        logs.db): one session per conversation. LongMemEval and LoCoMo: events carry no labels;
        sessions are named s001, s002, ..., and the questions, answers and evidence seqs go to
        the label sidecar <db>.labels.json, written after the events are committed. The whole
        file is checked before the log is opened or created, and a file whose sessions are
        already in the log is refused."""
        import sqlite3

        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        from scroll.events import EventLog, LogError
        from scroll.importers import BadInputError, Parsed, import_rows, parse_file, write_labels

        if file is None and not attach:
            fail("nothing to import: give a FILE, --attach FILE, or both", as_json=as_json)
        try:
            parsed = parse_file(file, fmt, instance=instance, skip_bad=skip_bad) if file is not None \
                else Parsed(rows=[], format="none")
        except BadInputError as e:
            fail(str(e), as_json=as_json)
        attach_session = attach_session or (parsed.rows[-1]["session"] if parsed.rows else None)
        file_limits = _check_attach(attach, attach_session, as_json)
        path = db_path(db)
        if path.is_dir():
            fail(f"{path} is a directory, not an event log file", as_json=as_json)
        created = _absent_files(path) if not path.exists() else []
        try:
            with EventLog(path) as log:
                if not created:
                    log.check_integrity()  # a damaged file gets no new events
                if log.readonly:  # a v1 log (scroll migrate) or a tampered one: say why before anything else
                    raise LogError(f"cannot write: {log.readonly_reason}")
                clash = sorted(set(parsed.sessions) & {x["session"] for x in log.sessions()})
                if clash:  # checked before any append: nothing is written
                    raise LogError(f"{file}: session(s) {', '.join(map(repr, clash[:5]))}"
                                   f"{' ...' if len(clash) > 5 else ''} ({len(clash)} of {len(parsed.sessions)}) are "
                                   f"already in {path}: nothing imported (import into another --db, or rename the "
                                   "sessions)")
                before = log.max_seq()
                if as_json:
                    seqs = import_rows(log, parsed.rows)
                    log.index.flush()
                else:
                    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console(), transient=True) as prog:
                        task = prog.add_task("importing", total=len(parsed.rows))
                        seqs = import_rows(log, parsed.rows, progress=lambda n: prog.advance(task, n))
                        # its own task, no total: a pulsing bar whose elapsed time keeps running (a finished
                        # task's clock stops, and indexing a big file takes longer than importing it)
                        indexing = prog.add_task("indexing (BM25)", total=None)
                        log.index.flush()
                        prog.update(indexing, total=1, completed=1)
                attached = _attach(log, attach_session, attach, file_limits)
        except BaseException as e:
            _remove(created)  # a failed import into a new path leaves nothing behind
            if isinstance(e, LogError):
                fail(str(e), as_json=as_json)
            if isinstance(e, (ValueError, TypeError, OSError, sqlite3.DatabaseError)):
                fail(f"{file}: {e}", as_json=as_json)
            raise
        try:
            label_keys = write_labels(path, parsed, seqs)  # only after the events committed
        except (OSError, ValueError) as e:
            fail(f"events imported into {path} (seq {seqs[0]}..{seqs[-1]}) but the labels were not written: {e}",
                 as_json=as_json)
        result = {"db": str(path), "format": parsed.format, "imported": len(seqs),
                  "first_seq": seqs[0] if seqs else None, "last_seq": seqs[-1] if seqs else None,
                  "previous_max_seq": before, "skipped": parsed.skipped, "info": parsed.info,
                  "sessions": len(parsed.sessions),
                  "labels": {"file": str(path) + ".labels.json", "keys": label_keys} if label_keys else None,
                  "attached": [{k: v for k, v in a.to_dict().items() if k != "text"} for a in attached]}
        if as_json:
            emit_json(result)
            return
        c = console()
        if file is not None:
            c.print(f"imported [bold]{len(seqs)}[/] events ({parsed.format}) into {path} "
                    f"(seq {result['first_seq']}..{result['last_seq']})")
        for a in attached:
            c.print(f"attached {a.name}: {a.type}, {a.size} bytes, seq {a.seq} (session {attach_session}), "
                    f"{a.handle}; summary {a.tokens} tokens", highlight=False)
        if label_keys:
            c.print(f"labels: {result['labels']['file']} ({len(label_keys)} record(s): {', '.join(label_keys[:3])}"
                    f"{' ...' if len(label_keys) > 3 else ''})", highlight=False)
        for s in parsed.skipped:
            c.print(f"[yellow]skipped[/] {s}", highlight=False)

    @app.command()
    def search(
        query: str = typer.Argument(..., help="Free-text query (BM25)."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        k: int = typer.Option(10, "--k", "-k", callback=_check_k, help="How many hits (1..1000, scroll.capability.MAX_K)."),
        session: Optional[str] = typer.Option(None, "--session", help="Only this session."),
        kind: Optional[str] = typer.Option(None, "--kind", help="Only this kind (message, code, output, ...)."),
        role: Optional[str] = typer.Option(None, "--role", help="Only this role (user, assistant, a speaker's name, ...)."),
        since: Optional[str] = typer.Option(None, "--since", callback=_check_time, help="Only events at or after this ISO 8601 date or time (2023-05-17, 2023-05-17T10:00:00)."),
        until: Optional[str] = typer.Option(None, "--until", callback=_check_time, help="Only events at or before this ISO 8601 date or time (inclusive at its precision)."),
        origin: str = typer.Option("history", "--origin", callback=_check_origin, help=ORIGIN_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Find events by their words: BM25, newest first on ties. Searches origin 'history'
        unless --origin says otherwise, through the same capability (scope, limits) as `ms.search`."""
        from scroll.capability import Capability, CapabilityError

        with open_log_readonly(db, as_json) as log:
            cap = Capability(log, sessions=None if session is None else {session})
            try:
                hits = cap.search(query, k=k, kind=kind, role=role, since=since, until=until, origin=origin)
            except CapabilityError as e:
                fail(str(e), as_json=as_json)
            if as_json:
                emit_json(hits)
                return
            from rich.table import Table
            from rich.text import Text

            t = Table(title=Text(f"{len(hits)} hits for {query!r}"))
            for col in ("seq", "score", "session", "origin", "role", "time", "text"):
                t.add_column(col, overflow="fold")
            for h in hits:
                text = h["text"] if h["text"] is not None else f"({h.get('text_len')} bytes; scroll expand {h['seq']})"
                t.add_row(str(h["seq"]), f"{h['score']:.3f}",  # history text as plain text: no markup, no ANSI
                          *(Text(show_controls(str(v))) for v in (h["session"], h["origin"], h["role"], h["time"],
                                                                  _short(text))))
            console().print(t)

    @app.command()
    def expand(
        seq: int = typer.Argument(..., min=0, max=SEQ_MAX, help="The event's seq (or the first of a range)."),
        hi: Optional[int] = typer.Argument(None, min=0, max=SEQ_MAX, help="Last seq of an inclusive range."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Show the exact events: one seq, or every event from SEQ to HI inclusive (any origin)."""
        if hi is not None and hi < seq:
            raise typer.BadParameter(f"HI ({hi}) must be >= SEQ ({seq})", param_hint="'hi'")
        with open_log_readonly(db, as_json) as log:
            try:
                events = [log.expand(seq)] if hi is None else log.expand(seq, hi)
            except KeyError as e:
                fail(str(e.args[0]), as_json=as_json)
            except ValueError as e:
                fail(str(e), as_json=as_json)
            if as_json:
                emit_json(events[0].to_dict() if hi is None else [e.to_dict() for e in events])
                return
            from rich.text import Text

            c = console()
            for e in events:
                c.rule(Text(show_controls(f"seq {e.seq} · {e.session} · {e.role} · {e.kind} · "
                                          f"{getattr(e, 'origin', '')} · {e.time}")))
                c.print(show_controls(e.text), markup=False, highlight=False)  # ANSI / NUL as escapes
                if e.meta:
                    c.print(f"[dim]meta {e.meta}[/]", highlight=False)

    @app.command()
    def stats(
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Counts and sizes: events, sessions, kinds, payloads, index."""
        with open_log_readonly(db, as_json) as log:
            path = log.path
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

    @app.command()
    def verify(
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Check the file (SQLite's integrity check: every table and index page), then the log's hash
        chain (and payloads) from the first event to the head, read-only.

        Exit 0 and the head hash when every event matches; exit 1 and the first broken seq
        otherwise. Keep the head hash somewhere else: a later verify that ends in a
        different head means the history was rewritten."""
        with open_log_readonly(db, as_json) as log:
            path = log.path
            r = log.verify()
        if as_json:
            emit_json({"db": str(path), **r})
        elif r["ok"]:
            console().print(f"ok: {r['events']} events, chain intact; head {r['head_hash']}", highlight=False, soft_wrap=True)
        else:
            from rich.console import Console
            from rich.markup import escape

            where = f"first bad seq {r['first_bad_seq']}: " if r["first_bad_seq"] is not None else ""
            Console(stderr=True, soft_wrap=True).print(
                f"[bold red]broken:[/] {where}{escape(str(r['reason']))} ({r['events']} events checked)",
                highlight=False)
        if not r["ok"]:
            raise typer.Exit(1)

    @app.command()
    def migrate(
        old: Path = typer.Argument(..., help="The existing event log (any older schema, or the current one)."),
        new: Path = typer.Argument(..., help="Where to write the new log; must not exist."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Copy a log into a NEW log at the current schema, keeping every seq, time, text,
        meta and payload (scroll.log_copy.copy_log). Events without an origin get one by
        the documented rule, which is recorded in the new log. OLD is opened read-only and
        never changed; an existing NEW is refused."""
        import sqlite3

        from scroll.events import LogError
        from scroll.log_migrate import copy_log

        old, new = old.resolve(), new.resolve()
        if old.is_dir():
            fail(f"{old} is a directory, not an event log file", as_json=as_json)
        if not old.exists():
            fail(f"no event log at {old}", as_json=as_json)
        if new.exists() or new.is_symlink():
            fail(f"{new} already exists; migrate writes a NEW log (choose another path)", as_json=as_json)
        created = _absent_files(new)
        try:
            r = copy_log(old, new)
        except BaseException as e:
            _remove(created)
            if isinstance(e, (LogError, ValueError, OSError, sqlite3.DatabaseError)):
                fail(str(e), as_json=as_json)
            raise
        if as_json:
            emit_json(r)
        else:
            from rich.table import Table

            t = Table(title=f"{old} -> {new}", show_header=False)
            for key, value in r.items():
                t.add_row(key, str(value))
            console().print(t)
        if not r.get("ok", True):
            raise typer.Exit(1)
