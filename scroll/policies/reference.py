"""`ReferencePolicy`: the regex teacher of the `generated` task pack (a labelled, non-LLM program writer).

The step machine (solve, scan retry, final) is scroll.policies.stepper.ProgramPolicy; this
class gives its programs: a question matching one of the pack's templates
(scroll.packs.generated.programs) gets that template's helper, BM25 query and cue, the
generator's own evidence phrase (so it answers the generator's wording and little else: a
baseline row); an OOLONG-style task (the window's instructions, then the question, on
several lines) gets scroll.policies.oolong_programs' llm_map program. Its cells call the
pack's helpers (scroll/packs/generated/toolkit.py), so a run with it has the pack.
"""
from __future__ import annotations

from typing import Any

from scroll.packs.generated.programs import TEMPLATES, match_program

from .oolong_programs import match_oolong
from .stepper import ProgramPolicy

BACKEND = "reference-policy"
VERSION = 1
__all__ = ["BACKEND", "ReferencePolicy"]


class ReferencePolicy(ProgramPolicy):
    """The regex teacher (see the module docstring)."""

    backend = BACKEND
    pack = "generated"  # its cells call the `generated` task pack's helpers (scroll.packs.generated)

    def describe(self) -> dict[str, Any]:
        return {"backend": BACKEND, "model": BACKEND, "version": VERSION,
                "policy": "scroll.policies.reference.ReferencePolicy",
                "note": "deterministic non-LLM program writer (search -> expand -> compute -> print -> final); "
                        "its results are reference-policy results, not model results",
                "templates": len(TEMPLATES), "token_counter": "approximate", "pack": self.pack,
                "mapper": "scroll.policies.mapper.RuleMapper (llm_map item calls, by the item's wording)"}

    def _program(self, question: str, messages: list[dict]):
        """The question's template program, else an OOLONG-style task's llm_map program."""
        prog = match_program(question)
        if prog is None:  # an OOLONG-style task: instructions + question, several lines
            prog = match_oolong(self._task(messages) or "")
        return prog
