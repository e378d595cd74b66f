"""One LCM summary DAG per history in a benchmark run: every question over one history is
answered on its own snapshot of the log, yet the DAG is built once (snapshots share the log
id; the runner points the lcm managers at `<out>/dags/<log id>.lcm.db`), also when questions
of one history run concurrently."""
from __future__ import annotations

import threading

import pytest

from scroll.config import LoopConfig
from scroll.llm.scripted import ScriptedLLM
from scroll.managers import make_manager
from scroll.managers.base import Budget
from scroll.runner import load_records, run_tasks
from tests.test_runner import make_refs


class CountingLLM(ScriptedLLM):
    """Summaries for the DAG, "unknown" for answers; counts summarizer calls (thread-safe)."""

    def __init__(self, counter):
        self.counter = counter
        super().__init__(self._reply)

    def _reply(self, m):
        if m[0]["content"].startswith(("Summarize", "Compress")):
            with self.counter["lock"]:
                self.counter["summaries"] += 1
            return "Summary: " + " ".join(m[-1]["content"].split()[:6])
        return "unknown"


@pytest.mark.parametrize("concurrency", [1, 3])
def test_lcm_context_builds_one_dag_per_history(tmp_path, concurrency):
    refs = make_refs(tmp_path, seeds=(0, 1), tokens=6_000)
    refs = [r for r in refs if r.task.kind != "sum"][:3] + [r for r in refs if r.task_id.startswith("s1-")][:3]
    counter = {"lock": threading.Lock(), "summaries": 0}
    out = tmp_path / "lcm"
    recs = run_tasks(refs, lambda: CountingLLM(counter), LoopConfig(), out, concurrency=concurrency,
                     label="lcm", progress=False, manager=make_manager("lcm-context"),
                     budget=Budget(context_window=1400, max_new_tokens=32), loop_name="lcm-context")
    assert all(r.reason != "runner_error" for r in recs), [r.error for r in recs]
    stores = sorted((out / "dags").glob("*.lcm.db"))
    assert len(stores) == 2                                  # one per history, none per task
    builds = [r for r in load_records(out)]
    # the DAG's calls were paid once per history: the other questions made one call (the answer)
    once = sum(1 for r in builds if r.steps == 1)
    assert once == len(builds) - 2, [(r.task_id, r.steps) for r in builds]
    assert counter["summaries"] == sum(r.steps - 1 for r in builds) > 0
