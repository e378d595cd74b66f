"""LCM's summary DAG over a granted history: a derived view of the immutable event log.

    dag = SummaryDag(log, ["s001", "s002"], config=LcmConfig(context_tokens=6000, window=8192))
    report = dag.build(llm)           # stream the history in; compact past the soft threshold
    dag.context()                     # the active context: summary nodes + raw events, oldest first
    dag.events_of("sum_...")          # the exact events behind a node (lossless)

The history (history-origin events of the granted sessions, in seq order) is streamed into
an active context one event at a time, the way the conversation grew. After each event:

* at or below the soft threshold (`soft_ratio * context_tokens`) nothing is summarized:
  a short history costs no model call;
* past it, a routine sweep runs toward `target_ratio * context_tokens` in at most
  `max_passes` summaries, making only full nodes (lossless-claw's rule): leaf passes (the
  oldest raw events outside the `fresh_tail` newest items, a chunk of `leaf_chunk_tokens`
  (within one session if `leaf_within_session`) or of `leaf_min_events` events, becomes a
  leaf node), then condensed passes (the oldest run of `fanout` adjacent same-depth nodes
  becomes one node a level up). It stops early when no full node can be made: the context
  then sits between the target and the hard threshold until more turns arrive;
* past the hard threshold (`context_tokens`) the fresh tail is no longer protected, partial
  chunks, shorter runs (>= `fanout_hard`) and the oldest adjacent pair of any depths may be
  summarized, and a node that alone is too large is re-cut (a `cap` node, level `truncate`)
  so that the context fits again. Only when nothing can shrink (e.g. one tiny raw event bigger than
  the whole budget) does the context stay over it; callers must still check their prompt.

LCM runs compaction asynchronously between turns and blocks at the hard threshold; here
both happen inline, which gives the same node decisions. Every summary is made by the
three-level escalation (`scroll.lcm.summarize`), bounded so that the node as rendered in
the context is smaller than what it replaces by at least `min_gain` tokens. Nodes are
content-addressed (`sum_` + a hash of the summarizer profile and the exact seqs or child
ids) and stored in `DagStore` (`<log>.lcm.db`); the context after the build is stored as a
frontier. A rerun resumes from the latest frontier and reuses every stored node, so it
calls the model only for events appended since. A failing backend (LLMError) stops the
build and is raised: nodes made before it stay stored, no frontier is saved, and the rerun
picks them up. Nothing is ever written to the log.
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from .config import LcmConfig, profile_of
from .history import event_date, events_digest, format_event, granted_sessions, history_events
from .store import DagStore, LcmError, Node, node_header, node_id_for, render_node
from .summarize import Summarizer, Usage


_BUILD_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _build_lock(path) -> threading.Lock:
    """One lock per store file: two questions over one history build its DAG once (the second
    waits, then resumes from the first's frontier without a model call)."""
    with _LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(str(path), threading.Lock())


@dataclass
class Item:
    """One entry of the active context: a raw event (`ref` = seq) or a node (`ref` = node id)."""

    kind: str            # "event" | "node"
    ref: Any
    tokens: int          # tokens of its rendering
    session: str = ""    # events: the session (for `leaf_within_session`)
    depth: int = -1      # nodes: the node's depth

    def to_json(self) -> list:
        return [self.kind, self.ref, self.tokens, self.session, self.depth]


@dataclass
class BuildReport:
    events: int = 0                      # events streamed in by this build
    resumed_from: int = 0                # upto_seq of the frontier the build started from (0: scratch)
    created: int = 0                     # nodes summarized now
    reused: int = 0                      # nodes found in the store
    levels: dict = field(default_factory=dict)   # escalation level -> nodes created
    compactions: int = 0
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    items: int = 0
    over_budget: bool = False            # the context could not be brought under context_tokens

    def to_dict(self) -> dict:
        return asdict(self)


class SummaryDag:
    """The DAG and active context of one granted history (`sessions`; None: all history)."""

    def __init__(self, log: Any, sessions: Iterable[str] | None, *, config: LcmConfig | None = None,
                 store: DagStore | None = None, profile: str | None = None):
        self.log, self.config = log, config or LcmConfig()
        self.sessions = granted_sessions(log, sessions)
        self._own_store = store is None
        self.store = store or DagStore.for_log(log)
        if self.store.log_id != log.log_id:
            raise LcmError(f"store {self.store.path} belongs to log {self.store.log_id}, not {log.log_id}")
        self.profile = profile
        self.items: list[Item] = []
        self.upto = 0
        self._events: dict[int, Any] = {}
        self._count = None
        self._reach: tuple[tuple, dict[str, Node]] | None = None

    def close(self) -> None:
        if self._own_store:
            self.store.close()

    def __enter__(self) -> "SummaryDag":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def total(self) -> int:
        return sum(it.tokens for it in self.items)

    def key(self, profile: str) -> str:
        raw = json.dumps([sorted(self.sessions), self.config.fingerprint(), profile], ensure_ascii=False)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    # ---------------------------------------------------------------- build
    def build(self, llm: Any) -> BuildReport:
        """Stream the history into the context (resuming from the stored frontier), compacting
        as LCM does; store the new frontier. Model calls only for nodes not stored yet."""
        with _build_lock(self.store.path.resolve()):
            return self._build(llm)

    def _build(self, llm: Any) -> BuildReport:
        cfg, report = self.config, BuildReport()
        self._count = llm.count_tokens
        profile = self.profile or profile_of(llm, cfg)
        key, upto = self.key(profile), self.log.max_seq()
        summarizer = Summarizer(llm, window=cfg.window, truncate_tokens=cfg.truncate_tokens,
                                temperature=cfg.temperature)
        report.resumed_from = self._restore(key, upto)
        for ev in history_events(self.log, self.sessions, after=self.upto, upto=upto):
            self._events[ev.seq] = ev
            self.items.append(Item("event", ev.seq, self._tokens(format_event(ev)), session=ev.session))
            report.events += 1
            if self.total > cfg.soft_tokens:
                self._compact(summarizer, profile, report)
        self.upto = upto
        self.store.save_frontier(key, upto, [it.to_json() for it in self.items], self.total)
        report.context_tokens, report.items = self.total, len(self.items)
        report.over_budget = self.total > cfg.context_tokens
        return report

    def load(self, llm: Any) -> bool:
        """Restore the latest stored frontier without streaming anything; False if none."""
        self._count = llm.count_tokens
        return self._restore(self.key(self.profile or profile_of(llm, self.config)), self.log.max_seq()) > 0

    def _restore(self, key: str, upto: int) -> int:
        self.items, self.upto, self._events = [], 0, {}
        saved = self.store.load_frontier(key, upto)
        if saved is None:
            return 0
        items = [Item(*row) for row in saved[1]]
        if any(it.kind == "node" and self.store.get(it.ref) is None for it in items):
            return 0  # a frontier whose nodes are gone (another store file?): rebuild from scratch
        self.items, self.upto = items, saved[0]
        return self.upto

    def _tokens(self, text: str) -> int:
        if self._count is None:
            raise RuntimeError("build(llm) or load(llm) first: the DAG counts with the model's counter")
        return self._count(text)

    def _event(self, seq: int) -> Any:
        ev = self._events.get(seq)
        if ev is None:
            ev = self._events[seq] = self.log.expand(seq)
        return ev

    # ----------------------------------------------------------- compaction
    def _compact(self, s: Summarizer, profile: str, report: BuildReport) -> None:
        """Summarize down to the target: full leaves, then full same-depth runs; under pressure
        (past the hard threshold) also partial leaves, the fresh tail and any adjacent pair.
        A routine sweep stops after `max_passes` summaries, or when no full node can be made."""
        cfg = self.config
        report.compactions += 1
        passes = 0
        while self.total > cfg.target_tokens:
            before, forced = self.total, self.total > cfg.context_tokens
            if not forced and passes >= cfg.max_passes:
                return
            tail = 0 if forced else cfg.fresh_tail
            done = (self._leaf_step(s, profile, report, tail, full_only=not forced)
                    or self._condense_step(s, profile, report, forced=forced)
                    or (forced and self._cap_step(s, profile, report)))
            if not done or self.total >= before:
                return
            passes += 1

    def _leaf_step(self, s: Summarizer, profile: str, report: BuildReport, tail: int, *, full_only: bool) -> bool:
        """Summarize the oldest compactable chunk of raw events outside the newest `tail` items;
        `full_only`: only a chunk that is full (the next event would not fit) or holds
        `leaf_min_events` events (a routine sweep never summarizes a few stray turns)."""
        cfg = self.config
        cap = min(cfg.leaf_chunk_tokens, cfg.window - cfg.leaf_target - 256)
        end, i = len(self.items) - tail, 0
        while i < end:
            if self.items[i].kind != "event":
                i += 1
                continue
            j, size = i, 0
            while (j < end and self.items[j].kind == "event"
                   and (not cfg.leaf_within_session or self.items[j].session == self.items[i].session)
                   and (j == i or size + self.items[j].tokens <= cap)):
                size += self.items[j].tokens
                j += 1
            full = (j - i >= cfg.leaf_min_events or (j < len(self.items) and self.items[j].kind == "event"
                                                      and size + self.items[j].tokens > cap))
            if (full or not full_only) and self._replace(i, j, "leaf", s, profile, report):
                return True
            i = j
        return False

    def _condense_step(self, s: Summarizer, profile: str, report: BuildReport, *, forced: bool) -> bool:
        """Condense the oldest run of `fanout` adjacent same-depth nodes; under pressure also
        shorter runs (>= fanout_hard) and, last, the oldest adjacent pair of any depths."""
        cfg = self.config
        room = cfg.window - cfg.condensed_target - 256
        least = cfg.fanout_hard if forced else cfg.fanout
        runs: list[tuple[int, int]] = []
        i = 0
        while i < len(self.items):
            if self.items[i].kind != "node":
                i += 1
                continue
            j, size = i, 0
            while (j < len(self.items) and self.items[j].kind == "node" and j - i < cfg.fanout
                   and self.items[j].depth == self.items[i].depth and (j - i < 2 or size + self.items[j].tokens <= room)):
                size += self.items[j].tokens
                j += 1
            if j - i >= least:
                runs.append((i, j))
            i = max(j, i + 1)
        pairs = [] if not forced else [(i, i + 2) for i in range(len(self.items) - 1)
                                       if self.items[i].kind == "node" and self.items[i + 1].kind == "node"]
        return any(self._replace(a, b, "condensed", s, profile, report) for a, b in runs + pairs)

    def _cap_step(self, s: Summarizer, profile: str, report: BuildReport) -> bool:
        """Over the hard threshold with nothing left to merge: re-cut the largest node to fit."""
        nodes = [i for i, it in enumerate(self.items) if it.kind == "node"]
        if not nodes:
            return False
        i = max(nodes, key=lambda k: self.items[k].tokens)
        old = self.store.get(self.items[i].ref)
        variant = f"cap{self.config.context_tokens}"
        node_id = node_id_for(profile, old.kind, old.seqs or old.children, variant)
        node = self.store.get(node_id)
        if node is None:
            header = node_header(node_id, old.kind, old.depth, old.lo, old.hi, old.sessions,
                                 old.first_date, old.last_date)
            room = self.config.context_tokens - (self.total - self.items[i].tokens)
            limit = min(room - self._tokens(header) - self.config.min_gain, old.tokens - 1)
            if limit < 0:
                return False
            text = s.truncate(old.text, limit)
            node = self.store.put(Node(node_id, old.kind, old.depth, old.lo, old.hi, old.seqs, old.children, text,
                                       self._tokens(text), "truncate", self.items[i].tokens, old.sessions,
                                       old.first_date, old.last_date, old.digest, profile, {"calls": 0}))
            report.created += 1
            report.levels["truncate"] = report.levels.get("truncate", 0) + 1
        else:
            report.reused += 1
        new = Item("node", node.node_id, self._tokens(render_node(node)), depth=node.depth)
        if new.tokens >= self.items[i].tokens:
            return False
        self.items[i] = new
        return True

    def _replace(self, i: int, j: int, kind: str, s: Summarizer, profile: str, report: BuildReport) -> bool:
        """Summarize items[i:j] into one node and put it in their place; False if not worth it."""
        sources = self.items[i:j]
        input_tokens = sum(it.tokens for it in sources)
        if kind == "leaf":
            events = [self._event(it.ref) for it in sources]
            seqs, children, depth = tuple(e.seq for e in events), (), 0
            sessions = tuple(dict.fromkeys(e.session for e in events))
            lo, hi, first, last = seqs[0], seqs[-1], event_date(events[0]), event_date(events[-1])
            digest, ident, target = events_digest(events), seqs, self.config.leaf_target
        else:
            kids = [self.store.get(it.ref) for it in sources]
            seqs, children, depth = (), tuple(n.node_id for n in kids), 1 + max(n.depth for n in kids)
            sessions = tuple(dict.fromkeys(x for n in kids for x in n.sessions))
            lo, hi, first, last = kids[0].lo, kids[-1].hi, kids[0].first_date, kids[-1].last_date
            digest, ident, target = "", children, self.config.condensed_target
        node_id = node_id_for(profile, kind, ident)
        node = self.store.get(node_id)
        if node is not None:
            report.reused += 1
        else:
            header = node_header(node_id, kind, depth, lo, hi, sessions, first, last)
            limit = input_tokens - self._tokens(header) - self.config.min_gain
            if limit < 1:
                return False
            text_in = ("\n".join(format_event(e) for e in events) if kind == "leaf"
                       else "\n\n".join(render_node(n) for n in kids))
            summary = s.summarize(text_in, target=target, limit=limit, kind=kind)
            if summary is None:
                return False
            report.usage.add(summary.usage)
            node = self.store.put(Node(node_id, kind, depth, lo, hi, seqs, children, summary.text, summary.tokens,
                                       summary.level, input_tokens, sessions, first, last, digest, profile,
                                       {**summary.usage.to_dict(), "rejected": summary.attempts}))
            report.created += 1
            report.levels[summary.level] = report.levels.get(summary.level, 0) + 1
        new = Item("node", node.node_id, self._tokens(render_node(node)), depth=node.depth)
        if new.tokens >= input_tokens:
            return False
        self.items[i:j] = [new]
        for it in sources:
            if it.kind == "event":
                self._events.pop(it.ref, None)
        return True

    # ------------------------------------------------------------ reading
    def context(self) -> list[tuple[Item, str]]:
        """The active context, oldest first: (item, its rendering)."""
        out = []
        for it in self.items:
            text = format_event(self._event(it.ref)) if it.kind == "event" else render_node(self.node(it.ref))
            out.append((it, text))
        return out

    def node(self, node_id: str) -> Node:
        """A node of THIS history's DAG (reachable from its context); KeyError otherwise."""
        node = self.reachable().get(node_id)
        if node is None:
            raise KeyError(f"no summary node {node_id!r} in this history")
        return node

    def reachable(self) -> dict[str, Node]:
        """Every node reachable from the active context, by id (parents before children)."""
        roots = tuple(it.ref for it in self.items if it.kind == "node")
        if self._reach is not None and self._reach[0] == roots:
            return self._reach[1]
        out: dict[str, Node] = {}
        stack = [it.ref for it in reversed(self.items) if it.kind == "node"]
        while stack:
            nid = stack.pop()
            if nid in out:
                continue
            node = self.store.get(nid)
            if node is None:
                raise LcmError(f"node {nid} is referenced but not stored in {self.store.path}")
            out[nid] = node
            stack.extend(reversed(node.children))
        self._reach = (roots, out)
        return out

    def seqs_of(self, node_id: str) -> list[int]:
        """The seqs a node covers, in order (a condensed node: its children's, concatenated)."""
        node = self.node(node_id)
        return list(node.seqs) if node.kind == "leaf" else [s for c in node.children for s in self.seqs_of(c)]

    def events_of(self, node_id: str) -> list[Any]:
        """The exact events behind a node, in seq order (read from the log)."""
        seqs = self.seqs_of(node_id)
        if not seqs:
            return []
        want = set(seqs)
        got = {e.seq: e for e in self.log.iter_range(seqs[0], seqs[-1]) if e.seq in want}
        missing = want - set(got)
        if missing:
            raise LcmError(f"node {node_id} points at seqs missing from the log: {sorted(missing)[:5]}")
        return [got[s] for s in seqs]

    def verify(self) -> dict:
        """Check the pointers: leaf digests match the log, children are adjacent, and the
        context covers exactly the scope's history up to `upto`, in order. {"ok", "problems"}."""
        problems: list[str] = []
        nodes = self.reachable()
        for nid, node in nodes.items():
            if node.kind == "leaf":
                events = self.events_of(nid)
                if events_digest(events) != node.digest:
                    problems.append(f"{nid}: its events differ from the ones it summarized")
            else:
                kids = [nodes[c] for c in node.children]
                if (kids[0].lo, kids[-1].hi) != (node.lo, node.hi):
                    problems.append(f"{nid}: lo/hi do not match its children")
        covered = [s for it in self.items for s in ([it.ref] if it.kind == "event" else self.seqs_of(it.ref))]
        expected = [e.seq for e in history_events(self.log, self.sessions, upto=self.upto)]
        if covered != expected:
            problems.append(f"the context covers {len(covered)} seqs, the history has {len(expected)} "
                            "(or not in the same order)")
        return {"ok": not problems, "problems": problems, "nodes": len(nodes), "events": len(expected)}


__all__ = ["LcmConfig", "SummaryDag", "BuildReport", "Item", "profile_of", "render_node", "node_header"]
