"""Rebuild a kernel's resident state by replaying the session's logged successful cells.

A cell is replayable only when a kernel of this session ran it: its `kind="code"` event and
its `kind="output"` event (meta `code_seq`) both have the `agent` origin (which no import,
no MCP `log` call and no proxy can write) and carry the same kernel run id (meta `kernel`,
a random id per Kernel), and the output reports no error, no timeout and no resource limit
(meta `limit`). Replay runs the cells in seq order, silently: nothing is logged again and
nothing they print is exposed.

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

from ..origin import Origin

@dataclass
class Cell:
    seq: int
    code: str


def replayable_cells(log: Any, session: str) -> list[Cell]:
    """The session's cells that its own kernel ran and that succeeded, in seq order (see above)."""
    codes: dict[int, tuple[str, Any]] = {}
    ok: set[int] = set()
    for ev in log.events(session=session):
        if ev.origin != Origin.AGENT:
            continue  # history rows (imported, logged through MCP or the proxy) never become cells
        meta = ev.meta or {}
        if ev.kind == "code":
            codes[ev.seq] = (ev.text, meta.get("kernel"))
        elif ev.kind == "output":
            cs = meta.get("code_seq")
            if isinstance(cs, int) and cs in codes and codes[cs][1] == meta.get("kernel") and cs < ev.seq \
                    and not meta.get("error") and not meta.get("timed_out") and not meta.get("limit"):
                ok.add(cs)
    return [Cell(s, codes[s][0]) for s in sorted(codes) if s in ok]
