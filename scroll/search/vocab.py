"""Big in-memory maps that grow one entry at a time on the append path, without stalls.

    vocab = Vocabulary()            # term -> id, ids dense in first-seen order
    tid = vocab.id("apple")         # the term's id (a new one if unseen)
    vocab.get("pear")               # None if unseen
    vocab.terms[100:]               # the terms that got ids 100, 101, ... (what a flush persists)

A Python dict doubles its table when it fills: the insertion that triggers it copies every
entry while holding the GIL (measured here: 24 ms at 350 k entries, 58 ms at 700 k, ~120 ms
at 1.4 M). A 10 M-word corpus has ~700 k distinct terms, so one single append would stall
that long. `ShardedDict` spreads the keys over 64 dicts by hash: a resize copies 1/64 of the
entries, and clearing one full shard frees 1/64 of them.
"""
from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

SHARDS = 64
_MASK = SHARDS - 1


class ShardedDict:
    """A str -> value map as 64 dicts; the subset of dict's API the index uses."""

    __slots__ = ("_shards",)

    def __init__(self) -> None:
        self._shards: list[dict] = [{} for _ in range(SHARDS)]

    def shard(self, key: str) -> dict:
        return self._shards[hash(key) & _MASK]

    def get(self, key: str, default=None):
        return self._shards[hash(key) & _MASK].get(key, default)

    def __getitem__(self, key: str):
        return self._shards[hash(key) & _MASK][key]

    def __setitem__(self, key: str, value) -> None:
        self._shards[hash(key) & _MASK][key] = value

    def __contains__(self, key: str) -> bool:
        return key in self._shards[hash(key) & _MASK]

    def __len__(self) -> int:
        return sum(map(len, self._shards))

    def __iter__(self) -> Iterator[str]:
        for d in self._shards:
            yield from d

    def shards(self) -> list[dict]:
        return self._shards


class Vocabulary:
    """term -> term id (0, 1, 2, ... in first-seen order), and the terms in id order."""

    __slots__ = ("_ids", "terms")

    def __init__(self, terms: Iterable[str] = ()) -> None:
        self._ids = ShardedDict()
        self.terms: list[str] = []
        shards = self._ids.shards()
        for t in terms:
            d = shards[hash(t) & _MASK]
            if t in d:
                raise ValueError(f"vocabulary: term {t!r} twice")
            d[t] = len(self.terms)
            self.terms.append(t)

    def get(self, term: str, default=None):
        return self._ids.get(term, default)

    def id(self, term: str) -> int:
        d = self._ids.shard(term)
        tid = d.get(term)
        if tid is None:
            tid = d[term] = len(self.terms)
            self.terms.append(term)
        return tid

    def id_map(self, counts: dict[str, int]) -> dict[int, int]:
        """{term id: count} for {term: count} (new terms get ids in order): `id` inlined, for
        the append path."""
        shards, known, out = self._ids.shards(), self.terms, {}
        for t, c in counts.items():
            d = shards[hash(t) & _MASK]
            tid = d.get(t)
            if tid is None:
                tid = d[t] = len(known)
                known.append(t)
            out[tid] = c
        return out

    def ids(self, terms: list[str]) -> np.ndarray:
        """The ids of `terms` (new ones added in order), as an int64 array."""
        shards, out, known = self._ids.shards(), [], self.terms
        for t in terms:
            d = shards[hash(t) & _MASK]
            tid = d.get(t)
            if tid is None:
                tid = d[t] = len(known)
                known.append(t)
            out.append(tid)
        return np.asarray(out, dtype=np.int64)

    def __contains__(self, term: str) -> bool:
        return term in self._ids

    def __len__(self) -> int:
        return len(self.terms)


__all__ = ["ShardedDict", "Vocabulary", "SHARDS"]
