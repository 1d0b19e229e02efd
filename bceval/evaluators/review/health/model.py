"""out/health.json: one report of everything that makes an evaluation unsound."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bceval.models import StrictModel

HEALTH_SCHEMA_VERSION = 1
Severity = Literal["error", "warning", "info"]
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


class Finding(StrictModel):
    kind: str = Field(description="e.g. unpaired-article, domain-mismatch, ranking-margin, label-leak.")
    severity: Severity
    message: str
    path: str | None = Field(default=None, description="Corpus-relative or prepare-directory file.")
    case: str | None = Field(default=None, description="Manifest case id.")
    line: int | None = Field(default=None, ge=1, description="1-based line in the neutral case file.")


class DomainCoverage(StrictModel):
    domain: str
    leaf: str | None = Field(description="Winning leaf path, or null for knowledge without a leaf.")
    paired: int = Field(ge=0, description="Paired articles after layer precedence.")
    exercised: int = Field(ge=0, description="Paired articles some case expects.")
    unexercised: list[str]


class Coverage(StrictModel):
    paired: int = Field(ge=0)
    exercised: int = Field(ge=0)
    domains: list[DomainCoverage]


class CaseMargin(StrictModel):
    case: str
    domain: str
    article: str
    candidates: int = Field(ge=0)
    ranked: bool = Field(description="False when the domain has no more candidates than the cutoff.")
    rank: int | None = Field(default=None, ge=1)
    score: float | None = None
    firstExcludedScore: float | None = None
    margin: float | None = Field(default=None, description="Score above the first excluded candidate.")


class HealthReport(StrictModel):
    schemaVersion: Literal[1] = HEALTH_SCHEMA_VERSION
    corpus: str
    errors: int = Field(ge=0)
    warnings: int = Field(ge=0)
    notes: int = Field(ge=0)
    marginThreshold: float
    coverage: Coverage
    margins: list[CaseMargin]
    findings: list[Finding]
