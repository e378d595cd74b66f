"""EventLog: append-only in the schema, exact round trips, payloads, bad input."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from scroll import EventLog
from scroll.events import LogError
from scroll.payloads import PayloadError


def test_append_expand_round_trip(log):
    s1 = log.append(session="s1", role="user", text="hello", meta={"k": "v", "n": [1, 2]})
    s2 = log.append(session="s1", role="Caroline", text="ünïcødé ✓", kind="note", time="2023-05-01T10:00:00Z")
    assert s2 > s1
    e = log.expand(s2)
    assert (e.seq, e.session, e.role, e.kind, e.text, e.time) == (s2, "s1", "Caroline", "note", "ünïcødé ✓", "2023-05-01T10:00:00Z")
    assert log.expand(s1).meta == {"k": "v", "n": [1, 2]}
    assert log.expand(s1).time.endswith("Z") and log.expand(s1).time.startswith("20")
    assert [e.seq for e in log.expand(s1, s2)] == [s1, s2]
    assert log.expand(s2 + 1, s2 + 10) == []
    with pytest.raises(KeyError):
        log.expand(999)
    with pytest.raises(ValueError):
        log.expand(5, 1)
    assert [e.seq for e in log.recent(1)] == [s2]
    assert log.sessions()[0]["events"] == 2


def test_append_only_enforced_by_database(tmp_path):
    path = tmp_path / "a.db"
    with EventLog(path) as log:
        log.append(session="s", role="user", text="original")
    raw = sqlite3.connect(path)
    for sql in ("UPDATE events SET text='changed'", "DELETE FROM events", "UPDATE log_info SET value='x'"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only|write-once"):
            raw.execute(sql)
    raw.close()
    with EventLog(path) as log:
        assert log.expand(1).text == "original"


def test_seq_never_reused_and_migrations_recorded(tmp_path):
    path = tmp_path / "m.db"
    with EventLog(path) as log:
        log.append(session="s", role="u", text="a")
        assert log.schema_version == 2
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT version FROM schema_migrations").fetchall() == [(2,)]  # fresh logs start at v2
    raw.close()
    with EventLog(path) as log:  # reopening applies nothing twice
        assert log.append(session="s", role="u", text="b") == 2


@pytest.mark.parametrize("kwargs,exc", [
    ({"session": "", "role": "u", "text": "x"}, ValueError),
    ({"session": "s", "role": None, "text": "x"}, TypeError),
    ({"session": "s", "role": "u", "text": b"bytes"}, TypeError),
    ({"session": "s", "role": "u", "text": "x", "meta": [1]}, TypeError),
    ({"session": "s", "role": "u", "text": "x", "meta": {"f": object()}}, ValueError),
    ({"session": "s", "role": "u", "text": "bad \udc80 surrogate"}, ValueError),
    ({"session": "s", "role": "u", "text": "x", "time": 123}, TypeError),
])
def test_bad_append_rejected_and_nothing_written(log, kwargs, exc):
    with pytest.raises(exc):
        log.append(**kwargs)
    assert log.max_seq() == 0


def test_append_many_all_or_nothing(log):
    log.append(session="s", role="u", text="keep")
    with pytest.raises(ValueError, match="row 1"):
        log.append_many([{"session": "s", "role": "u", "text": "a"}, {"session": "s", "role": "u"}])
    assert log.max_seq() == 1
    assert log.append_many([{"session": "s", "role": "u", "text": "a"}, {"session": "t", "role": "v", "text": "b"}]) == [2, 3]


def test_payload_store_exact_bytes_and_handles(log):
    data = bytes(range(256)) * 1000
    h = log.payloads.put(data)
    assert log.payloads.get(h, verify=True) == data
    assert log.payloads.put(data) == h  # content-addressed, idempotent
    with pytest.raises(PayloadError):
        log.payloads.get("sha256:" + "0" * 64)
    with pytest.raises(PayloadError):
        log.payloads.get("../../etc/passwd")


def test_big_text_goes_to_payload_and_text_is_full(log):
    text = "word " * 50_000
    seq = log.append(session="s", role="tool", text=text, kind="tool_result")
    ev = log.expand(seq)
    assert ev.payload is not None and ev.text == text and ev.handle.text() == text
    row = log.conn.execute("SELECT length(text) FROM events WHERE seq=?", (seq,)).fetchone()[0]
    assert row < len(text)


@pytest.mark.slow
def test_hundred_megabyte_event_stored_whole_and_searchable(tmp_path):
    code = r"""
import sys, resource
from scroll import EventLog
from scroll.events import LogError
log = EventLog(sys.argv[1])
chunk = "lorem ipsum dolor sit amet consectetur adipiscing elit " * 20
parts = [chunk] * (100_000_000 // len(chunk) + 1)
parts.insert(len(parts) // 2, " quokkaneedle ")
text = "".join(parts)
seq = log.append(session="s", role="tool", kind="tool_result", text=text)
del parts
hits = log.search("quokkaneedle")
assert [h.seq for h in hits] == [seq], hits
assert log.expand(seq).text == text
import time
print(len(text), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big.db")], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    size, rss_kb = map(int, out.stdout.split())
    assert size >= 100_000_000
    assert rss_kb < 3_000_000, f"peak RSS {rss_kb} kB for a 100 MB event"


def test_context_manager_and_closed_log(tmp_path):
    with EventLog(tmp_path / "c.db") as log:
        log.append(session="s", role="u", text="x")
    with pytest.raises(RuntimeError, match="closed"):
        log.append(session="s", role="u", text="y")


def test_not_a_database_is_a_clear_error(tmp_path):
    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LogError, match="not a SQLite database"):
        EventLog(p)
    assert p.read_bytes() == b"this is not sqlite" * 100


def test_no_thread_keeps_interpreter_alive(tmp_path):
    code = f"from scroll import EventLog; l=EventLog({str(tmp_path / 't.db')!r}); l.append(session='s', role='u', text='x'); l.search('x')"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_import_scroll_loads_no_torch():
    code = "import sys, scroll, scroll.cli, scroll.events, scroll.search; from scroll import EventLog, SearchIndex; " \
           "bad = [m for m in ('torch', 'transformers', 'vllm', 'trl', 'peft') if m in sys.modules]; print(json.dumps(bad))"
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
