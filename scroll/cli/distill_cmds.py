"""`scroll collect` and `scroll distill export | eval | report` (+ `sft` from sft_cmds when present).

    scroll tasks build --spec distill-ci --out var/tasksets/ci
    scroll collect --taskset var/tasksets/ci --split train --split dev --teacher reference --out var/runs/teacher
    scroll distill export --runs var/runs/teacher --out var/sft
    scroll distill eval --taskset var/tasksets/ci --split test_unseen --label untrained \\
        --llm smollm2-transformers --out var/eval/untrained
    scroll distill report --runs var/eval/teacher --runs var/eval/untrained --runs var/eval/trained \\
        --out var/report.json --md var/report.md

`collect` and `eval` are the same runner (scroll.runner.run_tasks): every task through the
real loop and the sandboxed kernel, judged host-side, one JSONL record per task, resumable.
The reference policy (`--teacher reference`) is a deterministic, non-LLM program writer:
its records say so (backend "reference-policy"), never pass them off as a model's.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, List, Optional

import typer

from .common import JSON_HELP, console, emit_json, fail

distill_app = typer.Typer(help="Distillation: export agent steps as SFT data, evaluate students, report.",
                          no_args_is_help=True)

TASKSET_HELP = "Task set folder written by `scroll tasks build` (taskset.json + histories/)."
SPLIT_HELP = "Split to run (repeatable)."
TEACHER_HELP = ("`reference`: the reference policy, a deterministic labelled NON-LLM program writer "
                "(scroll.policies.ReferencePolicy).")
URL_HELP = "OpenAI-compatible server URL(s), e.g. http://127.0.0.1:8000/v1 (comma-separated for replicas)."
LLM_HELP = "LLM backend config: a YAML file or a preset name in <config dir>/llm/ (openai, tiny-transformers, ...)."
MODEL_HELP = "Override the LLM config's model (a served model name, or a local model folder for transformers)."
LOOP_HELP = ("Loop config: a YAML path, or NAME for loop/NAME.yaml or NAME.yaml in the config dirs "
             "(default: loop.yaml there, else built-in defaults).")
CONC_HELP = "Tasks run in parallel (threads; each has its own kernel and log handle)."
LIMIT_HELP = "Run only the first N tasks of each split."


def _backend_factory(teacher: Optional[str], model_url: Optional[str], llm: Optional[str],
                     model: Optional[str]) -> tuple[Callable, str]:
    """(make_llm for the runner, a default label); validated before any task runs."""
    given = [x for x in (teacher, model_url or llm) if x]
    if len(given) != 1:
        raise ValueError("give exactly one of --teacher reference, or --model-url / --llm")
    if teacher is not None:
        if teacher != "reference":
            raise ValueError(f"--teacher {teacher!r}: only `reference` (the reference policy) exists")
        if model:
            raise ValueError("--model goes with --llm / --model-url, not with --teacher")
        from scroll.policies import ReferencePolicy

        return ReferencePolicy, "teacher"
    from scroll.llm import LLMConfig, make_llm
    from scroll.runner import Serialized

    overrides = {}
    if model_url:
        overrides["base_urls"] = [u.strip() for u in model_url.split(",") if u.strip()]
    if model:
        overrides["model"] = model
    cfg = LLMConfig.from_yaml(llm or "openai", **overrides)
    cfg.validate()
    if cfg.backend == "transformers":  # one copy of the weights, one generate at a time
        shared = Serialized(make_llm(cfg))
        return (lambda: shared), "model"
    return (lambda: make_llm(cfg)), "model"


def _refs(taskset: Path, splits: List[str], limit: Optional[int]):
    from scroll.tasks.splits import TaskSet

    ts = TaskSet.load(taskset)
    unknown = [s for s in splits if s not in ts.splits]
    if unknown:
        raise ValueError(f"split(s) {unknown} not in {taskset} (it has: {', '.join(ts.splits)})")
    refs = []
    for s in dict.fromkeys(splits):
        refs += ts.splits[s][:limit] if limit else ts.splits[s]
    if not refs:
        raise ValueError(f"no tasks in split(s) {splits} of {taskset}")
    return refs


def _summary(recs, label: str, out: Path, wall: float) -> dict:
    by: dict[str, dict] = {}
    for r in recs:
        s = by.setdefault(r.split, {"tasks": 0, "correct": 0, "steps": 0, "executable_cells": 0,
                                    "runner_errors": 0, "wall_s": 0.0})
        s["tasks"] += 1
        s["correct"] += r.correct
        s["steps"] += r.steps
        s["executable_cells"] += r.executable_cells
        s["runner_errors"] += r.reason == "runner_error"
        s["wall_s"] += r.wall_s
    for s in by.values():
        s["success_rate"] = s["correct"] / s["tasks"] if s["tasks"] else None
        s["executable_cell_rate"] = s["executable_cells"] / s["steps"] if s["steps"] else None
        s["mean_steps"] = s["steps"] / s["tasks"] if s["tasks"] else None
    backend = recs[0].backend if recs else None
    return {"label": label, "backend": backend, "out": str(out), "runs": str(out / "runs.jsonl"),
            "tasks": len(recs), "correct": sum(r.correct for r in recs), "wall_s": round(wall, 2),
            "splits": by}


def _run(taskset, split, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
         no_sandbox, as_json, default_splits=None):
    from scroll.runner import run_tasks

    splits = split or default_splits
    if not splits:
        fail("give at least one --split", as_json=as_json)
    try:
        from scroll.config import LoopConfig

        cfg = LoopConfig.load(loop, sandbox=False if no_sandbox else None)  # a path, or loop/NAME.yaml
        make, default_label = _backend_factory(teacher, model_url, llm, model)
        refs = _refs(taskset, splits, limit)
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    label = label or default_label
    c = console()
    if not as_json:
        who = ("REFERENCE POLICY (deterministic program writer, not a model)" if teacher else f"{llm or 'openai'}"
               + (f" @ {model_url}" if model_url else "") + (f" model={model}" if model else ""))
        c.print(f"[bold]{label}[/] · {who} · {len(refs)} tasks ({', '.join(splits)}) · concurrency {concurrency} "
                f"· sandbox {'on' if cfg.sandbox else 'OFF'} → {out}")
    t0 = time.perf_counter()
    try:
        recs = run_tasks(refs, make, cfg, out, concurrency=concurrency, label=label, resume=resume,
                         progress=True)  # on stderr, with or without --json
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    summary = _summary(recs, label, out, time.perf_counter() - t0)
    if as_json:
        emit_json(summary)
        return
    from rich.table import Table

    t = Table(title=f"{label} · {summary['correct']}/{summary['tasks']} correct")
    for col in ("split", "tasks", "correct", "success %", "exec-cell %", "mean steps", "runner errors"):
        t.add_column(col, no_wrap=col == "split")
    for name, s in summary["splits"].items():
        t.add_row(name, str(s["tasks"]), str(s["correct"]), f"{100 * s['success_rate']:.1f}",
                  "-" if s["executable_cell_rate"] is None else f"{100 * s['executable_cell_rate']:.1f}",
                  f"{s['mean_steps']:.2f}", str(s["runner_errors"]))
    c.print(t)
    c.print(f"records: {out / 'runs.jsonl'}")


def register(app: typer.Typer) -> None:
    @app.command()
    def collect(
        taskset: Path = typer.Option(..., "--taskset", help=TASKSET_HELP),
        split: List[str] = typer.Option(None, "--split", help=SPLIT_HELP + " Default: train and dev."),
        teacher: Optional[str] = typer.Option(None, "--teacher", help=TEACHER_HELP),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP),
        loop: Optional[str] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        out: Path = typer.Option(..., "--out", help="Run folder: runs.jsonl (+ runs.meta.json)."),
        concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help=CONC_HELP),
        limit: Optional[int] = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
        label: Optional[str] = typer.Option(None, "--label", help="Who answers, in the records "
                                            "(default: teacher for --teacher, else model)."),
        resume: bool = typer.Option(True, "--resume/--no-resume", help="Skip tasks already in runs.jsonl "
                                    "(--no-resume refuses a folder that holds records)."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Collect trajectories: run a task set's splits through the agent loop (the teacher, or a model)."""
        _run(taskset, split, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
             no_sandbox, as_json, default_splits=["train", "dev"])

    @distill_app.command("eval")
    def evaluate(
        taskset: Path = typer.Option(..., "--taskset", help=TASKSET_HELP),
        split: List[str] = typer.Option(None, "--split", help=SPLIT_HELP + " Default: test_unseen, "
                                        "test_paraphrase, test_heldout_kind (those the task set has)."),
        label: str = typer.Option(..., "--label", help="teacher | untrained | trained[:NAME]: the report "
                                  "compares these."),
        teacher: Optional[str] = typer.Option(None, "--teacher", help=TEACHER_HELP),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP + " E.g. a trained model folder."),
        loop: Optional[str] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        out: Path = typer.Option(..., "--out", help="Run folder: runs.jsonl (+ runs.meta.json)."),
        concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help=CONC_HELP),
        limit: Optional[int] = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
        resume: bool = typer.Option(True, "--resume/--no-resume", help="Skip tasks already in runs.jsonl."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Evaluate one label (teacher, untrained or trained student) on the test splits."""
        splits = split
        if not splits:
            try:
                from scroll.tasks.splits import TaskSet

                have = TaskSet.load(taskset).splits
            except (ValueError, OSError) as e:
                fail(str(e), as_json=as_json)
            splits = [s for s in ("test_unseen", "test_paraphrase", "test_heldout_kind") if s in have]
        _run(taskset, splits, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
             no_sandbox, as_json)

    @distill_app.command("export")
    def export(
        runs: List[Path] = typer.Option(..., "--runs", help="Run folder (repeatable)."),
        out: Path = typer.Option(..., "--out", help="Output folder: <split>.jsonl, <split>.meta.jsonl, "
                                 "notebooks/, filters.json."),
        success_only: bool = typer.Option(True, "--success-only/--all", help="Only trajectories the judge "
                                          "passed (default), or all."),
        max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Drop trajectories with more steps."),
        max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="Drop steps whose prompt + "
                                                 "completion exceed N tokens."),
        dedup: bool = typer.Option(False, "--dedup", help="Keep identical prompt + completion once."),
        tokenizer: Optional[Path] = typer.Option(None, "--tokenizer", help="Student model/tokenizer folder for "
                                                 "token counts (default: chars/4, said so)."),
        notebooks: bool = typer.Option(True, "--notebooks/--no-notebooks", help="Write one .ipynb per session."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Export trajectories as TRL prompt-completion JSONL (one line per step; prompts rebuilt from the log
        and checked against the logged sha256)."""
        try:
            from distill.export import export_runs

            rep = export_runs(runs, out, success_only=success_only, max_steps=max_steps, max_tokens=max_tokens,
                              dedup=dedup, tokenizer=tokenizer, notebooks=notebooks)
        except (ValueError, OSError, RuntimeError) as e:
            fail(str(e), as_json=as_json)
        if as_json:
            emit_json({k: v for k, v in rep.items() if k not in ("mismatched_steps", "notebooks")}
                      | {"notebooks": len(rep["notebooks"])})
            return
        from rich.console import Console

        c = Console(soft_wrap=True)
        for f in rep["filters"]:
            c.print(f"{f['name']:>13}: {f['before']} → {f['after']} {f['unit']}  ({f['rule']})", highlight=False)
        for split, f in rep["files"].items():
            c.print(f"[bold]{split}[/]: {f['lines']} steps from {f['trajectories']} trajectories → {f['data']}")
        if rep["mismatches"]:
            c.print(f"[bold yellow]{rep['mismatches']} step(s) not exported: the rebuilt prompt does not match "
                    f"the logged sha256 (listed in filters.json)")
        c.print(f"token counts: {rep['token_counter']} · {len(rep['notebooks'])} notebooks · {out / 'filters.json'}")

    @distill_app.command("report")
    def report(
        runs: List[Path] = typer.Option(..., "--runs", help="Run folder (repeatable): teacher, untrained, trained."),
        out: Path = typer.Option(..., "--out", help="Report JSON file."),
        md: Optional[Path] = typer.Option(None, "--md", help="Also write a markdown table here."),
        teacher: str = typer.Option("teacher", "--teacher-label", help="Label of the teacher's records."),
        untrained: str = typer.Option("untrained", "--untrained-label", help="Label of the untrained student's."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Success per split and label (95 % Wilson CI), executable cells, steps, exposure, tokens, time, gap closed."""
        try:
            from distill.report import to_markdown, write_report

            rep = write_report(runs, out, md, teacher=teacher, untrained=untrained)
        except (ValueError, OSError) as e:
            fail(str(e), as_json=as_json)
        if as_json:
            emit_json(rep)
            return
        import sys

        sys.stdout.write(to_markdown(rep))

    try:
        from .sft_cmds import register_sft
    except ImportError:
        register_sft = None
    if register_sft is not None:
        register_sft(distill_app)
    app.add_typer(distill_app, name="distill")
