"""`scroll collect` and `scroll distill export | eval | report` (+ `sft` from sft_cmds when present).

    scroll tasks build --spec distill-ci --out var/tasksets/ci
    scroll collect --taskset var/tasksets/ci --split train --split dev --teacher reference --out var/runs/teacher
    scroll distill export --runs var/runs/teacher --out var/sft
    scroll distill eval --taskset var/tasksets/ci --split test_unseen --label untrained \\
        --llm smollm2-transformers --out var/eval/untrained
    scroll distill eval --taskset var/tasksets/natural-v1 --questions configs/tasks/natural-v1.questions.jsonl \\
        --label untrained --llm smollm2-transformers --out var/eval/untrained-natural
    scroll distill report --runs var/eval/teacher --runs var/eval/untrained --runs var/eval/trained \\
        --out var/report.json --md var/report.md

Self-improvement (STaR-style rejection sampling): the student samples K programs per task,
the checker keeps the right ones, the next student trains on the teacher's + those:

    scroll collect --taskset var/tasksets/ci --split train --model-url http://127.0.0.1:8022/v1 \\
        --samples 4 --temperature 0.7 --seed 1000 --label student-r0 --out var/runs/samples-r1
    scroll distill export --runs var/runs/teacher --runs var/runs/samples-r1 --dedup-trajectories --out var/sft-r1

`collect` and `eval` are the same runner (scroll.runner.run_tasks): every task through the
real loop and the sandboxed kernel, judged host-side, one JSONL record per task, resumable.
With `--samples K` every task runs K times, sample k as label `LABEL-s<k>` (its own records,
snapshots under OUT/logs/s<k>/, resumed on its own) at the loop temperature `--temperature`
(> 0 required) with request seed `--seed` + k. A checker that raises is a runner error (the
record says `judge failed: ...`), never a success. The teachers are deterministic, non-LLM
program writers (`--teacher reference`: the regex teacher, backend "reference-policy";
`--teacher writer`: the wording-robust one, backend "program-writer"): their records say
so, never pass them off as a model's.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Callable, List, Optional, Sequence

import typer

from .common import JSON_HELP, console, emit_json, fail
from .data_opts import (DataChoice, DataOpt, DbQaOpt, FormatOpt, ImportDirOpt, JudgeLlmOpt, JudgeModelOpt,
                        JudgeUrlOpt, data_choice)

distill_app = typer.Typer(help="Distillation: export agent steps as SFT data, evaluate students, report.",
                          no_args_is_help=True)

TASKSET_HELP = "Task set folder written by `scroll tasks build` (taskset.json + histories/)."
SPLIT_HELP = "Split to run (repeatable)."
TEACHER_HELP = ("`reference`: the regex teacher (scroll.policies.reference.ReferencePolicy); `writer`: the wording-robust "
                "teacher (scroll.policies.writer.ProgramWriter). Both are deterministic, labelled NON-LLM program "
                "writers.")
URL_HELP = "OpenAI-compatible server URL(s), e.g. http://127.0.0.1:8000/v1 (comma-separated for replicas)."
LLM_HELP = "LLM backend config: a YAML file or a preset name in <config dir>/llm/ (openai, tiny-transformers, ...)."
MODEL_HELP = "Override the LLM config's model (a served model name, or a local model folder for transformers)."
LOOP_HELP = ("Loop config: a YAML path, or NAME for loop/NAME.yaml or NAME.yaml in the config dirs "
             "(default: loop.yaml there, else built-in defaults).")
CONC_HELP = "Tasks run in parallel (threads; each has its own kernel and log handle)."
LIMIT_HELP = "Run only the first N tasks of each split."
PACK_HELP = ("Task pack (scroll.packs) for the loop: its prompt text and kernel helpers "
             "(LoopConfig.pack; default: the loop config's, else the one a teacher is written for).")
SAMPLES_HELP = ("Run every task K times (labels LABEL-s0 .. LABEL-s<K-1>, each its own records); K > 1 needs "
                "--temperature > 0 and a model (the teachers are deterministic).")
TEMP_HELP = "Sampling temperature of the loop's model calls (overrides the loop config's)."
SEED_HELP = ("Request seed: sample k sends SEED + k (default 0 with --samples > 1, so samples differ and reruns "
             "repeat them; without --samples: the LLM config's).")
PART_HELP = ("With --data: which histories (repeatable): train, dev or held_out, assigned by history so that "
             "no history is in two parts (scroll.bench.data_parts).")
QUESTIONS_HELP = ("Natural questions (JSONL, scroll.tasks.natural) over --taskset's histories: evaluate these "
                  "(split `natural`) instead of the task set's splits.")


def _teacher(name: str):
    """The teacher policy class for `--teacher NAME` (scroll.policies.teachers.TEACHERS) and its default label."""
    from scroll.policies.teachers import TEACHERS, teacher_class

    if name not in TEACHERS:
        raise ValueError(f"--teacher {name!r}: choose one of {', '.join(TEACHERS)} (the regex teacher, the "
                         "wording-robust program writer)")
    return teacher_class(name), "teacher" if name == "reference" else name


def _backend_factory(teacher: Optional[str], model_url: Optional[str], llm: Optional[str],
                     model: Optional[str], seed: Optional[int] = None) -> tuple[Callable, str]:
    """(make_llm for the runner, a default label); validated before any task runs. `seed`:
    the model's request seed (the LLM config's `seed`; teachers take none)."""
    given = [x for x in (teacher, model_url or llm) if x]
    if len(given) != 1:
        raise ValueError("give exactly one of --teacher reference|writer, or --model-url / --llm")
    if teacher is not None:
        cls, label = _teacher(teacher)
        if model:
            raise ValueError("--model goes with --llm / --model-url, not with --teacher")
        return cls, label
    from scroll.llm import LLMConfig, make_llm
    from scroll.runner import Serialized

    cfg = LLMConfig.from_flags(model_url, llm, model=model, seed=seed)
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


def _natural_refs(taskset: Path, questions: Path, limit: Optional[int], *, train: bool = False,
                  skip_kinds: Sequence[str] = ()):
    """The natural questions as refs. `train` (collect): the task set's histories must be train-role (a
    test set's questions are for evaluation only), the refs are of split "train", and questions that touch
    a family of `skip_kinds` (a held-out kind) are left out."""
    try:
        from scroll.tasks.catalog import KINDS
        from scroll.tasks.natural import natural_refs
        from scroll.tasks.splits import TaskSet
    except ImportError as e:
        raise ValueError(f"--questions needs scroll.tasks.natural (not in this checkout: {e})") from None
    if train:
        roles = {n: s.get("role") for n, s in TaskSet.load(taskset).manifest["spec"]["splits"].items()}
        if any(r != "train" for r in roles.values()):
            raise ValueError(f"{taskset}: split roles {roles}: natural questions over test-role histories are for "
                             "evaluation only (scroll distill eval --questions), never training data")
        unknown = sorted(set(skip_kinds) - set(KINDS.values()))
        if unknown:
            raise ValueError(f"--skip-kind {unknown}: unknown kind (known: {sorted(set(KINDS.values()))})")
    refs = natural_refs(taskset, questions)
    if train:
        refs = [dataclasses.replace(r, split="train") for r in refs
                if not any(KINDS.get(f) in skip_kinds for f in r.task.params["families"])]
    refs = refs[:limit] if limit else refs
    if not refs:
        raise ValueError(f"no questions in {questions}")
    return refs


def _is_check_error(r) -> bool:
    return r.reason == "runner_error" and (r.error or "").startswith("judge failed")


def _summary(recs, label: str, out: Path, wall: float) -> dict:
    by: dict[str, dict] = {}
    for r in recs:
        s = by.setdefault(r.split, {"tasks": 0, "correct": 0, "steps": 0, "executable_cells": 0,
                                    "runner_errors": 0, "check_errors": 0, "wall_s": 0.0})
        s["tasks"] += 1
        s["correct"] += r.correct
        s["steps"] += r.steps
        s["executable_cells"] += r.executable_cells
        s["runner_errors"] += r.reason == "runner_error"
        s["check_errors"] += _is_check_error(r)
        s["wall_s"] += r.wall_s
    for s in by.values():
        s["success_rate"] = s["correct"] / s["tasks"] if s["tasks"] else None
        s["executable_cell_rate"] = s["executable_cells"] / s["steps"] if s["steps"] else None
        s["mean_steps"] = s["steps"] / s["tasks"] if s["tasks"] else None
    backend = recs[0].backend if recs else None
    return {"label": label, "backend": backend, "out": str(out), "runs": str(out / "runs.jsonl"),
            "tasks": len(recs), "correct": sum(r.correct for r in recs),
            "runner_errors": sum(r.reason == "runner_error" for r in recs),
            "check_errors": sum(_is_check_error(r) for r in recs), "wall_s": round(wall, 2),
            "splits": by}


def _samples_summary(per_sample: list, label: str, out: Path, wall: float, temperature: float,
                     seeds: list[int]) -> dict:
    """The summary over K samples: every record counts (`records`, `correct` = accepted by the
    checker, `rejected`, errors); `tasks` are the distinct tasks, `tasks_solved` those with
    at least one accepted sample."""
    recs = [r for rs in per_sample for r in rs]
    s = _summary(recs, label, out, wall)
    errors = sum(r.reason == "runner_error" for r in recs)
    solved = {r.task_id for r in recs if r.correct}
    s.update(records=len(recs), tasks=len({r.task_id for r in recs}), tasks_solved=len(solved),
             rejected=len(recs) - s["correct"] - errors, samples=len(per_sample), temperature=temperature,
             seeds=seeds, labels=[f"{label}-s{k}" for k in range(len(per_sample))],
             per_sample=[{"label": f"{label}-s{k}", "seed": seeds[k], "records": len(rs),
                          "correct": sum(r.correct for r in rs)} for k, rs in enumerate(per_sample)])
    return s


def _run(taskset, split, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
         no_sandbox, as_json, default_splits=None, *, pack=None, samples=1, temperature=None, seed=None,
         questions=None, data: Optional[DataChoice] = None, train_questions: bool = False,
         skip_kinds: Sequence[str] = ()):
    from scroll.importers import BadInputError
    from scroll.runner import run_tasks

    splits = data.parts if data is not None else (["train"] if train_questions else ["natural"]) \
        if questions is not None else (split or default_splits)
    if not splits:
        fail("give at least one --split", as_json=as_json)
    if questions is not None and split:
        fail("--questions runs the natural questions, not a task set's splits: drop --split", as_json=as_json)
    chosen, judge_backend = None, None
    try:
        from scroll.config import LoopConfig

        # a path, or loop/NAME.yaml; None overrides keep the file's values
        cfg = LoopConfig.load(loop, sandbox=False if no_sandbox else None, pack=pack, temperature=temperature)
        if samples > 1:
            if teacher is not None:
                raise ValueError(f"--samples {samples} with --teacher {teacher}: the teachers are deterministic "
                                 "program writers, every sample would be the same trajectory; sample a model "
                                 "(--model-url / --llm)")
            if not cfg.temperature > 0:
                raise ValueError(f"--samples {samples} needs --temperature > 0 (the loop's temperature is "
                                 f"{cfg.temperature}: every sample would be the same greedy reply)")
        seeds = [(seed if seed is not None else 0) + k for k in range(samples)] if samples > 1 else [seed]
        makes = []
        for s in seeds:
            make, default_label = _backend_factory(teacher, model_url, llm, model, seed=s)
            makes.append(make)
        if data is not None:
            refs, chosen, judge_backend = data.refs(Path(out), limit)
        else:
            refs = _natural_refs(taskset, questions, limit, train=train_questions, skip_kinds=skip_kinds) \
                if questions is not None else _refs(taskset, splits, limit)
    except (ValueError, OSError, BadInputError) as e:
        fail(str(e), as_json=as_json)
    meta = {"data": chosen} if chosen is not None else {}
    label = label or default_label
    c = console()
    if not as_json:
        who = (f"{teacher.upper()} TEACHER (deterministic program writer, not a model)" if teacher
               else f"{llm or 'openai'}" + (f" @ {model_url}" if model_url else "") + (f" model={model}" if model else ""))
        extra = f" · {samples} samples at temperature {cfg.temperature}, seeds {seeds}" if samples > 1 else ""
        c.print(f"[bold]{label}[/] · {who} · {len(refs)} tasks ({', '.join(splits)}){extra} · concurrency "
                f"{concurrency} · pack {cfg.pack or '-'} · sandbox {'on' if cfg.sandbox else 'OFF'} → {out}")
    if chosen is not None and not as_json:
        counts = ", ".join(f"{p} {c['histories']}" for p, c in chosen["counts"].items())
        c.print(f"{chosen['format']} {chosen['file']}: {len(refs)} questions of part(s) {', '.join(chosen['parts'])} "
                f"(histories: {counts}); judge {chosen['judge']}", highlight=False)
    t0 = time.perf_counter()
    try:
        if samples == 1:
            recs = run_tasks(refs, makes[0], cfg, out, concurrency=concurrency, label=label, resume=resume,
                             progress=True, meta=meta)  # on stderr, with or without --json
        else:
            per_sample = []
            for k, (make, s) in enumerate(zip(makes, seeds)):
                per_sample.append(run_tasks(
                    refs, make, cfg, out, concurrency=concurrency, label=f"{label}-s{k}", resume=resume,
                    progress=True, logs_dir=Path(out) / "logs" / f"s{k}",
                    meta={**meta, "sample": {"index": k, "of": samples, "seed": s, "temperature": cfg.temperature,
                                             "base_label": label}}))
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    finally:
        if judge_backend is not None:
            judge_backend.close()
    wall = time.perf_counter() - t0
    if samples == 1:
        summary = _summary(recs, label, out, wall)
    else:
        summary = _samples_summary(per_sample, label, out, wall, cfg.temperature, seeds)
    summary["pack"] = cfg.pack
    summary["temperature"] = cfg.temperature
    if chosen is not None:
        summary["data"] = chosen
    if as_json:
        emit_json(summary)
        return
    from rich.table import Table

    n = summary.get("records", summary["tasks"])
    title = f"{label} · {summary['correct']}/{n} correct"
    if samples > 1:
        title += (f" ({samples} samples of {summary['tasks']} tasks; {summary['tasks_solved']} tasks with an "
                  f"accepted sample)")
    t = Table(title=title)
    for col in ("split", "records" if samples > 1 else "tasks", "correct", "success %", "exec-cell %",
                "mean steps", "runner errors", "check errors"):
        t.add_column(col, no_wrap=col == "split")
    for name, s in summary["splits"].items():
        t.add_row(name, str(s["tasks"]), str(s["correct"]), f"{100 * s['success_rate']:.1f}",
                  "-" if s["executable_cell_rate"] is None else f"{100 * s['executable_cell_rate']:.1f}",
                  f"{s['mean_steps']:.2f}", str(s["runner_errors"]), str(s["check_errors"]))
    c.print(t)
    c.print(f"records: {out / 'runs.jsonl'}")


def register(app: typer.Typer) -> None:
    @app.command()
    def collect(
        taskset: Optional[Path] = typer.Option(None, "--taskset", help=TASKSET_HELP),
        split: List[str] = typer.Option(None, "--split", help=SPLIT_HELP + " Default: train and dev."),
        data: DataOpt = None,
        part: List[str] = typer.Option(None, "--part", help=PART_HELP + " Default: train and dev."),
        fmt: FormatOpt = None,
        db: DbQaOpt = None,
        import_dir: ImportDirOpt = None,
        judge_url: JudgeUrlOpt = None,
        judge_llm: JudgeLlmOpt = None,
        judge_model: JudgeModelOpt = None,
        questions: Optional[Path] = typer.Option(None, "--questions", help="Natural questions (JSONL, "
                                                 "scroll.tasks.natural) over --taskset's histories, collected as "
                                                 "split `train`; the task set must be train-role (a test set's "
                                                 "questions are refused: they are for `distill eval` only)."),
        skip_kind: List[str] = typer.Option(None, "--skip-kind", help="With --questions: leave out the questions "
                                            "that touch a family of this kind (repeatable), e.g. `sum`, the "
                                            "held-out kind of the task set the student is tested on."),
        teacher: Optional[str] = typer.Option(None, "--teacher", help=TEACHER_HELP),
        model_url: Optional[str] = typer.Option(None, "--model-url", help=URL_HELP),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        model: Optional[str] = typer.Option(None, "--model", help=MODEL_HELP),
        loop: Optional[str] = typer.Option(None, "--loop-config", help=LOOP_HELP),
        out: Path = typer.Option(..., "--out", help="Run folder: runs.jsonl (+ runs.meta.json)."),
        concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help=CONC_HELP),
        limit: Optional[int] = typer.Option(None, "--limit", min=1, help=LIMIT_HELP),
        label: Optional[str] = typer.Option(None, "--label", help="Who answers, in the records (default: teacher "
                                            "for --teacher reference, writer for --teacher writer, else model)."),
        pack: Optional[str] = typer.Option(None, "--pack", help=PACK_HELP),
        samples: int = typer.Option(1, "--samples", "-k", min=1, help=SAMPLES_HELP),
        temperature: Optional[float] = typer.Option(None, "--temperature", min=0.0, help=TEMP_HELP),
        seed: Optional[int] = typer.Option(None, "--seed", help=SEED_HELP),
        resume: bool = typer.Option(True, "--resume/--no-resume", help="Skip tasks already in runs.jsonl "
                                    "(--no-resume refuses a folder that holds records)."),
        no_sandbox: bool = typer.Option(False, "--no-sandbox", help="DANGER: run cells without the kernel sandbox."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Collect trajectories: run a task set's splits through the agent loop (a teacher, or a model;
        with --samples K, K sampled trajectories per task). With --data: a data file's questions,
        its train and dev histories by default (the held-out ones are for `scroll distill eval --data`)."""
        choice = data_choice(data, part, ["train", "dev"], fmt, db, import_dir, judge_url, judge_llm, judge_model,
                              taskset, split, questions, as_json)
        if skip_kind and questions is None:
            fail("--skip-kind filters --questions: give --questions FILE", as_json=as_json)
        _run(taskset, split, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
             no_sandbox, as_json, default_splits=["train", "dev"], pack=pack, samples=samples,
             temperature=temperature, seed=seed, data=choice, questions=questions, train_questions=True,
             skip_kinds=skip_kind or ())

    @distill_app.command("eval")
    def evaluate(
        taskset: Optional[Path] = typer.Option(None, "--taskset", help=TASKSET_HELP),
        split: List[str] = typer.Option(None, "--split", help=SPLIT_HELP + " Default: test_unseen, "
                                        "test_paraphrase, test_heldout_kind (those the task set has)."),
        data: DataOpt = None,
        part: List[str] = typer.Option(None, "--part", help=PART_HELP + " Default: held_out."),
        fmt: FormatOpt = None,
        db: DbQaOpt = None,
        import_dir: ImportDirOpt = None,
        judge_url: JudgeUrlOpt = None,
        judge_llm: JudgeLlmOpt = None,
        judge_model: JudgeModelOpt = None,
        label: str = typer.Option(..., "--label", help="teacher | writer | untrained | trained[-rN]: the report "
                                  "compares these."),
        questions: Optional[Path] = typer.Option(None, "--questions", help=QUESTIONS_HELP),
        pack: Optional[str] = typer.Option(None, "--pack", help=PACK_HELP),
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
        """Evaluate one label (a teacher, the untrained or a trained student) on the test splits, or on
        natural questions (--questions), or on a data file's held-out histories (--data)."""
        choice = data_choice(data, part, ["held_out"], fmt, db, import_dir, judge_url, judge_llm, judge_model,
                              taskset, split, questions, as_json)
        splits = split
        if not splits and questions is None and choice is None:
            try:
                from scroll.tasks.splits import TaskSet

                have = TaskSet.load(taskset).splits
            except (ValueError, OSError) as e:
                fail(str(e), as_json=as_json)
            splits = [s for s in ("test_unseen", "test_paraphrase", "test_heldout_kind") if s in have]
        _run(taskset, splits, teacher, model_url, llm, model, loop, out, concurrency, limit, label, resume,
             no_sandbox, as_json, pack=pack, questions=questions, data=choice)

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
        dedup_trajectories: bool = typer.Option(False, "--dedup-trajectories", help="Keep a trajectory whose every "
                                                "prompt and reply equal an earlier one's once (first --runs "
                                                "first): samples that repeat each other or the teacher."),
        max_per_task: Optional[int] = typer.Option(None, "--max-per-task", min=1, help="At most N trajectories "
                                                   "per task from each run folder (after the dedup)."),
        tokenizer: Optional[Path] = typer.Option(None, "--tokenizer", help="Student model/tokenizer folder for "
                                                 "token counts (default: chars/4, said so)."),
        notebooks: bool = typer.Option(True, "--notebooks/--no-notebooks", help="Write one .ipynb per session."),
        trajectories: bool = typer.Option(False, "--trajectories", help="One multi-turn `messages` line per chain "
                                          "of steps (loss on every reply; each prompt is trained on once) "
                                          "instead of one prompt-completion line per step."),
        seen: List[Path] = typer.Option([], "--seen", help="Run folder already trained on (repeatable): read "
                                        "first for --dedup-trajectories, not written."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Export trajectories as TRL conversational JSONL (one prompt-completion line per step, or one
        messages line per chain of steps; prompts rebuilt from the log and checked against the logged sha256)."""
        try:
            from distill.export import export_runs

            rep = export_runs(runs, out, success_only=success_only, max_steps=max_steps, max_tokens=max_tokens,
                              dedup=dedup, tokenizer=tokenizer, notebooks=notebooks,
                              dedup_trajectories=dedup_trajectories, max_per_task=max_per_task,
                              trajectories=trajectories, seen=seen)
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
        for s in rep["source_runs"]:
            c.print(f"{s['name']}: {s['records']} records, checker accepted {s['accepted']} / rejected "
                    f"{s['rejected']}, check errors {s['check_errors']}, runner errors {s['runner_errors']}, "
                    f"duplicates {s['duplicates']}, capped {s['capped']} → {s['exported_trajectories']} "
                    f"trajectories, {s['exported_steps']} steps", highlight=False)
        if rep["check_errors"]:
            c.print(f"[bold red]{len(rep['check_errors'])} record(s) whose checker raised: errors, not exported "
                    f"(listed in filters.json)")
        for split, f in rep["files"].items():
            c.print(f"[bold]{split}[/]: {f['lines']} lines, {f['steps']} steps from {f['trajectories']} trajectories "
                    f"→ {f['data']}")
        if rep["mismatches"]:
            c.print(f"[bold yellow]{rep['mismatches']} step(s) not exported: the rebuilt prompt does not match "
                    f"the logged sha256 (listed in filters.json)")
        c.print(f"token counts: {rep['token_counter']} · {len(rep['notebooks'])} notebooks · {out / 'filters.json'}")

    @distill_app.command("report")
    def report(
        runs: List[Path] = typer.Option(..., "--runs", help="Run folder (repeatable): teacher, untrained, trained."),
        out: Path = typer.Option(..., "--out", help="Report JSON file."),
        md: Optional[Path] = typer.Option(None, "--md", help="Also write a markdown table here."),
        teacher: str = typer.Option("teacher", "--teacher-label", help="Label of the (regex) teacher's records."),
        writer: str = typer.Option("writer", "--writer-label", help="Label of the wording-robust teacher's."),
        untrained: str = typer.Option("untrained", "--untrained-label", help="Label of the untrained student's."),
        costs: Optional[Path] = typer.Option(None, "--costs", help="A JSON file of per-round step costs "
                                             "(scripts/distill_cpu.py writes one) for the cost table."),
        plot: bool = typer.Option(True, "--plot/--no-plot", help="Also draw accuracy per split per round: "
                                  "OUT's name with -rounds.png (when a trained label has a round)."),
        as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
    ) -> None:
        """Success per split and label (95 % Wilson CI), executable cells, steps, exposure, tokens, time, gap
        closed; per-round costs; accuracy per round (PNG)."""
        try:
            import json as _json

            from distill.report import to_markdown, write_report

            cost_data = _json.loads(costs.read_text()) if costs is not None else None
            rep = write_report(runs, out, md, teacher=teacher, untrained=untrained, writer=writer, costs=cost_data,
                               plot=plot)
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
