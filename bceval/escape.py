"""Text that came from a model, a result file or a corpus, made inert for where bceval shows it: on a console a
control character can draw a fake verdict, in Markdown a pipe or an HTML comment can forge a published page's
markers, in HTML a tag is code. `finding_id` also shortens an id that is no candidate path."""

from __future__ import annotations

import re
import unicodedata
from html import escape as _html_escape

ID_CUT = 60  # characters of an id that is no candidate path kept in a report
# What a candidate article's path looks like (repo-relative, forward slashes, a Markdown file).
PATH_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,254}\.md")
TOKEN_LIKE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,199}")  # a case id, a run name, a domain
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|<>#~])")


def _visible(char: str) -> str:
    """A control or format character as its escape (`\\x1b`, `\\u202e`); any other character as itself."""
    if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp"):
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return char


def console(text: str) -> str:
    """One line for a terminal: control and format characters (escape sequences, carriage returns, newlines,
    bidirectional overrides) shown as escapes, so nothing moves the cursor or starts a second line."""
    if text.isprintable():
        return text
    return "".join(_visible(char) for char in text)


def markdown(text: str) -> str:
    """Text for a Markdown line or table cell: controls shown as escapes and every character that Markdown or
    the HTML inside it would act on (pipes, backticks, emphasis, links, `<`, headings) escaped."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text).replace("\\<", "&lt;").replace("\\>", "&gt;")
    return console(escaped)  # after: the backslash of an escape like \x1b must stay single


def markdown_code(text: str) -> str:
    """`text` as inline code when it can be (no backtick, nothing to escape), else as escaped plain text."""
    if text and "`" not in text and text.isprintable():
        return f"`{text}`"
    return markdown(text) if text else "``"


def html(text: str) -> str:
    """Text for HTML: markup escaped (quotes included) and controls shown as escapes."""
    return _html_escape(console(text))


def quoted(text: str, limit: int = ID_CUT) -> str:
    """`"text"` with controls shown as escapes, cut to `limit` characters (marked with …)."""
    visible = console(text)
    return '"' + (visible if len(visible) <= limit else visible[: limit - 1] + "…") + '"'


def is_path_like(text: str) -> bool:
    return PATH_LIKE.fullmatch(text) is not None and ".." not in text.split("/")


def finding_id(text: str) -> str:
    """A finding id as a report shows it: a candidate-like path as it is, anything else quoted and cut."""
    return text if is_path_like(text) else quoted(text)


def markdown_cell(text: str) -> str:
    """A corpus or result-file name in a Markdown line: as it is when it looks like an id, else escaped."""
    return text if TOKEN_LIKE.fullmatch(text) or is_path_like(text) else markdown(text)


def markdown_id(text: str) -> str:
    """A finding id in Markdown: a candidate path as inline code, anything else quoted, cut and escaped."""
    return f"`{text}`" if is_path_like(text) else markdown(quoted(text))


def html_id(text: str) -> str:
    """A finding id in HTML: a candidate path as code, anything else quoted, cut and escaped."""
    return f"<code>{html(text)}</code>" if is_path_like(text) else html(quoted(text))


def token(text: str) -> str:
    """An id that is no path (a case id from a result file): as it is when it looks like one, else quoted and cut."""
    return text if TOKEN_LIKE.fullmatch(text) else quoted(text)
