"""The knowledge index (header + rows) and a leaf domain's candidate set."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bceval.clock import generated_at
from bceval.corpus.articles import index_row
from bceval.corpus.layers import LAYERS, index_order, knowledge_markdown, layer_of, scan_corpus, sorted_texts
from bceval.errors import BcevalError
from bceval.jsonio import decode_utf8, dumps_compact, read_regular_bytes

INDEX_VERSION = 1


def build_index(rows: list[dict[str, Any]], timestamp: str, snapshot: str | None = None) -> dict[str, Any]:
    return {
        "version": INDEX_VERSION,
        "generatedAt": timestamp,
        "enabledLayers": [],
        "knowledgeAllow": [],
        "knowledgeDeny": [],
        "articleCount": len(rows),
        **({"sourceSnapshot": snapshot} if snapshot is not None else {}),
        "articles": rows,
    }


def index_document(chunks: list[bytes], count: int, timestamp: str, snapshot: str | None = None) -> bytes:
    """knowledge-index.json, the compact encoding of `build_index(rows, timestamp)`, from the `count` rows'
    compact JSON in index order; the strict index's `snapshot` goes after the count."""
    empty = dumps_compact({**build_index([], timestamp, snapshot), "articleCount": count}).encode("utf-8")
    return b"".join([empty[: -len(b"]}\n")], b",".join(chunks), b"]}\n"])


def domain_articles(rows: list[dict[str, Any]], domain: str) -> list[dict[str, Any]]:
    """Rows of one domain, one per file name with the highest layer winning, sorted by path."""
    return candidates_by_domain(rows, [domain])[domain]


def candidates_by_domain(rows: list[dict[str, Any]], domains: list[str]) -> dict[str, list[dict[str, Any]]]:
    """`domain_articles` for many domains in one pass over the rows."""
    by_path = {row["path"]: row for row in rows}
    ordered = index_order(by_path)
    chosen = candidate_paths([(path, by_path[path]["domain"]) for path in ordered], domains)
    return {domain: [by_path[path] for path in paths] for domain, paths in chosen.items()}


def candidate_paths(domain_of: Iterable[tuple[str, str]], domains: list[str]) -> dict[str, list[str]]:
    """Per leaf domain, the article paths whose row domain matches it ignoring case, one per file name
    (the highest layer wins, then the first path), sorted by path. `domain_of` gives (path, row domain) in
    index order (`index_order`)."""
    by_domain: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, domain in domain_of:
        by_domain[domain.lower()][layer_of(path)].append(path)
    result = {}
    for domain in domains:
        layers = by_domain.get(domain.lower(), {})
        winners: dict[str, str] = {}
        for layer in reversed(LAYERS):  # the highest layer first, each in path order
            for path in layers.get(layer, ()):
                winners.setdefault(path.rsplit("/", 1)[-1].lower(), path)  # one per file name
        result[domain] = sorted_texts(winners.values())
    return result


def knowledge_index_text(root: Path, failure: type[BcevalError]) -> str:
    """bceval's own index of every article in every layer of a knowledge checkout (the reference ran a tool from
    the checkout); an article that cannot be read safely raises `failure`."""
    try:
        listing = scan_corpus(root)
        rows = [index_row(rel, decode_utf8(read_regular_bytes(root / rel), rel)) for rel in knowledge_markdown(listing)]
    except (BcevalError, OSError):
        raise failure("Knowledge checkout articles could not be read safely for the index") from None
    return dumps_compact(build_index(rows, generated_at()))
