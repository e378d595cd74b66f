"""Every environment variable Scroll reads, in one place. Nothing happens at import time."""
from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """Where commands put their files when no path is given (SCROLL_HOME, default ./var)."""
    return Path(os.environ.get("SCROLL_HOME", "var")).resolve()


def default_db() -> Path:
    """The event log used when `--db` is not given (SCROLL_DB, default $SCROLL_HOME/scroll.db)."""
    value = os.environ.get("SCROLL_DB")
    return Path(value).resolve() if value else data_dir() / "scroll.db"
