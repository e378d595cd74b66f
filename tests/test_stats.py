"""scroll.stats: the one percentile (numpy's linear method, in pure Python), the latency
summary built on it, and their refusals."""
from __future__ import annotations

import random

import numpy as np
import pytest

from scroll.stats import latency_ms, percentile


def test_percentile_matches_numpy_linear_method():
    rng = random.Random(3)
    for n in (1, 2, 7, 100):
        xs = [rng.expovariate(1.0) for _ in range(n)]
        for q in (0, 1, 25, 50, 90, 95, 99, 100):
            assert percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)), abs=1e-12)


def test_percentile_refuses_empty_and_out_of_range():
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="0 <= q <= 100"):
        percentile([1.0], 101)


def test_latency_ms_in_milliseconds():
    out = latency_ms([0.001, 0.002, 0.004])
    assert out["n"] == 3 and out["p50_ms"] == pytest.approx(2.0) and out["max_ms"] == pytest.approx(4.0)
    assert out["mean_ms"] == pytest.approx(7 / 3)
    assert latency_ms([]) == {"n": 0}
