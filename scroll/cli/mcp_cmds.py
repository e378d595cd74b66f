"""`scroll mcp`: serve a Scroll log to MCP clients (Claude Code, Codex, OpenHands, ...).

    scroll mcp --db agent.db --session claude                      # stdio (the client spawns it)
    scroll mcp --db agent.db --transport http --port 8766          # streamable HTTP on 127.0.0.1, token printed
    scroll mcp --db agent.db --transport http --host 0.0.0.0 --token-file /etc/scroll/token
    scroll mcp --db agent.db --check [--json]                      # resolved config + sandbox, then exit

Tools: log, search, expand, payload, headlines, run_python; resources scroll://sessions,
scroll://session/{name}, scroll://event/{seq}. `run_python` needs the kernel sandbox (root);
without it that tool answers with a clear error and the others work. Client config
snippets: docs/mcp.md. Exit code 1 for a bad option or log, 2 for a refused bind.
"""
from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, db_path, emit_json, fail, read_token


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def _token(token_file: Optional[Path], as_json: bool) -> str | None:
    token = read_token(None, token_file, as_json)
    if token is None:
        return None
    from scroll.surfaces.bind import MIN_TOKEN

    if len(token) < MIN_TOKEN:
        fail(f"--token-file {token_file}: the token must be at least {MIN_TOKEN} characters", as_json=as_json)
    return token


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP + " Created when missing."),
        session: str = typer.Option("mcp", "--session", "-s",
                                    help="The server's own session: `log` and `run_python` write here (only here)."),
        sessions: Optional[str] = typer.Option(None, "--sessions",
                                               help="Sessions search/expand may read besides its own, comma-separated "
                                                    "(default: the whole log)."),
        transport: Transport = typer.Option(Transport.stdio, "--transport",
                                            help="stdio (an MCP client spawns the server) or http (streamable HTTP)."),
        host: str = typer.Option("127.0.0.1", "--host",
                                 help="HTTP bind address; anything but loopback needs --token-file."),
        port: int = typer.Option(8766, "--port", min=1, max=65535, help="HTTP port."),
        token_file: Optional[Path] = typer.Option(None, "--token-file",
                                                  help="File holding a bearer token (>= 16 characters) every HTTP "
                                                       "request must send as `Authorization: Bearer TOKEN`. HTTP "
                                                       "always needs one, on loopback too: without this file a "
                                                       "token is made and printed at start."),
        config: Optional[str] = typer.Option(None, "--config",
                                             help="Loop config (path or name) whose kernel limits run_python uses "
                                                  "(default: loop.yaml on the config path)."),
        timeout: Optional[float] = typer.Option(None, "--timeout", min=0.1,
                                                help="run_python wall-time limit per cell in seconds (default: the "
                                                     "loop's cell_timeout)."),
        memory: Optional[str] = typer.Option(None, "--memory", help="run_python kernel memory cap, e.g. 512M, 4G "
                                                                    "(default: the loop's memory_limit)."),
        max_output_chars: Optional[int] = typer.Option(None, "--max-output-chars", min=200,
                                                       help="run_python exposure cap (the full output is logged)."),
        check: bool = typer.Option(False, "--check", help="Print the resolved configuration and whether run_python "
                                                          "is available (the kernel sandbox), then exit."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP + " (with --check)"),
    ) -> None:
        """Serve the log to MCP clients: log / search / expand / payload / headlines / run_python."""
        import importlib

        try:
            importlib.import_module("mcp.server.mcpserver")  # the v2 SDK (v1 had FastMCP instead)
        except ImportError:
            fail("scroll mcp needs the MCP SDK (mcp >= 2.3): pip install -e '.[mcp]'", as_json=as_json)
        from scroll.surfaces.mcp_service import McpConfig, McpError, sandbox_unavailable

        scope = None
        if sessions is not None:
            scope = list(dict.fromkeys(s.strip() for s in sessions.split(",") if s.strip()))
            if not scope:
                fail("--sessions needs at least one session name (a,b,c)", as_json=as_json)
        if memory is not None:
            from scroll.kernel.sandbox import parse_size

            try:
                if parse_size(memory) < 64 << 20:
                    fail(f"--memory {memory!r}: at least 64M (a Python kernel does not start in less)",
                         as_json=as_json)
            except ValueError:
                fail(f"--memory {memory!r}: expected a size like 512M or 4G", as_json=as_json)
        path = db_path(db)
        if path.is_dir():
            fail(f"{path} is a directory, not an event log file", as_json=as_json)
        try:
            cfg = McpConfig.from_loop(path, session, loop_config=config, sessions=scope, cell_timeout=timeout,
                                      memory_limit=memory, max_output_chars=max_output_chars)
        except (McpError, ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        token = _token(token_file, as_json)
        from scroll.surfaces.bind import BindRefused
        from scroll.surfaces.mcp_server import check_bind

        if transport is Transport.http:
            try:
                check_bind(host, token)
            except BindRefused as e:
                fail(str(e), code=2, as_json=as_json)
        if check:
            why = sandbox_unavailable()
            info = {"db": str(path), "session": session, "sessions": scope, "transport": transport.value,
                    "host": host if transport is Transport.http else None,
                    "port": port if transport is Transport.http else None, "token": token is not None,
                    "cell_timeout": cfg.cell_timeout, "memory_limit": cfg.memory_limit,
                    "max_output_chars": cfg.max_output_chars, "run_python": why is None, "run_python_reason": why}
            if as_json:
                emit_json(info)
            else:
                for k, v in info.items():
                    typer.echo(f"{k}: {v}")
            return
        _serve(cfg, transport, host, port, token, as_json)


def _serve(cfg, transport: Transport, host: str, port: int, token: str | None, as_json: bool) -> None:
    import sqlite3

    from scroll.events import LogError
    from scroll.surfaces.mcp_server import build_server, serve_http, serve_stdio
    from scroll.surfaces.mcp_service import McpService

    try:
        svc = McpService(cfg)
    except (LogError, sqlite3.DatabaseError, OSError) as e:
        fail(str(e), as_json=as_json)
    import signal

    def stop(signum, frame):  # SIGTERM (a service manager, a client) = a clean stop: close below
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    try:
        server = build_server(svc)
        if transport is Transport.http:
            serve_http(server, host=host, port=port, token=token)
        else:
            serve_stdio(server)
    except KeyboardInterrupt:
        pass
    finally:
        svc.close()
