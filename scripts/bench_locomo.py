"""Every context manager on LoCoMo (locomo10.json), one backbone, then the table.

    python scripts/bench_locomo.py --data ~/locomo10.json --model-url http://127.0.0.1:8012/v1 --window 8192
    # -> var/bench/locomo/<manager>/runs.jsonl (resumable) and results/bench/locomo.{json,md,png}

One event log per conversation (its questions share it; answers and evidence in its label
sidecar); categories are LoCoMo's (multi-hop, temporal, open-domain, single-hop, adversarial).
Scored by LoCoMo's stemmed token F1 with its per-category rules (mean score = LoCoMo's number);
correct = F1 >= 0.5. --limit N runs the file's first N questions.
"""
import sys

from bench_suite import benchmark_main

if __name__ == "__main__":
    sys.exit(benchmark_main("locomo", __doc__))
