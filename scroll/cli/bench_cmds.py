"""`scroll bench ...`: benchmarks. Each command builds a config and calls the library."""
from __future__ import annotations

import json
import sys
from typing import Optional

import typer

bench_app = typer.Typer(help="Benchmarks (search speed and retrieval quality vs SQLite FTS5).",
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
    systems: str = typer.Option("ours,fts5", help="Systems to run."),
    quality: bool = typer.Option(True, help="Measure recall@10 on generated conversations."),
    locomo: Optional[str] = typer.Option(None, "--locomo", help="Also measure recall@10 on LoCoMo JSON."),
    workdir: Optional[str] = typer.Option(None, help="Work directory (default: a temp dir, removed)."),
) -> None:
    """Scroll search vs SQLite FTS5: speed, memory, size, freshness and recall@10."""
    from scroll.bench import report
    from scroll.bench.search_bench import BenchConfig, run

    if durability.lower() not in ("full", "normal"):
        raise typer.BadParameter(f"must be full or normal, not {durability!r}", param_hint="--durability")
    cfg = BenchConfig(sizes=_sizes(sizes), seed=seed, queries=queries, tail=tail, every=every,
                      durability=durability.lower(), systems=_systems(systems),
                      quality=quality, locomo=locomo, workdir=workdir)
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
    locomo: Optional[str] = typer.Option(None, "--locomo", help="Also measure on LoCoMo JSON (local copy)."),
    words: int = typer.Option(60_000, min=1000, help="Size of the generated conversation set."),
    seed: int = typer.Option(1001, min=0, help="Seed of the generated set (tuning used seeds < 1000)."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of tables."),
) -> None:
    """Evidence recall@10 (session filter): Scroll vs FTS5 vs the recommended bm25s setup."""
    from scroll.bench import report
    from scroll.bench.search_bench import BenchConfig, quality

    res = quality(BenchConfig(quality_words=words, quality_seed=seed, locomo=locomo))
    res.update(versions=report.versions(), machine=report.machine())
    if out:
        report.write_json(out, res)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    for key in ("quality", "quality_locomo"):
        if res.get(key):
            report.console_print(report.quality_table(res[key]))


@bench_app.command("tune")
def tune_cmd(
    words: int = typer.Option(60_000, min=1000, help="Words per generated corpus."),
    out: Optional[str] = typer.Option(None, "--out", help="Write the JSON result here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """What improves recall@10 over plain BM25 (tune seeds 1-3, held-out seeds 1001-1003)."""
    from scroll.bench import report, tune

    res = tune.run(words=words, progress=None if as_json else (lambda m: print(f"[tune] {m}", file=sys.stderr)))
    if out:
        report.write_json(out, res)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    report.console_print(tune.table(res))
    print(f"recommended on generated data: {res['recommended']}")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")
