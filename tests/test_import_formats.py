"""`scroll import` reads what users have: OpenAI chat-completions JSONL, simonw/llm's logs.db
(read-only), LoCoMo JSON; formats told apart by content; a file whose sessions are already in
the log is refused before anything is written."""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from scroll.events import EventLog
from scroll.importers import BadInputError, parse_file
from scroll.labels import LabelStore


def _run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def chat_file(path: Path) -> Path:
    lines = [
        {"id": "chatcmpl-1", "created": 1714550400, "model": "gpt-x", "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "I just moved to Lisbon for the new job."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Lisbon\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny, 24C"},
            {"role": "assistant", "content": "Welcome to Lisbon! It is sunny."}]},
        {"messages": [  # no id field: the session is named by its line
            {"role": "user", "content": [{"type": "text", "text": "My dog is called Pixel."},
                                         {"type": "image_url", "image_url": {"url": "data:..."}}]},
            {"role": "assistant", "content": "Pixel is a great name."}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def llm_logs_db(path: Path) -> Path:
    """A logs.db with simonw/llm's tables (the columns its migrations create)."""
    with sqlite3.connect(path) as c:
        c.executescript("""
            CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
            CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT, prompt_json TEXT,
                options_json TEXT, response TEXT, response_json TEXT, conversation_id TEXT REFERENCES conversations(id),
                duration_ms INTEGER, datetime_utc TEXT, input_tokens INTEGER, output_tokens INTEGER,
                token_details TEXT, schema_id TEXT);
            CREATE TABLE tool_calls (id INTEGER PRIMARY KEY, response_id TEXT, tool_id INTEGER, name TEXT,
                arguments TEXT, tool_call_id TEXT);
        """)
        c.execute("INSERT INTO conversations VALUES ('01conv-a', 'trip', 'gpt-4o-mini')")
        c.execute("INSERT INTO conversations VALUES ('01conv-b', 'pets', 'gpt-4o-mini')")
        rows = [("r2", "01conv-a", "2024-05-02T09:00:00.123456", "And the best tram?", "Be brief.", "Tram 28."),
                ("r1", "01conv-a", "2024-05-01T08:00:00", "I moved to Lisbon.", "Be brief.", "Nice city."),
                ("r3", "01conv-b", "2024-05-03T10:00:00", "My dog is Pixel.", None, "Cute!")]
        for rid, conv, when, prompt, system, resp in rows:
            c.execute("INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc) "
                      "VALUES (?, 'gpt-4o-mini', ?, ?, ?, ?, ?)", (rid, prompt, system, resp, conv, when))
        c.execute("INSERT INTO tool_calls (response_id, name, arguments) VALUES ('r3', 'lookup', '{\"q\": \"dog\"}')")
    return path


def locomo_file(path: Path, answers: bool = True) -> Path:
    def sample(sid, place):
        qa = {"question": "Where did Ann move?", "evidence": ["D1:1"], "category": 4}
        if answers:
            qa["answer"] = place
        return {"sample_id": sid, "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": f"I moved to {place}."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Exciting!"}]}, "qa": [qa]}
    path.write_text(json.dumps([sample("c1", "Porto"), sample("c2", "Oslo")]))
    return path


def test_chat_jsonl_sessions_roles_parts_and_tool_calls(tmp_path):
    p = parse_file(chat_file(tmp_path / "chat.jsonl"))
    assert p.format == "chat-jsonl" and p.sessions == ["chatcmpl-1", "line-2"] and p.labels == {}
    first = [r for r in p.rows if r["session"] == "chatcmpl-1"]
    assert [r["role"] for r in first] == ["system", "user", "assistant", "tool", "assistant"]
    assert first[2]["text"] == 'tool call weather({"city": "Lisbon"})'
    assert first[3]["meta"] == {"turn": 3, "tool_call_id": "c1"}
    assert all(r["time"] == "2024-05-01T08:00:00" for r in first)
    second = [r for r in p.rows if r["session"] == "line-2"]
    assert second[0]["text"] == "My dog is called Pixel.\n[image]" and second[0]["time"] is None
    assert all(str(r["origin"]) == "history" for r in p.rows)


def test_llm_logs_db_is_read_only_and_its_conversations_become_sessions(tmp_path):
    db = llm_logs_db(tmp_path / "logs.db")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    db.chmod(0o444)  # read-only on disk too: the importer must not need to write
    p = parse_file(db)
    assert p.format == "llm-logs" and p.sessions == ["01conv-a", "01conv-b"]
    a = [(r["role"], r["text"]) for r in p.rows if r["session"] == "01conv-a"]
    assert a == [("system", "Be brief."), ("user", "I moved to Lisbon."), ("assistant", "Nice city."),
                 ("user", "And the best tram?"), ("assistant", "Tram 28.")]  # time order; the system prompt once
    b = [r for r in p.rows if r["session"] == "01conv-b"]
    assert b[-1]["text"] == 'Cute!\ntool call lookup({"q": "dog"})' and b[-1]["time"] == "2024-05-03T10:00:00"
    assert b[-1]["meta"] == {"response_id": "r3", "model": "gpt-4o-mini"}
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not Path(str(db) + "-wal").exists() and not Path(str(db) + "-journal").exists()


def test_locomo_one_sample_per_log_labels_only_in_the_sidecar(tmp_path):
    f = locomo_file(tmp_path / "loco.json")
    r = _run("import", f, "--db", tmp_path / "x.db", "--json")
    assert r.exit_code == 1 and "--instance" in r.stdout and not (tmp_path / "x.db").exists()
    db = tmp_path / "c2.db"
    r = _run("import", f, "--db", db, "--instance", "c2", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["format"] == "locomo" and out["imported"] == 2 and "Oslo" not in json.dumps(out["info"])
    with EventLog(db) as log:
        evs = log.expand(1, 2)
        assert [(e.session, e.role) for e in evs] == [("s001", "Ann"), ("s001", "Bo")]
        assert evs[0].time == "2023-05-08T13:56:00" and "Oslo" in evs[0].text
    lab = LabelStore(db).get("locomo/c2-q0")
    assert lab["answer"] == "Oslo" and lab["evidence_seqs"] == [1]
    assert "Where did Ann move" not in db.read_bytes().decode("latin-1")  # the question is not in the log


def test_sessions_already_in_the_log_are_refused_and_nothing_is_written(tmp_path):
    f, db = chat_file(tmp_path / "chat.jsonl"), tmp_path / "h.db"
    assert _run("import", f, "--db", db).exit_code == 0
    with EventLog(db) as log:
        n = log.max_seq()
    r = _run("import", f, "--db", db, "--json")
    assert r.exit_code == 1
    assert "already in" in r.stdout and "chatcmpl-1" in r.stdout
    with EventLog(db) as log:
        assert log.max_seq() == n
    # another conversation (a new id) goes in
    g = tmp_path / "more.jsonl"
    g.write_text(json.dumps({"id": "chatcmpl-2", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    assert _run("import", g, "--db", db).exit_code == 0


@pytest.mark.parametrize("content,fmt,needle", [
    (b'{"id": "a", "messages": [{"role": "user", "content": "x"}]}\n{"id": "a", "messages": []}\n', "auto",
     ":2: 'messages' is empty"),
    (b'{"id": "a", "messages": [{"role": "user", "content": "x"}]}\n{"id": "a", "messages": [{"role": "user"}]}\n',
     "auto", "repeats line 1"),
    (b'{"messages": [{"content": "no role"}]}\n', "auto", "messages[0]: expected an object with a non-empty 'role'"),
    (b'{"messages": [{"role": "user", "content": 5}]}\n', "auto", "'content' must be a string"),
    (b'{"messages": [{"role": "user", "content": "x"}]}\n', "longmemeval", "not a LongMemEval instance"),
    (b'{"messages": [{"role": "user", "content": "x"}]}\n', "yaml", "unknown format 'yaml'"),
    (b'{"conversation": {}, "qa": [{"question": "q?", "category": 1}]}', "auto", ".answer: missing"),
    # issue #30 item 9: a time that is no ISO 8601 date would pass every --since filter (times compare as strings)
    (b'{"session": "s", "role": "user", "text": "a", "time": "2026-01-02"}\n'
     b'{"session": "s", "role": "user", "text": "b", "time": "9999-zz"}\n', "auto",
     ":2: field 'time' must be an ISO 8601 date or date-time"),
])
def test_bad_files_name_the_place_and_write_nothing(tmp_path, content, fmt, needle):
    f = tmp_path / "bad.jsonl"
    f.write_bytes(content)
    db = tmp_path / "h.db"
    r = _run("import", f, "--db", db, "--format", fmt)
    assert r.exit_code != 0 and needle in r.output, r.output
    assert not db.exists()


def test_a_sqlite_file_that_is_not_llm_logs(tmp_path):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(BadInputError, match="not an llm logs.db"):
        parse_file(other)
    with pytest.raises(BadInputError, match="a SQLite database, not chat-jsonl"):
        parse_file(other, "chat-jsonl")
