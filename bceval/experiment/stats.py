"""Experiment statistics: per-arm rates with intervals, pass@k, flaky cases, and paired comparisons on one
estimand, the mean per-case difference, so that its test, estimate and interval cannot point different ways."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from bceval.experiment.exact import fisher_exact, holm, percentile_interval, resample_sums, scaled_test, wilson_interval
from bceval.experiment.records import (
    KIND_LABELS,
    KINDS,
    ArmComparison,
    ArmSummary,
    CaseDifference,
    CaseKind,
    Counts,
    EpochRates,
    Interval,
    KindRates,
    LeftOutCase,
    MissingCheck,
    Outcome,
    Outcomes,
    PairedComparison,
    Rate,
    Verdict,
)

Strata = Sequence[tuple[str, Collection[str]]]  # (stream, cases) groups a bootstrap resamples apart
Paired = Mapping[str, tuple[int, int, int, int]]  # per case: control (passed, answered), treatment (passed, answered)

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
    # sorted, so results depend on the outcomes and not on the order a mapping was filled in
    by_kind = {kind: sorted(case for case in outcomes if kinds[case] == kind) for kind in KINDS}
    counts = {case: _case_counts(entries) for case, entries in outcomes.items()}

    def pooled(kind: CaseKind) -> Rate:  # resampled under the kind's own stream
        clusters = [counts[case] for case in by_kind[kind] if counts[case][1]]
        return _pooled_rate(clusters, seed=seed, stream=kind, resamples=resamples, level=level)

    answered = sum(total for _, total in counts.values())
    return ArmSummary(
        epochs=epochs,
        k=epochs,
        cases=len(outcomes),
        cases_answered=sum(total > 0 for _, total in counts.values()),
        answered=answered,
        unanswered=epochs * len(outcomes) - answered,
        recall=pooled("positive"),
        clean_rate=pooled("clean"),
        per_epoch=tuple(_epoch_rates(outcomes, by_kind, epoch) for epoch in range(epochs)),
        pass_at_k=_kind_rates(counts, by_kind, lambda passed, total: passed > 0),
        pass_hat_k=_kind_rates(counts, by_kind, lambda passed, total: passed == total),
        flaky_cases=tuple(sorted(case for case, (passed, total) in counts.items() if 0 < passed < total)),
    )


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
    for drawn in resample_sums(seed, stream, packed, resamples):
        drawn_passed, drawn_total = divmod(drawn, scale)
        values.append(drawn_passed / drawn_total)
    interval = percentile_interval(values, level, seed, stream, len(clusters), "percentile cluster bootstrap")
    if interval.low == interval.high:  # no spread: every case at the same rate (all passed, or none)
        interval = wilson_interval([Fraction(p, a) for p, a in clusters], level, seed, stream)
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


# ---------------------------------------------------------------------------------------------- paired


@dataclass(frozen=True)
class _Draws:
    """What the tests and intervals of one comparison are held to and drawn with."""

    alpha: float
    seed: int
    resamples: int
    level: float


def paired_comparison(
    control: Outcomes,
    treatment: Outcomes,
    *,
    kind: str = "all",
    label: str | None = None,
    alpha: float = 0.05,
    seed: int,
    resamples: int = 2000,
    level: float = 0.95,
) -> PairedComparison:
    """Treatment against control over the cases both answered at least once, for any per-case pass/fail outcome
    (recall, clean rate, or e.g. "gates passed"): the mean per-case difference, its interval and its test."""
    _check_bootstrap(resamples, level)
    counts, _ = _pair_cases(control, treatment)
    return _paired(kind, counts, _Draws(alpha, seed, resamples, level), label=label)


def _paired(
    kind: str, counts: Paired, draws: _Draws, strata: Strata | None = None, label: str | None = None
) -> PairedComparison:
    """`strata`: (stream, cases) groups resampled apart (the kinds, for all cases together); default: one group of
    every case, resampled under the label `kind`."""
    groups = [(kind, counts)] if strata is None else strata
    # every per-case rate as an integer over one common scale: exact sums without Fractions
    scale = math.lcm(*(counts[c][1] for c in counts), *(counts[c][3] for c in counts))
    control = {c: counts[c][0] * (scale // counts[c][1]) for c in counts}
    treated = {c: counts[c][2] * (scale // counts[c][3]) for c in counts}
    differences = {c: treated[c] - control[c] for c in counts}
    test = scaled_test([differences[c] for c in sorted(counts)], scale, draws.seed)
    n = len(counts)
    interval = None
    if n:
        strata_differences = [
            (stream, [differences[c] for c in sorted(group) if c in counts]) for stream, group in groups if group
        ]
        interval = _difference_interval(strata_differences, scale, draws)
    values = list(differences.values())
    total = scale * n
    return PairedComparison(
        kind=kind,
        label=label or KIND_LABELS.get(kind, kind),
        paired_cases=n,
        control_mean=sum(control.values()) / total if n else None,
        treatment_mean=sum(treated.values()) / total if n else None,
        difference=sum(values) / total if n else None,
        interval=interval,
        better=sum(d > 0 for d in values),
        worse=sum(d < 0 for d in values),
        equal=sum(d == 0 for d in values),
        test=test,
        worse_than_control=test.p_lower < draws.alpha,
        better_than_control=test.p_upper < draws.alpha,
    )


def _difference_interval(strata: list[tuple[str, list[int]]], scale: int, draws: _Draws) -> Interval:
    """Paired bootstrap of the mean per-case difference (differences given as integers over `scale`): each draw
    resamples whole cases, both arms together, each stratum apart under its own stream, so a resample is one
    sum of integers per stratum."""
    n = sum(len(group) for _, group in strata)
    sums = [0] * draws.resamples
    for stream, group in strata:
        for index, drawn in enumerate(resample_sums(draws.seed, stream, group, draws.resamples)):
            sums[index] += drawn
    values = [total / (scale * n) for total in sums]
    how = "percentile paired cluster bootstrap" + (", stratified by kind," if len(strata) > 1 else "")
    stream = " + ".join(stream for stream, _ in strata)
    interval = percentile_interval(values, draws.level, draws.seed, stream, n, how)
    if interval.low == interval.high:  # no spread: every case moved by the same amount (often: none moved)
        mapped = [Fraction(d + scale, 2 * scale) for _, group in strata for d in group]  # onto 0..1, for Wilson
        wilson = wilson_interval(mapped, draws.level, draws.seed, stream)
        interval = replace(
            wilson,
            low=2 * wilson.low - 1,
            high=2 * wilson.high - 1,
            method=wilson.method + " (of the difference mapped onto 0..1 and back)",
        )
    return interval


# ---------------------------------------------------------------------------------------------- arms


def compare_arms(
    control: Outcomes, treatment: Outcomes, kinds: Mapping[str, CaseKind], **options: Any
) -> ArmComparison:
    """One treatment against control, a family of one (no adjustment); `options`: compare_treatments' keywords."""
    return compare_treatments(control, {"treatment": treatment}, kinds, **options)["treatment"]


def compare_treatments(
    control: Outcomes,
    treatments: Mapping[str, Outcomes],
    kinds: Mapping[str, CaseKind],
    *,
    alpha: float = 0.05,
    alpha_used: float | None = None,
    seed: int,
    resamples: int = 2000,
    level: float = 0.95,
    epochs: int | None = None,
) -> dict[str, ArmComparison]:
    """Every treatment arm against the control, their overall p-values adjusted by Holm's step-down method over
    the treatment arms, so that with every arm identical to the control some verdict appears at most alpha of the
    time; `alpha_used`: the level to hold adjusted p-values to (default alpha; less at an early planned look)."""
    _check_outcomes(control, kinds, "control")
    _check_bootstrap(resamples, level)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    draws = _Draws(alpha, seed, resamples, level)
    raw = {name: _compare(control, outcomes, kinds, draws, epochs) for name, outcomes in treatments.items()}
    adjusted = holm({name: result.p_value for name, result in raw.items()})
    family = len(raw)
    how = f"Holm over {family} treatment arms" if family > 1 else "none: one treatment arm"
    used = alpha if alpha_used is None else alpha_used
    return {
        name: decide(replace(result, p_adjusted=adjusted[name], family=family, adjustment=how, alpha_used=used))
        for name, result in raw.items()
    }


def _compare(
    control: Outcomes, treatment: Outcomes, kinds: Mapping[str, CaseKind], draws: _Draws, epochs: int | None
) -> ArmComparison:
    """One treatment against control, before its p-value is adjusted and its verdict decided."""
    _check_outcomes(treatment, kinds, "treatment")
    counts, left_out = _pair_cases(control, treatment)
    per_kind = {kind: {c: v for c, v in counts.items() if kinds[c] == kind} for kind in KINDS}
    overall = _paired("all", counts, draws, [(kind, per_kind[kind]) for kind in KINDS])  # each kind's stream
    missing = missing_check(control, treatment, epochs)
    refusals = []
    one_sided = [case for case in left_out if case.reason != "neither arm answered"]
    if one_sided:
        named = ", ".join(case.case_id for case in one_sided[:3]) + (" ..." if len(one_sided) > 3 else "")
        refusals.append(f"{len(one_sided)} case(s) have no answered epoch in one arm ({named})")
    if missing.p_value < draws.alpha:
        refusals.append(
            f"the arms lost answers at different rates (control {missing.control_missing}/{missing.control_slots}, "
            f"treatment {missing.treatment_missing}/{missing.treatment_slots} unanswered; Fisher exact "
            f"p = {missing.p_value:.3g} < {draws.alpha:g}), so the answers that remain may not be comparable"
        )
    if not counts:
        refusals.append("no case was answered by both arms, so there is nothing to compare")
    return ArmComparison(
        paired_cases=len(counts),
        left_out=left_out,
        differences=tuple(  # each difference exact, then rounded
            CaseDifference(case, kinds[case], c[0] / c[1], c[2] / c[3], (c[2] * c[1] - c[0] * c[3]) / (c[1] * c[3]))
            for case, c in sorted(counts.items())
        ),
        overall=overall,
        recall=_paired("positive", per_kind["positive"], draws),
        clean_rate=_paired("clean", per_kind["clean"], draws),
        missing=missing,
        refusals=tuple(refusals),
        alpha=draws.alpha,
        alpha_used=draws.alpha,
        p_value=overall.test.p_value,
        p_adjusted=overall.test.p_value,
        family=1,
        adjustment="none: one treatment arm",
        verdict="no detectable difference",
        verdict_text="",
        explanation="",
    )


def refuse(comparison: ArmComparison, reason: str) -> ArmComparison:
    """The comparison with one more reason to give no verdict."""
    return decide(replace(comparison, refusals=(*comparison.refusals, reason)))


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


def agreeing(comparison: ArmComparison) -> ArmComparison:
    """The comparison whose verdict does not contradict its overall interval: a test finding no difference even
    before any adjustment beside an interval excluding 0, or a verdict beside an interval holding 0, is "too few
    cases to say", with both. (An unadjusted interval beside a difference only Holm's adjustment hides agrees.)"""
    interval, verdict = comparison.overall.interval, comparison.verdict
    if verdict not in ("better", "worse", "no detectable difference") or interval is None:
        return comparison
    excludes = interval.low > 0 or interval.high < 0
    found = verdict != "no detectable difference" or comparison.p_value < comparison.alpha
    if excludes == found:
        return comparison
    p = comparison.p_value if excludes else comparison.p_adjusted
    text = (
        f"too few cases to say: the test finds {'one' if found else 'no difference'} (p = {p:.4g}) but the "
        f"{interval.cases}-case {interval.level:.0%} interval [{interval.low:+.3f}, {interval.high:+.3f}] "
        f"{'excludes' if excludes else 'includes'} 0"
    )
    return replace(comparison, verdict="no verdict", verdict_text=text, explanation=text)


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
