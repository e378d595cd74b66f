"""python scripts/bench_attach.py --csv-mb 50 --py-mb 5 --out results/bench/attach.json

LCM's large-file behaviour in Scroll (issue 11, item 3), measured through the sandboxed
kernel: Agent.run with scripted cells (the path a model takes) generates a CSV of
--csv-mb MB and a Python module of --py-mb MB in the kernel's own working directory,
attaches both in one cell (`ms.attach`: the bytes stream from the kernel to the host in
512 KiB chunks, the host stores them whole and logs one `file` event each, with its
type-aware summary), prints the two summaries (the exposure the model sees), then reads
both files back in 1 MiB pages through `ms.payload(handle, offset, length)` and compares
sha256 with the files on the kernel's disk. Reports per file: attach seconds (streaming +
storing + summarizing), throughput MB/s, the host's summary time alone, the summary's
tokens (scroll.events.estimate_tokens), and the read-back check; and the view's tokens
after the attach step. JSON with machine, versions and git SHA (scroll.provenance).

Quick check: python scripts/bench_attach.py --csv-mb 5 --py-mb 1 --out /tmp/attach.json
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.agent import Agent  # noqa: E402
from scroll.config import LoopConfig  # noqa: E402
from scroll.events import EventLog, estimate_tokens  # noqa: E402
from scroll.files import summarize  # noqa: E402
from scroll.llm.scripted import ScriptedLLM  # noqa: E402
from scroll.provenance import provenance  # noqa: E402

GENERATE = '''
import random, time
random.seed(7)
t0 = time.perf_counter()
with open("sales.csv", "w") as f:
    f.write("order_id,customer,region,amount,day,status,comment\\n")
    i = 0
    while f.tell() < {csv_bytes}:
        f.write(f"{{i}},cust{{random.randint(1, 20000)}},{{random.choice(['north', 'south', 'east', 'west'])}},"
                f"{{random.random() * 500:.2f}},2024-{{random.randint(1, 12):02d}}-{{random.randint(1, 28):02d}},"
                f"{{random.choice(['paid', 'open', 'refunded'])}},\\"note {{i}}, ok\\"\\n")
        i += 1
with open("engine.py", "w") as f:
    f.write('"""A generated module: classes with methods and free functions."""\\nimport math\\n\\n\\n')
    i = 0
    while f.tell() < {py_bytes}:
        f.write(f"class Worker{{i}}(Base):\\n    \\"\\"\\"Worker number {{i}}.\\"\\"\\"\\n\\n    def run(self, x, y=2):\\n"
                f"        return math.sqrt(x) + y * {{i}}\\n\\n    def stop(self):\\n        return None\\n\\n\\n"
                f"def helper_{{i}}(a, *args, **kw):\\n    if a:\\n        return [a, args, kw]\\n    return None\\n\\n\\n")
        i += 1
print("generated", round(time.perf_counter() - t0, 2))
'''
ATTACH = '''
import json, os, time
timing = {}
for name in ("sales.csv", "engine.py"):
    t0 = time.perf_counter()
    f = ms.attach(name)
    timing[name] = {"seconds": time.perf_counter() - t0, "size": f.size, "seq": f.seq, "handle": f.handle,
                    "type": f.type}
    print(f)
print("TIMING " + json.dumps(timing))
'''
READBACK = '''
import hashlib, json, time
check = {}
for name, t in timing.items():
    h, off, t0 = hashlib.sha256(), 0, time.perf_counter()
    while True:
        page = ms.payload(t["handle"], off, 1 << 20)
        page = page.encode("utf-8") if isinstance(page, str) else page
        if not page:
            break
        h.update(page)
        off += len(page)
    disk = hashlib.sha256(open(name, "rb").read()).hexdigest()
    check[name] = {"read_bytes": off, "read_s": time.perf_counter() - t0, "sha256_equal": h.hexdigest() == disk}
print("CHECK " + json.dumps(check))
'''


def _line(exposure: str, tag: str) -> dict:
    return json.loads(next(x for x in exposure.splitlines() if x.startswith(tag + " "))[len(tag) + 1:])


def run(csv_mb: float, py_mb: float, workdir: Path) -> dict:
    cells = [GENERATE.format(csv_bytes=int(csv_mb * 2**20), py_bytes=int(py_mb * 2**20)), ATTACH, READBACK,
             'final("done")']
    it = iter(cells)
    cfg = LoopConfig(max_steps=5, cell_timeout=600, max_output_chars=20_000, soft_budget=12_000, hard_budget=16_000)
    steps: list[dict] = []
    with EventLog(workdir / "attach.db") as log:
        agent = Agent.open(log, ScriptedLLM(lambda m: "```python\n" + next(it) + "\n```"), cfg, session="attach",
                      on_step=lambda rec, reply, exp: steps.append(
                          {"exposure": exp, "view_tokens_after": agent.view.tokens(), "seconds": rec.overhead_s}))
        with agent:
            res = agent.run("Attach the two large files and check them.")
        if res.reason != "final":
            raise SystemExit(f"the run ended with {res.reason}: {[s['exposure'][-400:] for s in steps]}")
        timing, check = _line(steps[1]["exposure"], "TIMING"), _line(steps[2]["exposure"], "CHECK")
        files = {}
        for name, t in timing.items():
            ev = log.expand(t["seq"])
            t0 = time.perf_counter()
            with open(log.payloads.path(t["handle"]), "rb") as fh:
                summarize(fh, t["size"], name)
            summary_s = time.perf_counter() - t0
            files[name] = {"type": t["type"], "bytes": t["size"], "attach_s": round(t["seconds"], 3),
                           "throughput_MBps": round(t["size"] / 2**20 / t["seconds"], 1),
                           "summary_s": round(summary_s, 3), "summary_tokens": estimate_tokens(ev.text),
                           "summary_facts": ev.meta["file"]["facts"], "read_back_s": round(check[name]["read_s"], 3),
                           "read_back_bytes": check[name]["read_bytes"],
                           "sha256_equal": check[name]["sha256_equal"], "summary": ev.text}
        return {"files": files, "view_tokens_after_attach_step": steps[1]["view_tokens_after"],
                "attach_step_exposure_tokens": estimate_tokens(steps[1]["exposure"]),
                "view_tokens_before_attach_step": steps[0]["view_tokens_after"],
                "content_beyond_samples_in_view": any("note 5, ok" in s["exposure"] for s in steps)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv-mb", type=float, default=50.0)
    ap.add_argument("--py-mb", type=float, default=5.0)
    ap.add_argument("--out", default="results/bench/attach.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-attach-") as d:
        t0 = time.perf_counter()
        res = run(args.csv_mb, args.py_mb, Path(d))
        res["total_s"] = round(time.perf_counter() - t0, 1)
    result = {"benchmark": "attach", "csv_mb": args.csv_mb, "py_mb": args.py_mb,
              "config": {"file_summary_tokens": LoopConfig().file_summary_tokens,
                         "attach_max_bytes": LoopConfig().attach_max_bytes, "sandbox": True},
              **res, "provenance": provenance(("scroll-agent",))}
    for name, f in res["files"].items():
        print(f"{name:10} {f['type']:7} {f['bytes'] / 2**20:6.1f} MB  attach {f['attach_s']:6.2f} s "
              f"({f['throughput_MBps']:5.1f} MB/s; summary alone {f['summary_s']:.2f} s)  summary "
              f"{f['summary_tokens']} tokens  read back {f['read_back_s']:.2f} s  sha256 equal: {f['sha256_equal']}")
    print(f"view after the attach step: {res['view_tokens_after_attach_step']} tokens "
          f"(before: {res['view_tokens_before_attach_step']}); content beyond the sample rows in the view: {res['content_beyond_samples_in_view']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
