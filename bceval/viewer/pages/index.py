"""The index page: every run, experiment and guidance run of the output folder, newest first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from bceval.viewer.collect import Experiment, GuidanceRun, ReviewRun, Site
from bceval.viewer.html import cost, render, safe_name
from bceval.viewer.pages.common import short_rate


class Entry(NamedTuple):
    kind: str
    name: str
    href: str
    adapter: str
    model: str
    verdict: str
    score: str
    cost: str
    date: str


def _run_entry(run: ReviewRun) -> Entry:
    score = f"recall {short_rate(*run.rate('positive'))}, clean rate {short_rate(*run.rate('clean'))}"
    return Entry(
        "run", run.name, f"{run.key}/index.html", run.adapter, run.model, run.verdict, score, cost(run.cost), run.date
    )


def _experiment_entry(experiment: Experiment) -> Entry:
    report = experiment.report
    arms = report.get("arms") or []
    verdicts = "; ".join(
        f"{c.get('arm')}: {(c.get('result') or {}).get('verdict', '-')}" for c in report.get("comparisons") or []
    )
    adapters = ", ".join(sorted({str((a.get("settings") or {}).get("adapter") or "-") for a in arms}))
    models = ", ".join(sorted({str((a.get("settings") or {}).get("model") or "-") for a in arms}))
    spent = [c for a in arms if isinstance(c := (a.get("usage") or {}).get("costUsd"), int | float)]
    return Entry(
        "experiment",
        experiment.name,
        f"experiments/{safe_name(experiment.name)}/index.html",
        adapters,
        models,
        verdicts or "-",
        f"{len(arms)} arms × {report.get('epochs')} epochs",
        cost(sum(spent)) if spent else "unknown",
        str(report.get("createdAt") or ""),
    )


def _guidance_entry(run: GuidanceRun) -> Entry:
    agreed = sum(c.reported_outcome == c.expected_outcome for c in run.cases)
    usage = run.record.get("usage") if isinstance(run.record.get("usage"), dict) else {}
    model = (run.record.get("agent") or {}).get("model") if isinstance(run.record.get("agent"), dict) else None
    return Entry(
        "guidance run",
        run.name,
        f"{run.key}/index.html",
        str(run.record.get("adapter", "-")),
        str(model or "-"),
        run.verdict,
        f"outcome agreement {short_rate(agreed, len(run.cases))}",
        cost(usage.get("costUsd")),
        "",
    )


def index_page(site: Site, compares: Sequence[tuple[str, str, str]]) -> str:
    entries = [_run_entry(run) for run in site.runs]
    entries += [_experiment_entry(experiment) for experiment in site.experiments]
    entries += [_guidance_entry(run) for run in site.guidance]
    entries.sort(key=lambda e: e.date, reverse=True)  # newest first; undated ones keep their order at the end
    title = "Runs, experiments and guidance runs"
    return render("index.html", title=title, entries=entries, compares=compares, out=site.out)
