"""A teacher (the regex reference policy, or the program writer) measured on a task set, split by split.

    from scroll.tasks.splits import TaskSet
    from scroll.policies.evaluate import teacher_accuracy
    report = teacher_accuracy(TaskSet.load("var/tasksets/distill-v1"), teacher="writer")
    report["splits"]["test_unseen"]["accuracy"]

Each task runs through `run_episode` in a `SimKernel` (the real capability in-process),
scoped to its history's sessions and with `record=False`, so the task set's logs are
never written. Per split: tasks, correct, accuracy, per-family counts, and why the misses
missed ("no_template": the question matched none of the regex teacher's templates, so it
answered "unknown" at once; "wrong": a program ran and gave a wrong or no answer).
"""
from __future__ import annotations

from typing import Callable

from scroll.events import EventLog
from scroll.packs.generated.programs import match_program
from scroll.policies.harness import SimKernel, run_episode
from scroll.policies.teachers import make_teacher


def teacher_accuracy(taskset, splits: list[str] | None = None,
                     progress: Callable[[dict], None] | None = None, teacher: str = "reference") -> dict:
    names = splits or list(taskset.splits)
    unknown = [n for n in names if n not in taskset.splits]
    if unknown:
        raise ValueError(f"unknown splits {unknown}; the task set has {list(taskset.splits)}")
    policy = make_teacher(teacher)
    out: dict = {"policy": policy.backend, "teacher": teacher, "pack": policy.pack, "splits": {}}
    logs: dict = {}
    try:
        for name in names:
            refs = taskset.splits[name]
            row = {"tasks": len(refs), "correct": 0, "families": {}, "misses": {"no_template": 0, "wrong": 0},
                   "failed": []}
            for i, ref in enumerate(refs):
                log = logs.get(ref.db)
                if log is None:
                    for old in logs.values():
                        old.close()
                    logs.clear()
                    log = logs[ref.db] = EventLog(ref.db, readonly=True)
                ep = run_episode(make_teacher(teacher), log, ref.task.question, sessions=ref.sessions,
                                 kernel=SimKernel(log, session=f"teacher-{ref.task_id}", record=False,
                                                  sessions=ref.sessions, pack=policy.pack))
                ok = bool(ep.answer is not None and ref.task.check(ep.answer))
                fam = row["families"].setdefault(ref.task.family, {"tasks": 0, "correct": 0})
                fam["tasks"] += 1
                fam["correct"] += ok
                row["correct"] += ok
                if not ok:
                    why = ("no_template" if teacher == "reference" and match_program(ref.task.question) is None
                           else "wrong")
                    row["misses"][why] += 1
                    row["failed"].append({"task_id": ref.task_id, "family": ref.task.family, "why": why,
                                          "answer": ep.answer})
                if progress:
                    progress({"split": name, "done": i + 1, "total": len(refs), "correct": row["correct"]})
            row["accuracy"] = round(row["correct"] / max(1, row["tasks"]), 4)
            out["splits"][name] = row
    finally:
        for log in logs.values():
            log.close()
    return out
