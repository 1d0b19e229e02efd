"""The experiment report as a model: from each (arm, epoch, case) outcome, already read from disk, to what each
arm scored over its epochs, how sure that is, and whether a treatment arm did better than the control case by
case. No disk walking and no printing here: `bceval.steps.experiment_report` reads the runs, `render` writes the
Markdown and HTML."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from bceval.experiment.plan import Plan
from bceval.experiment.stats import (
    ArmComparison,
    ArmSummary,
    Record,
    compare_treatments,
    obrien_fleming,
    refuse,
    summarize_arm,
)
from bceval.usage import Usage, UsageTotal

REPORT_SCHEMA_VERSION = 2


@dataclass(frozen=True, kw_only=True)
class ArmUsage(Record):
    """What an arm's own answers cost (answers shared from another arm cost it nothing); None is unknown."""

    costUsd: float | None = None
    costKnown: int
    wallSeconds: float | None = None
    agentSeconds: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None


@dataclass(frozen=True, kw_only=True)
class MeasureRate(Record):
    passed: int
    total: int
    value: float | None


@dataclass(frozen=True, kw_only=True)
class MeasureMean(Record):
    mean: float | None
    reports: int


@dataclass(frozen=True, kw_only=True)
class GuidanceMeasures(Record):
    """A guidance arm's reports over every epoch: the outcome the fixture expects, and what they cited."""

    outcomeAgreement: MeasureRate
    citedRecall: MeasureMean
    citedPrecision: MeasureMean


@dataclass(frozen=True, kw_only=True)
class ArmReport(Record):
    name: str
    control: bool
    evaluator: str = "review"
    settings: dict[str, Any]
    corpus: str
    commit: str | None
    variant: str
    cases: int
    answered: int
    shared: int
    fromCache: int
    infrastructureFailures: int
    missing: int
    notStarted: int = 0
    unanswered: int
    usage: ArmUsage
    summary: ArmSummary
    guidance: GuidanceMeasures | None = None
    manifestDialect: str | None = None


@dataclass(frozen=True, kw_only=True)
class ComparisonReport(Record):
    arm: str
    control: str
    result: ArmComparison


@dataclass(frozen=True, kw_only=True)
class CaseLine(Record):
    id: str
    modelId: str
    domain: str
    kind: str  # "positive" or "clean"
    outcomes: dict[str, list[bool | None]]
    transcripts: dict[str, list[str | None]]


@dataclass(frozen=True, kw_only=True)
class Look(Record):
    """An earlier report of the same experiment, made with fewer epochs than this one."""

    reportId: str
    createdAt: str
    epochs: int


@dataclass(frozen=True, kw_only=True)
class Sequential(Record):
    """How often the experiment has been looked at, and what that does to the level the verdicts are held to."""

    look: int
    plannedLooks: int | None
    planned: bool
    alphaUsed: float
    note: str


@dataclass(frozen=True, kw_only=True)
class BudgetReport(Record):
    """The experiment's one budget over every arm and epoch (maxCost, else --max-cost)."""

    maxCost: float
    knownCost: float
    reached: bool
    notStarted: int


@dataclass(frozen=True, kw_only=True)
class ExperimentReport(Record):
    """report.json; what each field means: `bceval.experiment.report_schema` (and the JSON Schema from it)."""

    schemaVersion: int = REPORT_SCHEMA_VERSION
    name: str
    file: str | None
    reportId: str
    createdAt: str
    epochs: int
    alpha: float
    seed: int
    differing: list[str]
    warnings: list[str]
    partial: bool
    budget: BudgetReport | None = None
    earlierLooks: list[Look]
    sequential: Sequential
    arms: list[ArmReport]
    comparisons: list[ComparisonReport]
    cases: list[CaseLine]


@dataclass(frozen=True)
class CaseOutcome:
    """One (arm, epoch, case) as its run left it: passed (None: no result yet), where its transcript is (relative to
    the report) and what its answer was (missing, an infrastructure failure, shared from another arm, answered,
    from the cache), with the answer's usage record and, for a guidance case, its measures."""

    id: str
    model_id: str
    domain: str
    kind: str  # "positive" or "clean"
    passed: bool | None
    transcript: str | None = None
    missing: bool = False
    infra: bool = False
    not_started: bool = False  # the experiment's budget was reached before this answer was asked
    shared: bool = False
    answered: bool = False
    cached: bool = False
    usage: Any = None  # a usage record (None or not a record: nothing is known of it)
    measure: Any = None  # bceval.evaluators.guidance.scoring.CaseMeasures of a guidance case, or None


@dataclass(frozen=True)
class EpochOutcomes:
    cases: list[CaseOutcome]
    usage: Any = None  # a usage record of the whole epoch (a guidance run's), added before its cases'


@dataclass(frozen=True)
class ArmOutcomes:
    """Every epoch of one arm: `case_ids` in the order the arm covers them (review: its variant's order; guidance:
    its manifest's); `measured` when its evaluator measures its reports (their measures are added up)."""

    case_ids: list[str]
    epochs: list[EpochOutcomes]
    measured: bool = False
    dialect: str | None = None  # a review arm's manifest dialect (bceval.evaluators.review.manifest)


@dataclass
class ArmTally:
    """What one arm's epochs add up to, before the statistics."""

    per_case: dict[str, list[bool | None]]
    counts: dict[str, int]
    total: UsageTotal = field(default_factory=UsageTotal)
    cost_known: int = 0  # answers whose agent reported a cost
    guidance: GuidanceMeasures | None = None

    def add_usage(self, record: Any) -> None:
        """One answer's usage record (None or not a record: nothing is known of it)."""
        if isinstance(record, dict) and record:
            self.cost_known += self.total.add(record)

    @property
    def usage(self) -> Usage:
        return self.total.total()

    def arm_usage(self) -> ArmUsage:
        kept = ("costUsd", "wallSeconds", "agentSeconds", "inputTokens", "outputTokens")
        usage = self.usage
        return ArmUsage(costKnown=self.cost_known, **{name: getattr(usage, name) for name in kept})


COUNTS = ("answered", "shared", "fromCache", "infra", "missing", "notStarted")


def _line(lines: dict[str, dict[str, Any]], case_id: str, model_id: str, domain: str, kind: str) -> dict[str, Any]:
    line = lines.get(case_id)
    if line is None:
        line = {"id": case_id, "modelId": model_id, "domain": domain, "kind": kind, "outcomes": {}, "transcripts": {}}
        lines[case_id] = line
    return line


def tally_arm(name: str, outcomes: ArmOutcomes, kinds: dict[str, str], lines: dict) -> ArmTally:
    """One arm's epochs added up; each case's outcomes and transcripts go onto its line of the report."""
    tally = ArmTally({case_id: [] for case_id in outcomes.case_ids}, dict.fromkeys(COUNTS, 0))
    agreed, recalls, precisions = [], [], []
    for epoch in outcomes.epochs:
        tally.add_usage(epoch.usage)
        for unit in epoch.cases:
            tally.per_case[unit.id].append(unit.passed)
            kinds.setdefault(unit.id, unit.kind)
            line = _line(lines, unit.id, unit.model_id, unit.domain, kinds[unit.id])
            line["outcomes"].setdefault(name, []).append(unit.passed)
            line["transcripts"].setdefault(name, []).append(unit.transcript)
            if unit.missing:
                tally.counts["missing"] += 1
                continue
            if unit.not_started:
                tally.counts["notStarted"] += 1
                continue
            if unit.infra:
                tally.counts["infra"] += 1
            if unit.shared:
                tally.counts["shared"] += 1
                continue
            if unit.answered:
                tally.counts["answered"] += 1
                tally.counts["fromCache"] += bool(unit.cached)
            if not unit.cached:  # a cached answer's cost stays with the run that paid for it
                tally.add_usage(unit.usage)
            measure = unit.measure
            if measure is not None and measure.outcome_agrees is not None:
                agreed.append(measure.outcome_agrees)
                recalls.append(measure.recall)
                precisions.append(measure.precision)
    if outcomes.measured:
        tally.guidance = GuidanceMeasures(
            outcomeAgreement=MeasureRate(
                passed=sum(agreed), total=len(agreed), value=sum(agreed) / len(agreed) if agreed else None
            ),
            citedRecall=MeasureMean(mean=sum(recalls) / len(recalls) if recalls else None, reports=len(recalls)),
            citedPrecision=MeasureMean(
                mean=sum(precisions) / len(precisions) if precisions else None, reports=len(precisions)
            ),
        )
    return tally


def sequential_plan(looks: int | None, earlier: list[Look], alpha: float) -> Sequential:
    """This report's look and the level it may spend: alpha when one look was planned and this is it; under
    `looks: K` the O'Brien-Fleming share of alpha for look j of K (equally spaced looks assumed); with looks
    nobody planned, alpha still, and a note that the chance of a false verdict is higher than it."""
    look = len(earlier) + 1
    if looks is None:
        if not earlier:
            return Sequential(look=1, plannedLooks=None, planned=True, alphaUsed=alpha, note="one look, as planned")
        return Sequential(
            look=look,
            plannedLooks=None,
            planned=False,
            alphaUsed=alpha,
            note=(
                f"not planned in advance: {len(earlier)} earlier report(s) of this experiment had fewer epochs, and "
                f"testing again after adding epochs makes a false verdict likelier than alpha {alpha:g}; declare "
                "`looks: N` in the experiment file to spend alpha over the looks"
            ),
        )
    if look > looks:
        return Sequential(
            look=look,
            plannedLooks=looks,
            planned=False,
            alphaUsed=0.0,
            note=f"look {look} of a plan of {looks}: beyond the plan, so no verdict can be given",
        )
    spent = obrien_fleming(alpha, look, looks)
    return Sequential(
        look=look,
        plannedLooks=looks,
        planned=True,
        alphaUsed=spent,
        note=f"look {look} of {looks} planned (O'Brien-Fleming alpha spending): this look may spend {spent:.4g}",
    )


def build_report(
    plan: Plan,
    outcomes: dict[str, ArmOutcomes],
    created: str,
    earlier: list[Look] | None = None,
    budget: tuple[float, float] | None = None,
) -> ExperimentReport:
    """The report of `plan` from every arm's outcomes (by arm name); `earlier`: earlier reports of the experiment
    with fewer epochs (the looks before this one); `budget`: the experiment's (limit, known cost) in USD."""
    experiment = plan.experiment
    earlier = earlier or []
    per_arm: dict[str, dict[str, list[bool | None]]] = {}
    kinds: dict[str, str] = {}
    lines: dict[str, dict[str, Any]] = {}
    arms = []
    for arm in plan.arms:
        tally = tally_arm(arm.name, outcomes[arm.name], kinds, lines)
        per_arm[arm.name] = tally.per_case
        summary = summarize_arm(
            tally.per_case,
            {c: kinds[c] for c in tally.per_case},  # type: ignore[misc]
            seed=experiment.seed,
            epochs=experiment.epochs,
        )
        arms.append(
            ArmReport(
                name=arm.name,
                control=arm.control,
                evaluator=arm.evaluator,
                settings=dict(arm.fields),
                corpus=str(arm.corpus),
                commit=arm.commit,
                variant=arm.variant,
                cases=len(tally.per_case),
                answered=tally.counts["answered"],
                shared=tally.counts["shared"],
                fromCache=tally.counts["fromCache"],
                infrastructureFailures=tally.counts["infra"],
                missing=tally.counts["missing"],
                notStarted=tally.counts["notStarted"],
                unanswered=summary.unanswered,
                usage=tally.arm_usage(),
                summary=summary,
                guidance=tally.guidance,
                manifestDialect=outcomes[arm.name].dialect,
            )
        )
    sequential = sequential_plan(experiment.looks, earlier, experiment.alpha)
    control = plan.control.name
    results = compare_treatments(
        per_arm[control],
        {arm.name: per_arm[arm.name] for arm in plan.arms[1:]},
        kinds,  # type: ignore[arg-type]
        alpha=experiment.alpha,
        alpha_used=sequential.alphaUsed,
        seed=experiment.seed,
        epochs=experiment.epochs,
    )
    if sequential.alphaUsed == 0.0:  # beyond a declared plan: refuse rather than test at level 0
        results = {name: refuse(result, sequential.note) for name, result in results.items()}
    comparisons = [ComparisonReport(arm=name, control=control, result=result) for name, result in results.items()]
    identity = {
        "name": experiment.name,
        "arms": [(arm.name, arm.fields, arm.commit) for arm in plan.arms],
        "outcomes": per_arm,
    }
    report_id = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return ExperimentReport(
        name=experiment.name,
        file=str(plan.source) if plan.source else None,
        reportId=report_id,
        createdAt=created,
        epochs=experiment.epochs,
        alpha=experiment.alpha,
        seed=experiment.seed,
        differing=plan.differing,
        warnings=plan.warnings,
        partial=any(arm.unanswered for arm in arms),
        budget=None
        if budget is None
        else BudgetReport(
            maxCost=budget[0],
            knownCost=budget[1],
            reached=round(budget[1], 9) >= budget[0],  # as bceval.steps.answer.reached compares them
            notStarted=sum(arm.notStarted for arm in arms),
        ),
        earlierLooks=earlier,
        sequential=sequential,
        arms=arms,
        comparisons=comparisons,
        cases=[CaseLine(**lines[key]) for key in sorted(lines, key=lambda k: (lines[k]["domain"], k))],
    )


def earlier_looks(previous: Any, epochs: int) -> list[Look]:
    """The looks before a report of `epochs` epochs, from the experiment's previous report.json (already parsed;
    anything unreadable counts as no earlier report): its own earlier looks, and itself when it had fewer epochs."""
    if not isinstance(previous, dict):
        return []
    looks: list[Look] = []
    for item in [*(previous.get("earlierLooks") or []), previous]:
        look = _look(item)
        if look is not None and look.epochs < epochs and all(look.reportId != seen.reportId for seen in looks):
            looks.append(look)
    return looks


def _look(item: Any) -> Look | None:
    """An earlier report as a look, or None when it does not say which it was, when, and with how many epochs."""
    if not isinstance(item, dict):
        return None
    report_id, created, epochs = item.get("reportId"), item.get("createdAt"), item.get("epochs")
    if not (isinstance(report_id, str) and isinstance(created, str) and type(epochs) is int and epochs >= 1):
        return None
    return Look(reportId=report_id, createdAt=created, epochs=epochs)
