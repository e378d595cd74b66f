"""`scroll tasks ...`: generated task sets with leak-free splits (scroll.tasks.splits)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .common import JSON_HELP, console, emit_json, fail

tasks_app = typer.Typer(help="Generated long-history task sets: train / dev / test splits without leakage.",
                        no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

SPEC_HELP = ("Task-set spec: a YAML path, or a name found as tasks/<NAME>.yaml on the config search path "
             "(e.g. distill-v1, distill-ci).")


@tasks_app.callback()
def _tasks() -> None:
    """Generated long-history task sets: train / dev / test splits without leakage."""


@tasks_app.command("build")
def build_cmd(
    spec: str = typer.Option(..., "--spec", help=SPEC_HELP),
    out: Path = typer.Option(..., "--out", help="Output directory: taskset.json + histories/<split>-<n>.db. "
                             "A complete one from the same spec is reused; a partial one is completed."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Build a task set: one event log per history (labels in sidecars) and taskset.json."""
    import time

    from scroll.tasks.splits import TaskSetSpec, build_taskset

    try:
        resolved = TaskSetSpec.load(spec)
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    if out.exists() and not out.is_dir():
        fail(f"{out} exists and is not a directory", as_json=as_json)
    t0 = time.perf_counter()
    reused = {"n": 0}
    try:
        if as_json:
            def progress(ev):
                reused["n"] += bool(ev["reused"])
            ts = build_taskset(resolved, out, progress=progress)
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            total = sum(s.histories for s in resolved.splits.values())
            with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=console(), transient=False) as bar:
                job = bar.add_task(f"{resolved.name}: histories", total=total)

                def progress(ev):
                    reused["n"] += bool(ev["reused"])
                    desc = f"{resolved.name}: {ev['split']}-{ev['n']:03d}" if ev["split"] else f"{resolved.name}: reused"
                    bar.update(job, completed=ev["done"], description=desc)
                ts = build_taskset(resolved, out, progress=progress)
    except (ValueError, OSError) as e:
        fail(f"{type(e).__name__}: {e}", as_json=as_json)
    summary = ts.summary()
    summary["seconds"] = round(time.perf_counter() - t0, 2)
    summary["histories_reused"] = reused["n"]
    if as_json:
        emit_json(summary)
        return
    _print_summary(summary)
    console().print(f"built in {summary['seconds']} s ({reused['n']} histories reused) → {out}")


@tasks_app.command("write")
def write_cmd(
    out: Path = typer.Argument(..., help="The JSON file to write (replaced atomically)."),
    fmt: str = typer.Option("longmemeval", "--format", help="longmemeval (one instance per question, each "
                            "with the whole haystack) or locomo (one sample, its qa list)."),
    tokens: str = typer.Option("200000", "--tokens", help="History length in tokens (chars/4): 1e4 ... 1e7."),
    seed: int = typer.Option(0, min=0, help="Generator seed (of the first history)."),
    histories: int = typer.Option(1, "--histories", min=1, help="How many histories, seeds SEED, SEED+1, ... "
                                  "(each --tokens long, with its own questions): a file that `scroll collect "
                                  "--data` and `scroll distill eval --data` can split by history."),
    families: Optional[str] = typer.Option(None, help="Comma-separated task families (default: the "
                                           "benchmark's 28, every category 4 times)."),
    questions: Optional[int] = typer.Option(None, min=1, help="Only the first N questions of each history "
                                            "(LongMemEval repeats the haystack per question: N x the history's "
                                            "size)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write generated long histories (one by default) with their questions in a public benchmark
    format, so every loader (scroll import, scroll bench run --data, scroll collect --data) reads it."""
    import os
    import time

    from scroll.tasks.catalog import BENCH_FAMILIES
    from scroll.tasks.formats import write_locomo, write_longmemeval
    from scroll.tasks.history import build_history, sized

    if fmt not in ("longmemeval", "locomo"):
        fail(f"--format must be longmemeval or locomo, not {fmt!r}", as_json=as_json)
    try:
        n = int(float(tokens))
    except ValueError:
        fail(f"--tokens must be a number like 2e5, not {tokens!r}", as_json=as_json)
    if n < 1000:
        fail("--tokens must be >= 1000", as_json=as_json)
    names = [x.strip() for x in families.split(",") if x.strip()] if families else list(BENCH_FAMILIES)
    t0 = time.perf_counter()
    hs = []
    try:
        for k in range(histories):
            h = build_history(seed=seed + k, target_tokens=n, families=names, pool="all", **sized(n))
            if questions:
                h.tasks = h.tasks[:questions]
            hs.append(h)
    except ValueError as e:
        fail(str(e), as_json=as_json)
    gen_s = time.perf_counter() - t0
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    (write_longmemeval if fmt == "longmemeval" else write_locomo)(hs if histories > 1 else hs[0], tmp)
    os.replace(tmp, out)
    summary = {"out": str(out), "format": fmt, "target_tokens": n, "histories": histories,
               "tokens": sum(h.n_tokens for h in hs), "sessions": sum(len(h.sessions) for h in hs),
               "events": sum(len(h.rows) for h in hs), "questions": sum(len(h.tasks) for h in hs),
               "bytes": out.stat().st_size, "seed": seed,
               "generate_s": round(gen_s, 3), "total_s": round(time.perf_counter() - t0, 3)}
    if as_json:
        emit_json(summary)
        return
    console().print(f"{fmt}: {summary['questions']} questions over {histories} histor"
                    f"{'y' if histories == 1 else 'ies'} of {summary['tokens']:,} tokens in all "
                    f"({summary['sessions']} sessions) -> {out} ({summary['bytes']:,} bytes) in {summary['total_s']} s")


@tasks_app.command("show")
def show_cmd(
    out: Path = typer.Argument(..., help="A task-set directory (holding taskset.json)."),
    teacher: Optional[str] = typer.Option(None, "--teacher", help="Also run a teacher on every task, in-process and "
                                          "without writing the logs, and report its accuracy per split: `reference` "
                                          "(the regex teacher, `generated` pack) or `writer` (the program writer)."),
    split: Optional[list[str]] = typer.Option(None, "--split", help="With --teacher: only these splits (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Counts per split and kind, history tokens; optionally the teacher's accuracy per split."""
    from scroll.tasks.splits import TaskSet

    try:
        ts = TaskSet.load(out)
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    summary = ts.summary()
    if teacher:
        from scroll.policies.evaluate import teacher_accuracy

        try:
            summary["teacher"] = teacher_accuracy(ts, splits=split or None, teacher=teacher)
        except ValueError as e:
            fail(str(e), as_json=as_json)
    if as_json:
        emit_json(summary)
        return
    _print_summary(summary)


def _print_summary(summary: dict) -> None:
    from rich.table import Table

    t = Table(title=f"task set {summary['name']} (seed {summary['seed']}): {summary['tasks']} tasks")
    for col in ("split", "pool/wording", "logs", "tasks", "kinds", "tokens/log"):
        t.add_column(col)
    teacher = summary.get("teacher", {}).get("splits", {})
    if teacher:
        t.add_column("teacher")
    short = {"knowledge_update": "update"}
    for name, s in summary["splits"].items():
        row = [name, f"{s['pool']}/{s['wording']}", str(s["histories"]), str(s["tasks"]),
               " ".join(f"{short.get(k, k)}:{v}" for k, v in s["kinds"].items()),
               f"~{s['tokens_mean']}"]
        if teacher:
            r = teacher.get(name)
            row.append(f"{r['correct']}/{r['tasks']} {100 * r['accuracy']:.0f}%" if r else "-")
        t.add_row(*row)
    console().print(t)


def register(app: typer.Typer) -> None:
    app.add_typer(tasks_app, name="tasks")
