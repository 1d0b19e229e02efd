"""Inference for the experiment: the paired sign-flip permutation test, Fisher's exact test, Holm's adjustment,
O'Brien-Fleming alpha spending over planned looks, and confidence intervals (seeded percentile bootstraps that
resample whole cases, Wilson score intervals where a bootstrap has no spread). Every random draw comes from a seed
and a stream label, so results are deterministic."""

from __future__ import annotations

import array
import hashlib
import math
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from statistics import NormalDist

from bceval.experiment.records import MIN_RELIABLE_CASES, Interval, PermutationTest

ALWAYS_EXACT_UP_TO = 20  # non-zero differences for which the test is exact whatever it costs
EXACT_CELL_BUDGET = 4_000_000_000  # beyond ALWAYS_EXACT_UP_TO: exact while n x (sum + 1) x (n + 1) bits stay below


def sign_flip_test(differences: Sequence[Fraction | int], *, seed: int, permutations: int = 20000) -> PermutationTest:
    """Paired sign-flip permutation test of the sum of per-case differences (exact fractions), two- and one-sided,
    on integers (scaled by the lcm of their denominators), never floats; no non-zero difference: p = 1."""
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations!r}")
    fractions = [Fraction(difference) for difference in differences]
    scale = math.lcm(*(difference.denominator for difference in fractions))
    return scaled_test([int(difference * scale) for difference in fractions], scale, seed, permutations)


def scaled_test(scaled: Sequence[int], scale: int, seed: int, permutations: int = 20000) -> PermutationTest:
    """sign_flip_test of the differences scaled[i] / scale: exact whenever at most ALWAYS_EXACT_UP_TO are non-zero,
    or the counting stays within EXACT_CELL_BUDGET; otherwise Monte Carlo with `permutations` draws."""
    nonzero = [value for value in scaled if value]
    common = math.gcd(*nonzero) or 1
    steps = [value // common for value in nonzero]
    statistic = sum(scaled) / scale
    magnitudes = [abs(step) for step in steps]
    observed, total, n = sum(steps), sum(magnitudes), len(steps)
    packs = n * (total + 1) * (n + 1) <= EXACT_CELL_BUDGET
    if packs or n <= ALWAYS_EXACT_UP_TO:
        ways = _subset_sum_counts_packed(magnitudes) if packs else _subset_sum_counts(magnitudes)
        p = [float(Fraction(hits, 2**n)) for hits in _tails(ways, total, observed)]
        return PermutationTest(p[0], "exact", statistic, n, draws=None, seed=None, p_lower=p[1], p_upper=p[2])
    rng = seeded_rng(seed, "sign flips")
    drawn: Counter[int] = Counter()  # how many random sign assignments flipped a subset of each sum
    for _ in range(permutations):
        flips = rng.getrandbits(n)
        drawn[sum(magnitude for index, magnitude in enumerate(magnitudes) if flips >> index & 1)] += 1
    # (1 + hits) / (1 + draws): never 0, and valid p-values for a finite number of random sign assignments
    p = [(1 + hits) / (1 + permutations) for hits in _tails(drawn, total, observed)]
    return PermutationTest(p[0], "monte-carlo", statistic, n, permutations, seed, p_lower=p[1], p_upper=p[2])


def _tails(ways: Mapping[int, int], total: int, observed: int) -> tuple[int, int, int]:
    """(two-sided, lower, upper) hits from the number of sign assignments flipping a subset of each sum to negative
    (which gives the signed sum total - 2 x that sum)."""
    two = lower = upper = 0
    for subset_sum, count in ways.items():
        signed = total - 2 * subset_sum
        two += count if abs(signed) >= abs(observed) else 0
        lower += count if signed <= observed else 0
        upper += count if signed >= observed else 0
    return two, lower, upper


def _subset_sum_counts(magnitudes: list[int]) -> dict[int, int]:
    """How many subsets reach each subset sum: a dynamic programme over the magnitudes, no enumeration of subsets
    (for few magnitudes whose sums are too large to pack)."""
    ways = Counter({0: 1})
    for magnitude in magnitudes:  # each subset without the magnitude, and each with it
        ways += Counter({subset_sum + magnitude: count for subset_sum, count in ways.items()})
    return ways


def _subset_sum_counts_packed(magnitudes: list[int]) -> dict[int, int]:
    """The same counts as one big integer: the polynomial prod (1 + x^m) with each coefficient in a field of bits
    wide enough for 2^n, so multiplying by (1 + x^m) is one shift and one add of the whole distribution."""
    width = (len(magnitudes) + 8) // 8  # bytes per coefficient: a count is at most 2^n
    ways = 1
    for magnitude in magnitudes:
        ways += ways << (magnitude * width * 8)
    total = sum(magnitudes)
    packed = ways.to_bytes((total + 1) * width, "little")
    counts = (int.from_bytes(packed[start : start + width], "little") for start in range(0, len(packed), width))
    return {subset_sum: count for subset_sum, count in enumerate(counts) if count}


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact test of the table [[a, b], [c, d]]: the probability, given the margins, of a table
    no more likely than the observed one. Exact integer arithmetic."""
    row, column, total = a + b, a + c, a + b + c + d
    low, high = max(0, column - (total - row)), min(row, column)

    def weight(x: int) -> int:
        return math.comb(row, x) * math.comb(total - row, column - x)

    observed = weight(a)
    tail = sum(w for w in map(weight, range(low, high + 1)) if w <= observed)
    return min(1.0, float(Fraction(tail, math.comb(total, column))))


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values: the i-th smallest times (m - i + 1), never decreasing, at most 1."""
    ordered = sorted(p_values, key=lambda name: (p_values[name], name))
    adjusted: dict[str, float] = {}
    running = 0.0
    for index, name in enumerate(ordered):
        running = max(running, min(1.0, (len(ordered) - index) * p_values[name]))
        adjusted[name] = running
    return adjusted


def obrien_fleming(alpha: float, look: int, looks: int) -> float:
    """The share of alpha look `look` of `looks` equally spaced looks may spend under the Lan-DeMets O'Brien-Fleming
    spending function alpha(t) = 2 - 2 Phi(z_(1 - alpha/2) / sqrt(t)). Holding each look to its own share (rather
    than to the boundaries that account for the looks' correlation) is slightly conservative: by the union bound
    the chance of any false verdict over all looks stays at most alpha."""
    if not 1 <= look <= looks:
        raise ValueError(f"look must lie between 1 and {looks}, got {look!r}")
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha / 2)

    def spent(t: float) -> float:
        return 0.0 if t <= 0 else 2 - 2 * normal.cdf(z / math.sqrt(t))

    return spent(look / looks) - spent((look - 1) / looks)


# --- confidence intervals ----------------------------------------------------------------------------------------


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
    low, high, draws = _percentile(values, tail), _percentile(values, 1 - tail), len(values)
    method = f"{how} over {cases} cases, {draws:,} resamples"
    return Interval(low, high, level, method, draws, seed, stream, cases, cases >= MIN_RELIABLE_CASES)


def wilson_interval(case_values: Sequence[Fraction], level: float, seed: int, stream: str) -> Interval:
    """Wilson score interval treating each case as one trial whose outcome is its value in 0..1: wider than the
    bootstrap's nothing where every case sits at one value, and never of zero width."""
    n = len(case_values)
    successes = float(sum(case_values))
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    centre = (successes + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(max(0.0, successes * (n - successes) / n) + z * z / 4)
    method = f"Wilson score interval over {n} cases (the bootstrap has no spread here)"
    return Interval(
        max(0.0, centre - half), min(1.0, centre + half), level, method, 0, seed, stream, n, n >= MIN_RELIABLE_CASES
    )


def _percentile(ordered: Sequence[float], quantile: float) -> float:
    """Linear interpolation between order statistics (numpy's default), so it never leaves their range."""
    position = quantile * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    value = ordered[below] + (ordered[above] - ordered[below]) * (position - below)
    return min(max(value, ordered[below]), ordered[above])  # rounding must not step outside the two
