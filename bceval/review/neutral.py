"""What the model sees instead of the answer: hashed case ids and neutralized sample text."""

from __future__ import annotations

import hashlib
import re

_COMMENT_LINE = re.compile(r"^\s*//[^\n]*(?:\r?\n|$)", re.MULTILINE)
_LABEL = re.compile(r"\b(?:Good|Bad)\b")


def model_id(case_id: str) -> str:
    """`case-` plus the first 8 hex digits of the SHA-256 of the manifest id."""
    return "case-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:8]


def neutralize(source: str) -> str:
    """Drop full-line comments (with their line break) and turn whole-word Good/Bad into Eval.

    `\\s*` may cross line breaks, so blank lines right before a comment line go too; trailing
    `code // comment` stays. Both rules are case-sensitive, as in the reference.
    """
    without_comments = _COMMENT_LINE.sub("", source)
    return _LABEL.sub("Eval", without_comments)


def neutral_file_text(source: str) -> str:
    """The bytes written to `case-*.al`: the neutral text plus one LF (the reference appends a newline)."""
    return neutralize(source) + "\n"
