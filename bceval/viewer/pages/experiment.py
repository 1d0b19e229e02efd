"""The pages of an experiment: verdicts, plots, flaky cases and the grid of every cell, split into pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bceval.viewer import markdown, svg
from bceval.viewer.collect import Experiment
from bceval.viewer.html import bullets, esc, filters, link, page, row_data, safe_name, table
from bceval.viewer.pages.common import case_href, compare_links, ratio, up

CASES_PER_PAGE = 100  # an experiment's case grid is split into pages of this many cases
FLAKY_LISTED = 50  # flaky (arm, case) pairs listed with their cells at the top of the experiment page


def _pooled(summary: dict[str, Any]) -> float | None:
    recall, clean = summary.get("recall") or {}, summary.get("clean_rate") or {}
    total = (recall.get("total") or 0) + (clean.get("total") or 0)
    return ratio((recall.get("passed") or 0) + (clean.get("passed") or 0), total)


def experiment_plots(report: dict[str, Any]) -> str:
    arms = report.get("arms") or []
    forest_rows = []
    for comparison in report.get("comparisons") or []:
        result = comparison.get("result") or {}
        for measure, label in (("recall", "recall"), ("clean_rate", "clean rate")):
            part = result.get(measure) or {}
            interval = part.get("interval") if isinstance(part.get("interval"), dict) else {}
            name = f"{comparison.get('arm')} {label}"
            forest_rows.append(svg.Interval(name, part.get("difference"), interval.get("low"), interval.get("high")))
    title = "Difference against the control (95% paired bootstrap interval)"
    out = svg.forest(title, forest_rows) if forest_rows else ""
    points = [
        (str(a.get("name")), (a.get("usage") or {}).get("costUsd"), _pooled(a.get("summary") or {})) for a in arms
    ]
    if any(x is not None for _, x, _ in points):
        out += svg.scatter("Cost against score per arm", points, "cost (USD)", "pass rate")
    else:
        out += '<p class="muted">Cost against score: no arm\'s agent reported a cost.</p>'
    epochs = int(report.get("epochs") or 1)
    series = []
    for arm in arms:
        per_epoch = (arm.get("summary") or {}).get("per_epoch") or []
        series.append((str(arm.get("name")), [_pooled(e) for e in per_epoch][:epochs]))
    out += svg.lines("Pass rate per epoch", [f"epoch {n}" for n in range(1, epochs + 1)], series)
    return out


def _marks(experiment: Experiment, root: str, arm: str, line: dict[str, Any]) -> str:
    """One arm's mark for each epoch of a case, each linking to its case page when the run is there."""
    marks = []
    for epoch, passed in enumerate((line.get("outcomes") or {}).get(arm) or [], 1):
        run = experiment.runs.get((arm, epoch))
        mark, label = {True: ("✓", "passed"), False: ("✗", "failed")}.get(passed, ("–", "no answer"))
        if run is None:
            marks.append(f'<span title="{esc(label)}">{mark}</span>')
            continue
        href = case_href(run.key, str(line.get("modelId")))
        here = f"experiments/{safe_name(experiment.name)}/"  # the experiment's pages: its runs are below them
        href = href[len(here) :] if href.startswith(here) else f"{root}/{href}"
        marks.append(link(href, mark, title=f"{arm} e{epoch} {label}", data_cell=f"{arm}|{epoch}"))
    return " ".join(marks)


def experiment_grid(experiment: Experiment, cases: Sequence[dict[str, Any]], root: str) -> str:
    arms = [str(a.get("name")) for a in experiment.report.get("arms") or []]
    flaky = _flaky(experiment.report)
    rows, attrs = [], []
    for line in cases:
        cells = [esc(line.get("id")), esc(line.get("kind"))]
        for arm in arms:
            note = ' <span class="badge infra">flaky</span>' if (arm, line.get("id")) in flaky else ""
            cells.append(_marks(experiment, root, arm, line) + note)
        rows.append(cells)
        failing = any(v is False for values in (line.get("outcomes") or {}).values() for v in values or [])
        attrs.append(row_data(f"{line.get('id')} {line.get('domain')}", failing) + ' class="cell"')
    return filters(failed=True) + table(["Case", "Kind", *arms], rows, "grid", attrs)


def _flaky(report: dict[str, Any]) -> set[tuple[str, Any]]:
    found = set()
    for arm in report.get("arms") or []:
        for case in (arm.get("summary") or {}).get("flaky_cases") or []:
            found.add((str(arm.get("name")), case if isinstance(case, str) else (case or {}).get("id")))
    return found


def experiment_page(experiment: Experiment, key: str, pages: int, compares: Sequence[tuple[str, str, str]]) -> str:
    root = up(key)
    report = experiment.report
    lines_ = [
        f"{c.get('arm')} vs {c.get('control')} (control): {(c.get('result') or {}).get('verdict', '-')}; "
        f"{(c.get('result') or {}).get('explanation', '')}"
        for c in report.get("comparisons") or []
    ]
    body = bullets(map(esc, lines_), "verdicts")
    body += experiment_plots(report)
    flaky = sorted(_flaky(report), key=lambda pair: (pair[0], str(pair[1])))
    if flaky:
        of = {line.get("id"): line for line in report.get("cases") or []}  # case id -> its line
        items = [
            f'<li class="flaky">{esc(arm)}: {esc(case_id)} {_marks(experiment, root, arm, of.get(case_id) or {})}</li>'
            for arm, case_id in flaky[:FLAKY_LISTED]
        ]
        more = len(flaky) - FLAKY_LISTED
        rest = f"<p>{more} more, each marked flaky in the grid below.</p>" if more > 0 else ""
        body += f"<h2>Flaky cases ({len(flaky)})</h2><ul>" + "".join(items) + "</ul>" + rest
    body += compare_links(root, compares, "Arms side by side")
    runs = sorted(experiment.runs.items())
    if runs:
        items = (link(f"{root}/{run.key}/index.html", f"{arm} epoch {epoch}") for (arm, epoch), run in runs)
        body += "<h2>Runs</h2>" + bullets(items)
    body += "<h2>Report</h2>" + (
        markdown.render(experiment.markdown) if experiment.markdown else '<p class="muted">report.md is missing.</p>'
    )
    cases = report.get("cases") or []
    body += f"<h2>Every cell ({len(cases)} cases)</h2>"
    if pages > 1:
        body += _pager(1, pages)
    body += experiment_grid(experiment, cases[:CASES_PER_PAGE], root)
    return page(f"Experiment {experiment.name}", body, root)


def _pager(current: int, pages: int) -> str:
    links = []
    for n in range(1, pages + 1):
        href = "index.html" if n == 1 else f"cases-{n}.html"
        links.append(f"<strong>{n}</strong>" if n == current else link(href, str(n)))
    return f'<nav class="pages">Pages: {" ".join(links)}</nav>'


def experiment_cases_page(experiment: Experiment, key: str, number_: int, pages: int) -> str:
    root = up(key)
    cases = (experiment.report.get("cases") or [])[(number_ - 1) * CASES_PER_PAGE : number_ * CASES_PER_PAGE]
    body = _pager(number_, pages) + experiment_grid(experiment, cases, root)
    return page(f"Experiment {experiment.name}: cases, page {number_}", body, root, [("index.html", experiment.name)])
