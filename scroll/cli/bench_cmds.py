"""`scroll bench ...`: benchmarks. Each command builds a config and calls the library."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

from scroll.cli.common import fail
from scroll.cli.data_opts import (DataOpt, DbQaOpt, FormatOpt, ImportDirOpt, JudgeLlmOpt, JudgeModelOpt,
                                  JudgeUrlOpt, data_refs)

bench_app = typer.Typer(help="Benchmarks: context managers on task sets, search speed and retrieval quality.",
                        no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


@bench_app.callback()
def _bench() -> None:
    """Benchmarks (search speed and retrieval quality vs SQLite FTS5)."""


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(x)) for x in text.split(",") if x.strip()]
    except (ValueError, OverflowError):
        raise typer.BadParameter(f"sizes must be numbers like 1e6,10e6: {text!r}") from None
    if not sizes or any(n < 1000 for n in sizes):
        raise typer.BadParameter(f"sizes must be word counts >= 1000, like 1e6,10e6: {text!r}")
    return sizes


def _systems(text: str) -> tuple[str, ...]:
    from scroll.bench.search_bench import SYSTEMS

    names = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    bad = [n for n in names if n not in SYSTEMS]
    if not names or bad:
        raise typer.BadParameter(f"systems must be a comma list of {', '.join(SYSTEMS)}: {text!r}")
    return names


@bench_app.command("search")
def search_cmd(
    sizes: str = typer.Option("1e6,10e6,18e6", help="Corpus sizes in whitespace words, comma-separated."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON result instead of tables."),
    seed: int = typer.Option(0, min=0, help="Corpus and query seed."),
    queries: int = typer.Option(300, min=1, help="Queries per timing pass."),
    tail: int = typer.Option(20_000, min=0, help="Events appended one by one in the interleaved phase."),
    every: int = typer.Option(500, min=1, help="One search after every N appends."),
    durability: str = typer.Option("full", help="synchronous=FULL or NORMAL for both systems: full | normal."),
    systems: str = typer.Option("ours,fts5,fts5-fields,bm25s",
                                help="Systems to run: ours, fts5 (raw OR query), fts5-fields (our query "
                                     "cleaning + fields as columns), bm25s (static index, search only)."),
    shape: str = typer.Option("chat", help="Corpus shape: chat (turns + 30 % pasted passages), long "
                                           "(~300-word technical messages) or tool (tool output and code)."),
    quality: bool = typer.Option(True, help="Measure recall@10 on generated conversations."),
    settle: bool = typer.Option(True, help="os.sync() after each system's import, so that its timed "
                                           "searches and appends do not run against the import's writeback."),
    locomo: Optional[str] = typer.Option(None, "--locomo", help="Also measure recall@10 on LoCoMo JSON."),
    workdir: Optional[str] = typer.Option(None, help="Work directory (default: a temp dir, removed)."),
    flush_docs: Optional[int] = typer.Option(None, min=1, help="Ours: documents per background segment "
                                                                "flush (default: the index's own, 5,000)."),
) -> None:
    """Scroll search vs SQLite FTS5: speed, memory, size, freshness and recall@10."""
    from scroll.bench import report
    from scroll.bench.search_bench import BenchConfig, run

    if durability.lower() not in ("full", "normal"):
        raise typer.BadParameter(f"must be full or normal, not {durability!r}", param_hint="--durability")
    if shape not in ("chat", "long", "tool"):
        raise typer.BadParameter(f"must be chat, long or tool, not {shape!r}", param_hint="--shape")
    cfg = BenchConfig(sizes=_sizes(sizes), seed=seed, queries=queries, tail=tail, every=every,
                      durability=durability.lower(), systems=_systems(systems), shape=shape,
                      quality=quality, settle=settle, locomo=locomo, workdir=workdir,
                      flush_docs=flush_docs)
    progress = None if as_json else (lambda m: print(f"[bench] {m}", file=sys.stderr, flush=True))
    result = run(cfg, progress=progress)
    if out:
        report.write_json(out, result)
    if as_json:
        print(json.dumps(result, indent=2))
        return
    report.console_print(report.table(result))
    for key in ("quality", "quality_locomo"):
        if result.get(key):
            report.console_print(report.quality_table(result[key]))
    v = result["versions"]
    print("versions: " + ", ".join(f"{k} {v[k]}" for k in v), flush=True)
    if out:
        print(f"wrote {out}")


@bench_app.command("recall")
def recall_cmd(
    sets: Path = typer.Option(Path("configs/recall-sets.yaml"), "--sets",
                              help="The evaluation sets: shapes, words, tune and report seeds."),
    split: str = typer.Option("report", "--split", help="report (the numbers we publish) or tune (what tuning saw)."),
    shapes: Optional[str] = typer.Option(None, "--shapes", help="Comma-separated subset of the shapes (default: all)."),
    words: Optional[int] = typer.Option(None, "--words", min=1000, help="Override the sets' size (words per set)."),
    locomo: Optional[str] = typer.Option(None, "--locomo", help="Also measure on LoCoMo JSON (a local copy)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here (and a .md beside it)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Evidence recall@10 on every evaluation set: Scroll vs FTS5 (raw OR query, and with our query
    cleaning + fields) vs bm25s over the raw text, side by side in one run."""
    from scroll.bench import recall_sets, report
    from scroll.bench.shapes import load_sets

    try:
        spec = load_sets(sets)
        chosen = _csv(shapes, tuple(spec["shapes"]), "--shapes")
        if split not in ("tune", "report"):
            raise ValueError("--split must be 'report' or 'tune'")
    except (OSError, ValueError, KeyError) as e:
        fail(str(e))
    say = None if as_json else (lambda m: print(f"[recall] {m}", file=sys.stderr, flush=True))
    res = recall_sets.run(spec, split=split, shapes=chosen, words=words, progress=say)
    if locomo:
        from scroll.bench import locomo as loco
        from scroll.bench.corpus import Corpus
        events, questions = loco.load(locomo)
        res["locomo"] = {"file": Path(locomo).name, "systems": recall_sets.evaluate(Corpus(events, questions))}
    res.update(command=" ".join(["scroll", "bench", "recall", *sys.argv[3:]]), **report.run_provenance())
    if out:
        report.write_json(out, res)
        Path(out).with_suffix(".md").write_text(recall_sets.to_markdown(res))
    print(json.dumps(res, indent=2) if as_json else recall_sets.to_markdown(res))


def first_histories(refs: list, n: int | None) -> list:
    """The refs over the first `n` distinct histories (in the order their db files sort), in ref order."""
    if not n:
        return refs
    keep = set(sorted({str(r.db) for r in refs})[:n])
    return [r for r in refs if str(r.db) in keep]


@bench_app.command("retrieval")
def retrieval_cmd(
    sizes: str = typer.Option("1e4,5e4,2e5,1e6", help="History lengths in tokens (comma-separated, >= 1000)."),
    k: int = typer.Option(10, min=1, help="Recall@k: hits per search."),
    seed: int = typer.Option(0, min=0, help="Generator seed of every history."),
    policy: bool = typer.Option(True, help="Also run the reference policy (a test double) through Agent.run."),
    work: str = typer.Option("var/bench/retrieval", help="Where the generated logs go."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here."),
    md: Optional[str] = typer.Option(None, "--md", help="Write the markdown table here."),
    png: Optional[str] = typer.Option(None, "--png", help="Write the recall-vs-length plot here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
) -> None:
    """No model: evidence recall@k of ms.search per category and history length, and the
    reference policy's accuracy and exposure ratio (tokens printed / history tokens)."""
    from scroll.bench import report
    from scroll.bench.retrieval import measure_retrieval, plot, to_markdown
    from scroll.provenance import git_sha

    res = measure_retrieval(_sizes(sizes), work, k=k, seed=seed, policy=policy,
                            progress=lambda m: print(m, file=sys.stderr, flush=True))
    res.update(versions=report.versions(), machine=report.machine(), git_sha=git_sha(),
               command="scroll bench retrieval " + " ".join(sys.argv[3:]))
    if out:
        report.write_json(out, res)
    if md:
        Path(md).write_text(to_markdown(res))
    if png:
        plot(res, png)
    print(json.dumps(res, indent=2) if as_json else to_markdown(res))


@bench_app.command("tune")
def tune_cmd(
    sets: Path = typer.Option(Path("configs/recall-sets.yaml"), "--sets", help="The evaluation sets (tune seeds only)."),
    shapes: Optional[str] = typer.Option(None, "--shapes", help="Comma-separated subset of the shapes (default: all)."),
    words: Optional[int] = typer.Option(None, "--words", min=1000, help="Override the sets' size (words per set)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here."),
    models: Optional[str] = typer.Option(None, "--models", help="No search: compare these document models "
                                         "(a JSON list of DocModel specs, as result files write them)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a summary."),
) -> None:
    """Tune the index's document model (BM25F field weights, which fields are scored apart, when
    the previous turn is indexed) on the sets' TUNE seeds: maximize the worst margin over FTS5
    (both) and bm25s across the shapes. --models compares given models instead (e.g. finalists)."""
    from scroll.bench import recall_sets, report
    from scroll.bench.shapes import load_sets
    from scroll.search.documents import DocModel

    try:
        spec = load_sets(sets)
        chosen = _csv(shapes, tuple(spec["shapes"]), "--shapes")
        candidates = [DocModel.from_spec(m) for m in json.loads(models)] if models else None
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(str(e))
    say = None if as_json else (lambda m: print(f"[tune] {m}", file=sys.stderr, flush=True))
    if candidates:
        res = recall_sets.compare(spec, candidates, shapes=chosen, words=words, progress=say)
    else:
        res = recall_sets.tune(spec, shapes=chosen, words=words, progress=say)
    res.update(command=" ".join(["scroll", "bench", "tune", *sys.argv[3:]]), **report.run_provenance())
    if out:
        report.write_json(out, res)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    for key in ("default", "best"):
        r = res[key]
        print(f"{key}: {r['doc_model']}  worst margin {r['worst_margin']:+.2f} points, mean recall {r['mean_ours']:.4f}")


def _csv(text: Optional[str], allowed: tuple[str, ...], flag: str) -> tuple[str, ...]:
    if not text:
        return allowed
    got = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in got if x not in allowed]
    if bad or not got:
        raise ValueError(f"{flag}: unknown {bad or text!r}; choose from {', '.join(allowed)}")
    return got


MANAGER_HELP = ("Context manager: scroll (the agent loop), truncate (newest turns, one call), rag (top-k BM25 "
                "turns, one call), lcm (LCM's tool loop over its summary DAG), lcm-context (the DAG's context, "
                "one call); ablations of scroll: no_log (no ms over the history: the newest history that fits is "
                "in the view), no_kernel (no resident variables), no_index (no headline index).")


@bench_app.command("run")
def run_cmd(
    taskset: Optional[Path] = typer.Option(None, "--taskset", help="A task set folder (scroll tasks build)."),
    split: Optional[List[str]] = typer.Option(None, "--split", help="Split(s) to run (repeatable; with --taskset)."),
    data: DataOpt = None,
    fmt: FormatOpt = None,
    db: DbQaOpt = None,
    probing: Optional[Path] = typer.Option(None, "--probing", help="With a BEAM --data: the probing questions JSON."),
    judge_url: JudgeUrlOpt = None,
    judge_llm: JudgeLlmOpt = None,
    judge_model: JudgeModelOpt = None,
    import_dir: ImportDirOpt = None,
    manager: str = typer.Option("scroll", "--manager", "-m", help=MANAGER_HELP),
    model_url: Optional[str] = typer.Option(None, "--model-url", help="OpenAI-compatible server URL(s), comma-separated."),
    llm: Optional[str] = typer.Option(None, "--llm", help="LLM config name/path (configs/llm/NAME.yaml)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name on the server."),
    teacher: Optional[str] = typer.Option(None, "--teacher", help="`reference`: the reference policy "
                                          "(scroll manager only; a program writer, NOT a model)."),
    window: int = typer.Option(8192, "--window", min=512, help="The backbone's context window (tokens): the "
                               "one budget every manager gets."),
    max_new_tokens: int = typer.Option(200, "--max-new-tokens", min=1, help="Tokens per model reply."),
    loop: Optional[str] = typer.Option(None, "--loop-config", help="Loop config (steps, timeouts, sandbox) for "
                                       "scroll/lcm; its budgets are replaced by --window."),
    out: Path = typer.Option(..., "--out", help="Output folder (runs.jsonl, resumable)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Tasks per split (first N); with --data: "
                                        "the file's first N questions."),
    histories: Optional[int] = typer.Option(None, "--histories", min=1, help="Only the questions over the "
                                            "first N histories (of each split, or of the file): for managers "
                                            "whose cost grows per history, like lcm's summary DAG."),
    concurrency: int = typer.Option(2, "--concurrency", min=1, help="Tasks in parallel."),
    label: Optional[str] = typer.Option(None, "--label", help="Who answers, in the records [default: the manager]."),
    as_json: bool = typer.Option(False, "--json", help="Print only the summary JSON on stdout."),
) -> None:
    """Answer a task set's (or a benchmark file's) questions with one context manager on one backbone,
    judged host-side (each task's checker, or the benchmark's judge: score + correct); one record per
    question in OUT/runs.jsonl (a rerun skips done ones)."""
    from scroll.cli.common import emit_json, fail
    from scroll.cli.distill_cmds import _backend_factory, _refs, _summary
    from scroll.managers import MANAGERS, make_manager
    from scroll.managers.base import Budget
    from scroll.managers.loop import ABLATIONS, ScrollManager
    from scroll.runner import run_tasks

    from scroll.importers import BadInputError

    judge_backend = None
    try:
        if (taskset is None) == (data is None):
            raise ValueError("give --taskset DIR (with --split) or --data FILE, one of them")
        if data is None and not split:
            raise ValueError("--taskset needs at least one --split")
        if data is not None and split:
            raise ValueError("--split goes with --taskset; --data runs the file's questions (--limit N: the first N)")
        if data is None and (fmt or probing or judge_url or judge_llm or judge_model or import_dir or db):
            raise ValueError("--format, --probing, --db, --judge-* and --import-dir go with --data")
        if manager not in MANAGERS:
            raise ValueError(f"--manager {manager!r}: known: {', '.join(MANAGERS)}")
        on_loop_path = manager in ABLATIONS  # scroll and its ablations: the runner's own loop path
        if teacher and not on_loop_path:
            raise ValueError("--teacher reference writes kernel programs: only with --manager scroll (or an ablation)")
        budget = Budget(context_window=window, max_new_tokens=max_new_tokens)
        cfg = ScrollManager(loop=loop, name=manager if on_loop_path else "scroll").config(budget)  # view = Budget
        make, _ = _backend_factory(teacher, model_url, llm, model)
        mgr = None if on_loop_path else make_manager(manager, **({"loop": loop} if manager == "lcm" else {}))
        if data is None:
            refs = _refs(taskset, split, None if histories else limit)
            if histories:
                refs = [r for s in dict.fromkeys(split) for r in first_histories([r for r in refs if r.split == s],
                                                                                histories)][:limit]
        else:
            refs, prep, judge_backend = data_refs(data, fmt, probing, import_dir or out / "histories", limit,
                                                  judge_url, judge_llm, judge_model, db=db)
            refs = first_histories(refs, histories)
            if not as_json:
                typer.echo(f"{prep.format}: {len(refs)} of {prep.questions_in_file} questions over {prep.histories} "
                           f"histories ({prep.imported} imported now); judge: {refs[0].task.judge_name}", err=True)
            if prep.format == "beam" and judge_backend is None:
                typer.echo("warning: no --judge-url/--judge-llm: BEAM answers are scored by beam_rubric_overlap, "
                           "a deterministic proxy, NOT BEAM's model-judged rubric score", err=True)
    except (ValueError, OSError, BadInputError) as e:
        fail(str(e), as_json=as_json)
    import time

    t0 = time.perf_counter()
    try:
        recs = run_tasks(refs, make, cfg, out, concurrency=concurrency, label=label or manager, progress=True,
                         manager=mgr, budget=budget if mgr is not None else None, loop_name=manager)
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    finally:
        if judge_backend is not None:
            judge_backend.close()
    summary = {**_summary(recs, label or manager, out, time.perf_counter() - t0), "manager": manager,
               "budget": {"window": window, "max_new_tokens": max_new_tokens}}
    scores = [r.score for r in recs if r.score is not None]
    if data is not None:
        summary.update(data=str(data), format=refs[0].task.family, judges=sorted({r.judge for r in recs}),
                       mean_score=sum(scores) / len(scores) if scores else None)
    if as_json:
        emit_json(summary)
        return
    for name, sp in summary["splits"].items():
        typer.echo(f"{manager} · {name}: {sp['correct']}/{sp['tasks']} correct, mean steps {sp['mean_steps']:.2f}, "
                   f"runner errors {sp['runner_errors']}")
    if summary.get("mean_score") is not None:
        typer.echo(f"mean score {summary['mean_score']:.3f} (judge: {', '.join(summary['judges'])})")
    typer.echo(f"records: {summary['runs']}")


@bench_app.command("report")
def report_cmd(
    runs: List[Path] = typer.Argument(..., help="`scroll bench run --out` folders (or runs.jsonl files)."),
    out: Path = typer.Option(..., "--out", help="Result JSON (e.g. results/bench/NAME.json)."),
    md: Optional[Path] = typer.Option(None, "--md", help="Also write the markdown table here."),
    png: Optional[Path] = typer.Option(None, "--png", help="Also plot accuracy per category per manager here."),
    as_json: bool = typer.Option(False, "--json", help="Print the result JSON on stdout."),
) -> None:
    """The managers side by side (accuracy per category, tokens and time per question), recomputed
    from the records; refuses records from more than one backbone model."""
    from scroll.bench.table import to_markdown, write_table
    from scroll.cli.common import emit_json, fail

    try:
        rep = write_table(runs, out, md=md, png=png)
    except (ValueError, OSError) as e:
        fail(str(e), as_json=as_json)
    if as_json:
        emit_json(rep)
        return
    typer.echo(to_markdown(rep))


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
