"""Coverage of the paired articles by the derived cases, and the changed-paths gate (review-dialects.md §6, §7,
§11.4, §11.5): pure functions over a derivation, for every manifest whatever its dialect."""

from __future__ import annotations

import re
from typing import Any

from bceval.corpus.articles import LINE_BREAK
from bceval.evaluators.review.cases import Derivation

GATE_PROBLEM = "Changed paired article is not selected for evaluation and has no coverage waiver: {path}"
# `<layer>/knowledge/<domain>/<rest>`, every part case-sensitive; the shortest slug before the ending
_CHANGED_LINE = re.compile(
    r"^(?P<layer>microsoft|community|custom)/knowledge/(?P<domain>[^/]+)/(?P<slug>.+?)(?:\.good\.al|\.bad\.al|\.md)$"
)


def ratio(selected: int, paired: int) -> int | float:
    """selected/paired: the integer 0 or 1 when exact (and 0 without paired articles), else the double."""
    if paired == 0 or selected == 0:
        return 0
    if selected == paired:
        return 1
    return selected / paired


def selected_paths(derivation: Derivation) -> set[str]:
    """The article paths some derived case expects (exact spelling)."""
    return {path for case in derivation.cases for path in case.expected}


def coverage_document(derivation: Derivation) -> dict[str, Any]:
    """The coverage report, members in the spec's order; every count an integer. Its domains are the leaf domains
    in leaf order, with their effective paired articles and how many of them a case selects."""
    chosen = selected_paths(derivation)
    domains = []
    for leaf in derivation.leaves:
        paired = derivation.paired.get(leaf.domain, [])
        selected = sum(article.md_path in chosen for article in paired)
        domains.append(
            {
                "domain": leaf.domain,
                "pairedArticles": len(paired),
                "selectedArticles": selected,
                "coverage": ratio(selected, len(paired)),
            }
        )
    paired_total = sum(domain["pairedArticles"] for domain in domains)
    selected_total = sum(domain["selectedArticles"] for domain in domains)
    return {
        "pairedArticles": paired_total,
        "selectedArticles": selected_total,
        "coverage": ratio(selected_total, paired_total),
        "domains": domains,
    }


def changed_lines(text: str) -> dict[str, str]:
    """The article paths a changed-paths text names, in the order of their first line, each once (§11.5), each with
    that line as cleaned: lines split at CRLF, LF or CR, trimmed, backslashes made slashes, one leading `./` dropped;
    a line counts when it is exactly `<layer>/knowledge/<domain>/<slug>(.md|.good.al|.bad.al)`."""
    found: dict[str, str] = {}
    for raw in LINE_BREAK.split(text):
        line = raw.strip().replace("\\", "/").removeprefix("./")
        match = _CHANGED_LINE.match(line)
        if match:
            found.setdefault(f"{match['layer']}/knowledge/{match['domain']}/{match['slug']}.md", line)
    return found


def gate_problems(derivation: Derivation, waivers: list[str], changed: list[str]) -> list[str]:
    """One problem per changed article that is an effective paired article of a leaf domain, that no case selects
    and that no waiver names (waivers compare ignoring case, everything else exactly)."""
    paired = {article.md_path for articles in derivation.paired.values() for article in articles}
    chosen = selected_paths(derivation)
    waived = {path.lower() for path in waivers}
    return [
        GATE_PROBLEM.format(path=path)
        for path in changed
        if path in paired and path not in chosen and path.lower() not in waived
    ]


def _percent(value: int | float) -> str:
    return f"{value * 100:.1f}%"


def coverage_markdown(document: dict[str, Any]) -> str:
    """The coverage report as a Markdown table (a job summary, a pull-request comment). Domain names come from
    the corpus's file names: escaped for Markdown."""
    lines = [
        "## Review fixture coverage",
        "",
        f"{document['selectedArticles']} of {document['pairedArticles']} paired articles are selected by a case "
        f"({_percent(document['coverage'])}).",
        "",
        "| Domain | Paired | Selected | Coverage |",
        "|---|---:|---:|---:|",
    ]
    for domain in document["domains"]:
        lines.append(
            f"| {_escape(domain['domain'])} | {domain['pairedArticles']} | {domain['selectedArticles']} "
            f"| {_percent(domain['coverage'])} |"
        )
    lines.append(
        f"| **total** | {document['pairedArticles']} | {document['selectedArticles']} "
        f"| {_percent(document['coverage'])} |"
    )
    return "\n".join(lines) + "\n"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def _escape(text: str) -> str:
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
