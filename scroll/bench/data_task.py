"""One question of a benchmark data file as the runner sees it (`DataTask`), and the file-safe
name of a question or history (`safe_name`): shared by every format's loader."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..labels import LabelStore
from .data_judges import FormatJudge


@dataclass
class DataTask:
    """One question of a public benchmark, as the runner sees it. No answer in here: `judge`
    reads it from the label sidecar of `labels_db` under `label_key`, host-side."""

    question_id: str
    question: str
    kind: str                        # the category the table groups by
    family: str                      # the format
    labels_db: str
    label_key: str
    judger: FormatJudge = field(repr=False)
    history: str = ""                # the history it asks about: questions over one history share it

    @property
    def judge_name(self) -> str:
        return self.judger.name

    def label(self) -> dict:
        lab = LabelStore(self.labels_db).get(self.label_key)
        if not isinstance(lab, dict):
            raise LookupError(f"no label {self.label_key!r} next to {self.labels_db}")
        return lab

    def judge(self, answer: Any):
        return self.judger.judge(self.label(), answer)

    def check(self, answer: Any) -> bool:
        return self.judge(answer).correct


def safe_name(s: str) -> str:
    """`s` with every character outside [A-Za-z0-9_.-] replaced, at most 120 characters (never empty)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", s)[:120] or "_"
