"""Assemble the health report and render it as Markdown."""

from __future__ import annotations

from typing import Any

from bceval.corpus.layers import Leaf, Listing
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.health.checks import changed_path_checks, coverage_checks, margin_checks
from bceval.evaluators.review.health.leaks import leak_checks, reachable_answer_checks
from bceval.evaluators.review.health.model import SEVERITY_ORDER, Finding, HealthReport


def build_report(
    corpus_name: str,
    listing: Listing,
    leaves: list[Leaf],
    rows: list[dict[str, Any]],
    cases: list[ReviewCase],
    candidates: dict[str, list[dict[str, Any]]],
    case_texts: dict[str, str],
    margin: float,
    changed: list[str] | None = None,
    extra: list[Finding] | None = None,
    views: dict[str, dict[str, str]] | None = None,
) -> HealthReport:
    """`extra`: findings from outside the checks (validation problems and unreadable files, when health runs
    on a corpus that does not validate); `views`: per model id, the text of every file of its agent view."""
    coverage, findings = coverage_checks(listing, leaves, rows, cases)
    findings += extra or []
    if changed is not None:
        findings += changed_path_checks(changed, listing, cases)
    margins, margin_findings = margin_checks(cases, candidates, case_texts, margin)
    findings += margin_findings
    titles = {row["path"]: row["title"] for row in rows}
    findings += leak_checks(cases, candidates, case_texts, titles)
    if views is not None:  # the view files of each case: its leaf and ranked candidate articles
        findings += reachable_answer_checks(cases, case_texts, views)
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.kind, f.case or "", f.path or "", f.line or 0))
    return HealthReport(
        corpus=corpus_name,
        errors=sum(f.severity == "error" for f in findings),
        warnings=sum(f.severity == "warning" for f in findings),
        notes=sum(f.severity == "info" for f in findings),
        marginThreshold=margin,
        coverage=coverage,
        margins=margins,
        findings=findings,
    )


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
