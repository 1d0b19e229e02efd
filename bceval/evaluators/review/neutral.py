"""What the model sees instead of the answer: hashed case ids and neutralized sample text."""

from __future__ import annotations

import re
import unicodedata

# .NET's `\s` (the reference runs on .NET): ASCII controls 9-13, NEL and the Unicode separators.
# Python's `\s` also matches U+001C-U+001F, which .NET does not.
_NET_SPACE = "[\t\n\x0b\x0c\r\x85 \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_COMMENT_LINE = re.compile(rf"^{_NET_SPACE}*//[^\n]*(?:\r?\n|$)", re.MULTILINE)
_LABEL = re.compile(r"Good|Bad")
# .NET's word characters for `\b`: letters, non-spacing marks, decimal digits, connector punctuation,
# and ZWNJ/ZWJ. Python's `\b` differs (it counts other digits like '²' and no marks).
_WORD_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Nd", "Pc"})


def _is_word_char(char: str) -> bool:
    return char in "\u200c\u200d" or unicodedata.category(char) in _WORD_CATEGORIES


def _replace_label(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    before = start > 0 and _is_word_char(text[start - 1])
    after = end < len(text) and _is_word_char(text[end])
    return match.group(0) if before or after else "Eval"


def neutralize(source: str) -> str:
    """Drop full-line comments (with their line break) and turn whole-word Good/Bad into Eval.

    The leading whitespace run may cross line breaks, so blank lines right before a comment line go
    too; trailing `code // comment` stays. Both rules are case-sensitive, as in the reference.
    """
    without_comments = _COMMENT_LINE.sub("", source)
    return _LABEL.sub(_replace_label, without_comments)


def neutral_file_text(source: str) -> str:
    """The bytes written to `case-*.al`: the neutral text plus one LF (the reference appends a newline)."""
    return neutralize(source) + "\n"
