"""Kernel API, logging, exposure, `ms`, replay/resume, fail-closed, export and CLI.

The log is in pytest's tmp_path (a 0700 dir the kernel user cannot traverse): the kernel
must still work, because `ms` goes through the host-side service.
"""
from __future__ import annotations

import json
import os

import pytest

from scroll.capability import Capability
from scroll.events import EventLog
from scroll.executor import ExecResult
from scroll.kernel import Kernel, SandboxError
from scroll.kernel import sandbox as sbx
from scroll.kernel import uids

pytestmark = pytest.mark.sandbox


@pytest.fixture
def log(tmp_path):
    with EventLog(tmp_path / "scroll.db") as lg:
        lg.append(session="chat", role="user", text="my cat is called Miso and likes tuna")
        lg.append(session="chat", role="assistant", text="Miso sounds lovely")
        lg.append(session="chat", role="user", text="long " + "tuna " * 30_000)  # payload-backed
        yield lg


@pytest.fixture
def k(log):
    with Kernel(log, "s1", timeout=10) as kern:
        yield kern


def test_print_is_the_only_exposure(k, log):
    r = k.execute("x = 3\nx * 100")
    assert isinstance(r, ExecResult) and r.stdout == "" and r.error is None
    r = k.execute("import sys\nprint('out')\nprint('err', file=sys.stderr)\nx")
    assert "out\n" in r.stdout and "err\n" in r.stdout and "3" not in r.stdout
    r = k.execute("raise ValueError('boom')")
    assert r.error.startswith("ValueError: boom") and "Traceback" not in r.stdout
    assert r.notice is None and not r.timed_out


def test_every_cell_and_result_is_logged(k, log):
    r = k.execute("print('hello')")
    code, out = log.expand(r.seqs[0]), log.expand(r.seqs[1])
    assert (code.kind, code.role, code.text, code.session) == ("code", "assistant", "print('hello')", "s1")
    assert (out.kind, out.role, out.text) == ("output", "kernel", "hello\n")
    assert out.meta["code_seq"] == code.seq and out.meta["error"] is None
    assert out.meta["sandbox"] == "on" and log.max_seq() == out.seq
    r = k.execute("1/0")
    assert log.expand(r.seqs[1]).meta["error"].startswith("ZeroDivisionError")


def test_exposure_is_capped_with_handle(log):
    with Kernel(log, "s1", max_output_chars=1000) as k:
        r = k.execute("for i in range(5000):\n    print(f'line {i}')")
        assert r.truncated and r.handle and len(r.stdout) < 1400
        assert r.stdout.startswith("line 0\n") and r.stdout.rstrip().endswith("line 4999")
        full = log.payloads.get(r.handle).decode()
        assert full == "".join(f"line {i}\n" for i in range(5000))
        assert k.execute(f"print(ms.payload({r.handle!r}) == {full!r})").stdout == "True\n"


def test_ms_methods(log):
    k = Kernel(log, "s1", timeout=10, capability=Capability(log, sessions=["chat"], own_session="s1"))
    r = k.execute(
        "hits = ms.search('Miso', k=5, session='chat')\n"
        "print(sorted((h.seq, h.session, h.role, h.kind, round(h.score, 3) > 0) for h in hits))\n"
        "print(ms.expand(1).text)\n"
        "print([e.seq for e in ms.expand(1, 3)])\n"
        "big = ms.expand(3)\n"
        "print(big._text is None, big.text_len, len(big.text), big.payload is not None)\n"
        "print([e.seq for e in ms.recent(2, session='chat')])\n"
        "print([s['session'] for s in ms.sessions()])\n"
        "print(ms.headlines())\n"
        "print([h.seq for h in ms.search('tuna', seq_range=(3, 3))])\n"
        "print([h.seq for h in ms.search('Miso', role='assistant', kind='message')])\n"
    )
    assert r.error is None, r.error
    lines = r.stdout.splitlines()
    # seq 3 does not mention Miso (the default document model indexes no previous turn)
    assert lines[0] == "[(1, 'chat', 'user', 'message', True), (2, 'chat', 'assistant', 'message', True)]"
    assert lines[1] == "my cat is called Miso and likes tuna"
    assert lines[2] == "[1, 2, 3]"
    n = len(log.expand(3).text)
    assert lines[3] == f"True {n} {n} True"
    assert lines[4] == "[2, 3]"
    assert lines[5].startswith("['chat', 's1'")
    assert lines[6] == "[]" and lines[7] == "[3]" and lines[8] == "[2]"
    r = k.execute("ms.expand(10**6)")
    assert r.error.startswith("MsError") and "KeyError" in r.error
    k.close()


def test_bare_kernel_sees_only_its_own_session(k, log):
    r = k.execute("print(ms.search('Miso', session='chat'), [s['session'] for s in ms.sessions()])")
    assert r.error is None and r.stdout == "[] ['s1']\n", (r.stdout, r.error)
    code, out = log.expand(r.seqs[0]), log.expand(r.seqs[1])
    assert str(code.origin) == "agent" and str(out.origin) == "agent"


class RecordingCapability(Capability):
    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.cells: list[tuple[float | None, bool]] = []

    def begin_cell(self, deadline, *, replay=False):
        self.cells.append((deadline, replay))
        super().begin_cell(deadline, replay=replay)


def test_capability_brackets_every_cell_and_hands_back_final(log):
    import time

    cap = RecordingCapability(log, sessions=["s1"], own_session="s1")
    with Kernel(log, "s1", capability=cap, prelude="y = 1") as k:
        assert [r for _, r in cap.cells] == [True, True]  # boot + prelude
        t0 = time.monotonic()
        r = k.execute("ms.final('forty-two')\nprint('done')", timeout=7)
        deadline, replay = cap.cells[-1]
        assert not replay and t0 + 7 <= deadline <= time.monotonic() + 7
        assert r.final == "forty-two" and r.stdout == "done\n" and r.error is None
        assert k.execute("print(2)").final is None
        r = k.execute("import os; os._exit(1)")  # restart: boot, prelude, replay (final ignored)
        assert r.final is None and all(rep for _, rep in cap.cells[-4:])
        assert "replayed 2 logged cell(s)" in r.notice


def test_headlines_callable_is_served(log):
    with Kernel(log, "s1", headlines=lambda: [{"lo": 1, "hi": 2, "headline": "cat"}]) as k:
        assert k.execute("print(ms.headlines())").stdout == "[{'lo': 1, 'hi': 2, 'headline': 'cat'}]\n"


def test_handler_rejects_bad_requests(log):
    h = Capability(log)
    bad = [None, [], {"method": 5}, {"method": "append", "params": {}}, {"method": "search"},
           {"method": "search", "params": {"query": "x", "k": "ten"}},
           {"method": "search", "params": {"query": "x", "k": 10**9}},
           {"method": "search", "params": {"query": "x", "evil": 1}},
           {"method": "expand", "params": {"lo": True}},
           {"method": "payload", "params": {"handle": "../../etc/passwd"}},
           {"method": "recent", "params": {"n": -1}}]
    for req in bad:
        rep = h.handle(req)
        assert rep["ok"] is False and rep["error"], req
    assert h.handle({"id": 7, "method": "ping"}) == {"id": 7, "ok": True, "result": "pong"}


def test_resume_replays_without_relogging(log):
    with Kernel(log, "s1") as k:
        k.execute("x = 10")
        k.execute("y = x * 2\nprint('side effect')")
        k.execute("z = undefined_name")  # failed: not replayed
    n = log.max_seq()
    with Kernel(log, "s1") as k2:
        assert log.max_seq() == n  # replay logs nothing
        r = k2.execute("print(x, y)")
        assert r.stdout == "10 20\n" and "side effect" not in r.stdout
        assert r.notice and "resumed session: replayed 2 logged cell(s)" in r.notice
        assert k2.execute("print(1)").notice is None
    with Kernel(log, "other") as k3:
        assert k3.execute("print('x' in dir())").stdout == "False\n"


def test_replay_takes_only_cells_its_own_kernel_ran(log):
    """Issue #30 item 1: code/output rows of the history origin (what `scroll import`, an MCP client's
    `log` or the proxy can write) never become cells, nor does an agent-origin pair whose output
    names another kernel run; the kernel's own cells still replay."""
    from scroll.origin import Origin

    c = log.append(session="s9", role="assistant", kind="code", text="pwned = 1")
    log.append(session="s9", role="kernel", kind="output", text="", meta={"code_seq": c, "error": None})
    c2 = log.append(session="s9", role="assistant", kind="code", text="forged = 1", meta={"kernel": "a" * 16},
                    origin=Origin.AGENT)
    log.append(session="s9", role="kernel", kind="output", text="", meta={"code_seq": c2, "kernel": "b" * 16},
               origin=Origin.AGENT)
    assert all(e.origin == Origin.HISTORY for e in log.events(session="s9") if e.seq <= c + 1)
    with Kernel(log, "s9") as k:
        assert k.execute("mine = 2").error is None
    with Kernel(log, "s9") as k2:
        r = k2.execute("print(sorted(n for n in ('pwned', 'forged', 'mine') if n in globals()))")
        assert r.stdout == "['mine']\n", (r.stdout, r.error)
        assert "replayed 1 logged cell(s)" in r.notice


def test_several_kernels_at_once(log):
    ks = [Kernel(log, f"s{i}") for i in range(4)]
    try:
        for i, k in enumerate(ks):
            k.execute(f"v = {i}")
        uids = {k.rt.uid for k in ks}
        assert len(uids) == 4
        for i, k in enumerate(ks):
            assert k.execute("print(v)").stdout == f"{i}\n"
    finally:
        for k in ks:
            k.close()
    for k in ks:
        assert not k.rt.path.exists()


def test_close_kills_everything(log):
    k = Kernel(log, "s1")
    k.execute("import subprocess; p = subprocess.Popen(['sleep', '600'])")
    uid = k.rt.uid
    k.close()
    assert not uids._uid_busy(uid)
    with pytest.raises(RuntimeError):
        k.execute("print(1)")


def test_fail_closed_without_sandbox(log, monkeypatch):
    monkeypatch.setattr(sbx, "_CHECKED", {})
    monkeypatch.setattr(sbx.os, "geteuid", lambda: 1000)
    with pytest.raises(SandboxError, match="sandbox='off'"):
        Kernel(log, "s1")
    assert log.max_seq() == 3  # nothing ran, nothing logged


def test_fail_closed_when_python_unreachable(log, tmp_path):
    sbx._CHECKED.pop(str(tmp_path / "py"), None)
    os.symlink("/usr/bin/python3", tmp_path / "py")
    os.chmod(tmp_path, 0o700)
    with pytest.raises(SandboxError, match="cannot execute"):
        Kernel(log, "s1", python=str(tmp_path / "py"))


def test_opt_out_is_loud_and_recorded(log, capfd):
    with Kernel(log, "s1", sandbox="off") as k:
        r = k.execute("import os; print(os.getuid())")
    assert r.stdout == "0\n"
    assert "WITHOUT SANDBOX" in capfd.readouterr().err
    assert log.expand(r.seqs[0]).meta["sandbox"] == "off"
    assert log.expand(r.seqs[1]).meta["sandbox"] == "off"


def test_export_notebook_runs_in_nbclient(log, tmp_path):
    import nbformat
    from nbclient import NotebookClient

    from scroll.kernel.notebook import export_notebook

    with Kernel(log, "s1", timeout=2, capability=Capability(log, sessions=["chat"], own_session="s1")) as k:
        k.execute("x = 20")
        k.execute("print(x + 1)")
        found = k.execute("print(sorted(h.seq for h in ms.search('Miso', session='chat')))").stdout
        k.execute("raise KeyError('gone')")
        k.execute("while True: pass")
        k.execute("print('end')")
    info = export_notebook(log, "s1", tmp_path / "s1.ipynb")
    assert info["cells"] == 5 and len(info["skipped"]) == 1
    nb = nbformat.read(tmp_path / "s1.ipynb", as_version=4)
    NotebookClient(nb, timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()
    outs = ["".join(o.get("text", "") for o in c.get("outputs", []) if o.output_type == "stream")
            for c in nb.cells if c.cell_type == "code"]
    assert found == "[1, 2]\n"  # the two turns that mention Miso
    assert outs[1:] == ["", "21\n", found, "", "end\n"]  # the notebook reproduces what the session printed
    assert nb.cells[4].outputs[0].ename == "KeyError"


def test_cli_run_and_export(log, tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    db = str(log.path)
    run = CliRunner().invoke(app, ["kernel", "run", "--db", db, "--session", "cli", "--json", "a = 5; print(a * 2)"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout)["stdout"] == "10\n"
    run = CliRunner().invoke(app, ["kernel", "run", "--db", db, "-s", "cli", "print(a)"])
    assert run.exit_code == 0 and run.stdout == "5\n"
    run = CliRunner().invoke(app, ["kernel", "run", "--db", db, "-s", "cli", "1/0"])
    assert run.exit_code == 1
    out = tmp_path / "cli.ipynb"
    ex = CliRunner().invoke(app, ["kernel", "export", "--db", db, "-s", "cli", str(out), "--json"])
    assert ex.exit_code == 0, ex.output
    assert json.loads(ex.stdout)["cells"] == 3 and out.exists()


def test_cli_run_reads_the_sessions_it_is_given(log):
    """Issue #30 item 16: `scroll kernel run --sessions` lets `ms` read those sessions besides its own;
    without it only its own; an unknown session is a clear error."""
    from typer.testing import CliRunner

    from scroll.cli import app

    log.append(session="notes", role="user", text="the zeppelin lands at noon")
    db, cell = str(log.path), "print(len(ms.search('zeppelin')))"
    alone = CliRunner().invoke(app, ["kernel", "run", "--db", db, "-s", "k1", cell])
    assert alone.exit_code == 0 and alone.stdout == "0\n", alone.output
    given = CliRunner().invoke(app, ["kernel", "run", "--db", db, "-s", "k2", "--sessions", "notes", cell])
    assert given.exit_code == 0 and given.stdout == "1\n", given.output
    bad = CliRunner().invoke(app, ["kernel", "run", "--db", db, "-s", "k3", "--sessions", "nope", cell])
    assert bad.exit_code == 1 and "no session 'nope'" in bad.output


def test_an_exported_notebook_replays_under_the_runs_sandbox_and_scope(log, tmp_path):
    """Issue #30 item 15: `scroll kernel export` records the run's session scope; `scroll kernel replay`
    runs the cells in a sandboxed kernel with that scope over a snapshot (the log is not written) and
    every cell prints what it printed in the run: the same hits (not the other session's), the same
    refused network."""
    from typer.testing import CliRunner

    from scroll.agent import Agent
    from scroll.cli import app
    from scroll.config import LoopConfig
    from scroll.llm.scripted import ScriptedLLM

    log.append(session="h1", role="user", text="the zeppelin lands at noon")
    log.append(session="h2", role="user", text="a zeppelin museum opened")
    cells = ["print([h.seq for h in ms.search('zeppelin', k=10)])",
             "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 22), timeout=2)\n    print('net open')\n"
             "except OSError as e:\n    print('net', type(e).__name__)",
             "final('done')"]
    cfg = LoopConfig(max_steps=4, cell_timeout=20, soft_budget=3000, hard_budget=4000)
    with Agent.open(log, ScriptedLLM([f"```python\n{c}\n```" for c in cells]), cfg, session="run1") as agent:
        assert agent.run("find the zeppelin", sessions=["h1"]).answer == "done"
    nb = tmp_path / "run1.ipynb"
    db = str(log.path)
    assert CliRunner().invoke(app, ["kernel", "export", str(nb), "--db", db, "-s", "run1"]).exit_code == 0
    import nbformat

    meta = nbformat.read(str(nb), as_version=4).metadata["scroll"]
    assert meta["sessions"] == ["h1", "run1"]
    n = log.max_seq()
    r = CliRunner().invoke(app, ["kernel", "replay", str(nb), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["cells"] == 3 and out["same"] == 3 and out["differ"] == [], out
    assert log.max_seq() == n                                # the log itself was not written


def test_kernels_of_a_dead_host_are_swept(log, tmp_path):
    import subprocess
    import sys

    script = ("import os, sys\nfrom scroll.events import EventLog\nfrom scroll.kernel import Kernel\n"
              f"k = Kernel(EventLog({str(tmp_path / 'other.db')!r}), 's')\n"
              "print(k.rt.path, k.rt.uid, flush=True)\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(__file__)), timeout=60)
    path, uid = out.stdout.split()
    # the kernel dies with its host (parent-death signal); its runtime dir is left over
    import time

    deadline = time.monotonic() + 5
    while uids._uid_busy(int(uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.isdir(path) and not uids._uid_busy(int(uid))
    with Kernel(log, "s1"):
        pass
    assert not os.path.exists(path) and not uids._uid_busy(int(uid))


def test_replay_skips_cells_that_now_fail(log, tmp_path):
    flag = tmp_path / "flag"
    with Kernel(log, "s1", timeout=2, sandbox="off") as k:
        k.execute("a = 1")
        k.execute(f"import os\nif os.path.exists({str(flag)!r}):\n    raise RuntimeError('now fails')\nb = 2")
        k.execute(f"import os, time\nif os.path.exists({str(flag)!r}):\n    os._exit(3)\nc = 3")
        k.execute("d = a + 3")
        flag.write_text("x")
        r = k.execute("import os; os._exit(1)")
        assert "replayed 2 logged cell(s)" in r.notice
        assert "raised on replay" in r.notice and "dropped" in r.notice
        r = k.execute("print(a, d, 'b' in dir(), 'c' in dir())")
        assert r.stdout == "1 4 False False\n"


def test_prelude_runs_at_every_start_unlogged(log):
    with Kernel(log, "s1", prelude="def final(a):\n    print('FINAL:' + str(a))") as k:
        n = log.max_seq()
        r = k.execute("final(7)")
        assert r.stdout == "FINAL:7\n" and r.seqs[0] == n + 1
        r = k.execute("import os; os._exit(1)")
        assert k.execute("final(8)").stdout == "FINAL:8\n"


def test_handler_never_raises_on_arbitrary_requests(tmp_path):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from scroll.kernel.service import MsSocketServer

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=12)
    methods = st.sampled_from(["search", "expand", "payload", "recent", "sessions", "headlines",
                               "append", "ping", "m_search", "__class__"]) | st.text(max_size=10)
    requests = json_values | st.fixed_dictionaries(
        {"id": json_values, "method": methods, "params": st.dictionaries(
            st.sampled_from(["query", "k", "lo", "hi", "n", "handle", "session", "seq_range", "x"]),
            json_values, max_size=4)})

    with EventLog(tmp_path / "fuzz.db") as lg:
        lg.append(session="s", role="user", text="hello world")
        h = Capability(lg)

        @settings(max_examples=300, deadline=None)
        @given(requests)
        def check(req):
            rep = h.handle(req)
            assert isinstance(rep["ok"], bool)
            json.dumps(rep, default=str)

        check()
        # raw bytes through the socket server: garbage never breaks it
        srv = MsSocketServer(tmp_path / "f.sock", h)
        import socket as _s

        c = _s.socket(_s.AF_UNIX)
        c.connect(str(tmp_path / "f.sock"))
        srv.pump(0.1)
        c.sendall(b"\xff\xfe garbage\n{\"method\": \"ping\"}\n")
        for _ in range(5):
            srv.pump(0.05)
        data = c.recv(65536).decode()
        lines = [json.loads(x) for x in data.splitlines()]
        assert lines[0]["ok"] is False and lines[1]["result"] == "pong"
        c.close()
        srv.close()
