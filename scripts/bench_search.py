"""python scripts/bench_search.py --sizes 1e6,10e6,18e6 --out runs/bench_search.json

Search benchmark for issue 2: Scroll's EventLog search vs SQLite FTS5 (`porter unicode61`,
OR query, ORDER BY bm25) on a seeded chat-like corpus of each size (whitespace words):
ingest time, append p50 (with index upkeep), search p50/p95 (k=10) with and without a
session filter, searches interleaved with appends (one per 500), freshness of a
just-appended event, reopen time, peak RSS (each system in its own subprocess), index
size and the ours/FTS5 ratios; plus evidence recall@10 of both on generated
conversations (and on real LoCoMo JSON with --locomo PATH). Prints a table, writes JSON.

Quick check: python scripts/bench_search.py --sizes 2e5 --queries 50 --tail 2000
Same thing from the CLI: scroll bench search --sizes 1e6,10e6,18e6 --json
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scroll.cli.bench_cmds import bench_app  # noqa: E402

if __name__ == "__main__":
    bench_app(["search", *sys.argv[1:]], prog_name="bench_search.py")
