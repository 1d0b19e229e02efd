"""Experiment actions: export the corpora refs name, prepare each variant, answer each (arm, epoch, case), report."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from bceval.clock import created_at
from bceval.config import Settings, load_settings
from bceval.errors import BcevalError, EvaluationFailed
from bceval.experiment.plan import Plan, arm_settings
from bceval.experiment.render import (
    EXPERIMENT_PAGE,
    budget_line,
    experiment_entry,
    headline,
    render_html,
    render_markdown,
)
from bceval.experiment.report_model import ExperimentReport, read_report
from bceval.jsonio import dumps, parse_json, read_regular_bytes, read_regular_text, write_atomic
from bceval.layout import EXPORT_DONE, ExperimentDir, OutDir
from bceval.scorecard.publish import publish_entry
from bceval.steps.budget import Budget, experiment_ledger, unpriced_warning
from bceval.steps.experiment_report import load_report
from bceval.vcs import export_commit


def export_corpora(settings: Settings, plan: Callable[[], Plan]) -> None:
    """Each commit a ref names, exported once into out/corpora/ (shared by every experiment)."""
    for arm in plan().arms:
        if arm.commit is not None and arm.repository is not None:
            target = OutDir(settings.out).corpus_export(arm.commit, arm.subdir)
            as_checkout = arm.evaluated_by.traits.needs_checkout
            if export_commit(arm.repository, arm.commit, arm.subdir, target, EXPORT_DONE, as_checkout=as_checkout):
                print(
                    f"Exported {arm.fields['ref']} ({arm.commit[:12]}) for arm {arm.name} into {target}",
                    file=sys.stderr,
                )


def prepare_variants(settings: Settings, plan: Callable[[], Plan], prepare: Callable[[Settings], int]) -> None:
    """`bceval prepare` of every variant, each in its own folder with its own incremental graph, in this process.

    `prepare(settings)` is that graph's run (the graph layer passes it in: steps never import the graph);
    it returns the exit code. What a variant's prepare says is kept quiet unless it fails; then every line it
    wrote, stdout's before stderr's and without its corpus line, is the failure's. A variant's settings are those
    `bceval prepare --corpus C --out O [--manifest M]` resolves to, nothing from the BCEVAL_* environment (an arm's
    settings are its file's)."""
    current = plan()
    done: set[str] = set()
    for arm in current.arms:
        if arm.variant in done or arm.evaluated_by.traits.prepares_in_run:
            continue
        done.add(arm.variant)
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            try:
                run = arm_settings(current, arm, settings, 1)
                environ = {key: value for key, value in os.environ.items() if not key.startswith("BCEVAL_")}
                manifest = str(arm.manifest) if arm.manifest is not None else None
                code = prepare(
                    load_settings(environ=environ, corpus=str(run.corpus), out=str(run.out), manifest=manifest)
                )
            except BcevalError as exc:  # as bceval's command line reports it
                print(f"bceval: {exc}", file=sys.stderr)
                code = exc.exit_code
        if code != 0:
            lines = [line for line in (out.getvalue() + err.getvalue()).splitlines() if line.strip()]
            lines = [line for line in lines if not line.startswith("bceval: corpus ")]
            raise EvaluationFailed(f"Experiment {current.experiment.name}: arm '{arm.name}' does not prepare:", lines)


def experiment_spending(plan: Plan, settings: Settings) -> Budget | None:
    """The experiment's budget over every arm and epoch, or None without one; when a live arm's cost is not known
    up front (no price for its model), one line says so before any case."""
    budget = experiment_ledger(plan, settings)
    if budget is None:
        return None
    runs = [arm_settings(plan, arm, settings, 1) for arm in plan.arms]
    warning = unpriced_warning(f"maxCost {budget.limit:g}", settings.prices, [run.model for run in runs if run.live])
    if warning:
        print(warning, file=sys.stderr)
    return budget


def save_report(
    settings: Settings, plan: Callable[[], Plan], chosen: Callable[[], dict[str, list[Any]]], reuse: bool = False
) -> ExperimentReport:
    """report.json, .md and .html of the experiment (`chosen`: per arm, the cases it covers). `reuse` (a run's
    report): a report that comes out as the one there but for its creation time keeps that one's files (and
    creation time), so a rebuild that finds nothing new changes nothing."""
    current = plan()
    folder = current.folder
    selected = {arm: [case.id for case in cases] for arm, cases in chosen().items()}
    report = load_report(current, settings, selected, created_at())
    if reuse:
        report = _as_before(folder.report("json"), report) or report
    texts = {"json": dumps(report.model_dump(mode="json")), "md": render_markdown(report), "html": render_html(report)}
    for suffix, text in texts.items():
        write_atomic(folder.report(suffix), text)  # it leaves a file with these very bytes alone
    return report


def write_report(settings: Settings, plan: Callable[[], Plan], chosen: Callable[[], dict[str, list[Any]]]) -> None:
    """`bceval experiment report`: the report from the answers there are, and its verdict lines."""
    _say(save_report(settings, plan, chosen), plan().folder)


def say_verdict(plan: Callable[[], Plan]) -> None:
    """The verdict lines of the report there, rebuilt or up to date (a run's last task)."""
    _say(_saved_report(plan()), plan().folder)


def _say(report: ExperimentReport, folder: ExperimentDir) -> None:
    """The report's warnings on stderr, its verdict lines on stdout."""
    for warning in report.warnings:
        print(f"bceval: warning: {warning}", file=sys.stderr)
    budget = budget_line(report)
    for line in [*headline(report), *([budget] if budget else []), f"Report: {folder.report('md')}"]:
        print(line)


def _as_before(path: Path, report: ExperimentReport) -> ExperimentReport | None:
    """The report with the creation time of the one at `path`, if that is all they differ in."""
    try:
        before = read_regular_text(path, "utf-8")
        same = report.model_copy(update={"createdAt": json.loads(before)["createdAt"]})
    except (OSError, ValueError, TypeError, KeyError):  # none there, or not a report
        return None
    return same if dumps(same.model_dump(mode="json")) == before else None


def _saved_report(plan: Plan) -> ExperimentReport:
    path = plan.folder.report("json")
    if not path.is_file():
        raise BcevalError(f"{path}: no report yet; run bceval experiment run (or report) first")
    return read_report(parse_json(read_regular_bytes(path), str(path)), str(path))


def publish_report(plan: Plan, page: Any) -> None:
    report = _saved_report(plan)
    changed = publish_entry(page, experiment_entry(report), EXPERIMENT_PAGE)
    state = "updated" if changed else "already up to date"
    print(f"Published experiment {report.name} ({report.reportId[:12]}) to {page}: {state}.")
