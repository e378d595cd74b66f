"""The session viewer: a read-only Starlette app over one event log.

Every read of the log goes through `scroll.capability.Capability` (the one typed path to
it, with its scopes and budgets): sessions, events and ranges (`expand`, scoped to one
session where a page shows one), search (`search`: the same BM25 and filters as
`ms.search`), payloads (`payload`, paged). The log is opened with
`EventLog(path, readonly=True)`, which never writes the database, its sidecars or the
index. Every route is GET (HEAD): anything else is 405. Result files are served from the
results folder only (scroll.surfaces.viewer.results).
"""
from __future__ import annotations

import base64
import json
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from scroll.capability import Capability, CapabilityError
from scroll.controls import show_controls
from scroll.events import EventLog

from . import results as res
from .access import SecurityHeaders, TokenGate
from .config import ViewerConfig
from .timeline import LoggedEvent, group_session, step_from

HERE = Path(__file__).resolve().parent
ORIGINS = ("*", "history", "agent", "system")


class Viewer:
    """The app's state: the read-only log and its capability (whole log in scope)."""

    def __init__(self, config: ViewerConfig):
        self.config = config
        self.log = EventLog(config.db, readonly=True)
        self.cap = Capability(self.log, sessions=None)
        self.lock = threading.Lock()  # one capability call at a time (its counters are not thread-safe)

    def scoped(self, session: str) -> Capability:
        return Capability(self.log, sessions=[session])

    def window(self, cap: Capability, lo: int, hi: int, limit: int) -> tuple[list[LoggedEvent], int | None]:
        """Events lo..hi that `cap` may see, at most `limit`, and where the next page starts."""
        out: list[LoggedEvent] = []
        nxt: int | None = lo
        while nxt is not None and len(out) < limit:
            with self.lock:
                page = cap.expand(nxt, hi)
            out += [LoggedEvent.from_capability(d) for d in page["events"]]
            nxt = page["next"]
        if len(out) > limit:
            nxt, out = out[limit].seq, out[:limit]
        return out, nxt

    def session_info(self, name: str) -> dict:
        with self.lock:
            for s in self.cap.sessions():
                if s["session"] == name:
                    return s
        raise KeyError(f"no session {name!r}")


def _int_arg(request: Request, name: str, default: int | None = None) -> int | None:
    v = request.query_params.get(name, "")
    if v == "":
        return default
    try:
        return int(v)
    except ValueError:
        raise CapabilityError(f"{name} must be an integer, got {v[:40]!r}") from None


def _shown(v: Any) -> Any:
    """A page's value with its control characters as escapes (already-safe markup stays markup)."""
    if isinstance(v, Markup):
        return Markup(show_controls(str(v)))
    return show_controls(v) if isinstance(v, str) else v


def _env() -> jinja2.Environment:
    # finalize: every {{ value }} a page shows has its control characters written as escapes (NUL, ANSI);
    # the log keeps them verbatim (scroll.controls)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.ChainableUndefined, trim_blocks=True, lstrip_blocks=True,
                             finalize=_shown)
    env.filters["q"] = lambda v: quote(str(v), safe="")
    env.filters["qpath"] = lambda v: quote(str(v), safe="/")
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str)
    env.filters["columns"] = res.columns
    env.tests["table"] = res.is_table
    env.globals["qs"] = lambda **kw: urlencode({k: v for k, v in kw.items() if v not in (None, "")})
    return env


def create_app(config: ViewerConfig) -> Starlette:
    viewer = Viewer(config)
    env = _env()

    def page(name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(name).render(db=str(config.db), **ctx), status_code=status)

    def sessions(request: Request) -> Response:
        with viewer.lock:
            rows = viewer.cap.sessions()
            stats = viewer.log.stats()
        return page("sessions.html", title="Sessions", sessions=rows, stats=stats)

    def session(request: Request) -> Response:
        name = request.path_params["name"]
        info = viewer.session_info(name)
        start = _int_arg(request, "from", info["first_seq"])
        events, nxt = viewer.window(viewer.scoped(name), start, info["last_seq"], config.page_events)
        return page("session.html", title=f"Session {name}", info=info, timeline=group_session(events),
                    start=start, next=nxt)

    def step(request: Request) -> Response:
        seq = request.path_params["seq"]
        with viewer.lock:
            first = viewer.cap.expand(seq)["event"]
        info = viewer.session_info(first["session"])
        events, _ = viewer.window(viewer.scoped(first["session"]), seq, info["last_seq"], config.page_events)
        found = step_from(events)
        if found is None:
            raise KeyError(f"seq {seq} is not a step (a model reply) of a task")
        after = [e for e in events if e.seq > found.hi]
        following = after[0] if after else None
        return page("step.html", title=f"Step at seq {seq}", step=found, info=info, following=following)

    def seq_range(request: Request) -> Response:
        lo, hi = _int_arg(request, "lo", 1), _int_arg(request, "hi")
        hi = lo if hi is None else hi
        if hi < lo:
            raise CapabilityError("hi must be >= lo")
        name = request.query_params.get("session") or None
        cap = viewer.scoped(name) if name else viewer.cap
        events, nxt = viewer.window(cap, lo, hi, config.page_events)
        return page("range.html", title=f"Events {lo}..{hi}", lo=lo, hi=hi, session=name, events=events,
                    next=nxt, focus=_int_arg(request, "focus"))

    def seq_redirect(request: Request) -> Response:
        seq = request.path_params["seq"]
        with viewer.lock:
            viewer.cap.expand(seq)  # 404 for an unknown seq
        lo = max(1, seq - 5)
        return RedirectResponse(f"/range?{urlencode({'lo': lo, 'hi': seq + 5, 'focus': seq})}#seq-{seq}", 303)

    def search(request: Request) -> Response:
        p = request.query_params
        form = {k: p.get(k, "") for k in ("q", "session", "kind", "role", "since", "until", "lo", "hi", "k")}
        form["origin"] = p.get("origin", "*") if p.get("origin", "*") in ORIGINS else "*"
        hits: list[tuple[LoggedEvent, float | None]] | None = None
        if form["q"].strip():
            lo, hi = _int_arg(request, "lo"), _int_arg(request, "hi")
            if (lo is None) != (hi is None):
                raise CapabilityError("a seq range needs both lo and hi")
            with viewer.lock:
                hits = [(LoggedEvent.from_capability(d), d.get("score")) for d in viewer.cap.search(
                    form["q"], k=_int_arg(request, "k", 20), session=form["session"] or None,
                    kind=form["kind"] or None, role=form["role"] or None, since=form["since"] or None,
                    until=form["until"] or None, seq_range=[lo, hi] if lo is not None else None,
                    origin=form["origin"])]
        return page("search.html", title="Search", form=form, hits=hits, origins=ORIGINS)

    def payload(request: Request) -> Response:
        handle = request.path_params["handle"]
        offset = _int_arg(request, "offset", 0)
        with viewer.lock:
            chunk = viewer.cap.payload(handle, offset, config.payload_page)
        data = base64.b64decode(chunk["b64"])
        text = data.decode("utf-8", errors="replace")
        ctx = dict(handle=handle, text=text, offset=chunk["offset"], end=chunk["offset"] + len(data),
                   total=chunk["total"], next=chunk["next"])
        if request.query_params.get("fragment"):
            return page("payload_chunk.html", **ctx)
        return page("payload.html", title=f"Payload {handle[:16]}", **ctx)

    def runs(request: Request) -> Response:
        root = config.results
        files = res.list_results(root) if root else []
        return page("runs.html", title="Runs", root=str(root) if root else None, files=files)

    def run_view(request: Request) -> Response:
        rel = request.path_params["path"]
        path = res.resolve_result(config.results or Path("/nonexistent"), rel)
        files = res.list_results(config.results)
        ctx: dict[str, Any] = dict(title=rel, rel=rel, kind=path.suffix.lower(), plots=[], data=None, text=None,
                                   error=None)
        if ctx["kind"] == ".json":
            try:
                ctx["data"] = res.load_json(path)
            except (ValueError, UnicodeDecodeError) as e:
                ctx["error"] = str(e)
            ctx["plots"] = res.plots_for(files, rel)
        elif ctx["kind"] != ".png":
            ctx["text"] = path.read_text(encoding="utf-8", errors="replace")[:2_000_000]
        return page("run_file.html", **ctx)

    def run_file(request: Request) -> Response:
        path = res.resolve_result(config.results or Path("/nonexistent"), request.path_params["path"])
        return FileResponse(path, media_type=res.MEDIA_TYPES[path.suffix.lower()])

    async def bad_request(request: Request, exc: Exception) -> Response:
        return page("error.html", status=400, title="Bad request", message=str(exc))

    async def not_found(request: Request, exc: Exception) -> Response:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return page("error.html", status=404, title="Not found", message=str(msg))

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 405:
            return Response("405: the viewer is read-only (GET only)", status_code=405, headers={"allow": "GET, HEAD"})
        return page("error.html", status=exc.status_code, title=str(exc.status_code), message=exc.detail)

    @asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        viewer.log.close()

    routes = [
        Route("/", sessions, methods=["GET"]),
        Route("/session/{name:path}", session, methods=["GET"]),
        Route("/step/{seq:int}", step, methods=["GET"]),
        Route("/range", seq_range, methods=["GET"]),
        Route("/seq/{seq:int}", seq_redirect, methods=["GET"]),
        Route("/search", search, methods=["GET"]),
        Route("/payload/{handle}", payload, methods=["GET"]),
        Route("/runs", runs, methods=["GET"]),
        Route("/runs/view/{path:path}", run_view, methods=["GET"]),
        Route("/runs/file/{path:path}", run_file, methods=["GET"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders)]  # outermost first: every response gets the headers
    if config.allowed_hosts is not None:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(config.allowed_hosts)))
    if config.token:
        middleware.append(Middleware(TokenGate, token=config.token))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={CapabilityError: bad_request, KeyError: not_found,
                                        HTTPException: http_error})
    app.state.viewer = viewer
    return app

