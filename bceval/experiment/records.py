"""The records of the experiment statistics (frozen dataclasses, as report.json has them). An arm's outcomes map a
case id to one entry per epoch: True, False or None (no answer), and None is never counted as a fail."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

CaseKind = Literal["positive", "clean"]
Outcome = bool | None
Outcomes = Mapping[str, Sequence[Outcome]]
Verdict = Literal["better", "worse", "mixed", "no detectable difference", "no verdict"]

KINDS: tuple[CaseKind, ...] = ("positive", "clean")
KIND_LABELS: dict[str, str] = {"positive": "recall", "clean": "clean rate", "all": "all cases"}
MIN_RELIABLE_CASES = 15  # below this many cases an interval of a kind is too rough to lean on

Counts = tuple[int, int]  # one case: (passed, answered)


@dataclass(frozen=True)
class Interval:
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
class Rate:
    """passed / total; `value` is None when total is 0 (nothing answered), and `interval` None when not estimated.
    unit says what is counted: "answers" ((case, epoch) pairs) or "cases"."""

    passed: int
    total: int
    value: float | None
    unit: Literal["answers", "cases"] = "answers"
    interval: Interval | None = None


@dataclass(frozen=True)
class EpochRates:
    """Recall and clean rate of one epoch alone (epoch i = index i of every case's outcomes), over its answers."""

    epoch: int
    recall: Rate
    clean_rate: Rate


@dataclass(frozen=True)
class KindRates:
    """One per-case rate for positive cases, clean cases and both together; only cases answered at least once count."""

    positive: Rate
    clean: Rate
    all: Rate


@dataclass(frozen=True)
class ArmSummary:
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
class LeftOutCase:
    """A case the comparison could not pair, and why."""

    case_id: str
    reason: str


@dataclass(frozen=True)
class CaseDifference:
    """One paired case: each arm's pass rate over its answered epochs, and treatment minus control."""

    case_id: str
    kind: CaseKind
    control_rate: float
    treatment_rate: float
    difference: float


@dataclass(frozen=True)
class PermutationTest:
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
class PairedComparison:
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
class MissingCheck:
    """Whether the arms lost answers at rates chance explains: (case, epoch) slots without an answer per arm over
    the cases either arm covers, and a two-sided Fisher exact test on those counts."""

    control_missing: int
    control_slots: int
    treatment_missing: int
    treatment_slots: int
    p_value: float
    method: str = "two-sided Fisher exact test on unanswered (case, epoch) slots"


@dataclass(frozen=True)
class ArmComparison:
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
