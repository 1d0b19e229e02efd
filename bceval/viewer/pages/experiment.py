"""The pages of an experiment: verdicts, plots, flaky cases and the grid of every cell, split into pages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bceval.viewer import markdown, svg
from bceval.viewer.collect import Experiment
from bceval.viewer.html import fragment, render, safe_name
from bceval.viewer.pages.common import case_href, ratio, up

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


def _marks(experiment: Experiment, root: str, arm: str, line: dict[str, Any]) -> list[dict[str, Any]]:
    """One arm's mark for each epoch of a case, each linking to its case page when the run is there."""
    marks = []
    for epoch, passed in enumerate((line.get("outcomes") or {}).get(arm) or [], 1):
        run = experiment.runs.get((arm, epoch))
        mark, label = {True: ("✓", "passed"), False: ("✗", "failed")}.get(passed, ("–", "no answer"))
        href = None
        if run is not None:
            href = case_href(run.key, str(line.get("modelId")))
            here = f"experiments/{safe_name(experiment.name)}/"  # the experiment's pages: its runs are below them
            href = href[len(here) :] if href.startswith(here) else f"{root}/{href}"
        marks.append(
            {"mark": mark, "label": label, "href": href, "title": f"{arm} e{epoch} {label}", "cell": f"{arm}|{epoch}"}
        )
    return marks


def _grid(experiment: Experiment, cases: Sequence[dict[str, Any]], root: str) -> dict[str, Any]:
    """The grid of every (arm, epoch) cell of `cases`, for the grid macro."""
    arms = [str(a.get("name")) for a in experiment.report.get("arms") or []]
    flaky = _flaky(experiment.report)
    rows = []
    for line in cases:
        failing = any(v is False for values in (line.get("outcomes") or {}).values() for v in values or [])
        cells = [(_marks(experiment, root, arm, line), (arm, line.get("id")) in flaky) for arm in arms]
        rows.append(
            {"line": line, "text": f"{line.get('id')} {line.get('domain')}", "failing": failing, "cells": cells}
        )
    return {"arms": arms, "rows": rows}


def _flaky(report: dict[str, Any]) -> set[tuple[str, Any]]:
    found = set()
    for arm in report.get("arms") or []:
        for case in (arm.get("summary") or {}).get("flaky_cases") or []:
            found.add((str(arm.get("name")), case if isinstance(case, str) else (case or {}).get("id")))
    return found


def experiment_page(experiment: Experiment, key: str, pages: int, compares: Sequence[tuple[str, str, str]]) -> str:
    root = up(key)
    report = experiment.report
    verdicts = [
        f"{c.get('arm')} vs {c.get('control')} (control): {(c.get('result') or {}).get('verdict', '-')}; "
        f"{(c.get('result') or {}).get('explanation', '')}"
        for c in report.get("comparisons") or []
    ]
    of = {line.get("id"): line for line in report.get("cases") or []}  # case id -> its line
    flaky = sorted(_flaky(report), key=lambda pair: (pair[0], str(pair[1])))
    listed = [
        (arm, case_id, _marks(experiment, root, arm, of.get(case_id) or {})) for arm, case_id in flaky[:FLAKY_LISTED]
    ]
    runs = [
        (f"{root}/{run.key}/index.html", f"{arm} epoch {epoch}")
        for (arm, epoch), run in sorted(experiment.runs.items())
    ]
    cases = report.get("cases") or []
    return render(
        "experiment.html",
        title=f"Experiment {experiment.name}",
        root=root,
        verdicts=verdicts,
        plots=fragment(experiment_plots(report)),
        flaky=listed,
        total=len(flaky),
        more=len(flaky) - FLAKY_LISTED,
        compares=compares,
        runs=runs,
        report=fragment(markdown.render(experiment.markdown)) if experiment.markdown else None,
        count=len(cases),
        page=1,
        pages=pages,
        grid=_grid(experiment, cases[:CASES_PER_PAGE], root),
    )


def experiment_cases_page(experiment: Experiment, key: str, number_: int, pages: int) -> str:
    root = up(key)
    cases = (experiment.report.get("cases") or [])[(number_ - 1) * CASES_PER_PAGE : number_ * CASES_PER_PAGE]
    title = f"Experiment {experiment.name}: cases, page {number_}"
    grid = _grid(experiment, cases, root)
    crumbs = [("index.html", experiment.name)]
    return render("experiment_cases.html", title=title, root=root, crumbs=crumbs, page=number_, pages=pages, grid=grid)
