"""The `generated` task pack: the helpers, prompt text, program templates and regex teacher
that were written together with scroll.tasks' generator (its families' wordings).

    scroll collect --pack generated --teacher reference ...

Its helpers (toolkit.py: latest, count_sessions, date_of, total, earliest, days_between,
all_values) read the value after a regular-expression `cue`, and its teacher
(scroll.policies.reference.ReferencePolicy, programs.py) recognises each family's question
template and passes the generator's own evidence phrase as the cue. It is kept as a
baseline row: it answers the generator's wording and little else (results/distill).
"""
from __future__ import annotations

from pathlib import Path

from scroll.packs import TaskPack

PROMPT = """Helpers of the `generated` task pack (a `cue` is a case-insensitive regex; each prints evidence and `ANSWER: ... | evidence seqs: [...]`):
  latest(hits, cue) -> the Capitalised Name after the latest match     count_sessions(hits, cue) -> sessions with a match
  date_of(hits, cue) -> date of the first match + today/yesterday      total(hits, cue) -> sum of amounts, `$` marks the amount
  earliest(hits, cue) -> the Name after the earliest match           days_between(hits, cue) -> days from first to last dated match
  all_values(hits, cue) -> every distinct Name after a match (two values of one fact: report both)"""

PRELUDE = (Path(__file__).with_name("toolkit.py")).read_text(encoding="utf-8")


PACK = TaskPack(name="generated", description="scroll.tasks' family helpers, their prompt text and the regex teacher",
                prompt=PROMPT, prelude=PRELUDE, teacher="reference")
