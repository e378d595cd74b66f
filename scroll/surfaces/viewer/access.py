"""Who may reach the viewer: loopback by default, a token for anything else.

* `check_bind(host, token)`: a bind address that is not loopback (0.0.0.0, a LAN address,
  a host name other than localhost) is refused without a token.
* `TokenGate`: with a token, every HTTP request must carry it: `Authorization: Bearer T`,
  `X-Scroll-Token: T`, or `?token=T`. A request that brought a valid `?token=` gets it back
  as an HttpOnly, SameSite=Strict cookie, so the links and images of the page it opened
  work without repeating it (the cookie is then accepted too).
* `SecurityHeaders`: every response says: no scripts, styles or images from anywhere but
  this server, no framing, no sniffing, no referrer (a `?token=` never leaks in one).
* A loopback bind without a token also checks the Host header (create_app's
  `allowed_hosts`), so a web page cannot reach the viewer through DNS rebinding.
"""
from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..bind import check_bind as _check_bind

COOKIE = "scroll_viewer_token"


class AccessError(ValueError):
    """A bind or token setting the viewer refuses."""


def check_bind(host: str, token: str | None) -> None:
    _check_bind(host, token, surface="the viewer", reach="the log would be readable by anyone who can reach it",
                error=AccessError)


class TokenGate:
    def __init__(self, app: ASGIApp, token: str):
        self.app, self.token = app, token.encode()

    def _ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value.encode(), self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        auth = headers.get("authorization", "")
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
        cookie = SimpleCookie(headers.get("cookie", "")).get(COOKIE)
        candidates = [auth[7:] if auth.lower().startswith("bearer ") else None, headers.get("x-scroll-token"),
                      cookie.value if cookie else None]
        if any(self._ok(c) for c in candidates):
            await self.app(scope, receive, send)
            return
        if not self._ok(query):
            await PlainTextResponse("401: this viewer needs its token (Authorization: Bearer, X-Scroll-Token "
                                    "or ?token=)", status_code=401)(scope, receive, send)
            return

        async def send_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append(
                    "set-cookie", f"{COOKIE}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict")
            await send(message)

        await self.app(scope, receive, send_cookie)


class SecurityHeaders:
    HEADERS = {
        "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                   "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "x-frame-options": "DENY",
        "cache-control": "no-store",
    }

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                h = MutableHeaders(scope=message)
                for k, v in self.HEADERS.items():
                    h[k] = v
            await send(message)

        await self.app(scope, receive, with_headers)
