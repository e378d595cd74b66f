"""Tamper resistance, the hash chain, read-only opens and old logs (issue 8).

Each test reproduces a way the log could be forged, damaged or written by accident,
and checks that the schema refuses it, that an open notices it, or that `verify` names it.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from scroll import EventLog
from scroll.events import LogError
from scroll.log_migrate import copy_log
from scroll.migrations import AGENT_KINDS, LATEST, SCHEMA_V1
from scroll.origin import Origin

ROOT = Path(__file__).resolve().parents[1]


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _make_log(path: Path, n: int = 5) -> list[int]:
    with EventLog(path) as log:
        return [log.append(session="s", role="user", text=f"event number {i} alpha") for i in range(n)]


# ------------------------------------------------------------------ triggers
def test_insert_or_replace_of_seq_1_is_refused(tmp_path):
    path = tmp_path / "r.db"
    _make_log(path, 3)
    raw = sqlite3.connect(path)
    cols = [r[1] for r in raw.execute("PRAGMA table_info(events)")]
    # a forged row that even links to the head of the chain (v2): only the seq is wrong
    head = "(SELECT hash FROM events ORDER BY seq DESC LIMIT 1)"
    others = ", ".join(head if c == "prev_hash" else c for c in cols if c != "seq")
    # REPLACE deletes the old row without firing DELETE triggers: the INSERT trigger must stop it
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute(f"INSERT OR REPLACE INTO events({', '.join(cols)}) SELECT 1, {others} FROM events WHERE seq = 3")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        raw.execute(f"REPLACE INTO events({', '.join(cols)}) SELECT 2, {others} FROM events WHERE seq = 3")
    raw.close()
    with EventLog(path) as log:
        assert log.expand(1).text == "event number 0 alpha"
        assert log.verify()["ok"]


def test_inserts_that_do_not_extend_the_chain_are_refused(tmp_path):
    path = tmp_path / "c.db"
    _make_log(path, 3)
    raw = sqlite3.connect(path)
    head = raw.execute("SELECT hash FROM events WHERE seq = 3").fetchone()[0]
    ins = ("INSERT INTO events(seq, session, time, kind, role, text, meta, payload, tokens, origin, prev_hash, hash) "
           "VALUES (?, 's', 't', 'message', 'u', 'x', '{}', NULL, 1, 'history', ?, 'h')")
    for seq, prev in ((2, head), (None, head), (4, "0" * 64)):
        with pytest.raises(sqlite3.DatabaseError, match="append-only|hash chain"):
            raw.execute(ins, (seq, prev))
    with pytest.raises(sqlite3.DatabaseError, match="CHECK"):
        raw.execute(ins.replace("'history'", "'admin'"), (4, head))
    raw.execute(ins, (4, head))  # extends the chain: SQL allows it, verify catches the bad hash
    raw.commit()
    raw.close()
    with EventLog(path) as log:
        result = log.verify()
    assert not result["ok"] and result["first_bad_seq"] == 4 and "hash" in result["reason"]


def test_log_info_cannot_be_forged(tmp_path):
    path = tmp_path / "i.db"
    _make_log(path, 1)
    with EventLog(path) as log:
        log_id = log.log_id
    raw = sqlite3.connect(path)
    for sql in ("INSERT OR REPLACE INTO log_info(key, value) VALUES ('log_id', 'forged')",
                "REPLACE INTO log_info(key, value) VALUES ('genesis', 'forged')",
                "INSERT INTO log_info(key, value) VALUES ('log_id', 'forged')",
                "UPDATE log_info SET value = 'forged'", "DELETE FROM log_info",
                "DELETE FROM schema_migrations", "UPDATE schema_migrations SET version = 1"):
        with pytest.raises(sqlite3.DatabaseError, match="write-once|UNIQUE"):
            raw.execute(sql)
    raw.close()
    with EventLog(path) as log:
        assert log.log_id == log_id and log.verify()["ok"]


def test_dropped_trigger_is_detected_on_open(tmp_path, caplog):
    path = tmp_path / "d.db"
    _make_log(path, 2)
    raw = sqlite3.connect(path)
    raw.execute("DROP TRIGGER events_no_update")
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(LogError, match="tampered.*events_no_update"):
        EventLog(path)
    assert path.read_bytes() == before
    with caplog.at_level(logging.WARNING, logger="scroll.events"):
        with EventLog(path, readonly=True) as log:  # reading still works, and says so
            assert log.tampered and "events_no_update" in log.tampered
            assert [h.seq for h in log.search("alpha")] == [2, 1]
            result = log.verify()
            with pytest.raises(LogError, match="read-only"):
                log.append(session="s", role="u", text="x")
    assert "tampered" in caplog.text
    assert not result["ok"] and "events_no_update" in result["reason"] and result["first_bad_seq"] is None


def test_an_added_trigger_is_also_tampering(tmp_path):
    path = tmp_path / "t.db"
    _make_log(path, 1)
    raw = sqlite3.connect(path)
    raw.execute("CREATE TRIGGER sneaky AFTER INSERT ON events BEGIN SELECT 1; END")
    raw.commit()
    raw.close()
    with pytest.raises(LogError, match="tampered.*sneaky"):
        EventLog(path)


# ------------------------------------------------------------------ verify
def _rewrite_row_py(path: Path, seq: int, text: str) -> None:
    """What someone with write access does: drop the trigger, rewrite, put it back."""
    raw = sqlite3.connect(path)
    sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'events_no_update'").fetchone()[0]
    raw.execute("DROP TRIGGER events_no_update")
    raw.execute("UPDATE events SET text = ? WHERE seq = ?", (text, seq))
    raw.execute(sql)
    raw.commit()
    raw.close()


def test_verify_names_a_rewritten_row(tmp_path):
    path = tmp_path / "v.db"
    _make_log(path, 6)
    with EventLog(path) as log:
        good = log.verify()
    assert good == {"ok": True, "events": 6, "first_bad_seq": None, "reason": None, "head_hash": good["head_hash"]}
    _rewrite_row_py(path, 3, "I never said that")
    with EventLog(path) as log:  # triggers are back: the open passes; the chain does not
        assert log.expand(3).text == "I never said that"
        bad = log.verify()
    assert not bad["ok"] and bad["first_bad_seq"] == 3 and "rewritten" in bad["reason"] and bad["events"] == 6


def test_verify_head_hash_detects_a_rehashed_chain(tmp_path):
    """Rewriting a row AND recomputing every later hash passes the in-file checks; the head
    hash kept elsewhere does not match any more."""
    from scroll.migrations import event_hash

    path = tmp_path / "h.db"
    _make_log(path, 4)
    with EventLog(path) as log:
        receipt = log.verify()["head_hash"]
    raw = sqlite3.connect(path)
    trig = {n: s for n, s in raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")}
    for name in trig:
        raw.execute(f"DROP TRIGGER {name}")
    raw.execute("UPDATE events SET text = 'forged' WHERE seq = 2")
    prev = raw.execute("SELECT prev_hash FROM events WHERE seq = 1").fetchone()[0]
    for row in raw.execute("SELECT seq, session, time, kind, role, origin, text, meta, payload, tokens "
                           "FROM events ORDER BY seq").fetchall():
        h = event_hash(*row, prev)
        raw.execute("UPDATE events SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, h, row[0]))
        prev = h
    for sql in trig.values():
        raw.execute(sql)
    raw.commit()
    raw.close()
    with EventLog(path) as log:
        result = log.verify()
    assert result["ok"] and result["head_hash"] != receipt


def test_verify_detects_a_rewrite_made_with_the_sqlite3_cli(tmp_path):
    cli = shutil.which("sqlite3")
    if cli is None:
        pytest.skip("the sqlite3 command-line tool is not installed (apt-get install sqlite3)")
    path = tmp_path / "cli.db"
    _make_log(path, 5)
    script = ("DROP TRIGGER events_no_update;\n"
              "UPDATE events SET text = 'edited with the CLI' WHERE seq = 4;\n")
    subprocess.run([cli, str(path)], input=script, text=True, check=True, capture_output=True)
    with pytest.raises(LogError, match="tampered"):
        EventLog(path)
    with EventLog(path, readonly=True) as log:
        result = log.verify()
    assert result["first_bad_seq"] == 4 and not result["ok"]


def test_verify_checks_payload_digests(tmp_path):
    path = tmp_path / "p.db"
    with EventLog(path, inline_max=100) as log:
        log.append(session="s", role="u", text="small")
        seq = log.append(session="s", role="tool", text="big payload " * 100)
        handle = log.expand(seq).payload
        p = log.payloads.path(handle)
        os.chmod(p, 0o644)
        p.write_bytes(p.read_bytes().replace(b"big", b"BIG", 1))
        result = log.verify()
    assert not result["ok"] and result["first_bad_seq"] == seq and "payload" in result["reason"]


_APPENDER = r"""
import sys
from scroll import EventLog
log = EventLog(sys.argv[1])
for i in range(int(sys.argv[3])):
    log.append(session=sys.argv[2], role="user", text=f"{sys.argv[2]} line {i}", origin="agent" if i % 2 else "history")
log.close()
"""


def test_two_processes_appending_keep_one_valid_chain(tmp_path):
    path = tmp_path / "cc.db"
    EventLog(path).close()
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(path), name, "200"], cwd=ROOT)
             for name in ("a", "b")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    with EventLog(path) as log:
        result = log.verify()
        assert result["ok"] and result["events"] == 400, result
        assert [e.seq for e in log.events()] == list(range(1, 401))
        assert {s["session"]: s["events"] for s in log.sessions()} == {"a": 200, "b": 200}


# ------------------------------------------------------------------ opening
def test_readonly_open_of_a_missing_file_creates_nothing(tmp_path):
    with pytest.raises(LogError, match="no event log at"):
        EventLog(tmp_path / "nope" / "x.db", readonly=True)
    assert not (tmp_path / "nope").exists()
    with pytest.raises(LogError, match="is a directory"):
        EventLog(tmp_path, readonly=True)
    with pytest.raises(LogError, match="is a directory"):
        EventLog(tmp_path)


@pytest.mark.parametrize("journal", ["delete", "wal"])
def test_foreign_database_stays_byte_identical(tmp_path, journal):
    path = tmp_path / "foreign.db"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA journal_mode={journal}")
    raw.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
    raw.execute("INSERT INTO notes(body) VALUES ('mine, not Scroll''s')")
    raw.commit()
    raw.close()
    before = _files(tmp_path)
    for readonly in (True, False):
        with pytest.raises(LogError, match=r"not a Scroll event log \(foreign database\); nothing was written"):
            EventLog(path, readonly=readonly)
        assert _files(tmp_path) == before, "a refused open must not write anything"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign.db"]


def test_empty_sqlite_database_readonly_refused_writable_becomes_a_log(tmp_path):
    path = tmp_path / "empty.db"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 7")  # a SQLite file with a header and no tables
    raw.close()
    assert path.stat().st_size > 0
    with pytest.raises(LogError, match="empty SQLite database"):
        EventLog(path, readonly=True)
    with EventLog(path) as log:
        assert log.append(session="s", role="u", text="x") == 1


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "future.db"
    _make_log(path, 1)
    raw = sqlite3.connect(path)
    raw.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'from the future', 'x')",
                (LATEST + 1,))
    raw.commit()
    raw.close()
    before = path.read_bytes()
    for readonly in (False, True):
        with pytest.raises(LogError, match=rf"newer Scroll \(schema v{LATEST + 1} > v{LATEST}\); upgrade"):
            EventLog(path, readonly=readonly)
    assert path.read_bytes() == before


_RO_SEARCH = r"""
import json, os, sys
from scroll import EventLog
path = sys.argv[1]
log = EventLog(path, readonly=True)
out = {"hits": [h.seq for h in log.search("needle")], "n": log.max_seq(), "verify": log.verify()["ok"]}
try:
    log.append(session="s", role="u", text="x")
except ValueError as e:
    out["append_error"] = str(e)
log.close()
print(json.dumps(out))
"""


@pytest.mark.parametrize("with_index", [True, False])
def test_readonly_directory_and_0444_file_are_searchable(with_index):
    # a directory the unprivileged user can reach (pytest's tmp_path sits under a 0700 dir)
    d = Path(tempfile.mkdtemp(prefix="scroll-ro-"))
    try:
        os.chmod(d, 0o755)
        path = d / "log.db"
        with EventLog(path, index_options={"flush_docs": 10}) as log:
            for i in range(25):
                log.append(session=f"s{i}", role="user", text=f"line {i}" + (" needle" if i % 5 == 0 else ""))
            log.search("warm")  # builds <db>.index; close() flushes the tail
        if not with_index:
            shutil.rmtree(str(path) + ".index")
        for p in [d, *d.rglob("*")]:
            os.chmod(p, 0o555 if p.is_dir() else 0o444)
        before = {str(p): p.read_bytes() for p in d.rglob("*") if p.is_file()}
        cmd = [sys.executable, "-c", _RO_SEARCH, str(path)]
        if os.geteuid() == 0:  # root ignores file modes: run as an unprivileged user
            if shutil.which("setpriv") is None:
                pytest.skip("running as root without setpriv")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert sorted(result["hits"]) == [1, 6, 11, 16, 21] and result["n"] == 25 and result["verify"]
        assert "read-only" in result["append_error"]
        assert {str(p): p.read_bytes() for p in d.rglob("*") if p.is_file()} == before
        assert not (d / "log.db-wal").exists() and not (d / "log.db-shm").exists()
        assert (Path(str(path) + ".index").exists()) == with_index
    finally:
        for p in [d, *d.rglob("*")]:
            os.chmod(p, stat.S_IRWXU)
        shutil.rmtree(d)


def test_readonly_open_sees_a_live_writer_and_writes_nothing(tmp_path):
    path = tmp_path / "live.db"
    with EventLog(path) as writer:
        writer.append(session="s", role="u", text="first needle")
        with EventLog(path, readonly=True) as reader:
            assert [h.seq for h in reader.search("needle")] == [1]
            seq = writer.append(session="s", role="u", text="second needle")
            assert [h.seq for h in reader.search("needle")] == [seq, 1]  # fresh: the -wal is live
            assert reader.stats()["readonly"] is True


def test_readonly_search_does_not_create_the_index_dir(tmp_path):
    path = tmp_path / "noidx.db"
    _make_log(path, 3)
    assert not Path(str(path) + ".index").exists()
    with EventLog(path, readonly=True) as log:
        assert sorted(h.seq for h in log.search("alpha")) == [1, 2, 3]
    assert not Path(str(path) + ".index").exists()


# ------------------------------------------------------------------ old logs
def _make_v1_log(path: Path, payload_dir: Path | None = None) -> str:
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA journal_mode=WAL")
    raw.execute("CREATE TABLE IF NOT EXISTS schema_migrations ( version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL)")
    raw.executescript(SCHEMA_V1)
    raw.execute("INSERT INTO log_info VALUES ('log_id', 'oldlog0001'), ('created', '2024-01-01')")
    raw.execute("INSERT INTO schema_migrations VALUES (1, 'events, append-only triggers, log identity', 'x')")
    kinds = ["message", "task", "code", "output", "message", "note", "headline", "final", "tool_result"]
    for i, kind in enumerate(kinds, 1):
        raw.execute("INSERT INTO events(session, time, kind, role, text, meta, payload, tokens) VALUES "
                    "(?, ?, ?, 'user', ?, '{\"i\": 1}', NULL, 3)", ("s", f"2024-01-0{i}", kind, f"old {kind} {i} apple"))
    raw.commit()
    raw.close()
    return "oldlog0001"


def test_v1_log_opens_readonly_and_copy_log_migrates_it(tmp_path):
    old = tmp_path / "old.db"
    _make_v1_log(old)
    from scroll.payloads import PayloadStore

    handle = PayloadStore(str(old) + ".payloads").put("the whole big text " * 10)
    raw = sqlite3.connect(old)
    raw.execute("INSERT INTO events(session, time, kind, role, text, meta, payload, tokens) VALUES "
                "('t', '2024-02-01', 'tool_result', 'tool', 'the whole', '{}', ?, 50)", (handle,))
    raw.commit()
    raw.close()
    with EventLog(old) as log:
        assert log.readonly and log.schema_version == 1
        assert log.expand(1).origin is None
        # every event says "apple" once; 9's "tool_result" adds its identifier words (the parts
        # field): a longer document, so it ranks last; equal scores: newest first
        assert [h.seq for h in log.search("apple", k=3)] == [8, 7, 6]
        with pytest.raises(LogError, match="scroll migrate"):
            log.append(session="s", role="u", text="new")
        assert log.verify()["ok"] is False and "migrate" in log.verify()["reason"]
    assert not Path(str(old) + ".index").exists()

    new = tmp_path / "new.db"
    result = copy_log(old, new)
    assert result["events"] == 10 and result["source_log_id"] == "oldlog0001" and result["ok"]
    with EventLog(new) as log:
        info = log.info()
        assert info["migrated_from"] == "oldlog0001" and "agent" in info["migration_rule"]
        assert log.log_id != "oldlog0001"
        evs = list(log.events())
        assert [e.seq for e in evs] == list(range(1, 11))
        for e in evs:
            assert e.origin == (Origin.AGENT if e.kind in AGENT_KINDS else Origin.HISTORY), e
        assert evs[0].text == "old message 1 apple" and evs[0].meta == {"i": 1} and evs[0].time == "2024-01-01"
        assert evs[-1].text == "the whole big text " * 10
        assert log.verify()["ok"]
        assert log.append(session="s", role="u", text="after the move") == 11
    with pytest.raises(LogError, match="already exists"):
        copy_log(old, new)


# ------------------------------------------------------------------ faults
def test_index_failure_after_a_committed_append_does_not_escape(log, monkeypatch, caplog):
    from scroll.search import SearchIndex

    log.append(session="s", role="u", text="first apple")
    assert log.search("apple")
    calls = {"n": 0}
    real_add = SearchIndex.add

    def flaky_add(self, docs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("index exploded")
        return real_add(self, docs)

    monkeypatch.setattr(SearchIndex, "add", flaky_add)
    with caplog.at_level(logging.WARNING, logger="scroll.events"):
        seq = log.append(session="s", role="u", text="second apple")  # must not raise: it is committed
    assert seq == 2 and "index exploded" in caplog.text
    assert log.max_seq() == 2
    assert [h.seq for h in log.search("apple")] == [2, 1]
    monkeypatch.setattr(SearchIndex, "add", lambda self, docs: (_ for _ in ()).throw(OSError("disk gone")))
    assert log.append_many([{"session": "s", "role": "u", "text": "third apple"}]) == [3]
    monkeypatch.setattr(SearchIndex, "add", real_add)
    assert [h.seq for h in log.search("apple")] == [3, 2, 1]


def test_tail_grows_after_a_failed_segment_flush(tmp_path, monkeypatch, caplog):
    import scroll.search.tail as tail_mod   # where tail flushes write segments

    path = tmp_path / "f.db"
    log = EventLog(path, index_options={"flush_docs": 16, "max_segments": 3})
    log.search("warm")
    real = tail_mod.write_segment
    fails = {"n": 0}

    def failing_once(*a, **kw):
        if fails["n"] == 0:
            fails["n"] += 1
            raise OSError(28, "No space left on device")
        return real(*a, **kw)

    monkeypatch.setattr(tail_mod, "write_segment", failing_once)
    with caplog.at_level(logging.WARNING):
        for i in range(100):
            seq = log.append(session=f"s{i % 3}", role="user", text=f"word{i} shared")
            assert [h.seq for h in log.search(f"word{i}")] == [seq]
    assert fails["n"] == 1 and "No space left" in caplog.text
    idx = log.index
    assert idx.segments and idx.n_docs == 100
    ours = [(h.seq, round(h.score, 9)) for h in log.search("shared word7", k=20)]
    log.close()
    shutil.rmtree(str(path) + ".index")
    with EventLog(path) as fresh:  # the same ranking as an index built without failures
        assert [(h.seq, round(h.score, 9)) for h in fresh.search("shared word7", k=20)] == ours


# ------------------------------------------------------------------ reads
def test_origin_is_stored_and_filters_recent_and_iter_range(log):
    log.append(session="a", role="user", text="hello from history")
    log.append(session="a", role="assistant", text="print(1)", kind="code", origin=Origin.AGENT)
    log.append(session="b", role="system", text="marker", origin="system")
    with pytest.raises(ValueError, match="origin must be one of"):
        log.append(session="a", role="u", text="x", origin="admin")
    assert log.max_seq() == 3
    assert [e.origin for e in log.events()] == [Origin.HISTORY, Origin.AGENT, Origin.SYSTEM]
    assert log.expand(2).to_dict()["origin"] == "agent"
    assert [e.seq for e in log.recent(10, origins={"history", "system"})] == [1, 3]
    assert [e.seq for e in log.recent(10, sessions={"a"}, origins={Origin.AGENT})] == [2]
    assert log.recent(10, sessions=set()) == []
    assert [e.seq for e in log.recent(2)] == [2, 3]
    assert [e.seq for e in log.iter_range(1, 3, sessions={"b"})] == [3]
    assert [e.seq for e in log.iter_range(2, 99)] == [2, 3]
    assert list(log.iter_range(3, 1)) == []
    assert log.stats()["origins"] == {"history": 1, "agent": 1, "system": 1}


def test_iter_range_streams_in_batches(log):
    log.append_many([{"session": f"s{i % 2}", "role": "u", "text": f"t{i}"} for i in range(1000)])
    it = log.iter_range(1, 1000, sessions={"s1"})
    first = next(it)
    assert first.seq == 2
    assert [e.seq for e in it] == list(range(4, 1001, 2))


def test_payload_read_range(log):
    h = log.payloads.put(b"0123456789" * 10)
    assert log.payloads.read(h, 5, 7) == b"5678901"
    assert log.payloads.read(h, 95, 100) == b"56789"
    assert log.payloads.read(h, 1000, 5) == b""
    assert log.payloads.size(h) == 100
    with pytest.raises(ValueError):
        log.payloads.read(h, -1, 5)
    with pytest.raises(KeyError):
        log.payloads.read("sha256:" + "0" * 64, 0, 1)


def test_copy_log_refuses_a_source_that_does_not_verify(tmp_path):
    """Copying would launder a rewritten history into a fresh, valid chain."""
    old = tmp_path / "bad.db"
    _make_log(old, 3)
    _rewrite_row_py(old, 2, "forged")
    with pytest.raises(LogError, match="does not verify.*seq 2"):
        copy_log(old, tmp_path / "new.db")
    assert not (tmp_path / "new.db").exists()
    good = tmp_path / "good.db"
    _make_log(good, 3)
    with EventLog(good) as log:
        log.append(session="s", role="assistant", text="agent reply", origin="agent")
    result = copy_log(good, tmp_path / "copy.db")
    assert result["ok"] and result["origins"] == {"history": 3, "agent": 1, "system": 0}


def test_snapshot_is_an_independent_verified_copy(tmp_path):
    from scroll import EventLog

    with EventLog(tmp_path / "a.db") as log:
        for i in range(5):
            log.append(session="s", role="user", text=f"event {i} about the harbour")
        log.append(session="s", role="tool", text="x" * 200_000)  # a payload
        snap = log.snapshot(tmp_path / "copy" / "b.db")
        with pytest.raises(FileExistsError):
            log.snapshot(snap)
    with EventLog(snap) as copy:
        assert copy.verify()["ok"] and copy.max_seq() == 6 and copy.expand(6).text == "x" * 200_000
        copy.append(session="run", role="assistant", text="only in the copy", origin="agent")
        assert [h.seq for h in copy.search("harbour", k=10)] and copy.max_seq() == 7
    with EventLog(tmp_path / "a.db") as log:
        assert log.max_seq() == 6 and log.verify()["ok"]
    assert not (tmp_path / "copy" / "b.db.labels.json").exists()
