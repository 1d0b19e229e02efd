"""Health-stage action: coverage, ranking margins and the answer-leak audit of the prepared corpus."""

from __future__ import annotations

from bceval.actions.prepare import cases_file, domain_articles_file, read_rows, read_text
from bceval.config import Settings
from bceval.corpus.layers import Leaf, scan_corpus
from bceval.jsonio import dumps, load_own_json, write_atomic
from bceval.review.cases import ReviewCase


def write_health(settings: Settings, groups: list[str]) -> None:
    from bceval.health.report import build_report, render_markdown

    recorded = load_own_json(cases_file(settings))
    cases = [ReviewCase.from_record(case) for case in recorded["cases"]]
    listing = scan_corpus(settings.corpus)
    changed = None
    if settings.changed_paths is not None:
        changed = read_text(settings.changed_paths).splitlines()
    domains = [leaf["domain"] for leaf in recorded["leaves"]]
    report = build_report(
        settings.corpus.name,
        listing,
        [Leaf(**leaf) for leaf in recorded["leaves"]],  # validation already derived them
        read_rows(settings, groups),
        cases,
        {domain: load_own_json(domain_articles_file(settings, domain)) for domain in domains},
        {case.modelId: read_text(settings.prepare_dir / f"{case.modelId}.al") for case in cases},
        margin=settings.health_margin,
        changed=changed,
    )
    write_atomic(settings.out / "health.json", dumps(report.model_dump()))
    write_atomic(settings.out / "health.md", render_markdown(report))
