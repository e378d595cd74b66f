"""Every context manager on OOLONG-style aggregation questions, one backbone, then the table.

    python scripts/bench_oolong.py --data ~/oolong_synth.json --model-url http://127.0.0.1:8012/v1 --window 8192
    # -> var/bench/oolong/<manager>/runs.jsonl (resumable) and results/bench/oolong.{json,md,png}

The data: OOLONG-synth rows as JSON (the HF split exported with to_json(orient="records")) or
scroll.bench.oolong's file (write_oolong). One event log per context window (one item per event;
item labels and answers in its label sidecar); categories are the tasks. Scored by OOLONG's rule:
0.75^|diff| for numeric answers, exact match otherwise. --limit N runs the first N questions.
"""
import sys

from bench_suite import benchmark_main

if __name__ == "__main__":
    sys.exit(benchmark_main("oolong", __doc__))
