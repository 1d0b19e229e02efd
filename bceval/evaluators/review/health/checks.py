"""The health checks of coverage and ranking margins: pure functions over the corpus listing, index rows and cases
(the answer-leak audit is `bceval.evaluators.review.health.leaks`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from bceval.corpus.layers import LAYER_RANK, LAYERS, Leaf, Listing, paired_articles
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.coverage import changed_lines
from bceval.evaluators.review.health.model import CaseMargin, Coverage, DomainCoverage, Finding
from bceval.evaluators.review.ranking import RANK_LIMIT, expected_article, score_candidates
from bceval.ordering import sort_key

_ODD_SAMPLE = re.compile(r"^(?P<slug>.+)\.(?P<kind>good|bad)\.(?P<ext>.+)$", re.IGNORECASE)


# --- coverage -------------------------------------------------------------------------------------


def _pairing_findings(layer: str, domain: str, names: frozenset[str]) -> list[Finding]:
    """A warning for each file of a knowledge folder that pairs with nothing."""
    findings = []
    for name in sorted(names, key=sort_key):
        path = f"{layer}/knowledge/{domain}/{name}"
        odd = _ODD_SAMPLE.match(name)
        if name.endswith(".md"):
            good, bad = f"{name[:-3]}.good.al" in names, f"{name[:-3]}.bad.al" in names
            if good == bad:
                continue
            kind, message = (
                "unpaired-article",
                f"{path} has only {'.good.al' if good else '.bad.al'}, so no case can use it",
            )
        elif odd is not None and odd["ext"] != "al":
            sample = odd["kind"].lower()
            kind = "sample-extension"
            message = (
                f"{path} is a {sample} sample with extension .{odd['ext']}; only .{sample}.al pairs with an article"
            )
        elif odd is not None and f"{odd['slug']}.md" not in names:
            kind, message = "orphan-sample", f"{path} has no {odd['slug']}.md beside it"
        else:
            continue
        findings.append(Finding(kind=kind, severity="warning", path=path, message=message))
    return findings


def _duplicate_slug_findings(domain: str, layers: dict[str, frozenset[str]]) -> list[Finding]:
    findings = []
    slugs: dict[str, list[str]] = {}
    for layer in LAYERS:
        for name in layers.get(layer, frozenset()):
            if name.endswith(".md"):
                slugs.setdefault(name[:-3].lower(), []).append(layer)
    for slug_lower, owners in sorted(slugs.items()):
        if len(owners) < 2:
            continue
        winner = max(owners, key=LAYER_RANK.__getitem__)
        names = layers[winner]
        slug = next(n[:-3] for n in names if n.endswith(".md") and n[:-3].lower() == slug_lower)
        paired = f"{slug}.good.al" in names and f"{slug}.bad.al" in names
        lower_paired = any(
            f"{slug}.good.al" in layers[o] and f"{slug}.bad.al" in layers[o] for o in owners if o != winner
        )
        severity, message = "info", f"{slug}.md is in {', '.join(owners)}; the {winner} copy wins"
        if not paired and lower_paired:
            severity = "warning"
            message += " the index but has no sample pair, so a case on the lower, paired copy fails the gate"
        path = f"{winner}/knowledge/{domain}/{slug}.md"
        findings.append(Finding(kind="duplicate-slug", severity=severity, path=path, message=message))
    return findings


def coverage_checks(
    listing: Listing, leaves: list[Leaf], rows: list[dict[str, Any]], cases: list[ReviewCase]
) -> tuple[Coverage, list[Finding]]:
    findings: list[Finding] = []
    folders: dict[
        str, dict[str, frozenset[str]]
    ] = {}  # domain -> layer -> names directly in <layer>/knowledge/<domain>
    for folder, names in listing.by_dir.items():
        parts = folder.split("/")
        if len(parts) == 3 and parts[1] == "knowledge":
            folders.setdefault(parts[2], {})[parts[0]] = names
    exercised = {path for case in cases for path in case.expected}
    leaf_by_domain = {leaf.domain.lower(): leaf for leaf in leaves}
    domains: list[DomainCoverage] = []
    for domain in sorted(set(folders) | {leaf.domain for leaf in leaves}, key=sort_key):
        leaf = leaf_by_domain.get(domain.lower())
        paired = [a.md_path for a in paired_articles(listing, domain)]
        if leaf is None and any(n.endswith(".md") for names in folders.get(domain, {}).values() for n in names):
            message = f"knowledge domain '{domain}' has no al-{domain}-review leaf, so no case ever uses its articles"
            path = f"*/knowledge/{domain}"
            findings.append(Finding(kind="knowledge-without-leaf", severity="warning", path=path, message=message))
        if leaf is not None and not paired:
            message = f"{leaf.path} has no paired article in any layer"
            findings.append(Finding(kind="leaf-without-knowledge", severity="error", path=leaf.path, message=message))
        for layer, names in sorted(folders.get(domain, {}).items(), key=lambda item: LAYER_RANK[item[0]]):
            findings.extend(_pairing_findings(layer, domain, names))
        findings.extend(_duplicate_slug_findings(domain, folders.get(domain, {})))
        domains.append(
            DomainCoverage(
                domain=domain,
                leaf=leaf.path if leaf else None,
                paired=len(paired),
                exercised=sum(path in exercised for path in paired),
                unexercised=[path for path in paired if path not in exercised],
            )
        )
    for row in rows:
        folder_parts = row["path"].split("/")
        if not row["parsed"]:
            message = f"{row['path']} has no readable frontmatter (index row parsed: false)"
            findings.append(Finding(kind="unparsed-article", severity="error", path=row["path"], message=message))
        elif len(folder_parts) >= 4 and row["domain"].lower() != folder_parts[2].lower():  # matching ignores case
            message = (
                f"{row['path']} says domain '{row['domain']}' but sits in folder '{folder_parts[2]}', so it is a "
                "candidate of the wrong leaf"
            )
            findings.append(Finding(kind="domain-mismatch", severity="error", path=row["path"], message=message))
    total_paired = sum(d.paired for d in domains)
    return Coverage(paired=total_paired, exercised=sum(d.exercised for d in domains), domains=domains), findings


def changed_path_checks(changed: Iterable[str], listing: Listing, cases: list[ReviewCase]) -> list[Finding]:
    """Every changed paired article (by any of its three files) that no case exercises."""
    exercised = {path.lower() for case in cases for path in case.expected}
    findings: list[Finding] = []
    for md, line in changed_lines("\n".join(changed)).items():
        folder, slug = md.rsplit("/", 1)
        slug = slug.removesuffix(".md")
        paired = folder.count("/") == 2 and {f"{slug}.md", f"{slug}.good.al", f"{slug}.bad.al"} <= listing.names_in(
            folder
        )
        if paired and md.lower() not in exercised:
            message = (
                f"{line} changed, but no case exercises {md}; add it to the domain's articles or additionalArticles, "
                "whichever dialect the manifest uses (or select it), so the evaluation covers it"
            )
            findings.append(Finding(kind="unexercised-change", severity="error", path=md, message=message))
    return findings


# --- ranking margins ------------------------------------------------------------------------------


def margin_checks(
    cases: list[ReviewCase], candidates: dict[str, list[dict[str, Any]]], case_texts: dict[str, str], threshold: float
) -> tuple[list[CaseMargin], list[Finding]]:
    margins: list[CaseMargin] = []
    findings: list[Finding] = []
    unranked_domains: list[str] = []
    for case in cases:
        rows = candidates.get(case.domain, [])
        article = expected_article(case.input)
        named = {"case": case.id, "domain": case.domain, "article": article, "candidates": len(rows)}
        if len(rows) <= RANK_LIMIT:
            margins.append(CaseMargin(**named, ranked=False))
            if case.domain not in unranked_domains:
                unranked_domains.append(case.domain)
            continue
        text = case_texts[case.modelId] + (f" {case.context}" if case.context else "")
        scored = score_candidates(rows, text)
        position = next((i for i, (_, row) in enumerate(scored) if row["path"].lower() == article.lower()), None)
        if position is None:
            continue  # the article is not a candidate at all: the gate already refused this corpus
        score, excluded = scored[position][0], scored[RANK_LIMIT][0]
        margin = score - excluded
        margins.append(
            CaseMargin(**named, ranked=True, rank=position + 1, score=score, firstExcludedScore=excluded, margin=margin)
        )
        if position < RANK_LIMIT and margin < threshold:
            message = (
                f"{case.id}: {article} ranks {position + 1}/{RANK_LIMIT} with score {score:g}, only {margin:g} above "
                f"the first excluded candidate ({excluded:g}); a small edit to any article can push it out"
            )
            findings.append(
                Finding(kind="ranking-margin", severity="warning", case=case.id, path=article, message=message)
            )
    for domain in unranked_domains:
        count = len(candidates.get(domain, []))
        message = (
            f"{domain}: {count} candidate(s), no more than {RANK_LIMIT}, so ranking does not run and the gate "
            "cannot fail"
        )
        findings.append(Finding(kind="ranking-not-run", severity="info", message=message))
    return margins, findings


# --- the strict index -----------------------------------------------------------------------------


def strict_checks(skipped: dict[str, str], cases: list[ReviewCase], strict: bool) -> list[Finding]:
    """The articles upstream's strict index skips (`skipped`: path -> why), and the cases that select one: under
    the strict index (`strict`: it is the corpus's) they fail the ranking gate."""
    findings = [
        Finding(kind="strict-skip", severity="warning", path=rel, message=f"the strict index skips {rel}: {reason}")
        for rel, reason in skipped.items()
    ]
    for case in cases:
        article = expected_article(case.input)
        if article in skipped:
            message = f"{case.id}: fails the ranking gate under the strict index, which skips {article}"
            severity = "error" if strict else "warning"
            findings.append(Finding(kind="strict-gate", severity=severity, case=case.id, path=article, message=message))
    return findings
