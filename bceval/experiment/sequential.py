"""Group sequential experiments (`stop: when: decided`): a look after every epoch, stopping for efficacy when the
paired statistic crosses an alpha-spending boundary, for futility when the planned effect is no longer plausible
(non-binding beta spending), or at the design's last look. docs/experiments.md gives the formulas.

The statistic of a look is the studentised sign-flip statistic of the per-case differences d_i (treatment's pass
rate minus the control's over the epochs answered so far): Z(delta) = sum(d_i - delta) / sqrt(sum (d_i - delta)^2),
approximately standard normal when the mean difference is delta. Looks are epochs: epoch k of K is information
fraction t = k / K (with no effect every epoch adds the same information to sum d_i). Boundaries come from the
recursive numerical integration of Armitage, McPherson and Rowe over the looks' joint normal distribution, so they
are deterministic functions of the design."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from bceval.experiment.model import ExperimentFile, Stop

NORMAL = NormalDist()
GRID = 120  # integration points per look
EDGE = 8.0  # |Z| beyond which no probability is left worth counting
# Hwang-Shih-DeCani spending (-4 is close to O'Brien-Fleming, 1 to Pocock). Chosen by `experiment simulate` on 32
# cases at pass rates 0.3, 0.5 and 0.7 (docs/experiments.md): efficacy spends a little earlier than O'Brien-Fleming;
# futility (non-binding, so alpha does not depend on it) may stop early.
EFFICACY_GAMMA = -2.0
FUTILITY_GAMMA = 0.5


def spent(level: float, t: float, gamma: float) -> float:
    """Hwang-Shih-DeCani spending: level x (1 - exp(-gamma t)) / (1 - exp(-gamma)), all of it at t = 1."""
    if t >= 1:
        return level
    if gamma == 0:  # the family's limit: spending in proportion to t
        return level * t
    return level * (1 - math.exp(-gamma * t)) / (1 - math.exp(-gamma))


def _grid(low: float, high: float) -> list[float]:
    step = (high - low) / (GRID - 1)
    return [low + step * index for index in range(GRID)]


def _trapezoid(values: Sequence[float], step: float) -> float:
    return step * (sum(values) - (values[0] + values[-1]) / 2)


def _beyond(points: list[float], density: list[float], level: float, dt: float) -> float:
    """P(B at the next look > level, no stop before) from B's sub-density at the last look, dt later."""
    root = math.sqrt(dt)
    tails = [NORMAL.cdf((b - level) / root) for b in points]
    if len(points) == 1:
        return tails[0]
    return _trapezoid([d * p for d, p in zip(density, tails, strict=True)], points[1] - points[0])


def _advance(points: list[float], density: list[float], new: list[float], dt: float) -> list[float]:
    """B's sub-density on `new`, dt after the last look (its density on `points`)."""
    root = math.sqrt(dt)
    if len(points) == 1:
        return [NORMAL.pdf((x - points[0]) / root) / root for x in new]
    step = points[1] - points[0]
    pairs = list(zip(points, density, strict=True))
    return [_trapezoid([d * NORMAL.pdf((x - b) / root) / root for b, d in pairs], step) for x in new]


@functools.lru_cache(maxsize=256)
def boundaries(level: float, looks: int, gamma: float, two_sided: bool) -> tuple[float, ...]:
    """Critical |Z| (two-sided) or Z (one-sided, upper) of looks 1..looks at t = k / looks with no drift, each look
    spending its share of `level`; math.inf where a look may spend nothing. A Brownian motion B(t) = Z sqrt(t) is
    followed on a grid over the region where no look has stopped yet."""
    sides = 2 if two_sided else 1
    found: list[float] = []
    points, density, dt = [0.0], [1.0], 1 / looks  # B at the last look: a point mass at 0
    for look in range(1, looks + 1):
        root_t = math.sqrt(look / looks)
        share = spent(level, look / looks, gamma) - spent(level, (look - 1) / looks, gamma)
        c = math.inf
        if share > 0:
            low, high = 0.0, EDGE
            for _ in range(40):
                middle = (low + high) / 2
                crossed = sides * _beyond(points, density, middle * root_t, dt)
                low, high = (low, middle) if crossed < share else (middle, high)
            c = high
        found.append(c)
        new = _grid(-min(c, EDGE) * root_t if two_sided else -EDGE * root_t, min(c, EDGE) * root_t)
        points, density = new, _advance(points, density, new, dt)
    return tuple(found)


@dataclass(frozen=True)
class Design:
    """What a sequential experiment is held to; looks are epochs 1..max_epochs."""

    alpha: float
    power: float
    effect: float  # the smallest mean per-case difference worth finding (either way)
    max_epochs: int

    def efficacy(self, level: float) -> tuple[float, ...]:
        return boundaries(level, self.max_epochs, EFFICACY_GAMMA, True)

    @property
    def futility(self) -> tuple[float, ...]:
        return boundaries(1 - self.power, self.max_epochs, FUTILITY_GAMMA, False)


def statistic(differences: Sequence[float], delta: float = 0.0) -> float:
    """Z(delta); 0 when every difference is delta (nothing speaks against it)."""
    squares = sum((d - delta) ** 2 for d in differences)
    return sum(d - delta for d in differences) / math.sqrt(squares) if squares > 0 else 0.0


def interval(differences: Sequence[float], critical: float) -> tuple[float, float]:
    """The deltas Z(delta) does not reject at `critical`: mean +- c sqrt(SS / (n (n - c^2))), the repeated
    confidence interval when `critical` is the look's boundary; -1..1 when n <= c^2 (too few cases)."""
    n = len(differences)
    if not n or n <= critical**2:
        return -1.0, 1.0
    mean = sum(differences) / n
    half = critical * math.sqrt(sum((d - mean) ** 2 for d in differences) / (n * (n - critical**2)))
    return max(-1.0, mean - half), min(1.0, mean + half)


@dataclass(frozen=True)
class ArmLook:
    name: str
    cases: int
    difference: float | None
    z: float
    boundary: float  # the efficacy boundary this arm was held to (Holm's share of alpha)
    interval: tuple[float, float]  # the repeated confidence interval at that boundary
    decision: str  # better, worse, futile, continue


@dataclass(frozen=True)
class Look:
    look: int
    arms: tuple[ArmLook, ...]
    reason: str | None  # efficacy, futility, max; None: go on

    @property
    def stopped(self) -> bool:
        return self.reason is not None


def look(design: Design, epoch: int, arms: Mapping[str, Sequence[float]]) -> Look:
    """The look after `epoch` epochs: per treatment arm its per-case differences; Holm's step-down over the arms
    (the arm with the largest |Z| is held to alpha / m, the next to alpha / (m - 1), ...). Once a step fails, that
    arm and the rest take their intervals at alpha / m, which hold 0 as their verdicts say."""
    names = sorted(arms, key=lambda name: (-abs(statistic(arms[name])), name))
    index = min(epoch, design.max_epochs) - 1
    futile_at = design.futility[index]
    strictest = design.efficacy(design.alpha / max(len(names), 1))[index]
    results: dict[str, ArmLook] = {}
    rejecting = True
    for rank, name in enumerate(names):
        differences = arms[name]
        critical = design.efficacy(design.alpha / (len(names) - rank))[index]
        z = statistic(differences)
        rejecting = rejecting and abs(z) >= critical and bool(differences)
        critical = critical if rejecting else strictest
        low, high = interval(differences, critical)
        futile = statistic(differences, design.effect) < -futile_at
        decision = ("better" if z > 0 else "worse") if rejecting else "futile" if futile else "continue"
        mean = sum(differences) / len(differences) if differences else None
        results[name] = ArmLook(name, len(differences), mean, z, critical, (low, high), decision)
    ordered = tuple(results[name] for name in arms)
    decisions = {arm.decision for arm in ordered}
    reason = None
    if "continue" not in decisions:
        reason = "efficacy" if decisions & {"better", "worse"} else "futility"
    elif epoch >= design.max_epochs:
        reason = "max"
    return Look(epoch, ordered, reason)


def design_of(experiment: ExperimentFile) -> Design | None:
    """The sequential design of an experiment whose file says `stop: when: decided`; None for a fixed one."""
    stop = experiment.stop
    if stop is None or stop.when != "decided":
        return None
    return Design(experiment.alpha, stop.power, stop.effect, stop.maxEpochs)


def until_decided(experiment: ExperimentFile) -> ExperimentFile:
    """The experiment with `stop: when: decided` (--until-decided), its other stop fields as the file set them."""
    stop = (experiment.stop or Stop()).model_copy(update={"when": "decided"})
    return experiment.model_copy(update={"stop": stop})
