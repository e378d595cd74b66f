"""merge_segments places every posting directly (no sort): the same segment, array for array,
as sorting all postings of the inputs by (term, doc)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from scroll.search.segment import _ARRAYS, Segment, merge_segments, write_segment
from scroll.search.tail import Tail


def _segment(root, rng, first_seq, n_docs, n_terms):
    """A segment as the index writes one: documents added to a Tail, then `Tail.write`."""
    tail, codes = Tail(4), {}
    for i in range(n_docs):
        k = int(rng.integers(0, 12))
        terms = rng.choice(n_terms, size=min(k, n_terms), replace=False)
        ids = {int(t): int(rng.integers(1, 9)) for t in terms}
        strs = {"sess": f"s{rng.integers(0, 4)}", "kind": "message", "role": str(rng.choice(["user", "assistant"])),
                "origin": "history"}
        tail.add(first_seq + i, ids, max(1, sum(ids.values())), {f: codes.setdefault((f, v), len(codes))
                                                                  for f, v in strs.items()}, strs, "2026-01-01")
    return Segment.load(tail.write(root, n_terms))


def _by_sort(root, segs, n_terms):
    terms, docs, tfs, offset = [], [], [], 0
    for s in segs:
        t = np.repeat(np.arange(s.n_terms, dtype=np.int64), np.diff(s.indptr))   # every posting's term
        d, f = np.asarray(s.docs, dtype=np.int64), np.asarray(s.tfs, dtype=np.int64)
        terms.append(t), docs.append(d + offset), tfs.append(f)
        offset += s.n_docs
    terms, docs, tfs = (np.concatenate(x) for x in (terms, docs, tfs))
    order = np.lexsort((docs, terms))
    meta = {"dl": np.concatenate([s.dl for s in segs]), "seqs": np.concatenate([s.seqs for s in segs]),
            "times": np.concatenate([s.times for s in segs]).astype(str)}
    for field in ("sess", "kind", "role", "origin"):
        meta[field] = [s.strings[field][i] for s in segs for i in s.local(field)]
    return write_segment(root, triples=(terms[order], docs[order], tfs[order]), meta=meta, n_terms=n_terms)


@pytest.mark.parametrize("chunk", [1 << 16, 1, 7])
def test_merge_equals_sorting_every_posting(tmp_path, monkeypatch, chunk):
    """Whatever the runs a merge moves its postings in (MERGE_CHUNK; 1: a run per term, and runs
    that cut no term), and its per-doc columns copied a few rows at a time (PACE_BYTES)."""
    from scroll.search import segment
    monkeypatch.setattr(segment, "MERGE_CHUNK", chunk)
    if chunk != 1 << 16:
        monkeypatch.setattr(segment, "PACE_BYTES", 64)
    rng = np.random.default_rng(5)
    for trial in range(6):
        root = tmp_path / f"t{trial}"
        root.mkdir()
        segs, seq, n_terms = [], 1, 20
        for _ in range(int(rng.integers(2, 5))):
            n_terms += int(rng.integers(0, 15))     # later segments know more terms (a growing vocabulary)
            n = int(rng.integers(1, 60))
            segs.append(_segment(root, rng, seq, n, n_terms))
            seq += n + int(rng.integers(0, 3))
        n_terms += 3                                # terms no segment holds yet
        fast, slow = merge_segments(root, segs, n_terms), _by_sort(root, segs, n_terms)
        for name in _ARRAYS:
            a, b = np.load(fast / f"{name}.npy"), np.load(slow / f"{name}.npy")
            assert a.dtype == b.dtype and np.array_equal(a, b), (trial, name)
        assert json.loads((fast / "strings.json").read_text()) == json.loads((slow / "strings.json").read_text())


def test_term_runs_cover_every_term_once_in_runs_of_about_the_chunk():
    from scroll.search.segment import _term_runs
    rng = np.random.default_rng(3)
    for _ in range(200):
        counts = rng.integers(0, 40, size=int(rng.integers(0, 60)))
        counts[rng.random(len(counts)) < 0.3] = 0
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        chunk = int(rng.integers(1, 120))
        runs = _term_runs(indptr, chunk)
        assert [x for run in runs for x in run] == ([0] + [b for _, b in runs[:-1] for _ in (0, 1)] + [len(counts)]
                                                   if len(counts) else [])
        for a, b in runs:       # a run: its first term (maybe bigger than a chunk), then at most a chunk more
            assert a < b and int(indptr[b] - indptr[a + 1]) <= chunk, (chunk, a, b)


def test_concat_in_runs_is_np_concatenate():
    from scroll.search import segment
    parts = [np.array(["2023-05-17T18:28:59"] * 1000), np.array(["x"] * 3), np.array([], dtype="<U5"),
             np.array(["2023-05-17T18:28:59+00:00"] * 17)]
    for p in (parts, [np.arange(5000, dtype=np.int64), np.arange(3, dtype=np.int32)], [np.zeros(0)]):
        a, b = segment.concat_in_runs(p), np.concatenate(p)
        assert a.dtype == b.dtype and np.array_equal(a, b)
