"""python scripts/bench_ingest.py --rounds 3 --out results/bench/ingest-rounds.json

Ingest alone, ours against both FTS5 peers, round after round in one run: the same seeded
corpora as `make bench-search` (13 M words of long messages, 10 M words of chat; the same bulk
part, imported in transactions of 5,000 events until the first search answers), each import in
its own process, the systems taking turns (ours, fts5, fts5-fields, then again) so that this
VM's drift (its speed varies by 30 % within an hour) falls on all of them. An `os.sync()` after
each import keeps its writeback out of the next one. Reports every import's time, the medians
and the ratios ours / peer of the medians.

Quick check: python scripts/bench_ingest.py --sizes 2e5:chat --rounds 1 --out /tmp/ingest.json
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PEERS = ("fts5", "fts5-fields")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="13e6:long,10e6:chat", help="corpora as words:shape, comma-separated")
    ap.add_argument("--rounds", type=int, default=3, help="imports per system and corpus")
    ap.add_argument("--out", required=True, help="result JSON")
    args = ap.parse_args(argv)

    from rich.progress import Progress

    from scroll.bench import report
    from scroll.bench.search_bench import BenchConfig, _spawn, calibration, prepare

    systems = ("ours", *PEERS)
    result = {"bench": "ingest-rounds", "command": " ".join(["scripts/bench_ingest.py", *(argv or sys.argv[1:])]),
              **report.run_provenance(), "rounds": args.rounds, "calibration_start": calibration(), "corpora": []}
    work = Path(tempfile.mkdtemp(prefix="scroll-ingest-"))
    specs = [s.split(":") for s in args.sizes.split(",")]
    try:
        with Progress(transient=True) as bar:
            task = bar.add_task("imports", total=len(specs) * args.rounds * len(systems))
            for words, shape in specs:
                n = int(float(words))
                cfg = BenchConfig(sizes=[n], shape=shape, systems=systems, ingest_only=True)
                d = work / f"{shape}-{n}"
                bar.update(task, description=f"{n / 1e6:.0f} M {shape}: corpus")
                meta = prepare(d, n, cfg)
                times: dict[str, list[float]] = {s: [] for s in systems}
                settled: list[float] = []      # ours, until its last background merge ended
                for r in range(args.rounds):
                    for system in systems:
                        bar.update(task, description=f"{n / 1e6:.0f} M {shape}: round {r + 1}, {system}")
                        res = _spawn(system, d, cfg)
                        if "error" in res:
                            raise SystemExit(f"{system} failed: {res['error']}")
                        times[system].append(res["ingest_s"])
                        if "ingest_settled_s" in res:
                            settled.append(res["ingest_settled_s"])
                        shutil.rmtree(d / system, ignore_errors=True)
                        bar.advance(task)
                med = {s: statistics.median(v) for s, v in times.items()}
                result["corpora"].append({**meta, "config": asdict(cfg), "ingest_s": times, "median_s": med,
                                          "ours_settled_s": settled,
                                          "ours_over_peer": {p: med["ours"] / med[p] for p in PEERS}})
                shutil.rmtree(d, ignore_errors=True)
        result["calibration_end"] = calibration()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    for c in result["corpora"]:
        print(f"{c['words'] / 1e6:.1f} M words, {c['shape']}, {c['events_bulk']:,} events imported, "
              f"{args.rounds} rounds:")
        for s, v in c["ingest_s"].items():
            print(f"  {s:<12} median {c['median_s'][s]:6.2f} s   all: {', '.join(f'{x:.2f}' for x in v)}")
        print("  ours / peer: " + ", ".join(f"{p} {x:.2f}x" for p, x in c["ours_over_peer"].items()))
        print(f"  ours until its last background merge ended: median {statistics.median(c['ours_settled_s']):.2f} s")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
