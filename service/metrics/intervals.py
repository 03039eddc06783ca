"""The Wilson score interval with a finite-population correction (docs/metrics.md, "Pass rates").

A criterion's pass rate is estimated from n of the N distinct test inputs of its frame, drawn without replacement.
The Wilson interval solves |p̂ - p| <= z·sqrt(p(1 - p)/n) for p; without replacement the variance of p̂ is
p(1 - p)/n · (N - n)/(N - 1), so the same solution holds with z² scaled by f = (N - n)/(N - 1). A census (n = N)
has f = 0 and the interval is the observed rate itself; an unknown frame leaves f = 1 (plain Wilson).
"""

from __future__ import annotations

from math import sqrt
from statistics import NormalDist

from .model import Interval

METHOD = "wilson-fpc"


def z_for(level: float) -> float:
    """The two-sided standard normal quantile for a confidence ``level`` (1.959963984540054 for 0.95)."""
    if not 0 < level < 1:
        raise ValueError(f"a confidence level lies strictly between 0 and 1, not {level}")
    return NormalDist().inv_cdf(1 - (1 - level) / 2)


def correction(n: int, frame: int | None) -> float:
    """f = (N - n)/(N - 1), the finite-population correction of the variance; 1 for an unknown frame, 0 for a
    census (n >= N, N = 1 included)."""
    if frame is None:
        return 1.0
    if n >= frame:
        return 0.0
    return (frame - n) / (frame - 1)


def wilson_fpc(k: int, n: int, frame: int | None, level: float = 0.95) -> Interval | None:
    """The interval for k passed of n judged out of a frame of ``frame``; ``None`` for n = 0."""
    if not 0 <= k <= n:
        raise ValueError(f"k = {k} passed of n = {n} judged is not a count")
    if n == 0:
        return None
    z2 = z_for(level) ** 2 * correction(n, frame)
    p = k / n
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = sqrt(z2 * p * (1 - p) / n + z2 * z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval(lower=max(0.0, centre - half), upper=min(1.0, centre + half), level=level, method=METHOD)
