"""Issue #30 item 7: NUL bytes and ANSI escapes in a cell's output (or in history) are shown as escapes in
the model's exposure, the console and the viewer, and stay verbatim in the log (scroll.controls)."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from scroll.cli import app
from scroll.controls import show_controls

RAW = "red \x1b[31mALERT\x1b[0m nul\x00 bell\x07 cr\r over\x9b ok\r\nnext\tcol"


def test_show_controls_escapes_everything_but_newline_and_tab():
    shown = show_controls(RAW)
    assert shown == "red \\x1b[31mALERT\\x1b[0m nul\\x00 bell\\x07 cr\\r over\\x9b ok\nnext\tcol"
    assert not any(ord(ch) < 32 and ch not in "\n\t" or 0x7f <= ord(ch) <= 0x9f for ch in shown)
    assert show_controls("") == "" and show_controls("plain, ünïcode ✓") == "plain, ünïcode ✓"


@pytest.mark.sandbox
def test_the_exposure_escapes_them_and_the_log_keeps_them(log):
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.llm.scripted import ScriptedLLM

    exposures: list[str] = []
    replies = ["```python\nprint('A\\x1b[2J\\x00B', end='')\nraise ValueError('bad\\x1b[31m')\n```",
               "```python\nfinal('done')\n```"]
    cfg = LoopConfig(max_steps=3, cell_timeout=20, soft_budget=3000, hard_budget=4000)
    with Agent.open(log, ScriptedLLM(replies), cfg, session="ctl",
               on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("print something odd")
    assert res.answer == "done"
    assert "A\\x1b[2J\\x00B" in exposures[0] and "bad\\x1b[31m" in exposures[0]
    assert "\x1b" not in exposures[0] and "\x00" not in exposures[0]
    out = next(e for e in log.events(session="ctl") if e.kind == "output")
    assert "A\x1b[2J\x00B" in out.text               # the log: every byte as the cell printed it


def test_the_console_shows_history_text_with_escapes(tmp_path):
    from scroll.events import EventLog

    db = tmp_path / "h.db"
    with EventLog(db) as lg:
        seq = lg.append(session="s[bold]x", role="user", text=RAW + " lighthouse")
    shown = CliRunner().invoke(app, ["expand", str(seq), "--db", str(db)])
    assert shown.exit_code == 0 and "\\x1b[31mALERT" in shown.output and "\x1b[31m" not in shown.output
    assert "\x00" not in shown.output and "s[bold]x" in shown.output
    found = CliRunner().invoke(app, ["search", "lighthouse", "--db", str(db)])
    assert found.exit_code == 0 and "\x1b[31m" not in found.output and "\\x1b" in found.output
    with EventLog(db, readonly=True) as lg:
        assert lg.expand(seq).text == RAW + " lighthouse"


def test_the_viewer_shows_them_as_escapes(tmp_path):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from scroll.events import EventLog
    from scroll.surfaces.viewer import ViewerConfig, create_app

    db = tmp_path / "v.db"
    with EventLog(db) as lg:
        lg.append(session="s", role="user", text=RAW + " lighthouse")
    with TestClient(create_app(ViewerConfig(db=db))) as c:
        page = c.get("/session/s").text
        hits = c.get("/search", params={"q": "lighthouse"}).text
    for html in (page, hits):
        assert "\\x1b[31mALERT" in html and "\x1b" not in html and "\x00" not in html
