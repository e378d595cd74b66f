"""`agent_map`: a full sub-session (own log session, own kernel, through Agent) per chunk of items,
under LCM's scope-reduction invariant, made checkable.

The rules, checked before anything runs (`check_delegation`):

* The caller states the work it RETAINS and the work it DELEGATES: both non-empty, and not
  the same text (a caller that retains nothing has delegated its whole responsibility).
* Each sub-session receives strictly fewer items than its caller holds: `chunk` (items per
  sub-session, default 1) must be below the number of items in the call, so delegating the
  whole list is rejected; a sub-session holds exactly the items it received and may pass
  at most that many to its own agent_map.
* Depth: the root task is depth 0; a sub-session of a depth-d session is d+1 <= max_depth
  (default 3). At most max_sessions sub-sessions (default 64) per root task, counted over
  the whole tree.

Termination: the number of items a session holds strictly decreases along every chain
of sub-sessions (and the depth and session caps bound the tree whatever the items), each
sub-session's loop is bounded by its LoopConfig (max_steps, max_total_tokens), and every
model call in the tree is charged to the root's ModelBudget.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..capability import BudgetExceeded, CapabilityError
from .budget import MeteredLLM, ModelBudget, Reservation
from .jobs import Job
from .llm_map import render_item


@dataclass
class TaskTree:
    """What every session of one root task shares: the model budget and the sub-session count."""

    budget: ModelBudget
    max_depth: int = 3
    max_sessions: int = 64
    sessions: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def claim(self, n: int) -> None:
        with self.lock:
            if self.sessions + n > self.max_sessions:
                raise BudgetExceeded(
                    f"agent_map would start {n} sub-session(s); this task has started {self.sessions} of its "
                    f"{self.max_sessions} (config agent_map_sessions): nothing was run")
            self.sessions += n


@dataclass
class Delegation:
    """Where a session stands in its task tree: its depth and the items it holds (None: root)."""

    tree: TaskTree
    depth: int = 0
    holds: int | None = None

    def child(self, holds: int) -> "Delegation":
        return Delegation(self.tree, self.depth + 1, holds)


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def check_delegation(d: Delegation, n_items: int, chunk: int, retain: Any, delegate: Any) -> int:
    """Raise CapabilityError for a call that breaks the invariant; return the sub-session count."""
    for name, v in (("retain", retain), ("delegate", delegate)):
        if not isinstance(v, str) or not v.strip():
            raise CapabilityError(f"agent_map: `{name}` must name the work (a non-empty string): the caller "
                                  "states what it keeps and what each sub-session does")
    if _norm(retain) == _norm(delegate):
        raise CapabilityError("agent_map: `retain` and `delegate` are the same work: a caller that keeps "
                              "nothing has delegated its whole responsibility (rejected)")
    if d.depth + 1 > d.tree.max_depth:
        raise CapabilityError(f"agent_map: depth {d.depth + 1} exceeds the limit of {d.tree.max_depth} "
                              "(config agent_map_depth)")
    if d.holds is not None and n_items > d.holds:
        raise CapabilityError(f"agent_map: this sub-session holds {d.holds} item(s) and may delegate at most "
                              f"that many, not {n_items}")
    if n_items == 0:
        return 0  # nothing to delegate: the map is empty
    if chunk >= n_items:
        raise CapabilityError(f"agent_map: each sub-session must receive strictly fewer items than the call "
                              f"holds ({n_items}); chunk={chunk} delegates the whole list (rejected)")
    return -(-n_items // chunk)


def child_task(task: str, retain: str, delegate: str, items: list) -> str:
    body = "\n".join(f"- {render_item(x)}" for x in items)
    return (f"{task}\n\nYou are a sub-session. Your part (delegated to you): {delegate}\n"
            f"Your caller keeps: {retain}\nYour item{'s' if len(items) > 1 else ''} "
            f"({len(items)}):\n{body}\n\nSubmit your result for these items with final(answer).")


@dataclass
class AgentMapSpec:
    """What one agent_map runs: the same for every sub-session."""

    task: str
    retain: str
    delegate: str
    session: str            # the caller's session; sub-sessions are "<session>/agent_map<job>.<i>"
    log: Any
    llm: Any                # the loop backend the sub-sessions' agents use (metered)
    map_llm: Any            # what their own llm_map calls use
    config: Any             # LoopConfig of the sub-sessions (the caller's)
    delegation: Delegation  # the CALLER's
    sessions: Any           # the history the sub-sessions may read (list, or capability.ALL_SESSIONS)
    reservation: Reservation
    open_agent: Any         # scroll.session.SubAgentFactory: opens a sub-session's agent (Agent.open)

    def run_item(self, job: Job, i: int, chunk: list) -> dict:
        session = f"{self.session}/agent_map{job.id}.{i}"
        if job.cancelled.is_set():
            return {"ok": False, "error": "cancelled before it ran", "attempts": 0, "session": session}
        llm = MeteredLLM(self.llm, self.reservation, job.cancelled)
        meta = {"agent_map": {"caller": self.session, "job": job.id, "index": i, "depth": self.delegation.depth + 1,
                              "retain": self.retain, "delegate": self.delegate, "items": len(chunk)}}
        with self.open_agent(self.log, llm, self.config, session=session, map_llm=self.map_llm,
                             delegation=self.delegation.child(len(chunk))) as agent:
            r = agent.run(child_task(self.task, self.retain, self.delegate, chunk), meta,
                          sessions=self.sessions)
        rec = {"ok": r.answer is not None, "session": session, "reason": r.reason, "steps": len(r.steps),
               "attempts": 1}
        if r.answer is not None:
            rec["value"] = r.answer
        else:
            rec["error"] = f"the sub-session ended without an answer ({r.reason})" + (
                f": {r.error}" if r.error else "")
        return rec


def chunks(items: list, chunk: int) -> list[list]:
    return [items[i:i + chunk] for i in range(0, len(items), chunk)]
