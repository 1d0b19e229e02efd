"""Confidence intervals: seeded percentile bootstraps that resample whole cases, and Wilson score intervals where
a bootstrap has no spread. Every random draw comes from a seed and a stream label, so results are deterministic."""

from __future__ import annotations

import array
import functools
import hashlib
import math
import operator
import random
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction
from statistics import NormalDist

from bceval.experiment.records import MIN_RELIABLE_CASES, Interval


def seeded_rng(seed: int, stream: str) -> random.Random:
    """One generator per stream, derived from the seed and a label, so adding a statistic shifts no other."""
    digest = hashlib.sha256(f"{seed}:{stream}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _draws(seed: int, stream: str, n: int, resamples: int) -> list[Callable[[Sequence[int]], tuple[int, ...]]]:
    """The case indices of every resample of n cases drawn with replacement, as getters that pick them out of any
    list of per-case values."""
    rng = seeded_rng(seed, stream)
    if n == 1:
        return [lambda values: (values[0],)] * resamples
    draw = _uniform_indices(n) if n <= _WORD else lambda rng: rng.choices(range(n), k=n)
    return [operator.itemgetter(*draw(rng)) for _ in range(resamples)]


def resample_sums(seed: int, stream: str, values: Sequence[int], resamples: int) -> Sequence[int]:
    """Each resample's sum of the per-case integers `values` (exact integers)."""
    if not values:
        return [0] * resamples
    return [sum(pick(values)) for pick in _draws(seed, stream, len(values), resamples)]


_WORD = 1 << 16
_REJECTED = -1
_kept = functools.partial(operator.ne, _REJECTED)


@functools.lru_cache(maxsize=8)
def _uniform_indices(n: int) -> Callable[[random.Random], tuple[int, ...]]:
    """n indices uniform on 0..n-1 from random 16-bit words, with no loop in Python: a word w below the largest
    multiple of n maps to w mod n through a lookup table, a word above it is rejected (as -1; only a round that
    has one is filtered, since few do)."""
    usable = _WORD // n * n
    table = tuple(word % n if word < usable else _REJECTED for word in range(_WORD))
    spare = n // 8 + 16  # rejections are at most n / 65536 of the words: rarely is a second round needed

    def draw(rng: random.Random) -> tuple[int, ...]:
        picked: tuple[int, ...] = ()
        while len(picked) < n:
            words = array.array("H", rng.randbytes(2 * (n - len(picked) + spare)))
            if sys.byteorder == "big":  # the same indices on every machine
                words.byteswap()
            looked = operator.itemgetter(*words.tolist())(table)  # a list unpacks faster than the array
            picked += tuple(filter(_kept, looked)) if _REJECTED in looked else looked
        return picked[:n]

    return draw


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
