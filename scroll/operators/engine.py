"""`OperatorEngine`: the host side of `ms.llm_map` / `ms.agent_map` for one session.

The capability (scroll.capability) hands it the operator methods of the wire protocol;
the kernel's client (scroll.kernel.ms_client) drives them:

    llm_map(n, nbytes, prompt, schema, concurrency, retries, detach)   -> {"stage"}  refused up front
    agent_map(n, nbytes, task, retain, delegate, concurrency, chunk, detach) -> {"stage"}  (limits, budget,
                                                                         scope-reduction rule)
    map_items(stage, items) -> {"received"}    items arrive in pages (one request is <= 1 MiB)
    map_start(stage)        -> job status      the job runs in its own worker threads
    job_wait(job, timeout)  -> job status      blocks at most `wait_slice` s (the ms thread stays responsive)
    job_results(job, offset=0) -> {"results", "next"}   pages of the JSONL payload, in item order
    job_cancel(job) -> status;   jobs() -> [status, ...]

A job's id is the seq of its start record (kind "llm_map" / "agent_map", meta phase
"start"); its end record (phase "end") carries the JSONL payload's handle, counts and
the request's key. A blocking map (`detach=False`) is bound to its cell: whatever still
runs when the cell ends (its timeout) is cancelled. A detached job lives across cells
until it finishes, is cancelled, or the session closes (`close()`: jobs die with their
kernel session). Kernel replay (after a restart) never calls the model again: a replayed
map gets the job that the same request (same key) started, from memory or from its end
record in the log, or an error.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..capability import ALL_SESSIONS, CapabilityError, _int
from ..llm import LLMConfig, make_llm
from ..llm.base import approx_count
from ..llm.constraints import Support, probe
from ..origin import Origin
from .agent_map import AgentMapSpec, Delegation, TaskTree, check_delegation, chunks
from .budget import ModelBudget, Reservation
from .jobs import Job, JobState
from .limits import OperatorLimits
from .llm_map import LlmMapSpec, item_messages
from .schema import SchemaError, check_schema


@dataclass
class _Stage:
    op: str
    n: int
    params: dict
    detach: bool
    reservation: Reservation | None
    items: list = field(default_factory=list)
    nbytes: int = 0
    hasher: Any = None


class OperatorEngine:
    def __init__(self, log: Any, session: str, *, llm: Any, config: Any = None, map_llm: Any = None,
                 limits: OperatorLimits | None = None, delegation: Delegation | None = None,
                 scope: Callable[[], Any] = lambda: None, sub_agent: Callable[..., Any] | None = None):
        """`sub_agent`: opens the agent of an agent_map sub-session (scroll.session.SubAgentFactory; the
        loop passes Agent.open); None: agent_map is refused."""
        self.log, self.session, self.loop_llm, self.config = log, session, llm, config
        self.sub_agent = sub_agent
        self.limits = limits or OperatorLimits()
        L = self.limits
        self.delegation = delegation or Delegation(
            TaskTree(ModelBudget(L.model_calls_budget, L.model_tokens_budget), L.agent_map_depth,
                     L.agent_map_sessions))
        self._map_llm, self._own_map_llm = map_llm, False
        self.scope = scope
        self.jobs: dict[int, Job] = {}
        self.stages: dict[int, _Stage] = {}
        self._stage_ids = itertools.count(1)
        self.replay, self.deadline = False, None

    @classmethod
    def for_loop(cls, log: Any, session: str, llm: Any, config: Any, **kw: Any) -> "OperatorEngine":
        """The engine of an agent loop's session: limits from its LoopConfig."""
        return cls(log, session, llm=llm, config=config, limits=OperatorLimits.from_config(config), **kw)

    # ---- the backend ----------------------------------------------------------------------
    def map_llm(self) -> Any:
        """The llm_map backend: the one given, else the `map_llm` config's, else the loop's."""
        if self._map_llm is None:
            name = self.limits.map_llm
            if name:
                self._map_llm, self._own_map_llm = make_llm(LLMConfig.from_yaml(name)), True
            else:
                self._map_llm = self.loop_llm
        if self._map_llm is None:
            raise CapabilityError("llm_map: no model backend is attached to this session")
        return self._map_llm

    # ---- cell lifecycle (called by the capability) -------------------------------------------
    def begin_cell(self, deadline: float | None, replay: bool) -> None:
        self.deadline, self.replay = deadline, replay

    def end_cell(self) -> None:
        for st in self.stages.values():
            if st.reservation is not None:
                st.reservation.release()
        self.stages.clear()
        for job in self.jobs.values():
            if job.cell_bound and not job.finished.is_set():
                job.cancel()
        self.deadline = None

    def close(self) -> None:
        self.end_cell()
        for job in self.jobs.values():
            job.cancel()
        t_end = time.monotonic() + 5.0
        for job in self.jobs.values():
            job.wait(max(0.0, t_end - time.monotonic()))
        if self._own_map_llm and self._map_llm is not None:
            try:
                self._map_llm.close()
            except Exception:  # noqa: BLE001
                pass

    # ---- staging --------------------------------------------------------------------------
    def _new_stage(self, op: str, n: Any, nbytes: Any, params: dict, detach: Any,
                   reserve: Callable[[int, int], Reservation | None]) -> dict:
        L = self.limits
        n = _int(n, "len(items)", 0)
        if n > L.map_max_items:
            raise CapabilityError(f"{op}: {n} items; the limit per map is {L.map_max_items} (config "
                                  "map_max_items): split the list and map it in parts. Nothing was run")
        nbytes = _int(nbytes, "nbytes", 0)
        if nbytes > L.map_max_bytes:
            raise CapabilityError(f"{op}: the items are {nbytes} bytes as JSON; the limit per map is "
                                  f"{L.map_max_bytes}. Nothing was run")
        if not isinstance(detach, bool):
            raise CapabilityError("detach must be true or false")
        live = sum(not j.finished.is_set() for j in self.jobs.values()) + len(self.stages)
        if live >= L.max_live_jobs:
            raise CapabilityError(f"{op}: {live} maps are already running in this session (limit "
                                  f"{L.max_live_jobs}); wait for or cancel one first")
        res = None if self.replay else reserve(n, nbytes)
        sid = next(self._stage_ids)
        h = hashlib.sha256(json.dumps([op, params], sort_keys=True, default=str).encode("utf-8"))
        self.stages[sid] = _Stage(op, n, params, detach, res, hasher=h)
        return {"stage": sid}

    def llm_map(self, n, nbytes, prompt, schema=None, concurrency=16, retries=3, detach=False) -> dict:
        L = self.limits
        if not isinstance(prompt, str) or not prompt.strip():
            raise CapabilityError("llm_map: prompt must be a non-empty string")
        if len(prompt) > L.max_prompt_chars:
            raise CapabilityError(f"llm_map: prompt is {len(prompt)} characters; the limit is {L.max_prompt_chars}")
        if schema is not None:
            if len(json.dumps(schema)) > L.max_schema_chars:
                raise CapabilityError(f"llm_map: schema is over {L.max_schema_chars} characters as JSON")
            try:
                check_schema(schema)
            except SchemaError as e:
                raise CapabilityError(f"llm_map: {e}") from None
        concurrency = _int(concurrency, "concurrency", 1, L.map_max_concurrency)
        retries = _int(retries, "retries", 0, L.map_max_retries)
        params = {"prompt": prompt, "schema": schema, "concurrency": concurrency, "retries": retries,
                  "max_tokens": L.map_max_new_tokens}
        base = approx_count(item_messages(prompt, "", schema)) + L.map_max_new_tokens

        def reserve(n: int, nbytes: int) -> None:  # a lower bound now; the exact estimate at start
            self.delegation.tree.budget.check(n, n * base + math.ceil(nbytes / 3.5), f"llm_map of {n} items")

        return self._new_stage("llm_map", n, nbytes, params, detach, reserve)

    def agent_map(self, n, nbytes, task, retain, delegate, concurrency=4, chunk=1, detach=False) -> dict:
        L = self.limits
        if not isinstance(task, str) or not task.strip():
            raise CapabilityError("agent_map: task must be a non-empty string")
        if len(task) > L.max_prompt_chars:
            raise CapabilityError(f"agent_map: task is {len(task)} characters; the limit is {L.max_prompt_chars}")
        if self.loop_llm is None or self.config is None or self.sub_agent is None:
            raise CapabilityError("agent_map: this surface has no agent loop to start sub-sessions with")
        n = _int(n, "len(items)", 0)
        chunk = _int(chunk, "chunk", 1)
        concurrency = _int(concurrency, "concurrency", 1, L.agent_map_max_concurrency)
        subs = check_delegation(self.delegation, n, chunk, retain, delegate)
        params = {"task": task, "retain": retain, "delegate": delegate, "concurrency": concurrency,
                  "chunk": chunk}
        cfg = self.config
        per = (cfg.max_steps * (cfg.backend_retries + 1),
               cfg.max_total_tokens + cfg.hard_budget + cfg.max_new_tokens)

        def reserve(n: int, nbytes: int) -> Reservation:
            tree = self.delegation.tree
            if tree.sessions + subs > tree.max_sessions:
                tree.claim(subs)  # raises with the numbers
            return tree.budget.reserve(subs * per[0], subs * per[1], f"agent_map of {subs} sub-session(s)")

        return self._new_stage("agent_map", n, nbytes, params, detach, reserve)

    def map_items(self, stage, items) -> dict:
        st = self._stage(stage)
        if not isinstance(items, list):
            raise CapabilityError("items must be a list")
        if len(st.items) + len(items) > st.n:
            raise CapabilityError(f"more items than declared ({st.n})")
        for x in items:
            enc = json.dumps(x, sort_keys=True, ensure_ascii=False).encode("utf-8")
            if len(enc) > self.limits.map_max_item_bytes:
                raise CapabilityError(f"item {len(st.items)} is {len(enc)} bytes as JSON; the limit is "
                                      f"{self.limits.map_max_item_bytes}")
            st.nbytes += len(enc)
            if st.nbytes > self.limits.map_max_bytes:
                raise CapabilityError(f"the items exceed {self.limits.map_max_bytes} bytes")
            st.hasher.update(enc + b"\n")
            st.items.append(x)
        return {"received": len(st.items)}

    def _stage(self, stage: Any) -> _Stage:
        st = self.stages.get(stage) if isinstance(stage, int) and not isinstance(stage, bool) else None
        if st is None:
            raise CapabilityError(f"no staged map {stage!r} in this cell (a map is staged and started in one cell)")
        return st

    # ---- starting -------------------------------------------------------------------------
    def map_start(self, stage) -> dict:
        st = self._stage(stage)
        if len(st.items) != st.n:
            raise CapabilityError(f"{st.op}: {len(st.items)} of {st.n} items received")
        del self.stages[stage]
        key = st.hasher.hexdigest()
        if self.replay:
            return self._replayed(st.op, key).status()
        try:
            job = self._launch(st, key)
        except BaseException:
            if st.reservation is not None:
                st.reservation.release()
            raise
        return job.status()

    def _launch(self, st: _Stage, key: str) -> Job:
        p = st.params
        if st.op == "llm_map":
            spec = LlmMapSpec(p["prompt"], p["schema"], p["retries"], p["max_tokens"], self.session,
                              self.map_llm(), self.log, None,  # type: ignore[arg-type]
                              structured=self._structured(p["schema"]))
            est = sum(spec.estimate(x) for x in st.items)
            spec.reservation = self.delegation.tree.budget.reserve(st.n, est, f"llm_map of {st.n} items")
            st.reservation, items, work = spec.reservation, st.items, spec.run_item
            about = f"llm_map of {st.n} item(s): {p['prompt'][:200]}"
            backend = _describe(spec.llm)
        else:
            items = chunks(st.items, p["chunk"])
            self.delegation.tree.claim(len(items))
            scope = self.scope()
            sessions = ALL_SESSIONS if scope is None else sorted(set(scope) - {self.session})
            spec = AgentMapSpec(p["task"], p["retain"], p["delegate"], self.session, self.log, self.loop_llm,
                                self.map_llm(), self.config, self.delegation, sessions, st.reservation,
                                self.sub_agent)  # type: ignore[arg-type]
            work = spec.run_item
            about = f"agent_map of {len(items)} sub-session(s): {p['task'][:200]}"
            backend = _describe(self.loop_llm)
        meta = {"phase": "start", "key": key, "items": st.n, "detach": st.detach, "backend": backend,
                "depth": self.delegation.depth, **{k: v for k, v in p.items()}}
        if st.op == "llm_map" and spec.structured is not None:
            meta["structured"] = spec.structured.to_dict()
        job_id = self.log.append(session=self.session, role="scroll", kind=st.op, text=about, meta=meta,
                                 origin=Origin.AGENT)
        res = st.reservation
        job = Job(job_id, st.op, items, concurrency=p["concurrency"], key=key, cell_bound=not st.detach,
                  payloads=self.log.payloads, on_finish=lambda j, state: self._finished(j, state, res))
        self.jobs[job_id] = job
        return job.start(work, name=st.op)

    def _structured(self, schema: dict | None) -> Support | None:
        """Whether this map's calls ask for the schema: the backend's probe (once per backend), or
        None when there is no schema; off by config is a Support that says so."""
        if schema is None:
            return None
        if not self.limits.map_structured:
            return Support(False, "off by config (map_structured: false)", _describe(self.map_llm()).get(
                "backend", "?"))
        return probe(self.map_llm())

    def _finished(self, job: Job, state: JobState, res: Reservation | None) -> None:
        """The job's end record, logged before the job reports itself ended (`state` is what it ends as)."""
        calls, tokens = (res.spent_calls, res.spent_tokens) if res is not None else (0, 0)
        if res is not None:
            res.release()
        s = {**job.status(), "state": str(state)}
        meta = {"phase": "end", "key": job.key, "calls": calls, "tokens": tokens,
                **{k: s[k] for k in ("job", "state", "handle", "total", "ok", "failed", "error", "seconds",
                                     "max_in_flight")}}
        text = (f"{job.op} job {job.id} {s['state']}: {s['ok']} ok, {s['failed']} failed of {s['total']}; "
                f"results: {s['handle']}")
        try:
            self.log.append(session=self.session, role="scroll", kind=job.op, text=text, meta=meta,
                            origin=Origin.AGENT)
        except Exception:  # noqa: BLE001 - the log may be closed when a session ends mid-job
            pass

    def _replayed(self, op: str, key: str) -> Job:
        for job in self.jobs.values():
            if job.key == key and job.op == op:
                return job
        for ev in self.log.events(session=self.session, kind=op):
            m = ev.meta or {}
            if m.get("phase") == "end" and m.get("key") == key and m.get("handle"):
                job = Job.restored(m["job"], op, m["total"], key, m["handle"], m["ok"], m["failed"],
                                   m["state"], self.log.payloads)
                self.jobs[job.id] = job
                return job
        raise CapabilityError(f"{op} is not run again when the kernel replays a cell (no finished run of "
                              "the same request is logged); run the cell again to start it")

    # ---- jobs -----------------------------------------------------------------------------
    def _job(self, job: Any) -> Job:
        j = self.jobs.get(job) if isinstance(job, int) and not isinstance(job, bool) else None
        if j is None:
            raise CapabilityError(f"no job {job!r} in this session")
        return j

    def job_wait(self, job, timeout=0.0) -> dict:
        j = self._job(job)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise CapabilityError("timeout must be a number >= 0")
        t = min(float(timeout), self.limits.wait_slice)
        if self.deadline is not None:
            t = min(t, max(0.0, self.deadline - time.monotonic()))
        j.wait(t)
        return j.status()

    def job_results(self, job, offset=0) -> dict:
        j = self._job(job)
        if not j.finished.is_set():
            s = j.status()
            raise CapabilityError(f"job {j.id} is still running ({s['done']}/{s['total']} items done): "
                                  "wait for it first")
        if j.handle is None:
            raise CapabilityError(f"job {j.id} has no results payload: {j.error}")
        offset = _int(offset, "offset", 0)
        total = self.log.payloads.size(j.handle)
        data = self.log.payloads.read(j.handle, offset, self.limits.results_page_bytes)
        cut = data.rfind(b"\n") + 1
        if cut == 0 and data:  # one line longer than a page: send it whole
            rest = self.log.payloads.read(j.handle, offset)
            cut = rest.find(b"\n") + 1 or len(rest)
            data = rest
        lines = data[:cut].decode("utf-8").splitlines()
        nxt = offset + cut
        return {"results": [json.loads(x) for x in lines if x], "next": nxt if nxt < total else None}

    def job_cancel(self, job) -> dict:
        j = self._job(job)
        j.cancel()
        return j.status()

    def jobs_status(self) -> list[dict]:
        return [j.status() for j in self.jobs.values()]


def _describe(llm: Any) -> dict:
    try:
        return llm.describe() if hasattr(llm, "describe") else {"backend": type(llm).__name__}
    except Exception:  # noqa: BLE001
        return {"backend": type(llm).__name__}
