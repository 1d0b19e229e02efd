"""Health-stage action: coverage, ranking margins and the answer-leak audit of the prepared corpus."""

from __future__ import annotations

from contextlib import suppress

from bceval.agents.view import build_view
from bceval.config import Settings
from bceval.corpus.articles import index_row
from bceval.corpus.index import candidates_by_domain
from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.corpus.strict import STRICT, skipped_articles
from bceval.errors import BcevalError
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.health.checks import changed_path_checks, coverage_checks, margin_checks, strict_checks
from bceval.evaluators.review.health.leaks import leak_checks, reachable_answer_checks
from bceval.evaluators.review.health.model import SEVERITY_ORDER, Finding, HealthReport, render_markdown
from bceval.evaluators.review.manifest import by_convention
from bceval.evaluators.review.neutral import neutral_file_text
from bceval.evaluators.review.steps import derive
from bceval.jsonio import dumps, write_atomic
from bceval.layout import OutDir
from bceval.steps.prepare import read_text, sample_groups


def view_texts(settings: Settings, model_id: str) -> dict[str, str]:
    """The leaf and candidate articles of a case's agent view (its request and case file tell nothing)."""
    view = build_view(settings.prepare_dir, settings.corpus, model_id)
    return {
        f.path: f.data.decode("utf-8-sig", "replace")
        for f in view.files
        if f.path not in (view.request_name, view.case_name)
    }


def write_health(settings: Settings, prepared: bool = True) -> None:
    """The health report of everything that can be read, computed in memory, plus one error finding per
    validation problem and unreadable file, so `bceval health` can explain why a corpus fails. Only a `prepared`
    corpus has agent views to audit."""
    findings: list[Finding] = []
    listing = scan_corpus(settings.corpus)  # without a listing there is nothing to report on
    try:
        derivation, _ = derive(settings, listing)
    except BcevalError as exc:  # an unreadable manifest: report it and look at the corpus by convention
        findings.append(Finding(kind="validation", severity="error", message=str(exc)))
        derivation = derive_cases(listing, by_convention())
    findings += [Finding(kind="validation", severity="error", message=problem) for problem in derivation.problems]

    def readable(rel: str) -> str | None:
        try:
            return read_text(settings.corpus / rel)
        except BcevalError as exc:
            findings.append(Finding(kind="unreadable-file", severity="error", path=rel, message=str(exc)))
            return None

    articles = {rel: readable(rel) for rel in knowledge_markdown(listing)}
    skipped = skipped_articles(settings.corpus, list(articles))  # an article that is no UTF-8 too
    strict = settings.index == STRICT  # the corpus's index leaves the skipped articles out, and reads no other
    if strict:
        findings = [f for f in findings if f.kind != "unreadable-file" or f.path not in skipped]
    rows = [
        index_row(rel, text) for rel, text in articles.items() if text is not None and not (strict and rel in skipped)
    ]
    samples = [rel for group in sample_groups(listing).values() for rel in group]
    for rel in [leaf.path for leaf in derivation.leaves] + samples:
        readable(rel)
    texts = {}
    for case in derivation.cases:
        with suppress(BcevalError):  # an unreadable sample is reported already
            texts[case.modelId] = neutral_file_text(read_text(settings.corpus / case.input))
    cases = [case for case in derivation.cases if case.modelId in texts]
    candidates = candidates_by_domain(rows, [leaf.domain for leaf in derivation.leaves])
    coverage, found = coverage_checks(listing, derivation.leaves, rows, cases)
    findings += found
    findings += strict_checks(skipped, derivation.cases, strict)
    if settings.changed_paths is not None:
        findings += changed_path_checks(read_text(settings.changed_paths).splitlines(), listing, cases)
    margins, found = margin_checks(cases, candidates, texts, settings.health_margin)
    findings += found + leak_checks(cases, candidates, texts, {row["path"]: row["title"] for row in rows})
    if prepared:  # the view files of each case: its leaf and ranked candidate articles
        findings += reachable_answer_checks(cases, texts, {mid: view_texts(settings, mid) for mid in texts})
    findings.sort(key=lambda f: (SEVERITY_ORDER[f.severity], f.kind, f.case or "", f.path or "", f.line or 0))
    report = HealthReport(
        corpus=settings.corpus.name,
        errors=sum(f.severity == "error" for f in findings),
        warnings=sum(f.severity == "warning" for f in findings),
        notes=sum(f.severity == "info" for f in findings),
        marginThreshold=settings.health_margin,
        coverage=coverage,
        margins=margins,
        findings=findings,
    )
    write_atomic(OutDir(settings.out).health("json"), dumps(report.model_dump()))
    write_atomic(OutDir(settings.out).health("md"), render_markdown(report))
