"""Small exact statistics for scorecards: Wilson score intervals and the exact McNemar test."""

from __future__ import annotations

import math

Z_95 = 1.959963984540054  # two-sided 95% normal quantile


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; [0, 1] when there is no observation."""
    if total == 0:
        return (0.0, 1.0)
    p = passed / total
    denominator = 1 + z * z / total
    center = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return (max(0.0, center - half), min(1.0, center + half))


def mcnemar_exact(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value over the discordant pairs (binomial, p = 1/2)."""
    n = regressed + fixed
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(regressed, fixed) + 1)) / 2**n
    return min(1.0, 2 * tail)
