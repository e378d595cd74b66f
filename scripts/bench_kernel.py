"""python scripts/bench_kernel.py --words 1e6 --out runs/bench_kernel.json

Kernel latency benchmark for issue 3, everything through the real sandbox (unshare --net,
prlimit, setpriv to a per-kernel uid): kernel start (Kernel() until ready, `ms` defined),
cell round trip p50/p95 of `execute("pass")` with both events logged in the big log
(durability "full"), next to the raw protocol round trip without logging, the cost of one
append to that log, and the logged round trip on a fresh log (durability full / normal), `ms.search` p50/p95 measured INSIDE
the kernel on a seeded chat-like log of --words whitespace words (scroll.bench.corpus)
next to the same queries called directly on the host's EventLog (the peer: the cost of
the service hop), and restart + replay of 20 logged cells (after `os._exit`, and as a
resume of the session in a new Kernel). Prints a table and writes JSON with the machine
and versions. Needs root (the sandbox); --no-sandbox measures without it.

Quick check: python scripts/bench_kernel.py --words 1e5 --runs 50
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.bench import report  # noqa: E402
from scroll.bench.corpus import generate, queries  # noqa: E402
from scroll.events import EventLog  # noqa: E402
from scroll.kernel import Kernel  # noqa: E402
from scroll.stats import percentile  # noqa: E402

TARGETS = {"start_s": 2.0, "cell_p50_ms": 15.0, "ms_search_p50_ms": 5.0, "replay20_s": 5.0}


def cell_times(k, runs: int) -> list[float]:
    """Seconds per logged `pass` cell, after 10 warm-up cells."""
    for _ in range(10):
        k.execute("pass")
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        k.execute("pass")
        out.append(time.perf_counter() - t)
    return out


REPLAY_CELLS = [
    "import math, json, collections",
    "import numpy as np",
    *[f"v{i} = [j * {i} for j in range(1000)]" for i in range(14)],
    "arr = np.arange(100_000).reshape(100, 1000)",
    "counts = collections.Counter(str(i % 7) for i in range(10_000))",
    "def f(x):\n    return math.sqrt(x) + 1",
    "hits = ms.search('weekend family', k=5)",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=float, default=1e6)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--out", default="runs/bench_kernel.json")
    ap.add_argument("--no-sandbox", action="store_true")
    a = ap.parse_args()
    sandbox = "off" if a.no_sandbox else True
    d = Path(tempfile.mkdtemp(prefix="bench-kernel-"))
    res: dict = {"loadavg_start": os.getloadavg(), **report.run_provenance(("ipykernel", "jupyter_client", "pyzmq")),
                 "command": " ".join(sys.argv), "sandbox": not a.no_sandbox,
                 "targets": TARGETS, "params": {"words": int(a.words), "runs": a.runs}}

    t0 = time.perf_counter()
    corpus = generate(int(a.words), seed=0)
    log = EventLog(d / "bench.db")
    rows = [{k: e[k] for k in ("session", "role", "text", "time", "kind", "meta") if k in e}
            for e in corpus.events]
    for i in range(0, len(rows), 5000):
        log.append_many(rows[i:i + 5000])
    log.search("warm up the index", k=10)
    res["log"] = {"events": len(rows), "words": corpus.n_words, "build_s": round(time.perf_counter() - t0, 2)}

    # 1. start
    starts = []
    for i in range(a.starts):
        t = time.perf_counter()
        k = Kernel(log, f"start{i}", sandbox=sandbox)
        starts.append(time.perf_counter() - t)
        k.close()
    res["start_s"] = {"p50": round(statistics.median(starts), 3), "max": round(max(starts), 3)}

    with Kernel(log, "bench", sandbox=sandbox) as k:
        # 2. cell round trip
        rt = cell_times(k, a.runs)
        raw = []
        for _ in range(a.runs):
            t = time.perf_counter()
            k.proc.run("pass", time.monotonic() + 10, lambda n, s: None, service=k.server)
            raw.append(time.perf_counter() - t)
        res["cell_ms"] = {"p50": round(1e3 * percentile(rt, 50), 2), "p95": round(1e3 * percentile(rt, 95), 2),
                          "raw_p50": round(1e3 * percentile(raw, 50), 2), "raw_p95": round(1e3 * percentile(raw, 95), 2)}
    # the same on a fresh log, durability "full" (default) and "normal" (no fsync per append)
    for dur in ("full", "normal"):
        with EventLog(d / f"fresh-{dur}.db", durability=dur) as flog, Kernel(flog, "n", sandbox=sandbox) as k:
            nt = cell_times(k, a.runs)
            res["cell_ms"][f"fresh_{dur}_p50"] = round(1e3 * percentile(nt, 50), 2)
    t = time.perf_counter()
    for _ in range(50):
        log.append(session="bench-append", role="assistant", text="pass", kind="code")
    res["append_ms_big_log"] = round(1e3 * (time.perf_counter() - t) / 50, 2)
    with Kernel(log, "bench", sandbox=sandbox) as k:
        # 3. ms.search inside the kernel vs the host's EventLog.search
        qs = [q["query"] for q in queries(corpus, n=min(a.runs, 300))]
        code = (f"import time\nqs = {qs!r}\nfor q in qs[:10]: ms.search(q, k=10)\nts = []\n"
                "for q in qs:\n    t = time.perf_counter(); ms.search(q, k=10); ts.append(time.perf_counter() - t)\n"
                "ts.sort(); print(ts[len(ts)//2] * 1e3, ts[int(len(ts)*.95)] * 1e3)")
        r = k.execute(code, timeout=300)
        assert r.error is None, r.error
        p50, p95 = map(float, r.stdout.split())
        host = []
        for q in qs:
            t = time.perf_counter()
            log.search(q, k=10)
            host.append(time.perf_counter() - t)
        res["ms_search_ms"] = {"p50": round(p50, 3), "p95": round(p95, 3), "queries": len(qs),
                               "host_p50": round(1e3 * percentile(host, 50), 3), "host_p95": round(1e3 * percentile(host, 95), 3)}

    # 4. restart + replay of 20 cells
    assert len(REPLAY_CELLS) == 20
    with Kernel(log, "replay", sandbox=sandbox) as k:
        for c in REPLAY_CELLS:
            assert k.execute(c).error is None
        t = time.perf_counter()
        r = k.execute("import os; os._exit(1)")
        crash = time.perf_counter() - t
        assert "replayed 20" in (r.notice or ""), r.notice
        assert k.execute("print(len(v13), arr.shape, f(16))").stdout == "1000 (100, 1000) 5.0\n"
    t = time.perf_counter()
    with Kernel(log, "replay", sandbox=sandbox) as k2:
        resume = time.perf_counter() - t
        assert k2.execute("print(len(v13))").stdout == "1000\n"
    res["replay20_s"] = {"after_crash": round(crash, 3), "resume": round(resume, 3)}

    checks = {"start_s": res["start_s"]["p50"], "cell_p50_ms": res["cell_ms"]["p50"],
              "ms_search_p50_ms": res["ms_search_ms"]["p50"], "replay20_s": res["replay20_s"]["after_crash"]}
    res["loadavg_end"] = os.getloadavg()
    res["pass"] = {name: v <= TARGETS[name] for name, v in checks.items()}
    print(f"machine: {res['machine']['cpu']}, {res['machine']['cores']} cores; sandbox={res['sandbox']}; "
          f"log: {res['log']['events']} events, {res['log']['words']} words; "
          f"load avg {res['loadavg_start'][0]:.1f} -> {res['loadavg_end'][0]:.1f} (other work on this machine skews latency)")
    print(f"{'metric':<34}{'measured':>12}{'target':>10}  ok")
    rows_out = [("kernel start p50 (s)", res["start_s"]["p50"], "start_s"),
                ("cell round trip p50 (ms, logged)", res["cell_ms"]["p50"], "cell_p50_ms"),
                ("  raw protocol p50 (ms)", res["cell_ms"]["raw_p50"], None),
                ("  one EventLog.append, this log (ms)", res["append_ms_big_log"], None),
                ("  logged, fresh log, full (ms)", res["cell_ms"]["fresh_full_p50"], None),
                ("  logged, fresh log, normal (ms)", res["cell_ms"]["fresh_normal_p50"], None),
                ("ms.search p50 in kernel (ms)", p50, "ms_search_p50_ms"),
                ("  ms.search p95 in kernel (ms)", p95, None),
                ("  EventLog.search p50 on host (ms)", res["ms_search_ms"]["host_p50"], None),
                ("restart + replay 20 cells (s)", res["replay20_s"]["after_crash"], "replay20_s"),
                ("  resume 20 cells in new Kernel (s)", res["replay20_s"]["resume"], None)]
    for name, v, key in rows_out:
        tgt = f"{TARGETS[key]:>10}" if key else " " * 10
        print(f"{name:<34}{v:>12.3f}{tgt}  {'' if key is None else ('yes' if res['pass'][key] else 'NO')}")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(res, indent=2))
    print(f"wrote {a.out}")
    log.close()


if __name__ == "__main__":
    main()
