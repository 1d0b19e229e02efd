"""bceval's one order for strings (the reference sorted by a hash table in places; this is the sane rule)."""

from __future__ import annotations

from collections.abc import Iterable


def sorted_texts(texts: Iterable[str]) -> list[str]:
    return sorted(texts, key=sort_key)


def sort_key(text: str) -> tuple[str, str]:
    """bceval's one string order: ordinal on the lower-cased text, ties by ordinal on the original."""
    return (text.lower(), text)
