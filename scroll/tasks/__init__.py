"""Generated long-history tasks: a seeded multi-session history with planted facts, and
questions whose answers need exact old details (knowledge update, count, date, sum).

    from scroll.tasks import build_demo_log, build_history, Task
    log, tasks = build_demo_log("demo.db", seed=0, target_tokens=200_000)
    tasks[0].question, tasks[0].check("Lisbon")

    ts = build_taskset(TaskSetSpec.load("distill-ci"), "var/tasksets/ci")   # leak-free splits
    ts.splits["test_unseen"][0].task.question

Modules: task (Task), families (the planted facts and questions), pools (entity pools split
by role), wordings (question / fact templates per wording variant), filler (the chit-chat,
work and tool-output sessions around them), history (build_history, build_demo_log),
splits (task-set specs, build_taskset, TaskSet), check (answer normalization), formats
(LongMemEval / LoCoMo JSON writers).
"""
from __future__ import annotations

from .catalog import DEFAULT_FAMILIES, FAMILIES
from .check import check_answer, parse_dates, parse_numbers
from .history import History, build_demo_log, build_history
from .splits import TaskRef, TaskSet, TaskSetSpec, build_taskset
from .task import Task

__all__ = ["DEFAULT_FAMILIES", "FAMILIES", "History", "Task", "TaskRef", "TaskSet", "TaskSetSpec", "build_demo_log",
           "build_history", "build_taskset", "check_answer", "parse_dates", "parse_numbers"]
