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
