"""The composition root of one agent session: everything a run talks to, built in one place and
in one direction.

    session = open_session(log, llm, config, name="s1", sub_agent=Agent.open)
    with Agent(session) as agent:
        agent.run("what did I say about X?")

`open_session` builds, from the bottom up: the task pack (the config's or the policy's), the
FileAttacher of the session, the OperatorEngine (ms.llm_map / ms.agent_map; it receives the
`sub_agent` factory, a callable, never an import of the loop), the Capability (the `ms` of the
session, which receives the headlines and the operators as values), and the Executor: the one
given, else a sandboxed Kernel started on first use. Nothing below builds anything above it,
and no object holds a closure back into the Agent: the headlines the capability shows come from
a `HeadlineSource` the loop points at its view.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Protocol

from .capability import ALL_SESSIONS, Capability
from .config import LoopConfig
from .executor import Executor
from .files import FileAttacher, FileLimits
from .headlines import HeadlineIndex
from .kernel import Kernel
from .operators import Delegation, OperatorEngine
from .origin import Origin
from .packs import TaskPack, check_kernel_pack, get_pack
from .prompts import kernel_prelude

__all__ = ["ALL_SESSIONS", "HeadlineSource", "Session", "SubAgentFactory", "history_sessions", "open_session",
           "resolve_pack"]


class RunsTasks(Protocol):
    """What ms.agent_map needs of a sub-session's agent."""

    def run(self, task: str | None = None, meta: dict | None = None, *, sessions: Any = None) -> Any: ...


class SubAgentFactory(Protocol):
    """Opens the agent of an agent_map sub-session (the loop passes `Agent.open`)."""

    def __call__(self, log: Any, llm: Any, config: LoopConfig, *, session: str, map_llm: Any = None,
                 delegation: Delegation | None = None) -> ContextManager[RunsTasks]: ...


@dataclass
class HeadlineSource:
    """The headline index the capability shows (`ms.headlines()`): the run's view's, once it has one."""

    index: HeadlineIndex | None = None

    def __call__(self) -> list[dict]:
        return [h.to_dict() for h in self.index.entries()] if self.index is not None else []


def resolve_pack(configured: str | None, required: str | None) -> str | None:
    """The run's task pack: the loop config's, or the one a policy is written for (the regex
    teacher needs its pack's helpers); a policy's pack that differs from the config's is refused."""
    if required and configured and required != configured:
        raise ValueError(f"this policy writes cells for the {required!r} task pack, but the loop config names "
                         f"{configured!r}")
    return configured or required


def history_sessions(log: Any) -> list[str]:
    """Every session that holds history-origin events: the default scope of a run."""
    return [s["session"] for s in log.sessions(origins=frozenset({Origin.HISTORY.value}))]


@dataclass
class Session:
    """One agent session's parts (see the module docstring); `close()` ends the executor and the jobs."""

    log: Any
    name: str
    llm: Any
    config: LoopConfig
    pack: TaskPack | None
    capability: Any
    headlines: HeadlineSource
    executor_factory: Callable[[], Executor]
    _executor: Executor | None = field(default=None, repr=False)

    @property
    def pack_name(self) -> str | None:
        return self.pack.name if self.pack else None

    def executor(self) -> Executor:
        """The session's executor, started on first use."""
        if self._executor is None:
            self._executor = self.executor_factory()
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None
        getattr(self.capability, "close", lambda: None)()  # its operator jobs die with the session


def open_session(log: Any, llm: Any, config: LoopConfig | None = None, *, name: str,
                 executor: Executor | None = None, sub_agent: SubAgentFactory | None = None,
                 map_llm: Any = None, delegation: Delegation | None = None) -> Session:
    """Compose one session (see the module docstring). `executor`: a given one (it brings its own
    capability); else a sandboxed Kernel per the config. `sub_agent`: how ms.agent_map opens a
    sub-session's agent (None: agent_map is refused with a clear error)."""
    cfg = config or LoopConfig()
    pack = get_pack(resolve_pack(cfg.pack, getattr(llm, "pack", None)))
    pack_name = pack.name if pack else None
    if executor is not None:
        check_kernel_pack(executor, pack_name)
    headlines = HeadlineSource()
    capability = getattr(executor, "capability", None)
    if capability is None:
        capability = Capability(log, sessions=(), own_session=name, headlines=headlines,
                                files=FileAttacher(log, name, FileLimits.from_config(cfg)))
        capability.operators = OperatorEngine.for_loop(log, name, llm, cfg, map_llm=map_llm, delegation=delegation,
                                                       scope=lambda: capability.sessions_scope, sub_agent=sub_agent)

    def start_kernel() -> Executor:
        return Kernel(log, name, memory_limit=cfg.memory_limit, max_output_chars=cfg.max_output_chars,
                      timeout=cfg.cell_timeout, sandbox=True if cfg.sandbox else "off", prelude=kernel_prelude(pack),
                      capability=capability, stateless=not cfg.persistent_kernel)

    return Session(log, name, llm, cfg, pack, capability, headlines, start_kernel, executor)
