"""out/health.json: one report of everything that makes an evaluation unsound, and its console and Markdown forms."""

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


def summary_line(report: HealthReport, where: str) -> str:
    verdict = "FAILED" if report.errors else "OK"
    return (
        f"Corpus health {verdict}: {report.errors} error(s), {report.warnings} warning(s), {report.notes} note(s); "
        f"{report.coverage.exercised}/{report.coverage.paired} paired articles exercised. Details: {where}"
    )


def _share(exercised: int, paired: int) -> str:
    return f"{exercised / paired * 100:.0f}%" if paired else "–"


def coverage_lines(report: HealthReport) -> list[str]:
    """Per knowledge domain, the paired articles some case selects (the console's coverage table)."""
    width = max((len(domain.domain) for domain in report.coverage.domains), default=0)
    lines = ["Coverage per domain (selected/paired articles):"]
    for domain in report.coverage.domains:
        leaf = "" if domain.leaf else "  (no leaf: never evaluated)"
        counts = f"{domain.exercised}/{domain.paired}"
        lines.append(f"  {domain.domain:<{width}}  {counts:>7}  {_share(domain.exercised, domain.paired):>4}{leaf}")
    return lines


def render_markdown(report: HealthReport) -> str:
    lines = [
        f"# Corpus health: {report.corpus}",
        "",
        f"{report.errors} error(s), {report.warnings} warning(s), {report.notes} note(s). "
        f"{report.coverage.exercised} of {report.coverage.paired} paired articles are exercised by a case.",
        "",
        "## Coverage",
        "",
        "| Domain | Leaf | Paired | Exercised | Coverage |",
        "|---|---|---|---|---|",
    ]
    for domain in report.coverage.domains:
        leaf = f"`{domain.leaf}`" if domain.leaf else "none"
        share = _share(domain.exercised, domain.paired)
        lines.append(f"| {domain.domain} | {leaf} | {domain.paired} | {domain.exercised} | {share} |")
    lines += [
        "",
        "## Ranking margins",
        "",
        "| Case | Candidates | Rank | Score | First excluded | Margin |",
        "|---|---|---|---|---|---|",
    ]
    for m in report.margins:
        if m.ranked:
            lines.append(
                f"| {m.case} | {m.candidates} | {m.rank} | {m.score:g} | {m.firstExcludedScore:g} | {m.margin:g} |"
            )
        else:
            lines.append(f"| {m.case} | {m.candidates} | not ranked | – | – | – |")
    for severity, title in (("error", "Errors"), ("warning", "Warnings"), ("info", "Notes")):
        chosen = [f for f in report.findings if f.severity == severity]
        if chosen:
            lines += ["", f"## {title}", ""] + [f"- **{f.kind}** ({f.severity}): {f.message}" for f in chosen]
    return "\n".join(lines) + "\n"
