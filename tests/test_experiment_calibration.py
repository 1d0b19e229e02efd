"""Calibration of the experiment verdicts on seeded synthetic arms (issue 23, "done means"): how often a verdict
appears when nothing differs, when infrastructure failures differ, with several arms, and how often a real
+0.2 difference is found. 32 cases (16 positive, 16 clean) x 5 epochs; each case's pass rate drawn uniformly."""

from __future__ import annotations

import random

from bceval.experiment.power import BaseRate, simulate_power
from bceval.experiment.stats import compare_treatments

CASES = [f"case-{index:02d}" for index in range(32)]
KINDS = {case: "positive" if index < 16 else "clean" for index, case in enumerate(CASES)}
SEEDS = 1000
VERDICTS = ("better", "worse", "mixed")


def arm(rng: random.Random, rates: dict, *, infra: float = 0.0, failures_lost: float = 0.0) -> dict:
    """Five epochs per case; `infra`: any answer is lost with this chance; `failures_lost`: a failed answer is."""
    outcomes = {}
    for case in CASES:
        row = []
        for _ in range(5):
            passed = rng.random() < rates[case]
            lost = rng.random() < infra or (not passed and rng.random() < failures_lost)
            row.append(None if lost else passed)
        outcomes[case] = row
    return outcomes


def verdict_rate(make) -> tuple[float, float]:
    """(share of seeds in which any treatment arm got a verdict, share in which one was refused)."""
    verdicts = refusals = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        rates = {case: rng.random() for case in CASES}
        control, treatments = make(rng, rates)
        results = compare_treatments(control, treatments, KINDS, seed=seed, resamples=1)
        verdicts += any(result.verdict in VERDICTS for result in results.values())
        refusals += any(result.verdict == "no verdict" for result in results.values())
    return verdicts / SEEDS, refusals / SEEDS


def test_identical_arms_get_a_verdict_at_most_five_percent_of_the_time():
    verdicts, refusals = verdict_rate(lambda rng, rates: (arm(rng, rates), {"treatment": arm(rng, rates)}))
    assert verdicts <= 0.05 and refusals == 0  # measured: 0.028


def test_identical_arms_losing_answers_at_different_rates_are_refused_not_called_better_or_worse():
    for infra, failures_lost in ((0.10, 0.0), (0.03, 0.0), (0.0, 0.30)):
        verdicts, refusals = verdict_rate(
            lambda rng, rates, i=infra, f=failures_lost: (
                arm(rng, rates),
                {"treatment": arm(rng, rates, infra=i, failures_lost=f)},
            )
        )
        assert verdicts <= 0.05, (infra, failures_lost, verdicts)
        if infra == 0.10 or failures_lost == 0.30:
            assert refusals > 0.95  # measured: 0.999 and 1.0


def test_three_identical_treatment_arms_keep_the_family_wise_rate_at_five_percent():
    verdicts, _ = verdict_rate(lambda rng, rates: (arm(rng, rates), {f"t{n}": arm(rng, rates) for n in range(3)}))
    assert verdicts <= 0.05  # measured: 0.027


def test_a_difference_of_0_2_at_32_cases_by_5_epochs_is_found_nine_times_in_ten():
    noisiest = [BaseRate("positive", 0.5), BaseRate("clean", 0.5)]
    cell = simulate_power(noisiest, effect=0.2, cases=32, epochs=5, simulations=300, seed=1)
    assert cell.power >= 0.9  # measured: 0.923
