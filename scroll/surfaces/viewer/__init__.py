"""`scroll viewer`: a read-only session viewer in the browser (Starlette + Jinja2 templates).

    from scroll.surfaces.viewer import ViewerConfig, create_app, serve
    serve(ViewerConfig(db=Path("var/scroll.db"), results=Path("results")), host="127.0.0.1", port=8765)

Modules: `config` (ViewerConfig), `app` (routes; every log read through scroll.capability.Capability), `timeline`
(a session's events grouped into tasks and steps, the headline tree), `results` (the runs
page's files, served from one folder only), `access` (loopback by default, a token for
anything else). Templates and static assets ship in the package: nothing is fetched from
a CDN. Needs the `viewer` extra (`pip install -e '.[viewer]'`).
"""
from __future__ import annotations

from ..bind import is_loopback, loopback_hosts
from .access import check_bind
from .config import ViewerConfig

INSTALL = "pip install -e '.[viewer]'"


def _require() -> None:
    import importlib.util

    missing = [m for m in ("starlette", "jinja2", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"the viewer needs {', '.join(missing)}; install with: {INSTALL}")


def create_app(config: ViewerConfig):
    """The Starlette app for `config` (a ViewerConfig)."""
    _require()
    from .app import create_app as make  # lazy: the app needs the optional extra (starlette), checked first

    return make(config)


def serve(config: ViewerConfig, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning") -> None:
    """Check the bind (scroll.surfaces.viewer.access.check_bind), then serve until interrupted."""
    _require()

    check_bind(host, config.token)
    from dataclasses import replace

    import uvicorn

    if is_loopback(host) and not config.token and config.allowed_hosts is None:
        config = replace(config, allowed_hosts=loopback_hosts(host))
    uvicorn.run(create_app(config), host=host, port=port, log_level=log_level)


__all__ = ["INSTALL", "ViewerConfig", "create_app", "serve"]
