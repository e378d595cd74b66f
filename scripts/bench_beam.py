"""Every context manager on one BEAM chat (chat.json + probing questions), one backbone, then the table.

    python scripts/bench_beam.py --data ~/BEAM/chats/100K/1/chat.json --model-url http://127.0.0.1:8012/v1 \
        --judge-url http://127.0.0.1:8013/v1 --window 8192
    # -> var/bench/beam/<manager>/runs.jsonl (resumable) and results/bench/beam.{json,md,png}

The chat is one event log (rubrics and ideal answers in its label sidecar); the probing questions
are found beside the chat (probing_questions/probing_questions.json) or named with --probing;
categories are BEAM's abilities. Judge: every rubric item scored 0 / 0.5 / 1 by the judge model
(--judge-url / --judge-llm); without one, a deterministic rubric-word overlap (a proxy, not BEAM's
metric: the records and the table name it). --limit N runs the first N questions.
"""
import sys

from bench_suite import benchmark_main

if __name__ == "__main__":
    sys.exit(benchmark_main("beam", __doc__))
