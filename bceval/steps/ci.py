"""CI outputs of `score`, `experiment run|report` and `guidance run`: `--junit PATH` (bceval.scorecard.junit) and,
when `$GITHUB_STEP_SUMMARY` names a file, the Markdown summary appended to it (score and experiment report); and
`bceval ci`, a corpus repository's CI in one command (docs/ci.md): the checks, then the summary, JUnit, the
pull-request comment and the viewer."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.config import Settings, environment_values, load_settings
from bceval.errors import EXIT_FAILED, EXIT_INTERRUPTED, BcevalError
from bceval.jsonio import read_json_or_none, write_atomic
from bceval.layout import ExperimentDir, OutDir, RunDir
from bceval.scorecard.junit import TestCase, outcome_of, render_suites
from bceval.viewer.collect import (
    CaseRow,
    GuidanceCaseRow,
    GuidanceRun,
    ReviewRun,
    read_experiment,
    read_guidance_run,
    read_review_run,
)


def _write(path: Path, suite: str, cases: list[TestCase], more: Sequence[tuple[str, list[TestCase]]] = ()) -> None:
    try:
        write_atomic(path, render_suites([(suite, cases), *more]))
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


def run_cases(run_dir: Path, out: Path) -> tuple[str, list[TestCase]]:
    run = read_review_run(run_dir, out, "")
    return f"bceval run {run.name}", [review_case(r, f"bceval.{run.name}.{r.domain}") for r in run.cases]


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
        _write(junit, *run_cases(settings.run_dir, settings.out))
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


# --- bceval ci ------------------------------------------------------------------------------------------------------

MARKER = "<!-- bceval-ci -->"  # opens the pull-request comment, so the next push finds and updates it
SHOWN_LINES = 20  # lines of a failed check's output in the summary


@dataclass
class Check:
    name: str
    argv: list[str]
    gated: bool = True  # a failure fails the CI; the baseline floor is only reported
    code: int = 0
    output: str = ""

    @property
    def outcome(self) -> str:
        return "passed" if self.code == 0 else "failed" if self.code == EXIT_FAILED else "error"

    @property
    def result(self) -> str:
        return f"error (exit {self.code})" if self.outcome == "error" else self.outcome

    def test_case(self) -> TestCase:
        message = f"{self.name}: {self.result}" if self.code else ""
        return TestCase(self.name, "bceval.ci", self.outcome, message, self.output[-4000:] if self.code else "")


def add_ci_parser(commands: Any) -> None:
    text = "a corpus repository's CI in one step (docs/ci.md)"
    parser = commands.add_parser("ci", help=text, description=text[0].upper() + text[1:] + ".")
    for flag, metavar, help_ in (
        ("--corpus", "PATH", "the corpus checkout (default: settings, else the corpus found here)"),
        ("--manifest", "FILE", "default: <corpus>/evaluation/review-fixtures.json"),
        ("--out", "DIR", "output root (default: out/)"),
        ("--base", "REF", "the pull request's base: the coverage gate's REF...HEAD and the experiment's control"),
        ("--head", "REF", "the experiment's treatment (default HEAD)"),
        ("--agent", "PRESET", "the experiment's live agent: claude-code or codex (needs BCEVAL_LIVE=1)"),
        ("--agent-command", "COMMAND", "or any agent command line (needs BCEVAL_LIVE=1; default: the baseline)"),
        ("--model", "MODEL", "the live agent's model"),
        ("--summary", "FILE", "append the Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)"),
        ("--junit", "FILE", "write JUnit XML here: one test per check and per case of the oracle's run"),
        ("--comment", "FILE", f"write the pull-request comment's body here (it opens with {MARKER})"),
    ):
        parser.add_argument(flag, metavar=metavar, help=help_)
    parser.add_argument("--experiment", action="store_true", help="also run the experiment --base against --head")
    parser.add_argument("--epochs", type=int, default=1, metavar="N", help="the experiment's samples per case and arm")


def _checks(args: Any, out: Path) -> list[Check]:
    common = [
        word
        for name in ("corpus", "manifest", "out")
        if getattr(args, name)
        for word in (f"--{name}", getattr(args, name))
    ]
    checks = [
        Check("Validation", ["validate", *common]),
        Check("Deterministic gate (the oracle passes)", ["score", *common, "--adapter", "oracle"]),
        Check("Baseline floor (not gated)", ["score", *common, "--adapter", "baseline", "--no-gate"], gated=False),
    ]
    if args.base:
        coverage = ["--changed-from", args.base, "--coverage-report", str(out / "coverage.json")]
        checks.append(Check("Coverage gate", ["validate", *common, *coverage]))
    if args.base and args.experiment:
        agent = []  # the baseline, unless a live agent is named: a command line wins over a preset
        if args.agent_command:
            agent = ["--adapter", "command", "--command", args.agent_command]
        elif args.agent:
            agent = ["--adapter", "command", "--agent", args.agent]
        agent += ["--model", args.model] if args.model else []
        refs = ["--base", args.base, "--head", args.head or "HEAD", "--epochs", str(args.epochs)]
        checks.append(Check("Experiment, base against head", ["experiment", "ab", *common, *refs, *agent]))
    return checks


class _Tee(io.TextIOBase):
    """What a check prints goes to the log as it comes, and is kept (stdout and stderr in order) for the summary."""

    def __init__(self, stream: Any, kept: list[str]) -> None:
        self.stream, self.kept = stream, kept

    def write(self, text: str) -> int:
        self.kept.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def run_ci(args: Any, bceval: Callable[[list[str]], int]) -> int:
    """`bceval ci`: every check through `bceval` (the command line's own main), then the outputs. Exit 1 when a
    gated check fails, the check's own code (2, 130) when it could not run."""
    if args.experiment and not args.base:
        raise BcevalError("--experiment needs --base (the control of the experiment)")
    out = load_settings(out=args.out).out
    checks = _checks(args, out)
    summary_env = os.environ.pop("GITHUB_STEP_SUMMARY", None)  # the checks' own summaries go into ours instead
    try:
        for check in checks:
            print(f"bceval ci: {check.name}: bceval {' '.join(check.argv)}", file=sys.stderr, flush=True)
            kept: list[str] = []
            with contextlib.redirect_stdout(_Tee(sys.stdout, kept)), contextlib.redirect_stderr(_Tee(sys.stderr, kept)):
                check.code = bceval(check.argv)
            check.output = "".join(kept)
            if check.code == EXIT_INTERRUPTED:
                return check.code
        bceval(["view", "--out", str(out)])
    finally:
        if summary_env is not None:
            os.environ["GITHUB_STEP_SUMMARY"] = summary_env
    _ci_outputs(args, out, checks)
    failed = [check.code for check in checks if check.gated and check.code]
    return EXIT_FAILED if EXIT_FAILED in failed else max(failed, default=0)


def _ci_markdown(out: Path, checks: list[Check]) -> str:
    passed = all(check.code == 0 for check in checks if check.gated)
    lines = [f"## bceval: {'PASSED' if passed else 'FAILED'}", "", "| Check | Result |", "|---|---|"]
    lines += [f"| {check.name} | {check.result} |" for check in checks]
    coverage = read_json_or_none(out / "coverage.json")
    if isinstance(coverage, dict) and isinstance(coverage.get("coverage"), int | float):
        selected, paired = coverage.get("selectedArticles"), coverage.get("pairedArticles")
        lines += [
            "",
            f"Coverage: {selected} of {paired} paired articles are selected by a case ({coverage['coverage']:.0%}).",
        ]
    for check in checks:
        if check.code:
            shown = "\n".join(check.output.rstrip().splitlines()[-SHOWN_LINES:]).replace("```", "'''")
            lines += ["", f"### {check.name}: {check.result}", "", "```text", shown, "```"]
    found = list(OutDir(out).experiments.glob("*/report.md"))
    if found and any(check.argv[0] == "experiment" and check.code in (0, EXIT_FAILED) for check in checks):
        newest = max(found, key=lambda path: path.stat().st_mtime)  # the one the experiment check just wrote
        lines += ["", newest.read_text(encoding="utf-8").rstrip()]
    return "\n".join(lines) + "\n"


def _ci_outputs(args: Any, out: Path, checks: list[Check]) -> None:
    text = _ci_markdown(out, checks)
    for flag, path, body, mode in (
        ("--summary", args.summary, text + "\n", "a"),
        ("--comment", args.comment, f"{MARKER}\n{text}", "w"),
    ):
        if path:
            try:
                with open(path, mode, encoding="utf-8") as handle:
                    handle.write(body)
            except OSError as exc:
                raise BcevalError(f"{flag} {path}: cannot write ({exc.strerror})") from None
    if args.junit:
        more = []
        oracle = OutDir(out).run("oracle").path
        if RunDir(oracle).score.is_file():
            more.append(run_cases(oracle, out))
        _write(Path(args.junit), "bceval ci", [check.test_case() for check in checks], more)
