"""Per-step substrate overhead of the agent loop at two log sizes (the model excluded).

    .venv/bin/python scripts/bench_loop.py --out runs/bench_loop.json

Runs the REFERENCE POLICY (a deterministic program writer, not a model) through the real
loop — real sandboxed kernel, real log, real view — on the same generated questions, over
(a) a small log (~10^3 events) and (b) the same history plus ~10 M words of other
conversations (~10^5 events). Per step it measures view build + kernel execution (ms.search
/ ms.expand inside the sandbox) + logging, and reports p50/p95 per size and their ratio,
with answer accuracy, exposure share and prefix reuse. Both sizes run in this one process.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scroll.stats import percentile


def build(label: str, extra_words: int, seed: int, small_tokens: int, workdir: Path):
    from scroll.bench.corpus import generate
    from scroll.tasks import build_demo_log

    t0 = time.perf_counter()
    log, tasks = build_demo_log(workdir / f"{label}.db", seed=seed, target_tokens=small_tokens, durability="full")
    if extra_words:
        corpus = generate(extra_words, seed=seed + 1, long_share=0.3, session_prefix="other")
        for i in range(0, len(corpus.events), 5000):
            log.append_many(corpus.events[i:i + 5000])
    log.search("index warm-up", k=1)
    stats = log.stats()
    info = {"label": label, "events": stats["events"], "words": sum(len(e.text.split()) for e in log.events()),
            "tokens_estimate": stats["tokens_estimate"], "build_s": round(time.perf_counter() - t0, 1)}
    return log, tasks, info


def run_task(log, task, label: str, sandbox: bool, tag: str = "") -> dict:
    from scroll.agent import Agent
    from scroll.config import LoopConfig
    from scroll.policies.reference import ReferencePolicy

    with Agent.open(log, ReferencePolicy(), LoopConfig(sandbox=sandbox), session=f"bench-{label}-{task.question_id}{tag}") as agent:
        agent.sess.executor()  # kernel start is not a step
        res = agent.run(task.question)
    return {"correct": bool(res.answer is not None and task.check(res.answer)),
            "overheads": [s.overhead_s * 1000 for s in res.steps],
            "reuse": [s.prefix_reuse for s in res.steps if s.prefix_reuse is not None and s.evicted == 0],
            "exposure_tokens": sum(s.exposure_tokens for s in res.steps)}


def summarize(info: dict, runs: list[dict]) -> dict:
    overheads = [x for r in runs for x in r["overheads"]]
    reuse = [x for r in runs for x in r["reuse"]]
    return {**info, "questions": len(runs), "correct": sum(r["correct"] for r in runs), "steps": len(overheads),
            "overhead_ms_p50": round(statistics.median(overheads), 2), "overhead_ms_p95": round(percentile(overheads, 95), 2),
            "min_prefix_reuse": min(reuse) if reuse else None,
            "max_exposure_pct": round(max(100 * r["exposure_tokens"] / info["tokens_estimate"] for r in runs), 4)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extra-words", type=float, default=10e6, help="words of other conversations for the large log")
    ap.add_argument("--small-tokens", type=int, default=60_000, help="size of the generated task history (~10^3 events)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-sandbox", action="store_true", help="run cells unsandboxed (not for reported numbers)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    args = ap.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    from scroll.bench import report

    c = Console()
    sandbox = not args.no_sandbox
    with tempfile.TemporaryDirectory(prefix="scroll-bench-loop-") as d:
        small = build("small", 0, args.seed, args.small_tokens, Path(d))
        large = build("large", int(args.extra_words), args.seed, args.small_tokens, Path(d))
        run_task(small[0], small[1][0], "small", sandbox, tag="-warmup")  # warm caches; not measured
        runs = {"small": [], "large": []}
        for i in range(len(small[1])):  # interleaved, so both sizes see the same machine state
            for name, (log, tasks, _) in (("small", small), ("large", large)):
                runs[name].append(run_task(log, tasks[i], name, sandbox))
        rows = [summarize(small[2], runs["small"]), summarize(large[2], runs["large"])]
        small[0].close()
        large[0].close()
    ratio = rows[1]["overhead_ms_p50"] / rows[0]["overhead_ms_p50"]
    result = {
        "what": "per-step substrate overhead (view + kernel + log; model excluded) with the reference policy",
        "policy": "reference-policy (deterministic program writer, not a model)",
        "sizes": rows, "p50_ratio_large_vs_small": round(ratio, 3),
        **report.run_provenance(("ipykernel", "jupyter_client")), "command": " ".join(sys.argv),
        "loadavg_end": os.getloadavg(),
    }
    t = Table(title="Scroll loop: per-step substrate overhead (reference policy, sandboxed kernel)")
    for col in ("log", "events", "words", "correct", "steps", "p50 ms", "p95 ms", "min prefix reuse", "max exposure %"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["label"], str(r["events"]), str(r["words"]), f"{r['correct']}/{r['questions']}", str(r["steps"]),
                  str(r["overhead_ms_p50"]), str(r["overhead_ms_p95"]), str(r["min_prefix_reuse"]), str(r["max_exposure_pct"]))
    c.print(t)
    c.print(f"p50 ratio large/small: {ratio:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
