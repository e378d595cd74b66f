"""`scroll proxy`: an OpenAI-compatible chat-completions proxy that keeps conversations in a
Scroll log and sends the upstream a view under a token budget.

    from scroll.surfaces.proxy import ProxyConfig, create_app, serve
    serve(ProxyConfig(upstream="http://127.0.0.1:8000/v1", budget=4096), host="127.0.0.1", port=8090)

Modules: `config` (ProxyConfig, configs/proxy.yaml), `conversation` (which conversation a
request is, each turn logged once, headlines of evicted ranges), `view` (the upstream's
messages under the budget: system prefix, headline index, recent turns, retrieved events;
token counting), `service` (the two steps without HTTP; retrieval through
scroll.capability.Capability), `app` (Starlette routes, SSE relay, access).
Needs the `proxy` extra (`pip install -e '.[proxy]'`).
"""
from __future__ import annotations

from ..bind import check_bind as _check_bind, is_loopback, loopback_hosts
from .config import ProxyConfig, ProxyConfigError

INSTALL = "pip install -e '.[proxy]'"


def _require() -> None:
    import importlib.util

    missing = [m for m in ("starlette", "uvicorn", "httpx") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"the proxy needs {', '.join(missing)}; install with: {INSTALL}")


def check_bind(host: str, token: str | None) -> None:
    """A non-loopback bind needs a token (>= 16 characters); raises ProxyConfigError."""
    _check_bind(host, token, surface="the proxy", reach="anyone who can reach it could read and write "
                "conversations in the log (clients send the token as their api_key)", error=ProxyConfigError)


def create_app(cfg: ProxyConfig, *, host: str = "127.0.0.1", token: str | None = None, service=None):
    """The Starlette app; a loopback bind without a token answers loopback Host headers only."""
    _require()
    from .app import create_app as make  # lazy: the app needs the optional extra (starlette), checked first

    hosts = loopback_hosts(host) if is_loopback(host) and not token else None
    return make(cfg, token=token, allowed_hosts=hosts, service=service)


def serve(cfg: ProxyConfig, host: str = "127.0.0.1", port: int = 8090, token: str | None = None,
          log_level: str = "warning") -> None:
    """Check the bind, then serve until interrupted."""
    _require()
    check_bind(host, token)
    import uvicorn

    uvicorn.run(create_app(cfg, host=host, token=token), host=host, port=port, log_level=log_level)


__all__ = ["INSTALL", "ProxyConfig", "ProxyConfigError", "check_bind", "create_app", "serve"]
