"""The review pipeline's own actions: validation and the per-domain requests of the prepare stage, and the verdicts,
score.json and scorecard of the score stage. The corpus-wide half of preparing (knowledge rows, the index, pruning)
is the frame's (bceval.steps.prepare)."""

from __future__ import annotations

import os
from pathlib import Path

from bceval.clock import created_at
from bceval.config import Settings
from bceval.corpus.layers import Listing, scan_corpus
from bceval.corpus.prepdir import strays
from bceval.corpus.strict import STRICT, skipped_articles
from bceval.errors import BcevalError, EvaluationFailed
from bceval.evaluators.review.cases import Derivation, ReviewCase, derive_cases
from bceval.evaluators.review.coverage import changed_lines, coverage_document, coverage_markdown, gate_problems
from bceval.evaluators.review.manifest import CheckedManifest, read_manifest
from bceval.evaluators.review.ranking import expected_article
from bceval.evaluators.review.requests import domain_files, review_request
from bceval.evaluators.review.scoring import (
    ScoreReport,
    aggregate,
    failed_header,
    failure_notes,
    passed_line,
    read_result_file,
    score_files,
)
from bceval.jsonio import decode_utf8, dumps, load_own_json, read_regular_bytes, write_atomic
from bceval.layout import BuildDir, OutDir, PrepareDir, RunDir, infra_files, result_files
from bceval.runs.record import selection_of, tampered
from bceval.scorecard.model import build_scorecard, keep_request_set
from bceval.scorecard.render import render_html, render_markdown
from bceval.steps.prepare import (
    build_strays,
    mark_incomplete,
    read_text,
    require_complete,
)
from bceval.steps.scoring import corpus_article
from bceval.vcs import changed_since

FAILED_HEADER = "Review fixture validation FAILED with {count} problem(s):"


def derive(settings: Settings, listing: Listing | None = None) -> tuple[Derivation, CheckedManifest]:
    """Validation: the manifest and the corpus listing to cases plus every problem."""
    listing = listing or scan_corpus(settings.corpus)
    checked = read_manifest(settings.manifest, settings.additional_ids)
    return derive_cases(listing, checked, settings.additional_ids), checked


def planned_cases(settings: Settings, listing: Listing) -> Derivation | None:
    """The cases the graph is planned from; None when validation will fail (its task reports why)."""
    try:
        derivation, _ = derive(settings, listing)
    except BcevalError:
        return None
    return None if derivation.problems else derivation


def validation_line(case_count: int, domain_count: int) -> str:
    return f"Review fixture validation PASSED: {case_count} cases cover {domain_count} leaf domains."


def gate_changes(settings: Settings) -> list[str] | None:
    """The changed article paths the gate checks (--changed-paths FILE, else --changed-from REF), None without a
    gate; an unreadable file or an unusable REF is an input error (exit 2) before anything is written."""
    if settings.gate_paths is not None:
        try:
            data = read_regular_bytes(settings.gate_paths)
        except OSError:
            raise BcevalError(f"{settings.gate_paths}: changed-paths file not found") from None
        return list(changed_lines(decode_utf8(data, str(settings.gate_paths))))
    if settings.changed_from is not None:
        return list(changed_lines("\n".join(changed_since(settings.corpus, settings.changed_from))))
    return None


def check_coverage_target(path: Path | None) -> None:
    """A coverage report path that can never be written is an input error (exit 2) before any work; missing
    folders are fine (the write creates them)."""
    if path is None:
        return
    existing = next(folder for folder in path.parents if folder.exists())  # the filesystem root always is
    if path.is_dir():
        reason = "it is a folder"
    elif not existing.is_dir():
        reason = f"{existing} is not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        reason = f"{existing} is not writable"
    else:
        return
    raise BcevalError(f"{path}: cannot write the coverage report: {reason}")


def write_coverage_report(path: Path, derivation: Derivation) -> None:
    try:
        write_atomic(path, dumps(coverage_document(derivation)))
    except OSError as exc:
        raise BcevalError(f"{path}: cannot write the coverage report: {exc.strerror}") from None


def write_cases(settings: Settings) -> None:
    """Validate and record the cases; raise EvaluationFailed listing every problem (the gate's last). The coverage
    report is written whether or not validation passes."""
    derivation, checked = derive(settings)
    changed = gate_changes(settings)
    if settings.coverage_report is not None:
        write_coverage_report(settings.coverage_report, derivation)
    problems = derivation.problems + (gate_problems(derivation, checked.waivers, changed) if changed else [])
    if problems:
        raise EvaluationFailed(FAILED_HEADER.format(count=len(problems)), problems)
    leaves = [{"domain": leaf.domain, "layer": leaf.layer, "path": leaf.path} for leaf in derivation.leaves]
    cases = [case.as_record() for case in derivation.cases]
    recorded = {
        "thresholds": checked.thresholds,
        "dialect": checked.dialect,
        "leaves": leaves,
        "cases": cases,
    }
    write_atomic(BuildDir(settings.build_dir).cases, dumps(recorded))
    for leaf in leaves:
        own = [case for case in cases if case["domain"] == leaf["domain"]]
        write_atomic(BuildDir(settings.build_dir).domain_cases(leaf["domain"]), dumps({"leaf": leaf, "cases": own}))


def report_validation(settings: Settings, loose_samples: list[list[str]]) -> None:
    """Print the verdict once every file preparing reads has been read: the rows tasks read the articles and
    the samples beside them, this reads the leaves and samples in folders without an article."""
    recorded = load_own_json(BuildDir(settings.build_dir).cases)
    for rel in [leaf["path"] for leaf in recorded["leaves"]] + [rel for group in loose_samples for rel in group]:
        read_text(settings.corpus / rel)
    print(validation_line(len(recorded["cases"]), len(recorded["leaves"])))


def write_domain(settings: Settings, domain: str) -> None:
    mark_incomplete(settings)
    recorded = load_own_json(BuildDir(settings.build_dir).domain_cases(domain))
    cases = [ReviewCase(**case) for case in recorded["cases"]]
    leaf_path = recorded["leaf"]["path"]
    samples = {case.input: read_text(settings.corpus / case.input) for case in cases}
    articles = load_own_json(BuildDir(settings.build_dir).domain_articles(domain))
    skipped = {}
    if settings.index == STRICT:  # a selected article the strict index skipped: say why rather than "add keywords"
        indexed = {row["path"] for row in articles}
        selected = [expected_article(case.input) for case in cases]
        skipped = skipped_articles(settings.corpus, [rel for rel in selected if rel not in indexed])
    leaf_text = read_text(settings.corpus / leaf_path)
    files = domain_files(domain, leaf_path, leaf_text, articles, cases, samples, skipped)
    for name, text in files.items():
        write_atomic(settings.prepare_dir / name, text)


def write_review_request(settings: Settings) -> None:
    mark_incomplete(settings)
    write_atomic(PrepareDir(settings.prepare_dir).review_request, review_request(recorded_plan(settings)[0]))


def finish_prepare(settings: Settings, groups: list[str]) -> None:
    recorded = load_own_json(BuildDir(settings.build_dir).cases)
    domains = [leaf["domain"] for leaf in recorded["leaves"]]
    expected = PrepareDir.expected_names(domains, [case["modelId"] for case in recorded["cases"]])
    PrepareDir(settings.prepare_dir).incomplete.unlink(missing_ok=True)
    for path in strays(settings.prepare_dir, expected) + build_strays(settings, groups, domains):
        path.unlink()
    print(f"Prepared {len(recorded['cases'])} neutral fixture(s) in {settings.prepare_dir}.")
    print(validation_line(len(recorded["cases"]), len(recorded["leaves"])))


def recorded_plan(settings: Settings) -> tuple[list[ReviewCase], dict[str, float]]:
    """The cases and thresholds the last validation recorded."""
    recorded = load_own_json(BuildDir(settings.build_dir).cases)
    return [ReviewCase(**case) for case in recorded["cases"]], recorded["thresholds"]


def write_coverage(settings: Settings) -> None:
    """`doit coverage`: the coverage report of the manifest and corpus as they are (whether or not they validate)
    in <out>/coverage.json, its table in <out>/coverage.md and on the console."""
    derivation, _ = derive(settings)
    write_coverage_report(OutDir(settings.out).coverage("json"), derivation)
    table = coverage_markdown(coverage_document(derivation))
    write_atomic(OutDir(settings.out).coverage("md"), table)
    print(table, end="")


# --- the score stage ----------------------------------------------------------------------------------------------


def write_score(settings: Settings) -> None:
    """score.json of the run's results, or of --results-path (one combined document: unreadable is an input error,
    as in the reference)."""
    require_complete(settings)
    if settings.results_path is not None:
        if not settings.results_path.is_file():
            raise BcevalError(f"{settings.results_path}: results file not found")
        reading = read_result_file(settings.results_path)
        if reading.problems and not reading.entries:
            raise BcevalError(reading.problems[0])
        cases, thresholds = recorded_plan(settings)
        write_atomic(settings.score_file, dumps(aggregate(cases, [reading], thresholds).model_dump()))
        return
    infra = infra_files(settings.results_dir)
    try:
        results = result_files(settings.results_dir)
    except BcevalError:
        if settings.results is None and not settings.results_dir.is_dir():  # `score` before `answer`
            raise BcevalError(
                f"{settings.results_dir}: results directory does not exist; run bceval answer first"
            ) from None
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
    selected = selection_of(settings.run_dir) if settings.results is None else None
    article = corpus_article(settings.corpus)
    report = score_files(cases, thresholds, results, infra, settings.require_read, article, selected)
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
    if settings.adapter == "baseline" and settings.results is None:  # the quickstart's verdict: what it means
        print("The baseline is a lexical floor, not a model: FAILED is expected (`bceval score` is the gate).")
        print("Next: `bceval view` shows each case; `bceval score --adapter oracle` the ceiling; then a live agent.")


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
    keep_request_set(settings.prepare_dir, OutDir(settings.out).asked(card.corpus.requestSetSha256))
    write_atomic(RunDir(settings.run_dir).scorecard("md"), render_markdown(card, heading="#"))
    write_atomic(RunDir(settings.run_dir).scorecard("html"), render_html(card))
