"""The proxy's HTTP side (Starlette + httpx): OpenAI-compatible routes in front of an upstream.

Routes:
    POST /v1/chat/completions        the view goes upstream; streaming (SSE) and not
    GET  /v1/models                  passed through from the upstream
    GET  /health                     the proxy's own (does not call the upstream)
    GET  /scroll/conversations/{id}  what the proxy keeps about a conversation (JSON)

Every chat response carries the proxy's accounting in `X-Scroll-*` headers (see
service.Prepared.headers): tokens it added, turns evicted, events retrieved, the view's
tokens and which counter counted them. The upstream's body, usage included, is passed
through unchanged; when streaming, the proxy asks the upstream for the usage chunk and
forwards it only when the client asked for it too.

Access: a loopback bind answers only loopback Host headers (no DNS rebinding); with a
token every request must carry it (`Authorization: Bearer T`, what the OpenAI client sends
as its api_key, or `X-Scroll-Token: T`). The client's Authorization is never forwarded;
the upstream gets `upstream_api_key_env`'s key, if any.
"""
from __future__ import annotations

import contextlib
import hmac
import json
import os
from typing import Any, AsyncIterator

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .config import ProxyConfig
from .conversation import CONVERSATION_ID, ProxyRequestError
from .service import Prepared, ProxyService


def error(message: str, status: int, kind: str = "invalid_request_error") -> JSONResponse:
    """An error in the OpenAI shape, so clients show the message."""
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


class BearerGate:
    """Every HTTP request must carry the token (Bearer or X-Scroll-Token)."""

    def __init__(self, app: ASGIApp, token: str):
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            h = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
            auth = h.get("authorization", "")
            given = [auth[7:] if auth.lower().startswith("bearer ") else None, h.get("x-scroll-token")]
            if not any(g is not None and hmac.compare_digest(g.encode(), self.token) for g in given):
                await error("this proxy needs its token (Authorization: Bearer, i.e. the OpenAI client's api_key, "
                            "or X-Scroll-Token)", 401, "authentication_error")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _upstream_headers(cfg: ProxyConfig) -> dict[str, str]:
    h = {"Content-Type": "application/json", "User-Agent": "scroll-proxy/0.1"}
    key = os.environ.get(cfg.upstream_api_key_env) if cfg.upstream_api_key_env else None
    if key:
        h["Authorization"] = f"Bearer {key}"
    return h


def _sse_data(line: str) -> dict | None:
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if data == "[DONE]":
        return None
    try:
        chunk = json.loads(data)
    except ValueError:
        return None
    return chunk if isinstance(chunk, dict) else None


def create_app(cfg: ProxyConfig, *, token: str | None = None, allowed_hosts: tuple[str, ...] | None = None,
               service: ProxyService | None = None) -> Starlette:
    svc = service or ProxyService(cfg)
    client = httpx.AsyncClient(base_url=cfg.upstream, timeout=httpx.Timeout(cfg.timeout_s, connect=10.0),
                               headers=_upstream_headers(cfg), trust_env=False)

    async def _body(request: Request) -> Any:
        raw = await request.body()
        if len(raw) > cfg.max_body_bytes:
            raise ProxyRequestError(f"request body of {len(raw)} bytes; the limit is {cfg.max_body_bytes}", 413)
        try:
            return json.loads(raw)
        except ValueError as e:
            raise ProxyRequestError(f"the request body is not JSON: {e}") from None
        except RecursionError:
            raise ProxyRequestError("the request body is nested too deeply to read") from None

    async def chat(request: Request) -> Response:
        try:
            body = await _body(request)
            prep: Prepared = await run_in_threadpool(svc.prepare, request.headers, body)
        except ProxyRequestError as e:
            return error(str(e), e.status)
        headers = prep.headers(svc.counter.describe())
        try:
            if prep.stream:
                return await _stream(prep, headers)
            resp = await client.post("/chat/completions", json=prep.body)
        except httpx.TimeoutException as e:
            return error(f"upstream {cfg.upstream} did not answer in time ({type(e).__name__}; the proxy waits "
                         f"timeout_s={cfg.timeout_s:g} s, proxy config `timeout_s`)", 504, "upstream_timeout")
        except httpx.HTTPError as e:
            return error(f"upstream {cfg.upstream} failed: {type(e).__name__}: {e}", 502, "upstream_error")
        try:
            data = resp.json()
        except ValueError:
            return Response(resp.content, status_code=502 if resp.is_success else resp.status_code,
                            headers=headers, media_type=resp.headers.get("content-type"))
        if resp.is_success and isinstance(data, dict):
            choice = (data.get("choices") or [{}])[0] or {}
            await run_in_threadpool(svc.finish, prep, choice.get("message"), data.get("usage"), data.get("model"))
        return JSONResponse(data, status_code=resp.status_code, headers=headers)

    async def _stream(prep: Prepared, headers: dict[str, str]) -> Response:
        req = client.build_request("POST", "/chat/completions", json=prep.body)
        resp = await client.send(req, stream=True)
        if not resp.is_success:
            raw = await resp.aread()
            await resp.aclose()
            return Response(raw, status_code=resp.status_code, headers=headers,
                            media_type=resp.headers.get("content-type", "application/json"))

        async def relay() -> AsyncIterator[bytes]:
            parts: list[str] = []
            role, usage, model = "assistant", None, None
            try:
                async for line in resp.aiter_lines():
                    chunk = _sse_data(line)
                    if line.strip() == "data: [DONE]" or line.strip() == "data:[DONE]":
                        # log the reply before the client can see the end and send its next turn
                        await run_in_threadpool(svc.finish, prep, {"role": role, "content": "".join(parts)},
                                                usage, model)
                        parts = None  # logged
                    if chunk is not None:
                        model = chunk.get("model") or model
                        if chunk.get("usage"):
                            usage = chunk["usage"]
                            if not chunk.get("choices") and not prep.include_usage:
                                continue  # the usage chunk the proxy asked for, not the client
                        for ch in chunk.get("choices") or []:
                            delta = ch.get("delta") or {}
                            role = delta.get("role") or role
                            if ch.get("index", 0) == 0 and isinstance(delta.get("content"), str):
                                parts.append(delta["content"])
                    yield (line + "\n").encode()
                if parts is not None and parts:  # a stream that ended without [DONE]
                    await run_in_threadpool(svc.finish, prep, {"role": role, "content": "".join(parts)}, usage, model)
            finally:
                await resp.aclose()

        return StreamingResponse(relay(), status_code=resp.status_code, headers=headers,
                                 media_type="text/event-stream")

    async def models(request: Request) -> Response:
        try:
            resp = await client.get("/models")
        except httpx.HTTPError as e:
            return error(f"upstream {cfg.upstream} failed: {type(e).__name__}: {e}", 502, "upstream_error")
        return Response(resp.content, status_code=resp.status_code,
                        media_type=resp.headers.get("content-type", "application/json"))

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "upstream": cfg.upstream, "budget": cfg.budget, "retrieval": cfg.retrieval})

    async def conversation(request: Request) -> Response:
        cid = request.path_params["cid"]
        if not CONVERSATION_ID.match(cid):
            return error("not a conversation id", 404)
        stats = await run_in_threadpool(svc.stats, cid)
        if stats is None:
            return error(f"no conversation {cid!r}", 404)
        return JSONResponse(stats)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await client.aclose()
            if service is None:
                svc.close()

    middleware = []
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    if token:
        middleware.append(Middleware(BearerGate, token=token))
    routes = [Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models),
              Route("/health", health), Route("/scroll/conversations/{cid}", conversation)]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.service = svc
    return app
