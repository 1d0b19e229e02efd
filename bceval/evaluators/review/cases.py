"""Case derivation by convention (§4-§9): leaves, first paired article, overrides, static checks."""

from __future__ import annotations

import posixpath
from dataclasses import asdict, dataclass, field
from typing import Any

from bceval.corpus.layers import (
    CORPUS_SHAPE,
    Leaf,
    Listing,
    PairedArticle,
    article_exists,
    discover_leaves,
    paired_articles,
    sort_key,
)
from bceval.corpus.skills import declared_leaf_order, read_skill_index
from bceval.evaluators.base import model_id
from bceval.evaluators.review.documents import DomainOverride
from bceval.evaluators.review.manifest import CURABIS, MICROSOFT, CheckedManifest


@dataclass(frozen=True)
class ReviewCase:
    """One evaluation case."""

    id: str  # the manifest case id, e.g. performance-bad; never shown to the model
    modelId: str  # "case-" plus 8 hex digits of sha256(id); the only id the model sees
    domain: str
    input: str  # corpus-relative path of the sample (.bad.al or .good.al)
    expected: list[str]  # article paths the model must report; empty for a clean control
    context: str | None = None

    def as_record(self) -> dict[str, Any]:
        """The case in bceval's own build files (`ReviewCase(**record)` reads it back)."""
        record = asdict(self)
        if self.context is None:
            del record["context"]
        return record


@dataclass
class Derivation:
    leaves: list[Leaf]
    cases: list[ReviewCase] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # every leaf domain's effective paired articles, in leaf order, even when empty (the coverage report's base)
    paired: dict[str, list[PairedArticle]] = field(default_factory=dict)

    def cases_of(self, domain: str) -> list[ReviewCase]:
        return [case for case in self.cases if case.domain == domain]


def _lookup(paired: list[PairedArticle], slug: str) -> PairedArticle | None:
    wanted = slug.lower()
    return next((article for article in paired if article.slug.lower() == wanted), None)


def _case_pair(
    domain: str, article: PairedArticle, suffix: str, context: str | None, infix: str = ""
) -> list[ReviewCase]:
    """The bad and the good case of one article: ids `<domain><infix>-<kind><suffix>`."""
    cases = []
    for kind in ("bad", "good"):
        case_id = f"{domain}{infix}-{kind}{suffix}"
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


def _slug_hint(entry: str) -> str:
    """For an additionalArticles entry written as a path: the problem keeps the reference's words and adds that an
    entry is a slug (a path is never looked up, as in the reference)."""
    if "/" not in entry and "\\" not in entry:
        return ""
    slug = entry.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".md")
    return f" (an entry names an article by its slug alone, such as '{slug}', not by its path)"


def _fork_cases(
    listing: Listing, domain: str, paired: list[PairedArticle], override: DomainOverride, problems: list[str]
) -> list[ReviewCase]:
    """The `articles` override (review-dialects.md §3-§4, §11.3): every resolved name gives a bad and a good case,
    the first keeping the plain ids, and the context goes on every case."""
    if override.article is not None:
        problems.append(f"{domain}: override must specify either 'article' or 'articles', not both")
        return []
    names = override.articles or []
    if not names:
        problems.append(f"{domain}: override 'articles' must contain at least one article")
        return []
    selection: list[PairedArticle] = []
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{domain}: override article names must be non-empty strings")
            continue
        slug = name.removesuffix(".md")
        if slug.lower() in seen:  # before the lookup, as the fork does
            problems.append(f"{domain}: override contains duplicate article: {slug}.md")
            continue
        seen.add(slug.lower())
        article = _lookup(paired, slug)
        if article is None:
            problems.append(_missing_reason(listing, domain, slug, "override article"))
        else:
            selection.append(article)
    cases: list[ReviewCase] = []
    for position, article in enumerate(selection):
        infix = f"-{article.slug}" if position else ""  # the on-disk spelling, not the manifest's
        cases.extend(_case_pair(domain, article, "", override.context, infix))
    return cases


def _entry_name(entry: Any) -> str:
    """A microsoft `additionalArticles` entry as its harness reads it (upstream-2026-09.md §1.3): as text (null is
    empty, a list its items joined by spaces), a trailing `.md` replaced by the file name without extension."""
    if isinstance(entry, list):
        text = " ".join(_entry_name(item) for item in entry)
    else:
        text = "" if entry is None else str(entry)
    return text.rsplit("/", 1)[-1][: -len(".md")] if text.endswith(".md") else text


def _microsoft_extras(
    domain: str, paired: list[PairedArticle], primary: PairedArticle, override: DomainOverride, problems: list[str]
) -> list[ReviewCase]:
    """microsoft's additional cases: ids `<domain>-<name>-<kind>` in the manifest's spelling, the context on each,
    the duplicate test before the lookup."""
    selected, cases = [primary], []
    for entry in override.additionalArticles or []:
        name = _entry_name(entry)
        if any(article.slug.lower() == name.lower() for article in selected):
            problems.append(f"{domain}: additional article is already selected: {name}.md")
            continue
        article = _lookup(paired, name)
        if article is None:
            problems.append(
                f"{domain}: additional article does not exist or lacks .good.al and .bad.al companion samples: "
                f"{name}.md"
            )
            continue
        selected.append(article)
        cases.extend(_case_pair(domain, article, "", override.context, f"-{name}"))
    return cases


def _domain_cases(
    listing: Listing,
    domain: str,
    paired: list[PairedArticle],
    override: DomainOverride | None,
    problems: list[str],
    additional_ids: str,
) -> list[ReviewCase]:
    if not paired:
        problems.append(f"{domain}: no enabled knowledge layer has an article with both good and bad companion samples")
        return []
    if override is not None and override.articles is not None:
        return _fork_cases(listing, domain, paired, override, problems)
    if override is not None and override.article is not None:
        slug = override.article.removesuffix(".md")
        primary = _lookup(paired, slug)
        if primary is None:
            problems.append(_missing_reason(listing, domain, slug, "override article"))
            return []
    else:
        primary = paired[0]
    context = override.context if override is not None else None
    cases = _case_pair(domain, primary, "", context)
    if override is not None and additional_ids == MICROSOFT:
        return cases + _microsoft_extras(domain, paired, primary, override, problems)
    seen = {primary.slug.lower()}
    for entry in (override.additionalArticles or []) if override is not None else []:
        slug = entry.removesuffix(".md")
        article = _lookup(paired, slug)
        if article is None:
            problems.append(_missing_reason(listing, domain, slug, "additionalArticles entry") + _slug_hint(entry))
        elif article.slug.lower() == primary.slug.lower():
            problems.append(f"{domain}: additionalArticles entry duplicates the selected article: {slug}")
        elif article.slug.lower() in seen:
            problems.append(f"{domain}: additionalArticles entry is listed more than once: {slug}")
        else:
            seen.add(article.slug.lower())
            cases.extend(_case_pair(domain, article, f"-{article.slug}", None))
    return cases


def _case_problems(cases: list[ReviewCase], leaves: list[Leaf]) -> list[str]:
    """Id clashes (a case's input and article are paired files of the listing: they exist)."""
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
    return problems


def _position(declared: list[str], domain: str) -> int:
    """Where a leaf domain comes in the declared order; after every declared one when it is not declared."""
    return declared.index(domain) if domain in declared else len(declared)


def derive_cases(listing: Listing, manifest: CheckedManifest, additional_ids: str = CURABIS) -> Derivation:
    """Every case of the corpus and every problem, in the spec's problem order; `additional_ids` is the scheme of
    `additionalArticles` cases (curabis or microsoft)."""
    declared = declared_leaf_order(read_skill_index(listing.root))  # the corpus's skill index orders the leaves
    leaves = sorted(discover_leaves(listing), key=lambda leaf: _position(declared, leaf.domain.lower()))
    result = Derivation(leaves=leaves, problems=list(manifest.problems))
    if not leaves:  # nothing to evaluate is no pass: say what a corpus looks like
        result.problems.append(f"{listing.root}: no review leaf found: {CORPUS_SHAPE}")
    leaf_domains = {leaf.domain.lower() for leaf in leaves}
    for key in sorted(dict.fromkeys(manifest.override_keys), key=sort_key):
        if key.lower() not in leaf_domains:
            result.problems.append(f"Override domain '{key}' has no registered al-{key}-review leaf")
    result.problems.extend(manifest.waiver_problems)
    for leaf in leaves:
        entry = manifest.overrides.get(leaf.domain.lower())
        paired = result.paired[leaf.domain] = paired_articles(listing, leaf.domain)
        override = entry[1] if entry else None
        result.cases.extend(_domain_cases(listing, leaf.domain, paired, override, result.problems, additional_ids))
    result.problems.extend(_case_problems(result.cases, leaves))
    for leaf in leaves:
        own = result.cases_of(leaf.domain)
        if not any(case.expected for case in own):
            result.problems.append(f"{leaf.domain}: no positive review fixture")
        if not any(not case.expected for case in own):
            result.problems.append(f"{leaf.domain}: no clean control fixture")
    return result
