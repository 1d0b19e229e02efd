"""What the score stage's files are named, and a corpus's article bytes for checking a read's evidence."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from pathlib import Path

from bceval.config import Settings
from bceval.layout import BuildDir


def score_dir(settings: Settings) -> Path:
    """Build files of one results source; keyed by its path so two sources never mix."""
    source = settings.results_path or settings.results_dir
    key = hashlib.sha256(str(source).encode("utf-8")).hexdigest()[:12]
    return BuildDir(settings.build_dir).reading(key)


def reading_file(settings: Settings, result: Path) -> Path:
    return score_dir(settings) / f"{result.name}.reading.json"


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
