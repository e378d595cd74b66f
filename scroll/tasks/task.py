"""`Task`: one generated question over a long history, with its exact answer and checker."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .check import check_answer


@dataclass
class Task:
    question_id: str
    question: str
    answer: str                       # canonical answer text ("Lisbon", "5", "2026-03-14", "$345")
    kind: str                         # knowledge_update | count | date | sum
    value: Any                        # the typed expected value (str name, int, ISO date str, float)
    value_type: str                   # entity | number | date (how check() reads answers)
    distractors: list[str] = field(default_factory=list)  # wrong values planted in the history
    evidence_idx: list[int] = field(default_factory=list)  # indices into the generated rows
    evidence_seqs: list[int] = field(default_factory=list)  # filled once the rows are in a log
    question_date: str = ""           # ISO time the question is asked (after the last session)
    family: str = ""                  # e.g. "update_city", "count_dentist"
    params: dict = field(default_factory=dict)

    def check(self, answer_text) -> bool:
        """True when `answer_text` states the expected value (see scroll.tasks.check)."""
        return check_answer(answer_text, self.value, self.value_type, self.distractors)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}
