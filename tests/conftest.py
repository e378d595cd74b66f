"""Shared fixtures: every test gets its own data dir; nothing touches ./var."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SCROLL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SCROLL_DB", raising=False)


@pytest.fixture
def log(tmp_path):
    from scroll import EventLog

    with EventLog(tmp_path / "scroll.db") as lg:
        yield lg


from tests.fixtures_model import smollm2_dir, smollm2_server, tiny_model_dir, tiny_server  # noqa: E402,F401  (session fixtures)
