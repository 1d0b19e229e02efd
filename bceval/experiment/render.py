"""The experiment report rendered: Markdown and HTML (`out/experiments/<name>/report.{md,html}`), the verdict lines,
and its entry on the published page (`bceval experiment publish`)."""

from __future__ import annotations

from html import escape
from typing import Any

from bceval.experiment.report_model import ArmReport, ExperimentReport


def dialect_line(arms: list[ArmReport]) -> str:
    """Which manifest dialect each review arm read; when they differ, that one case id may name different articles."""
    named = [(arm.name, arm.manifestDialect) for arm in arms if arm.manifestDialect]
    if not named:
        return ""
    line = "Manifest dialect: " + ", ".join(f"{name} {dialect}" for name, dialect in named)
    if len({dialect for _, dialect in named}) > 1:
        line += " (the dialects differ, so one case id may name a different article in each arm)"
    return line


def _rate(rate: Any) -> str:
    if rate.value is None:
        return "n/a"
    text = f"{rate.value:.3f} ({rate.passed}/{rate.total})"
    if rate.interval is not None:
        text += f", {rate.interval.level:.0%} CI {rate.interval.low:.3f}–{rate.interval.high:.3f}"
    return text


def _difference(diff: Any) -> str:
    if diff.difference is None:
        return "n/a"
    text = f"{diff.difference:+.3f}"
    if diff.interval is not None:
        text += f" ({diff.interval.level:.0%} CI {diff.interval.low:+.3f} to {diff.interval.high:+.3f})"
    return text


def _cost(arm: ArmReport) -> str:
    if arm.usage.costUsd is None:
        return "unknown"
    known = "" if arm.usage.costKnown == arm.answered else f" ({arm.usage.costKnown} of {arm.answered} reported)"
    return f"${arm.usage.costUsd:.4f}{known}"


def headline(report: ExperimentReport) -> list[str]:
    """One line per treatment arm: the verdict in words, with its test."""
    lines = []
    for comparison in report.comparisons:
        result = comparison.result
        test = result.test
        method = "exact" if test.method == "exact" else f"Monte Carlo, {test.draws} draws"
        lines.append(
            f"Experiment {report.name}: {comparison.arm} vs {comparison.control} (control): {result.verdict}; "
            f"sign-flip p = {test.p_value:.4g} ({method}, {result.paired_cases} paired cases, alpha {result.alpha:g}); "
            f"recall {_difference(result.recall)}, clean rate {_difference(result.clean_rate)}"
        )
    return lines


def render_markdown(report: ExperimentReport) -> str:
    arms = report.arms
    lines = [f"# Experiment {report.name}", ""]
    lines += [f"- {line.removeprefix(f'Experiment {report.name}: ')}" for line in headline(report)]
    lines += [
        f"- {report.epochs} epoch(s) × {max((a.cases for a in arms), default=0)} case(s) × {len(arms)} arms; "
        f"seed {report.seed}; alpha {report.alpha:g}",
        f"- Arms differ in: {', '.join(report.differing) or 'nothing'}",
        *[f"- {line}" for line in [dialect_line(arms)] if line],
        *[f"- **Warning:** {warning}" for warning in report.warnings],
        f"- Report `{report.reportId[:16]}`, created {report.createdAt}",
        "",
        "## Arms",
        "",
        "| Arm | Recall | Clean rate | pass@k | pass^k | Flaky | Answered | Shared | Failed | Cost |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm in arms:
        summary = arm.summary
        label = f"{arm.name} (control)" if arm.control else arm.name
        lines.append(
            f"| {label} | {_rate(summary.recall)} | {_rate(summary.clean_rate)} | {_rate(summary.pass_at_k.all)} | "
            f"{_rate(summary.pass_hat_k.all)} | {len(summary.flaky_cases)} | {arm.answered} | {arm.shared} | "
            f"{arm.infrastructureFailures} | {_cost(arm)} |"
        )
    guided = [arm for arm in arms if arm.guidance is not None]
    if guided:
        lines += [
            "",
            "| Guidance arm | Evaluator | Outcome agreement | Cited recall (mean) | Cited precision (mean) |",
            "|---|---|---|---|---|",
        ]
        for arm in guided:
            g = arm.guidance
            agreement = g.outcomeAgreement
            share = (
                f"{agreement.value:.3f} ({agreement.passed}/{agreement.total})"
                if agreement.value is not None
                else "n/a"
            )
            lines.append(
                f"| {arm.name} | {arm.evaluator} | {share} | {_mean(g.citedRecall)} | {_mean(g.citedPrecision)} |"
            )
    lines += [
        "",
        "Recall and clean rate pool every epoch; their intervals come from a bootstrap over cases (a case's "
        "epochs move together). pass@k: a case passed in at least one epoch; pass^k: in every epoch. For a "
        "guidance arm a case with no expected knowledge (no-knowledge, not-applicable) counts as a clean control.",
        "",
        "## Per epoch",
        "",
        "| Arm | " + " | ".join(f"epoch {e}" for e in range(1, report.epochs + 1)) + " |",
        "|---|" + "---|" * report.epochs,
    ]
    for arm in arms:
        cells = [f"recall {_short(e.recall)}, clean {_short(e.clean_rate)}" for e in arm.summary.per_epoch]
        lines.append(f"| {arm.name} | " + " | ".join(cells) + " |")
    if report.comparisons:
        lines += [
            "",
            "## Against the control",
            "",
            "| Arm | Better / worse / equal cases | Mean difference per case | Sign-flip p | Recall Δ | Clean rate Δ | "
            "Verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for comparison in report.comparisons:
            result = comparison.result
            mean = f"{result.mean_difference:+.3f}" if result.mean_difference is not None else "n/a"
            lines.append(
                f"| {comparison.arm} | {result.better} / {result.worse} / {result.equal} | {mean} | "
                f"{result.test.p_value:.4g} ({result.test.method}) | {_difference(result.recall)} | "
                f"{_difference(result.clean_rate)} | **{result.verdict}** |"
            )
        lines += [""] + [f"- {comparison.result.explanation}" for comparison in report.comparisons]
    lines += [
        "",
        "## Cases",
        "",
        "| Case | Kind | " + " | ".join(a.name for a in arms) + " |",
        "|---|---|" + "---|" * len(arms),
    ]
    for case in report.cases:
        cells = []
        for arm in arms:
            results = case.outcomes.get(arm.name, [])
            answered = [r for r in results if r is not None]
            cells.append(
                f"{sum(answered)}/{len(answered)}" + (" (flaky)" if case.id in arm.summary.flaky_cases else "")
            )
        lines.append(f"| {case.id} | {case.kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _mean(measure: Any) -> str:
    return f"{measure.mean:.3f} over {measure.reports} report(s)" if measure.mean is not None else "n/a"


def _short(rate: Any) -> str:
    return f"{rate.value:.2f}" if rate.value is not None else "n/a"


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:64rem;color:#1b1f24}"
    "table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"
    "th{background:#f6f8fa}.better{color:#1a7f37}.worse{color:#cf222e}.warn{color:#9a6700}"
)


def render_html(report: ExperimentReport) -> str:
    e = escape
    arms = report.arms
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>bceval experiment {e(report.name)}</title>',
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Experiment {e(report.name)}</h1><ul>",
    ]
    for comparison, line in zip(report.comparisons, headline(report), strict=True):
        parts.append(f'<li class="{e(comparison.result.verdict.split()[0])}">{e(line)}</li>')
    parts += [f'<li class="warn">{e(w)}</li>' for w in report.warnings]
    parts.append(f"<li>Arms differ in: {e(', '.join(report.differing) or 'nothing')}</li>")
    parts += [f"<li>{e(line)}</li>" for line in [dialect_line(arms)] if line]
    parts.append("</ul>")
    parts.append(
        "<h2>Arms</h2><table><tr><th>Arm</th><th>Recall</th><th>Clean rate</th><th>pass@k</th><th>pass^k</th>"
        "<th>Answered</th><th>Shared</th><th>Failed</th><th>Cost</th></tr>"
    )
    for arm in arms:
        s = arm.summary
        parts.append(
            f"<tr><td>{e(arm.name)}{' (control)' if arm.control else ''}</td><td>{e(_rate(s.recall))}</td>"
            f"<td>{e(_rate(s.clean_rate))}</td><td>{e(_rate(s.pass_at_k.all))}</td><td>{e(_rate(s.pass_hat_k.all))}</td>"
            f"<td>{arm.answered}</td><td>{arm.shared}</td><td>{arm.infrastructureFailures}</td><td>{e(_cost(arm))}</td></tr>"
        )
    parts.append(
        "</table><h2>Cases</h2><table><tr><th>Case</th><th>Kind</th>"
        + "".join(f"<th>{e(a.name)}</th>" for a in arms)
        + "</tr>"
    )
    for case in report.cases:
        cells = []
        for arm in arms:
            marks = []
            for number, (result, link) in enumerate(
                zip(case.outcomes.get(arm.name, []), case.transcripts.get(arm.name, []), strict=True), start=1
            ):
                symbol = "✓" if result else ("✗" if result is False else "–")
                marks.append(f'<a href="{e(link)}" title="epoch {number}">{symbol}</a>' if link else symbol)
            cells.append(f"<td>{' '.join(marks)}</td>")
        parts.append(f"<tr><td>{e(case.id)}</td><td>{e(case.kind)}</td>{''.join(cells)}</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


# --- the published page ------------------------------------------------------------------------------------------

EXPERIMENT_MARKERS = (
    "<!-- bceval:experiment:latest:begin -->",
    "<!-- bceval:experiment:latest:end -->",
    "<!-- bceval:experiment:history:begin -->",
    "<!-- bceval:experiment:history:end -->",
)
EXPERIMENT_HEADER = (
    "| Date | Experiment | Arms | Epochs | Cases | Verdicts against the control | Report |\n"
    "|---|---|---|---|---|---|---|"
)


def experiment_page():  # noqa: ANN201 - a PageFormat (imported here so reports need no publishing code)
    from bceval.scorecard.publish import MAX_HISTORY_ROWS, PageFormat

    begin, end, history_begin, history_end = EXPERIMENT_MARKERS
    new_page = (
        "# bceval experiments\n\nPublished with `bceval experiment publish`. Text outside bceval's marker comments is "
        f"yours to edit; the latest experiment and the history rows are maintained by bceval.\n\n{begin}\n{end}\n\n"
        f"## History\n\nNewest first; at most {MAX_HISTORY_ROWS} rows.\n\n{history_begin}\n{history_end}\n"
    )
    return PageFormat(EXPERIMENT_MARKERS, new_page, EXPERIMENT_HEADER, "| Date |")


def experiment_entry(report: ExperimentReport):  # noqa: ANN201 - an Entry
    from bceval.scorecard.publish import Entry

    verdicts = "; ".join(f"{c.arm}: {c.result.verdict} (p = {c.result.test.p_value:.3g})" for c in report.comparisons)
    cell = f"`{report.reportId[:16]}`"
    row = (
        f"| {report.createdAt[:10]} | {report.name} | {', '.join(a.name for a in report.arms)} | {report.epochs} | "
        f"{max((a.cases for a in report.arms), default=0)} | {verdicts} | {cell} |"
    )
    latest = render_markdown(report).replace("# Experiment", "### Experiment", 1).replace("\n## ", "\n#### ")
    return Entry(latest, row, f"Report `{report.reportId[:16]}`", cell)
