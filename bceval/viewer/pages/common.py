"""What every page kind shares: relative links, case pages and rates as text."""

from __future__ import annotations

from typing import Any

from bceval.jsonio import read_json_or_none
from bceval.layout import RunDir
from bceval.scorecard.stats import wilson_interval
from bceval.viewer.collect import Run
from bceval.viewer.html import render, safe_name
from bceval.viewer.pages.transcript import conversation


def up(key: str) -> str:
    """From a page in folder `key` back to the root ('runs/x' -> '../..')."""
    return "/".join(".." for _ in key.split("/")) if key else ""


def case_href(run_key: str, model_id: str) -> str:
    return f"{run_key}/cases/{safe_name(model_id)}.html"


def experiment_crumbs(root: str, experiment: str | None) -> list[tuple[str, str]]:
    """The way back to the experiment a run belongs to (none for a run of its own)."""
    return [(f"{root}/experiments/{safe_name(experiment)}/index.html", experiment)] if experiment else []


def case_page_of(template: str, title: str, run: Run, case: Any, **context: Any) -> str:
    """A case page of a run: the way back to the run and the case's conversation; a `transcript` callable in
    `context` gets the transcript and returns more context."""
    root = up(f"{run.key}/cases")
    transcript = read_json_or_none(run.directory / case.transcript) if case.transcript else None
    context.update(context.pop("transcript", lambda _: {})(transcript))
    crumbs = [(f"{root}/{run.key}/index.html", run.name)]
    talk = conversation(transcript, RunDir(run.directory))
    return render(template, title=title, root=root, crumbs=crumbs, run=run, case=case, conversation=talk, **context)


def short_rate(passed: int, total: int) -> str:
    return f"{passed / total:.3f} ({passed}/{total})" if total else "-"


def rate_text(passed: int, total: int) -> str:
    if not total:
        return "-"
    low, high = wilson_interval(passed, total)
    return f"{short_rate(passed, total)}, Wilson 95% {low:.2f}–{high:.2f}"


def ratio(passed: int, total: int) -> float | None:
    return passed / total if total else None
