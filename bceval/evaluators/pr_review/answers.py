"""A reviewer's `review.json`, read as leniently as BC-Bench reads it (docs/pr-review.md, "The answer"): a finding
it cannot use is dropped and the review stays valid; the drops are recorded for diagnosis only."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bceval.evaluators.pr_review.entries import ARTICLE, FILE, Comment, severity

FENCED_JSON = re.compile(r"```json\s*\n?(.*?)```", re.S)
FENCED = re.compile(r"```[^\n]*\n?(.*?)```", re.S)
ARTICLE_LINK = re.compile(r"microsoft/knowledge/([a-z0-9][a-z0-9-]*/[a-z0-9][a-z0-9-]*)\.md")


@dataclass(frozen=True)
class Review:
    valid: bool
    findings: tuple[Comment, ...] = ()
    dropped: tuple[str, ...] = field(default=())  # why each unusable finding was left out
    problem: str | None = None  # why the whole review is invalid


def json_text(text: str) -> str:
    """The JSON part of an answer's text: all of it when it starts with [ or {, else its first fenced block."""
    trimmed = text.strip()
    if trimmed.startswith(("[", "{")):
        return trimmed
    fenced = FENCED_JSON.search(text) or FENCED.search(text)
    return fenced.group(1).strip() if fenced else trimmed


def _line(value: Any) -> int | None:
    """A line number as BC-Bench reads one: an int or its string form, at least 1 (a float or a bool is none)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if number >= 1 else None


def _articles(item: dict[str, Any], body: str) -> list[str]:
    """bceval's extension: the article ids a finding cites, in an `articles` list or as links in its body."""
    given = item.get("articles")
    cited = [a for a in given if isinstance(a, str) and ARTICLE.fullmatch(a)] if isinstance(given, list) else []
    return sorted(set(cited) | set(ARTICLE_LINK.findall(body)))


def _finding(item: Any) -> Comment | str:
    """One finding, or why it is dropped."""
    if not isinstance(item, dict):
        return "not an object"
    path = item.get("file") or item.get("filePath")
    line = next((item[key] for key in ("line_start", "lineNumber", "line") if item.get(key)), None)
    body = item.get("body") or item.get("issue")
    if not isinstance(path, str) or not FILE.fullmatch(path):
        return f"file {str(path)[:80]!r} is missing or not a repository path of an .al or .json file"
    if _line(line) is None:
        return f"{path}: no usable line number"
    if not body:
        return f"{path}:{_line(line)}: no body"
    domain = item.get("domain").strip() if isinstance(item.get("domain"), str) else None
    return Comment.model_construct(
        file=path,
        line_start=_line(line),
        line_end=_line(item.get("line_end")),
        domain=domain or None,
        body=str(body),
        severity=severity(item.get("severity")),
        articles=_articles(item, str(body)),
    )


def parse_review(text: str | None) -> Review:
    """The findings of a review's text (None: no review.json was written)."""
    if text is None:
        return Review(False, problem="no review.json")
    source = json_text(text)
    if not source:
        return Review(False, problem="review.json is empty")
    try:
        value = json.loads(source)
    except (ValueError, RecursionError) as exc:
        return Review(False, problem=f"review.json is not JSON: {str(exc)[:120]}")
    if isinstance(value, dict) and isinstance(value.get("findings"), list):
        value = value["findings"]
    elif isinstance(value, dict) and ("file" in value or "filePath" in value):
        value = [value]
    if not isinstance(value, list):
        return Review(False, problem="review.json holds neither a list of findings nor one finding")
    parsed = [_finding(item) for item in value]
    findings = tuple(p for p in parsed if isinstance(p, Comment))
    dropped = tuple(f"finding {n}: {p}" for n, p in enumerate(parsed, 1) if isinstance(p, str))
    return Review(True, findings, dropped)
