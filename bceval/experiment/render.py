"""The experiment report as Markdown and HTML, both from one list of blocks (`document`), its verdict lines and its
entry on the published page."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from bceval.experiment.report_model import ArmReport, ExperimentReport
from bceval.scorecard.publish import Entry, PageFormat


@dataclass(frozen=True)
class Marks:
    """A table cell with a text (both formats) and per-epoch marks that link to transcripts (HTML only)."""

    text: str
    marks: tuple[tuple[str, str | None, str], ...]  # (symbol, link, title)


Cell = str | Marks


@dataclass(frozen=True)
class Block:
    kind: str  # "h1", "h2", "list", "para", "table"
    text: str = ""
    items: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    rows: tuple[tuple[Cell, ...], ...] = ()


def _interval(interval: Any, signed: bool = False) -> str:
    """An interval with how it was made, where it is shown; a rough one says so."""
    if interval is None:
        return ""
    form = "+.3f" if signed else ".3f"
    rough = "; unreliable: fewer than 15 cases" if not interval.reliable else ""
    return f", {interval.level:.0%} CI {interval.low:{form}} to {interval.high:{form}} ({interval.method}{rough})"


def _rate(rate: Any) -> str:
    if rate.value is None:
        return "n/a"
    return f"{rate.value:.3f} ({rate.passed}/{rate.total} {rate.unit}){_interval(rate.interval)}"


def _difference(kind: Any) -> str:
    if kind.difference is None:
        return "n/a"
    return f"{kind.difference:+.3f}{_interval(kind.interval, signed=True)}"


def _cost(arm: ArmReport) -> str:
    """What this arm's own answers cost (cached and shared ones are on the bill of the run that paid them)."""
    asked = arm.answered - arm.fromCache  # cached answers were paid by the run that asked first
    if arm.usage.costUsd is None:
        return "unknown" if asked else "-"
    known = "" if arm.usage.costKnown == asked else f" ({arm.usage.costKnown} of {asked} reported)"
    if arm.usage.cachedShare is not None:  # the provider's prompt cache: its share, and the cost without it
        without = f", ${arm.usage.uncachedCostUsd:.4f} without" if arm.usage.uncachedCostUsd is not None else ""
        known += f"; {arm.usage.cachedShare:.0%} of prompt tokens cached{without}"
    return f"${arm.usage.costUsd:.4f}{known}"


def _p(test: Any) -> str:
    method = "exact" if test.method == "exact" else f"Monte Carlo, {test.draws:,} draws"
    return f"{test.p_value:.4g} ({method})"


def headline(report: ExperimentReport) -> list[str]:
    """One line per treatment arm: the verdict in words, on the estimand it is about, with its test."""
    lines = []
    for comparison in report.comparisons:
        result = comparison.result
        overall = result.overall
        adjusted = (
            f", Holm-adjusted {result.p_adjusted:.4g} over {result.family} treatment arms" if result.family > 1 else ""
        )
        missing = result.missing
        unanswered = (
            f"; unanswered (case, epoch) answers: control {missing.control_missing}/{missing.control_slots}, "
            f"treatment {missing.treatment_missing}/{missing.treatment_slots}"
            if missing.control_missing or missing.treatment_missing
            else ""
        )
        lines.append(
            f"Experiment {report.name}: {comparison.arm} vs {comparison.control} (control): {result.verdict_text}; "
            f"mean per-case difference {_difference(overall)}; sign-flip p = {_p(overall.test)}{adjusted}, "
            f"{result.paired_cases} paired cases, alpha {result.alpha_used:.4g}; "
            f"recall {_difference(result.recall)}; clean rate {_difference(result.clean_rate)}{unanswered}"
        )
    return lines


def budget_line(report: ExperimentReport) -> str | None:
    """The line saying the experiment is partial because it reached its budget, or None."""
    spent = report.budget
    if spent is None or not spent.reached:
        return None
    return (
        f"Experiment {report.name}: partial: its known cost {spent.knownCost:.4f} USD reached maxCost "
        f"{spent.maxCost:g}; {spent.notStarted} (case, epoch) answer(s) not started, rerun with a larger maxCost "
        "to answer only those"
    )


def _md_cell(cell: Cell) -> str:
    text = cell.text if isinstance(cell, Marks) else cell
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def document(report: ExperimentReport) -> list[Block]:
    """Every part of the report, in order, for either format."""
    arms, k = report.arms, report.epochs
    blocks = [Block("h1", f"Experiment {report.name}"), Block("list", items=tuple(_facts(report)))]
    blocks += [Block("h2", "Arms"), _table(ARM_COLUMNS, [(arm,) for arm in arms], k=k)]
    guided = [(arm,) for arm in arms if arm.guidance is not None]
    if guided:
        blocks.append(_table(GUIDANCE_COLUMNS, guided))
    per_epoch = tuple(
        (arm.name, *(f"recall {_short(e.recall)}, clean {_short(e.clean_rate)}" for e in arm.summary.per_epoch))
        for arm in arms
    )
    header = ("Arm", *(f"epoch {e} (answers)" for e in range(1, k + 1)))
    blocks += [Block("h2", "Per epoch"), Block("table", header=header, rows=per_epoch)]
    if report.comparisons:  # the verdicts, the outcomes one by one, and the explanations
        results = [(c.arm, c.result) for c in report.comparisons]
        outcomes = [
            (arm, kind) for arm, result in results for kind in (result.overall, result.recall, result.clean_rate)
        ]
        blocks += [
            Block("h2", "Against the control"),
            _table(VERDICT_COLUMNS, results),
            _table(OUTCOME_COLUMNS, outcomes),
            Block("list", items=tuple(f"{arm}: {result.explanation}" for arm, result in results)),
        ]
    if report.earlierLooks:
        blocks += [
            Block("h2", "Earlier looks"),
            Block(
                "table",
                header=("Report", "Created", "Epochs"),
                rows=tuple((look.reportId[:16], look.createdAt, str(look.epochs)) for look in report.earlierLooks),
            ),
        ]
    flaky = [(arm.name, arm.summary.flaky_cases) for arm in arms if arm.summary.flaky_cases]
    return [
        *blocks,
        Block("h2", "Flaky cases"),
        Block(
            "list",
            items=tuple(f"{name}: {', '.join(found)}" for name, found in flaky) or ("none: every case was steady",),
        ),
        Block("h2", "Method"),
        *(Block("para", paragraph) for paragraph in method_note(report)),
        Block("h2", "Cases"),
        Block(
            "table",
            header=("Case", "Kind", *(f"{a.name} (passed/answered epochs)" for a in arms)),
            rows=tuple((case.id, case.kind, *(_case_cell(case, arm) for arm in arms)) for case in report.cases),
        ),
    ]


def _facts(report: ExperimentReport) -> list[str]:
    """The list under the title: the verdicts, what is partial, the budget, the looks and the setup."""
    arms = report.arms
    facts = [line.removeprefix(f"Experiment {report.name}: ") for line in headline(report)]
    if report.partial:
        unanswered = sum(a.unanswered for a in arms)
        slots = sum(a.summary.epochs * a.cases for a in arms)
        not_started = sum(a.notStarted for a in arms)
        budget = f"{not_started} not started (budget), " if not_started else ""
        facts.append(
            f"Partial: {unanswered} of {slots} (case, epoch) answers have no outcome "
            f"({sum(a.infrastructureFailures for a in arms)} infra failures, {budget}{sum(a.missing for a in arms)} "
            "missing); every number below is over the answers there are"
        )
    if report.budget is not None:
        spent = report.budget
        state = (
            f"reached: {spent.notStarted} (case, epoch) answer(s) not started; a rerun with a larger maxCost "
            "answers them"
            if spent.reached
            else "not reached"
        )
        facts.append(f"Budget: maxCost {spent.maxCost:g} USD, known cost {spent.knownCost:.4f} USD, {state}")
    if report.sequential.look > 1 or report.sequential.plannedLooks is not None:
        facts.append(f"Looks: {report.sequential.note}")
    cases = max((a.cases for a in arms), default=0)
    facts += [
        f"{report.epochs} epoch(s) x {cases} case(s) x {len(arms)} arms; seed {report.seed}; alpha {report.alpha:g}",
        f"Arms differ in: {', '.join(report.differing) or 'nothing'}",
    ]
    dialects = [(arm.name, arm.manifestDialect) for arm in arms if arm.manifestDialect]
    if dialects:  # when they differ, one case id may name different articles
        facts.append("Manifest dialect: " + ", ".join(f"{name} {dialect}" for name, dialect in dialects))
        if len({dialect for _, dialect in dialects}) > 1:
            facts[-1] += " (the dialects differ, so one case id may name a different article in each arm)"
    return [
        *facts,
        *[f"Warning: {warning}" for warning in report.warnings],
        f"Report {report.reportId[:16]}, created {report.createdAt}",
    ]


Columns = tuple[tuple[str, Callable[..., str]], ...]  # (title, its cell from a row's items)


def _table(columns: Columns, rows: list[tuple[Any, ...]], **titles: Any) -> Block:
    """A table of one row per item tuple; `titles` fill the titles' {fields}."""
    header = tuple(title.format(**titles) for title, _ in columns)
    return Block("table", header=header, rows=tuple(tuple(cell(*row) for _, cell in columns) for row in rows))


ARM_COLUMNS: Columns = (
    ("Arm", lambda arm: f"{arm.name} (control)" if arm.control else arm.name),
    ("Recall (positive answers)", lambda arm: _rate(arm.summary.recall)),
    ("Clean rate (clean answers)", lambda arm: _rate(arm.summary.clean_rate)),
    ("pass@{k} (cases, positive and clean together)", lambda arm: _rate(arm.summary.pass_at_k.all)),
    ("pass^{k} (cases, positive and clean together)", lambda arm: _rate(arm.summary.pass_hat_k.all)),
    ("Flaky cases", lambda arm: f"{len(arm.summary.flaky_cases)} of {arm.summary.cases_answered} cases"),
    ("Answered / unanswered (answers)", lambda arm: f"{arm.summary.answered} / {arm.unanswered}"),
    ("Asked", lambda arm: str(arm.answered - arm.fromCache)),
    ("Shared", lambda arm: str(arm.shared)),
    ("Cached", lambda arm: str(arm.fromCache)),
    ("Infra failures", lambda arm: str(arm.infrastructureFailures)),
    ("Missing", lambda arm: str(arm.missing)),
    ("Cost paid", _cost),
)
GUIDANCE_COLUMNS: Columns = (
    ("Guidance arm", lambda arm: arm.name),
    ("Evaluator", lambda arm: arm.evaluator),
    ("Outcome agreement", lambda arm: _short(arm.guidance.outcomeAgreement, 3)),
    ("Cited recall (mean)", lambda arm: _mean(arm.guidance.citedRecall)),
    ("Cited precision (mean)", lambda arm: _mean(arm.guidance.citedPrecision)),
)
VERDICT_COLUMNS: Columns = (  # one row per comparison: (arm, its result)
    ("Arm", lambda arm, result: arm),
    ("Verdict", lambda arm, result: f"**{result.verdict_text}**"),
    ("Mean per-case difference, all cases", lambda arm, result: _difference(result.overall)),
    ("Sign-flip p (raw)", lambda arm, result: _p(result.overall.test)),
    ("p adjusted", lambda arm, result: f"{result.p_adjusted:.4g} ({result.adjustment})"),
    ("Level", lambda arm, result: f"{result.alpha_used:.4g}"),
    (
        "Unanswered control / treatment (answers)",
        lambda arm, result: (
            f"{result.missing.control_missing}/{result.missing.control_slots} / "
            f"{result.missing.treatment_missing}/{result.missing.treatment_slots}"
        ),
    ),
    ("Missing-rate test p", lambda arm, result: f"{result.missing.p_value:.4g} (Fisher exact)"),
)
OUTCOME_COLUMNS: Columns = (  # one row per comparison and outcome: (arm, the outcome's PairedComparison)
    ("Arm", lambda arm, kind: arm),
    ("Outcome", lambda arm, kind: kind.label),
    (
        "Paired cases (better / worse / equal)",
        lambda arm, kind: f"{kind.paired_cases} ({kind.better} / {kind.worse} / {kind.equal})",
    ),
    ("Control mean per-case rate", lambda arm, kind: _short_value(kind.control_mean)),
    ("Treatment mean per-case rate", lambda arm, kind: _short_value(kind.treatment_mean)),
    ("Mean per-case difference", lambda arm, kind: _difference(kind)),
    ("Sign-flip p (two-sided)", lambda arm, kind: _p(kind.test)),
    (
        "p (one-sided, worse)",
        lambda arm, kind: f"{kind.test.p_lower:.4g}" + (" (harm check: worse)" if kind.worse_than_control else ""),
    ),
)


def method_note(report: ExperimentReport) -> list[str]:
    """What the numbers mean and how sure they are, in words."""
    k = report.epochs
    return [
        "Recall and clean rate of an arm count answers: passed (case, epoch) answers over answered ones; an "
        "unanswered epoch (an infra failure, or a result not there yet) is left out, never a fail. Their intervals "
        "resample whole cases (a case's epochs move together); where every case sits at one value the bootstrap "
        "has no spread, so a Wilson score interval over the cases is shown instead; an interval over fewer than "
        "15 cases is marked unreliable.",
        f"pass@{k} is the share of cases that passed in at least one answered epoch, pass^{k} the share that "
        f"passed in every answered epoch; both count cases answered at least once and combine positive and clean "
        "cases. A flaky case passed in some epochs and failed in others.",
        "Against the control, one estimand: the mean per-case difference (each case's pass rate over its answered "
        "epochs, treatment minus control, averaged with every case weighing the same). The verdict, the "
        "difference and its interval (a paired bootstrap over cases) are all about it, over all cases and over "
        "positive (recall) and clean (clean rate) cases apart. The test is an exact paired sign-flip "
        "permutation test (seeded Monte Carlo when counting exactly would be too costly).",
        "The verdict: better or worse when the test over all cases, Holm-adjusted over the treatment arms, is "
        "below the level, and no kind went significantly the other way (one-sided p below alpha, unadjusted: "
        "harm is looked for harder than benefit); otherwise mixed, naming each kind. No verdict when a case has "
        "no answered epoch in one arm, or the arms lost answers at rates chance does not explain (two-sided "
        "Fisher exact test on the unanswered counts).",
        "Looking again after adding epochs raises the chance of a false verdict: every earlier report with fewer "
        "epochs is listed; `looks: N` in the experiment file spends alpha over N looks (O'Brien-Fleming).",
        "For a guidance arm a case with no expected knowledge (no-knowledge, not-applicable) counts as a clean "
        "control.",
    ]


def _case_cell(case: Any, arm: ArmReport) -> Marks:
    results = case.outcomes.get(arm.name, [])
    links = case.transcripts.get(arm.name, [])
    answered = [r for r in results if r is not None]
    text = f"{sum(answered)}/{len(answered)}" + (" (flaky)" if case.id in arm.summary.flaky_cases else "")
    marks = tuple(
        ("✓" if result else ("✗" if result is False else "–"), link, f"epoch {number}")
        for number, (result, link) in enumerate(zip(results, links, strict=True), start=1)
    )
    return Marks(text, marks)


def _mean(measure: Any) -> str:
    return f"{measure.mean:.3f} over {measure.reports} report(s)" if measure.mean is not None else "n/a"


def _short(rate: Any, digits: int = 2) -> str:
    return f"{rate.value:.{digits}f} ({rate.passed}/{rate.total})" if rate.value is not None else "n/a"


def _short_value(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a"


def render_markdown(report: ExperimentReport) -> str:
    lines: list[str] = []
    for block in document(report):
        if block.kind in ("h1", "h2"):
            lines += ["#" * int(block.kind[1]) + f" {block.text}", ""]
        elif block.kind == "para":
            lines += [block.text, ""]
        elif block.kind == "list":
            lines += [f"- {item}" for item in block.items] + [""]
        else:
            lines.append("| " + " | ".join(map(_md_cell, block.header)) + " |")
            lines.append("|" + "---|" * len(block.header))
            lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in block.rows]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:80rem;color:#1b1f24}"
    "table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"
    "th{background:#f6f8fa}td a{text-decoration:none}"
)


def _html_cell(cell: Cell) -> str:
    if isinstance(cell, str):  # a Markdown **bold** cell is <strong>
        bold = cell.startswith("**") and cell.endswith("**")
        return f"<strong>{escape(cell[2:-2])}</strong>" if bold else escape(cell)
    marks = " ".join(
        f'<a href="{escape(link)}" title="{escape(title)}">{symbol}</a>'
        if link
        else f'<span title="{escape(title)}">{symbol}</span>'
        for symbol, link, title in cell.marks
    )
    return f"{escape(cell.text)} {marks}".rstrip()


def render_html(report: ExperimentReport) -> str:
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>bceval experiment {escape(report.name)}</title>',
        f"<style>{_CSS}</style></head><body>",
    ]
    for block in document(report):
        if block.kind in ("h1", "h2"):
            parts.append(f"<{block.kind}>{escape(block.text)}</{block.kind}>")
        elif block.kind == "para":
            parts.append(f"<p>{escape(block.text)}</p>")
        elif block.kind == "list":
            parts.append("<ul>" + "".join(f"<li>{escape(item)}</li>" for item in block.items) + "</ul>")
        else:
            parts.append("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in block.header) + "</tr>")
            parts += ["<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>" for row in block.rows]
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# --- the published page ------------------------------------------------------------------------------------------

EXPERIMENT_PAGE = PageFormat(
    (
        "<!-- bceval:experiment:latest:begin -->",
        "<!-- bceval:experiment:latest:end -->",
        "<!-- bceval:experiment:history:begin -->",
        "<!-- bceval:experiment:history:end -->",
    ),
    "# bceval experiments\n\nPublished with `bceval experiment publish`. Text outside bceval's marker comments is "
    "yours to edit; the latest experiment and the history rows are maintained by bceval.",
    "| Date | Experiment | Arms | Epochs | Cases | Verdicts against the control | Report |\n"
    "|---|---|---|---|---|---|---|",
)


def experiment_entry(report: ExperimentReport) -> Entry:
    verdicts = "; ".join(
        f"{c.arm}: {c.result.verdict_text} (p = {c.result.p_value:.3g}"
        + (f", Holm-adjusted {c.result.p_adjusted:.3g})" if c.result.family > 1 else ")")
        for c in report.comparisons
    )
    cell = f"`{report.reportId[:16]}`"
    row = (
        f"| {report.createdAt[:10]} | {report.name} | {', '.join(a.name for a in report.arms)} | {report.epochs} | "
        f"{max((a.cases for a in report.arms), default=0)} | {verdicts} | {cell} |"
    )
    latest = render_markdown(report).replace("# Experiment", "### Experiment", 1).replace("\n## ", "\n#### ")
    return Entry(latest, row, f"Report `{report.reportId[:16]}`", cell)
