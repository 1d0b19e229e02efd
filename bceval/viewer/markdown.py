"""The Markdown bceval itself writes (report.md, scorecard.md: headings, tables, lists, paragraphs, `code` and
**bold**), as HTML. Not a general Markdown renderer: every line is escaped first and only those few forms become
markup, so text a model or a corpus wrote inside the Markdown stays text."""

from __future__ import annotations

import re

from bceval.viewer.html import esc

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
_ITEM = re.compile(r"^\s*[-*]\s+")
_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def inline(text: str) -> str:
    escaped = esc(text)
    escaped = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", escaped)
    return _BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", escaped)


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def render(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if not stripped or stripped.startswith("<!--"):  # a blank line or one of bceval's own markers
            index += 1
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if heading:
            level = min(len(heading.group(1)) + 1, 6)  # the page's own title is the h1
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
            index += 1
            continue
        if stripped.startswith("|") and index + 1 < len(lines) and _RULE.match(lines[index + 1].strip()):
            headers = _cells(stripped)
            index += 2
            rows = []
            while index < len(lines) and lines[index].strip().startswith("|"):
                rows.append(_cells(lines[index]))
                index += 1
            head = "".join(f'<th scope="col">{inline(cell)}</th>' for cell in headers)
            body = "".join("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>" for row in rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            continue
        if _ITEM.match(stripped):
            items = []
            while index < len(lines) and _ITEM.match(lines[index]):
                items.append(f"<li>{inline(_ITEM.sub('', lines[index]))}</li>")
                index += 1
            out.append(f"<ul>{''.join(items)}</ul>")
            continue
        paragraph = [stripped]
        index += 1
        while index < len(lines) and lines[index].strip() and not re.match(r"^(#|\||[-*]\s)", lines[index].strip()):
            paragraph.append(lines[index].strip())
            index += 1
        out.append(f"<p>{inline(' '.join(paragraph))}</p>")
    return "\n".join(out)
