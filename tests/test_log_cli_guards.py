"""Bad input to the log commands: one clear error (exit != 0, no traceback), and nothing
written - no database left behind by a failed import, no foreign file touched by a
read-only command. Plus `search --origin`, `verify` and `migrate`."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from scroll.events import EventLog

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _failed_cleanly(r, code: int | None = None):
    assert r.exit_code != 0, r.output
    assert isinstance(r.exception, SystemExit), f"raised {r.exception!r}\n{r.output}"
    if code is not None:
        assert r.exit_code == code, r.output
    assert "Traceback" not in r.output


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _log_with(tmp_path, name="x.db", rows=None):
    db = tmp_path / name
    with EventLog(db) as log:
        for r in rows or [{"session": "s1", "role": "user", "text": "my beagle is called Rocket"},
                          {"session": "s1", "role": "assistant", "text": "Rocket the beagle, noted"}]:
            log.append(**r)
    return db


def _foreign_sqlite(tmp_path):
    p = tmp_path / "foreign.sqlite"
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE t(x)")
    c.execute("INSERT INTO t VALUES ('keep me')")
    c.commit()
    c.close()
    return p


# ----------------------------------------------------------------- import
def test_import_jsonl_whose_first_line_is_over_4k(tmp_path):
    f = tmp_path / "ev.jsonl"
    f.write_text(json.dumps({"session": "a", "role": "u", "text": "long " * 2000}) + "\n"
                 + json.dumps({"session": "a", "role": "v", "text": "short"}) + "\n")
    r = _run("import", f, "--db", tmp_path / "x.db", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["imported"] == 2 and json.loads(r.stdout)["format"] == "jsonl"


_OK = '{"session":"s","role":"u","text":"fine"}\n'
BAD_FILES = {
    "deep-array": ("[" * 100_000 + "]" * 100_000, ":1: nested deeper than"),
    "deep-object": ('{"a":' * 100_000 + "1" + "}" * 100_000, ":1: nested deeper than"),
    "deep-meta": (_OK + '{"session":"s","role":"u","text":"x","meta":' + '{"a":' * 100_000 + "1" + "}" * 100_001,
                  ":2: nested deeper than"),
    "huge-int-lme": ('[{"question_id": ' + "1" * 5000 + ', "haystack_sessions": []}]', ":1: an integer with 5000 digits"),
    "nan-meta": (_OK + '{"session":"s","role":"u","text":"x","meta":{"v":NaN}}\n', ":2: NaN is not allowed"),
    "inf-meta": (_OK + '{"session":"s","role":"u","text":"x","meta":{"v":1e999}}\n', ":2: number 1e999 is out of range"),
    "infinity-lme": ('[{"question_id": "q", "answer": Infinity, "haystack_sessions": [[{"role": "user", '
                     '"content": "hi"}]]}]', ":1: Infinity is not allowed"),
    "lone-surrogate": (_OK + '{"session":"s","role":"u","text":"\\ud800"}\n', ":2: field 'text' is not valid Unicode"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_import_one_error_and_no_database_created(tmp_path, name):
    content, needle = BAD_FILES[name]
    f = tmp_path / "bad.json"
    f.write_text(content)
    out = tmp_path / "out"
    out.mkdir()
    r = _run("import", f, "--db", out / "new.db")
    _failed_cleanly(r, 1)
    assert f"{f}{needle}" in r.output.replace("\n", ""), r.output
    assert os.listdir(out) == []  # no db, no -wal, no index, no labels


def test_bad_import_leaves_an_existing_log_byte_identical(tmp_path):
    db = _log_with(tmp_path)
    before = _sha(db)
    f = tmp_path / "bad.jsonl"
    f.write_text(BAD_FILES["nan-meta"][0])
    _failed_cleanly(_run("import", f, "--db", db), 1)
    assert _sha(db) == before


def test_failed_append_removes_the_new_database(tmp_path, monkeypatch):
    def boom(self, rows):
        list(rows)
        raise ValueError("disk says no")

    monkeypatch.setattr(EventLog, "append_many", boom)
    f = tmp_path / "ok.jsonl"
    f.write_text(_OK)
    out = tmp_path / "out"
    out.mkdir()
    r = _run("import", f, "--db", out / "new.db")
    _failed_cleanly(r, 1)
    assert "disk says no" in r.output and os.listdir(out) == []


# ------------------------------------------------ --db that is not a log
def _not_a_log(tmp_path, what):
    if what == "directory":
        d = tmp_path / "adir"
        d.mkdir()
        return d
    if what == "not-sqlite":
        p = tmp_path / "notes.txt"
        p.write_bytes(b"this is not a database\n" * 100)
        return p
    return _foreign_sqlite(tmp_path)


COMMANDS = {"import": None, "search": ["search", "beagle"], "expand": ["expand", "1"], "stats": ["stats"],
            "verify": ["verify"]}


@pytest.mark.parametrize("what", ["directory", "not-sqlite", "foreign-sqlite"])
@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_db_that_is_not_an_event_log(tmp_path, what, cmd):
    target = _not_a_log(tmp_path, what)
    if cmd == "import":
        f = tmp_path / "ok.jsonl"
        f.write_text(_OK)
        args = ["import", f]
    else:
        args = COMMANDS[cmd]
    files_before = sorted(os.listdir(tmp_path))
    sha = None if target.is_dir() else _sha(target)
    r = _run(*args, "--db", target)
    _failed_cleanly(r)
    assert str(target) in r.output.replace("\n", ""), r.output
    if what == "directory":
        assert "directory" in r.output
    else:
        assert _sha(target) == sha  # byte-identical: never created, migrated or written
    assert sorted(os.listdir(tmp_path)) == files_before


@pytest.mark.parametrize("args", [["search", "x"], ["expand", "1"], ["stats"], ["verify"]])
def test_read_only_commands_never_create_a_log(tmp_path, args):
    r = _run(*args, "--db", tmp_path / "nope.db")
    _failed_cleanly(r, 1)
    assert "no event log" in r.output and os.listdir(tmp_path) == []


def test_read_only_commands_leave_the_database_file_alone(tmp_path):
    db = _log_with(tmp_path)
    before = _sha(db)
    for args in (["search", "beagle"], ["expand", "1", "2"], ["stats"], ["verify"]):
        r = _run(*args, "--db", db, "--json")
        assert r.exit_code == 0, r.output
    assert _sha(db) == before


# ----------------------------------------------------------- arguments
@pytest.mark.parametrize("args,needle", [
    (["expand", str(2**63)], "Invalid value for 'seq'"),
    (["expand", str(10**30)], "Invalid value for 'seq'"),
    (["expand", "--", "-1"], "Invalid value for 'seq'"),
    (["expand", "--", "-5", "-1"], "Invalid value for 'seq'"),
    (["expand", "1", str(2**63)], "Invalid value for 'hi'"),
    (["expand", "5", "2"], "Invalid value for 'hi'"),
    (["search", "beagle", "--k", "0"], "--k"),
    (["search", "beagle", "--k", "-3"], "--k"),
    (["search", "beagle", "--k", "1001"], "--k"),
    (["search", "beagle", "--since", "not-a-date"], "--since"),
    (["search", "beagle", "--until", "2023-13-45"], "--until"),
    (["search", "beagle", "--origin", "martians"], "--origin"),
])
def test_argument_errors(tmp_path, args, needle):
    db = _log_with(tmp_path)
    r = _run(*args, "--db", db)
    _failed_cleanly(r, 2)
    assert needle in r.output, r.output


def test_search_query_limits_come_from_the_capability(tmp_path):
    db = _log_with(tmp_path)
    many = " ".join(f"w{i}" for i in range(300))
    r = _run("search", many, "--db", db, "--json")
    _failed_cleanly(r, 1)
    assert "distinct terms" in json.loads(r.stdout)["error"]


# ------------------------------------------------------------- origin
def test_search_origin_scope(tmp_path):
    db = tmp_path / "o.db"
    with EventLog(db) as log:
        log.append("s1", "user", "the beagle is called Rocket")
        log.append("loop", "assistant", "search beagle name", kind="code", origin="agent")
    r = _run("search", "beagle", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    hits = json.loads(r.stdout)
    assert [(h["seq"], h["origin"]) for h in hits] == [(1, "history")]
    hits = json.loads(_run("search", "beagle", "--db", db, "--origin", "agent", "--json").stdout)
    assert [(h["seq"], h["origin"]) for h in hits] == [(2, "agent")]
    hits = json.loads(_run("search", "beagle", "--db", db, "--origin", "*", "--json").stdout)
    assert sorted(h["seq"] for h in hits) == [1, 2]
    hits = json.loads(_run("search", "beagle", "--db", db, "--session", "loop", "--origin", "*", "--json").stdout)
    assert [h["seq"] for h in hits] == [2]
    r = _run("search", "beagle", "--db", db)
    assert r.exit_code == 0 and "history" in r.output
    assert "history" in _run("search", "--help").output


# -------------------------------------------------------- verify/migrate
def test_verify_ok_and_broken(tmp_path):
    db = _log_with(tmp_path, rows=[{"session": "s", "role": "u", "text": f"event {i}"} for i in range(1, 5)])
    r = _run("verify", "--db", db, "--json")
    assert r.exit_code == 0, r.output
    ok = json.loads(r.stdout)
    assert ok["ok"] is True and ok["events"] == 4 and ok["first_bad_seq"] is None and ok["head_hash"]
    assert "ok" in _run("verify", "--db", db).output
    # someone with write access to the file drops the trigger, rewrites seq 3, restores the trigger
    c = sqlite3.connect(db)
    sql = c.execute("SELECT sql FROM sqlite_master WHERE name='events_no_update'").fetchone()[0]
    c.execute("DROP TRIGGER events_no_update")
    c.execute("UPDATE events SET text='rewritten' WHERE seq=3")
    c.execute(sql)
    c.commit()
    c.close()
    r = _run("verify", "--db", db, "--json")
    _failed_cleanly(r, 1)
    bad = json.loads(r.stdout)
    assert bad["ok"] is False and bad["first_bad_seq"] == 3
    r = _run("verify", "--db", db)
    _failed_cleanly(r, 1)
    assert "first bad seq 3" in r.output


def test_migrate_copies_and_refuses_an_existing_target(tmp_path):
    old = _log_with(tmp_path, "old.db")
    sha = _sha(old)
    new = tmp_path / "new.db"
    r = _run("migrate", old, new, "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["events"] == 2 and out["ok"] is True
    assert _sha(old) == sha
    with EventLog(new, readonly=True) as log:
        assert [e.text for e in log.expand(1, 2)] == ["my beagle is called Rocket", "Rocket the beagle, noted"]
    new_sha = _sha(new)
    r = _run("migrate", old, new)
    _failed_cleanly(r, 1)
    assert "already exists" in r.output and _sha(new) == new_sha
    r = _run("migrate", tmp_path / "missing.db", tmp_path / "n2.db")
    _failed_cleanly(r, 1)
    assert "no event log" in r.output and not (tmp_path / "n2.db").exists()
    foreign = _foreign_sqlite(tmp_path)
    r = _run("migrate", foreign, tmp_path / "n3.db")
    _failed_cleanly(r, 1)
    assert not (tmp_path / "n3.db").exists()


def _v1_log(path):
    """A schema-v1 log (before origins and the hash chain), as an old Scroll wrote it."""
    from scroll.migrations import SCHEMA_V1

    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL)")
    raw.executescript(SCHEMA_V1)
    raw.execute("INSERT INTO log_info VALUES ('log_id', 'oldlog0001'), ('created', '2024-01-01')")
    raw.execute("INSERT INTO schema_migrations VALUES (1, 'events, append-only triggers, log identity', 'x')")
    for i, (kind, role) in enumerate([("message", "user"), ("code", "assistant")], 1):
        raw.execute("INSERT INTO events(session, time, kind, role, text, meta, payload, tokens) VALUES "
                    "('s', ?, ?, ?, ?, '{}', NULL, 3)", (f"2024-01-0{i}", kind, role, f"old {kind} apple"))
    raw.commit()
    raw.close()
    return path


def test_v1_log_import_refused_verify_fails_migrate_copies(tmp_path):
    old = _v1_log(tmp_path / "old.db")
    sha = _sha(old)
    f = tmp_path / "ok.jsonl"
    f.write_text(_OK)
    r = _run("import", f, "--db", old)
    _failed_cleanly(r, 1)
    assert "scroll migrate" in r.output and _sha(old) == sha
    r = _run("verify", "--db", old, "--json")
    _failed_cleanly(r, 1)
    assert "migrate" in json.loads(r.stdout)["reason"]
    assert _run("search", "apple", "--db", old, "--json").exit_code == 0  # still readable
    r = _run("migrate", old, tmp_path / "new.db", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["events"] == 2 and out["ok"] and out["origins"]["agent"] == 1 and _sha(old) == sha
    hits = json.loads(_run("search", "apple", "--db", tmp_path / "new.db", "--origin", "agent", "--json").stdout)
    assert [(h["seq"], h["origin"]) for h in hits] == [(2, "agent")]
    assert _run("verify", "--db", tmp_path / "new.db").exit_code == 0
