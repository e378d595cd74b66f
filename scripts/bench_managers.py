"""Every context manager on one task set and one backbone, then the side-by-side table.

    python scripts/bench_managers.py --taskset var/tasksets/distill-v1 --split test_unseen \
        --model-url http://127.0.0.1:8012/v1 --window 8192 --name smollm2-unseen
    # -> var/bench/NAME/<manager>/runs.jsonl (resumable) and results/bench/NAME.{json,md,png}

Each manager is the `scroll bench run` a user would type (same backbone, same Budget, each
task on a snapshot of its history, judged by the task's checker); the report is
`scroll bench report` over all of them, recomputed from the records. Progress is shown live.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCROLL = str(Path(sys.executable).parent / "scroll")


def main(argv: list[str] | None = None) -> int:
    from scroll.bench.table import ORDER as MANAGERS  # every manager (scroll.managers), in the table's order
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--taskset", required=True, help="task set folder (scroll tasks build)")
    ap.add_argument("--split", action="append", required=True, help="split(s) to run (repeatable)")
    ap.add_argument("--managers", default=",".join(MANAGERS), help="comma-separated managers")
    ap.add_argument("--model-url", help="OpenAI-compatible server URL (the backbone for every manager)")
    ap.add_argument("--llm", help="LLM config name/path instead of --model-url")
    ap.add_argument("--teacher", help="`reference`: the reference policy (scroll and its ablations only; NOT a model)")
    ap.add_argument("--window", default="8192", help="the backbone's context window (the one budget)")
    ap.add_argument("--max-new-tokens", default="200")
    ap.add_argument("--loop-config", default=None, help="loop config for scroll/lcm (steps, timeouts)")
    ap.add_argument("--limit", default=None, help="tasks per split")
    ap.add_argument("--concurrency", default="4")
    ap.add_argument("--name", required=True, help="result name: results/bench/NAME.json")
    ap.add_argument("--work", type=Path, default=ROOT / "var" / "bench", help="where the runs go")
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "bench")
    a = ap.parse_args(argv)
    backend = (["--model-url", a.model_url] if a.model_url else []) + (["--llm", a.llm] if a.llm else []) \
        + (["--teacher", a.teacher] if a.teacher else [])
    managers = [m.strip() for m in a.managers.split(",") if m.strip()]
    unknown = sorted(set(managers) - set(MANAGERS))
    if unknown:
        ap.error(f"unknown managers {unknown}; known: {', '.join(MANAGERS)}")
    dirs = []
    for m in managers:
        out = a.work / a.name / m
        cmd = [SCROLL, "bench", "run", "--taskset", a.taskset, *[x for s in a.split for x in ("--split", s)],
               "--manager", m, *backend, "--window", a.window, "--max-new-tokens", a.max_new_tokens,
               "--out", str(out), "--concurrency", a.concurrency, "--json"]
        cmd += (["--limit", a.limit] if a.limit else []) + (["--loop-config", a.loop_config] if a.loop_config else [])
        print(f"\n== {m}: {' '.join(cmd[1:])}", flush=True)
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)  # progress: stderr, live
        if p.returncode != 0:
            print(p.stdout[-2000:], file=sys.stderr)
            return p.returncode
        dirs.append(str(out))
    a.results.mkdir(parents=True, exist_ok=True)
    base = a.results / a.name
    p = subprocess.run([SCROLL, "bench", "report", *dirs, "--out", f"{base}.json", "--md", f"{base}.md",
                        "--png", f"{base}.png"], cwd=ROOT)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
