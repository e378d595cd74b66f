"""The headline index: where every range evicted from the view can be found again.

Each evicted range of a session's events gets a headline (task, state, next action).
Headlines live in tiers, like an odometer: new ones go to tier 0; when a tier holds
`tier_cap` entries they merge into ONE coarser entry on the next tier. So

* coverage: every evicted seq is inside exactly one entry (ranges are disjoint and
  ordered; a merged entry spans exactly the union of what it replaced);
* size: entries <= (tier_cap - 1) * tiers + 1 with tiers ~ log_cap(n): O(log n);
* stability: tier 0 only grows at the end until a merge, so the rendered index changes
  by appending, which keeps the prompt's prefix (and the server's KV cache) warm.

Files attached in an evicted range (`ms.attach`, scroll.files) stay named in its entry
(`files`: seq + name), and a merged entry keeps the union of its entries' files (the
newest MAX_FILES), so the model finds a file again after any amount of eviction.

Only leaf headlines are logged (kind="headline"); merges are deterministic, so the index
is rebuilt exactly by adding the logged leaves again in order.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

MAX_FILES = 32    # file references an entry keeps (the newest)
SHOWN_FILES = 6   # ... and renders


@dataclass(frozen=True)
class FileRef:
    """A file stored in the log: the seq of its `file` event (ms.expand(seq)) and its name."""

    seq: int
    name: str

    def render(self) -> str:
        return f"{self.name} (seq {self.seq})"


@dataclass(frozen=True)
class Headline:
    lo: int
    hi: int
    task: str
    state: str
    next: str
    tier: int = 0
    leaves: int = 1  # how many evicted ranges this entry covers
    files: tuple[FileRef, ...] = ()  # files attached in the range

    def render(self) -> str:
        span = f"[{self.lo}..{self.hi}]"
        tier = f" (x{self.leaves})" if self.leaves > 1 else ""
        return f"{span}{tier} task: {self.task} | state: {self.state} | next: {self.next}{render_files(self.files)}"

    def to_dict(self) -> dict:
        return asdict(self)


def render_files(files: tuple[FileRef, ...]) -> str:
    if not files:
        return ""
    shown = ", ".join(f.render() for f in files[-SHOWN_FILES:])
    more = len(files) - SHOWN_FILES
    older = f" (+{more} older: ms.headlines() or ms.search(name, kind='file', origin='agent'))" if more > 0 else ""
    return f" | files: {shown}{older}"


def merge_files(groups: list[tuple[FileRef, ...]]) -> tuple[FileRef, ...]:
    seen: dict[int, FileRef] = {}
    for g in groups:
        for f in g:
            seen[f.seq] = f
    return tuple(seen[s] for s in sorted(seen))[-MAX_FILES:]


def _clip(text: str, n: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def merge(entries: list[Headline], tier: int) -> Headline:
    """One coarser headline for consecutive entries (deterministic, no model call)."""
    tasks: list[str] = []
    for e in entries:
        if e.task not in tasks:
            tasks.append(e.task)
    task = tasks[0] if len(tasks) == 1 else "; ".join(tasks[:3]) + (f" (+{len(tasks) - 3} more)" if len(tasks) > 3 else "")
    return Headline(
        lo=entries[0].lo, hi=entries[-1].hi, tier=tier, leaves=sum(e.leaves for e in entries),
        task=_clip(task, 200), state=_clip(f"{entries[0].state} … {entries[-1].state}", 240), next=_clip(entries[-1].next, 160),
        files=merge_files([e.files for e in entries]),
    )


class HeadlineIndex:
    def __init__(self, tier_cap: int = 10):
        if tier_cap < 2:
            raise ValueError("tier_cap must be >= 2")
        self.tier_cap = tier_cap
        self.tiers: list[list[Headline]] = [[]]
        self.leaves = 0

    def add(self, lo: int, hi: int, task: str, state: str, next: str,
            files: tuple[FileRef, ...] = ()) -> Headline:
        if hi < lo:
            raise ValueError(f"headline range [{lo}, {hi}] is empty")
        last = self.last_hi()
        if last is not None and lo <= last:
            raise ValueError(f"headline range [{lo}, {hi}] overlaps evicted history ending at {last}")
        leaf = Headline(lo, hi, _clip(task, 200), _clip(state, 240), _clip(next, 160),
                        files=merge_files([tuple(files)]))
        self.tiers[0].append(leaf)
        self.leaves += 1
        t = 0
        while len(self.tiers[t]) >= self.tier_cap:
            merged = merge(self.tiers[t], t + 1)
            self.tiers[t] = []
            if len(self.tiers) == t + 1:
                self.tiers.append([])
            self.tiers[t + 1].append(merged)
            t += 1
        return leaf

    def last_hi(self) -> int | None:
        for tier in self.tiers:
            if tier:
                return tier[-1].hi
        return None

    def entries(self) -> list[Headline]:
        """All entries, oldest range first (higher tiers hold older ranges)."""
        out: list[Headline] = []
        for tier in reversed(self.tiers):
            out.extend(tier)
        return out

    def __len__(self) -> int:
        return sum(len(t) for t in self.tiers)

    def find(self, seq: int) -> Headline | None:
        for e in self.entries():
            if e.lo <= seq <= e.hi:
                return e
        return None

    def render(self, budget_tokens: int | None = None, count: Callable[[str], int] | None = None) -> str:
        """The index as text, oldest first; within a budget, older entries are elided first."""
        lines = [e.render() for e in self.entries()]
        if not lines:
            return ""
        head = "Evicted history (headline index; ms.expand(lo, hi) brings any range back):"
        text = "\n".join([head, *lines])
        if budget_tokens is None or count is None or count(text) <= budget_tokens:
            return text
        # keep the newest entries that fit; say what was elided (still reachable via ms.headlines())
        kept: list[str] = []
        for line in reversed(lines):
            trial = "\n".join([head, f"… {len(lines) - len(kept) - 1} older entries elided; see ms.headlines()", line, *kept])
            if count(trial) > budget_tokens:
                break
            kept.insert(0, line)
        elided = len(lines) - len(kept)
        return "\n".join([head, f"… {elided} older entries elided; see ms.headlines()", *kept])
