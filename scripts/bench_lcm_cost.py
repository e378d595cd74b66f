"""python scripts/bench_lcm_cost.py --taskset var/tasksets/bench-200k --out results/bench/lcm-cost.json

What building LCM's summary DAG costs for the `lcm` manager of the side-by-side table, and how
long this machine needs for it. Two measurements, both in this run:

  calls    the `lcm` manager's own DAG build (scroll.lcm.SummaryDag with the config it derives
           from the table's budget: --window, --max-new-tokens, --loop-config) over each history
           of the task set, with a stand-in summarizer that writes exactly to the token cap it is
           given, as SmolLM2-135M does (every leaf of the measured bench-24k DAG came out at the
           cap); counts summarizer calls and prompt / completion tokens (approximate counter:
           ~4 characters a token). No model.
  speed    SmolLM2-135M-Instruct (the folder `scroll models smollm2` builds) in transformers on
           this CPU: prefill of a --prompt-tokens prompt and greedy decoding of --decode-tokens,
           in bfloat16 and float32, with 1 and 2 threads (best of --repeats).

  check    the stand-in against the real thing: the same build over --calibrate-taskset beside
           the first record of --calibrate-records (the measured `lcm` run whose first question
           paid for the DAG: its model calls and server-counted tokens include that question's
           own few loop calls).

The projection: the histories' prompt tokens / prefill rate + completion tokens / decode rate,
per dtype and thread count: the build alone, one call at a time in transformers, before any of
the 140 questions is answered (a server batching the five histories' builds could divide the
decoding part by up to five). Writes JSON with the machine, versions and git SHA.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def dag_cost(taskset: str, window: int, max_new: int, loop: str, limit: int | None) -> dict:
    import tempfile

    from scroll.session import history_sessions
    from scroll.events import EventLog
    from scroll.lcm import DagStore, SummaryDag
    from scroll.llm.scripted import ScriptedLLM
    from scroll.managers.base import Budget
    from scroll.managers.lcm_loop import LcmLoopManager
    from scroll.tasks.splits import TaskSet

    _, cfg = LcmLoopManager(loop=loop).config(Budget(window, max_new))

    class ToTheCap(ScriptedLLM):
        """Writes `max_tokens` one-token words: what SmolLM2 does with a summary budget."""

        def complete(self, messages, *, max_tokens=None, **kw):
            self.cap = max_tokens or 100
            return super().complete(messages, max_tokens=max_tokens, **kw)

    histories = sorted({str(r.db) for r in TaskSet.load(taskset).splits["test"]})[:limit]
    rows = []
    for db in histories:
        log = EventLog(db, readonly=True)
        llm = ToTheCap(lambda messages: " ".join(["gist"] * llm.cap))
        with tempfile.TemporaryDirectory() as tmp:
            store = DagStore.for_log(log, Path(tmp) / "x.lcm.db")
            dag = SummaryDag(log, history_sessions(log), config=cfg, store=store)
            t0 = time.perf_counter()
            rep = dag.build(llm)
            rows.append({"history": Path(db).name, "events": rep.events, "history_tokens": sum(e.tokens for e in log.events()),
                         "calls": len(llm.calls), "nodes": rep.created, "levels": rep.levels,
                         "prompt_tokens": rep.usage.prompt_tokens, "completion_tokens": rep.usage.completion_tokens,
                         "context_tokens_after": rep.context_tokens, "build_s_without_model": round(time.perf_counter() - t0, 2)})
            store.close()
        log.close()
    return {"config": {k: getattr(cfg, k) for k in ("context_tokens", "soft_ratio", "target_ratio", "fresh_tail",
                                                     "leaf_chunk_tokens", "leaf_target", "condensed_target", "fanout",
                                                     "truncate_tokens", "window")},
            "histories": rows,
            "total": {k: sum(r[k] for r in rows) for k in ("calls", "prompt_tokens", "completion_tokens", "history_tokens")}}


def speed(model_dir: str, prompt_tokens: int, decode_tokens: int, repeats: int) -> list[dict]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    ids = torch.randint(100, 40000, (1, prompt_tokens))
    out = []
    for dtype in (torch.bfloat16, torch.float32):
        m = model.to(dtype)
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with torch.inference_mode():
                m(ids[:, :32])                                    # warm-up
                pre = min(_timed(lambda: m(ids)) for _ in range(repeats))
                gen = min(_timed(lambda: m.generate(ids[:, :64], max_new_tokens=decode_tokens, min_new_tokens=decode_tokens,
                                                    do_sample=False)) for _ in range(repeats))
            out.append({"dtype": str(dtype).replace("torch.", ""), "threads": threads,
                        "prefill_tokens_per_s": round(prompt_tokens / pre, 1),
                        "decode_tokens_per_s": round(decode_tokens / gen, 1)})
            print(out[-1], file=sys.stderr, flush=True)
    return out


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    from scroll.bench import report

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    ap.add_argument("--taskset", default="var/tasksets/bench-200k", help="Task set whose test histories the table uses.")
    ap.add_argument("--window", type=int, default=4096, help="The backbone's context window (the table's budget).")
    ap.add_argument("--max-new-tokens", type=int, default=200, help="Tokens per model reply (the table's budget).")
    ap.add_argument("--loop-config", default="smollm2", help="The loop config the table's `lcm` rows use.")
    ap.add_argument("--histories", type=int, default=None, help="Only the first N histories.")
    ap.add_argument("--model", default="var/models/smollm2-135m", help="SmolLM2 folder (scroll models smollm2).")
    ap.add_argument("--prompt-tokens", type=int, default=512, help="Prefill length for the speed measurement.")
    ap.add_argument("--decode-tokens", type=int, default=64, help="Tokens decoded for the speed measurement.")
    ap.add_argument("--repeats", type=int, default=2, help="Best of this many timings.")
    ap.add_argument("--calibrate-taskset", default="var/tasksets/bench-24k", help="A task set the lcm manager ran on.")
    ap.add_argument("--calibrate-records", default="results/bench/runs/bench-24k/lcm/runs.jsonl",
                    help="That run's records (the first one paid for the DAG build).")
    ap.add_argument("--out", required=True, help="Write the JSON result here.")
    a = ap.parse_args()
    cost = dag_cost(a.taskset, a.window, a.max_new_tokens, a.loop_config, a.histories)
    print(cost["total"], file=sys.stderr, flush=True)
    check = None
    if a.calibrate_taskset and Path(a.calibrate_taskset).exists() and Path(a.calibrate_records).exists():
        import json
        first = json.loads(Path(a.calibrate_records).read_text().splitlines()[0])
        check = {"stand_in": dag_cost(a.calibrate_taskset, a.window, a.max_new_tokens, a.loop_config, None)["total"],
                 "measured_first_record": {k: first[k] for k in ("model", "steps", "prompt_tokens", "completion_tokens")},
                 "records": a.calibrate_records}
        print(check, file=sys.stderr, flush=True)
    rates = speed(a.model, a.prompt_tokens, a.decode_tokens, a.repeats)
    tot = cost["total"]
    for r in rates:
        r["projected_build_hours"] = round((tot["prompt_tokens"] / r["prefill_tokens_per_s"]
                                            + tot["completion_tokens"] / r["decode_tokens_per_s"]) / 3600, 1)
    report.write_json(a.out, {"bench": "lcm-cost", "command": " ".join(["python", *sys.argv]),
                              "taskset": a.taskset, "budget": {"window": a.window, "max_new_tokens": a.max_new_tokens,
                                                               "loop_config": a.loop_config},
                              "dag": cost, "check": check, "speed": rates,
                              **report.run_provenance(("torch", "transformers"))})
    print(f"{tot['calls']:,} summarizer calls, {tot['prompt_tokens']:,} prompt + {tot['completion_tokens']:,} completion "
          f"tokens for {tot['history_tokens']:,} history tokens; build alone: "
          + ", ".join(f"{r['dtype']} x{r['threads']} {r['projected_build_hours']} h" for r in rates))


if __name__ == "__main__":
    main()
