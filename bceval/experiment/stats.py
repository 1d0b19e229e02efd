"""Experiment statistics: per-arm rates with intervals, pass@k, flaky cases, and paired comparisons between arms
whose verdicts cannot mislead. Pure, deterministic and stdlib only.

Outcomes of one arm map a case id to one entry per epoch: True (passed), False (failed) or None (no answer: an
infrastructure failure, or a result not there yet). None is left out of every rate; it is never counted as a fail.

One estimand everywhere a comparison is made: the mean per-case difference (each case's pass rate over its
answered epochs, treatment minus control, averaged over the cases with equal weight). Its test, its estimate and
its interval are about that one number, so they cannot point different ways.
"""

from __future__ import annotations

import array
import functools
import hashlib
import math
import operator
import random
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from fractions import Fraction
from statistics import NormalDist
from typing import Any, Literal

CaseKind = Literal["positive", "clean"]
Outcome = bool | None
Outcomes = Mapping[str, Sequence[Outcome]]
Verdict = Literal["better", "worse", "mixed", "no detectable difference", "no verdict"]

KINDS: tuple[CaseKind, ...] = ("positive", "clean")
KIND_LABELS: dict[str, str] = {"positive": "recall", "clean": "clean rate", "all": "all cases"}
ALWAYS_EXACT_UP_TO = 20  # non-zero differences for which the test is exact whatever it costs
EXACT_CELL_BUDGET = 4_000_000_000  # beyond ALWAYS_EXACT_UP_TO: exact while n x (sum + 1) x (n + 1) bits stay below
MIN_RELIABLE_CASES = 15  # below this many cases an interval of a kind is too rough to lean on

Counts = tuple[int, int]  # one case: (passed, answered)


_FLOAT = ("float", "float | None")  # the annotations of a number written as a float (5 as 5.0), as JSON Schema has it
_SCALARS = (str, bool, float, type(None))


class Record:
    """A statistic or report record (a dataclass) as report.json has it."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields: nested records as objects, tuples as lists, a whole number in a float field as a
        float (the schema's number); a number that cannot be computed is None, never NaN."""
        return _json_value(self)


@functools.cache
def _shape(kind: type) -> tuple[tuple[str, bool], ...]:
    """A record's fields, each with whether it holds a float."""
    return tuple((f.name, str(f.type) in _FLOAT) for f in fields(kind))


def _json_value(value: Any, as_float: bool = False) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is int:
        return float(value) if as_float else value
    if kind is list or kind is tuple:
        return [item if type(item) in _SCALARS else _json_value(item) for item in value]
    if kind is dict:
        return {key: item if type(item) in _SCALARS else _json_value(item) for key, item in value.items()}
    if is_dataclass(value):
        return {name: _json_value(getattr(value, name), floats) for name, floats in _shape(kind)}
    return value


@dataclass(frozen=True)
class Interval(Record):
    """A `level` confidence interval over `cases` cases.

    method says in words how it was made, as the report prints it: a seeded percentile bootstrap that resamples
    whole cases (`resamples` draws from `seed` and the label `stream`), or, where the bootstrap has no spread (every
    case at the same value, e.g. all passed), a Wilson score interval over the cases, so no interval has zero width.
    reliable is False below MIN_RELIABLE_CASES cases.
    """

    low: float
    high: float
    level: float
    method: str
    resamples: int
    seed: int
    stream: str
    cases: int
    reliable: bool


@dataclass(frozen=True)
class Rate(Record):
    """passed / total; `value` is None when total is 0 (nothing answered), and `interval` None when not estimated.
    unit says what is counted: "answers" ((case, epoch) pairs) or "cases"."""

    passed: int
    total: int
    value: float | None
    unit: Literal["answers", "cases"] = "answers"
    interval: Interval | None = None


@dataclass(frozen=True)
class EpochRates(Record):
    """Recall and clean rate of one epoch alone (epoch i = index i of every case's outcomes), over its answers."""

    epoch: int
    recall: Rate
    clean_rate: Rate


@dataclass(frozen=True)
class KindRates(Record):
    """One per-case rate for positive cases, clean cases and both together; only cases answered at least once count."""

    positive: Rate
    clean: Rate
    all: Rate


@dataclass(frozen=True)
class ArmSummary(Record):
    """What one arm did over all its epochs.

    - recall: passed / answered (case, epoch) answers over positive cases; clean_rate: the same over clean cases.
      Their intervals resample whole cases, since the epochs of one case are not independent.
    - k: the epochs of the experiment; pass_at_k: share of cases that passed in at least one answered epoch;
      pass_hat_k (pass^k): share that passed in every answered epoch (both over cases answered at least once).
    - flaky_cases: answered in two or more epochs, passed in some and failed in others.
    - answered / unanswered: (case, epoch) answers there are and are not (a missing epoch counts), the latter kept
      out of every rate; cases_answered: cases answered at least once.
    """

    epochs: int
    k: int
    cases: int
    cases_answered: int
    answered: int
    unanswered: int
    recall: Rate
    clean_rate: Rate
    per_epoch: tuple[EpochRates, ...]
    pass_at_k: KindRates
    pass_hat_k: KindRates
    flaky_cases: tuple[str, ...]


@dataclass(frozen=True)
class LeftOutCase(Record):
    """A case the comparison could not pair, and why."""

    case_id: str
    reason: str


@dataclass(frozen=True)
class CaseDifference(Record):
    """One paired case: each arm's pass rate over its answered epochs, and treatment minus control."""

    case_id: str
    kind: CaseKind
    control_rate: float
    treatment_rate: float
    difference: float


@dataclass(frozen=True)
class PermutationTest(Record):
    """Paired sign-flip permutation test of `statistic` = the sum of per-case differences.

    p_value (two-sided): chance, if the arms were interchangeable, of a sum at least as far from 0 as the observed;
    p_lower: of a sum at most the observed (one-sided, "treatment worse"); p_upper: at least it ("better").
    method "exact" counts all 2^n sign assignments of the n non-zero differences (draws and seed are None);
    "monte-carlo" draws `draws` random assignments from `seed` and reports (1 + hits) / (1 + draws).
    """

    p_value: float
    method: Literal["exact", "monte-carlo"]
    statistic: float
    nonzero_differences: int
    draws: int | None
    seed: int | None
    p_lower: float = 1.0
    p_upper: float = 1.0


@dataclass(frozen=True)
class PairedComparison(Record):
    """Treatment against control over one set of paired cases (one kind, or all cases), on one estimand.

    - control_mean, treatment_mean: mean per-case pass rate of each arm over these cases; difference: their
      difference, which is the mean per-case difference; interval: its paired bootstrap (or Wilson) interval.
    - better / worse / equal: cases whose pass rate went up, down, or stayed.
    - test: sign-flip test of the per-case differences; worse_than_control: its one-sided p_lower < alpha, the
      harm check that stops an overall "better" (unadjusted on purpose: harm is looked for harder than benefit);
      better_than_control: p_upper < alpha.
    """

    kind: str  # "positive", "clean", "all" (or whatever outcome a caller compares)
    label: str
    paired_cases: int
    control_mean: float | None
    treatment_mean: float | None
    difference: float | None
    interval: Interval | None
    better: int
    worse: int
    equal: int
    test: PermutationTest
    worse_than_control: bool
    better_than_control: bool


@dataclass(frozen=True)
class MissingCheck(Record):
    """Whether the arms lost answers at rates chance explains: (case, epoch) slots without an answer per arm over
    the cases either arm covers, and a two-sided Fisher exact test on those counts."""

    control_missing: int
    control_slots: int
    treatment_missing: int
    treatment_slots: int
    p_value: float
    method: str = "two-sided Fisher exact test on unanswered (case, epoch) slots"


@dataclass(frozen=True)
class ArmComparison(Record):
    """Treatment against control, case by case, over the cases both arms answered at least once.

    - differences: per paired case (sorted by case id); overall: all paired cases, the primary test whose p-value
      decides; recall, clean_rate: the positive and the clean cases, each with its own test and interval.
    - p_value: overall.test.p_value; p_adjusted: after Holm's adjustment over `family` treatment arms; alpha_used:
      the level p_adjusted is held to (alpha, or this look's share of it under an alpha-spending plan).
    - missing: answered/unanswered per arm and whether chance explains the difference.
    - verdict: "no verdict" when refusals is not empty; else "better" / "worse" when p_adjusted < alpha_used in the
      direction of overall.difference and no kind went the other way significantly, "mixed" when one did
      (verdict_text names the kinds: "mixed: recall better, clean rate worse"), else "no detectable difference".
    """

    paired_cases: int
    left_out: tuple[LeftOutCase, ...]
    differences: tuple[CaseDifference, ...]
    overall: PairedComparison
    recall: PairedComparison
    clean_rate: PairedComparison
    missing: MissingCheck
    refusals: tuple[str, ...]
    alpha: float
    alpha_used: float
    p_value: float
    p_adjusted: float
    family: int
    adjustment: str
    verdict: Verdict
    verdict_text: str
    explanation: str


# ---------------------------------------------------------------------------------------------- per arm


def summarize_arm(
    outcomes: Outcomes,
    kinds: Mapping[str, CaseKind],
    *,
    seed: int,
    resamples: int = 2000,
    level: float = 0.95,
    epochs: int | None = None,
) -> ArmSummary:
    """Pooled recall and clean rate with case-resampling intervals, per-epoch rates, pass@k, pass^k, flaky cases.
    `epochs`: the experiment's (default: the longest outcome list)."""
    _check_outcomes(outcomes, kinds, "outcomes")
    _check_bootstrap(resamples, level)
    if epochs is None:
        epochs = max((len(entries) for entries in outcomes.values()), default=0)
    by_kind = _cases_by_kind(outcomes, kinds)
    counts = {case: _case_counts(entries) for case, entries in outcomes.items()}

    def pooled(kind: CaseKind, stream: str) -> Rate:
        clusters = [counts[case] for case in by_kind[kind] if counts[case][1]]
        return _pooled_rate(clusters, seed=seed, stream=stream, resamples=resamples, level=level)

    answered = sum(total for _, total in counts.values())
    return ArmSummary(
        epochs=epochs,
        k=epochs,
        cases=len(outcomes),
        cases_answered=sum(total > 0 for _, total in counts.values()),
        answered=answered,
        unanswered=epochs * len(outcomes) - answered,
        recall=pooled("positive", "positive"),
        clean_rate=pooled("clean", "clean"),
        per_epoch=tuple(_epoch_rates(outcomes, by_kind, epoch) for epoch in range(epochs)),
        pass_at_k=_kind_rates(counts, by_kind, lambda passed, total: passed > 0),
        pass_hat_k=_kind_rates(counts, by_kind, lambda passed, total: passed == total),
        flaky_cases=tuple(sorted(case for case, (passed, total) in counts.items() if 0 < passed < total)),
    )


def _cases_by_kind(outcomes: Outcomes, kinds: Mapping[str, CaseKind]) -> dict[CaseKind, list[str]]:
    """Sorted, so results depend on the outcomes and not on the order a mapping was filled in."""
    return {kind: sorted(case for case in outcomes if kinds[case] == kind) for kind in KINDS}


def _case_counts(entries: Sequence[Outcome]) -> Counts:
    """(passed, answered) epochs of one case."""
    return sum(entry is True for entry in entries), sum(entry is not None for entry in entries)


def _rate(passed: int, total: int, unit: str = "answers", interval: Interval | None = None) -> Rate:
    return Rate(passed=passed, total=total, value=passed / total if total else None, unit=unit, interval=interval)


def _pooled_rate(clusters: list[Counts], *, seed: int, stream: str, resamples: int, level: float) -> Rate:
    """Passes over answered answers of the given cases (each answered at least once); the interval resamples the
    cases. One integer per case (passed x scale + answered) lets a resample's two sums be one sum."""
    passed, total = sum(c[0] for c in clusters), sum(c[1] for c in clusters)
    if not clusters:
        return _rate(passed, total)
    scale = len(clusters) * max(a for _, a in clusters) + 1  # above any resample's sum of answers
    packed = [p * scale + a for p, a in clusters]
    values = []
    for drawn in _resample_sums(seed, stream, packed, resamples):
        drawn_passed, drawn_total = divmod(drawn, scale)
        values.append(drawn_passed / drawn_total)
    interval = _percentile_interval(values, level, seed, stream, len(clusters), "percentile cluster bootstrap")
    if interval.low == interval.high:  # no spread: every case at the same rate (all passed, or none)
        interval = _wilson_interval([Fraction(p, a) for p, a in clusters], level, seed, stream)
    return _rate(passed, total, "answers", interval)


def _epoch_rates(outcomes: Outcomes, by_kind: Mapping[CaseKind, list[str]], epoch: int) -> EpochRates:
    def rate(kind: CaseKind) -> Rate:
        entries = [outcomes[case][epoch] if epoch < len(outcomes[case]) else None for case in by_kind[kind]]
        return _rate(sum(entry is True for entry in entries), sum(entry is not None for entry in entries))

    return EpochRates(epoch=epoch, recall=rate("positive"), clean_rate=rate("clean"))


def _kind_rates(
    counts: Mapping[str, Counts], by_kind: Mapping[CaseKind, list[str]], passes: Callable[[int, int], bool]
) -> KindRates:
    """Share of cases answered at least once for which `passes(passed, answered)` holds, per kind and overall."""
    shares: dict[CaseKind, tuple[int, int]] = {}
    for kind in KINDS:
        answered = [counts[case] for case in by_kind[kind] if counts[case][1] > 0]
        shares[kind] = (sum(passes(*case) for case in answered), len(answered))
    everything = (sum(passed for passed, _ in shares.values()), sum(total for _, total in shares.values()))
    return KindRates(
        positive=_rate(*shares["positive"], "cases"),
        clean=_rate(*shares["clean"], "cases"),
        all=_rate(*everything, "cases"),
    )


# ---------------------------------------------------------------------------------------------- paired, one outcome


def paired_comparison(
    control: Outcomes,
    treatment: Outcomes,
    *,
    kind: str = "all",
    label: str | None = None,
    alpha: float = 0.05,
    seed: int,
    resamples: int = 2000,
    permutations: int = 20000,
    level: float = 0.95,
) -> PairedComparison:
    """Treatment against control over the cases both answered at least once, for any per-case pass/fail outcome
    (recall, clean rate, or e.g. "gates passed"): the mean per-case difference, its interval and its test."""
    _check_bootstrap(resamples, level)
    counts, _ = _pair_cases(control, treatment)
    return _paired(kind, label or KIND_LABELS.get(kind, kind), counts, alpha, seed, resamples, permutations, level)


def _paired(
    kind: str,
    label: str,
    counts: Mapping[str, tuple[int, int, int, int]],
    alpha: float,
    seed: int,
    resamples: int,
    permutations: int,
    level: float,
    strata: Sequence[tuple[str, Collection[str]]] | None = None,
) -> PairedComparison:
    """`strata`: (stream, cases) groups resampled apart (the kinds, for all cases together); default: one group of
    every case, resampled under the label `kind`."""
    groups = [(kind, counts)] if strata is None else strata
    # every per-case rate as an integer over one common scale: exact sums without Fractions
    scale = math.lcm(*(counts[c][1] for c in counts), *(counts[c][3] for c in counts))
    control = {c: counts[c][0] * (scale // counts[c][1]) for c in counts}
    treated = {c: counts[c][2] * (scale // counts[c][3]) for c in counts}
    differences = {c: treated[c] - control[c] for c in counts}
    test = _scaled_test([differences[c] for c in sorted(counts)], scale, seed, permutations)
    n = len(counts)
    interval = None
    if n and resamples:
        interval = _difference_interval(
            [(stream, [differences[c] for c in sorted(group) if c in counts]) for stream, group in groups if group],
            scale,
            seed,
            resamples,
            level,
        )
    values = list(differences.values())
    total = scale * n
    return PairedComparison(
        kind=kind,
        label=label,
        paired_cases=n,
        control_mean=sum(control.values()) / total if n else None,
        treatment_mean=sum(treated.values()) / total if n else None,
        difference=sum(values) / total if n else None,
        interval=interval,
        better=sum(d > 0 for d in values),
        worse=sum(d < 0 for d in values),
        equal=sum(d == 0 for d in values),
        test=test,
        worse_than_control=test.p_lower < alpha,
        better_than_control=test.p_upper < alpha,
    )


def _difference_interval(
    strata: list[tuple[str, list[int]]], scale: int, seed: int, resamples: int, level: float
) -> Interval:
    """Paired bootstrap of the mean per-case difference (differences given as integers over `scale`): each draw
    resamples whole cases, both arms together, each stratum apart under its own stream, so a resample is one
    sum of integers per stratum."""
    n = sum(len(group) for _, group in strata)
    sums = [0] * resamples
    for stream, group in strata:
        for index, drawn in enumerate(_resample_sums(seed, stream, group, resamples)):
            sums[index] += drawn
    values = [total / (scale * n) for total in sums]
    how = "percentile paired cluster bootstrap" + (", stratified by kind," if len(strata) > 1 else "")
    stream = " + ".join(stream for stream, _ in strata)
    interval = _percentile_interval(values, level, seed, stream, n, how)
    if interval.low == interval.high:  # no spread: every case moved by the same amount (often: none moved)
        mapped = [Fraction(d + scale, 2 * scale) for _, group in strata for d in group]  # onto 0..1, for Wilson
        wilson = _wilson_interval(mapped, level, seed, stream)
        interval = replace(
            wilson,
            low=2 * wilson.low - 1,
            high=2 * wilson.high - 1,
            method=wilson.method + " (of the difference mapped onto 0..1 and back)",
        )
    return interval


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
    epochs: int | None = None,
) -> ArmComparison:
    """Paired comparison of one treatment against control: the overall test and a test per kind, the missing-answer
    check, and the verdict (one treatment arm: no adjustment; several: `compare_treatments`)."""
    _check_outcomes(control, kinds, "control")
    _check_outcomes(treatment, kinds, "treatment")
    _check_bootstrap(resamples, level)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    counts, left_out = _pair_cases(control, treatment)
    per_kind = {kind: {c: v for c, v in counts.items() if kinds[c] == kind} for kind in KINDS}
    by_kind = [(kind, per_kind[kind]) for kind in KINDS]  # the kinds' streams: all cases resample as each kind
    overall = _paired("all", KIND_LABELS["all"], counts, alpha, seed, resamples, permutations, level, by_kind)
    recall = _paired(
        "positive", KIND_LABELS["positive"], per_kind["positive"], alpha, seed, resamples, permutations, level
    )
    clean = _paired("clean", KIND_LABELS["clean"], per_kind["clean"], alpha, seed, resamples, permutations, level)
    missing = missing_check(control, treatment, epochs)
    refusals = []
    one_sided = [case for case in left_out if case.reason != "neither arm answered"]
    if one_sided:
        named = ", ".join(case.case_id for case in one_sided[:3]) + (" ..." if len(one_sided) > 3 else "")
        refusals.append(f"{len(one_sided)} case(s) have no answered epoch in one arm ({named})")
    if missing.p_value < alpha:
        refusals.append(
            f"the arms lost answers at different rates (control {missing.control_missing}/{missing.control_slots}, "
            f"treatment {missing.treatment_missing}/{missing.treatment_slots} unanswered; Fisher exact "
            f"p = {missing.p_value:.3g} < {alpha:g}), so the answers that remain may not be comparable"
        )
    if not counts:
        refusals.append("no case was answered by both arms, so there is nothing to compare")
    comparison = ArmComparison(
        paired_cases=len(counts),
        left_out=left_out,
        differences=tuple(_case_difference(case, kinds[case], counts[case]) for case in sorted(counts)),
        overall=overall,
        recall=recall,
        clean_rate=clean,
        missing=missing,
        refusals=tuple(refusals),
        alpha=alpha,
        alpha_used=alpha,
        p_value=overall.test.p_value,
        p_adjusted=overall.test.p_value,
        family=1,
        adjustment="none: one treatment arm",
        verdict="no detectable difference",
        verdict_text="",
        explanation="",
    )
    return decide(comparison)


def compare_treatments(
    control: Outcomes,
    treatments: Mapping[str, Outcomes],
    kinds: Mapping[str, CaseKind],
    *,
    alpha: float = 0.05,
    alpha_used: float | None = None,
    seed: int,
    resamples: int = 2000,
    permutations: int = 20000,
    level: float = 0.95,
    epochs: int | None = None,
) -> dict[str, ArmComparison]:
    """Every treatment arm against the control, their overall p-values adjusted by Holm's step-down method over
    the treatment arms, so that with every arm identical to the control some verdict appears at most alpha of the
    time; `alpha_used`: the level to hold adjusted p-values to (default alpha; less at an early planned look)."""
    raw = {
        name: compare_arms(
            control,
            outcomes,
            kinds,
            alpha=alpha,
            seed=seed,
            resamples=resamples,
            permutations=permutations,
            level=level,
            epochs=epochs,
        )
        for name, outcomes in treatments.items()
    }
    adjusted = holm({name: result.p_value for name, result in raw.items()})
    family = len(raw)
    how = f"Holm over {family} treatment arms" if family > 1 else "none: one treatment arm"
    return {
        name: decide(
            replace(
                result,
                p_adjusted=adjusted[name],
                family=family,
                adjustment=how,
                alpha_used=alpha if alpha_used is None else alpha_used,
            )
        )
        for name, result in raw.items()
    }


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values: the i-th smallest times (m - i + 1), never decreasing, at most 1."""
    ordered = sorted(p_values, key=lambda name: (p_values[name], name))
    adjusted: dict[str, float] = {}
    running = 0.0
    for index, name in enumerate(ordered):
        running = max(running, min(1.0, (len(ordered) - index) * p_values[name]))
        adjusted[name] = running
    return adjusted


def refuse(comparison: ArmComparison, reason: str) -> ArmComparison:
    """The comparison with one more reason to give no verdict."""
    return decide(replace(comparison, refusals=(*comparison.refusals, reason)))


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


def decide(comparison: ArmComparison) -> ArmComparison:
    """The verdict of a comparison from its (adjusted) p-value, its per-kind harm checks and its refusals."""
    kinds = [comparison.recall, comparison.clean_rate]
    overall = comparison.overall
    if comparison.refusals:
        verdict: Verdict = "no verdict"
        text = "no verdict: " + "; ".join(comparison.refusals)
    elif comparison.p_adjusted < comparison.alpha_used and (overall.difference or 0) != 0:
        up = (overall.difference or 0) > 0
        against = [k for k in kinds if (k.worse_than_control if up else k.better_than_control)]
        if against:
            along = [k for k in kinds if k not in against and (k.difference or 0) * (1 if up else -1) > 0]
            good, bad = (along, against) if up else (against, along)
            verdict = "mixed"
            text = "mixed: " + ", ".join([f"{k.label} better" for k in good] + [f"{k.label} worse" for k in bad])
        else:
            verdict = "better" if up else "worse"
            text = verdict
    else:
        verdict, text = "no detectable difference", "no detectable difference"
    return replace(comparison, verdict=verdict, verdict_text=text, explanation=_explain(comparison, verdict, text))


def _explain(comparison: ArmComparison, verdict: Verdict, text: str) -> str:
    overall = comparison.overall
    if verdict == "no verdict":
        return text
    lead = {
        "better": "treatment passed more often than control",
        "worse": "treatment passed less often than control",
        "mixed": f"{text}: not an improvement, whatever the overall test says",
        "no detectable difference": "no detectable difference between treatment and control",
    }[verdict]
    how = "sign-flip permutation test"
    if overall.test.method == "monte-carlo":
        how += f" (Monte Carlo, {overall.test.draws} draws)"
    p = f"p = {comparison.p_value:.4g}"
    if comparison.family > 1:
        p += f", Holm-adjusted {comparison.p_adjusted:.4g} over {comparison.family} treatment arms"
    below = comparison.p_adjusted < comparison.alpha_used
    threshold = f"{'<' if below else 'not below'} alpha {comparison.alpha_used:.4g}"
    counts = f"{overall.better} better, {overall.worse} worse of {overall.paired_cases} paired cases"
    return f"{lead} ({counts}); {how} {p} {threshold}"


def missing_check(control: Outcomes, treatment: Outcomes, epochs: int | None = None) -> MissingCheck:
    """Unanswered (case, epoch) slots of each arm over every case either covers (`epochs` slots per case, default
    the longest outcome list), and whether their rates differ beyond chance (two-sided Fisher exact test)."""
    cases = set(control) | set(treatment)
    if epochs is None:
        epochs = max((len(v) for v in [*control.values(), *treatment.values()]), default=0)
    slots = epochs * len(cases)

    def unanswered(arm: Outcomes) -> int:
        return slots - sum(_case_counts(arm.get(case, ()))[1] for case in cases)

    control_missing, treatment_missing = unanswered(control), unanswered(treatment)
    p_value = fisher_exact(control_missing, slots - control_missing, treatment_missing, slots - treatment_missing)
    return MissingCheck(control_missing, slots, treatment_missing, slots, p_value)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided Fisher exact test of the table [[a, b], [c, d]]: the probability, given the margins, of a table
    no more likely than the observed one. Exact integer arithmetic."""
    row, column, total = a + b, a + c, a + b + c + d
    if total == 0 or row in (0, total) or column in (0, total):
        return 1.0
    low, high = max(0, column - (total - row)), min(row, column)

    def weight(x: int) -> int:
        return math.comb(row, x) * math.comb(total - row, column - x)

    observed = weight(a)
    tail = sum(w for w in map(weight, range(low, high + 1)) if w <= observed)
    return min(1.0, float(Fraction(tail, math.comb(total, column))))


def _pair_cases(
    control: Outcomes, treatment: Outcomes
) -> tuple[dict[str, tuple[int, int, int, int]], tuple[LeftOutCase, ...]]:
    """Counts of the cases both arms answered at least once, by sorted case id, and the cases left out."""
    paired: dict[str, tuple[int, int, int, int]] = {}
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


def _case_difference(case: str, kind: CaseKind, counts: tuple[int, int, int, int]) -> CaseDifference:
    control_rate, treatment_rate = counts[0] / counts[1], counts[2] / counts[3]
    difference = (counts[2] * counts[1] - counts[0] * counts[3]) / (counts[1] * counts[3])  # exact, then rounded
    return CaseDifference(
        case_id=case, kind=kind, control_rate=control_rate, treatment_rate=treatment_rate, difference=difference
    )


# ---------------------------------------------------------------------------------------------- sign-flip test


def sign_flip_test(differences: Sequence[Fraction | int], *, seed: int, permutations: int = 20000) -> PermutationTest:
    """Paired sign-flip permutation test of the sum of per-case differences (exact fractions), two- and one-sided.

    The non-zero differences are scaled to integers by the lcm of their denominators, so the test compares
    integers and never floats. Exact whenever there are at most ALWAYS_EXACT_UP_TO of them, or the counting
    stays within EXACT_CELL_BUDGET; otherwise Monte Carlo with `permutations` draws. No non-zero difference: p = 1.
    """
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations!r}")
    fractions = [Fraction(difference) for difference in differences]
    scale = math.lcm(*(difference.denominator for difference in fractions))
    return _scaled_test([int(difference * scale) for difference in fractions], scale, seed, permutations)


def _scaled_test(scaled: Sequence[int], scale: int, seed: int, permutations: int) -> PermutationTest:
    """sign_flip_test of the differences scaled[i] / scale (integers all through)."""
    nonzero = [value for value in scaled if value]
    common = math.gcd(*nonzero) or 1
    steps = [value // common for value in nonzero]
    statistic = sum(scaled) / scale
    magnitudes = [abs(step) for step in steps]
    observed, total, n = sum(steps), sum(magnitudes), len(steps)
    if n * (total + 1) * (n + 1) <= EXACT_CELL_BUDGET:
        p = _tails(_subset_sum_counts_packed(magnitudes), total, observed, 2**n)
        return PermutationTest(p[0], "exact", statistic, n, draws=None, seed=None, p_lower=p[1], p_upper=p[2])
    if n <= ALWAYS_EXACT_UP_TO:
        p = _tails(_subset_sum_counts(magnitudes), total, observed, 2**n)
        return PermutationTest(p[0], "exact", statistic, n, draws=None, seed=None, p_lower=p[1], p_upper=p[2])
    p = _monte_carlo_p_values(magnitudes, observed, _rng(seed, "sign flips"), permutations)
    return PermutationTest(p[0], "monte-carlo", statistic, n, permutations, seed, p_lower=p[1], p_upper=p[2])


def _tails(ways: Mapping[int, int], total: int, observed: int, assignments: int) -> tuple[float, float, float]:
    """(two-sided, lower, upper) p-values from the number of subsets reaching each subset sum. Flipping a subset of
    sum s to negative gives the signed sum total - 2s."""
    two = lower = upper = 0
    for subset_sum, count in ways.items():
        signed = total - 2 * subset_sum
        two += count if abs(signed) >= abs(observed) else 0
        lower += count if signed <= observed else 0
        upper += count if signed >= observed else 0
    return tuple(float(Fraction(hits, assignments)) for hits in (two, lower, upper))  # type: ignore[return-value]


def _subset_sum_counts(magnitudes: list[int]) -> dict[int, int]:
    """How many subsets reach each subset sum: a dynamic programme over the magnitudes, no enumeration of subsets
    (for few magnitudes whose sums are too large to pack)."""
    ways = {0: 1}
    for magnitude in magnitudes:
        grown = dict(ways)
        for subset_sum, count in ways.items():
            grown[subset_sum + magnitude] = grown.get(subset_sum + magnitude, 0) + count
        ways = grown
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
    counts = {}
    for subset_sum in range(total + 1):
        count = int.from_bytes(packed[subset_sum * width : (subset_sum + 1) * width], "little")
        if count:
            counts[subset_sum] = count
    return counts


def _monte_carlo_p_values(
    magnitudes: list[int], observed: int, rng: random.Random, draws: int
) -> tuple[float, float, float]:
    """(1 + hits) / (1 + draws) for the two-sided, lower and upper tails: never 0, and valid p-values for a finite
    number of random sign assignments."""
    total = sum(magnitudes)
    two = lower = upper = 0
    for _ in range(draws):
        flips = rng.getrandbits(len(magnitudes))
        signed = total - 2 * sum(magnitude for index, magnitude in enumerate(magnitudes) if flips >> index & 1)
        two += abs(signed) >= abs(observed)
        lower += signed <= observed
        upper += signed >= observed
    return tuple((1 + hits) / (1 + draws) for hits in (two, lower, upper))  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------- intervals


def _rng(seed: int, stream: str) -> random.Random:
    """One generator per stream, derived from the seed and a label, so adding a statistic shifts no other."""
    digest = hashlib.sha256(f"{seed}:{stream}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@functools.lru_cache(maxsize=6)
def _draws(seed: int, stream: str, n: int, resamples: int) -> tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]:
    """The case indices of every resample of n cases drawn with replacement, as getters that pick them out of any
    list of per-case values in C. Statistics of the same n cases and stream share the draws (every arm's recall
    resamples the same positive cases), which are made once."""
    rng = _rng(seed, stream)
    if n == 1:
        return tuple(lambda values: (values[0],) for _ in range(resamples))
    draw = _uniform_indices(n) if n <= _WORD else lambda rng: rng.choices(range(n), k=n)
    return tuple(operator.itemgetter(*draw(rng)) for _ in range(resamples))


def _resample_sums(seed: int, stream: str, values: Sequence[int], resamples: int) -> Sequence[int]:
    """Each resample's sum of the per-case integers `values` (the draws of _draws). Values that are a multiple
    of values summed before are not summed again: the sums are those of the values over their greatest common
    divisor, times it (exact integers; a comparison of all cases resamples each kind as its per-kind comparison
    does, with every difference scaled by one common factor)."""
    divisor = math.gcd(*values)
    if divisor == 0:  # every value is 0
        return [0] * resamples
    base = _sums_of(seed, stream, tuple(value // divisor for value in values), resamples)
    return base if divisor == 1 else [divisor * total for total in base]


@functools.lru_cache(maxsize=32)
def _sums_of(seed: int, stream: str, values: tuple[int, ...], resamples: int) -> tuple[int, ...]:
    return tuple(sum(pick(values)) for pick in _draws(seed, stream, len(values), resamples))


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


def _percentile_interval(values: list[float], level: float, seed: int, stream: str, cases: int, how: str) -> Interval:
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


def _wilson_interval(case_values: Sequence[Fraction], level: float, seed: int, stream: str) -> Interval:
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
