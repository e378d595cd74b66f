"""A map job reports itself ended only once it has: results stored AND its end record logged.

The kernel's Job.wait polls the state and then reads the results; a job that said "done" while
its on_finish (the log append of the end record) still ran answered that read with "still
running", and a reference program's llm_map ran a second time (tests/test_bench_oolong_map.py).
"""
from __future__ import annotations

import threading

from scroll.operators.jobs import Job, JobState
from scroll.payloads import PayloadStore


def test_state_turns_final_only_after_on_finish(tmp_path):
    in_finish, release = threading.Event(), threading.Event()
    seen = {}

    def on_finish(job, state):
        seen["state_passed"] = state
        seen["status_inside"] = job.status()["state"]
        in_finish.set()
        release.wait(10)

    job = Job(1, "llm_map", ["a", "b", "c"], concurrency=2, key="k", cell_bound=True,
              payloads=PayloadStore(tmp_path / "p"), on_finish=on_finish)
    job.start(lambda j, i, x: {"ok": True, "value": x.upper()})
    assert in_finish.wait(10)
    # every item is done and the payload is written, but the end record is still being logged
    s = job.status()
    assert s["done"] == 3 and s["handle"] and s["state"] == "running" and not job.finished.is_set()
    assert not job.wait(0.05)
    release.set()
    assert job.wait(10)
    assert job.status()["state"] == "done" and seen["state_passed"] is JobState.DONE
    assert seen["status_inside"] == "running"
