"""The in-memory part of the search index: documents not yet written to a segment.

    tail = Tail(capacity=1024)
    tail.add(seq, {term_id: tf}, length, codes, strings, time)
    tail.part(term_id, offset)        # its postings of one term, for TopK
    tail.batch()                       # everything, as a DocBatch for write_segment

A tail only grows. When it is written as a segment in the background it is *frozen* (the
index starts a new tail and never adds to the frozen one), so the writer thread can read it
while searches keep reading it too.
"""
from __future__ import annotations

import numpy as np

from .segment import _FIELDS, DocBatch
from .topk import Part


class Tail:
    def __init__(self, capacity: int = 1024):
        cap = max(16, int(capacity))
        self.post: dict[int, tuple[list[int], list[int]]] = {}
        self.counts: list[dict[int, int]] = []
        self.seqs = np.zeros(cap, dtype=np.int64)
        self.dl = np.zeros(cap, dtype=np.float64)
        self.codes = {f: np.zeros(cap, dtype=np.int32) for f in _FIELDS}
        self.times: list[str] = []
        self.strs: dict[str, list[str]] = {f: [] for f in _FIELDS}
        self.n = 0
        self.len_sum = 0

    def add(self, seq: int, ids: dict[int, int], length: int, codes: dict[str, int], strs: dict[str, str],
            time: str) -> None:
        i = self.n
        if i >= len(self.seqs):
            self._grow()
        for tid, c in ids.items():
            post = self.post.get(tid)
            if post is None:
                self.post[tid] = ([i], [c])
            else:
                post[0].append(i)
                post[1].append(c)
        self.counts.append(ids)
        self.seqs[i] = seq
        self.dl[i] = length
        for f in _FIELDS:
            self.codes[f][i] = codes[f]
            self.strs[f].append(strs[f])
        self.times.append(time)
        self.n += 1
        self.len_sum += length

    def _grow(self) -> None:
        cap = 2 * len(self.seqs)
        self.seqs = np.resize(self.seqs, cap)
        self.dl = np.resize(self.dl, cap)
        self.codes = {f: np.resize(a, cap) for f, a in self.codes.items()}

    @property
    def last_seq(self) -> int:
        return int(self.seqs[self.n - 1]) if self.n else 0

    def column(self, name: str) -> np.ndarray:
        """A per-doc column: dl, seqs, times or a string field's codes."""
        if name == "times":
            return np.asarray(self.times, dtype=str)
        return {"dl": self.dl, "seqs": self.seqs, **self.codes}[name][: self.n]

    def part(self, tid: int, offset: int) -> Part | None:
        post = self.post.get(tid)
        if post is None:
            return None
        return Part(offset, np.asarray(post[0], dtype=np.int64), np.asarray(post[1], dtype=np.float64))

    def df(self, tid: int) -> int:
        post = self.post.get(tid)
        return 0 if post is None else len(post[0])

    def batch(self) -> DocBatch:
        n = self.n
        return DocBatch(seqs=self.seqs[:n].tolist(), dls=self.dl[:n].astype(np.int64).tolist(),
                        counts=self.counts, times=self.times, **self.strs)


__all__ = ["Tail"]
