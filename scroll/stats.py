"""Small statistics shared by the reports (distillation, benchmarks): the one percentile, the
latency summary built on it, the Wilson interval. Pure Python: the light install imports it."""
from __future__ import annotations

import math

Z95 = 1.959963984540054          # the 97.5 % normal quantile


def percentile(values, q: float) -> float:
    """The q-th percentile (0..100) of `values`, interpolated linearly between the two closest
    ranks (numpy's default method, so a report reads the same whichever side computed it)."""
    xs = sorted(float(v) for v in values)
    if not xs:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"need 0 <= q <= 100, got {q}")
    pos = (len(xs) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_ms(values_s) -> dict:
    """n, p50/p95/p99/max/mean in milliseconds of durations given in seconds ({"n": 0} for none)."""
    ms = [1e3 * float(v) for v in values_s]
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "p99_ms": percentile(ms, 99),
            "max_ms": max(ms), "mean_ms": sum(ms) / len(ms)}


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of k successes in n trials (None for n == 0)."""
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, center - half)
    hi = 1.0 if k == n else min(1.0, center + half)
    return lo, hi
