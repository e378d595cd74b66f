"""Structured outputs (issue 31): the request fields, the probe, llm_map asking for its schema
and falling back, and constrained loop replies, through Agent.run and the sandboxed kernel
against an OpenAI-compatible fake server that honours (or refuses, or ignores) the constraint.
The real engines (vLLM's, xgrammar in the transformers backend) are tested in the model tests."""
from __future__ import annotations

import json
import re

import pytest

from scroll.agent import Agent
from scroll.config import LoopConfig
from scroll.llm import LLMConfig, ScriptedLLM, make_llm
from scroll.llm.constraints import REPLY_PATTERN, JsonSchema, Regex, openai_fields, probe
from scroll.policies.stepper import ProgramPolicy
from scroll.prompts import SYSTEM_PROMPT
from tests.test_llm_openai import FakeServer, ok_body

LABEL = {"type": "object", "properties": {"label": {"enum": ["even", "odd"]}}, "required": ["label"]}
CELLS = [
    'r = ms.llm_map([str(i) for i in range(6)], "Even or odd?", schema=%s, retries=0)\n'
    'print([x["value"]["label"] if x["ok"] else "ERR" for x in r])' % json.dumps(LABEL),
    'final("done")',
]


class Grammar(FakeServer):
    """A fake vLLM: `mode` "honour" writes what the constraint allows (the probe's nonce, a label,
    a reply that matches the pattern); "refuse" answers 400 to any request with a constraint (a
    schema its engine cannot compile); "ignore" drops the constraint and chats."""

    def __init__(self, mode: str):
        super().__init__()
        self.mode, self.cells = mode, iter(CELLS)
        self.responder = self.reply

    def reply(self, body: dict) -> tuple:
        fmt, so = body.get("response_format"), body.get("structured_outputs")
        user = body["messages"][-1]["content"]
        if self.mode == "refuse" and (fmt or so):
            return ("json", 400, {"error": {"message": "grammar compilation failed: unsupported"}})
        if fmt and self.mode == "honour":
            schema = fmt["json_schema"]["schema"]
            if "probe" in schema.get("properties", {}):
                return ("json", 200, ok_body(json.dumps({"probe": schema["properties"]["probe"]["enum"][0]})))
        if "Item:" in user:
            item = user.split("Item:\n", 1)[1].split("\n", 1)[0]
            label = "even" if int(item) % 2 == 0 else "odd"
            text = json.dumps({"label": label}) if (fmt and self.mode == "honour") else f"I think {label}"
            return ("json", 200, ok_body(text))
        if body["messages"][0]["role"] == "system" and "Reply with a JSON object." not in user:
            cell = next(self.cells)
            if so and self.mode == "honour":
                assert re.fullmatch(so["regex"], f"HEADLINE: t | s | n\n```python\n{cell}\n```", re.S)
                return ("json", 200, ok_body(f"HEADLINE: t | s | n\n```python\n{cell}\n```"))
            return ("json", 200, ok_body(f"Sure.\n```python\n{cell}\n```\nThat should do it."))
        return ("json", 200, ok_body("Here is some JSON: {}"))


def _llm(srv: FakeServer):
    return make_llm(LLMConfig.from_dict(base_urls=[srv.url], model="fake-model", backoff_base_s=0.01,
                                        backoff_max_s=0.05, max_retries=0))


@pytest.fixture(params=["honour", "refuse", "ignore"])
def grammar_server(request):
    s = Grammar(request.param)
    yield s
    s.stop()


def test_request_fields():
    assert openai_fields(JsonSchema(LABEL, "item")) == {"response_format": {
        "type": "json_schema", "json_schema": {"name": "item", "schema": LABEL, "strict": True}}}
    assert openai_fields(Regex("a+")) == {"structured_outputs": {"regex": "a+"}}
    with pytest.raises(TypeError):
        openai_fields({"regex": "a+"})


def test_probe_tells_an_enforcing_server_from_one_that_refuses_or_ignores(grammar_server):
    llm = _llm(grammar_server)
    found = probe(llm)
    assert found.enforced is (grammar_server.mode == "honour"), found
    if grammar_server.mode == "refuse":
        assert "refused" in found.reason and "400" in found.reason
    if grammar_server.mode == "ignore":
        assert "ignored the schema" in found.reason
    n = len(grammar_server.chat_requests())
    assert probe(llm) is found and len(grammar_server.chat_requests()) == n  # asked once per backend
    req = grammar_server.chat_requests()[0]["body"]
    nonce = req["response_format"]["json_schema"]["schema"]["properties"]["probe"]["enum"][0]
    assert nonce not in json.dumps(req["messages"])  # only a decoder that applies the schema writes it


def test_backends_without_constrained_decoding_are_not_asked():
    llm = ScriptedLLM(["never used"])
    found = probe(llm)
    assert not found.enforced and "scripted" in found.reason and llm.calls == []


def test_reply_pattern_takes_the_teachers_replies_and_nothing_else():
    good = ProgramPolicy._say(1, "solve", "How many dogs did I " + "walk " * 30, "h = ms.search('dog')\nprint(`x`)")
    assert re.fullmatch(REPLY_PATTERN, good.rstrip("\n"), re.S), good
    for bad in ("```python\nprint(1)\n```",                       # no HEADLINE
                "HEADLINE: a | b | c\nprint(1)",                   # no fence
                "HEADLINE: a | b | c\n```python\nx = '```'\n```",  # three backticks inside the cell
                "HEADLINE: a | b | c\n```python\nprint(1)\n```\nmore prose"):
        assert not re.fullmatch(REPLY_PATTERN, bad, re.S), bad


def test_llm_map_asks_for_its_schema_and_falls_back_through_agent_run(grammar_server, log):
    """Agent.run, the sandboxed kernel, ms.llm_map over the OpenAI backend: an enforcing server gets
    the schema on every item call and every label parses; one that refuses the schema is used
    unguided (the reason logged, nothing crashes); one that ignores it is found by the probe."""
    cfg = LoopConfig(max_steps=3, cell_timeout=25, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
    exposures = []
    with Agent.open(log, _llm(grammar_server), cfg, session="g",
               on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
        res = agent.run("Label the numbers.")
    assert res.reason == "final" and res.answer == "done", exposures
    mode = grammar_server.mode
    want = ["even", "odd"] * 3 if mode == "honour" else ["ERR"] * 6  # unguided, the fake chats prose
    assert exposures[0].strip() == str(want), exposures[0]
    start = next(e for e in log.events(session="g", kind="llm_map") if e.meta["phase"] == "start")
    assert start.meta["structured"]["enforced"] is (mode == "honour"), start.meta
    calls = [e for e in log.events(session="g", kind="map_call")]
    assert len(calls) == 6
    item_requests = [r["body"] for r in grammar_server.chat_requests() if "Item:" in r["body"]["messages"][-1]["content"]]
    if mode == "honour":
        assert all(c.meta["guided"] for c in calls)
        assert all(b["response_format"]["json_schema"]["schema"] == LABEL for b in item_requests)
    else:
        assert not any(c.meta["guided"] for c in calls)
        assert not any("response_format" in b for b in item_requests)


def test_schema_the_engine_cannot_compile_falls_back_mid_map(log):
    """A server that enforces the probe's schema but refuses the map's: the first item's call is
    refused (400), guidance is off for the rest of the map with the reason logged, and the same
    attempt runs again unguided: no item is lost, no retry is spent on it."""
    srv = Grammar("honour")
    orig = srv.reply

    def reply(body):
        fmt = body.get("response_format")
        if fmt and "probe" not in fmt["json_schema"]["schema"].get("properties", {}):
            return ("json", 400, {"error": {"message": "xgrammar: cannot compile this schema"}})
        return orig(body)
    srv.responder = reply
    try:
        cfg = LoopConfig(max_steps=3, cell_timeout=25, max_output_chars=2000, soft_budget=3000, hard_budget=4000)
        exposures = []
        with Agent.open(log, _llm(srv), cfg, session="f", on_step=lambda rec, reply, exp: exposures.append(exp)) as agent:
            res = agent.run("Label the numbers.")
    finally:
        srv.stop()
    assert res.reason == "final", exposures
    calls = [e for e in log.events(session="f", kind="map_call")]
    assert len(calls) == 6 and all(c.meta["attempt"] == 1 for c in calls)  # no retry was spent
    off = [c for c in calls if "guided_off" in c.meta]
    assert off and "cannot compile" in off[0].meta["guided_off"]
    assert not any(c.meta["guided"] for c in calls)


def test_constrained_replies_through_agent_run(grammar_server, log):
    """LoopConfig.constrain_replies: an enforcing backend gets the reply pattern on every loop call
    and the task records it; any other backend runs unconstrained with a note that says why."""
    cfg = LoopConfig(max_steps=3, cell_timeout=25, max_output_chars=2000, soft_budget=3000, hard_budget=4000,
                     constrain_replies=True, map_structured=False)
    with Agent.open(log, _llm(grammar_server), cfg, session="c") as agent:
        res = agent.run("Label the numbers.")
    assert res.reason == "final" and res.answer == "done"
    task = next(log.events(session="c", kind="task"))
    enforced = grammar_server.mode == "honour"
    assert task.meta["constrained_replies"]["enforced"] is enforced
    loop_requests = [r["body"] for r in grammar_server.chat_requests()
                     if r["body"]["messages"][0]["content"] == SYSTEM_PROMPT]
    assert len(loop_requests) == 2
    assert all(("structured_outputs" in b) is enforced for b in loop_requests)
    if enforced:
        assert loop_requests[0]["structured_outputs"] == {"regex": REPLY_PATTERN}
        replies = [e.text for e in log.events(session="c", kind="message") if e.role == "assistant"]
        assert all(r.startswith("HEADLINE: ") and r.endswith("```") for r in replies)
    else:
        notes = [e.text for e in log.events(session="c", kind="note")]
        assert any(n.startswith("constrain_replies: ") and "not constrained" in n for n in notes), notes


# ---- the real engines: xgrammar in the transformers backend, vLLM's structured outputs -------------
@pytest.mark.model
def test_transformers_backend_enforces_schema_and_pattern(tiny_model_dir):  # noqa: F811
    from scroll.llm import LLMError

    llm = make_llm(LLMConfig.from_dict(backend="transformers", model=str(tiny_model_dir), max_tokens=24,
                                       device="cpu"))
    try:
        assert probe(llm).enforced  # a random model writes the nonce only under the schema
        msgs = [{"role": "user", "content": "Is 4 even or odd?"}]
        c = llm.complete(msgs, constraint=JsonSchema(LABEL))
        assert json.loads(c.text) in ({"label": "even"}, {"label": "odd"}), c.text
        c = llm.complete(msgs, constraint=Regex("(yes|no)"))
        assert c.text in ("yes", "no") and c.finish_reason == "stop", c
        with pytest.raises(LLMError) as e:  # lookahead: outside the engine's regex dialect
            llm.complete(msgs, constraint=Regex("(?=a)a"))
        assert e.value.status == 400 and "cannot compile" in str(e.value)
    finally:
        llm.close()


@pytest.mark.model
@pytest.mark.server
@pytest.mark.slow
def test_vllm_enforces_schema_and_pattern_and_refuses_what_it_cannot_compile(tiny_server):  # noqa: F811
    from scroll.llm import LLMError

    llm = make_llm(LLMConfig.from_yaml("openai", base_urls=tiny_server.base_urls, model="auto", max_tokens=24,
                                       max_retries=0))
    try:
        assert probe(llm).enforced, probe(llm)
        msgs = [{"role": "user", "content": "Is 4 even or odd?"}]
        c = llm.complete(msgs, constraint=JsonSchema(LABEL))
        assert json.loads(c.text) in ({"label": "even"}, {"label": "odd"}), c.text
        c = llm.complete(msgs, constraint=Regex("(yes|no)"))
        assert c.text in ("yes", "no"), c
        c = llm.complete(msgs, constraint=Regex(REPLY_PATTERN), max_tokens=48)
        assert c.text.startswith("HEADLINE: "), c.text  # a random model rarely closes the fence in 48 tokens
        with pytest.raises(LLMError) as e:
            llm.complete(msgs, constraint=Regex("(?=a)a"))
        assert e.value.status == 400, e.value
    finally:
        llm.close()
