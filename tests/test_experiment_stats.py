"""Experiment statistics: per-arm rates and intervals, pass@k, flaky cases, the paired sign-flip test, verdicts."""

from __future__ import annotations

import itertools
import json
import random
from fractions import Fraction

import pytest
from pydantic import TypeAdapter

from bceval.experiment import exact as exact_tests
from bceval.experiment.exact import sign_flip_test
from bceval.experiment.stats import compare_arms, summarize_arm
from bceval.scorecard.stats import mcnemar_exact


def as_json(record: object) -> object:
    """A statistics record as report.json writes it."""
    return TypeAdapter(type(record)).dump_python(record, mode="json")


CASES = [f"case-{index:02d}" for index in range(32)]
KINDS = {case: "positive" if index < 16 else "clean" for index, case in enumerate(CASES)}
PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97]


def synthetic_arm(rng: random.Random, pass_probability: float, epochs: int = 5) -> dict[str, list[bool]]:
    return {case: [rng.random() < pass_probability for _ in range(epochs)] for case in CASES}


def brute_force_p(differences: list[Fraction]) -> Fraction:
    observed = abs(sum(differences))
    signs = list(itertools.product((1, -1), repeat=len(differences)))
    hits = sum(abs(sum(sign * d for sign, d in zip(flip, differences, strict=True))) >= observed for flip in signs)
    return Fraction(hits, len(signs))


# ---------------------------------------------------------------------------------------------- exact test


@pytest.mark.parametrize(
    ("differences", "expected"),
    [
        ([1, 1, 1], Fraction(1, 4)),  # only +++ and --- reach |3|
        ([1, -1], Fraction(1)),
        ([Fraction(2, 5), Fraction(1, 5), Fraction(-1, 5)], Fraction(3, 4)),  # x5: 2,1,-1; |S| >= 2 in 6 of 8
        ([1, Fraction(1, 2)], Fraction(1, 2)),  # x2: 2,1; sums 3,1,-1,-3; |S| >= 3 in 2 of 4
        ([1, 0, 0, 1], Fraction(1, 2)),  # zeros are not flipped
        ([], Fraction(1)),
        ([0, 0], Fraction(1)),
    ],
)
def test_sign_flip_exact_against_hand_computation(differences, expected):
    result = sign_flip_test(differences, seed=1)
    assert result.method == "exact"
    assert result.p_value == float(expected)
    assert result.draws is None and result.seed is None
    assert result.nonzero_differences == sum(d != 0 for d in differences)


def test_fractional_differences_through_compare_arms():
    # d = 5/5 - 3/5 = 0.4, 5/5 - 4/5 = 0.2, 4/5 - 5/5 = -0.2: scaled by 5 to 2, 1, -1, so p = 6/8
    control = {"a": [True, True, True, False, False], "b": [True] * 4 + [False], "c": [True] * 5}
    treatment = {"a": [True] * 5, "b": [True] * 5, "c": [True] * 4 + [False]}
    result = compare_arms(control, treatment, {"a": "positive", "b": "positive", "c": "clean"}, seed=3)
    assert [d.difference for d in result.differences] == [0.4, 0.2, -0.2]
    assert result.overall.test.p_value == 0.75
    assert result.overall.test.statistic == pytest.approx(0.4)
    assert (result.overall.better, result.overall.worse, result.overall.equal) == (2, 1, 0)
    assert result.overall.difference == pytest.approx(0.4 / 3)


def test_one_epoch_sign_flip_equals_exact_mcnemar_beyond_twenty_discordant_cases():
    for regressed, fixed in itertools.product(range(31), repeat=2):
        if regressed + fixed > 30:
            continue
        control = {f"r{i}": [True] for i in range(regressed)} | {f"f{i}": [False] for i in range(fixed)}
        treatment = {f"r{i}": [False] for i in range(regressed)} | {f"f{i}": [True] for i in range(fixed)}
        control |= {"same-pass": [True], "same-fail": [False]}
        treatment |= {"same-pass": [True], "same-fail": [False]}
        kinds = dict.fromkeys(control, "positive")
        result = compare_arms(control, treatment, kinds, seed=0, resamples=1)
        assert result.overall.test.method == "exact", (regressed, fixed)
        assert result.overall.test.p_value == mcnemar_exact(regressed, fixed), (regressed, fixed)
        assert (result.overall.worse, result.overall.better, result.overall.equal) == (regressed, fixed, 2)


def test_up_to_twenty_differences_stay_exact_even_over_the_budget(monkeypatch):
    monkeypatch.setattr(exact_tests, "EXACT_CELL_BUDGET", 0)
    rng = random.Random(7)
    differences = [Fraction(rng.choice((1, -1)), prime) for prime in PRIMES[:12]]  # lcm of 12 primes: huge steps
    result = sign_flip_test(differences, seed=1)
    assert result.method == "exact"
    assert result.p_value == float(brute_force_p(differences))


def test_monte_carlo_beyond_twenty_when_counting_is_expensive():
    differences = [Fraction(1, prime) for prime in PRIMES[:21]]  # lcm ~ 10^27: exact counting is out of budget
    result = sign_flip_test(differences, seed=5, permutations=2000)
    assert (result.method, result.draws, result.seed, result.nonzero_differences) == ("monte-carlo", 2000, 5, 21)
    hits = result.p_value * 2001 - 1
    assert hits == pytest.approx(round(hits)) and 0 < result.p_value <= 1
    assert result == sign_flip_test(differences, seed=5, permutations=2000)


def test_monte_carlo_agrees_with_the_exact_count(monkeypatch):
    rng = random.Random(11)
    differences = [Fraction(rng.choice((-1, 1, 1, 2)), rng.choice((1, 2, 3))) for _ in range(24)]
    exact = sign_flip_test(differences, seed=2)
    monkeypatch.setattr(exact_tests, "EXACT_CELL_BUDGET", 0)
    sampled = sign_flip_test(differences, seed=2, permutations=20000)
    assert (exact.method, sampled.method) == ("exact", "monte-carlo")
    assert 0.001 < exact.p_value < 0.5
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.01)


# ---------------------------------------------------------------------------------------------- synthetic agents


def test_a_much_better_treatment_is_detected():
    rng = random.Random(2024)
    control, treatment = synthetic_arm(rng, 0.5), synthetic_arm(rng, 0.9)
    result = compare_arms(control, treatment, KINDS, seed=2024)
    assert result.verdict == "better"
    assert result.p_value < 0.01
    assert result.recall.difference > 0 and result.clean_rate.difference > 0
    assert result.explanation.startswith("treatment passed more often than control (")
    swapped = compare_arms(treatment, control, KINDS, seed=2024)
    assert swapped.verdict == "worse" and swapped.p_value == result.p_value


def test_identical_agents_show_no_difference_in_nearly_every_seed():
    quiet = 0
    for seed in range(200):
        rng = random.Random(seed)
        control, treatment = synthetic_arm(rng, 0.5), synthetic_arm(rng, 0.5)
        result = compare_arms(control, treatment, KINDS, seed=seed, resamples=1)
        quiet += result.verdict == "no detectable difference"
    assert quiet >= 190


# ---------------------------------------------------------------------------------------------- determinism


def test_same_seed_same_results_and_the_seed_never_moves_the_exact_p_value():
    rng = random.Random(99)
    control, treatment = synthetic_arm(rng, 0.6), synthetic_arm(rng, 0.7)
    first = compare_arms(control, treatment, KINDS, seed=1, resamples=300)
    assert first == compare_arms(control, treatment, KINDS, seed=1, resamples=300)
    assert summarize_arm(control, KINDS, seed=1) == summarize_arm(control, KINDS, seed=1)
    others = [compare_arms(control, treatment, KINDS, seed=seed, resamples=300) for seed in (2, 3, 4)]
    assert all(other.overall.test == first.overall.test for other in others)
    bounds = (first.recall.interval.low, first.recall.interval.high)
    assert any((other.recall.interval.low, other.recall.interval.high) != bounds for other in others)


def test_results_do_not_depend_on_mapping_order():
    rng = random.Random(5)
    control, treatment = synthetic_arm(rng, 0.5), synthetic_arm(rng, 0.8)
    backwards = dict(reversed(list(control.items())))
    assert summarize_arm(backwards, KINDS, seed=4) == summarize_arm(control, KINDS, seed=4)
    assert compare_arms(backwards, treatment, KINDS, seed=4) == compare_arms(control, treatment, KINDS, seed=4)


def test_each_statistic_draws_its_own_random_numbers():
    # Dropping the cases of one kind must not move the interval of the other: no shared random stream.
    arm = synthetic_arm(random.Random(8), 0.6)
    whole = summarize_arm(arm, KINDS, seed=6)
    for kind, field in (("positive", "recall"), ("clean", "clean_rate")):
        one_kind = {case: entries for case, entries in arm.items() if KINDS[case] == kind}
        assert getattr(summarize_arm(one_kind, KINDS, seed=6), field) == getattr(whole, field)


# ---------------------------------------------------------------------------------------------- one arm

TINY = {
    "p1": [True, True, True],
    "p2": [False, True, None],  # flaky; passed once; an unanswered epoch
    "p3": [False, False],  # the missing third epoch is unanswered
    "p4": [None, None, None],  # never answered: in no rate
    "c1": [True, True, True],
    "c2": [True, None, True],  # passed every answered epoch, but not every epoch
    "c3": [True, False, False],  # flaky
}
TINY_KINDS = {case: "positive" if case.startswith("p") else "clean" for case in TINY}


def counts(rate):
    return (rate.passed, rate.total)


def test_tiny_matrix_pooled_and_per_epoch_rates():
    summary = summarize_arm(TINY, TINY_KINDS, seed=0)
    assert (summary.epochs, summary.cases, summary.unanswered) == (3, 7, 6)
    assert counts(summary.recall) == (4, 7) and summary.recall.value == 4 / 7
    assert counts(summary.clean_rate) == (6, 8)
    assert [counts(epoch.recall) for epoch in summary.per_epoch] == [(1, 3), (2, 3), (1, 1)]
    assert [counts(epoch.clean_rate) for epoch in summary.per_epoch] == [(3, 3), (1, 2), (2, 3)]
    assert [epoch.epoch for epoch in summary.per_epoch] == [0, 1, 2]


def test_tiny_matrix_pass_at_k_pass_hat_k_and_flaky_cases():
    summary = summarize_arm(TINY, TINY_KINDS, seed=0)
    at_k, hat_k = summary.pass_at_k, summary.pass_hat_k
    assert (counts(at_k.positive), counts(at_k.clean), counts(at_k.all)) == ((2, 3), (3, 3), (5, 6))
    # pass^k is over answered epochs: c2 passed both epochs it answered (its unanswered one is no fail)
    assert (counts(hat_k.positive), counts(hat_k.clean), counts(hat_k.all)) == ((1, 3), (2, 3), (3, 6))
    assert summary.flaky_cases == ("c3", "p2")


def test_an_arm_with_nothing_answered_has_no_rates_and_no_intervals():
    for outcomes in ({}, {"p": [None, None], "c": []}):
        summary = summarize_arm(outcomes, {"p": "positive", "c": "clean"}, seed=0)
        for rate in (summary.recall, summary.clean_rate, summary.pass_at_k.all, summary.pass_hat_k.all):
            assert rate.value is None and rate.total == 0 and rate.interval is None
        assert all(epoch.recall.value is None for epoch in summary.per_epoch)
        json.dumps(as_json(summary), allow_nan=False)


def test_rate_intervals_contain_the_estimate_stay_in_range_and_say_how_they_were_made():
    for seed in range(10):
        rng = random.Random(seed)
        summary = summarize_arm(synthetic_arm(rng, rng.random()), KINDS, seed=seed, resamples=500, level=0.9)
        for rate in (summary.recall, summary.clean_rate):
            interval = rate.interval
            assert 0 <= interval.low <= rate.value <= interval.high <= 1
            assert (interval.level, interval.resamples, interval.seed) == (0.9, 500, seed)
            assert interval.method in ("percentile cluster bootstrap over 16 cases, 500 resamples",) or (
                interval.method.startswith("Wilson score interval over 16 cases")
            )
    assert (summary.recall.interval.stream, summary.clean_rate.interval.stream) == ("positive", "clean")


def test_a_wider_level_gives_a_wider_interval():
    arm = synthetic_arm(random.Random(3), 0.6)
    narrow = summarize_arm(arm, KINDS, seed=1, level=0.5).recall.interval
    wide = summarize_arm(arm, KINDS, seed=1, level=0.99).recall.interval
    assert wide.low < narrow.low <= narrow.high < wide.high


def test_the_bootstrap_resamples_cases_not_pairs():
    # Every case passes all or nothing: per-pair resampling over 80 pairs would give a narrow interval,
    # while only 16 independent cases give the width of a 16-case proportion.
    arm = {case: [index % 2 == 0] * 5 for index, case in enumerate(CASES)}
    interval = summarize_arm(arm, KINDS, seed=2).recall.interval
    assert interval.high - interval.low > 0.4


# ---------------------------------------------------------------------------------------------- two arms


def test_unanswered_epochs_are_left_out_and_unpaired_cases_are_reported():
    control = {"a": [True, None, None], "b": [None, None], "c": [True], "e": [False, False]}
    treatment = {"a": [True, True, True], "b": [True], "c": [None], "d": [True]}
    kinds = {"a": "positive", "b": "positive", "c": "clean", "d": "clean", "e": "clean"}
    result = compare_arms(control, treatment, kinds, seed=0)
    assert result.paired_cases == 1
    assert result.differences[0].difference == 0.0  # infrastructure failures are not fails
    assert [(case.case_id, case.reason) for case in result.left_out] == [
        ("b", "control never answered"),
        ("c", "treatment never answered"),
        ("d", "control never answered"),
        ("e", "treatment never answered"),
    ]
    assert (result.recall.control_mean, result.recall.treatment_mean) == (1.0, 1.0)
    assert result.verdict == "no verdict" and "4 case(s) have no answered epoch in one arm" in result.verdict_text


def test_a_case_neither_arm_answered_is_not_paired():
    result = compare_arms({"a": [None], "b": [True]}, {"a": [None], "b": [True]}, dict.fromkeys("ab", "clean"), seed=0)
    assert result.paired_cases == 1
    assert [(case.case_id, case.reason) for case in result.left_out] == [("a", "neither arm answered")]


def test_nothing_paired_gives_no_difference_and_no_crash():
    result = compare_arms({"a": [None]}, {}, {"a": "positive"}, seed=0)
    assert (result.paired_cases, result.overall.difference, result.p_value) == (0, None, 1.0)
    assert result.verdict == "no verdict"
    assert result.explanation.endswith("no case was answered by both arms, so there is nothing to compare")
    for difference in (result.recall, result.clean_rate):
        assert difference.difference is None and difference.interval is None and difference.control_mean is None
    json.dumps(as_json(result), allow_nan=False)


def test_difference_intervals_contain_the_estimate_and_stay_within_minus_one_and_one():
    for seed in range(10):
        rng = random.Random(seed)
        control, treatment = synthetic_arm(rng, rng.random()), synthetic_arm(rng, rng.random())
        result = compare_arms(control, treatment, KINDS, seed=seed, resamples=400, level=0.8)
        for difference in (result.recall, result.clean_rate):
            interval = difference.interval
            assert -1 <= interval.low <= difference.difference <= interval.high <= 1
            assert difference.difference == pytest.approx(difference.treatment_mean - difference.control_mean)
            assert (interval.level, interval.resamples, interval.seed) == (0.8, 400, seed)
            assert interval.method == "percentile paired cluster bootstrap over 16 cases, 400 resamples"


def test_the_paired_bootstrap_is_narrower_than_treating_arms_as_independent():
    # Treatment = control with one more passing epoch in every third case: the arms move together, so the
    # paired difference is known far better than either rate alone.
    rng = random.Random(12)
    control = {case: [rng.random() < 0.5 for _ in range(4)] + [False] for case in CASES}
    treatment = {case: entries[:4] + [index % 3 == 0] for index, (case, entries) in enumerate(control.items())}
    paired = compare_arms(control, treatment, KINDS, seed=1).recall
    alone = [summarize_arm(arm, KINDS, seed=1).recall.interval for arm in (control, treatment)]
    assert paired.difference == 6 / 80
    # resampling the arms apart would make it about sqrt(2) times wider than one rate's interval
    assert paired.interval.high - paired.interval.low < min(interval.high - interval.low for interval in alone)


def test_explanation_reads_as_one_sentence_with_the_numbers():
    control = {f"c{i}": [False] for i in range(8)}
    treatment = {f"c{i}": [True] for i in range(8)}
    result = compare_arms(control, treatment, dict.fromkeys(control, "positive"), seed=0)
    assert result.explanation == (
        "treatment passed more often than control (8 better, 0 worse of 8 paired cases); "
        "sign-flip permutation test p = 0.007812 < alpha 0.05"
    )
    quiet = compare_arms(control, control, dict.fromkeys(control, "positive"), seed=0, alpha=0.01)
    assert quiet.explanation == (
        "no detectable difference between treatment and control (0 better, 0 worse of 8 paired cases); "
        "sign-flip permutation test p = 1 not below alpha 0.01"
    )


def test_comparison_serializes_to_strict_json():
    rng = random.Random(1)
    result = compare_arms(synthetic_arm(rng, 0.5), synthetic_arm(rng, 0.7), KINDS, seed=1, resamples=50)
    document = json.loads(json.dumps(as_json(result), allow_nan=False))
    assert document["overall"]["test"]["method"] == "exact"
    assert document["recall"]["interval"]["method"] == "percentile paired cluster bootstrap over 16 cases, 50 resamples"
    assert len(document["differences"]) == 32 and document["verdict"] == result.verdict


@pytest.mark.parametrize(
    ("outcomes", "kinds", "settings", "message"),
    [
        ({"a": [True]}, {}, {}, "needs a kind"),
        ({"a": [True]}, {"a": "negative"}, {}, "needs a kind"),
        ({"a": [1]}, {"a": "positive"}, {}, "not True, False or None"),
        ({"a": [True]}, {"a": "positive"}, {"level": 1.0}, "level"),
        ({"a": [True]}, {"a": "positive"}, {"resamples": 0}, "resamples"),
    ],
)
def test_bad_input_is_refused_with_a_reason(outcomes, kinds, settings, message):
    with pytest.raises(ValueError, match=message):
        summarize_arm(outcomes, kinds, seed=0, **settings)
