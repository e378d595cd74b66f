"""`scroll demo | run | chat` end to end (real kernel and log; a fake OpenAI-compatible server)."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from tests.test_llm_openai import FakeServer, ok_body

pytestmark = pytest.mark.sandbox
runner = CliRunner()


@pytest.fixture
def fake():
    s = FakeServer(tokenize=False)
    yield s
    s.stop()


def _reply(server, text):
    server.actions.append(("json", 200, ok_body(text=text)))


def test_run_against_a_server_json(tmp_path, fake):
    _reply(fake, "```python\nprint(6 * 7)\n```")
    _reply(fake, "```python\nfinal(6 * 7)\n```")
    r = runner.invoke(app, ["run", "What is six times seven?", "--db", str(tmp_path / "r.db"),
                            "--model-url", fake.url, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["answer"] == "42" and out["reason"] == "final" and len(out["steps"]) == 2
    assert out["backend"]["backend"] == "openai"
    # the model saw the first cell's exposure in its second prompt
    second = fake.chat_requests()[1]["body"]["messages"]
    assert second[-1]["role"] == "user" and "42" in second[-1]["content"]


def test_chat_session_keeps_kernel_state(tmp_path, fake):
    _reply(fake, "```python\nx = 20\nfinal('stored')\n```")
    _reply(fake, "```python\nfinal(x + 1)\n```")
    r = runner.invoke(app, ["chat", "--model-url", fake.url, "--db", str(tmp_path / "c.db")],
                      input="remember twenty\nadd one\n\n")
    assert r.exit_code == 0, r.output
    assert "scroll> stored" in r.output and "scroll> 21" in r.output


def test_chat_shows_answers_as_plain_text_and_its_config_readably(tmp_path, fake):
    """Issue #30 item 16: no raw `[bold]scroll>[/]`, an answer's markup is not interpreted, control
    characters are escaped, and the header reads "backend openai · model ..."."""
    _reply(fake, "```python\nfinal('[red]x[/red] \\x1b[2J')\n```")
    _reply(fake, "no code at all")
    _reply(fake, "still none")
    _reply(fake, "nothing")
    r = runner.invoke(app, ["chat", "--model-url", fake.url, "--db", str(tmp_path / "c.db")],
                      input="first\nsecond\n\n")
    assert r.exit_code == 0, r.output
    assert "[bold]" not in r.output and "scroll> [red]x[/red] \\x1b[2J" in r.output, r.output
    assert "scroll> (no answer: no_code)" in r.output
    assert "backend openai · model" in r.output and "{'backend'" not in r.output


def test_demo_reference_policy_is_labelled_and_correct(tmp_path):
    r = runner.invoke(app, ["demo", "--db", str(tmp_path / "d.db"), "--tokens", "60000", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "REFERENCE POLICY" in out["policy"] and out["backend"]["backend"] == "reference-policy"
    assert out["correct"] == out["questions"] >= 4


def test_demo_with_model_url_uses_the_model(tmp_path, fake):
    r = runner.invoke(app, ["demo", "--db", str(tmp_path / "m.db"), "--tokens", "20000", "--json",
                            "--model-url", fake.url])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "REFERENCE" not in out["policy"] and out["backend"]["backend"] == "openai"
    assert all(row["reason"] in ("no_code", "max_steps") for row in out["results"])  # "hello" has no code
    assert len(fake.chat_requests()) >= out["questions"]


def test_bad_flags_are_clear_errors(tmp_path):
    r = runner.invoke(app, ["run", "x", "--db", str(tmp_path / "b.db")])
    assert r.exit_code == 1 and "--model-url or --llm" in r.output


# ---------------------------------------------------------------- demo: never deletes a foreign log

def _real_log(path, n=3):
    from scroll import EventLog

    with EventLog(path) as lg:
        for i in range(n):
            lg.append("s1", "user", f"keep me {i}")
    return path.read_bytes()


def test_demo_refuses_a_log_it_did_not_write(tmp_path):
    db = tmp_path / "mine.db"
    before = _real_log(db)
    r = runner.invoke(app, ["demo", "--db", str(db), "--tokens", "20000", "--json"])
    assert r.exit_code == 1
    err = json.loads(r.stdout)["error"]
    assert "not a demo log" in err and "--force" in err and "\n" not in err
    assert db.read_bytes() == before  # nothing deleted, nothing written
    from scroll import EventLog

    with EventLog(db, readonly=True) as lg:
        assert [e.text for e in lg.events()] == ["keep me 0", "keep me 1", "keep me 2"]


def test_demo_refuses_the_default_log_of_the_other_commands(tmp_path, monkeypatch):
    from scroll.env import default_db

    before = _real_log(default_db())
    r = runner.invoke(app, ["demo", "--db", str(default_db()), "--tokens", "20000"])
    assert r.exit_code == 1 and "not a demo log" in r.output
    assert default_db().read_bytes() == before


def test_demo_refuses_a_directory_and_foreign_files(tmp_path):
    import sqlite3

    (tmp_path / "dir.db").mkdir()
    (tmp_path / "text.db").write_text("hello\n")
    con = sqlite3.connect(tmp_path / "other.db")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    for name in ("dir.db", "text.db", "other.db"):
        before = sorted(p.name for p in tmp_path.iterdir())
        r = runner.invoke(app, ["demo", "--db", str(tmp_path / name), "--tokens", "20000"])
        assert r.exit_code == 1, (name, r.output)
        assert ("directory" if name == "dir.db" else "not a demo log") in r.output
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "text.db").read_text() == "hello\n"


def test_demo_replaces_its_own_log_and_with_force_any_log(tmp_path):
    from scroll.labels import LabelStore

    db = tmp_path / "d.db"
    _real_log(db)
    LabelStore(db).put("generated", {"seed": 0})  # what the demo's generator leaves next to its log
    r = runner.invoke(app, ["demo", "--db", str(db), "--tokens", "20000", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["questions"] >= 4
    # a second run over the demo's own log is fine (it is rebuilt)
    r = runner.invoke(app, ["demo", "--db", str(db), "--tokens", "20000", "--json"])
    assert r.exit_code == 0, r.output
    other = tmp_path / "other.db"
    _real_log(other)
    r = runner.invoke(app, ["demo", "--db", str(other), "--tokens", "20000", "--json", "--force"])
    assert r.exit_code == 0, r.output


def test_demo_gives_the_agent_no_labels(tmp_path):
    from scroll import EventLog
    from scroll.session import history_sessions

    db = tmp_path / "d.db"
    r = runner.invoke(app, ["demo", "--db", str(db), "--tokens", "20000", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    ids = [row["question_id"] for row in out["results"]]
    with EventLog(db, readonly=True) as lg:
        history = history_sessions(lg)
        tasks = [e for e in lg.events(kind="task")]
        assert len(tasks) == out["questions"]
        for e in tasks:
            assert "question_id" not in e.meta and "demo" not in e.meta
            assert not any(q in e.session or q in json.dumps(e.meta) for q in ids)
            assert e.meta["sessions"] == history  # the run was granted the generated history
    assert {row["session"] for row in out["results"]}.isdisjoint(history)


# ---------------------------------------------------------------- run / chat: scope, exit status, JSONL

def test_run_sessions_flags_scope_the_run(tmp_path, fake):
    from scroll import EventLog
    from scroll.origin import Origin

    db = tmp_path / "s.db"
    with EventLog(db) as lg:
        lg.append("alpha", "user", "alpha says hi", origin=Origin.HISTORY)
        lg.append("beta", "user", "beta says hi", origin=Origin.HISTORY)
    for flags, scope in ((["--sessions", "beta"], ["beta"]), (["--sessions", " alpha, beta ,"], ["alpha", "beta"]),
                         ([], ["alpha", "beta"]), (["--all-sessions"], None)):
        _reply(fake, "```python\nfinal('ok')\n```")
        r = runner.invoke(app, ["run", "hi", "--db", str(db), "--model-url", fake.url, "--json", *flags])
        assert r.exit_code == 0, (flags, r.output)
        assert json.loads(r.stdout)["sessions"] == scope
    with EventLog(db, readonly=True) as lg:
        scopes = [e.meta["sessions"] for e in lg.events(kind="task")]
    assert scopes == [["beta"], ["alpha", "beta"], ["alpha", "beta"], None]
    for flags, msg in ((["--sessions", "beta", "--all-sessions"], "exclude each other"),
                       (["--sessions", ","], "at least one"),
                       (["--sessions", "gamma"], "no session 'gamma'")):
        r = runner.invoke(app, ["run", "hi", "--db", str(db), "--model-url", fake.url, *flags])
        assert r.exit_code == 1 and msg in r.output, (flags, r.output)


def test_run_exits_nonzero_with_the_backend_error(tmp_path):
    import socket

    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    llm = tmp_path / "llm.yaml"
    llm.write_text("backend: openai\nmodel: m\nmax_retries: 0\nbackoff_base_s: 0\nconnect_timeout_s: 1\n")
    loop = tmp_path / "loop.yaml"
    loop.write_text("backend_retries: 0\n")
    args = ["run", "hi", "--db", str(tmp_path / "b.db"), "--llm", str(llm), "--model-url", dead,
            "--loop-config", str(loop)]
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert "backend_error" in r.output and "kept failing" in r.output and "127.0.0.1" in r.output
    r = runner.invoke(app, args + ["--json"])
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["reason"] == "backend_error" and out["error"]


def test_chat_json_is_one_line_per_turn_and_lines_are_history(tmp_path, fake):
    from scroll import EventLog
    from scroll.origin import Origin

    _reply(fake, "```python\nx = 20\nfinal('stored')\n```")
    _reply(fake, "```python\nfinal(x + 1)\n```")
    db = tmp_path / "c.db"
    r = runner.invoke(app, ["chat", "--model-url", fake.url, "--db", str(db), "--json"],
                      input="remember twenty\nadd one\n\n")
    assert r.exit_code == 0, r.output
    turns = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(t["turn"], t["task"], t["answer"], t["reason"], t["steps"]) for t in turns] == [
        (1, "remember twenty", "stored", "final", 1), (2, "add one", "21", "final", 1)]
    with EventLog(db, readonly=True) as lg:
        tasks = list(lg.events(kind="task"))
    assert [(e.text, e.origin) for e in tasks] == [("remember twenty", Origin.HISTORY),
                                                   ("add one", Origin.HISTORY)]
