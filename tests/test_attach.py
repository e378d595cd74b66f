"""ms.attach: units over the real client and socket service (no kernel), a process killed
mid-attach, `scroll import --attach`, then the path a model takes: Agent.run with
ScriptedLLM replies, cells in the sandboxed kernel attach, read back and get refused, and
the file ids stay in the headline index after eviction."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

from scroll import EventLog
from scroll.capability import Capability
from scroll.files import FileAttacher, FileLimits
from scroll.kernel import ms_client
from scroll.kernel.service import serve_in_thread
from scroll.llm.scripted import ScriptedLLM


def _payload_files(log) -> list:
    root = log.payloads.root
    return sorted(p.name for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def ms_at(log, tmp_path):
    """(make(limits) -> (ms client rooted at work/, capability), work dir)."""
    work = tmp_path / "work"
    work.mkdir()
    stops = []

    def make(**limits):
        cap = Capability(log, sessions=["s"], own_session="s", files=FileAttacher(log, "s", FileLimits(**limits)))
        path = str(tmp_path / f"ms{len(stops)}.sock")
        _, stop = serve_in_thread(path, lambda: cap)
        stops.append(stop)
        return ms_client.Ms(path, timeout=30, root=str(work)), cap

    yield make, work
    for s in stops:
        s.set()


def test_attach_stores_the_bytes_whole_and_logs_one_summary_event(ms_at, log):
    make, work = ms_at
    ms, _ = make()
    data = os.urandom(1_300_000)  # binary, three 512 KiB chunks
    (work / "blob.bin").write_bytes(data)
    (work / "t.csv").write_text("a,b\n" + "".join(f"{i},{i * i}\n" for i in range(50_000)))
    a = ms.attach("blob.bin")
    c = ms.attach(str(work / "t.csv"))  # an absolute path inside the working dir is fine
    assert (a.name, a.type, a.size, a.sha256) == ("blob.bin", "binary", len(data), hashlib.sha256(data).hexdigest())
    assert a.handle == "sha256:" + a.sha256 and "binary: unknown binary data" in str(a)
    assert c.type == "csv" and c.facts["rows"] == 50_000 and "50000 rows x 2 columns" in str(c)
    # the whole content, byte for byte, through ms.payload pages (any offset / length)
    assert ms.payload(a.handle) == data
    assert ms.payload(a.handle, 1_000_000, 200_000) == data[1_000_000:1_200_000]
    assert ms.payload(c.handle, 0, 4) == "a,b\n"
    assert ms.payload(c.handle) == (work / "t.csv").read_text()
    events = [e for e in log.events(session="s") if e.kind == "file"]
    assert [e.seq for e in events] == [a.seq, c.seq]
    ev = events[1]
    assert str(ev.origin) == "agent" and ev.payload is None            # the content is not the event's text
    assert ev.text == str(c) and c.handle in ev.text and ev.tokens <= FileLimits().summary_tokens
    assert ev.meta["file"]["sha256"] == c.sha256 and ev.meta["file"]["type"] == "csv"
    assert ms.expand(c.seq).text == str(c) and ms.expand(c.seq).meta["file"]["handle"] == c.handle
    assert log.verify()["ok"]


def test_paths_outside_the_working_dir_are_refused(ms_at, log, tmp_path):
    make, work = ms_at
    ms, _ = make()
    (tmp_path / "secret.txt").write_text("top secret")
    os.symlink(tmp_path / "secret.txt", work / "link.txt")
    os.symlink("/etc", work / "etc")
    (work / "sub").mkdir()
    (work / "sub" / "ok.txt").write_text("fine")
    os.symlink(work / "sub" / "ok.txt", work / "inside.txt")  # a symlink that stays inside is fine
    for bad in ("../secret.txt", str(tmp_path / "secret.txt"), "link.txt", "etc/hostname", "/etc/hostname",
                "sub/../../secret.txt"):
        with pytest.raises(ms_client.MsError, match="outside the kernel's working directory"):
            ms.attach(bad)
    with pytest.raises(ms_client.MsError, match="is not a regular file"):
        ms.attach("sub")
    with pytest.raises(ms_client.MsError, match="cannot open 'nope.txt'"):
        ms.attach("nope.txt")
    assert ms.attach("inside.txt").name == "ok.txt" and ms.attach("sub/ok.txt").size == 4
    assert [e.meta["file"]["name"] for e in log.events(kind="file")] == ["ok.txt", "ok.txt"]


def test_the_size_cap_is_refused_up_front(ms_at, log):
    make, work = ms_at
    ms, _ = make(attach_max_bytes=100_000)
    (work / "big.txt").write_bytes(b"x" * 100_001)
    sent = []
    orig = ms._call
    ms._call = lambda method, **p: sent.append(method) or orig(method, **p)
    with pytest.raises(ms_client.MsError, match=r"big.txt is 100001 bytes; the limit is 100000 \(config "
                                                  "attach_max_bytes\\). Nothing was stored"):
        ms.attach("big.txt")
    assert sent == ["attach_begin"]                     # no byte moved
    assert not [e for e in log.events() if e.kind == "file"] and _payload_files(log) == []


def test_hostile_chunks_leave_no_payload_and_no_event(ms_at, log):
    make, work = ms_at
    ms, cap = make()
    b64 = lambda b: __import__("base64").b64encode(b).decode()  # noqa: E731
    st = ms._call("attach_begin", name="../../etc/x.txt", size=10)["stage"]
    with pytest.raises(ms_client.MsError, match="more bytes than the 10 declared"):
        ms._call("attach_chunk", stage=st, b64=b64(b"y" * 11))
    st = ms._call("attach_begin", name="x.txt", size=3)["stage"]
    with pytest.raises(ms_client.MsError, match="not valid base64"):
        ms._call("attach_chunk", stage=st, b64="@@@")
    st = ms._call("attach_begin", name="x.txt", size=3)["stage"]
    ms._call("attach_chunk", stage=st, b64=b64(b"abc"))
    with pytest.raises(ms_client.MsError, match="sha256 of the bytes received differs"):
        ms._call("attach_end", stage=st, sha256="0" * 64)
    st = ms._call("attach_begin", name="x.txt", size=3)["stage"]
    with pytest.raises(ms_client.MsError, match="2 of 3 bytes received"):
        ms._call("attach_chunk", stage=st, b64=b64(b"ab")) and ms._call("attach_end", stage=st, sha256="0")
    with pytest.raises(ms_client.MsError, match="no open attach 99"):
        ms._call("attach_chunk", stage=99, b64="")
    with pytest.raises(ms_client.MsError, match="is not a file name"):
        ms._call("attach_begin", name="..", size=1)
    # a cell that ends with an attach still open (timeout, killed kernel): aborted with it
    ms._call("attach_begin", name="open.txt", size=5)
    cap.end_cell()
    assert not [e for e in log.events() if e.kind == "file"] and _payload_files(log) == []
    # a read-only surface has nothing to attach to
    ro = Capability(log, sessions=None)
    assert "not available here" in ro.handle({"method": "attach_begin", "params": {"name": "a", "size": 1}})["error"]


def test_a_process_killed_mid_attach_leaves_the_log_consistent(tmp_path):
    db = tmp_path / "k.db"
    script = textwrap.dedent(f"""
        import base64, os, signal
        from scroll import EventLog
        from scroll.files import FileAttacher
        log = EventLog({str(db)!r})
        log.append("s", "user", "before")
        f = FileAttacher(log, "s")
        st = f.attach_begin("big.csv", 3 << 20)["stage"]
        for _ in range(3):
            f.attach_chunk(st, base64.b64encode(os.urandom(512 << 10)).decode())
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert r.returncode == -9, r.stderr.decode()
    with EventLog(db) as log:
        assert log.verify()["ok"]
        assert [e.kind for e in log.events()] == ["message"]          # no half event
        assert all(n.startswith(".tmp-") for n in _payload_files(log))  # at most an orphan temp file
        log.append("s", "user", "after")                               # the log goes on
        assert log.verify()["ok"]


def test_scroll_import_attach(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    db = tmp_path / "h.db"
    hist = tmp_path / "h.jsonl"
    hist.write_text(json.dumps({"session": "s1", "role": "user", "text": "see the attached sales"}) + "\n")
    csv = tmp_path / "sales.csv"
    csv.write_text("region,amount\n" + "".join(f"r{i % 4},{i}\n" for i in range(1000)))
    run = CliRunner().invoke
    r = run(app, ["import", str(hist), "--attach", str(csv), "--db", str(db), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["imported"] == 1 and out["attached"][0]["name"] == "sales.csv"
    r = run(app, ["import", "--attach", str(tmp_path / "nope.csv"), "--attach-session", "s2", "--db", str(db)])
    assert r.exit_code != 0 and "No such file" in r.output
    r = run(app, ["import", "--attach", str(csv), "--db", str(db)])
    assert r.exit_code != 0 and "--attach-session" in r.output
    with EventLog(db) as log:
        ev = [e for e in log.events() if e.kind == "file"]
        assert len(ev) == 1 and ev[0].session == "s1" and str(ev[0].origin) == "history"
        assert "1000 rows x 2 columns" in ev[0].text
        assert log.payloads.get(ev[0].meta["file"]["handle"]) == csv.read_bytes()
        assert log.search("sales region amount", k=3)[0].seq == ev[0].seq  # found by the default search


# ---- the path a model takes ---------------------------------------------------------------
def _agent(log, cells, session, **cfg):
    from scroll.agent import Agent
    from scroll.config import LoopConfig

    it = iter(cells)
    exposures: list[str] = []
    config = LoopConfig(**{"max_steps": len(cells) + 1, "cell_timeout": 60, "max_output_chars": 4000, **cfg})
    agent = Agent.open(log, ScriptedLLM(lambda m: "```python\n" + next(it) + "\n```"), config, session=session,
                  on_step=lambda rec, reply, exp: exposures.append(exp))
    return agent, exposures


@pytest.mark.sandbox
def test_attach_through_agent_run_in_the_sandboxed_kernel(log):
    cells = [
        # a CSV, a Python module and a binary file in the kernel's own working dir
        'import hashlib, os, random\nrandom.seed(1)\n'
        'open("sales.csv", "w").write("region,amount,day\\n" + "".join(f"r{i % 5},{i * 0.5},2024-02-{i % 28 + 1:02d}\\n" '
        'for i in range(60000)))\n'
        'open("mod.py", "w").write("".join(f"class K{i}:\\n    def run(self, x):\\n        return x\\n\\n" for i in range(3000)))\n'
        'open("blob.bin", "wb").write(bytes(random.randrange(256) for _ in range(700000)))\n'
        'a, b, c = ms.attach("sales.csv"), ms.attach("mod.py"), ms.attach("blob.bin")\nprint(a)\nprint(repr(b))',
        # read back in pages: byte-identical
        'def pages(h, n=1 << 20):\n    out, off = [], 0\n    while True:\n        p = ms.payload(h, off, n)\n'
        '        p = p.encode() if isinstance(p, str) else p\n        if not p:\n            return b"".join(out)\n'
        '        out.append(p); off += len(p)\n'
        'for f in (a, b, c):\n    print(f.name, hashlib.sha256(pages(f.handle)).hexdigest() == '
        'hashlib.sha256(open(f.name, "rb").read()).hexdigest() == f.sha256)',
        # refused: escapes and a symlink out of the working dir, a file over the cap
        'os.symlink("/etc/hostname", "host")\nopen("huge.txt", "wb").write(b"z" * (3 << 20))\n'
        'for p in ("../conn.json", "/etc/hostname", "host", "huge.txt"):\n    try:\n        ms.attach(p)\n'
        '    except Exception as e:\n        print("refused", p, "|", str(e)[:90])',
        'final("ok")',
    ]
    agent, exp = _agent(log, cells, "att", attach_max_bytes=2 << 20)
    with agent:
        res = agent.run("Attach the files.")
    assert res.reason == "final", exp
    head = exp[0].splitlines()
    assert head[0].startswith("[file] sales.csv (csv, ") and "60000 rows x 3 columns" in exp[0]
    assert "  amount: float [0..499.5]" in exp[0] and "<Attachment seq=" in exp[0] and "'mod.py' python" in exp[0]
    assert exp[1].splitlines() == ["sales.csv True", "mod.py True", "blob.bin True"], exp[1]
    refused = exp[2].splitlines()
    assert refused[0].startswith("refused ../conn.json | attach: '../conn.json' is outside the kernel's")
    assert refused[1].startswith("refused /etc/hostname | attach: '/etc/hostname' is outside")
    assert refused[2].startswith("refused host | attach: 'host' is outside")
    assert refused[3].startswith("refused huge.txt | CapabilityError: attach: huge.txt is 3145728 bytes; "
                                 "the limit is 2097152"), refused[3]
    files = [e for e in log.events(session="att") if e.kind == "file"]
    assert [e.meta["file"]["name"] for e in files] == ["sales.csv", "mod.py", "blob.bin"]
    assert all(e.tokens <= 600 for e in files) and files[1].meta["file"]["facts"]["classes"] == 3000
    # the exposures held the summaries, never the content
    assert all(len(x) < 4000 for x in exp) and "r3,1.5" not in exp[0].split("sample rows:")[0]


@pytest.mark.sandbox
def test_file_ids_stay_in_the_headlines_after_eviction_and_a_killed_kernel_stores_nothing(log):
    from scroll.agent import step_prompts

    filler = 'print("x" * 1500)'
    cells = [
        'open("notes.md", "w").write("# Plan\\n## Step one\\nDo it.\\n")\nf = ms.attach("notes.md")\nprint(f.seq)',
        filler, filler,
        # a kernel that dies mid-attach: no file event, no payload; the session goes on
        'import base64, os\nst = ms._call("attach_begin", name="half.txt", size=10)["stage"]\n'
        'ms._call("attach_chunk", stage=st, b64=base64.b64encode(b"01234").decode())\nos._exit(1)',
        filler,
        'import json\nprint(json.dumps([h["files"] for h in ms.headlines()]))',
        'final("ok")',
    ]
    agent, exp = _agent(log, cells, "ev", soft_budget=1500, hard_budget=2500)
    with agent:
        res = agent.run("Remember the notes file.")
        index_text = agent.view._index_text
    assert res.reason == "final" and res.evictions >= 2, exp
    seq = int(exp[0])
    entry = f"notes.md (seq {seq})"
    assert f"files: {entry}" in index_text                   # the view's headline index names the file
    assert json.loads(exp[5])[0] == [{"seq": seq, "name": "notes.md"}], exp[5]  # ms.headlines() too
    heads = [e for e in log.events(session="ev") if e.kind == "headline"]
    assert heads[0].meta["files"] == [{"seq": seq, "name": "notes.md"}] and entry in heads[0].text
    assert [e.meta["file"]["name"] for e in log.events(session="ev") if e.kind == "file"] == ["notes.md"]
    assert "kernel" in exp[3].lower() or "died" in exp[3].lower(), exp[3]
    assert log.verify()["ok"]
    assert all(s.matches for s in step_prompts(log, "ev")), "replayed views must match, file refs included"
