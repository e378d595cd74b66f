"""The OpenAI-compatible HTTP backend against a local fake server (127.0.0.1, port 0)."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from scroll.llm import LLMConfig, LLMError, make_llm
from scroll.llm.openai_http import OpenAILLM

MSG = [{"role": "user", "content": "hi"}]


def ok_body(text="hello", model="fake-model", prompt=11, completion=3, finish="stop"):
    return {"id": "c1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion}}


class FakeServer:
    """Answers /v1/chat/completions from a queue of actions (then `responder(body)`'s action when
    set, else a default success), /v1/models, /health and (optionally) /tokenize; records every
    request."""

    def __init__(self, *, tokenize=True, health=True, name="fake-model"):
        self.actions: list[tuple] = []
        self.responder = None
        self.requests: list[dict] = []
        self.tokenize, self.health, self.name = tokenize, health, name
        self.lock = threading.Lock()
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, status, obj, headers=None):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _body(self):
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n)) if n else None

            def do_GET(self):
                with srv.lock:
                    srv.requests.append({"method": "GET", "path": self.path,
                                         "headers": dict(self.headers)})
                if self.path == "/health" and srv.health:
                    self._send(200, {})
                elif self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": srv.name}]})
                else:
                    self._send(404, {"detail": "Not Found"})

            def do_POST(self):
                body = self._body()
                with srv.lock:
                    srv.requests.append({"method": "POST", "path": self.path, "body": body,
                                         "headers": dict(self.headers)})
                    action = srv.actions.pop(0) if (srv.actions and
                                                    self.path == "/v1/chat/completions") else None
                if action is None and srv.responder is not None and self.path == "/v1/chat/completions":
                    action = srv.responder(body)
                if self.path == "/tokenize":
                    if not srv.tokenize:
                        return self._send(404, {"detail": "Not Found"})
                    text = body.get("prompt") or json.dumps(body.get("messages"))
                    return self._send(200, {"count": len(text.split()) + 100,
                                            "tokens": [], "max_model_len": 4096})
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"detail": "Not Found"})
                if action is None:
                    return self._send(200, ok_body(model=body["model"]))
                kind = action[0]
                if kind == "json":
                    _, status, obj, *hdr = action
                    return self._send(status, obj, hdr[0] if hdr else None)
                if kind == "sleep":
                    time.sleep(action[1])
                    return self._send(200, ok_body(text="late"))
                if kind == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if kind == "sse":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for ev in action[1]:
                        line = (ev if isinstance(ev, str) else "data: " + json.dumps(ev)) + "\n\n"
                        b = line.encode()
                        self.wfile.write(f"{len(b):x}\r\n".encode() + b + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                    return
                raise AssertionError(action)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def chat_requests(self):
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.stop()


def dead_url() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()                      # nothing listens there now: connection refused
    return f"http://127.0.0.1:{port}/v1"


def make(urls, **kw) -> OpenAILLM:
    kw.setdefault("model", "fake-model")
    kw.setdefault("backoff_base_s", 0.01)
    kw.setdefault("backoff_max_s", 0.05)
    llm = make_llm(LLMConfig.from_dict(base_urls=urls if isinstance(urls, list) else [urls], **kw))
    assert isinstance(llm, OpenAILLM)
    return llm


def test_success_request_shape_and_usage(server, monkeypatch):
    monkeypatch.setenv("SCROLL_LLM_API_KEY", "k-123")
    llm = make(server.url, max_tokens=33, extra_body={"top_k": 5}, seed=7)
    c = llm.complete(MSG, temperature=0.5, stop=["```"])
    assert c.text == "hello" and c.backend == "openai" and c.model == "fake-model"
    assert (c.prompt_tokens, c.completion_tokens, c.finish_reason) == (11, 3, "stop")
    assert c.latency_s > 0 and c.raw["_scroll"] == {"url": server.url + "/chat/completions",
                                                     "attempts": 1, "stream": False}
    (req,) = server.chat_requests()
    b = req["body"]
    assert b["model"] == "fake-model" and b["messages"] == MSG and b["max_tokens"] == 33
    assert b["temperature"] == 0.5 and b["stop"] == ["```"] and b["top_k"] == 5
    assert b["seed"] == 7 and b["stream"] is False
    assert req["headers"]["Authorization"] == "Bearer k-123"
    d = llm.describe()
    assert d["auth"] is True and "k-123" not in json.dumps(d)


def test_missing_usage_is_none_and_model_auto(server):
    body = ok_body(text=None)
    body.pop("usage")
    server.actions.append(("json", 200, body))
    llm = make(server.url, model="auto")
    c = llm.complete(MSG)
    assert c.text == "" and c.prompt_tokens is None and c.completion_tokens is None
    assert server.chat_requests()[0]["body"]["model"] == "fake-model"   # from GET /v1/models


def test_describe_names_the_served_model_before_any_call(server):
    """A run records describe() before its first call: with model "auto" it must already say which
    model the server serves (records once said "auto" beside the real name and split a table)."""
    llm = make(server.url, model="auto")
    assert llm.describe()["model"] == "fake-model"
    down = make("http://127.0.0.1:9/v1", model="auto", max_retries=0)
    assert down.describe()["model"] == "auto"          # unreachable: says what it was told, never raises


def test_retries_500_then_succeeds(server):
    sleeps = []
    server.actions += [("json", 500, {"error": {"message": "boom"}}),
                       ("json", 503, {"error": "busy"}, {"Retry-After": "0.03"})]
    llm = make(server.url, max_retries=3)
    llm._sleep = sleeps.append
    c = llm.complete(MSG)
    assert c.text == "hello" and c.raw["_scroll"]["attempts"] == 3
    assert len(server.chat_requests()) == 3
    assert len(sleeps) == 2 and all(0 < s <= 0.05 for s in sleeps)
    assert sleeps[1] >= 0.03                       # Retry-After honoured (capped at max)


def test_429_is_retried(server):
    server.actions.append(("json", 429, {"error": {"message": "slow down"}}))
    assert make(server.url).complete(MSG).text == "hello"
    assert len(server.chat_requests()) == 2


def test_retries_exhausted_names_url_and_status(server):
    server.actions += [("json", 502, {"error": {"message": "bad gateway"}})] * 3
    llm = make(server.url, max_retries=2)
    with pytest.raises(LLMError) as ei:
        llm.complete(MSG)
    e = ei.value
    assert e.status == 502 and e.retryable and server.url in str(e) and "bad gateway" in str(e)
    assert "3 attempt" in str(e) and len(server.chat_requests()) == 3


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_no_retry_on_4xx(server, status):
    server.actions.append(("json", status, {"error": {"message": "max_tokens too large"}}))
    llm = make([server.url, dead_url()], max_retries=3)
    with pytest.raises(LLMError) as ei:
        llm.complete(MSG)
    assert ei.value.status == status and not ei.value.retryable
    assert f"HTTP {status}" in str(ei.value) and "max_tokens too large" in str(ei.value)
    assert server.url in str(ei.value)
    assert len(server.chat_requests()) == 1


def test_read_timeout(server):
    server.actions += [("sleep", 1.5)] * 2
    llm = make(server.url, timeout_s=0.2, max_retries=1)
    t0 = time.monotonic()
    with pytest.raises(LLMError, match="timed out after 0.2s") as ei:
        llm.complete(MSG)
    assert time.monotonic() - t0 < 1.4 and ei.value.retryable
    assert len(server.chat_requests()) == 2


def test_connection_refused_everywhere():
    llm = make([dead_url(), dead_url()], max_retries=1)
    with pytest.raises(LLMError, match="connect failed") as ei:
        llm.complete(MSG)
    assert "4 attempt" in str(ei.value)
    assert llm.health() is False


def test_dropped_connection_is_retried(server):
    server.actions.append(("drop",))
    assert make(server.url).complete(MSG).text == "hello"


def test_failover_and_round_robin_between_two_urls():
    a, b = FakeServer(), FakeServer()
    try:
        llm = make([a.url, b.url])
        for _ in range(4):
            llm.complete(MSG)
        assert len(a.chat_requests()) == len(b.chat_requests()) == 2      # round-robin
        a.actions += [("json", 500, {"error": "down"})] * 10
        c = llm.complete(MSG)                          # starts at a (rr), fails over to b
        assert c.raw["_scroll"]["url"].startswith(b.url) and c.raw["_scroll"]["attempts"] == 2
        # a is in cool-down now: the next calls go to b first, without touching a
        n_a = len(a.chat_requests())
        for _ in range(3):
            assert llm.complete(MSG).raw["_scroll"]["attempts"] == 1
        assert len(a.chat_requests()) == n_a
    finally:
        a.stop()
        b.stop()


def test_failover_from_dead_url(server):
    llm = make([dead_url(), server.url], max_retries=0)
    for _ in range(3):
        assert llm.complete(MSG).text == "hello"
    assert llm.health_by_url() == {llm.cfg.base_urls[0]: False, server.url: True}
    assert llm.health() is True


def chunk(content=None, finish=None, usage=None):
    ch = {"id": "s1", "object": "chat.completion.chunk", "model": "fake-model", "choices": []}
    if content is not None or finish is not None:
        ch["choices"] = [{"index": 0, "delta": {"content": content} if content else {},
                          "finish_reason": finish}]
    if usage:
        ch["usage"] = usage
    return ch


def test_streaming_returns_same_completion(server):
    events = [": keep-alive", chunk("Hel"), chunk("lo, "), chunk("world"), chunk(finish="length"),
              chunk(usage={"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}),
              "data: [DONE]"]
    server.actions.append(("sse", events))
    llm = make(server.url, stream=True)
    c = llm.complete(MSG)
    assert c.text == "Hello, world" and c.finish_reason == "length"
    assert (c.prompt_tokens, c.completion_tokens) == (9, 4) and c.raw["chunks"] == 5
    b = server.chat_requests()[0]["body"]
    assert b["stream"] is True and b["stream_options"] == {"include_usage": True}


def test_streaming_cut_short_is_retried(server):
    server.actions += [("sse", [chunk("par")]), ("sse", [chunk("full"), chunk(finish="stop"),
                                                         "data: [DONE]"])]
    c = make(server.url, stream=True).complete(MSG)
    assert c.text == "full" and c.raw["_scroll"]["attempts"] == 2


def test_streaming_error_event(server):
    server.actions.append(("sse", ['data: {"error": {"message": "oom"}}']))
    with pytest.raises(LLMError, match="mid-stream: oom"):
        make(server.url, stream=True).complete(MSG)


def test_bad_json_body(server):
    server.actions.append(("json", 200, ["not", "an", "object"]))
    with pytest.raises(LLMError, match="not an object"):
        make(server.url).complete(MSG)


def test_count_tokens_via_server_tokenize(server):
    llm = make(server.url)
    assert llm.token_counter_exact is True
    assert llm.count_tokens("a b c") == 103
    n = llm.count_tokens(MSG)
    assert n > 100 and llm.count_tokens(MSG) == n
    toks = [r for r in server.requests if r["path"] == "/tokenize"]
    assert len(toks) == 3                                 # probe, text, messages; then cached
    assert toks[1]["body"] == {"model": "fake-model", "prompt": "a b c", "add_special_tokens": False}
    assert toks[2]["body"]["add_generation_prompt"] is True
    assert llm.describe()["token_counter"] == "server:/tokenize"


def test_count_tokens_falls_back_to_approx():
    s = FakeServer(tokenize=False)
    try:
        llm = make(s.url)
        assert llm.count_tokens("hello world") >= 2
        assert llm.token_counter_exact is False
        assert llm.describe()["token_counter"] == "approximate"
        off = make(s.url, use_server_tokenize=False)
        assert off.token_counter_exact is False and off.count_tokens(MSG) > 0
        assert sum(r["path"] == "/tokenize" for r in s.requests) == 1
    finally:
        s.stop()


def test_health_uses_models_when_no_health_route():
    s = FakeServer(health=False)
    try:
        assert make(s.url).health() is True
        assert [r["path"] for r in s.requests] == ["/health", "/v1/models"]
    finally:
        s.stop()


def test_only_configured_urls_are_contacted(server, monkeypatch):
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:1")      # would break a proxied client
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:1")
    llm = make(server.url)
    assert llm.complete(MSG).text == "hello"


def test_closed_backend_refuses(server):
    llm = make(server.url)
    llm.close()
    with pytest.raises(LLMError, match="after close"):
        llm.complete(MSG)


def test_concurrent_calls(server):
    from scroll.llm import complete_many

    llm = make(server.url)
    out = complete_many(llm, [MSG] * 16, max_workers=8)
    assert all(c.text == "hello" for c in out) and len(server.chat_requests()) == 16
