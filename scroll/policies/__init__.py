"""Policies that drive the agent loop without a model.

    from scroll.policies import ReferencePolicy
    llm = ReferencePolicy()            # the LLM protocol; backend="reference-policy"

Modules: reference (ReferencePolicy: the state machine over the chat; its regex programs
live in the `generated` task pack, scroll.packs.generated), writer (ProgramWriter: the same
state machine over programs written from the question's meaning; synonyms: its word
table), oolong_programs (its ms.llm_map programs for
OOLONG-style aggregation questions), mapper (RuleMapper: answers llm_map item calls from the
item's wording; the reference policy routes those calls to it), harness (SimKernel + run_episode: run a
policy on a task without the real kernel; tests and CPU demos only, not a sandbox).
"""
from __future__ import annotations


_LAZY = ("BACKEND", "ReferencePolicy")  # from .reference, imported on first use: it loads the `generated` pack


def __getattr__(name: str):
    if name in _LAZY:
        from . import reference

        return getattr(reference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# the labelled non-LLM teachers, by the name `--teacher` takes
TEACHERS = {"reference": "the regex teacher of the `generated` task pack (its question templates and cues)",
            "writer": "the program writer: reads the question's meaning, core helpers only, no pack"}


def teacher_class(name: str) -> type:
    """The teacher policy class by name (see TEACHERS); unknown names get an error listing them."""
    if name == "reference":
        from .reference import ReferencePolicy

        return ReferencePolicy
    if name == "writer":
        from .writer import ProgramWriter

        return ProgramWriter
    raise ValueError(f"unknown teacher {name!r}; known: {', '.join(TEACHERS)}")


def make_teacher(name: str):
    """A fresh teacher policy by name (see TEACHERS)."""
    return teacher_class(name)()


__all__ = ["BACKEND", "ReferencePolicy", "TEACHERS", "make_teacher", "teacher_class"]
