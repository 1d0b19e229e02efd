"""CI outputs of `score`, `experiment run|report` and `guidance run`: `--junit PATH` (bceval.scorecard.junit) and,
when `$GITHUB_STEP_SUMMARY` names a file, the Markdown summary appended to it (score and experiment report)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bceval.config import Settings, environment_values
from bceval.errors import BcevalError
from bceval.jsonio import read_json_or_none, write_atomic
from bceval.layout import ExperimentDir, RunDir
from bceval.scorecard.junit import TestCase, outcome_of, render
from bceval.viewer.collect import (
    CaseRow,
    GuidanceCaseRow,
    GuidanceRun,
    ReviewRun,
    read_experiment,
    read_guidance_run,
    read_review_run,
)


def _write(path: Path, suite: str, cases: list[TestCase]) -> None:
    try:
        write_atomic(path, render(suite, cases))
    except OSError as exc:
        raise BcevalError(f"--junit {path}: cannot write the report ({exc.strerror})") from None
    print(f"bceval: JUnit report: {path}", file=sys.stderr)


def review_case(row: CaseRow, classname: str, suffix: str = "") -> TestCase:
    outcome = outcome_of(row.passed, row.infra is not None)
    message = "" if outcome == "passed" else row.reason
    detail = f"{row.id} ({row.model_id}, {row.domain}, {row.kind}): {message}" if message else ""
    wall = row.usage.get("wallSeconds")
    seconds = float(wall) if isinstance(wall, int | float) else None
    return TestCase(f"{row.id}{suffix}", classname, outcome, message, detail, seconds)


def guidance_case(run: GuidanceRun, row: GuidanceCaseRow, classname: str, suffix: str = "") -> TestCase:
    # the agent's own failure (no report at all), from its transcript, is an infrastructure failure
    transcript = read_json_or_none(run.directory / row.transcript) if row.transcript else None
    said = transcript.get("outcome") if isinstance(transcript, dict) else None
    infra = said if isinstance(said, str) and said.startswith("failed") else None
    outcome = outcome_of(row.passed, infra is not None)
    message = infra or "; ".join(row.problems)
    return TestCase(f"{row.id}{suffix}", classname, outcome, message if outcome != "passed" else "", message)


def write_guidance_junit(run_dir: Path, path: Path) -> None:
    """One test case per manifest case of a guidance run; a run that did not finish is one error."""
    if not RunDir(run_dir).record.is_file():
        cases = [TestCase("guidance run", "bceval.guidance", "error", "the run did not finish: it has no run.json")]
    else:
        run = read_guidance_run(run_dir, "", run_dir.name)
        cases = [guidance_case(run, row, f"bceval.guidance.{run_dir.name}") for row in run.cases]
    _write(path, f"bceval guidance run {run_dir.name}", cases)


def write_experiment_junit(directory: Path, path: Path) -> None:
    """One test case per (arm, epoch, case) of an experiment's report; a cell with no answer yet is skipped."""
    experiment = read_experiment(directory, "")
    if experiment is None:
        raise BcevalError(f"--junit {path}: {ExperimentDir(directory).report()} is missing or unreadable")
    report = experiment.report
    cases: list[TestCase] = []
    for arm_report in report.get("arms") or []:
        arm = str(arm_report.get("name"))
        classname = f"bceval.experiment.{experiment.name}.{arm}"
        for epoch in range(1, int(report.get("epochs") or 1) + 1):
            run = experiment.runs.get((arm, epoch))
            suffix = f" [{arm} epoch {epoch}]"
            rows: dict[str, Any] = {row.id: row for row in run.cases} if run is not None else {}
            for line in report.get("cases") or []:
                if (line.get("outcomes") or {}).get(arm) is None:
                    continue  # the arm does not cover this case
                row = rows.get(str(line.get("id")))
                if isinstance(run, ReviewRun) and row is not None:
                    cases.append(review_case(row, classname, suffix))
                elif isinstance(run, GuidanceRun) and row is not None:
                    cases.append(guidance_case(run, row, classname, suffix))
                else:
                    cases.append(TestCase(f"{line.get('id')}{suffix}", classname, "skipped", "no answer yet"))
    _write(path, f"bceval experiment {experiment.name}", cases)


def append_step_summary(markdown: Path) -> None:
    """Append bceval's Markdown summary to `$GITHUB_STEP_SUMMARY` when it is set (GitHub Actions' job summary)."""
    target = environment_values("ci").get("step_summary")
    if not target or not markdown.is_file():
        return
    try:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(markdown.read_text(encoding="utf-8").rstrip("\n") + "\n\n")
    except OSError as exc:
        raise BcevalError(f"GITHUB_STEP_SUMMARY {target}: cannot append the summary ({exc.strerror})") from None


def score_outputs(settings: Settings, code: int, junit: Path | None) -> int:
    """After `bceval score` (exit `code`): the JUnit report and the job summary of a run that was scored."""
    run_dir = RunDir(settings.run_dir)
    if code not in (0, 1) or not run_dir.score.is_file():
        return code
    if junit is not None:  # one test case per case
        run = read_review_run(settings.run_dir, settings.out, "")
        _write(junit, f"bceval run {run.name}", [review_case(r, f"bceval.{run.name}.{r.domain}") for r in run.cases])
    append_step_summary(run_dir.scorecard("md"))
    return code


def experiment_outputs(directory: Path, code: int, junit: Path | None, summary: bool) -> int:
    """After `experiment run|report|ab`: the JUnit report and, for a report, the job summary."""
    if code not in (0, 1) or not ExperimentDir(directory).report().is_file():
        return code
    if junit is not None:
        write_experiment_junit(directory, junit)
    if summary:
        append_step_summary(ExperimentDir(directory).report("md"))
    return code
