"""A deterministic lexical reviewer with no model: the floor any real model has to beat.

Two signals per ranked candidate:
- relevance: the ranking's keyword score; a candidate needs at least one whole keyword in the case
  text (score >= 8) to be considered at all;
- polarity: the article is opened (as a model would) and its vocabulary split into words only its
  `## Anti Pattern` section uses and words only its `## Best Practice` section uses; polarity is how
  many anti-pattern-only words the case contains minus how many best-practice-only words it contains.
It cites the most relevant candidate (ties: higher polarity, then ranking order) only when its polarity
reaches the threshold, so it can stay silent on clean code. At most one finding per case.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

from bceval import __version__
from bceval.agents.base import Answer, CaseInput
from bceval.agents.registry import Agent
from bceval.evaluators.review.ranking import normalize, score_article
from bceval.evaluators.review.scoring import ResultEntry
from bceval.jsonio import read_regular_text

POLARITY_THRESHOLD = 1
MIN_RELEVANCE = 8  # one whole keyword found in the case text
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,}")
_SECTION = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
# Words of AL syntax and English that carry no evidence either way.
_STOPWORDS = frozenset(
    """
    the and for not but with from that this then else when into your you are was were has have had its
    use uses used using only also each every any all one two per can may must should does did done will
    begin end var procedure trigger local internal begin exit true false record codeunit table page report
    field fields value values code text integer decimal boolean option enum see sample good bad eval
    """.split()
)


def words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOPWORDS


def sections(markdown: str) -> dict[str, str]:
    """Markdown `## ` sections by lower-cased heading."""
    parts = _SECTION.split(markdown)  # text before the first heading, then heading and body by turns
    return {heading.lower(): body for heading, body in zip(parts[1::2], parts[2::2], strict=True)}


def polarity(article: str, case_words: set[str]) -> int:
    parts = sections(article)
    anti = words(parts.get("anti pattern", ""))
    practice = words(parts.get("best practice", ""))
    return len((anti - practice) & case_words) - len((practice - anti) & case_words)


class BaselineAdapter(Agent):
    name = "baseline"
    kind = "baseline"

    def __init__(self, corpus: Path) -> None:
        self._article = cache(lambda path: read_regular_text(corpus / path, "utf-8-sig", "replace"))

    def describe(self) -> dict[str, Any]:
        return {
            "adapter": self.name,
            "model": f"lexical-baseline-t{POLARITY_THRESHOLD}",
            "version": __version__,
            "pinned": True,
        }

    def answer(self, case: CaseInput) -> Answer:
        request = case.request()
        text = read_regular_text(case.case_path, "utf-8")
        for entry in request["cases"]:
            text += " " + entry.get("context", "")
        case_words = words(text)
        norm = normalize(text)
        tokens = set(norm.split())
        compact = norm.replace(" ", "")
        best: tuple[float, int, str] | None = None
        for row in request["candidateArticles"]:
            relevance = score_article(row, tokens, compact, [])
            if relevance < MIN_RELEVANCE:
                continue
            signal = (relevance, polarity(self._article(row["path"]), case_words), row["path"])
            if best is None or signal[:2] > best[:2]:
                best = signal
        cited = [best[2]] if best is not None and best[1] >= POLARITY_THRESHOLD else []
        return Answer([ResultEntry(id=case.model_id, findings=cited)])
