"""OpenAI-compatible chat completions over plain HTTP (vLLM's server or any other).

    llm = OpenAILLM(LLMConfig(base_urls=["http://127.0.0.1:8011/v1"], model="tiny-qwen3"))
    llm.complete([{"role": "user", "content": "hi"}]).text

Stdlib only (`http.client`): no proxies, no env-configured endpoints, nothing contacted but
the configured base URLs. Behaviour:
- replicas: each call starts at the next URL (round-robin); a URL that fails is skipped
  (moved last) for a short, growing cool-down, and the call fails over to the others;
- retries: connect errors, timeouts, dropped connections, 429 and 5xx are retried, first on
  the other URLs, then in rounds with exponential backoff + jitter (`Retry-After` honoured,
  capped at `backoff_max_s`); any other 4xx fails at once; every error names URL and status;
- usage (`prompt_tokens`, `completion_tokens`) is taken from the response (streaming asks for
  it with `stream_options.include_usage`);
- streaming (SSE) returns the same `Completion` once the stream ends;
- token counting: a local tokenizer folder (`tokenizer_path`), else the server's
  `POST /tokenize` (vLLM) when it exists, else the approximate counter (`token_counter_exact`
  says which).
"""
from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from collections import OrderedDict
from typing import Any, Callable
from urllib.parse import urlsplit

from scroll.llm.base import (
    Completion, LLMError, Message, approx_count, check_messages, check_stop,
)
from scroll.llm.config import LLMConfig
from scroll.llm.constraints import Constraint, openai_fields
from scroll.llm.local import count_with_tokenizer, load_tokenizer

_ERR_BODY = 500          # characters of a server error body quoted in an LLMError
_COUNT_CACHE = 4096      # token counts remembered (LRU)


class _Transient(Exception):
    """A failure worth retrying (possibly on another URL)."""

    def __init__(self, message: str, *, url: str, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.url, self.status, self.retry_after = url, status, retry_after


def _root(base: str) -> str:
    """Server root for non-OpenAI routes (/health, /tokenize): base URL without `/v1`."""
    return base[:-3] if base.endswith("/v1") else base


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _error_text(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        err = json.loads(text)
        if isinstance(err, dict):
            e = err.get("error", err)
            text = (e.get("message") or json.dumps(e)) if isinstance(e, dict) else str(e)
    except ValueError:
        pass
    return text[:_ERR_BODY]


class OpenAILLM:
    backend = "openai"

    def __init__(self, cfg: LLMConfig, *, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None):
        self.cfg = cfg.validate()
        self._api_key = cfg.resolve_api_key()
        self._urls = list(cfg.base_urls)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._next = 0
        self._down: dict[str, tuple[float, int]] = {}   # url -> (until, consecutive fails)
        self._model: str | None = None if cfg.model == "auto" else cfg.model
        self._tokenizer = None
        self._server_tokenize: bool | None = None if cfg.use_server_tokenize else False
        self._counts: OrderedDict[Any, int] = OrderedDict()
        self._closed = False

    # ------------------------------------------------------------------ public protocol
    @property
    def model(self) -> str:
        if self._model is None:
            self._model = self._discover_model()
        return self._model

    def complete(self, messages: list[Message], *, max_tokens: int | None = None,
                 temperature: float | None = None, stop: list[str] | None = None,
                 stream: bool | None = None, constraint: Constraint | None = None) -> Completion:
        check_messages(messages)
        stop = check_stop(stop) if stop is not None else self.cfg.stop
        stream = self.cfg.stream if stream is None else stream
        payload: dict[str, Any] = dict(self.cfg.extra_body)
        payload.update(
            model=self.model, messages=messages,
            max_tokens=int(max_tokens if max_tokens is not None else self.cfg.max_tokens),
            temperature=float(temperature if temperature is not None else self.cfg.temperature),
            top_p=self.cfg.top_p, stream=stream)
        if stop:
            payload["stop"] = stop
        if constraint is not None:
            payload.update(openai_fields(constraint))
        if self.cfg.seed is not None:
            payload.setdefault("seed", self.cfg.seed)
        if stream:
            payload["stream_options"] = {"include_usage": True}
        t0 = time.perf_counter()
        data, url, attempts = self._call("POST", "/chat/completions", payload,
                                         self._read_stream if stream else self._read_json)
        return self._completion(data, url, attempts, time.perf_counter() - t0, stream)

    def count_tokens(self, text_or_messages: str | list[Message]) -> int:
        if isinstance(text_or_messages, str):
            key: Any = text_or_messages
        else:
            check_messages(text_or_messages)
            key = tuple((m["role"], m["content"]) for m in text_or_messages)
        with self._lock:
            if key in self._counts:
                self._counts.move_to_end(key)
                return self._counts[key]
        n = self._count_uncached(text_or_messages)
        with self._lock:
            self._counts[key] = n
            if len(self._counts) > _COUNT_CACHE:
                self._counts.popitem(last=False)
        return n

    @property
    def token_counter_exact(self) -> bool:
        if self.cfg.tokenizer_path:
            return True
        if self._server_tokenize is None:
            try:
                self._probe_tokenize()
            except LLMError:
                return False        # server unreachable now: not cached, asked again later
        return bool(self._server_tokenize)

    def describe(self) -> dict[str, Any]:
        if self.cfg.tokenizer_path:
            counter = f"tokenizer:{self.cfg.tokenizer_path}"
        elif self._server_tokenize:
            counter = "server:/tokenize"
        elif self._server_tokenize is None:
            counter = "server:/tokenize (not probed yet)"
        else:
            counter = "approximate"
        model = self._model
        if model is None:  # "auto": ask the server now, so no record names the backbone "auto"
            try:
                model = self.model
            except LLMError:
                model = self.cfg.model
        return {
            "backend": self.backend, "model": model,
            "urls": list(self._urls), "stream": self.cfg.stream, "token_counter": counter,
            "auth": self._api_key is not None, "max_tokens": self.cfg.max_tokens,
            "temperature": self.cfg.temperature, "timeout_s": self.cfg.timeout_s,
            "max_retries": self.cfg.max_retries,
        }

    def health(self, timeout_s: float = 2.0) -> bool:
        """True when at least one URL answers GET /health (or GET /v1/models) with 200."""
        return any(self.health_by_url(timeout_s).values())

    def health_by_url(self, timeout_s: float = 2.0) -> dict[str, bool]:
        out = {}
        for base in self._urls:
            ok = False
            for url in (_root(base) + "/health", base + "/models"):
                try:
                    status, _, _ = self._once("GET", url, None, timeout_s=timeout_s)
                    ok = status == 200
                except _Transient:
                    ok = False
                if ok:
                    break
            out[base] = ok
        return out

    def close(self) -> None:
        self._closed = True
        self._tokenizer = None

    def __enter__(self) -> "OpenAILLM":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ HTTP
    def _headers(self, has_body: bool) -> dict[str, str]:
        h = {"Accept": "application/json, text/event-stream", "User-Agent": "scroll-llm/0.1"}
        if has_body:
            h["Content-Type"] = "application/json"
        if self._api_key:
            h["Authorization"] = f"Bearer {self._api_key}"
        return h

    def _once(self, method: str, url: str, payload: dict | None, *,
              timeout_s: float | None = None,
              reader: Callable[[http.client.HTTPResponse, str], Any] | None = None
              ) -> tuple[int, Any, http.client.HTTPMessage]:
        """One request. Returns (status, body-or-reader-result, headers); a 2xx body goes
        through `reader`. Raises _Transient for transport failures."""
        if self._closed:
            raise LLMError("openai backend: used after close()")
        parts = urlsplit(url)
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        conn = cls(parts.hostname, parts.port, timeout=timeout_s or self.cfg.connect_timeout_s)
        body = json.dumps(payload).encode() if payload is not None else None
        stage = "connect"
        try:
            conn.connect()
            conn.sock.settimeout(timeout_s or self.cfg.timeout_s)
            stage = "request"
            conn.request(method, parts.path, body=body, headers=self._headers(body is not None))
            resp = conn.getresponse()
            stage = "response"
            if 200 <= resp.status < 300 and reader is not None:
                return resp.status, reader(resp, url), resp.headers
            return resp.status, resp.read(), resp.headers
        except (socket.timeout, TimeoutError) as e:
            what = "connect" if stage == "connect" else "read"
            limit = self.cfg.connect_timeout_s if stage == "connect" else (timeout_s or self.cfg.timeout_s)
            raise _Transient(f"{what} timed out after {limit:g}s ({e})", url=url) from None
        except (OSError, http.client.HTTPException) as e:
            raise _Transient(f"{stage} failed: {type(e).__name__}: {e}", url=url) from None
        finally:
            conn.close()

    def _order(self) -> list[str]:
        """URLs for one call: round-robin start, URLs in cool-down last."""
        with self._lock:
            i = self._next
            self._next = (self._next + 1) % len(self._urls)
        now = time.monotonic()
        rot = self._urls[i:] + self._urls[:i]
        up = [u for u in rot if self._down.get(u, (0.0, 0))[0] <= now]
        return up + [u for u in rot if u not in up]

    def _mark(self, url: str, ok: bool) -> None:
        with self._lock:
            if ok:
                self._down.pop(url, None)
            else:
                fails = self._down.get(url, (0.0, 0))[1] + 1
                self._down[url] = (time.monotonic() + min(30.0, 0.5 * 2 ** fails), fails)

    def _backoff(self, round_no: int, retry_after: float | None) -> float:
        cap = self.cfg.backoff_max_s
        d = min(cap, self.cfg.backoff_base_s * 2 ** (round_no - 1))
        d = d / 2 + self._rng.uniform(0, d / 2)             # "equal jitter"
        if retry_after is not None:
            d = max(d, min(retry_after, cap))
        return d

    def _call(self, method: str, path: str, payload: dict | None,
              reader: Callable[[http.client.HTTPResponse, str], Any]) -> tuple[Any, str, int]:
        """Request `path` under the base URLs with failover and retries.
        Returns (reader result, URL that answered, attempts)."""
        errors: list[_Transient] = []
        attempts = 0
        retry_after: float | None = None
        for round_no in range(self.cfg.max_retries + 1):
            if round_no:
                self._sleep(self._backoff(round_no, retry_after))
                retry_after = None
            for base in self._order():
                url = base + path
                attempts += 1
                try:
                    status, body, headers = self._once(method, url, payload, reader=reader)
                except _Transient as e:
                    self._mark(base, False)
                    errors.append(e)
                    continue
                if 200 <= status < 300:
                    self._mark(base, True)
                    return body, url, attempts
                msg = f"HTTP {status}: {_error_text(body)}"
                if status == 429 or status >= 500:
                    self._mark(base, False)
                    ra = _retry_after(headers.get("Retry-After"))
                    retry_after = max(retry_after or 0.0, ra) if ra is not None else retry_after
                    errors.append(_Transient(msg, url=url, status=status))
                    continue
                raise LLMError(f"openai backend: {method} {url} failed with {msg} "
                               f"(not retried: client error)", status=status, url=url)
        last = errors[-1]
        raise LLMError(
            f"openai backend: {method} {path} failed after {attempts} attempt(s) over "
            f"{self._urls}; last error from {last.url}: {last}", status=last.status,
            url=last.url, retryable=True)

    # ------------------------------------------------------------------ response readers
    @staticmethod
    def _read_json(resp: http.client.HTTPResponse, url: str) -> dict:
        raw = resp.read()
        try:
            data = json.loads(raw)
        except ValueError:
            raise LLMError(f"openai backend: {url} returned HTTP {resp.status} with a body "
                           f"that is not JSON: {raw[:200]!r}", status=resp.status, url=url) from None
        if not isinstance(data, dict):
            raise LLMError(f"openai backend: {url} returned {type(data).__name__}, not an object",
                           status=resp.status, url=url)
        return data

    @staticmethod
    def _read_stream(resp: http.client.HTTPResponse, url: str) -> dict:
        """Assemble an SSE stream of chat.completion.chunk objects into one response dict."""
        ctype = resp.headers.get("Content-Type", "")
        if "text/event-stream" not in ctype:       # a server that ignored stream=true
            return OpenAILLM._read_json(resp, url)
        parts: list[str] = []
        out: dict[str, Any] = {"object": "chat.completion", "stream": True, "chunks": 0}
        finish = None
        done = False
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data:"):
                continue                               # comments, event:, id:, blank lines
            data = line[5:].strip()
            if data == b"[DONE]":
                done = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise LLMError(f"openai backend: bad SSE data from {url}: {data[:200]!r}",
                               status=resp.status, url=url) from None
            if isinstance(chunk, dict) and "error" in chunk:
                raise LLMError(f"openai backend: {url} sent an error mid-stream: "
                               f"{_error_text(data)}", status=resp.status, url=url)
            out["chunks"] += 1
            for k in ("id", "model", "created"):
                if chunk.get(k) is not None:
                    out[k] = chunk[k]
            if chunk.get("usage"):
                out["usage"] = chunk["usage"]
            for ch in chunk.get("choices") or []:
                if ch.get("index", 0) != 0:
                    continue
                piece = (ch.get("delta") or {}).get("content")
                if piece:
                    parts.append(piece)
                if ch.get("finish_reason"):
                    finish = ch["finish_reason"]
        if not done and finish is None:
            raise _Transient("stream ended before [DONE]", url=url, status=resp.status)
        out["choices"] = [{"index": 0, "message": {"role": "assistant", "content": "".join(parts)},
                           "finish_reason": finish}]
        return out

    def _completion(self, data: dict, url: str, attempts: int, latency: float,
                    stream: bool) -> Completion:
        try:
            choice = data["choices"][0]
            msg = choice.get("message") or {}
            text = msg.get("content")
            if text is None:
                text = choice.get("text") or ""        # legacy/compat servers
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"openai backend: {url} returned no choices: "
                           f"{json.dumps(data)[:300]}", url=url) from None
        usage = data.get("usage") or {}

        def tok(k: str) -> int | None:
            v = usage.get(k)
            return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

        data["_scroll"] = {"url": url, "attempts": attempts, "stream": stream}
        return Completion(
            text=text, prompt_tokens=tok("prompt_tokens"),
            completion_tokens=tok("completion_tokens"),
            model=data.get("model") or self.model, latency_s=latency, backend=self.backend,
            finish_reason=choice.get("finish_reason"), raw=data)

    # ------------------------------------------------------------------ model & tokens
    def _discover_model(self) -> str:
        data, url, _ = self._call("GET", "/models", None, self._read_json)
        try:
            return str(data["data"][0]["id"])
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"openai backend: model is 'auto' but {url} lists no model: "
                           f"{json.dumps(data)[:300]}", url=url) from None

    def _tokenize_request(self, text_or_messages: str | list[Message]) -> dict:
        if isinstance(text_or_messages, str):
            return {"model": self.model, "prompt": text_or_messages, "add_special_tokens": False}
        return {"model": self.model, "messages": text_or_messages, "add_generation_prompt": True}

    def _post_tokenize(self, text_or_messages: str | list[Message]) -> tuple[int, dict | bytes]:
        """POST <root>/tokenize on the first URL that answers; (status, json-or-body)."""
        payload = self._tokenize_request(text_or_messages)
        last: _Transient | None = None
        for base in self._order():
            url = _root(base) + "/tokenize"
            try:
                status, body, _ = self._once("POST", url, payload, reader=self._read_json)
            except _Transient as e:
                last = e
                continue
            if status >= 500 or status == 429:
                last = _Transient(f"HTTP {status}: {_error_text(body)}", url=url, status=status)
                continue
            return status, body
        raise LLMError(f"openai backend: token count via /tokenize failed on every URL; "
                       f"last error from {last.url}: {last}", url=last.url, retryable=True)

    def _probe_tokenize(self) -> None:
        status, body = self._post_tokenize("hello")
        self._server_tokenize = 200 <= status < 300 and isinstance(body, dict) and (
            "count" in body or "tokens" in body)

    def _count_uncached(self, text_or_messages: str | list[Message]) -> int:
        if self.cfg.tokenizer_path:
            if self._tokenizer is None:
                self._tokenizer = load_tokenizer(self.cfg.tokenizer_path)
            return count_with_tokenizer(self._tokenizer, text_or_messages)
        if self._server_tokenize is None:
            self._probe_tokenize()
        if not self._server_tokenize:
            return approx_count(text_or_messages)
        status, body = self._post_tokenize(text_or_messages)
        if not (200 <= status < 300 and isinstance(body, dict)):
            raise LLMError(f"openai backend: /tokenize answered HTTP {status}: "
                           f"{_error_text(body) if isinstance(body, bytes) else body}",
                           status=status)
        if "count" in body:
            return int(body["count"])
        return len(body["tokens"])
