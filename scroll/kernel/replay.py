"""Rebuild a kernel's resident state by replaying the session's logged successful cells.

A cell is replayable when its `kind="code"` event has a matching `kind="output"` event
(meta `code_seq`) with no error and no timeout. Replay runs the cells in seq order,
silently: nothing is logged again and nothing they print is exposed.

Limits (say them to users):
  - Side effects run again: files written, payloads re-put (content-addressed, harmless),
    `ms` queries re-run; a cell that called an external service calls it again (the
    sandbox has no network, which bounds this).
  - Nondeterministic cells (random without a seed, time, reading files that changed) give
    different values after replay.
  - A cell that succeeded before but fails or hangs on replay is skipped; the notice says
    which seqs.
  - State that lived only in a failed cell (one that raised after assigning) is lost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

@dataclass
class Cell:
    seq: int
    code: str


def replayable_cells(log: Any, session: str) -> list[Cell]:
    """The session's logged code cells whose output event reports success, in seq order."""
    codes: dict[int, str] = {}
    ok: set[int] = set()
    for ev in log.events(session=session):
        if ev.kind == "code":
            codes[ev.seq] = ev.text
        elif ev.kind == "output":
            meta = ev.meta or {}
            cs = meta.get("code_seq")
            if isinstance(cs, int) and not meta.get("error") and not meta.get("timed_out"):
                ok.add(cs)
    return [Cell(s, codes[s]) for s in sorted(codes) if s in ok]
