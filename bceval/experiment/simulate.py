"""`bceval experiment simulate`: seeded experiments of a file's design under no effect and under its planned effect,
answered epoch by epoch, judged by the code the report uses: the sequential looks (bceval.experiment.sequential)
for the adaptive design, and the fixed design's verdict (compare_treatments) at the fewest epochs `experiment plan`
would choose for the same power."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bceval.experiment.power import BaseRate, shifted
from bceval.experiment.sequential import Design, look
from bceval.experiment.stats import compare_treatments

MAX_FIXED_EPOCHS = 100  # the fixed design's search gives up here


@dataclass(frozen=True)
class World:
    """What is simulated: the control's case rates are drawn from `base`, and the first treatment arm moves them
    by `effect` (the others stay at the control's)."""

    base: Sequence[BaseRate]
    cases: int
    treatments: int
    seed: int


def _epochs(world: World, effect: float, run: int) -> Iterator[list[list[bool]]]:
    """Epoch after epoch of one simulated experiment: per arm (control first) each case's outcome."""
    rng = random.Random(f"simulate:{world.seed}:{run}:{effect}")
    drawn = [rng.choice(world.base) for _ in range(world.cases)]
    control = [case.rate for case in drawn]
    rates = [control, shifted(control, effect)] + [control] * (world.treatments - 1)
    while True:
        yield [[rng.random() < rate for rate in arm] for arm in rates]


def adaptive(world: World, design: Design, effect: float, run: int) -> tuple[int, str]:
    """(answers, the first treatment arm's decision) of one sequential experiment."""
    passed = [[0] * world.cases for _ in range(world.treatments + 1)]
    for epoch, outcomes in enumerate(_epochs(world, effect, run), start=1):
        for counts, arm in zip(passed, outcomes, strict=True):
            for index, outcome in enumerate(arm):
                counts[index] += outcome
        arms = {
            f"t{i}": [(t - c) / epoch for t, c in zip(passed[i], passed[0], strict=True)] for i in passed_arms(world)
        }
        result = look(design, epoch, arms)
        if result.stopped:
            decisions = [arm.decision for arm in result.arms]
            return epoch * world.cases * (world.treatments + 1), decisions[0] if effect else _any(decisions)
    raise AssertionError("a design's last look always stops")


def passed_arms(world: World) -> range:
    return range(1, world.treatments + 1)


def _any(decisions: list[str]) -> str:
    return next((decision for decision in decisions if decision in ("better", "worse")), "none")


def fixed(world: World, alpha: float, effect: float, run: int, epochs: int) -> str:
    """The fixed design's verdict of one experiment of `epochs` epochs (the first treatment arm's under an effect,
    any arm's verdict otherwise)."""
    answers = _epochs(world, effect, run)
    outcomes = [next(answers) for _ in range(epochs)]
    names = [f"case-{index:04d}" for index in range(world.cases)]
    kinds = {name: world.base[0].kind for name in names}  # one kind: the overall test is the one that decides
    arms = [
        {name: [epoch[arm][index] for epoch in outcomes] for index, name in enumerate(names)}
        for arm in range(world.treatments + 1)
    ]
    treatments = {f"t{i}": arms[i] for i in passed_arms(world)}
    result = compare_treatments(arms[0], treatments, kinds, alpha=alpha, seed=world.seed, resamples=1)
    verdicts = [comparison.verdict for comparison in result.values()]
    return verdicts[0] if effect else _any(verdicts)


def simulate(world: World, design: Design, seeds: int) -> dict[str, dict[str, float]]:
    """The fixed and the adaptive design's expected answers, power and type-I error over `seeds` experiments."""
    null = [adaptive(world, design, 0.0, run) for run in range(seeds)]
    effect = [adaptive(world, design, design.effect, run) for run in range(seeds)]
    epochs, power = 0, 0.0
    while power < design.power and epochs < MAX_FIXED_EPOCHS:
        epochs += 1
        power = sum(fixed(world, design.alpha, design.effect, run, epochs) == "better" for run in range(seeds)) / seeds
    type_one = sum(fixed(world, design.alpha, 0.0, run, epochs) != "none" for run in range(seeds)) / seeds
    return {
        "fixed": {
            "epochs": epochs,
            "answers": epochs * world.cases * (world.treatments + 1),
            "power": power,
            "typeI": type_one,
        },
        "adaptive": {
            "maxEpochs": design.max_epochs,
            "answersNull": sum(answers for answers, _ in null) / seeds,
            "answersEffect": sum(answers for answers, _ in effect) / seeds,
            "power": sum(decision == "better" for _, decision in effect) / seeds,
            "typeI": sum(decision != "none" for _, decision in null) / seeds,
        },
    }
