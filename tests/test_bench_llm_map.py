"""scripts/bench_llm_map.py at small size: against a fake OpenAI-compatible HTTP server
(real parallel HTTP requests, counted on the server side) and through the sandboxed kernel."""
from __future__ import annotations

import importlib.util
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_llm_map.py"


def _script():
    spec = importlib.util.spec_from_file_location("bench_llm_map", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class SlowServer:
    """/v1/chat/completions after `delay` seconds; counts requests in flight."""

    def __init__(self, delay=0.05):
        self.lock, self.in_flight, self.max_in_flight, self.requests = threading.Lock(), 0, 0, 0
        self.schema_requests = 0  # the llm_map's constraint probe: a response_format this server ignores
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with srv.lock:
                    srv.in_flight += 1
                    srv.requests += 1
                    srv.schema_requests += "response_format" in body
                    srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
                time.sleep(delay)
                with srv.lock:
                    srv.in_flight -= 1
                text = json.dumps({"label": "negative" if "died" in body["messages"][-1]["content"] else "neutral"})
                data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_bench_against_a_fake_http_server(tmp_path):
    srv = SlowServer()
    try:
        out = tmp_path / "results" / "bench_llm_map.json"
        res = _script().main(["--url", srv.url, "--model", "fake", "--items", "16", "--concurrency", "4",
                              "--out", str(out)])
    finally:
        srv.stop()
    assert json.loads(out.read_text()) == res
    one, many = res["runs"]
    assert (one["concurrency"], many["concurrency"]) == (1, 4)
    assert one["ok"] == many["ok"] == 16 and one["calls"] == many["calls"] == 16
    assert one["max_in_flight"] == 1 and many["max_in_flight"] == 4
    # real parallel requests, seen by the server: warm-up, both runs, and one constraint probe per backend
    assert srv.max_in_flight == 4 and srv.schema_requests == 1
    assert srv.requests == 4 + 16 + 16 + srv.schema_requests
    assert res["speedup"] > 1.5 and res["backend"]["backend"] == "openai"
    assert {"git_sha", "machine", "versions"} <= set(res["provenance"])
    assert one["tokens"] == 16 * 58


def test_bench_refuses_unclear_arguments(tmp_path):
    with pytest.raises(SystemExit):
        _script().main(["--out", str(tmp_path / "x.json")])


@pytest.mark.sandbox
def test_bench_through_the_sandboxed_kernel(tmp_path):
    res = _script().main(["--scripted-latency", "0.02", "--items", "8", "--concurrency", "4", "--path", "kernel",
                          "--out", str(tmp_path / "k.json")])
    assert res["path"] == "kernel" and [r["ok"] for r in res["runs"]] == [8, 8]
    assert res["runs"][1]["max_in_flight"] == 4
