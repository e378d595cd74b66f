"""The persistent sandboxed kernel and the `ms` capability.

    from scroll.kernel import Kernel, SandboxError      # Kernel implements scroll.executor.Executor

Modules: kernel (Kernel), sandbox (launch recipe, threat model), process
(kernel process + zmq channels), service (host-side `ms` service), ms_client (the `ms`
object inside the kernel), output (capped exposure), replay (state rebuild), notebook
(.ipynb export).
"""
from __future__ import annotations

from .kernel import Kernel
from .sandbox import SandboxError

__all__ = ["Kernel", "SandboxError"]
