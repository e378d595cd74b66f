"""ms.llm_map: units over the real client and socket service (no kernel), then the path a
model takes: Agent.run with ScriptedLLM replies, a cell in the sandboxed kernel calls it."""
from __future__ import annotations

import json
import threading
import time

import pytest

from scroll.capability import Capability
from scroll.kernel import ms_client
from scroll.kernel.service import serve_in_thread
from scroll.llm.scripted import ScriptedLLM
from scroll.operators import OperatorEngine, OperatorLimits, SchemaError, check_schema, parse_reply, validate
from scroll.operators.llm_map import MAP_SYSTEM

LABEL = {"type": "object", "properties": {"label": {"enum": ["even", "odd"]}}, "required": ["label"]}


def _item(messages) -> str:
    return messages[1]["content"].split("Item:\n", 1)[1].split("\n\nReply with", 1)[0]


class Mapper:
    """A scripted map backend: labels numbers, measures calls in flight."""

    def __init__(self, delay=0.0, bad_first=(), always_bad=(), block: threading.Event | None = None):
        self.delay, self.bad_first, self.always_bad, self.block = delay, set(bad_first), set(always_bad), block
        self.lock = threading.Lock()
        self.in_flight = self.max_in_flight = 0
        self.seen: dict[str, int] = {}

    def __call__(self, messages):
        item = _item(messages)
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.seen[item] = self.seen.get(item, 0) + 1
            n = self.seen[item]
        try:
            if self.block is not None:
                self.block.wait(10)
            time.sleep(self.delay * (1 + int(item) % 3) if item.isdigit() else self.delay)
            if item in self.always_bad or (item in self.bad_first and n == 1):
                return "I think it is even"  # not JSON
            return json.dumps({"label": "even" if int(item) % 2 == 0 else "odd"})
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def ms_over_socket(log, tmp_path):
    """(ms client, engine, llm factory): the real client and service around one capability."""
    made = {}

    def start(responder, **limits):
        llm = ScriptedLLM(responder)
        engine = OperatorEngine(log, "s", llm=llm, limits=OperatorLimits(**limits))
        cap = Capability(log, sessions=["s"], own_session="s", operators=engine)
        path = str(tmp_path / "ms.sock")
        t, stop = serve_in_thread(path, lambda: cap)
        made.update(stop=stop, engine=engine)
        return ms_client.Ms(path, timeout=30), engine, llm

    yield start
    if made:
        made["engine"].close()
        made["stop"].set()


def test_schema_subset_and_reply_parsing():
    check_schema(LABEL)
    with pytest.raises(SchemaError, match="unsupported keyword.*minimum"):
        check_schema({"type": "integer", "minimum": 0})
    with pytest.raises(SchemaError, match="type must be one of"):
        check_schema({"type": "float"})
    validate({"label": "odd", "x": 1}, LABEL)
    with pytest.raises(SchemaError, match=r"\$.label: \"three\" is not one of"):
        validate({"label": "three"}, LABEL)
    with pytest.raises(SchemaError, match="missing required"):
        validate({}, LABEL)
    with pytest.raises(SchemaError, match=r"\$\[1\]: expected integer"):
        validate([1, "2"], {"type": "array", "items": {"type": "integer"}})
    with pytest.raises(SchemaError, match="not allowed"):
        validate({"a": 1, "b": 2}, {"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    with pytest.raises(SchemaError, match="expected integer"):
        validate(True, {"type": "integer"})
    assert parse_reply('```json\n{"label": "odd"}\n```') == {"label": "odd"}
    assert parse_reply('Sure! {"label": "even"} hope that helps') == {"label": "even"}
    with pytest.raises(SchemaError, match="not JSON"):
        parse_reply("even")


def test_order_concurrency_retries_errors_payload_and_log(ms_over_socket, log):
    mapper = Mapper(delay=0.02, bad_first={"3", "7"}, always_bad={"5"})
    ms, engine, llm = ms_over_socket(mapper)
    items = [str(i) for i in range(12)]
    res = ms.llm_map(items, "Is the number even or odd?", schema=LABEL, concurrency=3, retries=2)
    # item order, whatever the completion order; failures explicit, never dropped
    assert [r["index"] for r in res] == list(range(12))
    assert [r.get("value") for r in res if r["ok"]] == [
        {"label": "even" if i % 2 == 0 else "odd"} for i in range(12) if i != 5]
    bad = res.errors()
    assert len(bad) == 1 and bad[0]["index"] == 5 and bad[0]["attempts"] == 3
    assert "failed after 3 attempt(s)" in bad[0]["error"] and "not JSON" in bad[0]["error"]
    # the concurrency limit, measured on the backend side and by the job
    assert mapper.max_in_flight == 3
    assert engine.jobs[res.job].status()["max_in_flight"] == 3
    # retries carry the validation error as guidance
    retry = [c["messages"] for c in llm.calls if len(c["messages"]) == 4 and _item(c["messages"]) == "3"]
    assert retry and retry[0][0]["content"] == MAP_SYSTEM
    assert retry[0][2] == {"role": "assistant", "content": "I think it is even"}
    assert "could not be used: the reply is not JSON" in retry[0][3]["content"]
    assert mapper.seen["3"] == 2 and mapper.seen["5"] == 3 and mapper.seen["0"] == 1
    # the JSONL payload: complete, in order, readable through ms.payload
    lines = ms.payload(res.handle).splitlines()
    assert [json.loads(x)["index"] for x in lines] == list(range(12))
    assert [json.loads(x) for x in lines] == list(res)
    # every model call logged in the calling session with origin agent; start/end records
    calls = [e for e in log.events(session="s") if e.kind == "map_call"]
    assert len(calls) == len(llm.calls) == 12 + 1 + 1 + 2
    assert all(str(e.origin) == "agent" and e.meta["job"] == res.job for e in calls)
    assert sum(1 for e in calls if e.meta["error"]) == 5
    assert json.loads(calls[0].text)["messages"][0]["content"] == MAP_SYSTEM
    recs = [e for e in log.events(session="s") if e.kind == "llm_map"]
    assert [e.meta["phase"] for e in recs] == ["start", "end"] and recs[0].seq == res.job
    assert recs[1].meta["handle"] == res.handle and recs[1].meta["failed"] == 1
    assert recs[1].meta["calls"] == 16


def test_without_schema_the_value_is_the_text_and_backend_errors_are_retried(ms_over_socket):
    from scroll.llm import LLMError

    seen = {}

    def fn(messages):
        item = _item(messages)
        seen[item] = seen.get(item, 0) + 1
        if item == "b" and seen[item] == 1:
            raise LLMError("503 from server", retryable=True)
        return f"  {item.upper()}  "

    ms, engine, llm = ms_over_socket(fn)
    res = ms.llm_map(["a", "b", {"k": 1}], "Upper-case it.", retries=1)
    assert res.values() == ["A", "B", '{"K": 1}'] and seen["b"] == 2
    assert ms.llm_map([], "nothing") == []


def test_budgets_refuse_up_front_and_bound_retries(ms_over_socket, log):
    mapper = Mapper(always_bad={"1"})
    ms, engine, llm = ms_over_socket(mapper, model_calls_budget=10)
    t0 = time.monotonic()
    with pytest.raises(ms_client.MsError, match="1000000 items; the limit per map is 20000"):
        ms.llm_map(range(10 ** 6), "Is it even?")
    with pytest.raises(ms_client.MsError, match="needs up to 11 model calls; this task has 10 of 10 left"):
        ms.llm_map(range(11), "Is it even?")
    assert time.monotonic() - t0 < 30 and llm.calls == []          # refused before any model call
    assert not [e for e in log.events(session="s") if e.kind in ("llm_map", "map_call")]
    # 8 first attempts fit; item 1's retries draw on the 2 calls left, then it fails explicitly
    res = ms.llm_map([str(i) for i in range(8)], "Is it even?", schema=LABEL, retries=5, concurrency=1)
    assert len(llm.calls) == 10 and engine.delegation.tree.budget.to_dict()["calls_free"] == 0
    assert res[1]["ok"] is False and "budget is spent" in res[1]["error"] and "not JSON" in res[1]["error"]
    assert all(r["ok"] for r in res if r["index"] != 1)
    with pytest.raises(ms_client.MsError, match="needs up to 1 model calls; this task has 0"):
        ms.llm_map(["0"], "again")
    ms2, engine2, _ = ms_over_socket(mapper, model_tokens_budget=500)
    with pytest.raises(ms_client.MsError, match="model tokens; this task has 500 of 500 left"):
        ms2.llm_map(["x" * 4000], "Is it even?")


def test_bad_requests_get_clear_errors(ms_over_socket):
    ms, engine, llm = ms_over_socket(Mapper())
    for kw, msg in [(dict(prompt=""), "prompt must be a non-empty string"),
                    (dict(prompt="p", schema={"type": "int"}), "schema \\$: type must be one of"),
                    (dict(prompt="p", concurrency=0), "concurrency must be in \\[1, 64\\]"),
                    (dict(prompt="p", retries=99), "retries must be in \\[0, 10\\]")]:
        with pytest.raises(ms_client.MsError, match=msg):
            ms.llm_map(["1"], **kw)
    with pytest.raises(TypeError):
        ms.llm_map([object()], "p")
    assert llm.calls == []
    bare = Capability(engine.log, own_session="s")
    rep = bare.handle({"id": 1, "method": "llm_map", "params": {"n": 1, "nbytes": 0, "prompt": "p"}})
    assert not rep["ok"] and "no model backend" in rep["error"]


def test_jobs_wait_cancel_results_and_close(ms_over_socket):
    gate = threading.Event()
    ms, engine, llm = ms_over_socket(Mapper(block=gate))
    job = ms.llm_map([str(i) for i in range(6)], "Is it even?", schema=LABEL, concurrency=2, wait=False)
    assert job.wait(0.3) is False and job.status()["state"] == "running"
    # the thread that answers `ms` stays responsive while the model calls block in the pool
    t0 = time.monotonic()
    assert ms.sessions()[0]["session"] == "s" and ms._call("job_wait", job=job.id, timeout=30)["state"] == "running"
    assert time.monotonic() - t0 < 1.5                                 # one wait holds it <= 0.25 s
    with pytest.raises(ms_client.MsError, match="still running"):
        job.results()
    other = ms.llm_map([str(i) for i in range(6)], "Odd?", schema=LABEL, concurrency=1, wait=False)
    other.cancel()
    gate.set()
    assert job.wait(20) and other.wait(20)
    res = job.results()
    assert [r["value"]["label"] for r in res] == ["even", "odd"] * 3
    cancelled = other.results()
    assert len(cancelled) == 6 and cancelled.failed >= 5                 # every item has a record
    assert all("cancelled" in r["error"] for r in cancelled if not r["ok"])
    assert other.status()["state"] == "cancelled"
    assert {s["job"] for s in ms.jobs()} == {job.id, other.id}
    # jobs die with their session
    gate.clear()
    late = ms.llm_map([str(i) for i in range(50)], "Even?", concurrency=2, wait=False)
    threading.Timer(0.3, gate.set).start()    # the two calls in flight end after close() cancelled the job
    engine.close()
    assert late.status()["state"] == "cancelled" and len(llm.calls) < 60


def test_cell_bound_maps_die_with_their_cell_and_replay_never_calls_the_model(log):
    gate = threading.Event()
    llm = ScriptedLLM(Mapper(block=gate))
    engine = OperatorEngine(log, "s", llm=llm)
    cap = Capability(log, own_session="s", operators=engine)

    def call(method, **params):
        rep = cap.handle({"id": 1, "method": method, "params": params})
        assert rep["ok"], rep
        return rep["result"]

    def start(items, detach):
        st = call("llm_map", n=len(items), nbytes=0, prompt="Even?", schema=LABEL, detach=detach)["stage"]
        call("map_items", stage=st, items=items)
        return call("map_start", stage=st)["job"]

    cap.begin_cell(time.monotonic() + 30)
    blocking, detached = start(["1", "2"], False), start(["3", "4"], True)
    cap.end_cell()                                  # the cell timed out while both ran
    gate.set()
    assert engine.jobs[blocking].wait(10) and engine.jobs[detached].wait(10)
    assert engine.jobs[blocking].status()["state"] == "cancelled"
    assert engine.jobs[detached].status()["state"] == "done"
    n = len(llm.calls)
    # a replayed cell gets the job its request started (no model call); a new request is refused
    cap.begin_cell(time.monotonic() + 30, replay=True)
    assert start(["3", "4"], True) == detached
    st = call("llm_map", n=1, nbytes=0, prompt="Even?", schema=LABEL, detach=True)["stage"]
    call("map_items", stage=st, items=["9"])
    rep = cap.handle({"id": 2, "method": "map_start", "params": {"stage": st}})
    assert not rep["ok"] and "not run again when the kernel replays" in rep["error"]
    cap.end_cell()
    # after a restart of the host process: restored from the logged end record
    fresh = OperatorEngine(log, "s", llm=llm)
    cap2 = Capability(log, own_session="s", operators=fresh)
    cap2.begin_cell(time.monotonic() + 30, replay=True)
    cap = cap2
    assert start(["3", "4"], True) == detached
    page = call("job_results", job=detached)
    assert [r["value"]["label"] for r in page["results"]] == ["odd", "even"] and page["next"] is None
    assert len(llm.calls) == n
    engine.close()


def test_map_llm_config_names_another_backend(log, tmp_path):
    cfg = tmp_path / "mapper.yaml"
    cfg.write_text("backend: scripted\nmodel: the-mapper\nresponses: ['X', 'Y']\n")
    loop = ScriptedLLM(["never"])
    engine = OperatorEngine(log, "s", llm=loop, limits=OperatorLimits(map_llm=str(cfg)))
    assert engine.map_llm().describe()["model"] == "the-mapper"
    from scroll.config import LoopConfig

    assert OperatorLimits.from_config(LoopConfig(map_llm=str(cfg), agent_map_depth=2)).agent_map_depth == 2
    with pytest.raises(ValueError, match="map_llm"):
        LoopConfig(map_llm="")
    engine.close()


@pytest.mark.sandbox
def test_through_agent_run_in_the_sandboxed_kernel(log):
    """The path a model takes: cells call ms.llm_map in the sandboxed kernel; a job started
    in one cell is waited on, read and cancelled in the next ones; 10**6 items are refused."""
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.prompts import SYSTEM_PROMPT

    cells = [
        'S = {"type": "object", "properties": {"label": {"enum": ["even", "odd"]}}, "required": ["label"]}\n'
        'r = ms.llm_map([str(i) for i in range(10)], "Is the number even or odd?", schema=S, concurrency=4)\n'
        'print([x["value"]["label"] if x["ok"] else "ERR" for x in r], len(r.errors()), r.errors()[0]["error"][:25])\n'
        'print("lines", len(ms.payload(r.handle).splitlines()))',
        'job = ms.llm_map([str(i) for i in range(20)], "Even or odd?", schema=S, concurrency=2, wait=False)\n'
        'slow = ms.llm_map([str(i) for i in range(40)], "Slowly: even or odd?", schema=S, concurrency=1, wait=False)\n'
        'print(job.id > 0, slow.status()["state"])',
        'print("waited", job.wait(30), len(job.results()), job.results().failed)\n'
        'slow.cancel(); slow.wait(10); res = slow.results()\n'
        'print("slow", slow.status()["state"], len(res), any("cancelled" in (x.get("error") or "") for x in res))',
        'left = ms.llm_map([str(i) for i in range(40)], "Slowly: even?", schema=S, concurrency=1, wait=False)\n'
        'try:\n    ms.llm_map(range(10**6), "Even?")\nexcept Exception as e:\n    print("refused:", e)',
        'final("done")',
    ]
    mapper = Mapper(always_bad={"5"})
    loop = iter(cells)

    def route(messages):
        if messages[0]["content"] == SYSTEM_PROMPT:
            return "```python\n" + next(loop) + "\n```"
        if messages[1]["content"].startswith("Slowly"):
            time.sleep(0.2)
        return mapper(messages)

    exposures = []
    cfg = LoopConfig(max_steps=6, cell_timeout=25, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
    with Agent.open(log, ScriptedLLM(route), cfg, session="lm", on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("Label the numbers.")
    assert res.reason == "final" and res.answer == "done", exposures
    labels = ["even", "odd", "even", "odd", "even", "ERR", "even", "odd", "even", "odd"]
    assert exposures[0].splitlines()[0] == f"{labels} 1 failed after 4 attempt(s)", exposures[0]
    assert "lines 10" in exposures[0]
    assert exposures[1] == "True running", exposures[1]
    assert exposures[2].startswith("waited True 20 1"), exposures[2]
    assert "slow cancelled 40 True" in exposures[2]
    assert "refused: CapabilityError: llm_map: 1000000 items; the limit per map is 20000" in exposures[3], exposures[3]
    calls = [e for e in log.events(session="lm") if e.kind == "map_call"]
    assert calls and all(str(e.origin) == "agent" for e in calls)
    ends = [e for e in log.events(session="lm") if e.kind == "llm_map" and e.meta["phase"] == "end"]
    # the job still running when the session ended died with it
    assert sorted(e.meta["state"] for e in ends) == ["cancelled", "cancelled", "done", "done"]
    left = [e.meta for e in ends if e.meta["state"] == "cancelled"][-1]
    assert left["total"] == left["ok"] + left["failed"] == 40 and left["failed"] >= 1   # every item has a record


@pytest.mark.sandbox
def test_a_kernel_restart_replays_the_map_without_calling_the_model(log):
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.prompts import SYSTEM_PROMPT

    cells = ['r = ms.llm_map(["1", "2", "3"], "Even or odd?", schema=' + json.dumps(LABEL) + ')\nprint(r.job)',
             "import os\nos._exit(1)",
             'print(r.job, r.values())',
             'final("ok")']
    loop, mapper = iter(cells), Mapper()
    llm = ScriptedLLM(lambda m: "```python\n" + next(loop) + "\n```" if m[0]["content"] == SYSTEM_PROMPT else mapper(m))
    exposures = []
    cfg = LoopConfig(max_steps=5, cell_timeout=20, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
    with Agent.open(log, llm, cfg, session="rs", on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("Label.")
    assert res.answer == "ok", exposures
    assert "replayed 1 logged cell" in exposures[1], exposures[1]
    job = exposures[0].strip()
    assert exposures[2].startswith(f"{job} [{{'label': 'odd'}}, {{'label': 'even'}}, {{'label': 'odd'}}]")
    assert sum(mapper.seen.values()) == 3          # the replay did not call the model again
