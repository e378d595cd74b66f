"""`scroll import/search/expand/stats`: formats, --json, and bad input that loses nothing."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scroll import EventLog
from scroll.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, [str(a) for a in args])


def _lme_instance(qid="q1"):
    return {
        "question_id": qid, "question_type": "knowledge-update", "question": "Where do I work now?",
        "answer": "Globex", "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_session_ids": ["sess_a", "sess_b"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/28 (Sun) 14:05"],
        "haystack_sessions": [
            [{"role": "user", "content": "I started at Initech today."},
             {"role": "assistant", "content": "Congrats on the new job!"}],
            [{"role": "user", "content": "I moved to Globex as a data engineer.", "has_answer": True},
             {"role": "assistant", "content": "Nice move."}],
        ],
        "answer_session_ids": ["sess_b"],
    }


def test_jsonl_import_search_expand_stats(tmp_path):
    f = tmp_path / "ev.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in [
        {"session": "s1", "role": "Ann", "text": "My sister Mia adopted a beagle", "time": "2023-01-02T10:00:00"},
        {"session": "s1", "role": "Bob", "text": "What is the beagle called?", "kind": "message"},
        {"session": "s2", "role": "Ann", "text": "The beagle is called Rocket", "meta": {"x": 1}},
    ]) + "\n")
    db = tmp_path / "x.db"
    r = _run("import", f, "--db", db, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["imported"] == 3
    r = _run("search", "beagle name", "--db", db, "--session", "s2", "--json")
    hits = json.loads(r.stdout)
    assert [h["seq"] for h in hits] == [3] and hits[0]["meta"] == {"x": 1}
    r = _run("expand", "1", "2", "--db", db, "--json")
    assert [e["role"] for e in json.loads(r.stdout)] == ["Ann", "Bob"]
    r = _run("expand", "1", "--db", db, "--json")
    assert json.loads(r.stdout)["time"] == "2023-01-02T10:00:00"
    r = _run("expand", "99", "--db", db, "--json")
    assert r.exit_code == 1 and "no event with seq 99" in r.stdout
    r = _run("stats", "--db", db, "--json")
    s = json.loads(r.stdout)
    assert s["events"] == 3 and s["sessions"] == 2 and s["index"]["docs"] == 3
    for cmd in (["search", "x"], ["expand", "1"], ["stats"]):  # human output works too
        assert _run(*cmd, "--db", db).exit_code == 0


def test_longmemeval_import_one_instance(tmp_path):
    f = tmp_path / "lme.json"
    f.write_text(json.dumps([_lme_instance("q1"), _lme_instance("q2")]))
    db = tmp_path / "l.db"
    r = _run("import", f, "--db", db, "--json")
    assert r.exit_code == 1 and "--instance" in r.stdout
    assert not db.exists()
    r = _run("import", f, "--db", db, "--instance", "q2", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["format"] == "longmemeval" and out["imported"] == 4
    assert "Globex" not in r.stdout  # labels go to the sidecar, not to the output
    assert out["labels"] == {"file": str(db.resolve()) + ".labels.json", "keys": ["longmemeval/q2"]}
    with EventLog(db) as log:
        evs = log.expand(1, 4)
        assert [e.session for e in evs] == ["s001", "s001", "s002", "s002"]
        assert evs[2].meta == {"turn": 0, "date": "2023/05/28 (Sun) 14:05"}
        assert evs[2].time == "2023-05-28T14:05:00" and str(evs[2].origin) == "history"
        assert [h.seq for h in log.search("which company do I work at now Globex", k=1)] == [3]
    from scroll.labels import LabelStore

    lab = LabelStore(db.resolve()).get("longmemeval/q2")
    assert lab["answer"] == "Globex" and lab["evidence_seqs"] == [3] and lab["answer_sessions"] == ["s002"]
    assert lab["sessions"] == {"s001": "sess_a", "s002": "sess_b"}


@pytest.mark.parametrize("content,needle", [
    (b"", "empty file"),
    (b'{"session":"s","role":"u","text":"ok"}\n{"session": "s", "role"\n', ":2: invalid JSON"),
    (b'{"session":"s","role":"u","text":"ok"}\n{"session":"s","text":"no role"}\n', ":2: missing field 'role'"),
    (b'{"session":"s","role":"u","text":42}\n', ":1: field 'text' must be a string"),
    (b'{"session":"s","role":"u","text":"x","color":"red"}\n', ":1: unknown field"),
    (b'{"session":"s","role":"u","text":"caf\xe9"}\n', ":1: not valid UTF-8"),
    (b'[{"question_id": "q"}]', "neither LongMemEval nor LoCoMo"),
    (b'[{"question_id": "q", "haystack_sessions": [[{"role": "user"}]], "haystack_session_ids": ["a"], "haystack_dates": ["d"]}]',
     "turn 0: expected {role, content}"),
    (b"hello", "not JSON, JSONL or SQLite"),
    (b'{"session":"s","role":"u","text":"ok"}\n{"messages":[{"role":"user","content":"hi"}]}\n',
     "(read as jsonl, detected from the first line"),
    (b'{"messages":[{"role":"user","content":"hi"}]}\n{"messages":[{"role":"user","content":"trunc', ":2: invalid JSON"),
    (b'{"prompt": "p", "completion": "c"}\n', "a JSON line of no known format"),
    (b'SQLite format 3\x00' + bytes(200), "cannot read the SQLite database"),
])
def test_bad_input_clear_error_and_nothing_written(tmp_path, content, needle):
    db = tmp_path / "keep.db"
    with EventLog(db) as log:
        log.append(session="s", role="u", text="precious")
    f = tmp_path / "bad.jsonl"
    f.write_bytes(content)
    r = _run("import", f, "--db", db)
    assert r.exit_code != 0
    assert needle in r.output, r.output
    with EventLog(db) as log:
        assert log.max_seq() == 1 and log.expand(1).text == "precious"


def test_skip_bad_reports_and_imports_the_rest(tmp_path):
    f = tmp_path / "mixed.jsonl"
    f.write_text('{"session":"s","role":"u","text":"good one"}\nnot json\n{"session":"s","role":"u","text":"good two"}\n')
    r = _run("import", f, "--db", tmp_path / "m.db", "--skip-bad", "--json")
    out = json.loads(r.stdout)
    assert out["imported"] == 2 and len(out["skipped"]) == 1 and ":2:" in out["skipped"][0]


def test_missing_db_and_file(tmp_path):
    assert "no event log" in _run("search", "x", "--db", tmp_path / "nope.db").output
    r = _run("import", tmp_path / "nope.jsonl", "--db", tmp_path / "n.db")
    assert r.exit_code == 1 and "no such file" in r.output


def test_help_explains_every_command():
    for cmd in ([], ["import"], ["search"], ["expand"], ["stats"], ["verify"], ["migrate"]):
        r = _run(*cmd, "--help")
        assert r.exit_code == 0 and "Usage" in r.output
