"""The experiment report as pydantic models: the source of schemas/experiment-report.schema.json, and the check of
a report.json read back (`bceval experiment publish`).

bceval builds a report as the plain records of `bceval.experiment.report_model` (no pydantic to import: the report
is written sooner); a test checks both name the same fields with the same defaults, and that a report as bceval
writes it is one this model reads back unchanged.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from bceval.errors import BcevalError
from bceval.experiment.report_model import REPORT_SCHEMA_VERSION
from bceval.experiment.stats import ArmComparison, ArmSummary
from bceval.models import StrictModel


class ArmUsage(StrictModel):
    """What an arm's own answers cost (answers shared from another arm cost it nothing); null is unknown."""

    costUsd: float | None = None
    costKnown: int = Field(ge=0, description="Answers whose agent reported a cost.")
    wallSeconds: float | None = None
    agentSeconds: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None


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


def read_report(document: Any, where: str) -> ExperimentReport:
    """A parsed report.json as this model (it has the attributes of report_model.ExperimentReport, so it renders
    the same); one line when it is not one this bceval writes (an older schema, another shape)."""
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
