"""python scripts/tune_k1b.py --words 1000000 --out results/bench/recall-tune-k1b.json

BM25's k1 and b for the index, checked on the TUNE seeds of configs/recall-sets.yaml with the
default document model (after `scroll bench tune` chose it): recall@10 of ours per (k1, b) on
every tune set, beside the FTS5 fields peer (its best configuration, which the margin on short
chat turns is about). The report seeds are never read here.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRID = "1.2:0.85,1.2:0.75,1.5:0.75,1.5:0.8,1.5:0.85,1.5:0.9,1.3:0.85,1.8:0.85,1.8:0.9,2.0:0.85,0.9:0.85,1.2:0.95"


def main() -> None:
    from scroll.bench import recall as R
    from scroll.bench import recall_sets as RS
    from scroll.bench import report
    from scroll.bench.shapes import generate_shape, load_sets
    from scroll.events import EventLog

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[2])
    ap.add_argument("--words", type=int, default=1_000_000, help="Words per tune set (the sets' own size).")
    ap.add_argument("--sets", default="configs/recall-sets.yaml", help="The evaluation sets.")
    ap.add_argument("--out", required=True, help="Result JSON.")
    ap.add_argument("--grid", default=GRID, help="k1:b pairs, comma-separated.")
    args = ap.parse_args()
    grid = [tuple(float(x) for x in pair.split(":")) for pair in args.grid.split(",")]
    sets = load_sets(args.sets)
    rows = []
    for shape, spec in sets["shapes"].items():
        for seed in spec["tune"]:
            corpus = generate_shape(shape, args.words, seed)
            peer = RS.evaluate(corpus, systems=("fts5", "fts5-fields", "bm25s"))
            row = {"shape": shape, "seed": seed, "peers": {k: v["recall"] for k, v in peer.items()}, "ours": {}}
            for k1, b in grid:
                with tempfile.TemporaryDirectory() as d:
                    log = EventLog(f"{d}/x.db", index_options={"k1": k1, "b": b})
                    pos = {s: i for i, s in enumerate(log.append_many(corpus.events))}
                    fn = (lambda t, s, log=log, pos=pos:
                          [pos[h.seq] for h in log.search(t, k=10, sessions=None if s is None else {s})])
                    row["ours"][f"k1={k1},b={b}"] = R.recall_at_k(corpus.events, corpus.questions, fn)["recall"]
                    log.close()
            rows.append(row)
            print(shape, seed, json.dumps(row["peers"]), json.dumps(row["ours"]), flush=True)
    worst = {key: min(r["ours"][key] - max(r["peers"].values()) for r in rows) for key in rows[0]["ours"]}
    res = {"bench": "recall-tune-k1b", "command": " ".join(["python", *sys.argv]), "words": args.words,
           "grid": grid, "rows": rows, "worst_margin_points": {k: round(100 * v, 2) for k, v in worst.items()},
           **report.run_provenance()}
    report.write_json(args.out, res)
    print("worst margin over the best peer (points):", res["worst_margin_points"])


if __name__ == "__main__":
    main()
