"""Bad input to the agent, kernel, serve and bench commands: one clear line, exit 1 (or a
usage error, exit 2), and nothing written. The log commands have their own guards
(tests/test_log_cli_guards.py)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scroll.cli import app

runner = CliRunner()
URL = "http://127.0.0.1:9/v1"  # never reached: every case fails before a model call


def _bad_dbs(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "bad"
    d.mkdir()
    (d / "a-directory.db").mkdir()
    (d / "text.db").write_text("not a database\n")
    con = sqlite3.connect(d / "foreign.db")
    con.execute("CREATE TABLE notes (x TEXT)")
    con.execute("INSERT INTO notes VALUES ('mine')")
    con.commit()
    con.close()
    return {"directory": d / "a-directory.db", "non-sqlite": d / "text.db", "foreign": d / "foreign.db"}


def _snapshot(d: Path) -> dict[str, bytes | None]:
    return {p.name: (p.read_bytes() if p.is_file() else None) for p in sorted(d.iterdir())}


COMMANDS = {
    "run": lambda db: ["run", "hi", "--db", str(db), "--model-url", URL],
    "chat": lambda db: ["chat", "--db", str(db), "--model-url", URL],
    "kernel run": lambda db: ["kernel", "run", "print(1)", "--db", str(db), "-s", "a", "--no-sandbox"],
    "kernel export": lambda db: ["kernel", "export", str(db.parent.parent / "out.ipynb"), "--db", str(db), "-s", "a"],
    "demo": lambda db: ["demo", "--db", str(db), "--tokens", "20000"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", ["directory", "non-sqlite", "foreign"])
def test_a_db_that_is_not_a_scroll_log_is_one_line_and_untouched(tmp_path, command, kind):
    bad = _bad_dbs(tmp_path)
    before = _snapshot(bad[kind].parent)
    r = runner.invoke(app, COMMANDS[command](bad[kind]), input="hello\n")
    assert r.exit_code == 1, r.output
    assert r.output.startswith("error: ") and r.output.count("\n") == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert _snapshot(bad[kind].parent) == before  # nothing created, migrated or deleted
    assert not (tmp_path / "out.ipynb").exists()


@pytest.mark.parametrize("command", ["run", "kernel run", "kernel export"])
def test_json_errors_are_json(tmp_path, command):
    bad = _bad_dbs(tmp_path)
    r = runner.invoke(app, COMMANDS[command](bad["foreign"]) + ["--json"])
    assert r.exit_code == 1
    assert "not a Scroll event log" in json.loads(r.stdout)["error"]


def test_kernel_export_needs_an_existing_log_and_creates_none(tmp_path):
    db = tmp_path / "absent.db"
    r = runner.invoke(app, ["kernel", "export", str(tmp_path / "o.ipynb"), "--db", str(db), "-s", "a"])
    assert r.exit_code == 1 and "no event log" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_kernel_export_opens_the_log_read_only(tmp_path, monkeypatch):
    from scroll import EventLog

    db = tmp_path / "k.db"
    with EventLog(db) as lg:
        lg.append("a", "user", "hello")
    seen = {}
    real = EventLog.__init__

    def spy(self, *a, **kw):
        seen.update(kw)
        real(self, *a, **kw)

    monkeypatch.setattr(EventLog, "__init__", spy)
    r = runner.invoke(app, ["kernel", "export", str(tmp_path / "o.ipynb"), "--db", str(db), "-s", "nope"])
    assert seen.get("readonly") is True
    assert r.exit_code == 2 and r.output.startswith("error: ")  # a session with no cells
    r = runner.invoke(app, ["kernel", "export", str(tmp_path), "--db", str(db), "-s", "a"])
    assert r.exit_code == 1 and "is a directory" in r.output


@pytest.mark.parametrize("args, msg", [
    (["--memory", "lots"], "--memory"),
    (["--memory", "1M"], "at least 64M"),
    (["--timeout", "0"], "--timeout"),
    (["--max-output-chars", "5"], "--max-output-chars"),
    (["-s", " "], "--session must not be empty"),
])
def test_kernel_run_bad_options(tmp_path, args, msg):
    base = ["kernel", "run", "print(1)", "--db", str(tmp_path / "k.db"), "-s", "a", "--no-sandbox"]
    r = runner.invoke(app, base + args)
    assert r.exit_code in (1, 2) and msg in r.output, r.output
    assert not (tmp_path / "k.db").exists() or r.exit_code == 1


@pytest.mark.parametrize("args, msg", [
    (["run", "x", "--max-steps", "0"], "--max-steps"),
    (["run", "x", "--session", ""], "--session must not be empty"),
    (["run", "x", "--sessions", "a", "--all-sessions"], "exclude each other"),
    (["run", "x", "--llm", "no-such-preset"], "no such file or preset"),
    (["run", "x", "--loop-config", "/nonexistent/loop.yaml"], "loop.yaml"),
    (["chat", "--session", " "], "--session must not be empty"),
    (["demo", "--tokens", "5"], "--tokens"),
    (["demo", "--seed", "-1"], "--seed"),
    (["serve", "up", "tiny", "--timeout", "-3", "--dry-run"], "--timeout"),
    (["serve", "up", "tiny", "--port", "70000", "--dry-run"], "port must be 1..65535"),
    (["serve", "down", "tiny", "--grace", "-1"], "--grace"),
    (["bench", "search", "--queries", "0"], "--queries"),
    (["bench", "search", "--sizes", "ten"], "sizes must be numbers"),
    (["bench", "search", "--systems", "ours,elastic"], "systems must be"),
    (["bench", "search", "--durability", "maybe"], "full or normal"),
    (["bench", "recall", "--words", "-5"], "--words"),
    (["bench", "tune", "--words", "0"], "--words"),
])
def test_bad_numbers_and_names_are_clear(tmp_path, args, msg):
    if args[0] in ("run", "chat"):
        args = args + ["--db", str(tmp_path / "x.db"), "--model-url", URL]
    r = runner.invoke(app, args)
    assert r.exit_code in (1, 2), r.output
    assert msg in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert not (tmp_path / "x.db").exists()
