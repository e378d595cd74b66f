"""Who wrote an event: the scope `ms` decides on, stored by the writer in every row.

* ``history`` - the conversation being remembered: imported turns, a user's lines in
  `scroll chat`, events a client logs through MCP or the proxy.
* ``agent``   - the loop's own machinery: the task/question, the model's replies, cells,
  outputs, notes, headlines, the final answer.
* ``system``  - Scroll's own bookkeeping (e.g. a migration marker).

The origin is never guessed from `kind` or `role` strings: the code that writes an event
states it (`EventLog.append(..., origin=Origin.AGENT)`), and `ms.search` / `ms.recent`
return `history` unless the caller asks for another origin explicitly.
"""
from __future__ import annotations

from enum import Enum


class Origin(str, Enum):
    HISTORY = "history"
    AGENT = "agent"
    SYSTEM = "system"

    @classmethod
    def parse(cls, value: "Origin | str") -> "Origin":
        try:
            return value if isinstance(value, cls) else cls(value)
        except ValueError:
            raise ValueError(f"origin must be one of {[o.value for o in cls]}, not {value!r}") from None

    def __str__(self) -> str:
        return self.value
