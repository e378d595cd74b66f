"""CLI commands for this area (filled by its issue)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    return None
