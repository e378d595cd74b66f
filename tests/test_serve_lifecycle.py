"""Server lifecycle with a stand-in server process (fast; the real vLLM is in test_serve_vllm).

The stand-in gets the exact vLLM argv (`python -m vllm.entrypoints.openai.api_server ...`);
only the interpreter is swapped for a script, via `start(..., python=SCRIPT)`.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serve import server
from serve.check import group_pids
from serve.presets import load_preset

FAKE_OK = r'''
import json, os, subprocess, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv
assert args[1:3] == ["-m", "vllm.entrypoints.openai.api_server"], args
port = int(args[args.index("--port") + 1])
name = args[args.index("--served-model-name") + 1]
open("env.json", "w").write(json.dumps(dict(os.environ)))
worker = subprocess.Popen(["sleep", "600"])  # like vLLM's engine core: same process group
print("fake vllm up on", port, "worker", worker.pid, flush=True)
time.sleep(float(os.environ.get("FAKE_DELAY", "0.3")))
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"" if self.path == "/health" else json.dumps({"data": [{"id": name}]}).encode()
        self.send_response(200 if self.path in ("/health", "/v1/models") else 404)
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
HTTPServer(("127.0.0.1", port), H).serve_forever()
'''

FAKE_DIES = r'''
import sys
print("INFO loading model", flush=True)
print("RuntimeError: CUDA out of memory (fake) kaput", file=sys.stderr, flush=True)
sys.exit(3)
'''

FAKE_HANGS = r'''
import subprocess, time
subprocess.Popen(["sleep", "600"])
print("starting forever", flush=True)
time.sleep(600)
'''


def _script(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text(f"#!{sys.executable}\n{body}")
    p.chmod(0o755)
    return str(p)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def _stop_leftovers(tmp_path):
    """A failing test must not leave its stand-in server running."""
    yield
    for state in tmp_path.glob("**/server.json"):
        server.stop(state.parent.name, run_root=state.parent.parent, grace=2)


@pytest.fixture
def model(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"num_attention_heads": 4,
                                               "max_position_embeddings": 8192}))
    (d / "tokenizer.json").write_text("{}")
    (d / "model.safetensors").write_bytes(b"x")
    return d


def _cfg(model, **kw):
    return load_preset("tiny", {"model": str(model), "backend": "cpu", "port": _free_port(), **kw})


def test_start_status_stop_kills_the_whole_group(tmp_path, model):
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    cfg = _cfg(model)
    root = tmp_path / "runs"
    h = server.start(cfg, run_root=root, python=fake, timeout=30)
    assert h.ready_s is not None and h.backend == "cpu"
    run_dir = root / "tiny"
    state = json.loads((run_dir / "server.json").read_text())
    assert state["pid"] == h.pid and state["url"] == h.url and state["argv"][0] == fake
    assert "fake vllm up" in (run_dir / "server.log").read_text()
    assert len(group_pids(h.pgid)) == 2  # server + worker
    env = json.loads((run_dir / "env.json").read_text())
    assert env["HF_HUB_OFFLINE"] == "1" and env["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert env["HOME"].startswith(str(run_dir))
    assert Path(env["TMPDIR"]).resolve() == run_dir / "tmp"
    assert len(env["TMPDIR"]) + 1 + 36 < 107  # vLLM's ZMQ ipc sockets live there

    st = server.status("tiny", run_root=root)
    assert st["running"] and st["healthy"] and st["models"] == ["tiny-qwen3"]
    with pytest.raises(server.AlreadyRunningError, match="already runs"):
        server.start(cfg, run_root=root, python=fake)

    out = server.stop("tiny", run_root=root)
    assert out["stopped"] and group_pids(h.pgid) == []
    assert not (run_dir / "server.json").exists()
    assert not server.status("tiny", run_root=root)["running"]
    assert not server._tmp_link(run_dir).is_symlink()  # the short TMPDIR link is gone too
    assert server.stop("tiny", run_root=root)["stopped"] is False  # idempotent


def test_cli_down_from_another_process(tmp_path, model):
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    root = tmp_path / "runs"
    h = server.start(_cfg(model), run_root=root, python=fake, timeout=30)
    cli = [str(Path(sys.executable).parent / "scroll")]
    r = subprocess.run(cli + ["serve", "status", "--run-root", str(root), "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["servers"]
    assert [x["name"] for x in rows] == ["tiny"] and rows[0]["healthy"]
    r = subprocess.run(cli + ["serve", "down", "tiny", "--run-root", str(root), "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["stopped"] is True
    assert group_pids(h.pgid) == []
    r = subprocess.run(cli + ["serve", "status", "tiny", "--run-root", str(root)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3 and "stopped" in r.stdout


def test_port_taken_is_a_clear_error_and_starts_nothing(tmp_path, model):
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        cfg = load_preset("tiny", {"model": str(model), "backend": "cpu", "port": port})
        with pytest.raises(server.PortInUseError, match=f"port {port} .* already in use"):
            server.start(cfg, run_root=tmp_path / "runs", python=fake)
    assert not (tmp_path / "runs" / "tiny" / "server.json").exists()


def test_another_server_answering_health_on_the_port_is_not_ready(tmp_path, model, monkeypatch):
    """Issue #30 item 13: the port is taken between the check and the start (simulated: the check is
    made to pass); a stranger answers /health there while this server never listens. `start` judges
    readiness by its own process group: a PortInUseError naming the stranger, this server stopped."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Health(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    stranger = HTTPServer(("127.0.0.1", 0), Health)
    port = stranger.server_address[1]
    threading.Thread(target=stranger.serve_forever, daemon=True).start()
    fake = _script(tmp_path, "fake_hangs.py", FAKE_HANGS)
    monkeypatch.setattr(server, "port_free", lambda host, port: True)
    root = tmp_path / "runs"
    try:
        with pytest.raises(server.PortInUseError, match=rf"port {port} answers /health, but from pid\(s\) "
                                                       rf"\[{os.getpid()}\], not this server"):
            server.start(_cfg(model, port=port), run_root=root, python=fake, timeout=30)
    finally:
        stranger.shutdown()
        stranger.server_close()
    assert not (root / "tiny" / "server.json").exists()
    assert server.listener_pids(port) is None


def test_server_dying_while_starting_reports_the_log_tail(tmp_path, model):
    fake = _script(tmp_path, "fake_dies.py", FAKE_DIES)
    root = tmp_path / "runs"
    with pytest.raises(server.ServerDiedError) as ei:
        server.start(_cfg(model), run_root=root, python=fake, timeout=30)
    msg = str(ei.value)
    assert "exited with code 3 while starting" in msg
    assert "CUDA out of memory (fake) kaput" in msg and "server.log" in msg
    assert not (root / "tiny" / "server.json").exists()


def test_startup_timeout_stops_the_group(tmp_path, model):
    fake = _script(tmp_path, "fake_hangs.py", FAKE_HANGS)
    root = tmp_path / "runs"
    t = time.time()
    with pytest.raises(server.StartupTimeoutError, match="not healthy after 2s") as ei:
        server.start(_cfg(model), run_root=root, python=fake, timeout=2)
    assert "starting forever" in str(ei.value)
    assert time.time() - t < 20
    # every process of the group is gone (the child sleep too)
    for stat in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            assert fake not in stat.read_text(), "stand-in server survived"
        except OSError:
            pass


def test_missing_model_folder_fails_before_spawning(tmp_path):
    cfg = load_preset("tiny", {"model": str(tmp_path / "nope"), "backend": "cpu",
                               "auto_build_tiny": False})
    with pytest.raises(server.ModelFolderError, match="does not exist"):
        server.start(cfg, run_root=tmp_path / "runs", python="/bin/false")
    assert not (tmp_path / "runs").exists()


def test_cli_serve_with_runs_a_command_then_stops(tmp_path, model):
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    root = tmp_path / "runs"
    port = _free_port()
    scroll = str(Path(sys.executable).parent / "scroll")
    r = subprocess.run([scroll, "serve", "with", "tiny", "--model", str(model), "--backend", "cpu",
                        "--port", str(port), "--run-root", str(root), "--vllm-python", fake,
                        "--", "serve", "status", "tiny", "--run-root", str(root), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["servers"]  # what the inner command saw: a healthy server
    assert rows[0]["healthy"] and rows[0]["port"] == port
    assert f"ready at http://127.0.0.1:{port}/v1" in r.stderr
    assert group_pids(rows[0]["pgid"]) == []  # stopped afterwards
    assert not (root / "tiny" / "server.json").exists()


def test_cli_serve_up_foreground_stops_on_sigterm(tmp_path, model):
    import signal

    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    root = tmp_path / "runs"
    scroll = str(Path(sys.executable).parent / "scroll")
    p = subprocess.Popen([scroll, "serve", "up", "tiny", "--model", str(model), "--backend", "cpu",
                          "--port", str(_free_port()), "--run-root", str(root),
                          "--vllm-python", fake, "--foreground", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    info = json.loads(p.stdout.readline())  # printed once healthy
    assert info["ok"] and server.status("tiny", run_root=root)["healthy"]
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 0
    assert group_pids(info["pgid"]) == []
    assert not (root / "tiny" / "server.json").exists()


def test_cli_serve_check_with_stand_in(tmp_path, model):
    from typer.testing import CliRunner

    from scroll.cli import app

    fake = _script(tmp_path, "fake_chat.py", FAKE_OK.replace(
        "    def log_message", CHAT_HANDLER + "    def log_message"))
    r = CliRunner().invoke(app, ["serve", "check", "tiny", "--model", str(model), "--backend", "cpu",
                                 "--port", str(_free_port()), "--run-root", str(tmp_path / "runs"),
                                 "--vllm-python", fake, "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["ok"] and rep["reply"] == "pong" and len(rep["latency_s"]) == 3
    assert rep["left_in_group"] == [] and rep["rss_mb"] > 0


CHAT_HANDLER = '''
    def do_POST(self):
        n = int(self.headers["Content-Length"]); self.rfile.read(n)
        body = json.dumps({"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
'''


def _time_wait_entries(port: int) -> int:
    """Sockets in TIME-WAIT whose local port is `port` (/proc/net/tcp state 06)."""
    n = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        n += sum(1 for ln in lines if ln.split()[1].endswith(f":{port:04X}") and ln.split()[3] == "06")
    return n


def _port_in_time_wait() -> int:
    """A loopback port whose only socket is a server-side connection in TIME-WAIT (what a
    stopped HTTP server leaves behind: it closed its connections first)."""
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", 0))
    lst.listen()
    port = lst.getsockname()[1]
    cli = socket.create_connection(("127.0.0.1", port))
    conn, _ = lst.accept()
    conn.close()  # the server end closes first -> it (local port = port) enters TIME-WAIT
    time.sleep(0.1)
    cli.close()
    lst.close()
    time.sleep(0.1)
    return port


def test_port_in_time_wait_is_free():
    port = _port_in_time_wait()
    assert _time_wait_entries(port) >= 1
    with socket.socket() as s, pytest.raises(OSError):  # a bind without SO_REUSEADDR trips on it
        s.bind(("127.0.0.1", port))
    assert server.port_free("127.0.0.1", port)
    # a live listener still counts as taken
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
        assert not server.port_free("127.0.0.1", port)


def test_up_right_after_down_on_the_same_port(tmp_path, model):
    """`serve up` right after `serve down`: the health checks leave the stopped server's
    connections in TIME-WAIT; the port check must not take that for a taken port."""
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    root = tmp_path / "runs"
    cfg = _cfg(model)
    h = server.start(cfg, run_root=root, python=fake, timeout=30)
    assert server.status("tiny", run_root=root)["healthy"]
    server.stop("tiny", run_root=root)
    assert group_pids(h.pgid) == []
    assert _time_wait_entries(cfg.port) >= 1  # the situation this test is about
    h2 = server.start(cfg, run_root=root, python=fake, timeout=30)
    assert h2.port == cfg.port and server.status("tiny", run_root=root)["healthy"]
    server.stop("tiny", run_root=root)


def test_cli_serve_with_json_prints_server_events(tmp_path, model):
    fake = _script(tmp_path, "fake_ok.py", FAKE_OK)
    root = tmp_path / "runs"
    port = _free_port()
    scroll = str(Path(sys.executable).parent / "scroll")
    r = subprocess.run([scroll, "serve", "with", "tiny", "--model", str(model), "--backend", "cpu",
                        "--port", str(port), "--run-root", str(root), "--vllm-python", fake, "--json",
                        "--", "serve", "status", "tiny", "--run-root", str(root), "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x.get("event") for x in lines] == ["server_ready", None, "server_stopped"]
    ready, inner, stopped = lines
    assert ready["url"] == f"http://127.0.0.1:{port}" and ready["command"][:2] == ["scroll", "serve"]
    assert inner["servers"][0]["healthy"]  # the wrapped command's own output, unchanged
    assert stopped["ok"] and stopped["exit_code"] == 0 and group_pids(stopped["pgid"]) == []
    # the wrapped command's exit status comes through; a bad preset is one JSON error line
    r = subprocess.run([scroll, "serve", "with", "no-such-preset", "--json", "--", "serve", "presets"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    err = json.loads(r.stdout)
    assert err["event"] == "error" and "no preset named" in err["message"]
