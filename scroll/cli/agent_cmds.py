"""`scroll demo | run | chat`: the agent loop from the shell.

Scope: `run` and `chat` let the model's `ms` read every session that holds history events
(imported conversations, lines typed in `chat`) unless `--sessions a,b` names some or
`--all-sessions` opens the whole log. `demo` grants its generated history. Nothing that an
evaluation scores against (answers, question ids) is passed to the agent.
"""
from __future__ import annotations

import json
import statistics
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Optional

import typer

from scroll.controls import show_controls

from .common import DB_HELP, JSON_HELP, console, db_path, emit_json, fail

LOOP_HELP = ("Loop config YAML (default: loop.yaml from the config dirs: $SCROLL_CONFIG_DIR, the "
             "checkout's configs/, the packaged defaults; else built-in defaults).")
URL_HELP = "OpenAI-compatible server URL(s), e.g. http://127.0.0.1:8000/v1 (comma-separated for replicas)."
LLM_HELP = ("LLM backend config: a YAML file or a preset name found in <config dir>/llm/ "
            "(openai, tiny-transformers, ...).")
SESSIONS_HELP = ("History sessions the model may read, comma-separated (default: every session "
                 "holding history events).")
ALL_SESSIONS_HELP = "Let the model read the whole log (every session, every origin)."


def _loop_config(path: Optional[Path], **overrides):
    from scroll.config import LoopConfig

    return LoopConfig.load(path, **overrides)


def open_log(path: Path, as_json: bool = False, **kw):
    """EventLog(path, **kw) (e.g. readonly=True), or a one-line error (exit 1) for a directory,
    a file that is not SQLite, or an SQLite file that is not a Scroll log (nothing is written)."""
    import sqlite3

    from scroll.events import EventLog, LogError

    try:
        return EventLog(path, **kw)
    except (LogError, sqlite3.DatabaseError, OSError) as e:
        fail(str(e), as_json=as_json)


def _parse_scope(sessions: Optional[str], all_sessions: bool, as_json: bool = False):
    """--sessions / --all-sessions -> Agent.run(sessions=...): None (every history session),
    ALL_SESSIONS (the whole log) or a list of session names (checked by `_check_scope`)."""
    from scroll.capability import ALL_SESSIONS

    if sessions is not None and all_sessions:
        fail("--sessions and --all-sessions exclude each other", as_json=as_json)
    if all_sessions:
        return ALL_SESSIONS
    if sessions is None:
        return None
    names = list(dict.fromkeys(n.strip() for n in sessions.split(",") if n.strip()))
    if not names:
        fail("--sessions needs at least one session name (a,b,c)", as_json=as_json)
    return names


def _check_scope(scope, log, as_json: bool = False):
    """Every session named by --sessions exists in the log (a typo would scope the run to nothing)."""
    if not isinstance(scope, list):
        return scope
    known = {row["session"] for row in log.sessions()}
    unknown = [n for n in scope if n not in known]
    if unknown:
        listed = sorted(known)
        fail(f"--sessions: no session {', '.join(map(repr, unknown))} in {log.path} (sessions: "
             f"{', '.join(listed[:20]) or 'none'}{' …' if len(listed) > 20 else ''})", as_json=as_json)
    return scope


def _model_backend(model_url: Optional[str], llm_cfg: Optional[str], required: bool):
    """A real model backend from flags, or None (the caller decides what that means)."""
    if not model_url and not llm_cfg:
        if required:
            raise ValueError("give --model-url or --llm")
        return None
    from scroll.llm import LLMConfig, make_llm

    return make_llm(LLMConfig.from_flags(model_url, llm_cfg))


def _show_step(c, label: str):
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    def show(rec, reply, exposure):
        from scroll.reply import extract_code

        code = extract_code(reply) or "(no code)"
        c.print(Panel(Syntax(code, "python", word_wrap=True), title=f"step {rec.step} · {label}",
                      subtitle=f"view {rec.view_tokens} tok · exposure {rec.exposure_tokens} tok · "
                               f"overhead {rec.overhead_s * 1000:.1f} ms · prefix reuse "
                               f"{'-' if rec.prefix_reuse is None else f'{rec.prefix_reuse:.3f}'}"))
        text = exposure if len(exposure) < 1500 else exposure[:1400] + f"\n… ({len(exposure)} chars)"
        c.print(Panel(Text(text), title="exposure (what the model sees next)", style="dim"))  # plain: no markup
    return show


def _readable(d: dict) -> str:
    """A backend's describe() as one readable line: "backend openai · model m · url http://..."."""
    return " · ".join(f"{k.replace('_', ' ')} {', '.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                      for k, v in d.items() if v not in (None, "", [], {}) and not isinstance(v, dict))


def _is_demo_log(path: Path) -> bool:
    """A log written by the demo generator: its label sidecar holds the generator's stamp."""
    from scroll.labels import LabelError, LabelStore

    try:
        return isinstance(LabelStore(path).get("generated"), dict)
    except (LabelError, OSError):
        return False


def _clear_demo_log(path: Path, force: bool, as_json: bool) -> None:
    """Delete the log at `path` (and its sidecars) so the demo can rebuild it; refuse a log that
    is not a demo log unless `force`."""
    import shutil

    from scroll.labels import sidecar_path

    if path.is_dir():
        fail(f"{path} is a directory, not an event log file", as_json=as_json)
    if path.exists() and not force and not _is_demo_log(path):
        fail(f"{path} is not a demo log (no generator stamp in {sidecar_path(path).name}); the demo "
             f"rebuilds its log from scratch, so it refuses to delete this one. Pick another --db, "
             f"or pass --force to replace it", as_json=as_json)
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    sidecar_path(path).unlink(missing_ok=True)
    for suffix in (".index", ".payloads"):
        shutil.rmtree(str(path) + suffix, ignore_errors=True)


def _turn_line(obj: dict) -> None:
    """One JSON object per line on stdout (JSONL), flushed at once."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        db: Optional[Path] = typer.Option(None, "--db", help="Where to write the demo log (default: $SCROLL_HOME/demo.db; "
                                          "rebuilt each run). A log there that the demo did not write is refused "
                                          "unless --force."),
        force: bool = typer.Option(False, "--force", help="Replace the log at --db even when it is not a demo log "
                                   "(DELETES it and its sidecars)."),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP + " Without it, the reference policy runs."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        seed: int = typer.Option(0, "--seed", min=0, help="Seed of the generated history."),
        tokens: int = typer.Option(200_000, "--tokens", min=10_000, help="Target size of the generated history (tokens)."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the summary table."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Generate a long multi-session history and answer questions that need exact old details."""
        from scroll.agent import Agent
        from scroll.session import history_sessions
        from scroll.env import data_dir
        from scroll.policies.reference import ReferencePolicy
        from scroll.tasks import build_demo_log

        try:
            cfg = _loop_config(loop, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=False)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        path = db.resolve() if db else data_dir() / "demo.db"
        _clear_demo_log(path, force, as_json)
        c = console()
        if model is not None:
            try:
                info = model.describe()
            except Exception as e:  # noqa: BLE001
                fail(f"model backend unusable: {e}", as_json=as_json)
            label = f"model {info.get('model')} via {info.get('backend')}"
            policy = model
        else:
            policy = ReferencePolicy()
            label = "REFERENCE POLICY (deterministic program writer, not a model)"
        if not as_json:
            c.rule(f"[bold]Scroll demo · {label}")
        with console().status("generating and importing the history…") if not as_json else nullcontext():
            log, tasks = build_demo_log(path, seed=seed, target_tokens=tokens)
            log.search("index warm-up", k=1)  # build the search index now, not inside step 1
        history = history_sessions(log)  # the generated history, before any agent session exists
        history_tokens = log.stats()["tokens_estimate"]
        if not as_json:
            c.print(f"history: {log.stats()['events']} events in {len(history)} sessions, "
                    f"~{history_tokens} tokens (chars/4) → {path}")
        rows = []
        try:
            for n, t in enumerate(tasks, 1):
                if not as_json:
                    c.rule(f"[bold cyan]{t.question_id}[/] {t.question}")
                # the agent gets the question and the history's sessions, never the label data
                with Agent.open(log, policy, cfg, session=f"demo-{n}",
                           on_step=None if (as_json or quiet) else _show_step(c, label)) as agent:
                    try:
                        res = agent.run(t.question, sessions=history)
                    except Exception as e:  # the sandbox refused, a backend broke, ...
                        fail(f"{type(e).__name__}: {e}", as_json=as_json)
                exposure = sum(s.exposure_tokens for s in res.steps)
                reuse = [s.prefix_reuse for s in res.steps if s.prefix_reuse is not None and s.evicted == 0]
                rows.append({
                    "question_id": t.question_id, "session": res.session, "kind": t.kind, "question": t.question,
                    "expected": t.answer,
                    "answer": res.answer, "correct": bool(res.answer is not None and t.check(res.answer)),
                    "reason": res.reason, "error": res.error, "steps": len(res.steps), "exposure_tokens": exposure,
                    "exposure_pct_of_history": round(100 * exposure / max(1, history_tokens), 3),
                    "min_prefix_reuse": min(reuse) if reuse else None,
                    "overhead_p50_ms": round(1000 * statistics.median(s.overhead_s for s in res.steps), 2) if res.steps else None,
                })
        finally:
            log.close()
            policy.close()
        summary = {"policy": label, "backend": policy.describe(), "db": str(path), "history_tokens": history_tokens,
                   "history_sessions": len(history),
                   "correct": sum(r["correct"] for r in rows), "questions": len(rows), "results": rows}
        if as_json:
            emit_json(summary)
            return
        from rich.table import Table

        table = Table(title=f"Scroll demo · {label}")
        for col in ("question", "expected", "answer", "ok", "steps", "exposure % hist", "prefix reuse", "overhead p50 ms"):
            table.add_column(col, overflow="fold")
        for r in rows:
            table.add_row(r["question"], str(r["expected"]), str(r["answer"]), "✅" if r["correct"] else "❌",
                          str(r["steps"]), f"{r['exposure_pct_of_history']:.3f}",
                          "-" if r["min_prefix_reuse"] is None else f"{r['min_prefix_reuse']:.3f}",
                          str(r["overhead_p50_ms"]))
        c.print(table)
        c.print(f"{summary['correct']}/{summary['questions']} correct · answers by: [bold]{label}[/]")

    @app.command()
    def run(
        task: str = typer.Argument(..., help="The task / question for the agent."),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        session: str = typer.Option("run", "--session", help="Session name for the agent's own events."),
        sessions: Optional[str] = typer.Option(None, "--sessions", help=SESSIONS_HELP),
        all_sessions: bool = typer.Option(False, "--all-sessions", help=ALL_SESSIONS_HELP),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Override the loop's step limit."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Run the agent loop once on an existing event log with a real model.

        Exit status: 0 when the loop ended (with or without an answer), 1 on bad input or when the model backend kept failing (reason "backend_error"; its last error is printed)."""
        from scroll.agent import Agent

        if not session.strip():
            fail("--session must not be empty", as_json=as_json)
        scope = _parse_scope(sessions, all_sessions, as_json)
        try:
            cfg = _loop_config(loop, max_steps=max_steps, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=True)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        c = console()
        with open_log(db_path(db), as_json) as log:
            _check_scope(scope, log, as_json)
            with Agent.open(log, model, cfg, session=session,
                       on_step=None if as_json else _show_step(c, "model")) as agent:
                res = agent.run(task, sessions=scope)
        failed = res.reason == "backend_error"
        if as_json:
            emit_json(res.to_dict())
        else:
            c.print(f"answer: [bold]{res.answer}[/] (reason: {res.reason}, {len(res.steps)} steps)")
        if failed:
            from rich.console import Console
            from rich.markup import escape

            Console(stderr=True, soft_wrap=True).print(
                f"[bold red]error:[/] the model backend kept failing: {escape(str(res.error))}", highlight=False)
            raise typer.Exit(1)

    @app.command()
    def chat(
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        session: str = typer.Option("chat", "--session", help="Session name (events and kernel state persist in it)."),
        sessions: Optional[str] = typer.Option(None, "--sessions", help=SESSIONS_HELP + " Your lines are history "
                                               "too: this session is always readable."),
        all_sessions: bool = typer.Option(False, "--all-sessions", help=ALL_SESSIONS_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help="JSONL on stdout: one object per turn "
                                     '({"turn", "session", "task", "answer", "reason", "steps", "error", ...}); '
                                     "lines are read from stdin without a prompt."),
    ) -> None:
        """Interactive session against a real model: each line you type is a task for the loop.

        Every line is logged as history (origin "history": part of the conversation the model may search later). An empty line or end of input ends the chat."""
        from rich.text import Text

        from scroll.agent import Agent
        from scroll.origin import Origin

        if not session.strip():
            fail("--session must not be empty", as_json=as_json)
        scope = _parse_scope(sessions, all_sessions, as_json)
        try:
            cfg = _loop_config(loop, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=True)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        c = console()
        path = db_path(db)
        with open_log(path, as_json) as log:
            _check_scope(scope, log, as_json)
            if not as_json:
                c.print(Text.assemble(("scroll chat", "bold"), f" · {_readable(model.describe())} · log {path} · "
                                      "empty line or Ctrl-D to quit"))
            with Agent.open(log, model, cfg, session=session,
                       on_step=None if as_json else _show_step(c, "model")) as agent:
                turn = 0
                while True:
                    try:
                        line = sys.stdin.readline() if as_json else c.input("[bold green]you> [/]")
                    except (EOFError, KeyboardInterrupt):
                        break
                    line = line.rstrip("\n")
                    if not line.strip():
                        break
                    turn += 1
                    # the user's line is conversation (history), logged as this run's task event
                    res = agent.run(line, sessions=scope, task_origin=Origin.HISTORY)
                    if as_json:
                        _turn_line({"turn": turn, "session": res.session, "task": line, "answer": res.answer,
                                    "reason": res.reason, "steps": len(res.steps), "error": res.error,
                                    "evictions": res.evictions, "sessions": res.sessions})
                    else:  # the answer is model text: shown as plain text (no markup, control characters escaped)
                        why = f"{res.reason}: {res.error}" if res.error else res.reason
                        shown = str(res.answer) if res.answer is not None else f"(no answer: {why})"
                        c.print(Text.assemble(("scroll> ", "bold"), show_controls(shown)))
