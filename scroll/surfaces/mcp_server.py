"""`scroll mcp`: the MCP server (official `mcp` SDK, v2 `MCPServer`) over one McpService.

    server = build_server(McpService(cfg))
    serve_stdio(server)                                     # an MCP client spawns us
    serve_http(server, host="127.0.0.1", port=8766)         # streamable HTTP at /mcp

Tools (each a thin call into scroll.surfaces.mcp_service, i.e. into the one capability):
`log`, `search`, `expand`, `payload`, `headlines`, `run_python`. Resources:
`scroll://sessions`, `scroll://session/{name}` (its latest events), `scroll://event/{seq}`.

HTTP binds to loopback by default (the SDK then checks Host/Origin against DNS rebinding);
any other address is refused unless a bearer token is set (`check_bind`), and with a token
every request must carry `Authorization: Bearer <token>` (compared in constant time).
"""
from __future__ import annotations

import hmac
import json
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from scroll import __version__
from .bind import check_bind as _check_bind
from .mcp_service import McpError, McpService

INSTRUCTIONS = """Scroll keeps this agent's whole history in an append-only log and lets you recall it
programmatically. `log` appends events (your turns, tool results, notes) to this server's
session; `search` ranks the log with BM25 (filters: session, kind, role, since/until,
seq_range, origin); `expand` returns exact events by seq (ranges are paged: call again from
`next`); `payload` pages large texts; `headlines` lists evicted ranges of a Scroll agent's
view; `run_python` runs a cell in a sandboxed, persistent Python kernel where `ms` offers the
same calls (print what you want to see: only stdout comes back)."""


class LogEvent(BaseModel):
    """One event for `log`. Session and origin are fixed by the server (omit them)."""

    model_config = ConfigDict(extra="forbid")
    role: str = Field(description="Who spoke or acted: user, assistant, tool, ...")
    text: str = Field(description="The event's full text (large texts are stored whole as payloads).")
    kind: str = Field("message", description="Event kind, e.g. message, tool_result, note.")
    time: str | None = Field(None, description="ISO time of the event (default: now).")
    meta: dict[str, Any] | None = Field(None, description="Any JSON object kept with the event.")
    session: str | None = Field(None, description="Omit: only this server's own session is accepted.")
    origin: str | None = Field(None, description="Omit: only 'history' is accepted.")


def check_bind(host: str, token: str | None) -> None:
    _check_bind(host, token, surface="the MCP server", reach="its tools would append to and read the log for "
                "anyone who can reach it")


def build_server(svc: McpService) -> Any:
    """An MCPServer whose tools and resources all call `svc`."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    server = MCPServer("scroll", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def call(fn, *args, error: type[Exception] = ToolError, **kw) -> Any:
        """fn(...), its refusals as the SDK's error (the client sees the message)."""
        try:
            return fn(*args, **kw)
        except McpError as e:
            raise error(str(e)) from None

    @server.tool()
    def log(events: list[LogEvent]) -> dict[str, Any]:
        """Append events to this server's own session (origin 'history'), all or none.
        Returns their seqs; `search` finds them right away."""
        rows = [e.model_dump(exclude_none=True) for e in events]
        seqs = call(svc.log_events, rows)
        return {"session": svc.cfg.session, "seqs": seqs}

    @server.tool()
    def search(query: str, k: int = 10, session: str | None = None, kind: str | None = None,
               role: str | None = None, since: str | None = None, until: str | None = None,
               seq_range: list[int] | None = None, origin: str | list[str] = "history") -> dict[str, Any]:
        """BM25 search over the log (ms.search): the k best events with their seq and score.
        origin: 'history' (default: logged turns), 'agent', 'system', '*' or a list.
        since/until: ISO dates; seq_range: [lo, hi]."""
        hits = call(svc.ms, "search", query=query, k=k, session=session, kind=kind, role=role,
                    since=since, until=until, seq_range=seq_range, origin=origin)
        return {"hits": hits}

    @server.tool()
    def expand(lo: int, hi: int | None = None) -> dict[str, Any]:
        """Exact events by seq (ms.expand): expand(lo) -> {"event"}; expand(lo, hi) ->
        {"events", "next"}: a page of lo..hi; call again with lo=next while next is set."""
        return call(svc.ms, "expand", lo=lo, hi=hi)

    @server.tool()
    def payload(handle: str, offset: int = 0, length: int | None = None) -> dict[str, Any]:
        """A chunk of a stored payload (an event whose text is too large to inline):
        {"b64", "offset", "total", "next"}."""
        return call(svc.ms, "payload", handle=handle, offset=offset, length=length)

    @server.tool()
    def headlines() -> dict[str, Any]:
        """The headline index of this session: (task, state, next) per evicted seq range."""
        return {"headlines": call(svc.ms, "headlines")}

    @server.tool()
    def run_python(code: str, timeout: float | None = None) -> dict[str, Any]:
        """Run a cell in this session's sandboxed, persistent Python kernel; `ms` inside offers
        search/expand/payload/recent/sessions/headlines. Only printed output comes back
        (stdout, capped; the full output is logged), plus the error. No network, no files
        outside its work dir, wall-time and memory limits; variables persist between calls."""
        return call(svc.run_python, code, timeout)

    @server.resource("scroll://sessions", mime_type="application/json",
                     description="Sessions this server may read: events, seq and time span.")
    def sessions() -> str:
        return json.dumps(call(svc.ms, "sessions", error=ResourceError), ensure_ascii=False)

    @server.resource("scroll://session/{name}", mime_type="application/json",
                     description="The latest 50 events of one session (every origin).")
    def session_events(name: str) -> str:
        return json.dumps(call(svc.ms, "recent", n=50, session=name, origin="*", error=ResourceError),
                          ensure_ascii=False)

    @server.resource("scroll://event/{seq}", mime_type="application/json",
                     description="One event by seq.")
    def event(seq: str) -> str:
        try:
            n = int(seq)
        except ValueError:
            raise ResourceError(f"seq must be an integer, got {seq[:40]!r}") from None
        return json.dumps(call(svc.ms, "expand", lo=n, error=ResourceError)["event"], ensure_ascii=False)

    return server


class BearerToken:
    """ASGI middleware: HTTP requests without `Authorization: Bearer <token>` get a 401."""

    def __init__(self, app: Any, token: str):
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            got = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
            if not hmac.compare_digest(got, self.expected):
                body = b'{"error": "missing or wrong bearer token"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b"Bearer"),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_stdio(server: Any) -> None:
    import anyio

    anyio.run(server.run_stdio_async)


def serve_http(server: Any, host: str = "127.0.0.1", port: int = 8766, token: str | None = None,
               path: str = "/mcp") -> None:
    """Streamable HTTP at http://host:port/path until interrupted. Every request needs the bearer token,
    on loopback too (the server runs code and reads every session for whoever reaches it, and any local
    user can reach a loopback port): without `token`, one is made and printed once at start."""
    import secrets

    import uvicorn

    check_bind(host, token)
    made = token is None
    token = token or secrets.token_urlsafe(24)
    app = BearerToken(server.streamable_http_app(host=host, streamable_http_path=path), token)
    shown = f"[{host}]" if ":" in host else host
    print(f"scroll mcp: streamable HTTP on http://{shown}:{port}{path} (bearer token required)", file=sys.stderr,
          flush=True)
    if made:
        print(f"scroll mcp: token (no --token-file given, made for this run): {token}\n"
              f"scroll mcp: clients send `Authorization: Bearer {token}`", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
