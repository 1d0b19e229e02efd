"""Experiment actions: export the corpora refs name, prepare each variant, answer each (arm, epoch, case), report."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from bceval.agents.registry import capabilities
from bceval.config import Settings
from bceval.errors import BcevalError, EvaluationFailed
from bceval.evaluators.registry import GUIDANCE
from bceval.experiment.plan import Plan, arm_settings, corpus_export
from bceval.jsonio import dumps, write_atomic
from bceval.review.cases import ReviewCase


def export_corpora(settings: Settings, plan: Callable[[], Plan]) -> None:
    """Each commit a ref names, exported once into out/corpora/ (shared by every experiment)."""
    from bceval.experiment.corpora import export_commit

    for arm in plan().arms:
        if arm.commit is not None and arm.repository is not None:
            target = corpus_export(settings.out, arm.commit, arm.subdir)
            if export_commit(arm.repository, arm.commit, arm.subdir, target, as_checkout=arm.guidance):
                print(
                    f"Exported {arm.fields['ref']} ({arm.commit[:12]}) for arm {arm.name} into {target}",
                    file=sys.stderr,
                )


def prepare_variants(settings: Settings, plan: Callable[[], Plan]) -> None:
    """`bceval prepare` of every variant, each in its own folder and process (incremental, like any prepare)."""
    current = plan()
    done: set[str] = set()
    for arm in current.arms:
        if arm.variant in done or arm.guidance:  # a guidance run prepares its own requests
            continue
        done.add(arm.variant)
        run = arm_settings(current, arm, settings, 1)
        command = [sys.executable, "-m", "bceval", "prepare", "--corpus", str(run.corpus), "--out", str(run.out)]
        if arm.manifest is not None:
            command += ["--manifest", str(arm.manifest)]
        env = {key: value for key, value in os.environ.items() if not key.startswith("BCEVAL_")}
        done_process = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done_process.returncode != 0:
            lines = [line for line in (done_process.stdout + done_process.stderr).splitlines() if line.strip()]
            lines = [line for line in lines if not line.startswith("bceval: corpus ")]
            raise EvaluationFailed(f"Experiment {current.experiment.name}: arm '{arm.name}' does not prepare:", lines)


def write_run_record(settings: Settings, selected: list[str]) -> None:
    """run.json of one (arm, epoch) run."""
    from bceval.steps.answer import write_run_record as write

    write(settings, selected, replace=True)


def answer_unit(answers: Callable[[], Any], case: ReviewCase, note: dict[str, Any] | None) -> None:
    from bceval.steps.prepare import require_complete

    run = answers()
    require_complete(run.settings)
    run.answer(case, note)


def write_report(settings: Settings, plan: Callable[[], Plan], selected: Callable[[], dict[str, list[str]]]) -> None:
    """report.json, .md and .html of the experiment; its verdict lines on stdout."""
    from bceval.experiment.report import build_report, headline, render_html, render_markdown
    from bceval.scorecard.model import created_at

    current = plan()
    report = build_report(current, settings, selected(), created_at())
    write_atomic(current.out / "report.json", dumps(report.model_dump(mode="json")))
    write_atomic(current.out / "report.md", render_markdown(report))
    write_atomic(current.out / "report.html", render_html(report))
    for warning in report.warnings:
        print(f"bceval: warning: {warning}", file=sys.stderr)
    for line in headline(report):
        print(line)
    print(f"Report: {current.out / 'report.md'}")


def publish_report(plan: Plan, page: Any) -> None:
    from bceval.experiment.report import ExperimentReport, experiment_entry, experiment_page
    from bceval.jsonio import parse_json
    from bceval.scorecard.publish import publish_entry

    path = plan.out / "report.json"
    if not path.is_file():
        raise BcevalError(f"{path}: no report yet; run bceval experiment run (or report) first")
    report = ExperimentReport.model_validate(parse_json(path.read_bytes(), str(path)))
    changed = publish_entry(page, experiment_entry(report), experiment_page())
    state = "updated" if changed else "already up to date"
    print(f"Published experiment {report.name} ({report.reportId[:12]}) to {page}: {state}.")


def guidance_unit(settings: Settings, plan: Callable[[], Plan], arm_name: str, epoch: int) -> None:
    """One whole guidance run of an arm's epoch (prepare, capture, answer, score) into a new run directory."""
    from bceval.steps.guidance_run import next_run_directory, run_from_files

    current = plan()
    arm = current.arm(arm_name)
    run = arm_settings(current, arm, settings, epoch)
    adapter = arm.fields["adapter"] or "oracle"  # a guidance arm's known-good control, unless it names its agent
    agent = None
    if GUIDANCE not in capabilities(adapter).questions:
        raise BcevalError(f"arm '{arm.name}': a guidance arm answers with oracle or command, not {adapter}")
    if capabilities(adapter).live:
        from bceval.config import agent_settings

        agent = agent_settings(run)
    assert arm.manifest is not None and arm.workspace_map is not None
    directory = next_run_directory(guidance_folder(current, arm.name, epoch))
    try:
        _, outcome = run_from_files(arm.corpus, arm.manifest, arm.workspace_map, directory, adapter, agent, run.hide)
    except BcevalError as exc:  # the guidance run's own errors and its agent's (e.g. a refused sandbox grant)
        raise BcevalError(f"Experiment {current.experiment.name}: arm '{arm.name}', epoch {epoch}: {exc}") from None
    verdict = "passed" if outcome.passed else f"{len(outcome.problems)} problem(s)"
    print(f"[{arm.name} e{epoch}] guidance run {directory.name}: {verdict}", file=sys.stderr)


def guidance_inputs(arm: Any) -> dict[str, Any]:
    """What a guidance arm's epoch reads besides its fields: the knowledge checkout (commit and state), the
    manifest, the workspace map and each workspace's commit. A change to any of them runs the epoch again;
    whatever cannot be read is left to the run itself to report."""
    import hashlib
    import json

    from bceval.guidance import GuidanceError
    from bceval.guidance.evidence import file_sha256, run_git

    def state(root: Any) -> str:
        try:
            status = run_git(root, "status", "--porcelain", raw=True)
            return run_git(root, "rev-parse", "HEAD") + "+" + hashlib.sha256(status).hexdigest()
        except GuidanceError:
            return "unreadable"

    def digest(path: Any) -> str:
        try:
            return file_sha256(path)
        except OSError:
            return "unreadable"

    try:
        bound = json.loads(arm.workspace_map.read_text(encoding="utf-8"))
        workspaces = {key: state(value) for key, value in sorted(bound.items()) if isinstance(value, str)}
    except (OSError, ValueError, AttributeError):
        workspaces = {}
    return {
        "knowledge": state(arm.corpus),
        "manifest": digest(arm.manifest),
        "workspaceMap": digest(arm.workspace_map),
        "workspaces": workspaces,
    }


def guidance_folder(plan: Plan, arm_name: str, epoch: int) -> Any:
    return plan.variant_out(plan.arm(arm_name).variant) / "guidance" / f"{arm_name}-e{epoch}"


def completed_guidance_run(folder: Any) -> Any:
    """The newest run directory under `folder` that finished (its run.json written), or None."""
    runs = sorted((path for path in folder.glob("run-*") if (path / "run.json").is_file()), key=lambda p: p.name)
    return runs[-1] if runs else None
