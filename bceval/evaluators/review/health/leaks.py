"""The answer-leak health checks: what in a case file or an agent view could give a case's answer away (labels and
telling words in the neutral case, code of the case an agent can reach in its view)."""

from __future__ import annotations

import posixpath
import re
from itertools import pairwise
from typing import Any

from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.health.model import Finding
from bceval.evaluators.review.ranking import expected_article
from bceval.layout import case_file_name

_STOPWORDS = frozenset(
    "with from that this when into than then your have only also each every must should does over after before "
    "using use uses used instead not for the and".split()
)
LABEL_PARTS = frozenset(
    {"good", "bad", "correct", "incorrect", "wrong", "antipattern", "violation", "compliant", "noncompliant"}
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_WORDISH = re.compile(r"[A-Za-z0-9]+")
_IDENTIFIER_OR_STRING = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|[A-Za-z_][A-Za-z0-9_]*")


def _parts(text: str) -> list[str]:
    """Lower-cased word parts: split at non-alphanumerics and at camelCase boundaries."""
    return [part.lower() for word in _WORDISH.findall(text) for part in _CAMEL.findall(word)]


def _code_and_comment(line: str) -> tuple[str, str | None]:
    """Split a line at a `//` that is outside AL string ('') and quoted-identifier ("") literals."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif line.startswith("//", index):
            return line[:index], line[index + 2 :]
    return line, None


def _label_hits(code: str) -> list[str]:
    hits = []
    for token in _IDENTIFIER_OR_STRING.findall(code):
        parts = _parts(token)
        if ("anti", "pattern") in pairwise(parts) or LABEL_PARTS.intersection(parts):
            hits.append(token)
    return hits


def _topic_text(row: dict[str, Any]) -> str:
    keywords = " ".join(k for k in row.get("keywords") or [] if k)
    return " ".join([row["path"], row["title"], row["description"], keywords]).lower()


def _case_leaks(case: ReviewCase, text: str, telling: set[str]) -> list[Finding]:
    """Answer words, label words and surviving trailing comments in one neutral case file."""
    file_name = case_file_name(case.modelId)
    findings: list[Finding] = []
    word_lines: dict[str, list[int]] = {}

    def found(kind: str, number: int, message: str) -> None:
        message = f"{case.id} line {number}: {message}"
        findings.append(
            Finding(kind=kind, severity="warning", case=case.id, path=file_name, line=number, message=message)
        )

    for number, line in enumerate(text.splitlines(), start=1):
        code, comment = _code_and_comment(line)
        for word in telling & ({w.lower() for w in _WORDISH.findall(code)} | set(_parts(code))):
            word_lines.setdefault(word, []).append(number)
        for token in _label_hits(code):
            found("label-leak", number, f"{token} still names the expected outcome")
        if comment is not None and code.strip():
            found("trailing-comment", number, "a trailing comment survived neutralization and may explain the flaw")
    for word, numbers in sorted(word_lines.items()):
        if any(word != other and word in other for other in word_lines):
            continue  # 'handled' inside 'ishandled': report the longer word once
        also = f" (also line {', '.join(map(str, numbers[1:]))})" if len(numbers) > 1 else ""
        found(
            "answer-word",
            numbers[0],
            f"'{word}'{also} comes from the expected article's slug or title and no other candidate mentions it",
        )
    return findings


def leak_checks(
    cases: list[ReviewCase],
    candidates: dict[str, list[dict[str, Any]]],
    case_texts: dict[str, str],
    titles: dict[str, str],
) -> list[Finding]:
    findings: list[Finding] = []
    by_article: dict[str, dict[str, ReviewCase]] = {}
    for case in cases:
        article = expected_article(case.input)
        by_article.setdefault(article, {})["positive" if case.expected else "clean"] = case
        slug = posixpath.basename(article)[: -len(".md")]
        words = {w for w in _parts(slug.replace("-", " ") + " " + titles.get(article, "")) if len(w) >= 4}
        others = " ".join(_topic_text(row) for row in candidates.get(case.domain, []) if row["path"] != article)
        findings += _case_leaks(case, case_texts[case.modelId], {w for w in words - _STOPWORDS if w not in others})
    for article, pair in sorted(by_article.items()):
        positive, clean = pair.get("positive"), pair.get("clean")
        if positive and clean and case_texts[positive.modelId] == case_texts[clean.modelId]:
            message = f"{positive.id} and {clean.id} see identical code, so no reviewer can tell them apart"
            findings.append(
                Finding(kind="identical-pair", severity="error", case=positive.id, path=article, message=message)
            )
    return findings


# --- answers the agent can reach ---------------------------------------------------------------------------

REACHABLE_RUN = 5  # this many consecutive code lines of a case in a view file give the case away
_OUTCOME_WORD = re.compile(r"\b(?:Good|Bad|Eval)\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def code_lines(text: str) -> list[str]:
    """Non-blank, non-comment lines, whitespace folded, the words neutralization changes blanked out (so a
    sample pasted into an article matches its neutral case file)."""
    folded = (_SPACE.sub(" ", line).strip() for line in text.splitlines())
    return [_OUTCOME_WORD.sub("_", line) for line in folded if line and not line.startswith("//")]


def reachable_answer_checks(
    cases: list[ReviewCase], case_texts: dict[str, str], views: dict[str, dict[str, str]]
) -> list[Finding]:
    """Per case, every file of its agent view (leaf, candidate articles) that holds at least REACHABLE_RUN
    consecutive lines of the case's code: an agent that searches its view finds the case there, and with it
    the article it came from."""
    findings = []
    for case in cases:
        lines = code_lines(case_texts[case.modelId])
        runs = {tuple(lines[i : i + REACHABLE_RUN]) for i in range(len(lines) - REACHABLE_RUN + 1)}
        if not runs:
            continue
        for path, text in sorted(views.get(case.modelId, {}).items()):
            other = code_lines(text)
            if any(tuple(other[i : i + REACHABLE_RUN]) in runs for i in range(len(other) - REACHABLE_RUN + 1)):
                message = (
                    f"{path} holds {REACHABLE_RUN} or more consecutive lines of {case.id}'s code, so an agent can find "
                    "the case in its own view"
                )
                findings.append(
                    Finding(kind="reachable-answer", severity="error", case=case.id, path=path, message=message)
                )
    return findings
