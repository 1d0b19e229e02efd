"""The experiment report (report.json): its pydantic models (the source of schemas/experiment-report.schema.json)
and the report built from each (arm, epoch, case) outcome."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError

from bceval.errors import BcevalError
from bceval.experiment.exact import obrien_fleming
from bceval.experiment.model import ExperimentFile
from bceval.experiment.plan import ArmPlan, Plan
from bceval.experiment.records import ArmComparison, ArmSummary
from bceval.experiment.stats import compare_treatments, refuse, summarize_arm
from bceval.models import StrictModel
from bceval.usage import Usage, cached_share

REPORT_SCHEMA_VERSION = 2


class ArmUsage(StrictModel):
    """What an arm's own answers cost (answers shared from another arm cost it nothing); null is unknown."""

    costUsd: float | None = None
    costKnown: int = Field(ge=0, description="Answers whose agent reported a cost.")
    wallSeconds: float | None = None
    agentSeconds: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheReadTokens: int | None = None
    uncachedCostUsd: float | None = Field(default=None, description="The cost had nothing been read from a cache.")
    cachedShare: float | None = Field(default=None, description="Prompt tokens read from the provider's cache.")


class MeasureRate(StrictModel):
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    value: float | None


class MeasureMean(StrictModel):
    mean: float | None = Field(description="Mean over the (case, epoch) reports that could be read; null without any.")
    reports: int = Field(ge=0)


class GuidanceMeasures(StrictModel):
    """A guidance arm's reports over every epoch: the outcome the fixture expects, and what they cited."""

    outcomeAgreement: MeasureRate
    citedRecall: MeasureMean = Field(description="Required articles cited, over the required ones.")
    citedPrecision: MeasureMean = Field(description="Cited articles that are required or optional, over the cited.")


class ArmReport(StrictModel):
    name: str
    control: bool
    evaluator: str = Field(default="review", description="review, or a guidance evaluator (plan, implementation).")
    settings: dict[str, Any] = Field(description="The arm's effective settings; null where bceval's default applies.")
    corpus: str = Field(description="The folder the arm's cases were read from (an export for a ref).")
    commit: str | None = Field(description="The commit a ref named when the experiment ran.")
    variant: str = Field(description="The prepare folder, shared by arms that read the same corpus and manifest.")
    cases: int = Field(ge=0)
    answered: int = Field(ge=0, description="(case, epoch) answers asked of this arm's agent.")
    shared: int = Field(ge=0, description="Answers shared from an earlier arm that asked the identical question.")
    fromCache: int = Field(ge=0, description="Answers an earlier invocation had already paid for.")
    infrastructureFailures: int = Field(ge=0, description="(case, epoch) answers that failed for infrastructure.")
    missing: int = Field(ge=0, description="(case, epoch) pairs without a result yet (e.g. another shard's).")
    notStarted: int = Field(
        default=0, ge=0, description="(case, epoch) answers never started: the experiment had reached its budget."
    )
    unanswered: int = Field(
        ge=0, description="(case, epoch) pairs without an outcome: infrastructure failures, not started and missing."
    )
    usage: ArmUsage
    summary: ArmSummary
    guidance: GuidanceMeasures | None = None
    manifestDialect: str | None = Field(
        default=None,
        description="A review arm's manifest dialect: plain, additionalArticles or articles (its case ids follow it).",
    )


class ComparisonReport(StrictModel):
    arm: str
    control: str
    result: ArmComparison


class CaseLine(StrictModel):
    id: str
    modelId: str
    domain: str
    kind: Literal["positive", "clean"]
    outcomes: dict[str, list[bool | None]] = Field(description="Per arm, per epoch: passed, failed, or null.")
    transcripts: dict[str, list[str | None]] = Field(description="Per arm, per epoch, relative to the report.")


class Look(StrictModel):
    """An earlier report of the same experiment, made with fewer epochs than this one."""

    reportId: str
    createdAt: str
    epochs: int = Field(ge=1)


class Sequential(StrictModel):
    """How often the experiment has been looked at, and what that does to the level the verdicts are held to."""

    look: int = Field(ge=1, description="This report's look: 1 + the earlier reports with fewer epochs.")
    plannedLooks: int | None = Field(description="`looks` of the experiment file; null: one look was planned.")
    planned: bool = Field(description="Whether every look so far was declared in advance.")
    alphaUsed: float = Field(description="The level adjusted p-values are held to at this look.")
    note: str


class BudgetReport(StrictModel):
    """The experiment's one budget over every arm and epoch (maxCost, else --max-cost)."""

    maxCost: float = Field(ge=0, description="The budget in USD.")
    knownCost: float = Field(ge=0, description="What the experiment's answers are known to have cost (its ledger).")
    reached: bool = Field(description="The known cost reached the budget: no new case started after that.")
    notStarted: int = Field(ge=0, description="(case, epoch) answers never started because of it.")


class ExperimentReport(StrictModel):
    schemaVersion: Literal[2] = REPORT_SCHEMA_VERSION
    name: str
    file: str | None
    reportId: str = Field(description="sha256 of the arms, commits and outcomes: equal experiments, equal ids.")
    createdAt: str
    epochs: int
    alpha: float
    seed: int
    differing: list[str] = Field(description="The fields in which an arm differs from the control.")
    warnings: list[str]
    partial: bool = Field(description="Some (case, epoch) answer is missing or failed: the numbers are over fewer.")
    budget: BudgetReport | None = Field(default=None, description="The experiment's budget, when it has one.")
    earlierLooks: list[Look] = Field(description="Earlier reports of this experiment with fewer epochs.")
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


COUNTS = ("answered", "shared", "fromCache", "infrastructureFailures", "missing", "notStarted")  # ArmReport fields


def _arm_report(
    arm: ArmPlan, outcomes: ArmOutcomes, kinds: dict[str, str], lines: dict, experiment: ExperimentFile
) -> tuple[ArmReport, dict[str, list[bool | None]]]:
    """One arm's epochs added up, and its outcomes per case; each case's outcomes and transcripts go onto its line
    of the report."""
    per_case: dict[str, list[bool | None]] = {case_id: [] for case_id in outcomes.case_ids}
    counts = dict.fromkeys(COUNTS, 0)
    usages = []  # the usage records of what this arm paid for (None or not a record: nothing is known of it)
    measures = []  # a guidance arm's measures of the reports that could be read
    for epoch in outcomes.epochs:
        usages.append(epoch.usage)
        for unit in epoch.cases:
            per_case[unit.id].append(unit.passed)
            kinds.setdefault(unit.id, unit.kind)
            fresh = {"id": unit.id, "modelId": unit.model_id, "domain": unit.domain, "kind": kinds[unit.id]}
            line = lines.setdefault(unit.id, {**fresh, "outcomes": {}, "transcripts": {}})
            line["outcomes"].setdefault(arm.name, []).append(unit.passed)
            line["transcripts"].setdefault(arm.name, []).append(unit.transcript)
            if unit.missing or unit.not_started:
                counts["missing" if unit.missing else "notStarted"] += 1
                continue
            counts["infrastructureFailures"] += unit.infra
            counts["shared"] += unit.shared
            if unit.shared:
                continue
            counts["answered"] += unit.answered
            counts["fromCache"] += unit.answered and unit.cached
            if not unit.cached:  # a cached answer's cost stays with the run that paid for it
                usages.append(unit.usage)
            if unit.measure is not None and unit.measure.outcome_agrees is not None:
                measures.append(unit.measure)
    paid = [Usage.from_record(record) for record in usages if isinstance(record, dict) and record]
    total = functools.reduce(Usage.plus, paid, Usage())
    guidance = None
    if outcomes.measured:
        agreed = [m.outcome_agrees for m in measures]
        guidance = GuidanceMeasures(
            outcomeAgreement=MeasureRate(passed=sum(agreed), total=len(agreed), value=_mean(agreed)),
            citedRecall=MeasureMean(mean=_mean([m.recall for m in measures]), reports=len(measures)),
            citedPrecision=MeasureMean(mean=_mean([m.precision for m in measures]), reports=len(measures)),
        )
    summary = summarize_arm(per_case, kinds, seed=experiment.seed, epochs=experiment.epochs)  # type: ignore[arg-type]
    report = ArmReport(
        name=arm.name,
        control=arm.control,
        evaluator=arm.evaluator,
        settings=dict(arm.fields),
        corpus=str(arm.corpus),
        commit=arm.commit,
        variant=arm.variant,
        cases=len(per_case),
        **counts,
        unanswered=summary.unanswered,
        usage=ArmUsage(
            costKnown=sum(usage.costUsd is not None for usage in paid),
            cachedShare=cached_share(paid),
            **{name: getattr(total, name) for name in ArmUsage.model_fields if hasattr(total, name)},  # Usage's sums
        ),
        summary=summary,
        guidance=guidance,
        manifestDialect=outcomes.dialect,
    )
    return report, per_case


def _mean(values: list[Any]) -> float | None:
    return sum(values) / len(values) if values else None


def sequential_plan(looks: int | None, earlier: list[Look], alpha: float) -> Sequential:
    """This report's look and the level it may spend: alpha when one look was planned and this is it; under
    `looks: K` the O'Brien-Fleming share of alpha for look j of K (equally spaced looks assumed); with looks
    nobody planned, alpha still, and a note that the chance of a false verdict is higher than it."""
    look, planned, spent = len(earlier) + 1, True, alpha
    if looks is None and not earlier:
        note = "one look, as planned"
    elif looks is None:
        planned = False
        note = (
            f"not planned in advance: {len(earlier)} earlier report(s) of this experiment had fewer epochs, and "
            f"testing again after adding epochs makes a false verdict likelier than alpha {alpha:g}; declare "
            "`looks: N` in the experiment file to spend alpha over the looks"
        )
    elif look > looks:
        planned, spent = False, 0.0
        note = f"look {look} of a plan of {looks}: beyond the plan, so no verdict can be given"
    else:
        spent = obrien_fleming(alpha, look, looks)
        note = f"look {look} of {looks} planned (O'Brien-Fleming alpha spending): this look may spend {spent:.4g}"
    return Sequential(look=look, plannedLooks=looks, planned=planned, alphaUsed=spent, note=note)


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
        report, per_arm[arm.name] = _arm_report(arm, outcomes[arm.name], kinds, lines, experiment)
        arms.append(report)
    sequential = sequential_plan(experiment.looks, earlier, experiment.alpha)
    control = plan.control.name
    results = compare_treatments(  # every treatment arm against the control, held to this look's level
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
    identity = {
        "name": experiment.name,
        "arms": [(arm.name, arm.fields, arm.commit) for arm in plan.arms],
        "outcomes": per_arm,
    }
    spent = None
    if budget is not None:
        reached = round(budget[1], 9) >= budget[0]  # as bceval.steps.budget.reached compares them
        not_started = sum(arm.notStarted for arm in arms)
        spent = BudgetReport(maxCost=budget[0], knownCost=budget[1], reached=reached, notStarted=not_started)
    return ExperimentReport(
        name=experiment.name,
        file=str(plan.source) if plan.source else None,
        reportId=hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode("utf-8")).hexdigest(),
        createdAt=created,
        epochs=experiment.epochs,
        alpha=experiment.alpha,
        seed=experiment.seed,
        differing=plan.differing,
        warnings=plan.warnings,
        partial=any(arm.unanswered for arm in arms),
        budget=spent,
        earlierLooks=earlier,
        sequential=sequential,
        arms=arms,
        comparisons=[ComparisonReport(arm=name, control=control, result=result) for name, result in results.items()],
        cases=[CaseLine(**lines[key]) for key in sorted(lines, key=lambda k: (lines[k]["domain"], k))],
    )


def earlier_looks(previous: Any, epochs: int) -> list[Look]:
    """The looks before a report of `epochs` epochs, from the experiment's previous report.json (already parsed;
    anything unreadable counts as no earlier report): its own earlier looks, and itself when it had fewer epochs."""
    if not isinstance(previous, dict):
        return []
    looks: list[Look] = []
    for item in [*(previous.get("earlierLooks") or []), previous]:
        try:  # an item that does not say which report it was, when, and with how many epochs is no look
            look = Look.model_validate({key: item.get(key) for key in Look.model_fields}, strict=True)
        except (AttributeError, ValidationError):
            continue
        if look.epochs < epochs and all(look.reportId != seen.reportId for seen in looks):
            looks.append(look)
    return looks


def read_report(document: Any, where: str) -> ExperimentReport:
    """A parsed report.json; one line when it is not one this bceval writes (an older schema, another shape)."""
    if isinstance(document, dict) and document.get("schemaVersion") != REPORT_SCHEMA_VERSION:
        raise BcevalError(
            f"{where}: written with report schema {document.get('schemaVersion')!r}, this bceval writes "
            f"{REPORT_SCHEMA_VERSION}; run bceval experiment report again"
        )
    try:
        return ExperimentReport.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise BcevalError(f"{where}: not an experiment report: field '{field}': {first['msg']}") from None
