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


def test_version_and_import_progress_phases(tmp_path, monkeypatch):
    """Issue #30 item 16: `scroll --version`; the import's indexing phase is its own progress task with
    no total (its elapsed time runs while the index is built, instead of a finished bar's frozen clock)."""
    import json as _json

    import rich.progress
    from typer.testing import CliRunner

    from scroll import __version__
    from scroll.cli import app

    r = CliRunner().invoke(app, ["--version"])
    assert r.exit_code == 0 and r.output.strip() == f"scroll {__version__}"
    added = []
    real = rich.progress.Progress.add_task

    def add_task(self, description, *a, total=100.0, **kw):
        added.append((description, total))
        return real(self, description, *a, total=total, **kw)

    monkeypatch.setattr(rich.progress.Progress, "add_task", add_task)
    f = tmp_path / "e.jsonl"
    f.write_text("".join(_json.dumps({"session": "s", "role": "user", "text": f"line {i}"}) + "\n" for i in range(5)))
    r = CliRunner().invoke(app, ["import", str(f), "--db", str(tmp_path / "h.db")])
    assert r.exit_code == 0, r.output
    assert added == [("importing", 5), ("indexing (BM25)", None)]


def test_a_damaged_database_fails_verify_refuses_writes_and_stats_is_one_line(tmp_path):
    """Issue #30 item 8: a corrupt index page fails `scroll verify` (the hash chain alone reads intact),
    `scroll import` into the damaged file is refused with the file unchanged, `scroll stats` is an
    error line, not a traceback."""
    import hashlib
    import json as _json
    import sqlite3

    from typer.testing import CliRunner

    from scroll.cli import app
    from scroll.events import EventLog

    db = tmp_path / "d.db"
    with EventLog(db) as lg:
        lg.append_many([{"session": f"s{i % 40}", "role": "user", "text": f"event {i} about harbours"}
                        for i in range(3000)])
        assert lg.verify()["ok"]
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE type='index' AND name='events_by_session'").fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    raw = bytearray(db.read_bytes())
    raw[(root - 1) * size + 8:root * size] = b"\xff" * (size - 8)   # one index page overwritten
    db.write_bytes(bytes(raw))
    run = CliRunner().invoke
    r = run(app, ["verify", "--db", str(db), "--json"])
    out = _json.loads(r.stdout)
    assert r.exit_code == 1 and not out["ok"] and "SQLite integrity check failed" in out["reason"], r.output
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    f = tmp_path / "one.jsonl"
    f.write_text('{"session": "new", "role": "user", "text": "hi"}\n')
    r = run(app, ["import", str(f), "--db", str(db)])
    assert r.exit_code == 1 and "integrity check failed" in r.output and "nothing was written" in r.output
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    r = run(app, ["stats", "--db", str(db)])
    assert not isinstance(r.exception, Exception), r.exception          # an error line (SystemExit), no traceback
    assert r.exit_code == 0 or "database file is damaged" in r.output, r.output
