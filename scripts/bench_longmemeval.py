"""Every context manager on LongMemEval (longmemeval_s / _m / _oracle JSON), one backbone, then the table.

    python scripts/bench_longmemeval.py --data ~/longmemeval_s.json --model-url http://127.0.0.1:8012/v1 \
        --judge-url http://127.0.0.1:8013/v1 --window 8192
    # -> var/bench/longmemeval/<manager>/runs.jsonl (resumable) and results/bench/longmemeval.{json,md,png}

One haystack (its own event log, answers in its label sidecar) per question; categories are the
question types. Judge: the type-specific yes/no judge model with --judge-url / --judge-llm (the
abstention rule for `_abs` questions); without one, normalised exact/contains match (abstention:
an "I don't know" phrase), named in every record. --limit N runs the first N questions.
"""
import sys

from bench_suite import benchmark_main

if __name__ == "__main__":
    sys.exit(benchmark_main("longmemeval", __doc__))
