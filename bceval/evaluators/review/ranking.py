"""Candidate ranking (§13.2) and the ranking gate (§13.4)."""

from __future__ import annotations

import re
from typing import Any

from bceval.ordering import sort_key

RANK_LIMIT = 10
_NON_ALNUM_RUN = re.compile(r"[^a-z0-9]+")


def normalize(text: str) -> str:
    return _NON_ALNUM_RUN.sub(" ", text.lower()).strip()


def score_article(article: dict[str, Any], tokens: set[str], compact: str, terms: list[str]) -> float:
    score = 0.0
    for keyword in article.get("keywords") or []:
        lowered = (keyword or "").lower()
        squeezed = _NON_ALNUM_RUN.sub("", lowered)
        if squeezed and squeezed in compact:
            score += 8
        for part in _NON_ALNUM_RUN.split(lowered):
            if len(part) >= 4 and part in tokens:
                score += 1
    topic = f"{article['title']} {article['description']} {article['path']}".lower()
    score += 0.25 * sum(1 for term in terms if term in topic)
    return score


def score_candidates(articles: list[dict[str, Any]], case_text: str) -> list[tuple[float, dict[str, Any]]]:
    """Every row with its score for a case, best first (ties by path)."""
    norm = normalize(case_text)
    tokens = set(norm.split())
    compact = norm.replace(" ", "")
    terms = sorted(token for token in tokens if len(token) >= 5)
    scored = [(score_article(row, tokens, compact, terms), row) for row in articles]
    scored.sort(key=lambda pair: (-pair[0], sort_key(pair[1]["path"])))
    return scored


def rank_candidates(articles: list[dict[str, Any]], case_text: str) -> list[dict[str, Any]]:
    """The RANK_LIMIT best rows for a case; no scoring at all when there are no more than that."""
    if len(articles) <= RANK_LIMIT:
        return list(articles)
    return [row for _, row in score_candidates(articles, case_text)[:RANK_LIMIT]]


def expected_article(case_input: str) -> str:
    """The article a case's sample belongs to: `.good.al`/`.bad.al` replaced by `.md`."""
    return re.sub(r"\.(good|bad)\.al$", ".md", case_input, flags=re.IGNORECASE)


def gate_problem(case_id: str, case_input: str, ranked: list[dict[str, Any]]) -> str | None:
    """Why a case fails the gate, or None: its own article must be among the ranked rows."""
    wanted = expected_article(case_input)
    if any(row["path"].lower() == wanted.lower() for row in ranked):
        return None
    return (
        f"{case_id}: ranking gate failed: {wanted} is not among the {RANK_LIMIT} ranked candidates for its own "
        f"sample; add keywords the sample really uses to that article, or select another article with an "
        f"'article' override"
    )
