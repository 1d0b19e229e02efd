"""Planning an experiment (`bceval experiment plan`): power is the share of seeded simulated experiments whose
verdict (`compare_treatments`) is "better" when every case's pass rate moves by one amount. With several treatment
arms the true one is held to alpha / arms (Holm's first step), so the figure is on the safe side."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bceval.experiment.records import CaseKind
from bceval.experiment.stats import compare_arms

CASE_COUNTS = (8, 16, 32, 64, 128, 256)
EPOCH_COUNTS = (1, 3, 5, 10)
SIMULATIONS = 200


@dataclass(frozen=True)
class BaseRate:
    """One case of the control as an earlier run saw it: its kind and its pass rate over its answered epochs."""

    kind: CaseKind
    rate: float


@dataclass(frozen=True)
class PowerCell:
    cases: int
    epochs: int
    power: float  # share of the simulated experiments whose verdict was "better"


def shifted(rates: Sequence[float], effect: float) -> list[float]:
    """The rates moved by one amount, clipped to 0..1, so that their mean moves by `effect` (bisection)."""
    low, high = -1.0, 1.0
    for _ in range(50):
        middle = (low + high) / 2
        moved = sum(min(1.0, max(0.0, rate + middle)) - rate for rate in rates) / len(rates)
        low, high = (middle, high) if moved < effect else (low, middle)
    return [min(1.0, max(0.0, rate + high)) for rate in rates]


def reachable(base: Sequence[BaseRate], effect: float) -> bool:
    """Whether the mean per-case rate can move by `effect` at all (it cannot rise above 1)."""
    rates = [case.rate for case in base]
    room = sum(1 - rate for rate in rates) if effect > 0 else sum(rates)
    return abs(effect) * len(rates) <= room


def simulate_power(
    base: Sequence[BaseRate],
    *,
    effect: float,
    cases: int,
    epochs: int,
    alpha: float = 0.05,
    treatment_arms: int = 1,
    simulations: int | None = None,
    seed: int = 0,
) -> PowerCell:
    """The share of `simulations` experiments of `cases` cases (drawn with replacement from `base`) x `epochs`
    epochs whose verdict is "better" when the treatment moves the mean per-case pass rate by `effect`."""
    simulations = simulations or SIMULATIONS
    rng = random.Random(f"plan:{seed}:{cases}:{epochs}:{effect}")
    better = 0
    for _ in range(simulations):
        drawn = [rng.choice(base) for _ in range(cases)]
        control_rates = [case.rate for case in drawn]
        treatment_rates = shifted(control_rates, effect)
        names = [f"case-{index:04d}" for index in range(cases)]
        kinds = {name: case.kind for name, case in zip(names, drawn, strict=True)}
        control = {n: [rng.random() < p for _ in range(epochs)] for n, p in zip(names, control_rates, strict=True)}
        treatment = {n: [rng.random() < p for _ in range(epochs)] for n, p in zip(names, treatment_rates, strict=True)}
        result = compare_arms(  # one resample: the verdict does not depend on the intervals
            control, treatment, kinds, alpha=alpha, alpha_used=alpha / treatment_arms, seed=seed, resamples=1
        )
        better += result.verdict == "better"
    return PowerCell(cases=cases, epochs=epochs, power=better / simulations)


def power_table(base: Sequence[BaseRate], *, power: float, **options: Any) -> list[PowerCell]:
    """Power for each of EPOCH_COUNTS at growing CASE_COUNTS, stopping at the first case count that reaches `power`;
    `options`: simulate_power's effect, alpha, treatment_arms and seed."""
    cells = []
    for epochs in EPOCH_COUNTS:
        for cases in CASE_COUNTS:
            cells.append(simulate_power(base, cases=cases, epochs=epochs, **options))
            if cells[-1].power >= power:
                break
    return cells


def smallest(cells: Sequence[PowerCell], power: float) -> PowerCell | None:
    """The design reaching `power` with the fewest answers per arm (cases x epochs); ties: fewer epochs."""
    enough = [cell for cell in cells if cell.power >= power]
    return min(enough, key=lambda cell: (cell.cases * cell.epochs, cell.epochs), default=None)
