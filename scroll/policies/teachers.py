"""The labelled non-LLM teachers, by the name `--teacher` takes."""
from __future__ import annotations

from .reference import ReferencePolicy
from .writer import ProgramWriter

TEACHERS = {"reference": "the regex teacher of the `generated` task pack (its question templates and cues)",
            "writer": "the program writer: reads the question's meaning, core helpers only, no pack"}
_CLASSES = {"reference": ReferencePolicy, "writer": ProgramWriter}


def teacher_class(name: str) -> type:
    """The teacher policy class by name (see TEACHERS); unknown names get an error listing them."""
    try:
        return _CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown teacher {name!r}; known: {', '.join(TEACHERS)}") from None


def make_teacher(name: str):
    """A fresh teacher policy by name (see TEACHERS)."""
    return teacher_class(name)()
