"""Headline index invariants (property-based) and the View's budgets and prefix reuse."""
from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from scroll.headlines import HeadlineIndex
from scroll.records import estimate_tokens
from scroll.view import Step, View, chatml, prefix_reuse


@settings(max_examples=60, deadline=None)
@given(cap=st.integers(2, 12), gaps=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 6)), min_size=1, max_size=400))
def test_every_evicted_seq_covered_exactly_once_and_index_logarithmic(cap, gaps):
    idx = HeadlineIndex(tier_cap=cap)
    evicted, seq = [], 0
    for gap, width in gaps:
        lo = seq + gap
        hi = lo + width
        idx.add(lo, hi, "task", f"state {lo}", "next")
        evicted.append((lo, hi))
        seq = hi
    entries = idx.entries()
    # ordered, disjoint, and every evicted seq lies in exactly one entry
    for a, b in zip(entries, entries[1:]):
        assert a.hi < b.lo
    for lo, hi in evicted:
        for s in (lo, hi, (lo + hi) // 2):
            assert sum(e.lo <= s <= e.hi for e in entries) == 1
            assert idx.find(s) is not None
    assert sum(e.leaves for e in entries) == len(evicted)
    # O(log n): at most (cap - 1) entries per tier, tiers ~ log_cap(n) + 1
    n = len(evicted)
    tiers = math.floor(math.log(n, cap)) + 1 if n > 0 else 1
    assert len(entries) <= (cap - 1) * tiers
    assert len(idx.tiers) <= tiers + 1


def test_headline_rejects_overlap():
    import pytest

    idx = HeadlineIndex()
    idx.add(1, 5, "t", "s", "n")
    with pytest.raises(ValueError):
        idx.add(5, 9, "t", "s", "n")


def _view(**kw):
    return View(system="system rules " * 50, task="find the thing", count=estimate_tokens, **kw)


def _step(i, exposure_len=400):
    lo = 10 * i + 1
    return Step(lo=lo, hi=lo + 2, reply=f"HEADLINE: t{i} | s{i} | n{i}\n```python\nprint({i})\n```", exposure="x" * exposure_len,
                output_seq=lo + 2)


def derive(s):
    return ("task", "state", "next")


def test_view_evicts_to_headlines_and_never_exceeds_hard_budget():
    v = _view(soft_budget=1500, hard_budget=2000)
    for i in range(200):
        v.add_step(_step(i, exposure_len=(i * 997) % 3000))
        v.fit(derive)
        assert v.tokens() <= 2000
        assert sum(estimate_tokens(m["content"]) + 4 for m in v.messages()) + 3 <= 2000
    # evicted steps are all reachable through the headline index
    assert len(v.index.entries()) < 40
    for i in range(200):
        if all(s.lo != 10 * i + 1 for s in v.steps):
            assert v.index.find(10 * i + 1) is not None


def test_huge_exposure_is_folded_with_pointer():
    v = _view(soft_budget=1500, hard_budget=2000)
    v.add_step(_step(0, exposure_len=1_000_000))
    v.fit(derive)
    assert v.tokens() <= 2000
    assert v.steps[-1].folded and "ms.expand(3).text" in v.steps[-1].exposure


def test_prefix_reuse_full_between_evictions():
    v = _view(soft_budget=100_000, hard_budget=120_000)
    prev = chatml(v.messages())
    for i in range(20):
        v.add_step(_step(i))
        v.fit(derive)
        cur = chatml(v.messages())
        assert prefix_reuse(prev, cur) == 1.0
        prev = cur
    assert prefix_reuse("abcdef", "abcxyz") == 0.5
