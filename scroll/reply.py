"""How a model's reply is read: the one rule for its code cell and its headline line.

The loop (scroll.agent), the teachers (scroll.policies) and the CLI all read replies through
this module, so a reply means the same thing to the one that writes it and the one that runs it."""
from __future__ import annotations

import re

NO_CODE = ("Your reply had no ```python code block, so nothing ran. Reply with exactly one ```python block "
           "(use print() to see results, final(answer) to finish).")
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)
_HEADLINE = re.compile(r"^\s*HEADLINE:\s*(.+?)\s*\|\s*(.+?)\s*\|\s*(.+?)\s*$", re.M | re.I)


def extract_code(reply: str) -> str | None:
    """The reply's fenced code blocks joined into one cell (an unclosed last fence counts)."""
    blocks = [b.strip("\n") for b in _FENCE.findall(reply or "")]
    code = "\n\n".join(b for b in blocks if b.strip())
    return code or None


def extract_headline(reply: str) -> tuple[str, str, str] | None:
    """(task, state, next action) from the reply's `HEADLINE: a | b | c` line, if it has one."""
    m = _HEADLINE.search(reply or "")
    return (m.group(1), m.group(2), m.group(3)) if m else None
