"""The viewer's settings (no web imports here: the CLI builds one before starlette loads)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ViewerConfig:
    db: Path
    results: Path | None = None                   # the runs page's folder (None: none)
    token: str | None = None                      # every request must carry it (access.TokenGate)
    allowed_hosts: tuple[str, ...] | None = None  # Host header values accepted (None: any)
    page_events: int = 400                        # events per session / range page
    payload_page: int = 64 << 10                  # bytes per payload page

    def __post_init__(self) -> None:
        if self.page_events < 1 or self.payload_page < 1:
            raise ValueError("page_events and payload_page must be >= 1")
