"""A corpus's article bytes, for checking a read's evidence against the article it names."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path


def corpus_article(corpus: Path) -> Callable[[str], tuple[int, str] | None]:
    """A corpus path -> (its size, its SHA-256), to check a read's evidence against the article it names."""
    root = corpus.resolve()

    @functools.cache
    def article(path: str) -> tuple[int, str] | None:
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            return None
        try:
            data = target.read_bytes()
        except OSError:
            return None
        return len(data), hashlib.sha256(data).hexdigest()

    return article
