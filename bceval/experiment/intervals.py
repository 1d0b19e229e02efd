"""Confidence intervals: seeded percentile bootstraps that resample whole cases, and Wilson score intervals where
a bootstrap has no spread. Every random draw comes from a seed and a stream label, so results are deterministic."""

from __future__ import annotations

import array
import hashlib
import math
import random
import sys
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist

from bceval.experiment.records import MIN_RELIABLE_CASES, Interval


def seeded_rng(seed: int, stream: str) -> random.Random:
    """One generator per stream, derived from the seed and a label, so adding a statistic shifts no other."""
    digest = hashlib.sha256(f"{seed}:{stream}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def resample_sums(seed: int, stream: str, values: Sequence[int], resamples: int) -> list[int]:
    """Each resample's sum of the per-case integers `values`, the cases drawn with replacement (exact integers)."""
    n = len(values)
    if n <= 1:
        return [sum(values)] * resamples
    rng = seeded_rng(seed, stream)
    return [sum(values[index] for index in _indices(rng, n)) for _ in range(resamples)]


_WORD = 1 << 16


def _indices(rng: random.Random, n: int) -> list[int]:
    """n indices uniform on 0..n-1: random 16-bit words below the largest multiple of n, taken mod n (the words
    above it are rejected), the same on every machine."""
    if n > _WORD:
        return rng.choices(range(n), k=n)
    usable = _WORD // n * n
    spare = n // 8 + 16  # rejections are at most n / 65536 of the words: rarely is a second round needed
    picked: list[int] = []
    while len(picked) < n:
        words = array.array("H", rng.randbytes(2 * (n - len(picked) + spare)))
        if sys.byteorder == "big":
            words.byteswap()
        picked += [word % n for word in words if word < usable]
    return picked[:n]


def percentile_interval(values: list[float], level: float, seed: int, stream: str, cases: int, how: str) -> Interval:
    values.sort()
    tail = (1 - level) / 2
    return Interval(
        low=_percentile(values, tail),
        high=_percentile(values, 1 - tail),
        level=level,
        method=f"{how} over {cases} cases, {len(values):,} resamples",
        resamples=len(values),
        seed=seed,
        stream=stream,
        cases=cases,
        reliable=cases >= MIN_RELIABLE_CASES,
    )


def wilson_interval(case_values: Sequence[Fraction], level: float, seed: int, stream: str) -> Interval:
    """Wilson score interval treating each case as one trial whose outcome is its value in 0..1: wider than the
    bootstrap's nothing where every case sits at one value, and never of zero width."""
    n = len(case_values)
    successes = float(sum(case_values))
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    centre = (successes + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(max(0.0, successes * (n - successes) / n) + z * z / 4)
    return Interval(
        low=max(0.0, centre - half),
        high=min(1.0, centre + half),
        level=level,
        method=f"Wilson score interval over {n} cases (the bootstrap has no spread here)",
        resamples=0,
        seed=seed,
        stream=stream,
        cases=n,
        reliable=n >= MIN_RELIABLE_CASES,
    )


def _percentile(ordered: Sequence[float], quantile: float) -> float:
    """Linear interpolation between order statistics (numpy's default), so it never leaves their range."""
    position = quantile * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    value = ordered[below] + (ordered[above] - ordered[below]) * (position - below)
    return min(max(value, ordered[below]), ordered[above])  # rounding must not step outside the two
