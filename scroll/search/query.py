"""The query side of the search index: per-doc columns, a term's postings ready for scoring,
and `search` (TopK over segments + tail). A mixin of SearchIndex (index.py), which holds the
state these methods read; kept apart so that each file says one thing (upkeep.py: segment writes).
"""
from __future__ import annotations

from collections import Counter
from functools import partial

import numpy as np

from .documents import TIME_CHARS, Filters, field_term, filter_mask, identifier_parts
from .topk import Part, TopK

PARTS_CACHE = 1 << 20  # postings kept query-ready between queries (24 bytes each: 24 MiB at most)


class IndexQuery:
    # ----------------------------------------------------------------- query
    def _column(self, name: str) -> np.ndarray:
        """A per-doc column over segments + tails, in one buffer with room to spare: within an
        epoch only the live tail grows, and its new rows are copied in. (Concatenating the whole
        column again after every append made a fresh all-docs array for the next search, page
        faults included: 1.3 ms per column at 82 k docs on this VM.)"""
        n = self.n_docs
        hit = self._col_cache.get(name)
        if hit is not None and hit[0] == self._epoch and hit[2] <= n <= len(hit[1]):
            _, buf, filled = hit
            if filled < n:
                off, live = self._tails()[-1]
                buf[filled:n] = live.column(name, filled - off)
                self._col_cache[name] = (self._epoch, buf, n)
            return buf[:n]
        parts = ([self._static[name]] if self._static else []) + [t.column(name) for _, t in self._tails()]
        dtype = f"<U{TIME_CHARS}" if name == "times" else np.result_type(*parts)
        buf = np.empty(n + max(1024, n // 8), dtype=dtype)
        if parts:
            np.concatenate(parts, out=buf[:n], casting="same_kind")
        self._col_cache[name] = (self._epoch, buf, n)
        return buf[:n]

    def _segment_parts(self, tid: int) -> tuple[list[Part], int]:
        """A term's postings in the segments: a Part per segment the first time a term is asked
        for; from its second time on, joined into one Part (global doc numbers, float64 tfs,
        each posting's doc length) kept until the segments change, up to PARTS_CACHE postings in
        all (least recently used out first). Queries keep using the same common terms, whose
        long lists every query cast, offset and looked up again; a term asked for once (most
        rare ones) would only pay for building the joined copy (fresh memory: page faults)."""
        cache = self._parts_cache
        if self._parts_epoch != self._epoch:
            cache.clear()
            self._parts_seen.clear()
            self._parts_epoch = self._epoch
            self._parts_postings = 0
        hit = cache.get(tid)
        if hit is not None:
            cache.move_to_end(tid)
            return hit
        offsets = self._static["offsets"] if self._static else []
        parts, df = [], 0
        for off, seg in zip(offsets, self.segments):
            d, tf = seg.postings(tid)
            if len(d):
                parts.append(Part(off, d, tf, partial(seg.bound, tid)))
                df += len(d)
        if tid not in self._parts_seen:
            if len(self._parts_seen) >= PARTS_CACHE // 16:
                self._parts_seen.clear()
            self._parts_seen.add(tid)
            return parts, df
        if parts:
            pos = np.concatenate([p.docs.astype(np.int64) + p.offset for p in parts])
            # (max tf, min length) over the segments: a valid, if looser, bound for the joined list
            bounds = [p.bounds() for p in parts]
            bound = (max(b[0] for b in bounds), min(b[1] for b in bounds))
            parts = [Part(0, pos, np.concatenate([p.tfs for p in parts]).astype(np.float64), lambda: bound,
                          self._static["dl"][pos])]
        hit = cache[tid] = (parts, df)
        self._parts_postings += df
        while self._parts_postings > PARTS_CACHE and len(cache) > 1:
            _, old = cache.popitem(last=False)
            self._parts_postings -= old[1]
        return hit

    def search(self, query: str, k: int = 10, filters: Filters | None = None, *,
               exhaustive: bool = False) -> list[tuple[int, float]]:
        """[(seq, score)] best first; ties by seq, newest first; never a 0 score. Top-k by MaxScore
        (`topk.py`), exact: `exhaustive=True` scores every posting and must give the same list."""
        if k <= 0:
            return []
        self.sync()
        # each distinct term once, weighted by how often the query repeats it (bm25s sums
        # one score per occurrence): a query of one word repeated 20,000 times costs one
        terms = Counter(self.tok.terms(query, self.query_drop))
        if "parts" in self.fields:      # a query's identifiers also match their words (documents.py)
            terms.update(self.tok.terms(identifier_parts(query), self.query_drop))
        n = self.n_docs
        if not terms or n == 0:
            return []
        len_sum = (self._static["len_sum"] if self._static else 0.0) + self.tail_len_sum
        top = TopK(n, self._column("dl"), len_sum / n, self.k1_eff, self.b, self._scratch)
        tails = self._tails()

        def add(term: str, qtf: float, **saturation) -> None:
            tid = self.vocab.get(term)
            if tid is None:
                return
            seg_parts, df = self._segment_parts(tid)
            parts = list(seg_parts)
            for off, t in tails:
                part = t.part(tid, off)
                if part is not None:
                    parts.append(part)
                    df += len(part.docs)
            top.add_term(qtf, df, parts, **saturation)

        for term, qtf in terms.items():
            add(term, qtf)
            for field, weight in self._separate:      # its match in the speaker / month fields
                add(field_term(field, term), qtf * weight, k1=self.k1, b=0.0)
        mask = None
        if filters is not None:
            mask = filter_mask(filters, n, lambda field, v: self._strings[field].get(v), self._column)
        uniq, scores = top.best(k, mask, exhaustive=exhaustive)
        self.last_query_stats = top.stats
        if len(uniq) == 0:
            return []
        seqs = self._column("seqs")[uniq]
        order = np.lexsort((-seqs, -scores))[:k]
        return [(int(seqs[i]), float(scores[i])) for i in order]


__all__ = ["IndexQuery", "PARTS_CACHE"]
