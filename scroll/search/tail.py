"""The in-memory part of the search index: documents not yet written to a segment.

    tail = Tail(capacity=1024)
    tail.add(seq, {term_id: tf}, length, codes, strings, time)
    tail.part(term_id, offset)        # its postings of one term, for TopK
    tail.write(root, n_terms)          # everything, as a segment (write_segment)

A tail only grows. When it is written as a segment in the background it is *frozen* (the
index starts a new tail and never adds to the frozen one), so the writer thread can read it
while searches keep reading it too.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .segment import _FIELDS, concat_in_runs, write_segment
from .topk import Part
from .vocab import SHARDS

_MASK = SHARDS - 1
_TF_MAX = (1 << 32) - 1   # a tf is stored in 32 bits (segments clip it there too)
_CHUNK = 1 << 16          # entries per chunk of the flat (term, tf) arrays


class Tail:
    def __init__(self, capacity: int = 1024):
        cap = max(16, int(capacity))
        # per term: its postings as int64 (doc << 32 | tf) in a numpy array with spare room (`n_post`
        # used): one array and one store per posting. Not lists (nor array.array): the garbage
        # collector tracks those, and a full collection walked every posting list of the tail:
        # 100-230 ms pauses in single appends (3 M words, measured). Each map is 64 dicts by tid:
        # one growing dict would stall an append while it resizes (10 ms at 44 k terms; vocab.py)
        self.post: list[dict[int, np.ndarray]] = [{} for _ in range(SHARDS)]
        self.n_post: list[dict[int, int]] = [{} for _ in range(SHARDS)]
        # every doc's (term id, tf) pairs again, flat and in doc order, in fixed-size chunks that
        # are never copied: what `write` turns into a segment with a few numpy calls. The
        # background flush used to build them from per-doc dicts in a Python loop, and while it
        # held the GIL every GIL release of a concurrent append (each SQLite call) waited up to
        # the 5 ms switch interval for it: appends of 20-70 ms during a flush (measured).
        self._terms: list[np.ndarray] = []
        self._tfs: list[np.ndarray] = []
        self._used: list[int] = []
        self.n_unique = np.zeros(cap, dtype=np.int64)   # per doc: how many (term, tf) pairs
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
        all_post, all_n = self.post, self.n_post
        doc = i << 32
        for tid, c in ids.items():
            s = tid & _MASK
            n_post = all_n[s]
            k = n_post.get(tid, 0)
            if k:
                a = all_post[s][tid]
                if k == len(a):
                    a = all_post[s][tid] = _grown(a, k)
            else:
                a = all_post[s][tid] = np.empty(2, dtype=np.int64)
            a[k] = doc | (c if c < _TF_MAX else _TF_MAX)
            n_post[tid] = k + 1
        k = len(ids)
        if not self._used or self._used[-1] + k > len(self._terms[-1]):
            size = max(_CHUNK, k)
            self._terms.append(np.empty(size, dtype=np.int64))
            self._tfs.append(np.empty(size, dtype=np.int64))
            self._used.append(0)
        u = self._used[-1]
        self._terms[-1][u:u + k] = np.fromiter(ids, dtype=np.int64, count=k)
        self._tfs[-1][u:u + k] = np.fromiter(ids.values(), dtype=np.int64, count=k)
        self._used[-1] = u + k
        self.n_unique[i] = k
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
        self.n_unique = np.resize(self.n_unique, cap)
        self.codes = {f: np.resize(a, cap) for f, a in self.codes.items()}

    @property
    def last_seq(self) -> int:
        return int(self.seqs[self.n - 1]) if self.n else 0

    def column(self, name: str, start: int = 0) -> np.ndarray:
        """A per-doc column (rows start..n): dl, seqs, times or a string field's codes."""
        if name == "times":
            return np.asarray(self.times[start:self.n], dtype=str)
        return {"dl": self.dl, "seqs": self.seqs, **self.codes}[name][start:self.n]

    def part(self, tid: int, offset: int) -> Part | None:
        s = tid & _MASK
        k = self.n_post[s].get(tid, 0)
        if not k:
            return None
        packed = self.post[s][tid][:k]
        return Part(offset, packed >> 32, (packed & _TF_MAX).astype(np.float64))

    def df(self, tid: int) -> int:
        return self.n_post[tid & _MASK].get(tid, 0)

    def write(self, root: Path, n_terms: int, paced: bool = False) -> Path:
        """Write every document as a segment; vectorised (no loop over documents), so that
        a background flush rarely holds the GIL (see `_terms`); `paced`: see `write_segment`."""
        n = self.n
        terms = np.concatenate([a[:u] for a, u in zip(self._terms, self._used)])
        tfs = np.concatenate([a[:u] for a, u in zip(self._tfs, self._used)])
        docs = np.repeat(np.arange(n, dtype=np.int64), self.n_unique[:n])
        meta = {"dl": self.dl[:n].astype(np.uint32), "seqs": self.seqs[:n].copy(),
                "times": np.asarray(self.times[:n], dtype=str)}
        for f in _FIELDS:   # the index's codes -> this segment's own (codes, table)
            _, first, local = np.unique(self.codes[f][:n], return_index=True, return_inverse=True)
            strs = self.strs[f]
            meta[f] = (local.astype(np.int32), [strs[j] for j in first.tolist()])
        return write_segment(root, triples=(terms, docs, tfs), meta=meta, n_terms=n_terms, paced=paced)


def release_in_background(tail: Tail) -> None:
    """Free a tail that nothing reads any more (a frozen tail once its segment is in use) in a
    background thread, one shard of its posting maps at a time. Dropped at once, its tens of
    thousands of small arrays are freed in the thread that drops the last reference, in one go:
    that was the append that took the segment into use (28-48 ms of CPU at 10 M chat words,
    measured). A shard is ~1/64 of them; between shards the GIL is let go, so a concurrent
    append waits for one shard's frees at most."""
    def run() -> None:
        for s in range(len(tail.post)):
            tail.post[s] = {}
            tail.n_post[s] = {}
            time.sleep(0)
    threading.Thread(target=run, name="scroll-index-release", daemon=True).start()


def _grown(a: np.ndarray, used: int) -> np.ndarray:
    """A posting array with room for more: doubled."""
    out = np.empty(2 * used, dtype=np.int64)
    out[:used] = a[:used]
    return out


class ForeignChange(Exception):
    """Another process rewrote the index while a background flush waited for the lock."""


@dataclass
class FlushJob:
    """A frozen tail being written as a segment (and merged) by a background thread; with no
    frozen tail (None), a merge of the segments alone (after a bulk write)."""

    frozen: Tail | None
    base_segments: list
    base_static: dict | None
    base_stamp: tuple | None
    generation: int
    vocab_persisted: int
    n_terms: int
    new_terms: list
    done: threading.Event = field(default_factory=threading.Event)
    segments: list | None = None
    static: dict | None = None
    stamp: tuple | None = None
    error: BaseException | None = None


def static_with(base: dict | None, frozen: Tail | None, segments: list) -> dict:
    """The per-doc arrays of `segments` = those of `base` followed by the frozen tail's docs, if
    any (a merge keeps the doc order, so only the offsets change; `base`'s arrays are shared,
    never written)."""
    offsets, n = [], 0
    for s in segments:
        offsets.append(n)
        n += s.n_docs
    cols = ("dl", "seqs", "times") + _FIELDS
    if frozen is None:
        out = {name: base[name] for name in cols}
    else:
        out = {name: (concat_in_runs([base[name], frozen.column(name)]) if base else frozen.column(name).copy())
               for name in cols}
    if len(out["seqs"]) != n:
        raise RuntimeError(f"index: {len(out['seqs'])} per-doc rows for {n} documents in the segments")
    out.update(n=n, offsets=offsets, len_sum=float(out["dl"].sum()))
    return out


__all__ = ["Tail", "FlushJob", "ForeignChange", "release_in_background", "static_with"]
