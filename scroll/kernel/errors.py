"""Errors of the kernel sandbox, shared by its modules."""
from __future__ import annotations


class SandboxError(RuntimeError):
    """The sandbox cannot be set up; model code is refused (fail closed)."""
