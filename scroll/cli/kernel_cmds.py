"""`scroll kernel ...`: run a cell in a session's sandboxed kernel; export a session as .ipynb.

    scroll kernel run --db LOG --session S "print(1+1)" [--timeout 30] [--json] [--no-sandbox]
    scroll kernel export --db LOG --session S OUT.ipynb [--json]

`run` starts the session's kernel (replaying its logged successful cells first, so earlier
variables exist), executes CODE (or stdin when CODE is "-"), logs both events and prints the
exposure. Exit code 1 when the cell failed.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, db_path, emit_json, fail

kernel_app = typer.Typer(help="The sandboxed Python kernel (one per session).", no_args_is_help=True)


@kernel_app.command("run")
def run(
    code: str = typer.Argument(..., help="Python code to run; '-' reads stdin."),
    db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
    session: str = typer.Option(..., "--session", "-s", help="Session name."),
    timeout: float = typer.Option(30.0, "--timeout", help="Wall-time limit in seconds."),
    memory: str = typer.Option("4G", "--memory", help="Memory cap of the kernel."),
    max_output_chars: int = typer.Option(20_000, "--max-output-chars"),
    no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGEROUS: run model code unsandboxed."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    from scroll.events import EventLog
    from scroll.kernel import Kernel, SandboxError

    if code == "-":
        code = sys.stdin.read()
    with EventLog(db_path(db)) as log:
        try:
            k = Kernel(log, session, timeout=timeout, memory_limit=memory,
                       max_output_chars=max_output_chars, sandbox="off" if no_sandbox else True)
        except SandboxError as e:
            fail(str(e), code=2, as_json=as_json)
        with k:
            r = k.execute(code, timeout=timeout)
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
    from scroll.events import EventLog
    from scroll.kernel.notebook import export_notebook

    with EventLog(db_path(db)) as log:
        try:
            info = export_notebook(log, session, out, with_ms=not no_ms)
        except KeyError as e:
            fail(str(e), code=2, as_json=as_json)
    if as_json:
        emit_json(info)
    else:
        typer.echo(f"wrote {info['path']}: {info['cells']} cells"
                   + (f", {len(info['skipped'])} not runnable (seq {info['skipped']})" if info["skipped"] else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(kernel_app, name="kernel")
