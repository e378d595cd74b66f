"""python scripts/bench_search_ab.py --base 844103b --out results/bench/search-ab.json

Our search engine against an earlier commit of itself, side by side in one run: the same seeded
corpora (13 M words of long messages, 10 M words of chat, as `make bench-search`), the same
benchmark worker (`scroll.bench.search_bench`, system "ours"), each version in its own process,
alternating A B A B ... so that the VM's drift (its speed varies by 30 % within an hour here)
falls on both alike. The base runs from a `git worktree` of `--base`; only the config fields both
versions know are passed (no os.sync() after the import in either). Reports each measure's
median over the rounds and the ratio head / base.

Quick check: python scripts/bench_search_ab.py --base HEAD~1 --sizes 2e5:chat --rounds 1 --tail 2000 --out /tmp/ab.json
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEASURES = (("ingest_s", None), ("search", "p50_ms"), ("search", "p95_ms"), ("search_session", "p50_ms"),
            ("interleaved", "p95_ms"), ("append", "p50_ms"), ("append", "p99_ms"), ("append", "max_ms"))


def _worker(tree: Path, d: Path, cfg: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    p = subprocess.run([sys.executable, "-m", "scroll.bench.search_bench", "ours", str(d), json.dumps(cfg)],
                       cwd=tree, env=env, capture_output=True, text=True, timeout=3600)
    out = d / "result-ours.json"
    if p.returncode != 0 or not out.exists():
        raise SystemExit(f"worker in {tree} failed ({p.returncode}): {p.stderr[-2000:]}")
    res = json.loads(out.read_text())
    out.unlink()
    shutil.rmtree(d / "ours", ignore_errors=True)
    return res


def _get(res: dict, key: str, sub: str | None) -> float:
    return float(res[key] if sub is None else res[key][sub])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the git commit to compare against (a worktree of it is made)")
    ap.add_argument("--sizes", default="13e6:long,10e6:chat", help="corpora as words:shape, comma-separated")
    ap.add_argument("--rounds", type=int, default=2, help="A/B pairs per corpus")
    ap.add_argument("--tail", type=int, default=20_000, help="events appended one by one (as bench-search)")
    ap.add_argument("--out", required=True, help="result JSON")
    args = ap.parse_args(argv)

    from scroll.bench import report
    from scroll.bench.search_tables import ab_label
    from scroll.bench.search_bench import BenchConfig, calibration, prepare

    base_sha = subprocess.run(["git", "rev-parse", args.base], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="scroll-ab-"))
    base_tree = work / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), base_sha], cwd=ROOT, check=True,
                   capture_output=True)
    result = {"bench": "search-ab", "command": " ".join(["scripts/bench_search_ab.py", *(argv or sys.argv[1:])]),
              **report.run_provenance(), "base": base_sha, "rounds": args.rounds,
              "calibration_start": calibration(), "corpora": []}
    try:
        for spec in args.sizes.split(","):
            words, shape = spec.split(":")
            n = int(float(words))
            cfg = BenchConfig(sizes=[n], shape=shape, tail=args.tail, systems=("ours",))
            d = work / f"{shape}-{n}"
            print(f"[ab] {n:,} words, {shape}: generating corpus", file=sys.stderr, flush=True)
            meta = prepare(d, n, cfg)
            # only the fields both versions know; settle=False in head matches the base (which has none)
            common = {"sizes": [n], "shape": shape, "tail": args.tail, "systems": ["ours"]}
            runs: dict[str, list] = {"base": [], "head": []}
            for r in range(args.rounds):
                for name, tree, extra in (("base", base_tree, {}), ("head", ROOT, {"settle": False})):
                    print(f"[ab] {shape} round {r + 1}: {name}", file=sys.stderr, flush=True)
                    runs[name].append(_worker(tree, d, {**common, **extra}))
            rows = []
            for key, sub in MEASURES:
                b = statistics.median(_get(x, key, sub) for x in runs["base"])
                h = statistics.median(_get(x, key, sub) for x in runs["head"])
                measure, stat, unit = (key[:-2], None, "s") if sub is None else (key, *sub.split("_"))
                rows.append({"measure": measure, "stat": stat, "unit": unit, "base": b, "head": h,
                             "head_over_base": h / b if b else None})
            result["corpora"].append({**meta, "rows": rows, "runs": runs})
            shutil.rmtree(d, ignore_errors=True)
        result["calibration_end"] = calibration()
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    for c in result["corpora"]:
        print(f"\n{c['words'] / 1e6:.1f} M words, {c['shape']} (median of {args.rounds}; base {base_sha[:10]})")
        for row in c["rows"]:
            print(f"  {ab_label(row):<22} base {row['base']:9.2f}  head {row['head']:9.2f}  head/base "
                  f"{row['head_over_base']:.2f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
