"""`scroll proxy`: an OpenAI-compatible chat-completions context proxy.

    scroll proxy --upstream http://127.0.0.1:8012/v1                 # http://127.0.0.1:8090/v1
    scroll proxy --upstream URL --budget 2048 --retrieval off --db chats.db
    scroll proxy --upstream URL --host 0.0.0.0 --token-file ~/.scroll-proxy-token
    scroll proxy --upstream URL --check [--json]                    # the resolved settings, then exit

Point any OpenAI client at http://HOST:PORT/v1. Each conversation's turns are logged once
(history origin) in the session `proxy:<id>`; the upstream receives the system message, the
headline index of evicted turns, the recent turns that fit --budget and, with --retrieval
search, the top-k evicted events for the newest user message. Settings: configs/proxy.yaml
(or --config), then flags. Exit code 1 for a bad option, 2 for a refused bind.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, emit_json, fail, read_token


def register(app: typer.Typer) -> None:
    @app.command("proxy")
    def proxy(
        upstream: Optional[str] = typer.Option(None, "--upstream",
                                               help="The OpenAI-compatible upstream's base URL, e.g. "
                                                    "http://127.0.0.1:8000/v1 (default: configs/proxy.yaml)."),
        host: str = typer.Option("127.0.0.1", "--host", help="Bind address; anything but loopback needs a token."),
        port: int = typer.Option(8090, "--port", min=1, max=65535, help="Port."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP + " Conversations are appended to it."),
        config: Optional[Path] = typer.Option(None, "--config", help="A proxy YAML (default: proxy.yaml on the "
                                                                     "config search path)."),
        budget: Optional[int] = typer.Option(None, "--budget", help="Prompt tokens the upstream may receive."),
        retrieval: Optional[str] = typer.Option(None, "--retrieval",
                                                help="search: insert the top-k evicted events for the newest user "
                                                     "message; off: headline index only."),
        top_k: Optional[int] = typer.Option(None, "--top-k", help="Events retrieved per request."),
        conversation_key: Optional[str] = typer.Option(None, "--conversation-key",
                                                       help="auto | header | first-messages: how a request's "
                                                            "conversation is named."),
        token_counter: Optional[str] = typer.Option(None, "--token-counter",
                                                    help="auto (the upstream's /tokenize when it has one) | "
                                                         "approximate."),
        token: Optional[str] = typer.Option(None, "--token",
                                            help="A token (>= 16 characters) every request must carry as "
                                                 "Bearer (the OpenAI client's api_key); visible to `ps`: prefer "
                                                 "--token-file."),
        token_file: Optional[Path] = typer.Option(None, "--token-file", help="A file holding the token."),
        check: bool = typer.Option(False, "--check", help="Validate the settings and the bind, print them, exit."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP + " (with --check)"),
    ) -> None:
        """Serve an OpenAI-compatible chat-completions proxy that logs every turn and fits a budget."""
        from scroll.surfaces.proxy import INSTALL, ProxyConfig, ProxyConfigError, check_bind

        token = read_token(token, token_file, as_json)
        try:
            cfg = ProxyConfig.load(config, upstream=upstream, db=db.resolve() if db else None, budget=budget,
                                   retrieval=retrieval, top_k=top_k, conversation_key=conversation_key,
                                   token_counter=token_counter)
        except ProxyConfigError as e:
            fail(str(e), as_json=as_json)
        try:
            check_bind(host, token)
        except ProxyConfigError as e:
            fail(str(e), code=2, as_json=as_json)
        except ImportError as e:
            fail(f"the proxy needs its extra ({e}): {INSTALL}", as_json=as_json)
        if cfg.db is None:
            from scroll.env import default_db

            cfg.db = default_db()
        url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/v1"
        if check:
            info = {**cfg.to_dict(), "url": url, "token": bool(token)}
            emit_json(info) if as_json else typer.echo("\n".join(f"{k}: {v}" for k, v in info.items()))
            return
        from scroll.surfaces.proxy import serve

        typer.echo(f"scroll proxy: {url} -> {cfg.upstream} (budget {cfg.budget} tokens, retrieval {cfg.retrieval}, "
                   f"log {cfg.db}){' (token required)' if token else ''}", err=True)
        try:
            serve(cfg, host=host, port=port, token=token)
        except ImportError as e:
            fail(str(e), as_json=as_json)
