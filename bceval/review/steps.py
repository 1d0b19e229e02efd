"""The actions of the prepare graph: each reads its inputs, calls the pure core, writes atomically.

Intermediate files live in `<out>/.build/review/`; only the prepare directory is for model runners.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from bceval.config import Settings
from bceval.corpus.articles import index_row
from bceval.corpus.index import build_index, domain_articles, generated_at
from bceval.corpus.layers import Listing, knowledge_markdown, scan_corpus
from bceval.errors import BcevalError, EvaluationFailed
from bceval.jsonio import decode_utf8, dumps, dumps_compact, load_own_json, read_json, write_atomic
from bceval.review.cases import Derivation, ReviewCase, derive_cases
from bceval.review.manifest import CheckedManifest, check_manifest
from bceval.review.prepdir import claim, prune
from bceval.review.requests import KNOWLEDGE_INDEX, REVIEW_REQUEST, domain_files, review_request

FAILED_HEADER = "Review fixture validation FAILED with {count} problem(s):"


def build_dir(settings: Settings) -> Path:
    return settings.build_dir / "review"


def cases_file(settings: Settings) -> Path:
    return build_dir(settings) / "cases.json"


def domain_cases_file(settings: Settings, domain: str) -> Path:
    return build_dir(settings) / "cases" / f"{domain}.json"


def domain_articles_file(settings: Settings, domain: str) -> Path:
    return build_dir(settings) / "domains" / f"{domain}.json"


def row_file(settings: Settings, rel: str) -> Path:
    key = hashlib.sha256(rel.encode("utf-8")).hexdigest()[:20]
    return build_dir(settings) / "rows" / f"{key}.json"


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read: {exc.strerror}") from None
    return decode_utf8(data, str(path))


def derive(settings: Settings, listing: Listing | None = None) -> tuple[Derivation, CheckedManifest]:
    """Validation: the manifest and the corpus listing to cases plus every problem."""
    checked = check_manifest(read_json(settings.manifest))
    return derive_cases(listing or scan_corpus(settings.corpus), checked), checked


def validation_line(case_count: int, domain_count: int) -> str:
    return f"Review fixture validation PASSED: {case_count} cases cover {domain_count} leaf domains."


def write_cases(settings: Settings) -> None:
    """Validate and record the cases; raise EvaluationFailed listing every problem."""
    derivation, checked = derive(settings)
    if derivation.problems:
        header = FAILED_HEADER.format(count=len(derivation.problems))
        raise EvaluationFailed(header, derivation.problems)
    leaves = [{"domain": leaf.domain, "layer": leaf.layer, "path": leaf.path} for leaf in derivation.leaves]
    cases = [case.model_dump(exclude_none=True) for case in derivation.cases]
    write_atomic(cases_file(settings), dumps({"thresholds": checked.thresholds, "leaves": leaves, "cases": cases}))
    for leaf in leaves:
        own = [case for case in cases if case["domain"] == leaf["domain"]]
        write_atomic(domain_cases_file(settings, leaf["domain"]), dumps({"leaf": leaf, "cases": own}))


def report_validation(settings: Settings) -> None:
    recorded = load_own_json(cases_file(settings))
    print(validation_line(len(recorded["cases"]), len(recorded["leaves"])), file=sys.stderr)


def write_row(settings: Settings, rel: str) -> None:
    row = index_row(rel, read_text(settings.corpus / rel))
    write_atomic(row_file(settings, rel), dumps(row))


def write_index(settings: Settings, rels: list[str], domains: list[str]) -> None:
    rows = [load_own_json(row_file(settings, rel)) for rel in rels]
    index = build_index(rows, generated_at())
    write_atomic(settings.prepare_dir / KNOWLEDGE_INDEX, dumps_compact(index))
    for domain in domains:
        write_atomic(domain_articles_file(settings, domain), dumps(domain_articles(rows, domain)))


def write_domain(settings: Settings, domain: str) -> None:
    recorded = load_own_json(domain_cases_file(settings, domain))
    cases = [ReviewCase.model_validate(case) for case in recorded["cases"]]
    leaf_path = recorded["leaf"]["path"]
    samples = {case.input: read_text(settings.corpus / case.input) for case in cases}
    files = domain_files(
        domain,
        leaf_path,
        read_text(settings.corpus / leaf_path),
        load_own_json(domain_articles_file(settings, domain)),
        cases,
        samples,
    )
    for name, text in files.items():
        write_atomic(settings.prepare_dir / name, text)


def write_review_request(settings: Settings) -> None:
    cases = [ReviewCase.model_validate(case) for case in load_own_json(cases_file(settings))["cases"]]
    write_atomic(settings.prepare_dir / REVIEW_REQUEST, review_request(cases))


def expected_files(domains: list[str], model_ids: list[str]) -> set[str]:
    """The exact file set of a finished prepare directory (besides the marker)."""
    names = {KNOWLEDGE_INDEX, REVIEW_REQUEST}
    for domain in domains:
        names |= {f"index-{domain}.json", f"request-{domain}.json"}
    for model_id in model_ids:
        names |= {f"{model_id}.al", f"request-{model_id}.json"}
    return names


def prune_build(settings: Settings, rels: list[str], domains: list[str]) -> None:
    """Drop intermediate files of vanished articles and domains so the build dir mirrors the corpus."""
    keep = {row_file(settings, rel) for rel in rels}
    keep |= {domain_cases_file(settings, d) for d in domains} | {domain_articles_file(settings, d) for d in domains}
    for folder in ("rows", "cases", "domains"):
        for path in sorted((build_dir(settings) / folder).glob("*.json")):
            if path not in keep:
                path.unlink()


def finish_prepare(settings: Settings, rels: list[str]) -> None:
    recorded = load_own_json(cases_file(settings))
    domains = [leaf["domain"] for leaf in recorded["leaves"]]
    prune(settings.prepare_dir, expected_files(domains, [case["modelId"] for case in recorded["cases"]]))
    prune_build(settings, rels, domains)
    print(f"Prepared {len(recorded['cases'])} neutral fixture(s) in {settings.prepare_dir}.", file=sys.stderr)
    print(validation_line(len(recorded["cases"]), len(recorded["leaves"])), file=sys.stderr)


def claim_prepare_dir(settings: Settings) -> None:
    claim(settings.prepare_dir)


def article_rels(listing: Listing) -> list[str]:
    return knowledge_markdown(listing)
