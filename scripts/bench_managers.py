"""Every context manager on one task set and one backbone, then the side-by-side table.

    python scripts/bench_managers.py --taskset var/tasksets/distill-v1 --split test_unseen \
        --model-url http://127.0.0.1:8012/v1 --window 8192 --name smollm2-unseen
    # -> var/bench/NAME/<manager>/runs.jsonl (resumable) and results/bench/NAME.{json,md,png}

Each manager is the `scroll bench run` a user would type (same backbone, same Budget, each
task on a snapshot of its history, judged by the task's checker); the report is
`scroll bench report` over all of them, recomputed from the records. Progress is shown live.
The loop is scripts/bench_suite.py's, shared with scripts/bench_{longmemeval,locomo,beam,oolong}.py.
"""
from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    from bench_suite import add_suite_args, managers_of, run_suite

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--taskset", required=True, help="task set folder (scroll tasks build)")
    ap.add_argument("--split", action="append", required=True, help="split(s) to run (repeatable)")
    add_suite_args(ap)
    a = ap.parse_args(argv)
    managers = managers_of(ap, a)
    return run_suite(a, managers, ["--taskset", a.taskset, *[x for s in a.split for x in ("--split", s)]])


if __name__ == "__main__":
    sys.exit(main())
