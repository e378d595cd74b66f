"""`scroll demo | run | chat`: the agent loop from the shell."""
from __future__ import annotations

import statistics
from contextlib import nullcontext
from pathlib import Path
from typing import Optional

import typer

from .common import DB_HELP, JSON_HELP, console, db_path, emit_json, fail

LOOP_HELP = "Loop config YAML (default: configs/loop.yaml when present, else built-in defaults)."
URL_HELP = "OpenAI-compatible server URL(s), e.g. http://127.0.0.1:8000/v1 (comma-separated for replicas)."
LLM_HELP = "LLM backend config: a YAML file or a preset name in configs/llm/ (openai, tiny-transformers, ...)."


def _loop_config(path: Optional[Path], **overrides):
    from scroll.config import LoopConfig

    if path is None and Path("configs/loop.yaml").exists():
        path = Path("configs/loop.yaml")
    return LoopConfig.from_yaml(path, **overrides)


def _model_backend(model_url: Optional[str], llm_cfg: Optional[str], required: bool):
    """A real model backend from flags, or None (the caller decides what that means)."""
    if not model_url and not llm_cfg:
        if required:
            raise ValueError("give --model-url or --llm")
        return None
    from scroll.llm import LLMConfig, make_llm

    overrides = {}
    if model_url:
        overrides["base_urls"] = [u.strip() for u in model_url.split(",") if u.strip()]
    cfg = LLMConfig.from_yaml(llm_cfg or "openai", **overrides)
    return make_llm(cfg)


def _show_step(c, label: str):
    from rich.panel import Panel
    from rich.syntax import Syntax

    def show(rec, reply, exposure):
        from scroll.agent import extract_code

        code = extract_code(reply) or "(no code)"
        c.print(Panel(Syntax(code, "python", word_wrap=True), title=f"step {rec.step} · {label}",
                      subtitle=f"view {rec.view_tokens} tok · exposure {rec.exposure_tokens} tok · "
                               f"overhead {rec.overhead_s * 1000:.1f} ms · prefix reuse "
                               f"{'-' if rec.prefix_reuse is None else f'{rec.prefix_reuse:.3f}'}"))
        text = exposure if len(exposure) < 1500 else exposure[:1400] + f"\n… ({len(exposure)} chars)"
        c.print(Panel(text, title="exposure (what the model sees next)", style="dim"), markup=False)
    return show


def register(app: typer.Typer) -> None:
    @app.command()
    def demo(
        db: Optional[Path] = typer.Option(None, "--db", help="Where to write the demo log (default: $SCROLL_HOME/demo.db; rebuilt each run)."),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP + " Without it, the reference policy runs."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        seed: int = typer.Option(0, "--seed", help="Seed of the generated history."),
        tokens: int = typer.Option(200_000, "--tokens", help="Target size of the generated history (tokens)."),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="Only the summary table."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Generate a long multi-session history and answer questions that need exact old details."""
        from scroll.agent import Agent
        from scroll.env import data_dir
        from scroll.policies import ReferencePolicy
        from scroll.tasks import build_demo_log

        try:
            cfg = _loop_config(loop, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=False)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        path = db.resolve() if db else data_dir() / "demo.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
        import shutil

        for suffix in (".index", ".payloads"):
            shutil.rmtree(str(path) + suffix, ignore_errors=True)
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
        history_tokens = log.stats()["tokens_estimate"]
        if not as_json:
            c.print(f"history: {log.stats()['events']} events in {len(log.sessions())} sessions, "
                    f"~{history_tokens} tokens (chars/4) → {path}")
        rows = []
        try:
            for t in tasks:
                if not as_json:
                    c.rule(f"[bold cyan]{t.question_id}[/] {t.question}")
                with Agent(log, policy, cfg, session=f"demo-{t.question_id}",
                           on_step=None if (as_json or quiet) else _show_step(c, label)) as agent:
                    try:
                        res = agent.run(t.question, meta={"question_id": t.question_id, "demo": True})
                    except Exception as e:  # the sandbox refused, a backend broke, ...
                        fail(f"{type(e).__name__}: {e}", as_json=as_json)
                exposure = sum(s.exposure_tokens for s in res.steps)
                reuse = [s.prefix_reuse for s in res.steps if s.prefix_reuse is not None and s.evicted == 0]
                rows.append({
                    "question_id": t.question_id, "kind": t.kind, "question": t.question, "expected": t.answer,
                    "answer": res.answer, "correct": bool(res.answer is not None and t.check(res.answer)),
                    "reason": res.reason, "steps": len(res.steps), "exposure_tokens": exposure,
                    "exposure_pct_of_history": round(100 * exposure / max(1, history_tokens), 3),
                    "min_prefix_reuse": min(reuse) if reuse else None,
                    "overhead_p50_ms": round(1000 * statistics.median(s.overhead_s for s in res.steps), 2) if res.steps else None,
                })
        finally:
            log.close()
            policy.close()
        summary = {"policy": label, "backend": policy.describe(), "db": str(path), "history_tokens": history_tokens,
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
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", help="Override the loop's step limit."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Run the agent loop once on an existing event log with a real model."""
        from scroll.agent import Agent
        from scroll.events import EventLog

        try:
            cfg = _loop_config(loop, max_steps=max_steps, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=True)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        c = console()
        with EventLog(db_path(db)) as log, Agent(log, model, cfg, session=session,
                                                 on_step=None if as_json else _show_step(c, "model")) as agent:
            res = agent.run(task)
        if as_json:
            emit_json(res.to_dict())
        else:
            c.print(f"answer: [bold]{res.answer}[/] (reason: {res.reason}, {len(res.steps)} steps)")

    @app.command()
    def chat(
        model_url: str = typer.Option(..., "--model-url", help=URL_HELP),
        db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP),
        session: str = typer.Option("chat", "--session", help="Session name (events and kernel state persist in it)."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        loop: Optional[Path] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
    ) -> None:
        """Interactive session against a real model server: each line you type is a task for the loop."""
        from scroll.agent import Agent
        from scroll.events import EventLog

        try:
            cfg = _loop_config(loop, sandbox=False if no_sandbox else None)
            model = _model_backend(model_url, llm, required=True)
        except (ValueError, OSError) as e:
            fail(str(e))
        c = console()
        c.print(f"[bold]scroll chat[/] · {model.describe()} · log {db_path(db)} · empty line or Ctrl-D to quit")
        with EventLog(db_path(db)) as log, Agent(log, model, cfg, session=session, on_step=_show_step(c, "model")) as agent:
            while True:
                try:
                    line = c.input("[bold green]you> [/]")
                except (EOFError, KeyboardInterrupt):
                    break
                if not line.strip():
                    break
                res = agent.run(line)  # logs the line as this run's task event
                c.print(f"[bold]scroll>[/] {res.answer if res.answer is not None else f'(no answer: {res.reason})'}")

