"""scripts/bench_oolong_map.py at small size against a fake OpenAI-compatible server: the
mapper arms' per-item label accuracy is computed host-side from each map's results (a
deliberately wrong label for one wording shows up exactly), the guided arm asks for the schema
and the unguided one does not (the fake answers prose to some unguided items: the schema-valid
rates tell them apart), the rule arm is exact, and the direct arm runs only on the window that fits."""
from __future__ import annotations

import importlib.util
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scroll.bench.oolong import generate_window
from scroll.operators.llm_map import MAP_SYSTEM
from scroll.policies.mapper import classify, instance_of, read_call

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_oolong_map.py"


def _script():
    spec = importlib.util.spec_from_file_location("bench_oolong_map", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FakeModel:
    """Map calls: the rule's label, except "Where ..." -> entity (wrong); without a response_format,
    "What ..." items get prose (not JSON). The structured-output probe gets its nonce; other
    prompts: "Answer: 3"."""

    def __init__(self):
        self.map_calls = self.direct_calls = self.probes = self.guided_calls = 0
        self.lock = threading.Lock()
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._send(200, {"data": [{"id": "fake-smol"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if not self.path.endswith("/chat/completions"):
                    return self._send(404, {"error": "no such route"})
                msgs = body["messages"]
                schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
                if "probe" in schema.get("properties", {}):
                    text = json.dumps({"probe": schema["properties"]["probe"]["enum"][0]})
                    with srv.lock:
                        srv.probes += 1
                elif msgs[0]["content"] == MAP_SYSTEM:
                    text = instance_of(read_call(msgs)[0])
                    label = "entity" if text.startswith("Where") else classify(text)
                    guided = bool(schema)
                    text = json.dumps({"label": label}) if guided or not text.startswith("What") else f"It is {label}"
                    with srv.lock:
                        srv.map_calls += 1
                        srv.guided_calls += guided
                else:
                    text = "Answer: 3"
                    with srv.lock:
                        srv.direct_calls += 1
                self._send(200, {"id": "x", "object": "chat.completion", "model": body["model"],
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                              "finish_reason": "stop"}],
                                 "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58}})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.mark.sandbox
def test_the_script_measures_label_accuracy_and_scores_side_by_side(tmp_path, capsys):
    srv = FakeModel()
    try:
        res = _script().main(["--model-url", srv.url, "--model", "fake-smol", "--sizes", "40,150", "--limit", "3",
                              "--window", "2048", "--out-dir", str(tmp_path / "runs"),
                              "--out", str(tmp_path / "r.json")])
    finally:
        srv.close()
    assert json.loads((tmp_path / "r.json").read_text()) == res
    assert res["provenance"]["git_sha"] and res["provenance"]["machine"]["cores"]
    assert res["model"]["model"] == "fake-smol" and res["sizes"] == [40, 150]
    small, big = res["windows"]
    assert (small["items"], big["items"]) == (40, 150)
    for w, n in ((small, 40), (big, 150)):
        rule, guided, unguided = w["arms"]["rule"], w["arms"]["guided"], w["arms"]["unguided"]
        assert (rule["correct"], rule["mean_score"], rule["label_accuracy"]) == (3, 1.0, 1.0)
        window, _ = generate_window(0, n, window_id=0 if n == 40 else 1)
        where = sum(1 for i in window.items if i.text.startswith("Where"))
        what = sum(1 for i in window.items if instance_of(i.text).startswith("What"))
        assert where > 0 and what > 0
        assert guided["maps"] == 3 and guided["items"] == 3 * n and guided["items_failed"] == 0
        assert guided["items_correct"] == 3 * (n - where) and guided["label_accuracy"] == round((n - where) / n, 4)
        assert guided["confusion"]["location -> entity"] == 3 * where
        assert guided["structured"]["enforced"] is True and guided["guided_calls"] == guided["calls"] == 3 * n
        assert guided["schema_valid_first"] == 1.0
        assert unguided["structured"]["enforced"] is False and "off by config" in unguided["structured"]["reason"]
        assert unguided["guided_calls"] == 0 and unguided["items_failed"] == 3 * what
        assert unguided["schema_valid_first"] == round((n - what) / n, 4) and unguided["schema_valid_all"] < 1
        labels = [i.label for i in window.items]
        assert guided["majority_baseline"] == round(max(labels.count(x) for x in set(labels)) / n, 4)
    assert small["arms"]["direct"]["questions"] == 3 and small["arms"]["direct"]["mean_score"] is not None
    assert "skipped" in big["arms"]["direct"] and big["window_tokens"] > big["room_tokens"]
    assert srv.direct_calls == 3 and srv.probes == 6  # one probe per guided task (its map backend)
    assert srv.guided_calls == 3 * (40 + 150)
    out = capsys.readouterr().out
    assert "guided" in out and "unguided" in out and "skipped" in out
