"""Every context manager, one after another, on one backbone, then the side-by-side table: the
loop behind scripts/bench_managers.py (a task set) and scripts/bench_{longmemeval,locomo,beam,
oolong}.py (a public benchmark file).

    ap = argparse.ArgumentParser(); add_suite_args(ap, name_default="locomo")
    a = ap.parse_args(argv)
    run_suite(a, ["--data", "locomo10.json", "--format", "locomo"])

Each manager is the `scroll bench run` a user would type (same backbone, same Budget, each
question on a snapshot of its history), into WORK/NAME/<manager>/runs.jsonl (resumable); the
report is `scroll bench report` over all of them -> RESULTS/NAME.{json,md,png}. Progress (the
runs' stderr) is shown live.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from scroll.bench.table import ORDER

ROOT = Path(__file__).resolve().parents[1]


def _scroll() -> str:
    return str(Path(sys.executable).parent / "scroll")


def _abs(p: str) -> Path:  # the runs start in ROOT: a relative path means the caller's folder
    return Path(p).expanduser().resolve()


def add_suite_args(ap: argparse.ArgumentParser, *, name_default: str | None = None, concurrency: str = "4") -> None:
    ap.add_argument("--managers", default=",".join(ORDER), help=f"comma-separated managers [default: {','.join(ORDER)}]")
    ap.add_argument("--model-url", help="OpenAI-compatible server URL (the backbone for every manager)")
    ap.add_argument("--llm", help="LLM config name/path instead of --model-url")
    ap.add_argument("--teacher", help="`reference`: the reference policy (scroll and its ablations only; NOT a model)")
    ap.add_argument("--window", default="8192", help="the backbone's context window (the one budget)")
    ap.add_argument("--max-new-tokens", default="200")
    ap.add_argument("--loop-config", default=None, help="loop config for scroll/lcm (steps, timeouts)")
    ap.add_argument("--limit", default=None, help="questions (per split for a task set): the first N")
    ap.add_argument("--concurrency", default=concurrency)
    ap.add_argument("--name", required=name_default is None, default=name_default,
                    help="result name: RESULTS/NAME.{json,md,png}" + (f" [default: {name_default}]" if name_default else ""))
    ap.add_argument("--work", type=_abs, default=ROOT / "var" / "bench", help="where the runs go (WORK/NAME/<manager>)")
    ap.add_argument("--results", type=_abs, default=ROOT / "results" / "bench")


def managers_of(ap: argparse.ArgumentParser, a: argparse.Namespace) -> list[str]:
    managers = [m.strip() for m in a.managers.split(",") if m.strip()]
    unknown = sorted(set(managers) - set(ORDER))
    if unknown or not managers:
        ap.error(f"unknown managers {unknown}; known: {', '.join(ORDER)}")
    return managers


def run_suite(a: argparse.Namespace, managers: list[str], source: list[str]) -> int:
    """`scroll bench run <source> --manager M ...` for each manager, then the report. Returns
    the first failing command's exit code (its stdout tail on stderr), else the report's."""
    backend = (["--model-url", a.model_url] if a.model_url else []) + (["--llm", a.llm] if a.llm else []) \
        + (["--teacher", a.teacher] if a.teacher else [])
    dirs = []
    for m in managers:
        out = a.work / a.name / m
        cmd = [_scroll(), "bench", "run", *source, "--manager", m, *backend, "--window", a.window,
               "--max-new-tokens", a.max_new_tokens, "--out", str(out), "--concurrency", a.concurrency, "--json"]
        cmd += (["--limit", a.limit] if a.limit else []) + (["--loop-config", a.loop_config] if a.loop_config else [])
        print(f"\n== {m}: {' '.join(cmd[1:])}", flush=True)
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)  # progress: stderr, live
        if p.returncode != 0:
            print(p.stdout[-2000:], file=sys.stderr)
            return p.returncode
        dirs.append(str(out))
    a.results.mkdir(parents=True, exist_ok=True)
    base = a.results / a.name
    p = subprocess.run([_scroll(), "bench", "report", *dirs, "--out", f"{base}.json", "--md", f"{base}.md",
                        "--png", f"{base}.png"], cwd=ROOT)
    return p.returncode


def benchmark_main(fmt: str, doc: str, argv: list[str] | None = None) -> int:
    """The body of scripts/bench_<fmt>.py: a data file, the managers, the table."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=doc.split("\n\n", 1)[1] if "\n\n" in doc else None)
    ap.add_argument("--data", required=True, type=Path, help=f"the {fmt} data file (a local copy)")
    if fmt == "beam":
        ap.add_argument("--probing", type=Path, help="the probing questions JSON [default: beside the chat.json]")
    if fmt in ("longmemeval", "beam"):
        ap.add_argument("--judge-url", help="judge model server (OpenAI-compatible); without one: a deterministic "
                                            "judge (see scroll.bench.data_judges)")
        ap.add_argument("--judge-llm", help="judge model LLM config instead of --judge-url")
    add_suite_args(ap, name_default=fmt)
    a = ap.parse_args(argv)
    managers = managers_of(ap, a)
    if not a.data.exists():
        ap.error(f"--data {a.data}: no such file")
    source = ["--data", str(a.data.resolve()), "--format", fmt, "--import-dir", str(a.work / a.name / "histories")]
    if getattr(a, "probing", None):
        source += ["--probing", str(a.probing.resolve())]
    for flag in ("judge_url", "judge_llm"):
        if getattr(a, flag, None):
            source += [f"--{flag.replace('_', '-')}", getattr(a, flag)]
    return run_suite(a, managers, source)
