"""Experiment statistics: per-arm rates with cluster-bootstrap intervals, pass@k, flaky cases, and a paired
sign-flip permutation test between two arms. Pure, deterministic and stdlib only.

Outcomes of one arm map a case id to one entry per epoch: True (passed), False (failed) or None (no answer,
an infrastructure failure). None is left out of every rate; it is never counted as a fail.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Literal

CaseKind = Literal["positive", "clean"]
Outcome = bool | None
Outcomes = Mapping[str, Sequence[Outcome]]
Verdict = Literal["better", "worse", "no detectable difference"]

KINDS: tuple[CaseKind, ...] = ("positive", "clean")
BOOTSTRAP_METHOD = "cluster bootstrap over cases, percentile"
PAIRED_BOOTSTRAP_METHOD = "paired cluster bootstrap over cases, percentile"
ALWAYS_EXACT_UP_TO = 20  # non-zero differences for which the test is exact whatever it costs
EXACT_CELL_BUDGET = 5_000_000  # beyond ALWAYS_EXACT_UP_TO, exact only while the counting stays this cheap

Counts = tuple[int, ...]  # one case: (passed, answered), or (control passed, answered, treatment passed, answered)


class _Record:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (nested records become dicts); a number that cannot be computed is None, never NaN."""
        return asdict(self)


@dataclass(frozen=True)
class Interval(_Record):
    """A `level` confidence interval from a seeded bootstrap. `stream` is the label mixed into `seed` so that
    every statistic draws its own random numbers."""

    low: float
    high: float
    level: float
    method: str
    resamples: int
    seed: int
    stream: str


@dataclass(frozen=True)
class Rate(_Record):
    """passed / total; `value` is None when total is 0 (nothing answered), and `interval` None when not estimated."""

    passed: int
    total: int
    value: float | None
    interval: Interval | None = None


@dataclass(frozen=True)
class EpochRates(_Record):
    """Recall and clean rate of one epoch alone (epoch i = index i of every case's outcomes)."""

    epoch: int
    recall: Rate
    clean_rate: Rate


@dataclass(frozen=True)
class KindRates(_Record):
    """One per-case rate for positive cases, clean cases and all cases; only cases answered at least once count."""

    positive: Rate
    clean: Rate
    all: Rate


@dataclass(frozen=True)
class ArmSummary(_Record):
    """What one arm did over all its epochs.

    - recall: passed / answered (case, epoch) pairs over positive cases; clean_rate: the same over clean cases.
      Their intervals resample whole cases, since the epochs of one case are not independent.
    - pass_at_k: share of cases that passed in at least one answered epoch.
    - pass_hat_k (pass^k): share of cases that passed in every epoch; a case with any unanswered epoch does not
      count as passing all.
    - flaky_cases: answered in two or more epochs, passed in some and failed in others.
    - unanswered: (case, epoch) pairs without an answer (a missing epoch counts), kept out of every rate.
    """

    epochs: int
    cases: int
    unanswered: int
    recall: Rate
    clean_rate: Rate
    per_epoch: tuple[EpochRates, ...]
    pass_at_k: KindRates
    pass_hat_k: KindRates
    flaky_cases: tuple[str, ...]


@dataclass(frozen=True)
class LeftOutCase(_Record):
    """A case the comparison could not pair, and why."""

    case_id: str
    reason: str


@dataclass(frozen=True)
class CaseDifference(_Record):
    """One paired case: each arm's pass rate over its answered epochs, and treatment minus control."""

    case_id: str
    kind: CaseKind
    control_rate: float
    treatment_rate: float
    difference: float


@dataclass(frozen=True)
class PermutationTest(_Record):
    """Two-sided paired sign-flip permutation test of `statistic` = the sum of per-case differences.

    p_value: chance, if the arms were interchangeable, of a sum at least as far from 0 as the observed one.
    method "exact" counts all 2^n sign assignments of the n non-zero differences (draws and seed are None);
    "monte-carlo" draws `draws` random assignments from `seed` and reports (1 + hits) / (1 + draws).
    """

    p_value: float
    method: Literal["exact", "monte-carlo"]
    statistic: float
    nonzero_differences: int
    draws: int | None
    seed: int | None


@dataclass(frozen=True)
class RateDifference(_Record):
    """A pooled rate of both arms over the paired cases of one kind, and treatment minus control with a paired
    bootstrap interval; difference and interval are None when no paired case of that kind exists."""

    control: Rate
    treatment: Rate
    difference: float | None
    interval: Interval | None


@dataclass(frozen=True)
class ArmComparison(_Record):
    """Treatment against control, case by case, over the cases both arms answered at least once.

    - differences: per paired case, treatment pass rate minus control pass rate (sorted by case id);
      mean_difference is their mean; better / worse / equal count their signs.
    - test: the sign-flip permutation test of their sum; verdict: "better" or "worse" when test.p_value < alpha,
      in the direction of the sum, else "no detectable difference"; explanation says it in one sentence.
    - recall, clean_rate: pooled rates of both arms over the paired cases, with the difference and its interval.
    """

    paired_cases: int
    left_out: tuple[LeftOutCase, ...]
    differences: tuple[CaseDifference, ...]
    mean_difference: float | None
    better: int
    worse: int
    equal: int
    test: PermutationTest
    recall: RateDifference
    clean_rate: RateDifference
    alpha: float
    verdict: Verdict
    explanation: str


# ---------------------------------------------------------------------------------------------- per arm


def summarize_arm(
    outcomes: Outcomes,
    kinds: Mapping[str, CaseKind],
    *,
    seed: int,
    resamples: int = 2000,
    level: float = 0.95,
) -> ArmSummary:
    """Pooled recall and clean rate with cluster-bootstrap intervals, per-epoch rates, pass@k, pass^k, flaky cases."""
    _check_outcomes(outcomes, kinds, "outcomes")
    _check_bootstrap(resamples, level)
    epochs = max((len(entries) for entries in outcomes.values()), default=0)
    by_kind = _cases_by_kind(outcomes, kinds)

    def pooled(kind: CaseKind, stream: str) -> Rate:
        clusters = [_case_counts(outcomes[case]) for case in by_kind[kind]]
        return _pooled_rate(clusters, seed=seed, stream=stream, resamples=resamples, level=level)

    return ArmSummary(
        epochs=epochs,
        cases=len(outcomes),
        unanswered=sum(epochs - _case_counts(entries)[1] for entries in outcomes.values()),
        recall=pooled("positive", "recall"),
        clean_rate=pooled("clean", "clean rate"),
        per_epoch=tuple(_epoch_rates(outcomes, by_kind, epoch) for epoch in range(epochs)),
        pass_at_k=_kind_rates(outcomes, by_kind, _passed_any),
        pass_hat_k=_kind_rates(outcomes, by_kind, lambda entries: _passed_every(entries, epochs)),
        flaky_cases=tuple(sorted(case for case, entries in outcomes.items() if _is_flaky(entries))),
    )


def _cases_by_kind(outcomes: Outcomes, kinds: Mapping[str, CaseKind]) -> dict[CaseKind, list[str]]:
    """Sorted, so results depend on the outcomes and not on the order a mapping was filled in."""
    return {kind: sorted(case for case in outcomes if kinds[case] == kind) for kind in KINDS}


def _case_counts(entries: Sequence[Outcome]) -> tuple[int, int]:
    """(passed, answered) epochs of one case."""
    answered = [entry for entry in entries if entry is not None]
    return sum(answered), len(answered)


def _rate(passed: int, total: int, interval: Interval | None = None) -> Rate:
    return Rate(passed=passed, total=total, value=passed / total if total else None, interval=interval)


def _pooled_rate(clusters: list[Counts], *, seed: int, stream: str, resamples: int, level: float) -> Rate:
    """Passes over answered pairs of the given cases; the interval resamples the cases answered at least once."""
    answered = [counts for counts in clusters if counts[1] > 0]
    passed, total = sum(counts[0] for counts in answered), sum(counts[1] for counts in answered)
    if not answered:
        return _rate(passed, total)
    interval = _bootstrap(
        answered, _pooled_value, seed=seed, stream=stream, resamples=resamples, level=level, method=BOOTSTRAP_METHOD
    )
    return _rate(passed, total, interval)


def _pooled_value(clusters: Sequence[Counts]) -> float:
    return sum(counts[0] for counts in clusters) / sum(counts[1] for counts in clusters)


def _epoch_rates(outcomes: Outcomes, by_kind: Mapping[CaseKind, list[str]], epoch: int) -> EpochRates:
    def rate(kind: CaseKind) -> Rate:
        entries = [outcomes[case][epoch] if epoch < len(outcomes[case]) else None for case in by_kind[kind]]
        return _rate(sum(entry is True for entry in entries), sum(entry is not None for entry in entries))

    return EpochRates(epoch=epoch, recall=rate("positive"), clean_rate=rate("clean"))


def _kind_rates(
    outcomes: Outcomes, by_kind: Mapping[CaseKind, list[str]], passes: Callable[[Sequence[Outcome]], bool]
) -> KindRates:
    """Share of cases answered at least once for which `passes` holds, per kind and over all cases."""
    counts: dict[CaseKind, tuple[int, int]] = {}
    for kind in KINDS:
        answered = [outcomes[case] for case in by_kind[kind] if _case_counts(outcomes[case])[1] > 0]
        counts[kind] = (sum(passes(entries) for entries in answered), len(answered))
    everything = (sum(passed for passed, _ in counts.values()), sum(total for _, total in counts.values()))
    return KindRates(positive=_rate(*counts["positive"]), clean=_rate(*counts["clean"]), all=_rate(*everything))


def _passed_any(entries: Sequence[Outcome]) -> bool:
    return any(entry is True for entry in entries)


def _passed_every(entries: Sequence[Outcome], epochs: int) -> bool:
    return len(entries) == epochs and all(entry is True for entry in entries)


def _is_flaky(entries: Sequence[Outcome]) -> bool:
    return True in entries and False in entries


# ---------------------------------------------------------------------------------------------- two arms


def compare_arms(
    control: Outcomes,
    treatment: Outcomes,
    kinds: Mapping[str, CaseKind],
    *,
    alpha: float = 0.05,
    seed: int,
    resamples: int = 2000,
    permutations: int = 20000,
    level: float = 0.95,
) -> ArmComparison:
    """Paired comparison of treatment against control over the cases both answered at least once."""
    _check_outcomes(control, kinds, "control")
    _check_outcomes(treatment, kinds, "treatment")
    _check_bootstrap(resamples, level)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    counts, left_out = _pair_cases(control, treatment)
    differences = {case: Fraction(tp, ta) - Fraction(cp, ca) for case, (cp, ca, tp, ta) in counts.items()}
    test = sign_flip_test(list(differences.values()), seed=seed, permutations=permutations)
    better = sum(difference > 0 for difference in differences.values())
    worse = sum(difference < 0 for difference in differences.values())
    verdict = _verdict(test, alpha)

    def rate_difference(kind: CaseKind, stream: str) -> RateDifference:
        clusters = [case_counts for case, case_counts in counts.items() if kinds[case] == kind]
        return _rate_difference(clusters, seed=seed, stream=stream, resamples=resamples, level=level)

    return ArmComparison(
        paired_cases=len(counts),
        left_out=left_out,
        differences=tuple(_case_difference(case, kinds[case], counts[case]) for case in counts),
        mean_difference=float(sum(differences.values()) / len(differences)) if differences else None,
        better=better,
        worse=worse,
        equal=len(differences) - better - worse,
        test=test,
        recall=rate_difference("positive", "recall difference"),
        clean_rate=rate_difference("clean", "clean rate difference"),
        alpha=alpha,
        verdict=verdict,
        explanation=_explain(verdict, test, better, worse, len(counts), alpha),
    )


def _pair_cases(control: Outcomes, treatment: Outcomes) -> tuple[dict[str, Counts], tuple[LeftOutCase, ...]]:
    """Counts of the cases both arms answered at least once, by sorted case id, and the cases left out."""
    paired: dict[str, Counts] = {}
    left_out = []
    for case in sorted(set(control) | set(treatment)):
        control_counts = _case_counts(control.get(case, ()))
        treatment_counts = _case_counts(treatment.get(case, ()))
        if control_counts[1] and treatment_counts[1]:
            paired[case] = control_counts + treatment_counts
        elif control_counts[1] or treatment_counts[1]:
            arm = "treatment" if control_counts[1] else "control"
            left_out.append(LeftOutCase(case_id=case, reason=f"{arm} never answered"))
        else:
            left_out.append(LeftOutCase(case_id=case, reason="neither arm answered"))
    return paired, tuple(left_out)


def _case_difference(case: str, kind: CaseKind, counts: Counts) -> CaseDifference:
    control_rate, treatment_rate = counts[0] / counts[1], counts[2] / counts[3]
    difference = float(Fraction(counts[2], counts[3]) - Fraction(counts[0], counts[1]))
    return CaseDifference(
        case_id=case, kind=kind, control_rate=control_rate, treatment_rate=treatment_rate, difference=difference
    )


def _rate_difference(clusters: list[Counts], *, seed: int, stream: str, resamples: int, level: float) -> RateDifference:
    """Both arms pooled over the same paired cases; each bootstrap draw resamples the cases once for both arms."""
    control = _rate(sum(counts[0] for counts in clusters), sum(counts[1] for counts in clusters))
    treatment = _rate(sum(counts[2] for counts in clusters), sum(counts[3] for counts in clusters))
    if not clusters:
        return RateDifference(control=control, treatment=treatment, difference=None, interval=None)
    interval = _bootstrap(
        clusters,
        _pooled_difference,
        seed=seed,
        stream=stream,
        resamples=resamples,
        level=level,
        method=PAIRED_BOOTSTRAP_METHOD,
    )
    return RateDifference(
        control=control, treatment=treatment, difference=_pooled_difference(clusters), interval=interval
    )


def _pooled_difference(clusters: Sequence[Counts]) -> float:
    """Exact before rounding, so a difference of 0.3875 reads 0.3875 and not 0.38750000000000007."""
    control = Fraction(sum(counts[0] for counts in clusters), sum(counts[1] for counts in clusters))
    treatment = Fraction(sum(counts[2] for counts in clusters), sum(counts[3] for counts in clusters))
    return float(treatment - control)


def _verdict(test: PermutationTest, alpha: float) -> Verdict:
    if test.p_value < alpha and test.statistic > 0:
        return "better"
    if test.p_value < alpha and test.statistic < 0:
        return "worse"
    return "no detectable difference"


def _explain(verdict: Verdict, test: PermutationTest, better: int, worse: int, paired: int, alpha: float) -> str:
    if paired == 0:
        return "no case was answered by both arms, so there is nothing to compare"
    lead = {
        "better": "treatment passed more often than control",
        "worse": "treatment passed less often than control",
        "no detectable difference": "no detectable difference between treatment and control",
    }[verdict]
    how = "sign-flip permutation test"
    if test.method == "monte-carlo":
        how += f" (Monte Carlo, {test.draws} draws)"
    threshold = f"< alpha {alpha:g}" if test.p_value < alpha else f"not below alpha {alpha:g}"
    return f"{lead} ({better} better, {worse} worse of {paired} paired cases); {how} p = {test.p_value:.4g} {threshold}"


# ---------------------------------------------------------------------------------------------- sign-flip test


def sign_flip_test(differences: Sequence[Fraction | int], *, seed: int, permutations: int = 20000) -> PermutationTest:
    """Two-sided paired sign-flip permutation test of the sum of per-case differences (exact fractions).

    The non-zero differences are scaled to integers by the lcm of their denominators, so the test compares
    integers and never floats. Exact whenever there are at most ALWAYS_EXACT_UP_TO of them, or the counting
    stays within EXACT_CELL_BUDGET; otherwise Monte Carlo with `permutations` draws. No non-zero difference: p = 1.
    """
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations!r}")
    steps = _integer_steps([Fraction(difference) for difference in differences if difference != 0])
    statistic = float(sum(Fraction(difference) for difference in differences))
    magnitudes = [abs(step) for step in steps]
    if len(steps) <= ALWAYS_EXACT_UP_TO or len(steps) * (sum(magnitudes) + 1) <= EXACT_CELL_BUDGET:
        p_value = float(_exact_p_value(magnitudes, sum(steps)))
        return PermutationTest(p_value, "exact", statistic, len(steps), draws=None, seed=None)
    p_value = _monte_carlo_p_value(magnitudes, sum(steps), _rng(seed, "sign flips"), permutations)
    return PermutationTest(p_value, "monte-carlo", statistic, len(steps), draws=permutations, seed=seed)


def _integer_steps(differences: list[Fraction]) -> list[int]:
    """The differences times the lcm of their denominators, divided by the gcd: the same test on small integers."""
    scale = math.lcm(*(difference.denominator for difference in differences))
    steps = [int(difference * scale) for difference in differences]
    common = math.gcd(*steps) or 1
    return [step // common for step in steps]


def _exact_p_value(magnitudes: list[int], observed: int) -> Fraction:
    """Share of the 2^n sign assignments whose |sum| reaches |observed|.

    Flipping the subset N to negative gives the sum total - 2 * sum(N), so it suffices to count how many subsets
    reach each subset sum: a dynamic programme over the magnitudes, one pass each, no enumeration of subsets.
    """
    total = sum(magnitudes)
    ways = {0: 1}  # subset sum -> number of subsets with that sum
    for magnitude in magnitudes:
        grown = dict(ways)
        for subset_sum, count in ways.items():
            grown[subset_sum + magnitude] = grown.get(subset_sum + magnitude, 0) + count
        ways = grown
    hits = sum(count for subset_sum, count in ways.items() if abs(total - 2 * subset_sum) >= abs(observed))
    return Fraction(hits, 2 ** len(magnitudes))


def _monte_carlo_p_value(magnitudes: list[int], observed: int, rng: random.Random, draws: int) -> float:
    """(1 + hits) / (1 + draws): never 0, and a valid p-value for a finite number of random sign assignments."""
    total = sum(magnitudes)
    hits = 0
    for _ in range(draws):
        flips = rng.getrandbits(len(magnitudes))
        negative = sum(magnitude for index, magnitude in enumerate(magnitudes) if flips >> index & 1)
        hits += abs(total - 2 * negative) >= abs(observed)
    return (1 + hits) / (1 + draws)


# ---------------------------------------------------------------------------------------------- shared


def _rng(seed: int, stream: str) -> random.Random:
    """One generator per statistic, derived from the seed and a label, so adding a statistic shifts no other."""
    digest = hashlib.sha256(f"{seed}:{stream}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _bootstrap(
    clusters: Sequence[Counts],
    statistic: Callable[[Sequence[Counts]], float],
    *,
    seed: int,
    stream: str,
    resamples: int,
    level: float,
    method: str,
) -> Interval:
    """Percentile interval of `statistic` over resamples of whole cases drawn with replacement."""
    rng = _rng(seed, stream)
    values = sorted(statistic(rng.choices(clusters, k=len(clusters))) for _ in range(resamples))
    tail = (1 - level) / 2
    return Interval(
        low=_percentile(values, tail),
        high=_percentile(values, 1 - tail),
        level=level,
        method=method,
        resamples=resamples,
        seed=seed,
        stream=stream,
    )


def _percentile(ordered: Sequence[float], quantile: float) -> float:
    """Linear interpolation between order statistics (numpy's default), so it never leaves their range."""
    position = quantile * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    value = ordered[below] + (ordered[above] - ordered[below]) * (position - below)
    return min(max(value, ordered[below]), ordered[above])  # rounding must not step outside the two


def _check_outcomes(outcomes: Outcomes, kinds: Mapping[str, CaseKind], arm: str) -> None:
    for case, entries in outcomes.items():
        if kinds.get(case) not in KINDS:
            raise ValueError(f"{arm}: case {case!r} needs a kind of 'positive' or 'clean', got {kinds.get(case)!r}")
        if any(entry is not None and not isinstance(entry, bool) for entry in entries):
            raise ValueError(f"{arm}: case {case!r} has an outcome that is not True, False or None")


def _check_bootstrap(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
