"""MaxScore top-k: the same hits and scores as exhaustive scoring, on every query."""
from __future__ import annotations

import random

import numpy as np
import pytest

from scroll import EventLog
from scroll.search import topk
from scroll.search.topk import Part, TopK

VOCAB = [f"w{i}" for i in range(400)]


def _zipf_text(rng, n):
    return " ".join(VOCAB[min(int(rng.paretovariate(0.9)) - 1, len(VOCAB) - 1)] for _ in range(n))


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    rng = random.Random(7)
    path = tmp_path_factory.mktemp("topk") / "t.db"
    log = EventLog(path, index_options={"flush_docs": 1400, "max_segments": 3})
    rows = [{"session": f"s{rng.randint(0, 30)}", "role": rng.choice(["user", "assistant"]),
             "text": _zipf_text(rng, rng.randint(5, 120))} for _ in range(6000)]
    log.append_many(rows[:5000])
    log.search("w1")
    for r in rows[5000:]:          # a live tail beside the segments
        log.append(**r)
    assert len(log.index.segments) >= 2 and log.index.n_tail > 0
    yield log
    log.close()


def _queries(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [VOCAB[min(int(rng.paretovariate(0.7)) - 1, len(VOCAB) - 1)] for _ in range(rng.randint(2, 7))]
        out.append(" ".join(words))
    return out


@pytest.fixture
def always_prune(monkeypatch):
    monkeypatch.setattr(topk, "EXHAUSTIVE_POSTINGS", 0)   # small test corpora would be scored exhaustively
    monkeypatch.setattr(topk, "EXHAUSTIVE_PER_DOC", 0)


@pytest.mark.parametrize("k", [1, 10, 50])
def test_maxscore_equals_exhaustive_on_every_query(big_log, always_prune, k):
    idx, modes = big_log.index, []
    for q in _queries(150, seed=k):
        pruned = idx.search(q, k=k)
        modes.append(idx.last_query_stats["mode"])
        full = idx.search(q, k=k, exhaustive=True)
        assert [s for s, _ in pruned] == [s for s, _ in full], q
        assert np.allclose([x for _, x in pruned], [x for _, x in full], rtol=0, atol=1e-6)
    assert modes.count("maxscore") >= 100, modes   # the pruned path really ran (not single-term queries)


def test_maxscore_with_filters_equals_exhaustive(big_log, always_prune):
    from scroll.search.documents import Filters
    idx = big_log.index
    for i, q in enumerate(_queries(80, seed=3)):
        f = Filters(sessions=frozenset({f"s{i % 31}", f"s{(i * 7) % 31}"})) if i % 2 else Filters(role="user")
        assert idx.search(q, k=10, filters=f) == idx.search(q, k=10, filters=f, exhaustive=True), q


def test_pruning_reads_less_than_every_posting(big_log, always_prune):
    idx = big_log.index
    scored = []
    for q in _queries(100, seed=11):
        idx.search(q, k=10)
        st = idx.last_query_stats
        if st["mode"] == "maxscore":
            scored.append(st["scored"] / st["postings"])
    assert scored and np.median(scored) < 0.5, np.median(scored)


def test_topk_unit_random_parts_and_ties(always_prune):
    rng = np.random.default_rng(0)
    n = 5000
    dl = rng.integers(1, 80, n).astype(np.float64)
    dl[100:110] = 10.0                  # identical docs -> exact ties
    for trial in range(30):
        terms = []
        for t in range(rng.integers(2, 6)):
            m = int(rng.integers(50, 4000))
            docs = np.sort(rng.choice(n, m, replace=False))
            if t == 0:
                docs = np.union1d(docs, np.arange(100, 110))
            tfs = rng.integers(1, 5, len(docs)).astype(np.uint32)
            tfs[np.isin(docs, np.arange(100, 110))] = 2
            cut = np.searchsorted(docs, 2500)
            bounds = (int(tfs[:cut].max(initial=0)), int(dl[docs[:cut]].min(initial=1)))
            seg = Part(0, docs[:cut].astype(np.uint32), tfs[:cut], lambda b=bounds: b)
            tail = Part(2500, (docs[cut:] - 2500).astype(np.int64), tfs[cut:].astype(np.float64))
            terms.append((int(rng.integers(1, 3)), len(docs), [p for p in (seg, tail) if len(p.docs)]))
        mask = rng.random(n) < 0.7 if trial % 3 == 0 else None

        def run(exhaustive):
            top = TopK(n, dl, float(dl.mean()), 1.5, 0.75)
            for qtf, df, parts in terms:
                top.add_term(qtf, df, parts)
            d, s = top.best(10, None if mask is None else mask.copy(), exhaustive=exhaustive)
            o = np.lexsort((-d, -s))
            return d[o].tolist(), s[o].tolist()

        assert run(False) == run(True)


def test_sparse_and_dense_sums_are_the_same_bits(big_log, monkeypatch):
    """Few postings are summed per matched doc (a sort), many into an all-docs array: the same
    hits, the same scores to the last bit."""
    idx = big_log.index
    out = {}
    for name, below in (("sparse", 10**9), ("dense", 0)):
        monkeypatch.setattr(topk, "SPARSE_BELOW", below)
        out[name] = [idx.search(q, k=20, exhaustive=True) for q in _queries(60, seed=5)]
    assert out["sparse"] == out["dense"] and any(out["dense"])


def test_cached_term_postings_follow_flushes_and_evictions(tmp_path, monkeypatch):
    """The query-ready postings kept between queries (index._segment_parts) give the same hits as
    a freshly opened index: after flushes and merges change the segments, and with a cache so
    small that it evicts on every query."""
    from scroll.search import query as query_mod
    rng = random.Random(3)
    path = tmp_path / "c.db"
    log = EventLog(path, index_options={"flush_docs": 300, "max_segments": 2})
    qs = _queries(40, seed=9)
    for round_ in range(4):
        for _ in range(350):          # each round fills the tail past flush_docs: a flush, then a merge
            log.append(session=f"s{rng.randint(0, 9)}", role="user", text=_zipf_text(rng, rng.randint(5, 60)))
        warm = [log.index.search(q, k=10) for q in qs]          # builds the cache for this round's segments
        again = [log.index.search(q, k=10) for q in qs]         # served from it
        fresh = EventLog(path, readonly=True)
        try:
            assert warm == again == [fresh.index.search(q, k=10) for q in qs], round_
        finally:
            fresh.close()
    monkeypatch.setattr(query_mod, "PARTS_CACHE", 50)
    log.index._parts_epoch = -1                 # start the cache over, at the small bound
    log.index.search("w1 w3", k=10)
    assert not log.index._parts_cache           # a term's first use: its postings are not joined
    log.index.search("w1 w3", k=10)
    assert len(log.index._parts_cache) >= 1     # its second: joined (w1's list alone passes the bound)
    small = [log.index.search(q, k=10) for q in qs]
    small2 = [log.index.search(q, k=10) for q in qs]        # joined, evicting as it goes
    cache = log.index._parts_cache
    assert small == small2 == again and cache
    assert log.index._parts_postings == sum(p[1] for p in cache.values())
    assert log.index._parts_postings <= 50 or len(cache) == 1
    log.close()
