"""One knowledge article -> one index row: the line-based frontmatter parser and the lean description."""

from __future__ import annotations

import re
from typing import Any

from bceval.corpus.layers import layer_of

LIST_FIELDS = ("bc-version", "technologies", "countries", "application-area", "keywords")
LEAN_LIMIT = 120  # UTF-16 code units, as the reference measures
LEAN_MIN_CUT = 40
ELLIPSIS = "\u2026"

LINE_BREAK = re.compile(r"\r\n|\n|\r")
_KEY_LINE = re.compile(r"^\s*([A-Za-z][\w-]*)\s*:\s*(.*)$")
_H1 = re.compile(r"^#\s+(.+?)\s*$")
_DESCRIPTION = re.compile(r"^##\s+Description\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^##\s")
_WHITESPACE = re.compile(r"\s+")
_FIRST_SENTENCE = re.compile(r"^(.*?[.!?])(?=\s|$)")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def lean_description(text: str) -> str:
    """The first sentence, cut at a word boundary to at most 120 UTF-16 units plus an ellipsis."""
    collapsed = _WHITESPACE.sub(" ", text).strip()
    if not collapsed:
        return ""
    match = _FIRST_SENTENCE.match(collapsed)
    if match:
        collapsed = match.group(1).strip()
    if _utf16_len(collapsed) <= LEAN_LIMIT:
        return collapsed
    head = collapsed.encode("utf-16-le")[: 2 * LEAN_LIMIT].decode("utf-16-le", "ignore")  # no half of a pair
    space = head.rfind(" ")
    if space >= 0 and _utf16_len(head[:space]) > LEAN_MIN_CUT:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def _parse_value(raw: str) -> str | list[str] | None:
    value = raw.strip()
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [item.strip() for item in inner.split(",")] if inner else []
    return value or None


def frontmatter(text: str) -> tuple[list[tuple[str, str]], list[str]] | None:
    """(key, raw value) of each frontmatter key line, and the lines after the frontmatter; None without one."""
    lines = LINE_BREAK.split(text)
    if not lines or lines[0].strip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return None
    keyed = [match.groups() for match in map(_KEY_LINE.match, lines[1:end]) if match]
    return keyed, lines[end + 1 :]


def parse_article(text: str) -> dict[str, Any] | None:
    """Frontmatter fields plus title and raw description; None when the frontmatter is missing."""
    found = frontmatter(text)
    if found is None:
        return None
    fields: dict[str, str | list[str]] = {}
    for key, raw in found[0]:
        value = _parse_value(raw)
        if value is not None:
            fields[key.lower()] = value  # keys are case-insensitive; last one wins
    title = ""
    in_description = False
    description: list[str] = []
    for line in found[1]:
        heading = _H1.match(line) if not title else None
        if heading:
            title = heading.group(1).strip()  # a blank H1 leaves the title open, as in the reference
        elif _DESCRIPTION.match(line):
            in_description = True
        elif in_description:
            if _SECTION.match(line):
                break  # the reference stops reading the body where the description ends
            if line.strip():
                description.append(line.strip())
    return {"fields": fields, "title": title, "description": " ".join(description)}


def _as_text(value: str | list[str] | None) -> str:
    if value is None:
        return ""
    return " ".join(value) if isinstance(value, list) else value


def _as_list(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []  # bceval writes [] where the reference's PowerShell wrote [null]
    return value if isinstance(value, list) else [value]


def unparsed_domain(rel: str) -> str:
    """The folder right after `/knowledge/`, or '' for a file directly in `knowledge/`."""
    after = rel.split("/knowledge/", 1)[1]
    return after.split("/", 1)[0] if "/" in after else ""


def index_row(rel: str, text: str, full_description: bool = False) -> dict[str, Any]:
    """The index row of one article, members in the reference's order; without frontmatter the domain is the
    article's folder and everything else is empty."""
    parsed = parse_article(text)
    fields = parsed["fields"] if parsed else {}
    domain = _as_text(fields.get("domain")) if parsed else unparsed_domain(rel)
    row: dict[str, Any] = {"path": rel, "layer": layer_of(rel), "domain": domain}
    row.update({name: _as_list(fields.get(name)) for name in LIST_FIELDS})
    row["title"] = parsed["title"] if parsed else ""
    description = parsed["description"] if parsed else ""
    row["description"] = description if full_description else lean_description(description)
    row["parsed"] = parsed is not None
    return row
