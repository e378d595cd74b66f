"""A session's logged events grouped the way the agent loop wrote them (scroll.agent).

Per task (kind="task") the loop logs, for every step: the model's reply (kind="message",
role="assistant", `meta`: step, model, prompt/completion tokens, latency, finish reason,
prompt_sha256 and `view` = {tokens, steps: [[lo, hi], ...], headlines, prefix_reuse}),
the cell (kind="code") and its output (kind="output", `meta`: code_seq, error, timed_out,
truncated, handle, chars, notice, final), notes (kind="note"), attached files
(kind="file"), the headlines of the steps evicted after it (kind="headline", `meta`: lo,
hi, task, state, next, files), and at the end the answer (kind="final", `meta`: reason,
steps, answered). Nothing here invents a field: a value the log lacks stays None.

The headline index is rebuilt from the logged leaves exactly as the loop built it
(scroll.headlines merges deterministically, with the task's `tier_cap`), and every
merged entry keeps the entries it replaced as children: a tree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from scroll.config import LoopConfig
from scroll.headlines import FileRef, Headline, HeadlineIndex


@dataclass(frozen=True)
class LoggedEvent:
    """One event as the capability returns it (`text` is None when it is only in its payload)."""

    seq: int
    session: str
    time: str | None
    kind: str
    role: str
    origin: str
    meta: dict
    payload: str | None
    tokens: int | None
    text: str | None
    text_len: int | None = None

    @classmethod
    def from_capability(cls, d: dict) -> "LoggedEvent":
        return cls(seq=d["seq"], session=d["session"], time=d.get("time"), kind=d["kind"], role=d["role"],
                   origin=d.get("origin") or "", meta=d.get("meta") or {}, payload=d.get("payload"),
                   tokens=d.get("tokens"), text=d.get("text"), text_len=d.get("text_len"))

    @property
    def handles(self) -> list[tuple[str, str]]:
        """(label, payload handle) for every payload this event points to."""
        out = []
        if self.payload:
            out.append(("text", self.payload))
        if isinstance(self.meta.get("handle"), str):
            out.append(("full output", self.meta["handle"]))
        f = self.meta.get("file")
        if isinstance(f, dict) and isinstance(f.get("handle"), str) and f["handle"] != self.payload:
            out.append((f"file {f.get('name', '')}".strip(), f["handle"]))
        return out


@dataclass(frozen=True)
class ViewRecord:
    """What the loop logged with a reply about the prompt the model saw (None: not logged)."""

    tokens: int | None
    steps: list[tuple[int, int]]
    headlines: int | None
    prefix_reuse: float | None
    prompt_sha256: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    model: str | None
    backend: str | None
    latency_s: float | None
    finish_reason: str | None

    @classmethod
    def from_reply(cls, ev: LoggedEvent) -> "ViewRecord":
        m = ev.meta
        v = m.get("view") if isinstance(m.get("view"), dict) else {}
        steps = [(int(r[0]), int(r[1])) for r in v.get("steps") or [] if isinstance(r, (list, tuple)) and len(r) == 2]
        return cls(tokens=v.get("tokens"), steps=steps, headlines=v.get("headlines"),
                   prefix_reuse=v.get("prefix_reuse"), prompt_sha256=m.get("prompt_sha256"),
                   prompt_tokens=m.get("prompt_tokens"), completion_tokens=m.get("completion_tokens"),
                   model=m.get("model"), backend=m.get("backend"), latency_s=m.get("latency_s"),
                   finish_reason=m.get("finish_reason"))


@dataclass
class StepView:
    """One step: the reply and what the loop logged after it, up to the next reply."""

    reply: LoggedEvent
    code: LoggedEvent | None = None
    output: LoggedEvent | None = None
    notes: list[LoggedEvent] = field(default_factory=list)
    files: list[LoggedEvent] = field(default_factory=list)
    headlines: list[LoggedEvent] = field(default_factory=list)  # the steps evicted after this one
    other: list[LoggedEvent] = field(default_factory=list)

    @property
    def number(self) -> int | None:
        n = self.reply.meta.get("step")
        return n if isinstance(n, int) else None

    @property
    def view(self) -> ViewRecord:
        return ViewRecord.from_reply(self.reply)

    @property
    def events(self) -> list[LoggedEvent]:
        evs = [self.reply, *([self.code] if self.code else []), *([self.output] if self.output else []),
               *self.notes, *self.files, *self.headlines, *self.other]
        return sorted(evs, key=lambda e: e.seq)

    @property
    def lo(self) -> int:
        return self.reply.seq

    @property
    def hi(self) -> int:
        return max(e.seq for e in self.events)

    @property
    def error(self) -> str | None:
        return self.output.meta.get("error") if self.output else None

    @property
    def evicted(self) -> list[tuple[int, int]]:
        return [(h.meta["lo"], h.meta["hi"]) for h in self.headlines if "lo" in h.meta and "hi" in h.meta]


@dataclass
class HeadlineNode:
    headline: Headline
    children: list["HeadlineNode"] = field(default_factory=list)


@dataclass
class TaskRun:
    """A task and its steps (a session may hold several, each with its own view)."""

    task: LoggedEvent
    steps: list[StepView] = field(default_factory=list)
    notes: list[LoggedEvent] = field(default_factory=list)  # before the first reply
    final: LoggedEvent | None = None

    @property
    def config(self) -> dict:
        c = self.task.meta.get("config")
        return c if isinstance(c, dict) else {}

    @property
    def headline_events(self) -> list[LoggedEvent]:
        return [h for s in self.steps for h in s.headlines]

    def headline_tree(self) -> list[HeadlineNode]:
        cap = self.config.get("tier_cap", LoopConfig.tier_cap)
        return headline_tree(self.headline_events, cap if isinstance(cap, int) and cap >= 2 else LoopConfig.tier_cap)


@dataclass
class SessionTimeline:
    runs: list[TaskRun] = field(default_factory=list)
    loose: list[LoggedEvent] = field(default_factory=list)  # events outside any task (history, imports)


def _headline(ev: LoggedEvent) -> Headline:
    m = ev.meta
    files = tuple(FileRef(int(f["seq"]), str(f["name"])) for f in m.get("files") or []
                  if isinstance(f, dict) and "seq" in f and "name" in f)
    return Headline(int(m["lo"]), int(m["hi"]), str(m.get("task", "")), str(m.get("state", "")),
                    str(m.get("next", "")), files=files)


def _index(leaves: list[Headline], tier_cap: int) -> HeadlineIndex:
    index = HeadlineIndex(tier_cap)
    for h in leaves:
        index.add(h.lo, h.hi, h.task, h.state, h.next, files=h.files)
    return index


def headline_tree(leaves: Iterable[LoggedEvent], tier_cap: int) -> list[HeadlineNode]:
    """The index after these logged leaves, oldest range first; each merged entry's children
    are the entries it replaced (leaves at the bottom). Merges are deterministic, so a tier-t
    entry's children are rebuilt from its tier_cap**t leaves, tier_cap**(t-1) at a time."""
    kept: list[Headline] = []
    for ev in leaves:
        if {"lo", "hi"} <= ev.meta.keys() and (not kept or ev.meta["lo"] > kept[-1].hi):
            kept.append(_headline(ev))  # a damaged, out-of-order record is left out

    def node(h: Headline, below: list[Headline]) -> HeadlineNode:
        if h.tier == 0:
            return HeadlineNode(h)
        size = tier_cap ** (h.tier - 1)
        groups = [below[i:i + size] for i in range(0, len(below), size)]
        return HeadlineNode(h, [node(_index(g, tier_cap).entries()[0], g) for g in groups])

    return [node(h, [x for x in kept if h.lo <= x.lo and x.hi <= h.hi]) for h in _index(kept, tier_cap).entries()]


def _attach(step: StepView, ev: LoggedEvent) -> None:
    if ev.kind == "code" and step.code is None:
        step.code = ev
    elif ev.kind == "output" and step.output is None:
        step.output = ev
    elif ev.kind == "note":
        step.notes.append(ev)
    elif ev.kind == "file":
        step.files.append(ev)
    elif ev.kind == "headline":
        step.headlines.append(ev)
    else:
        step.other.append(ev)


def _ends_step(ev: LoggedEvent) -> bool:
    return ev.kind in ("task", "final") or (ev.kind == "message" and ev.role == "assistant")


def group_session(events: Iterable[LoggedEvent]) -> SessionTimeline:
    """Group a session's events (in seq order) into task runs and steps."""
    out = SessionTimeline()
    run: TaskRun | None = None
    step: StepView | None = None
    for ev in events:
        if ev.kind == "task":
            run, step = TaskRun(task=ev), None
            out.runs.append(run)
        elif run is None or run.final is not None:
            out.loose.append(ev)
        elif ev.kind == "final":
            run.final, step = ev, None
        elif ev.kind == "message" and ev.role == "assistant":
            step = StepView(reply=ev)
            run.steps.append(step)
        elif step is None:
            run.notes.append(ev)
        else:
            _attach(step, ev)
    return out


def step_from(events: Iterable[LoggedEvent]) -> StepView | None:
    """The step whose reply is the first event given (None if it is not a reply); it ends
    before the next reply, task or final."""
    it = iter(events)
    first = next(it, None)
    if first is None or not (first.kind == "message" and first.role == "assistant"):
        return None
    step = StepView(reply=first)
    for ev in it:
        if _ends_step(ev):
            break
        _attach(step, ev)
    return step
