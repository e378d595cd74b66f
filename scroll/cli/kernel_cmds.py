"""`scroll kernel ...`: run a cell in a session's sandboxed kernel; export a session as .ipynb.

    scroll kernel run --db LOG --session S "print(1+1)" [--timeout 30] [--json] [--no-sandbox]
    scroll kernel export --db LOG --session S OUT.ipynb [--json]

`run` starts the session's kernel (replaying its logged successful cells first, so earlier
variables exist), executes CODE (or stdin when CODE is "-"), logs both events and prints the
exposure. Exit code 1 when the cell failed or the input is bad (one-line error: a --db that
is a directory, not SQLite or not a Scroll log; a bad --memory; a kernel that cannot start),
2 when the sandbox is unavailable or the session has nothing to export.
`export` opens the log read-only.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, db_path, emit_json, existing_db, fail

kernel_app = typer.Typer(help="The sandboxed Python kernel (one per session).", no_args_is_help=True)


def _open_log(path: Path, as_json: bool, **kw):
    """EventLog at `path`, or a one-line error (exit 1) when it is not a Scroll log."""
    from .agent_cmds import open_log

    return open_log(path, as_json, **kw)


@kernel_app.command("run")
def run(
    code: str = typer.Argument(..., help="Python code to run; '-' reads stdin."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    session: str = typer.Option(..., "--session", "-s", help="Session name."),
    sessions: Optional[str] = typer.Option(None, "--sessions", help="Other sessions `ms` may read besides "
                                           "SESSION, comma-separated (default: SESSION only)."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Wall-time limit in seconds."),
    memory: str = typer.Option("4G", "--memory", help="Memory cap of the kernel, e.g. 512M, 4G."),
    max_output_chars: int = typer.Option(20_000, "--max-output-chars", min=100,
                                         help="Exposure cap (the full output is logged)."),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGEROUS: run model code unsandboxed."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Run CODE in SESSION's kernel (earlier cells replayed first); log and print the result."""
    from scroll.capability import Capability
    from scroll.files import FileAttacher
    from scroll.kernel import Kernel, SandboxError
    from scroll.kernel.sandbox import parse_size

    from .agent_cmds import _check_scope, _parse_scope

    if not session.strip():
        fail("--session must not be empty", as_json=as_json)
    try:
        mem = parse_size(memory)
    except ValueError:
        fail(f"--memory {memory!r}: expected a size like 512M or 4G", as_json=as_json)
    if mem < 64 << 20:
        fail(f"--memory {memory!r}: at least 64M (a Python kernel does not start in less)", as_json=as_json)
    if code == "-":
        code = sys.stdin.read()
    scope = _parse_scope(sessions, False, as_json) or []
    with _open_log(db_path(db), as_json) as log:
        _check_scope(scope, log, as_json)
        try:
            k = Kernel(log, session, timeout=timeout, memory_limit=mem,
                       max_output_chars=max_output_chars, sandbox="off" if no_sandbox else True,
                       capability=Capability(log, sessions=scope, own_session=session,  # + its own session
                                                         files=FileAttacher(log, session)))
        except SandboxError as e:
            fail(str(e), code=2, as_json=as_json)
        except (ValueError, RuntimeError, OSError) as e:
            fail(f"kernel did not start: {e}", as_json=as_json)
        try:
            with k:
                r = k.execute(code, timeout=timeout)
        except (RuntimeError, OSError) as e:  # the kernel process broke, not the cell
            fail(f"kernel failed: {e}", as_json=as_json)
    if as_json:
        emit_json(r.to_dict())
    else:
        if r.notice:
            typer.echo(f"[notice] {r.notice}", err=True)
        typer.echo(r.stdout, nl=False)
        if r.error:
            typer.echo(r.error, err=True)
    raise typer.Exit(1 if r.error else 0)


@kernel_app.command("export")
def export(
    out: Path = typer.Argument(..., help="Output .ipynb path."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    session: str = typer.Option(..., "--session", "-s", help="Session name."),
    no_ms: bool = typer.Option(False, "--no-ms", help="Leave out the cell that sets up `ms`."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write SESSION's cells as a Jupyter notebook (the log is opened read-only)."""
    from scroll.kernel.notebook import export_notebook

    if out.is_dir():
        fail(f"{out} is a directory; give a file name like {out / 'session.ipynb'}", as_json=as_json)
    with _open_log(existing_db(db, as_json), as_json, readonly=True) as log:
        try:
            info = export_notebook(log, session, out, with_ms=not no_ms)
        except KeyError as e:
            fail(str(e), code=2, as_json=as_json)
    if as_json:
        emit_json(info)
    else:
        typer.echo(f"wrote {info['path']}: {info['cells']} cells"
                   + (f", {len(info['skipped'])} not runnable (seq {info['skipped']})" if info["skipped"] else ""))


@kernel_app.command("replay")
def replay(
    notebook: Path = typer.Argument(..., help="A notebook written by `scroll kernel export`."),
    db: Optional[Path] = typer.Option(None, "--db", help="The log (default: the one the notebook names)."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Wall-time limit per cell in seconds."),
    memory: str = typer.Option("4G", "--memory", help="Memory cap of the kernel, e.g. 512M, 4G."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Replay an exported notebook faithfully: its cells in a fresh SANDBOXED kernel whose `ms` has the
    run's session scope, over a snapshot of the log (the log is not written); each printout compared
    with the logged one. Exit 0 when every cell printed the same, 1 otherwise."""
    from scroll.kernel import SandboxError
    from scroll.kernel.notebook import replay_notebook

    if not notebook.is_file():
        fail(f"{notebook}: no such notebook", as_json=as_json)
    try:
        r = replay_notebook(notebook, db, timeout=timeout, memory_limit=memory)
    except SandboxError as e:
        fail(str(e), code=2, as_json=as_json)
    except (ValueError, OSError, KeyError, RuntimeError) as e:
        fail(f"{notebook}: {e}", as_json=as_json)
    if as_json:
        emit_json(r)
    else:
        scope = "the whole log" if r["sessions"] is None else ", ".join(r["sessions"])
        typer.echo(f"replayed {r['cells']} cells sandboxed over {r['db']} (sessions: {scope}): "
                   f"{r['same']} printed the same, {len(r['differ'])} differ")
        for d in r["differ"]:
            typer.echo(f"  seq {d['seq']}: logged {d['logged'][:80]!r} ({d['logged_error']}), "
                       f"replayed {d['replayed'][:80]!r} ({d['error']})")
    raise typer.Exit(1 if r["differ"] else 0)


def register(app: typer.Typer) -> None:
    app.add_typer(kernel_app, name="kernel")
