"""Bounded collection of a cell's printed output, and the capped exposure.

Host memory stays bounded however much a cell prints: the collector keeps a head and a
bounded tail of the text in memory and spools the full output to a temp file (RAM up to
1 MiB, then disk) up to `max_bytes` (default 64 MiB). Past that it stops storing, calls
`on_overflow` once (the kernel interrupts the cell) and only counts what still arrives.

The exposure (what the model sees) is the whole output when it fits `max_chars`, else
head + a note naming the payload handle of the full output + tail.
"""
from __future__ import annotations

import re
import tempfile
from collections import deque
from dataclasses import dataclass
from typing import Callable

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Exposure:
    text: str  # capped exposure
    full_chars: int
    truncated: bool
    handle: str | None  # payload handle of the full output when truncated
    overflow: bool  # collection stopped at max_bytes


class OutputCollector:
    def __init__(self, max_chars: int, max_bytes: int, on_overflow: Callable[[], None] | None = None):
        self.max_chars = max(max_chars, 200)
        self.max_bytes = max_bytes
        self.on_overflow = on_overflow
        self.head_cap = self.max_chars // 2
        self.tail_cap = self.max_chars - self.head_cap
        self.head: list[str] = []
        self.head_len = 0
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.chars = 0
        self.stored_bytes = 0
        self.overflow = False
        self.spool = tempfile.SpooledTemporaryFile(max_size=1 << 20)

    def write(self, name: str, text: str) -> None:
        if not text:
            return
        self.chars += len(text)
        if self.head_len < self.head_cap:
            part = text[: self.head_cap - self.head_len]
            self.head.append(part)
            self.head_len += len(part)
        self.tail.append(text[-self.tail_cap:])
        self.tail_len += len(self.tail[-1])
        while self.tail and self.tail_len - len(self.tail[0]) >= self.tail_cap:
            self.tail_len -= len(self.tail.popleft())
        if self.overflow:
            return
        data = text.encode("utf-8", "replace")
        room = self.max_bytes - self.stored_bytes
        if len(data) > room:
            data = data[:room]
            self.overflow = True
        self.spool.write(data)
        self.stored_bytes += len(data)
        if self.overflow and self.on_overflow:
            self.on_overflow()

    def finish(self, put: Callable[[bytes], str]) -> Exposure:
        """Build the exposure; `put(bytes) -> handle` stores the full output when cut."""
        if self.chars <= self.max_chars and not self.overflow:
            # head holds the first head_cap chars, tail at least the last tail_cap: together all of it
            rest = self.chars - self.head_len
            text = "".join(self.head) + ("".join(self.tail)[-rest:] if rest > 0 else "")
            self.spool.close()
            return Exposure(text, self.chars, False, None, False)
        self.spool.seek(0)
        data = self.spool.read()
        self.spool.close()
        handle = put(data)
        del data
        head = "".join(self.head)
        tail = "".join(self.tail)[-self.tail_cap:]
        omitted = self.chars - len(head) - len(tail)
        note = (f"\n[... {omitted} chars cut; the full output ({self.chars} chars"
                + (f", stored up to the {self.max_bytes}-byte limit" if self.overflow else "")
                + f") is in payload {handle}: ms.payload('{handle}') ...]\n")
        return Exposure(head + note + tail, self.chars, True, handle, self.overflow)


def format_error(ename: str | None, evalue: str | None, traceback: list[str], limit: int = 2000) -> str:
    """`ename: evalue` plus the tail of the traceback, ANSI codes removed."""
    ev = (evalue or "")[:limit]
    head = f"{ename}: {ev}" if ename else ev
    tb = ANSI.sub("", "\n".join(traceback or []))
    if len(tb) > limit:
        tb = "..." + tb[-limit:]
    return f"{head}\n{tb}".rstrip() if tb else head
