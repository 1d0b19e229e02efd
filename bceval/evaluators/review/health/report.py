"""The health report on the console and as Markdown."""

from __future__ import annotations

from bceval.evaluators.review.health.model import HealthReport


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
