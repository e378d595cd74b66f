"""`scroll viewer`: a read-only session viewer in the browser.

    scroll viewer --db var/scroll.db                              # http://127.0.0.1:8765
    scroll viewer --db agent.db --results results --port 9000
    scroll viewer --db agent.db --host 0.0.0.0 --token-file ~/.scroll-viewer-token
    scroll viewer --db agent.db --check [--json]                  # the resolved settings, then exit

Pages: sessions; a session's tasks as timelines of steps (the view each reply saw, token
counts, evictions, reply, cell, exposure, headlines) with the headline index as a tree;
event ranges; search (the same BM25 and filters as `ms.search`); payloads paged in place;
result files (JSON tables, PNG plots) under --results. The log is opened read-only; every
route is GET. A non-loopback --host needs a token (--token or --token-file); with one,
every request must carry it (`Authorization: Bearer T`, `X-Scroll-Token: T` or `?token=T`).
Exit code 1 for a bad option or log, 2 for a refused bind.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, emit_json, existing_db, fail, read_token


def register(app: typer.Typer) -> None:
    @app.command("viewer")
    def viewer(
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP + " Opened read-only."),
        host: str = typer.Option("127.0.0.1", "--host", help="Bind address; anything but loopback needs a token."),
        port: int = typer.Option(8765, "--port", min=1, max=65535, help="Port."),
        results: Path = typer.Option(Path("results"), "--results",
                                     help="Folder of result files for the runs page (JSON, PNG, MD), served "
                                          "read-only from there only."),
        token: Optional[str] = typer.Option(None, "--token",
                                            help="A token (>= 16 characters) every request must carry "
                                                 "(visible to `ps`: prefer --token-file)."),
        token_file: Optional[Path] = typer.Option(None, "--token-file", help="A file holding the token."),
        check: bool = typer.Option(False, "--check", help="Check the log and the bind, print the settings, exit."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP + " (with --check)"),
    ) -> None:
        """Serve a read-only session viewer for the log at --db (loopback by default)."""
        from scroll.surfaces.viewer import INSTALL, ViewerConfig

        path = existing_db(db, as_json)
        secret = read_token(token, token_file, as_json)
        try:
            from scroll.surfaces.viewer.access import AccessError, check_bind
        except ImportError as e:
            fail(f"the viewer needs its extra ({e}): {INSTALL}", as_json=as_json)
        try:
            check_bind(host, secret)
        except AccessError as e:
            fail(str(e), code=2, as_json=as_json)
        config = ViewerConfig(db=path, results=results.resolve(), token=secret)
        url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
        if check:
            from scroll.events import EventLog, LogError

            try:
                with EventLog(path, readonly=True) as log:
                    events = log.max_seq()
            except (LogError, OSError, ValueError) as e:
                fail(str(e), as_json=as_json)
            info = {"db": str(path), "events": events, "url": url, "results": str(config.results),
                    "results_exists": config.results.is_dir(), "token": bool(secret)}
            emit_json(info) if as_json else typer.echo(
                "\n".join(f"{k}: {v}" for k, v in info.items()))
            return
        from scroll.surfaces.viewer import serve

        typer.echo(f"scroll viewer: {url} (read-only: {path}){' (token required)' if secret else ''}", err=True)
        try:
            serve(config, host=host, port=port)
        except ImportError as e:
            fail(str(e), as_json=as_json)
