"""Score-stage actions: judge each result file, aggregate score.json, print the verdict, write the scorecard."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

from bceval.clock import created_at
from bceval.config import Settings
from bceval.errors import BcevalError, EvaluationFailed
from bceval.evaluators.review.scoring import (
    FileReading,
    ScoreReport,
    aggregate,
    failed_header,
    failure_notes,
    judge_reading,
    passed_line,
    read_infra_file,
    read_result_file,
)
from bceval.jsonio import dumps, load_own_json, write_atomic
from bceval.layout import BuildDir, RunDir, infra_files, result_files
from bceval.runs.record import selection_of, tampered
from bceval.scorecard.model import build_scorecard
from bceval.scorecard.render import render_html, render_markdown
from bceval.steps.prepare import recorded_cases, recorded_plan, require_complete


def score_dir(settings: Settings) -> Path:
    """Build files of one results source; keyed by its path so two sources never mix."""
    source = settings.results_path or settings.results_dir
    key = hashlib.sha256(str(source).encode("utf-8")).hexdigest()[:12]
    return BuildDir(settings.build_dir).reading(key)


def reading_file(settings: Settings, result: Path) -> Path:
    return score_dir(settings) / f"{result.name}.reading.json"


def judge_result_file(settings: Settings, result: Path) -> None:
    """One result file -> its entries, each judged against its case (a per-case verdict when the
    directory holds one result-case-*.json per case, the preferred profile)."""
    reading = judge_reading(read_result_file(result), recorded_cases(settings))
    write_atomic(reading_file(settings, result), dumps(reading.model_dump()))


def write_score(settings: Settings) -> None:
    require_complete(settings)
    infra = infra_files(settings.results_dir)
    try:
        results = result_files(settings.results_dir)
    except BcevalError:
        if not infra:
            raise
        raise BcevalError(
            f"run '{settings.run_name}' has no answers to score: all {len(infra)} answered case(s) failed with an "
            f"infrastructure failure (see {settings.results_dir}/infra-*.json); rerun `bceval answer` to retry"
        ) from None
    if settings.results is None:  # the run's own results: each must be exactly what bceval wrote
        problems = tampered(settings.run_dir, results + infra)
        if problems:
            raise BcevalError("\n".join(problems))
    cases, thresholds = recorded_plan(settings)
    readings = [FileReading.model_validate(load_own_json(reading_file(settings, path))) for path in results]
    failures = [read_infra_file(path) for path in infra]
    selected = selection_of(settings.run_dir) if settings.results is None else None
    article = corpus_article(settings.corpus)
    report = aggregate(cases, readings, thresholds, failures, selected, settings.require_read, article)
    write_atomic(settings.score_file, dumps(report.model_dump()))


def corpus_article(corpus: Path) -> Callable[[str], tuple[int, str] | None]:
    """A corpus path -> (its size, its SHA-256), to check a read's evidence against the article it names."""
    root = corpus.resolve()

    @functools.cache
    def article(path: str) -> tuple[int, str] | None:
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            return None
        try:
            data = target.read_bytes()
        except OSError:
            return None
        return len(data), hashlib.sha256(data).hexdigest()

    return article


def score_single_file(settings: Settings) -> None:
    """--results-path: one combined document; unreadable is an input error, as in the reference."""
    require_complete(settings)
    path = settings.results_path
    assert path is not None
    if not path.is_file():
        raise BcevalError(f"{path}: results file not found")
    reading = read_result_file(path)
    if reading.problems and not reading.entries:
        raise BcevalError(reading.problems[0])
    cases, thresholds = recorded_plan(settings)
    report = aggregate(cases, [judge_reading(reading, cases)], thresholds)
    write_atomic(settings.score_file, dumps(report.model_dump()))


def report_score(settings: Settings, gate: bool = True) -> None:
    """Print the verdict; with `gate`, a failed evaluation fails the task (exit 1)."""
    report = ScoreReport.model_validate(load_own_json(settings.score_file))
    if report.passed:
        print(passed_line(report))
        return
    failure = EvaluationFailed(failed_header(report), report.problems + failure_notes(report))
    if gate:
        raise failure
    print(failure.render())


def write_scorecard(settings: Settings) -> None:
    report = ScoreReport.model_validate(load_own_json(settings.score_file))
    card = build_scorecard(
        report,
        settings.corpus,
        settings.manifest,
        settings.prepare_dir,
        created_at(),
        settings.out,
        (settings.run_name, settings.epoch),
    )
    write_atomic(settings.scorecard_json, dumps(card.model_dump(mode="json")))
    write_atomic(RunDir(settings.run_dir).scorecard("md"), render_markdown(card, heading="#"))
    write_atomic(RunDir(settings.run_dir).scorecard("html"), render_html(card))
