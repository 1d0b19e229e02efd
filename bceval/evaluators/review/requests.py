"""The neutral request documents of a prepare directory (§11), built as file name -> text."""

from __future__ import annotations

import re
from typing import Any

from bceval.corpus.index import INDEX_VERSION
from bceval.errors import EvaluationFailed
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.neutral import neutral_file_text
from bceval.evaluators.review.ranking import expected_article, gate_problem, rank_candidates
from bceval.jsonio import dumps
from bceval.layout import KNOWLEDGE_INDEX, case_file_name, case_request_name, domain_index_name, domain_request_name
from bceval.ordering import sort_key

RESULT_SCHEMA = {"cases": [{"id": "case-id", "findings": [{"id": "repo-relative knowledge article path"}]}]}

ALL_CASES_PROTOCOL = (
    "Review every case file below together, as one pull request, using the BCQuality AL code-review "
    "super-skill. Report the findings of each case under its id, and take every finding id verbatim from "
    "a path listed in knowledge-index.json."
)
OUTPUT_LINE = "Reply with JSON only, shaped exactly like this request's resultSchema, and nothing else."
_OUTPUT_HEADING = re.compile(r"^## Output[ \t]*\r?\n", re.IGNORECASE | re.MULTILINE)


def leaf_instructions(leaf_text: str) -> str:
    """The leaf up to its own `## Output` section, followed by our output contract."""
    match = _OUTPUT_HEADING.search(leaf_text)
    body = leaf_text[: match.start()] if match else leaf_text
    return f"{body}\n## Output\n{OUTPUT_LINE}"


def request_case(case: ReviewCase) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": case.modelId, "file": case_file_name(case.modelId)}
    if case.context:
        entry["context"] = case.context
    return entry


def review_request(cases: list[ReviewCase]) -> str:
    return dumps(
        {
            "protocol": ALL_CASES_PROTOCOL,
            "knowledgeIndex": KNOWLEDGE_INDEX,
            "resultSchema": RESULT_SCHEMA,
            "cases": [request_case(case) for case in cases],
        }
    )


def _request(leaf_path: str, instructions: str, domain: str, rows: list, cases: list[ReviewCase], one: bool) -> str:
    """A leaf request: all of a domain's cases, or `one` case with its ranked candidates."""
    which, rows_are = (
        ("this single case", "weigh the ranked candidate article rows")
        if one
        else ("the cases below", "consider only the rows")
    )
    return dumps(
        {
            "protocol": f"Review {which} with the leaf skill {leaf_path}: follow leafInstructions, {rows_are} in "
            "candidateArticles, open the full text of every article that matches, and copy each finding id verbatim "
            "from candidateArticles[].path.",
            "skill": leaf_path,
            "leafInstructions": instructions,
            "knowledgeIndex": domain_index_name(domain),
            "candidateArticles": rows,
            "resultSchema": RESULT_SCHEMA,
            "cases": [request_case(case) for case in cases],
        }
    )


def domain_files(
    domain: str,
    leaf_path: str,
    leaf_text: str,
    articles: list[dict[str, Any]],
    cases: list[ReviewCase],
    samples: dict[str, str],
    skipped: dict[str, str] | None = None,
) -> dict[str, str]:
    """Every file of one leaf domain, or EvaluationFailed when a case misses the ranking gate (`skipped`: why the
    strict index left out a selected article).

    Nothing is returned (so nothing is written) unless every case of the domain passes the gate.
    """
    instructions = leaf_instructions(leaf_text)
    files: dict[str, str] = {
        domain_index_name(domain): dumps(
            {"version": INDEX_VERSION, "domain": domain, "articleCount": len(articles), "articles": articles}
        ),
        domain_request_name(domain): _request(leaf_path, instructions, domain, articles, cases, one=False),
    }
    problems = []
    unparsed = {row["path"].lower() for row in articles if row.get("parsed") is False}
    for case in cases:
        article = expected_article(case.input)
        if article.lower() in unparsed:  # say so, rather than report a ranking miss with advice to add keywords
            problems.append(
                f"{case.id}: the frontmatter of {article} cannot be read (it must open with a '---' line and close "
                "with another), so the article has no domain or keywords; fix its frontmatter"
            )
            continue
        if skipped and article in skipped:
            problems.append(
                f"{case.id}: ranking gate failed: the strict index skips {article} ({skipped[article]}), so no "
                "ranking can select it; fix the article, or select another with an 'article' override"
            )
            continue
        neutral = neutral_file_text(samples[case.input])
        case_text = neutral + (f" {case.context}" if case.context else "")
        ranked = rank_candidates(articles, case_text)
        problem = gate_problem(case.id, case.input, ranked)
        if problem:
            problems.append(problem)
            continue
        ranked.sort(key=lambda row: sort_key(row["path"]))
        files[case_file_name(case.modelId)] = neutral
        files[case_request_name(case.modelId)] = _request(leaf_path, instructions, domain, ranked, [case], one=True)
    if problems:
        raise EvaluationFailed(f"Review fixture preparation FAILED with {len(problems)} problem(s):", problems)
    return files
