"""What runs a cell: the `Executor` protocol and its result.

The sandboxed Kernel (scroll.kernel), the policies' in-process SimKernel
(scroll.policies.harness) and the LCM baseline's tool cells (scroll.lcm.toolbox) implement
it; the agent loop reads only these fields."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class ExecResult:
    stdout: str  # the exposure: printed stdout+stderr, capped
    error: str | None = None  # set on any failure, timeouts included
    timed_out: bool = False
    notice: str | None = None  # restarts, replays, resume; never mixed into stdout
    seqs: list[int] = field(default_factory=list)  # [code_seq, output_seq]
    handle: str | None = None  # payload handle of the full output when it was cut
    truncated: bool = False
    final: str | None = None  # the answer the cell submitted through ms.final(), if any

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@runtime_checkable
class Executor(Protocol):
    """Runs one cell of model code and logs it (code and output events) in its session."""

    capability: Any  # the `ms` its cells call (scroll.capability.Capability or a stand-in)

    def execute(self, code: str, timeout: float | None = None) -> ExecResult: ...

    def close(self) -> None: ...
