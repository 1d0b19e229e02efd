"""Case derivation by convention (§4-§9): leaves, first paired article, overrides, static checks."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from bceval.corpus.layers import (
    LAYERS,
    Leaf,
    Listing,
    PairedArticle,
    article_exists,
    discover_leaves,
    paired_articles,
    sort_key,
)
from bceval.review.manifest import CheckedManifest, DomainOverride
from bceval.review.neutral import model_id


@dataclass(frozen=True)
class ReviewCase:
    """One evaluation case. A plain dataclass: every prepare plans the graph from these, cheaply."""

    id: str  # the manifest case id, e.g. performance-bad; never shown to the model
    modelId: str  # "case-" plus 8 hex digits of sha256(id); the only id the model sees
    domain: str
    input: str  # corpus-relative path of the sample (.bad.al or .good.al)
    expected: list[str]  # article paths the model must report; empty for a clean control
    context: str | None = None

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ReviewCase:
        """A case as `as_record` wrote it into bceval's own build files."""
        return cls(**record)

    def as_record(self) -> dict[str, Any]:
        record = {"id": self.id, "modelId": self.modelId, "domain": self.domain, "input": self.input}
        record["expected"] = list(self.expected)
        if self.context is not None:
            record["context"] = self.context
        return record


@dataclass
class Derivation:
    leaves: list[Leaf]
    cases: list[ReviewCase] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def cases_of(self, domain: str) -> list[ReviewCase]:
        return [case for case in self.cases if case.domain == domain]


def _strip_md(value: str) -> str:
    return value[: -len(".md")] if value.endswith(".md") else value


def _lookup(paired: list[PairedArticle], slug: str) -> PairedArticle | None:
    wanted = slug.lower()
    return next((article for article in paired if article.slug.lower() == wanted), None)


def _case_pair(domain: str, article: PairedArticle, suffix: str, context: str | None) -> list[ReviewCase]:
    cases = []
    for kind in ("bad", "good"):
        case_id = f"{domain}-{kind}{suffix}"
        cases.append(
            ReviewCase(
                id=case_id,
                modelId=model_id(case_id),
                domain=domain,
                input=posixpath.join(article.folder, f"{article.slug}.{kind}.al"),
                expected=[article.md_path] if kind == "bad" else [],
                context=context or None,
            )
        )
    return cases


def _missing_reason(listing: Listing, domain: str, slug: str, what: str) -> str:
    if article_exists(listing, domain, slug):
        return f"{domain}: {what} does not have both good/bad companion samples: {slug}.md"
    return f"{domain}: {what} does not exist: {slug}.md"


def _domain_cases(
    listing: Listing, domain: str, override: DomainOverride | None, problems: list[str]
) -> list[ReviewCase]:
    paired = paired_articles(listing, domain)
    if not paired:
        problems.append(f"{domain}: no enabled knowledge layer has an article with both good and bad companion samples")
        return []
    if override is not None and override.article is not None:
        slug = _strip_md(override.article)
        primary = _lookup(paired, slug)
        if primary is None:
            problems.append(_missing_reason(listing, domain, slug, "override article"))
            return []
    else:
        primary = paired[0]
    context = override.context if override is not None else None
    cases = _case_pair(domain, primary, "", context)
    seen = {primary.slug.lower()}
    for entry in (override.additionalArticles or []) if override is not None else []:
        slug = _strip_md(entry)
        article = _lookup(paired, slug)
        if article is None:
            problems.append(_missing_reason(listing, domain, slug, "additionalArticles entry"))
        elif article.slug.lower() == primary.slug.lower():
            problems.append(f"{domain}: additionalArticles entry duplicates the selected article: {slug}")
        elif article.slug.lower() in seen:
            problems.append(f"{domain}: additionalArticles entry is listed more than once: {slug}")
        else:
            seen.add(article.slug.lower())
            cases.extend(_case_pair(domain, article, f"-{article.slug}", None))
    return cases


def _case_problems(listing: Listing, cases: list[ReviewCase], leaves: list[Leaf]) -> list[str]:
    problems: list[str] = []
    seen_ids: set[str] = set()
    by_model_id: dict[str, str] = {}
    leaf_names = {leaf.domain.lower() for leaf in leaves}
    for case in cases:
        if case.id in seen_ids:
            problems.append(f"Duplicate case id: {case.id}")
        seen_ids.add(case.id)
        # The reference silently lets the later case overwrite the earlier one's files; we refuse.
        other = by_model_id.setdefault(case.modelId, case.id)
        if other != case.id:
            problems.append(f"{case.id}: model id {case.modelId} collides with case {other}")
        if case.modelId in leaf_names:
            problems.append(f"{case.id}: model id {case.modelId} collides with the leaf domain of the same name")
        if not listing.has_file(case.input):
            problems.append(f"{case.id}: input does not exist: {case.input}")
        for path in case.expected:
            if not listing.has_file(path):
                problems.append(f"{case.id}: referenced article does not exist: {path}")
    return problems


CORPUS_SHAPE = (
    "a corpus has review leaves <layer>/skills/review/al-<domain>-review.md (layers: " + ", ".join(LAYERS) + ")"
)


def derive_cases(listing: Listing, manifest: CheckedManifest) -> Derivation:
    """Every case of the corpus and every problem, in the spec's problem order."""
    leaves = discover_leaves(listing)
    result = Derivation(leaves=leaves, problems=list(manifest.problems))
    if not leaves:  # nothing to evaluate is no pass: say what a corpus looks like
        result.problems.append(f"{listing.root}: no review leaf found: {CORPUS_SHAPE}")
    leaf_domains = {leaf.domain.lower() for leaf in leaves}
    for key in sorted(dict.fromkeys(manifest.override_keys), key=sort_key):
        if key.lower() not in leaf_domains:
            result.problems.append(f"Override domain '{key}' has no registered al-{key}-review leaf")
    for leaf in leaves:
        entry = manifest.overrides.get(leaf.domain.lower())
        result.cases.extend(_domain_cases(listing, leaf.domain, entry[1] if entry else None, result.problems))
    result.problems.extend(_case_problems(listing, result.cases, leaves))
    for leaf in leaves:
        own = result.cases_of(leaf.domain)
        if not any(case.expected for case in own):
            result.problems.append(f"{leaf.domain}: no positive review fixture")
        if not any(not case.expected for case in own):
            result.problems.append(f"{leaf.domain}: no clean control fixture")
    return result
