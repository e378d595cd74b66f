"""The `scroll` command: one root typer app, one sub-module per area.

Each area module exposes `register(app)`; heavy imports stay inside the commands.
"""
from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="scroll",
    help="Scroll: lossless, programmatic context management for long-horizon LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Area modules, in help order. Each defines register(app: typer.Typer) -> None.
_AREAS = ["log_cmds", "kernel_cmds", "serve_cmds", "models_cmds", "bench_cmds", "agent_cmds", "distill_cmds",
          "tasks_cmds", "mcp_cmds", "viewer_cmds",
          "proxy_cmds"]


def _register_all() -> None:
    for name in _AREAS:
        mod = importlib.import_module(f"scroll.cli.{name}")
        mod.register(app)


def _version(value: bool) -> None:
    if value:
        from scroll import __version__

        typer.echo(f"scroll {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Scroll: lossless, programmatic context management for long-horizon LLM agents."""


_register_all()


def main() -> None:  # console-script entry point
    app()
