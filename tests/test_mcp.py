"""`scroll mcp`: the MCP server driven by the `mcp` SDK's own client.

Over stdio (the client spawns `python -m scroll.cli mcp`) and over streamable HTTP (a server
on a free loopback port, with a bearer token): log three events, search them, expand one,
read the resources, run cells that use `ms`, and hostile cells that meet the kernel's
limits while the server keeps answering. In process: `log` refuses other sessions and
origins, run_python fails closed without root while the other tools work, and a
non-loopback bind without a token is refused.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from scroll.events import EventLog  # noqa: E402
from scroll.surfaces.bind import BindRefused, is_loopback  # noqa: E402
from scroll.surfaces.mcp_server import build_server, check_bind  # noqa: E402
from scroll.surfaces.mcp_service import McpConfig, McpService  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EVENTS = [{"role": "user", "text": "the falcon project deadline moved to friday"},
          {"role": "assistant", "text": "noted: falcon ships friday, not monday"},
          {"role": "user", "text": "the falcon staging password rotates weekly", "kind": "note",
           "meta": {"source": "chat"}}]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the kernel sandbox needs root")


@pytest.fixture
def open_dir():
    """A world-traversable dir outside /tmp (the kernel sees its own /tmp): the sandbox
    must hide the log by its mount namespace, not by permissions."""
    d = Path(tempfile.mkdtemp(prefix="scroll-mcp-", dir="/var/lib"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result
    return result.content[0].text


async def exercise(client, db: Path) -> None:
    """The shared script: log, search, expand, resources, cells with `ms`, hostile cells."""
    seqs = data(await client.call_tool("log", {"events": EVENTS}))["seqs"]
    assert len(seqs) == 3 and seqs == sorted(seqs)
    hits = data(await client.call_tool("search", {"query": "falcon friday", "k": 5}))["hits"]
    assert {h["seq"] for h in hits} == set(seqs)
    assert hits[0]["text"] in {e["text"] for e in EVENTS[:2]} and all(h["origin"] == "history" for h in hits)
    only_notes = data(await client.call_tool("search", {"query": "falcon", "kind": "note"}))["hits"]
    assert [h["seq"] for h in only_notes] == [seqs[2]]
    one = data(await client.call_tool("expand", {"lo": seqs[1]}))["event"]
    assert one["text"] == EVENTS[1]["text"] and one["role"] == "assistant"
    page = data(await client.call_tool("expand", {"lo": seqs[0], "hi": seqs[2]}))
    assert [e["seq"] for e in page["events"]] == seqs and page["next"] is None
    assert error_text(await client.call_tool("expand", {"lo": 10**9})).endswith("no event with seq 1000000000")

    sessions = json.loads((await client.read_resource("scroll://sessions")).contents[0].text)
    assert [s["session"] for s in sessions] == ["agent"] and sessions[0]["events"] == 3
    ev = json.loads((await client.read_resource(f"scroll://event/{seqs[2]}")).contents[0].text)
    assert ev["meta"] == {"source": "chat"} and ev["kind"] == "note"

    # a cell that uses ms; state persists between calls
    r = data(await client.call_tool("run_python", {"code": "hits = ms.search('falcon', k=10)\n"
                                                           "print(len(hits), sorted(h.seq for h in hits))"}))
    assert r["error"] is None and r["stdout"].strip() == f"3 {sorted(seqs)}"
    r = data(await client.call_tool("run_python", {"code": "print(hits[0].text.split()[1])"}))
    assert r["stdout"].strip() == "falcon"

    # hostile: an infinite loop hits the cell timeout while the server keeps answering
    done: dict = {}

    async def loop_cell():
        t0 = time.monotonic()
        done["loop"] = await client.call_tool("run_python", {"code": "while True:\n    pass"})
        done["loop_s"] = time.monotonic() - t0

    async with anyio.create_task_group() as tg:
        tg.start_soon(loop_cell)
        await anyio.sleep(0.5)
        t0 = time.monotonic()
        assert len(data(await client.call_tool("search", {"query": "falcon"}))["hits"]) == 3
        search_s = time.monotonic() - t0
    loop = data(done["loop"])
    assert loop["timed_out"] and loop["error"].startswith("TimeoutError"), loop
    assert search_s < 2.0 <= done["loop_s"], (search_s, done["loop_s"])
    r = data(await client.call_tool("run_python", {"code": "print(len(hits))"}))
    assert r["stdout"].strip() == "3"  # interrupted, not restarted: the session went on

    # hostile: no network (not even the host's loopback), the log and the host's files out of reach
    code = (f"import socket, os\n"
            f"try:\n    socket.create_connection(('127.0.0.1', 22), timeout=2); print('net: open')\n"
            f"except OSError as e:\n    print('net:', type(e).__name__)\n"
            f"for p in [{str(db)!r}, '/etc/scroll-mcp-pwn']:\n"
            f"    try:\n        open(p, 'ab').write(b'x'); print('write: ok', p)\n"
            f"    except OSError as e:\n        print('write:', type(e).__name__)\n"
            f"print('log visible:', os.path.exists({str(db)!r}))\n")
    out = data(await client.call_tool("run_python", {"code": code}))["stdout"]
    assert "net: open" not in out and "write: ok" not in out and "log visible: False" in out, out
    assert not Path("/etc/scroll-mcp-pwn").exists()
    # hostile: memory over the kernel's cap
    r = data(await client.call_tool("run_python", {"code": "b = bytearray(8 << 30)"}))
    assert "MemoryError" in (r["error"] or ""), r

    # the log holds the three history events and the cells (origin agent) of the one session
    with EventLog(db, readonly=True) as log:
        evs = list(log.events())
    assert {e.session for e in evs} == {"agent"}
    assert [e.seq for e in evs if str(e.origin) == "history"] == seqs
    assert {e.kind for e in evs if str(e.origin) == "agent"} == {"code", "output"}


def server_args(db: Path, *extra: str) -> list[str]:
    return ["-m", "scroll.cli", "mcp", "--db", str(db), "--session", "agent", "--timeout", "3",
            "--memory", "1G", *extra]


@pytest.mark.sandbox
@needs_root
@pytest.mark.timeout(180)
def test_stdio_end_to_end(open_dir, tmp_path):
    db = open_dir / "agent.db"
    params = StdioServerParameters(command=sys.executable, args=server_args(db), cwd=str(ROOT))

    async def main():
        with open(tmp_path / "server.err", "w") as err:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=err)) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert names == {"log", "search", "expand", "payload", "headlines", "run_python"}
                await exercise(client, db)
            # a new server on the same session: its kernel replays the session's cells first
            async with Client(stdio_client(params, errlog=err)) as client:
                r = data(await client.call_tool("run_python", {"code": "print(len(hits))"}))
                assert r["stdout"].strip() == "3" and "resumed session: replayed" in r["notice"], r

    anyio.run(main)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.sandbox
@needs_root
@pytest.mark.timeout(180)
def test_http_end_to_end_with_token(open_dir, tmp_path):
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    db, port, token = open_dir / "agent.db", free_port(), "t0ken-" + "x" * 20
    (tmp_path / "token").write_text(token + "\n")
    err = open(tmp_path / "server.err", "w")
    proc = subprocess.Popen([sys.executable, *server_args(db, "--transport", "http", "--port", str(port),
                                                          "--token-file", str(tmp_path / "token"))],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "server.err").read_text()
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        # no token, or a wrong one: 401 before the MCP layer
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            r = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
            assert r.status_code == 401, r.text

        async def main():
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                await exercise(client, db)

        anyio.run(main)
    finally:
        stop(proc)
        err.close()
    assert proc.returncode == 0, (tmp_path / "server.err").read_text()


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv (util-linux)")
@pytest.mark.timeout(120)
def test_as_an_ordinary_user_run_python_fails_closed_and_the_rest_works(open_dir, tmp_path):
    """The real condition: an MCP client that launches the server as an ordinary user."""
    os.chown(open_dir, 65534, 65534)
    db = open_dir / "agent.db"
    params = StdioServerParameters(
        command="setpriv", args=["--reuid=65534", "--regid=65534", "--clear-groups", "--",
                                 sys.executable, *server_args(db)], cwd=str(ROOT), env={"HOME": str(open_dir)})

    async def main():
        with open(tmp_path / "server.err", "w") as err:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=err)) as client:
                msg = error_text(await client.call_tool("run_python", {"code": "print(1)"}))
                assert msg.startswith("Error executing tool run_python: run_python is unavailable: kernel "
                                      "sandbox unavailable: the kernel sandbox needs root"), msg
                assert "sandbox='off'" not in msg  # no unsandboxed mode on this surface
                seqs = data(await client.call_tool("log", {"events": EVENTS}))["seqs"]
                hits = data(await client.call_tool("search", {"query": "falcon friday"}))["hits"]
                assert {h["seq"] for h in hits} == set(seqs)

    anyio.run(main)
    assert db.stat().st_uid == 65534  # the server really ran as that user


# ---- in process (no sandbox needed) ------------------------------------------------------
def in_process(tmp_path, **kw):
    cfg = McpConfig(db=tmp_path / "agent.db", session="agent", cell_timeout=3, **kw)
    svc = McpService(cfg)
    return svc, build_server(svc)


def test_log_writes_only_its_own_session_with_the_history_origin(tmp_path):
    svc, server = in_process(tmp_path)
    with EventLog(tmp_path / "agent.db") as log:
        log.append(session="other", role="user", text="other falcon", origin="history")

    async def main():
        async with Client(server) as client:
            refused = [
                ({"role": "user", "text": "falcon", "session": "other"}, "only to its own session 'agent'"),
                ({"role": "user", "text": "falcon", "origin": "agent"}, "'history' origin"),
                ({"role": "user", "text": "falcon", "origin": "system"}, "'history' origin"),
                ({"role": "user", "text": "falcon", "seq": 1}, "Extra inputs are not permitted"),
                ({"role": "user", "text": "bad \ud800"}, "not valid Unicode"),
            ]
            for row, why in refused:  # the good first row is not written either: all or none
                msg = error_text(await client.call_tool("log", {"events": [EVENTS[0], row]}))
                assert why in msg, msg
            assert "non-empty" in error_text(await client.call_tool("log", {"events": []}))
            ok = data(await client.call_tool("log", {"events": [
                {**EVENTS[0], "session": "agent", "origin": "history"},  # naming itself is fine
                {"role": "user", "text": "[1..2] task: forged", "kind": "headline",
                 "meta": {"lo": 1, "hi": 2, "task": "forged", "state": "s", "next": "n"}}]}))
            assert ok["session"] == "agent" and len(ok["seqs"]) == 2
            assert data(await client.call_tool("headlines", {}))["headlines"] == []  # a history row is no headline

    anyio.run(main)
    evs = list(svc.log.events())
    assert [(e.session, str(e.origin)) for e in evs] == [("other", "history"), ("agent", "history"), ("agent", "history")]
    svc.close()


def test_run_python_fails_closed_without_root_and_the_rest_works(tmp_path, monkeypatch):
    from scroll.kernel import sandbox as sbx

    monkeypatch.setattr(sbx, "_CHECKED", {})
    monkeypatch.setattr(sbx.os, "geteuid", lambda: 1000)  # as check_sandbox sees an ordinary user
    svc, server = in_process(tmp_path, sessions=["agent"])
    with EventLog(tmp_path / "agent.db") as log:
        hidden = log.append(session="elsewhere", role="user", text="falcon elsewhere")

    async def main():
        async with Client(server) as client:
            msg = error_text(await client.call_tool("run_python", {"code": "print(1)"}))
            assert "run_python is unavailable" in msg and "needs root" in msg and "docs/mcp.md" in msg, msg
            seqs = data(await client.call_tool("log", {"events": EVENTS}))["seqs"]
            hits = data(await client.call_tool("search", {"query": "falcon", "k": 10}))["hits"]
            assert sorted(h["seq"] for h in hits) == seqs  # 'elsewhere' is outside --sessions
            assert "no event" in error_text(await client.call_tool("expand", {"lo": hidden}))
            assert data(await client.call_tool("expand", {"lo": seqs[0]}))["event"]["text"] == EVENTS[0]["text"]
            assert data(await client.call_tool("headlines", {}))["headlines"] == []
            with pytest.raises(Exception, match="no event"):
                await client.read_resource(f"scroll://event/{hidden}")
            # the capability's budgets hold on this surface too
            assert "k must be in" in error_text(await client.call_tool("search", {"query": "x", "k": 10**6}))

    anyio.run(main)
    assert {e.kind for e in svc.log.events()} == {"message", "note"}  # no cell was logged
    svc.close()


def test_non_loopback_bind_needs_a_token(tmp_path):
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, None)
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        assert not is_loopback(host)
        with pytest.raises(BindRefused, match="needs a bearer token"):
            check_bind(host, None)
        check_bind(host, "a-token-of-enough-length")
    p = subprocess.run([sys.executable, *server_args(tmp_path / "x.db", "--transport", "http", "--host", "0.0.0.0")],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "needs a bearer token" in p.stderr, p.stderr
    assert not (tmp_path / "x.db").exists()  # refused before the log is opened


@pytest.mark.timeout(120)
def test_http_on_loopback_needs_a_token_made_and_printed_at_start(tmp_path):
    """Issue #30 item 10: without --token-file the HTTP server still requires a bearer token (it runs
    code and reads every session, and any local user reaches a loopback port): one is made and printed
    at start; requests without it get 401, with it the server answers; the version is in its info."""
    import re

    import httpx2

    from scroll import __version__

    port = free_port()
    proc = subprocess.Popen([sys.executable, *server_args(tmp_path / "x.db", "--transport", "http", "--port", str(port))],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        token, deadline = None, time.monotonic() + 60
        while token is None:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "server exited"
            assert time.monotonic() < deadline, "no token printed"
            m = re.search(r"token \(no --token-file given, made for this run\): (\S+)", line)
            token = m.group(1) if m else None
        assert len(token) >= 16
        url = f"http://127.0.0.1:{port}/mcp"
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.2)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "0"}}}
        head = {"Accept": "application/json, text/event-stream"}
        assert httpx2.post(url, json=init, headers=head).status_code == 401
        r = httpx2.post(url, json=init, headers={**head, "Authorization": f"Bearer {token}"})
        assert r.status_code == 200 and f'"version":"{__version__}"' in r.text.replace(" ", ""), r.text
    finally:
        stop(proc)


def test_cli_check_json_help_and_token_file(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    run = CliRunner().invoke
    r = run(app, ["mcp", "--help"])
    assert r.exit_code == 0 and "--token-file" in r.output and "--check" in r.output
    db = tmp_path / "x.db"
    r = run(app, ["mcp", "--db", str(db), "--session", "s", "--timeout", "7", "--check", "--json"])
    info = json.loads(r.output)
    assert r.exit_code == 0 and info["session"] == "s" and info["cell_timeout"] == 7
    assert info["run_python"] is (info["run_python_reason"] is None) and info["max_output_chars"] >= 200
    assert not db.exists()  # --check opens nothing
    (tmp_path / "short").write_text("abc")
    r = run(app, ["mcp", "--db", str(db), "--transport", "http", "--token-file", str(tmp_path / "short"), "--check"])
    assert r.exit_code == 1 and "at least 16 characters" in r.output
    r = run(app, ["mcp", "--db", str(db), "--sessions", " , ", "--check"])
    assert r.exit_code == 1 and "at least one session" in r.output
