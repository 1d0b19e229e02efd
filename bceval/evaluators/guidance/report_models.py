"""The guidance report models, the source of `schemas/guidance-{plan,implementation}-report.schema.json`: an
optional lint, stricter than the scorer (`scoring`), with the outcome rules expressible in JSON Schema."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from bceval.models import StrictModel


def _unique(items: list[Any]) -> list[Any]:
    if len(items) != len(set(map(repr, items))):
        raise ValueError("items must be unique")
    return items


def members(model: Any) -> tuple[str, ...]:
    """The members a model requires, in its order: the scorer requires these, in this order."""
    return tuple(field.alias or name for name, field in model.model_fields.items() if field.is_required())


def _optional(schema: dict[str, Any]) -> None:
    schema.pop("default", None)  # absent, not null: the scorer rejects `null`


NonEmpty = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
Kebab = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
CommitId = Annotated[str, StringConstraints(pattern=r"^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")]
Unique = Field(json_schema_extra={"uniqueItems": True})
Outcome = Literal["completed", "not-applicable", "no-knowledge", "partial", "failed"]
Dimension = Literal["bc-version", "technologies", "countries", "application-area"]
_LAYERS = "(microsoft|community|custom)/knowledge/[a-z0-9-]+/"
# Plan: one domain folder, as the reference schema. Implementation: nested folders, as the scorer.
PlanArticle = Annotated[str, StringConstraints(pattern=rf"^{_LAYERS}[a-z0-9-]+\.md$")]
PlanSample = Annotated[str, StringConstraints(pattern=rf"^{_LAYERS}[a-z0-9-]+\.(good|bad)\.[A-Za-z0-9]+$")]
NestedArticle = Annotated[str, StringConstraints(pattern=rf"^{_LAYERS}([a-z0-9-]+/)*[a-z0-9-]+\.md$")]
NestedSample = Annotated[
    str, StringConstraints(pattern=rf"^{_LAYERS}([a-z0-9-]+/)*[a-z0-9-]+\.(good|bad)\.[A-Za-z0-9]+$")
]
UniqueTexts = Annotated[list[NonEmpty], AfterValidator(_unique), Unique]


class _ReportModel(StrictModel):
    model_config = ConfigDict(strict=True, populate_by_name=True)


def _present_not_null(value: Any) -> Any:
    # Optional members may be absent but never null, as in the scorer and the schema.
    if value is None:
        raise ValueError("must be a string when present")
    return value


class ReportContext(_ReportModel):
    bc_version: NonEmpty = Field(alias="bc-version")
    technologies: UniqueTexts
    countries: UniqueTexts
    application_area: UniqueTexts = Field(alias="application-area")
    unknown: Annotated[list[Dimension], AfterValidator(_unique), Unique]


class ImplementationContext(ReportContext):
    affected_files: list[NonEmpty] = Field(alias="affected-files")
    affected_symbols: list[NonEmpty] = Field(alias="affected-symbols")
    changed_tokens: list[NonEmpty] = Field(alias="changed-tokens")


class ValidationConsideration(_ReportModel):
    id: Kebab
    reason: NonEmpty
    evidence: NonEmpty


def _integer(value: Any) -> Any:
    # A literal 1 would also take 1.0 and True; the spec wants the JSON integer 1 only.
    if type(value) is not int:
        raise ValueError("must be an integer")
    return value


class PlanSkill(_ReportModel):
    id: Literal["al-development-plan"]
    version: Literal[1]

    _version_is_integer = field_validator("version", mode="before")(_integer)


class ImplementationSkill(PlanSkill):
    id: Literal["al-implementation-guidance"]


class PlanSummary(_ReportModel):
    request: NonEmpty
    kind: Literal["feature", "bug", "refactor", "upgrade", "maintenance"]
    candidates: Annotated[int, Field(ge=0)]
    selected: Annotated[int, Field(ge=0)]


class ImplementationSummary(_ReportModel):
    request: NonEmpty
    phase: NonEmpty
    decision: NonEmpty
    decision_key: NonEmpty = Field(alias="decision-key")
    evidence_fingerprint: NonEmpty = Field(alias="evidence-fingerprint")
    candidates: Annotated[int, Field(ge=0)]
    selected: Annotated[int, Field(ge=0)]
    omitted_consumed: Annotated[int, Field(ge=0)] = Field(alias="omitted-consumed")


class Pins(_ReportModel):
    knowledge_checkout: Annotated[str, StringConstraints(pattern=r"^(unpinned|[0-9a-f]{40}|[0-9a-f]{64})$")] = Field(
        alias="knowledge-checkout"
    )
    development_plan: NonEmpty = Field(alias="development-plan")
    implementation_evidence: NonEmpty = Field(alias="implementation-evidence")


class PlanReference(_ReportModel):
    path: PlanArticle
    sha: CommitId | SkipJsonSchema[None] = Field(default=None, json_schema_extra=_optional)

    _sha_not_null = field_validator("sha", mode="before")(_present_not_null)


class PlanKnowledgeEntry(PlanReference):
    used_for: NonEmpty = Field(alias="used-for")
    constraints: Annotated[list[NonEmpty], AfterValidator(_unique), Field(min_length=1), Unique]
    sample_paths: Annotated[list[PlanSample], AfterValidator(_unique), Unique] = Field(alias="sample-paths")


class ImplementationKnowledgeEntry(PlanKnowledgeEntry):
    path: NestedArticle
    sample_paths: Annotated[list[NestedSample], AfterValidator(_unique), Unique] = Field(alias="sample-paths")


class ImplementationReference(PlanReference):
    path: NestedArticle


class PlanSuppressed(_ReportModel):
    reference: PlanReference
    reason: Literal["layer-precedence", "configuration"]


class ImplementationSuppressed(PlanSuppressed):
    reference: ImplementationReference


class OmittedEntry(_ReportModel):
    path: NestedArticle
    decision_key: NonEmpty = Field(alias="decision-key")
    evidence_fingerprint: NonEmpty = Field(alias="evidence-fingerprint")
    prior_decision: NonEmpty = Field(alias="prior-decision")


class Deduplication(_ReportModel):
    strategy: Literal["omit-exact-consumed-match"]
    omitted: list[OmittedEntry]


def _outcome_rules(empty: list[str]) -> dict[str, Any]:
    def when(outcomes: list[str], then: dict[str, Any]) -> dict[str, Any]:
        return {"if": {"properties": {"outcome": {"enum": outcomes}}, "required": ["outcome"]}, "then": then}

    return {
        "allOf": [
            when(["completed"], {"properties": {"knowledge": {"minItems": 1}}}),
            when(empty, {"properties": {"knowledge": {"maxItems": 0}}}),
            when(["partial", "failed"], {"required": ["outcome-reason"]}),
        ]
    }


_PLAN_EMPTY = ("not-applicable", "no-knowledge", "failed")  # the reference schema's rule (§7.17)
_IMPLEMENTATION_EMPTY = ("not-applicable", "no-knowledge")  # the scorer's rule


class _Report(_ReportModel):
    """The fields and outcome rules both reports share; `empty` names the outcomes that require no knowledge."""

    empty: ClassVar[tuple[str, ...]]
    skill: PlanSkill
    outcome: Outcome
    outcome_reason: NonEmpty | SkipJsonSchema[None] = Field(
        default=None, alias="outcome-reason", json_schema_extra=_optional
    )
    summary: PlanSummary
    _reason_not_null = field_validator("outcome_reason", mode="before")(_present_not_null)

    @model_validator(mode="after")
    def _outcome(self) -> Any:
        outcome, knowledge = self.outcome, self.knowledge  # the subclasses' fields
        if outcome == "completed" and not knowledge:
            raise ValueError("completed requires knowledge")
        if outcome in self.empty and knowledge:
            raise ValueError(f"{outcome} requires empty knowledge")
        if outcome in ("partial", "failed") and self.outcome_reason is None:
            raise ValueError("partial and failed require outcome-reason")
        return self


class PlanGuidanceReport(_Report):
    """guidanceReport of a plan-guidance result (skill al-development-plan)."""

    model_config = ConfigDict(title="PlanGuidanceReport", json_schema_extra=_outcome_rules(list(_PLAN_EMPTY)))
    empty = _PLAN_EMPTY

    context: ReportContext
    knowledge: Annotated[list[PlanKnowledgeEntry], Unique]
    validation_considerations: Annotated[list[ValidationConsideration], Unique] = Field(
        alias="validation-considerations"
    )
    suppressed: Annotated[list[PlanSuppressed], Unique]
    unresolved: UniqueTexts


class ImplementationGuidanceReport(_Report):
    """guidanceReport of an implementation-guidance result (skill al-implementation-guidance)."""

    model_config = ConfigDict(
        title="ImplementationGuidanceReport", json_schema_extra=_outcome_rules(list(_IMPLEMENTATION_EMPTY))
    )
    empty = _IMPLEMENTATION_EMPTY

    skill: ImplementationSkill
    summary: ImplementationSummary
    pins: Pins
    context: ImplementationContext
    knowledge: Annotated[list[ImplementationKnowledgeEntry], Unique]
    validation_considerations: Annotated[list[ValidationConsideration], Unique] = Field(
        alias="validation-considerations"
    )
    deduplication: Deduplication
    suppressed: Annotated[list[ImplementationSuppressed], Unique]
    unresolved: UniqueTexts
