"""The sequential design (issue 49): its boundaries, its repeated confidence intervals, its looks, and its
calibration on seeded simulated experiments (32 cases, no effect: the adaptive type-I error)."""

from __future__ import annotations

import json
import math
import random
from statistics import NormalDist

import pytest

from bceval.experiment.power import BaseRate
from bceval.experiment.sequential import Design, boundaries, interval, look, spent, statistic
from bceval.experiment.simulate import World, adaptive, simulate

DESIGN = Design(alpha=0.05, power=0.8, effect=0.2, max_epochs=4)


def test_one_look_is_the_fixed_test_and_spending_reaches_its_level_at_the_last_look():
    assert boundaries(0.05, 1, -4.0, True)[0] == pytest.approx(NormalDist().inv_cdf(0.975), abs=1e-6)
    assert boundaries(0.2, 1, 1.0, False)[0] == pytest.approx(NormalDist().inv_cdf(0.8), abs=1e-6)
    assert spent(0.05, 1.0, -4.0) == 0.05 and spent(0.05, 0.5, -4.0) < 0.05 * 0.2
    efficacy = boundaries(0.05, 5, -4.0, True)
    assert list(efficacy) == sorted(efficacy, reverse=True) and 2.0 < efficacy[-1] < 2.05  # near O'Brien-Fleming
    pocock = boundaries(0.05, 3, 1.0, True)
    assert max(pocock) - min(pocock) < 0.05 and 2.25 < pocock[0] < 2.32  # gamma 1: near Pocock's 2.29


def test_the_boundaries_hold_the_chance_of_any_crossing_to_alpha():
    rng = random.Random(7)
    efficacy = boundaries(0.05, 4, -4.0, True)
    crossed = 0
    for _ in range(20000):
        b = 0.0
        for k in range(1, 5):
            b += rng.gauss(0, 0.5)  # Brownian motion at t = k / 4
            if abs(b / math.sqrt(k / 4)) >= efficacy[k - 1]:
                crossed += 1
                break
    assert crossed / 20000 == pytest.approx(0.05, abs=0.006)


def test_the_repeated_interval_excludes_zero_exactly_when_the_statistic_crosses():
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(2, 40)
        differences = [rng.choice([-1, -0.5, 0, 0, 0.5, 1, 1]) for _ in range(n)]
        critical = rng.uniform(1.5, 4.0)
        low, high = interval(differences, critical)
        assert (low > 0 or high < 0) == (abs(statistic(differences)) > critical + 1e-12 and n > critical**2)
    assert interval([1.0] * 4, 2.5) == (-1.0, 1.0)  # 4 cases cannot say anything at |Z| 2.5


def test_identical_arms_stop_for_futility_and_a_clear_difference_for_efficacy():
    same = look(DESIGN, 1, {"b": [0.0] * 32})
    assert same.reason == "futility" and same.arms[0].decision == "futile" and same.arms[0].interval == (0.0, 0.0)
    clear = look(DESIGN, 2, {"b": [1.0] * 16 + [0.0] * 16})
    assert clear.reason == "efficacy" and clear.arms[0].decision == "better" and clear.arms[0].interval[0] > 0
    unclear = look(DESIGN, 1, {"b": [1.0, -1.0, 0.0, 0.5] * 8})
    assert unclear.reason is None and look(DESIGN, 4, {"b": [1.0, -1.0, 0.0, 0.5] * 8}).reason == "max"


def test_holm_holds_the_second_arm_to_the_whole_alpha_only_after_the_first_crossed():
    arms = {"b": [1.0] * 10 + [0.0] * 22, "c": [-1.0] * 12 + [0.0] * 20}
    result = look(DESIGN, 3, arms)
    by_name = {arm.name: arm for arm in result.arms}
    assert by_name["c"].boundary > by_name["b"].boundary  # c has the larger |Z|: held to alpha / 2
    assert [arm.name for arm in result.arms] == ["b", "c"]


def test_the_adaptive_type_one_error_stays_at_alpha_over_two_thousand_seeded_experiments():
    """Calibration (issue 49's done-means): 32 cases, control rates 0.3, 0.5, 0.7, no effect."""
    for rate in (0.3, 0.5, 0.7):
        world = World([BaseRate("positive", rate)], 32, 1, seed=0)
        decisions = [adaptive(world, DESIGN, 0.0, run)[1] for run in range(2000)]
        type_one = sum(decision != "none" for decision in decisions) / 2000
        assert type_one <= 0.06, (rate, type_one)  # measured: 0.018 / 0.018 / 0.013 over 1000


def test_simulate_is_deterministic_and_reports_both_designs():
    world = World([BaseRate("positive", 0.5)], 32, 1, seed=0)
    first = simulate(world, DESIGN, 60)
    assert json.dumps(first) == json.dumps(simulate(world, DESIGN, 60))
    assert set(first["fixed"]) >= {"answers", "power", "typeI"}
    assert set(first["adaptive"]) >= {"answersNull", "answersEffect", "power", "typeI"}
    assert first["adaptive"]["answersNull"] < first["fixed"]["answers"]
