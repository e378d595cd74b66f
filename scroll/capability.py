"""`ms`, the one capability: everything model code (or any surface) may ask of the log.

One implementation, used by the kernel's host-side service (scroll.kernel.service), the
notebook adapter, the CLI and every later surface. What is decided here, once:

* **Origin scope.** Every event carries who wrote it (scroll.origin.Origin).
  `search` and `recent` return `history` events unless the caller names another origin
  (`origin="agent"`, `"system"` or `"*"`): the agent's own replies, cells and notes would
  otherwise echo every query back.
* **Session scope.** A capability sees the sessions its owner grants (`sessions=`,
  `None` = the whole log) plus its own session (`own_session`, where the loop writes).
  `expand` of an event outside the scope answers as if the seq did not exist.
* **Budgets per resource.** Query length and distinct query terms, filter string lengths,
  k, reply bytes (a range or payload larger than one reply comes back in pages with a
  `next` cursor), and host time: `begin_cell(deadline)` sets when this cell's `ms` calls
  must stop being answered, so a cell can never hold the host past its own timeout.
* **Label hygiene.** Nothing here reads the label sidecar (scroll.labels); events carry
  no labels (the importers and generators keep them out), so no answer can leak through
  `ms`.
* **Model calls.** `llm_map` / `agent_map` and their jobs are answered by the session's
  operator engine (scroll.operators), with its own budget of model calls and tokens per
  root task, separate from host time; a surface without one refuses them.
* **Files.** `attach_begin` / `attach_chunk` / `attach_end` (the kernel's `ms.attach`)
  are answered by the session's FileAttacher (scroll.files): the bytes arrive from the
  kernel in chunks, the host never opens a path a cell names; one `file` event per file.
  A capability without an own session (a read-only surface) refuses them.
* **Control signals.** `final(answer)` is a call the capability records
  (`end_cell()` hands it to the loop), never text printed to stdout that history could
  imitate.

Every method returns JSON-able values (dicts with `seq`), so the same results cross the
kernel socket, MCP or HTTP unchanged.
"""
from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from .origin import Origin
from .records import iso_time_ok
from .search.tokens import TOKEN_PATTERN

_WORDS = re.compile(TOKEN_PATTERN).findall
MAX_K = 1000  # the one k limit: CLI, kernel, MCP


@dataclass(frozen=True)
class Budgets:
    max_k: int = MAX_K
    max_query_chars: int = 16_384
    max_query_terms: int = 256        # distinct terms after tokenization
    max_filter_chars: int = 256       # session / kind / role / since / until
    reply_bytes: int = 4 << 20        # one reply (search, expand page, payload chunk)
    inline_text_bytes: int = 64 << 10  # an event text above this is fetched lazily, in chunks
    max_answer_chars: int = 100_000   # final(answer)
    max_recent: int = 10_000


ALL_SESSIONS = "*"  # a run's scope that is the whole log (Agent.run(sessions=ALL_SESSIONS))


class CapabilityError(ValueError):
    """A request the capability refuses (bad argument, over budget, out of scope)."""


class BudgetExceeded(CapabilityError):
    pass


def _int(v: Any, name: str, lo: int = 0, hi: int | None = None) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise CapabilityError(f"{name} must be an int")
    if v < lo or (hi is not None and v > hi):
        raise CapabilityError(f"{name} must be in [{lo}, {hi if hi is not None else 'inf'}], got {v}")
    return v


def check_time_bound(value: str, name: str) -> str:
    """since/until: an ISO date or date-time prefix ("2023", "2023-05", "2023-05-17T10:00:00Z")."""
    if iso_time_ok(value, prefix=True):
        return value
    raise CapabilityError(f"{name} must be an ISO date or time like 2023-05-17 or 2023-05-17T10:00:00, "
                          f"got {value[:40]!r}")


def parse_origin(origin: Any) -> frozenset[str] | None:
    """'history' | 'agent' | 'system' | '*' (or a list of them) -> the set to filter on (None: all)."""
    if origin == "*":
        return None
    values = [origin] if isinstance(origin, (str, Origin)) else origin
    if not isinstance(values, (list, tuple)) or not values:
        raise CapabilityError("origin must be 'history', 'agent', 'system', '*' or a list of them")
    try:
        return frozenset(Origin.parse(v).value for v in values)
    except ValueError as e:
        raise CapabilityError(str(e)) from None


class Capability:
    """The `ms` object's host side for one owner (a kernel session, a CLI call, a surface)."""

    METHODS = ("ping", "search", "expand", "payload", "recent", "sessions", "headlines", "final")
    # wire name -> the operator engine's method (scroll.operators.engine)
    OPERATOR_METHODS = {"llm_map": "llm_map", "agent_map": "agent_map", "map_items": "map_items",
                        "map_start": "map_start", "job_wait": "job_wait", "job_results": "job_results",
                        "job_cancel": "job_cancel", "jobs": "jobs_status"}
    FILE_METHODS = ("attach_begin", "attach_chunk", "attach_end")  # scroll.files.FileAttacher

    def __init__(self, log: Any, *, sessions: Iterable[str] | None = None, own_session: str | None = None,
                 headlines: Callable[[], list] | None = None, budgets: Budgets | None = None,
                 operators: Any = None, files: Any = None):
        self.log = log
        self.operators = operators  # scroll.operators.OperatorEngine, or None: no model calls
        self.files = files  # scroll.files.FileAttacher of own_session, or None: no attach
        self.own_session = own_session
        self.sessions_scope: frozenset[str] | None = None
        self.set_scope(sessions)
        self.headlines_fn = headlines
        self.budgets = budgets or Budgets()
        self._deadline: float | None = None
        self._replay = False
        self._final: str | None = None
        self.host_seconds = 0.0  # time spent answering since begin_cell
        self.epoch = 0
        self.calls = 0

    def set_scope(self, sessions: Iterable[str] | None) -> None:
        """Grant these sessions (None: the whole log); the own session stays in scope."""
        granted = None if sessions is None else frozenset(sessions)
        if granted is not None and self.own_session is not None:
            granted = granted | {self.own_session}
        self.sessions_scope = granted

    # ---- cell lifecycle (the kernel calls these around each cell) -----------------------
    def begin_cell(self, deadline: float | None, *, replay: bool = False) -> None:
        """`ms` calls are answered until `deadline` (time.monotonic()); finals during a replay
        are ignored."""
        self._deadline, self._replay, self._final = deadline, replay, None
        self.host_seconds, self.calls = 0.0, 0
        self.epoch += 1  # connections from earlier cells are dropped by the socket service
        if self.operators is not None:
            self.operators.begin_cell(deadline, replay)
        if self.files is not None:
            self.files.begin_cell(deadline, replay)

    def end_cell(self) -> str | None:
        """The answer `final()` submitted during the cell, if any; closes the cell's budget."""
        answer, self._final, self._deadline = self._final, None, None
        if self.operators is not None:
            self.operators.end_cell()  # blocking maps still running die with their cell
        if self.files is not None:
            self.files.end_cell()  # an attach still open dies with its cell: no payload, no event
        return answer

    def close(self) -> None:
        """The session ends: its jobs are cancelled (they die with their kernel session)."""
        if self.operators is not None:
            self.operators.close()
        if self.files is not None:
            self.files.close()

    def send_budget(self) -> float | None:
        """Seconds a reply may wait for a client that is slow to read it (None: no cell running)."""
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    # ---- the wire entry point ------------------------------------------------------------
    def handle(self, req: Any) -> dict:
        """A JSON request {"id", "method", "params"} -> a reply {"id", "ok", "result"|"error"}.
        No exception escapes: every failure becomes an error reply."""
        rid = req.get("id") if isinstance(req, dict) else None
        t0 = time.monotonic()
        try:
            if self._deadline is not None and t0 >= self._deadline:
                raise BudgetExceeded("this cell's time for ms calls is spent (the cell's timeout); "
                                     "the call was not run")
            if not isinstance(req, dict):
                raise CapabilityError("request must be a JSON object")
            method, params = req.get("method"), req.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                raise CapabilityError("method must be a string and params an object")
            if method in self.OPERATOR_METHODS:
                if self.operators is None:
                    raise CapabilityError(f"{method}: not available here (no model backend is attached to "
                                          "this surface)")
                result = getattr(self.operators, self.OPERATOR_METHODS[method])(**params)
            elif method in self.FILE_METHODS:
                if self.files is None:
                    raise CapabilityError(f"{method}: not available here (this surface has no session to attach "
                                          "files to)")
                result = getattr(self.files, method)(**params)
            elif method not in self.METHODS:
                raise CapabilityError(f"unknown method {method!r}")
            else:
                result = getattr(self, method)(**params)
            return {"id": rid, "ok": True, "result": result}
        except TypeError as e:
            return {"id": rid, "ok": False, "error": f"bad params: {e}"}
        except KeyError as e:
            return {"id": rid, "ok": False, "error": f"KeyError: {e.args[0] if e.args else e}"}
        except Exception as e:  # noqa: BLE001 - every failure becomes an error reply
            return {"id": rid, "ok": False, "error": f"{type(e).__name__}: {e}"}
        finally:
            self.host_seconds += time.monotonic() - t0
            self.calls += 1

    # ---- validation helpers ----------------------------------------------------------------
    def _filter_str(self, v: Any, name: str) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str):
            raise CapabilityError(f"{name} must be a string or None")
        if len(v) > self.budgets.max_filter_chars:
            raise CapabilityError(f"{name} is {len(v)} characters; the limit is {self.budgets.max_filter_chars}")
        return v

    def _scope_sessions(self, session: Any) -> frozenset[str] | None:
        session = self._filter_str(session, "session")
        if session is None:
            return self.sessions_scope
        if self.sessions_scope is not None and session not in self.sessions_scope:
            return frozenset()  # not granted: nothing, as if it did not exist
        return frozenset({session})

    def _in_scope(self, ev: Any) -> bool:
        return self.sessions_scope is None or ev.session in self.sessions_scope

    def _check_query(self, query: Any) -> str:
        if not isinstance(query, str):
            raise CapabilityError("query must be a string")
        if len(query) > self.budgets.max_query_chars:
            raise CapabilityError(f"query is {len(query)} characters; the limit is {self.budgets.max_query_chars}")
        n = len(set(_WORDS(query.lower())))  # distinct words: an upper bound on distinct terms
        if n > self.budgets.max_query_terms:
            raise CapabilityError(f"query has {n} distinct terms; the limit is {self.budgets.max_query_terms}")
        return query

    def _event(self, ev: Any, score: float | None = None) -> dict:
        d = {"seq": ev.seq, "session": ev.session, "time": ev.time, "kind": ev.kind, "role": ev.role,
             "origin": str(ev.origin), "meta": ev.meta, "payload": ev.payload, "tokens": ev.tokens}
        if score is not None:
            d["score"] = score
        size = self._text_bytes(ev)
        if size > self.budgets.inline_text_bytes and ev.payload:
            d["text"], d["text_len"] = None, size  # the client pages it in through payload()
        else:
            d["text"] = ev.text
        return d

    def _text_bytes(self, ev: Any) -> int:
        if ev.payload:
            try:
                return self.log.payloads.size(ev.payload)
            except Exception:  # noqa: BLE001
                return 0
        return len(ev.text.encode("utf-8", "surrogatepass"))

    @staticmethod
    def _cost(d: dict) -> int:
        """Bytes an event adds to a reply: its inline text plus ~256 for the other fields."""
        return (len(d["text"].encode("utf-8", "surrogatepass")) if d.get("text") else 0) + 256

    # ---- methods -------------------------------------------------------------------------
    def ping(self) -> str:
        return "pong"

    def search(self, query, k=10, session=None, kind=None, role=None, since=None, until=None,
               seq_range=None, origin="history") -> list[dict]:
        query = self._check_query(query)
        k = _int(k, "k", 1, self.budgets.max_k)
        kind, role = self._filter_str(kind, "kind"), self._filter_str(role, "role")
        since = self._filter_str(since, "since")
        until = self._filter_str(until, "until")
        since = check_time_bound(since, "since") if since is not None else None
        until = check_time_bound(until, "until") if until is not None else None
        if seq_range is not None:
            if not (isinstance(seq_range, (list, tuple)) and len(seq_range) == 2):
                raise CapabilityError("seq_range must be [lo, hi]")
            seq_range = (_int(seq_range[0], "lo", 0, 2**63 - 1), _int(seq_range[1], "hi", 0, 2**63 - 1))
        sessions = self._scope_sessions(session)
        if sessions is not None and not sessions:
            return []
        hits = self.log.search(query, k=k, sessions=sessions, origins=parse_origin(origin), kind=kind,
                               role=role, since=since, until=until, seq_range=seq_range)
        out, used = [], 0
        for h in hits:
            d = self._event(h, score=h.score)
            used += self._cost(d)
            if used > self.budgets.reply_bytes and out:
                break  # the reply's byte budget: the best hits that fit
            out.append(d)
        return out

    def expand(self, lo, hi=None) -> dict:
        """`expand(seq)` -> {"event": ...}; `expand(lo, hi)` -> {"events": [...], "next": seq|None}:
        events lo..hi in scope, as many as fit one reply; `next` is where the next page starts."""
        lo = _int(lo, "lo", 0, 2**63 - 1)
        if hi is None:
            try:
                ev = self.log.expand(lo)
            except KeyError:
                ev = None
            if ev is None or not self._in_scope(ev):
                raise KeyError(f"no event with seq {lo}")
            return {"event": self._event(ev)}
        hi = _int(hi, "hi", lo, 2**63 - 1)
        out, used, nxt = [], 0, None
        for ev in self.log.iter_range(lo, hi, sessions=self.sessions_scope):
            d = self._event(ev)
            cost = self._cost(d)
            if out and used + cost > self.budgets.reply_bytes:
                nxt = ev.seq
                break
            out.append(d)
            used += cost
        return {"events": out, "next": nxt}

    def payload(self, handle, offset=0, length=None) -> dict:
        """A chunk of a payload's bytes: {"b64", "offset", "total", "next"}; `next` is None at the end."""
        if not isinstance(handle, str) or len(handle) > 200:
            raise CapabilityError("handle must be a payload handle string")
        offset = _int(offset, "offset", 0, 2**63 - 1)
        cap = self.budgets.reply_bytes * 3 // 4  # base64 grows it by 4/3
        length = cap if length is None else _int(length, "length", 1, cap)
        total = self.log.payloads.size(handle)
        data = self.log.payloads.read(handle, offset, length)
        end = offset + len(data)
        return {"b64": base64.b64encode(data).decode("ascii"), "offset": offset, "total": total,
                "next": end if end < total else None}

    def recent(self, n=10, session=None, origin="history") -> list[dict]:
        n = _int(n, "n", 0, self.budgets.max_recent)
        sessions = self._scope_sessions(session)
        if sessions is not None and not sessions:
            return []
        evs = self.log.recent(n, sessions=sessions, origins=parse_origin(origin))
        out, used = [], 0
        for ev in reversed(evs):  # newest first under the budget, returned in seq order
            d = self._event(ev)
            used += self._cost(d)
            if used > self.budgets.reply_bytes and out:
                break
            out.append(d)
        return out[::-1]

    def sessions(self) -> list[dict]:
        return [s for s in self.log.sessions() if self.sessions_scope is None or s["session"] in self.sessions_scope]

    def headlines(self) -> list:
        return list(self.headlines_fn()) if self.headlines_fn else []

    def final(self, answer) -> str:
        if not isinstance(answer, str):
            raise CapabilityError("final(answer): answer must be a string")
        if len(answer) > self.budgets.max_answer_chars:
            raise CapabilityError(f"final(answer): answer is {len(answer)} characters; the limit is "
                                  f"{self.budgets.max_answer_chars}")
        if not self._replay:
            self._final = answer
        return "recorded"
