"""The knowledge index (header + rows) and a leaf domain's candidate set."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bceval.config import source_date_epoch
from bceval.corpus.layers import LAYERS, layer_of, sorted_texts

INDEX_VERSION = 1


def generated_at(environ: Mapping[str, str] | None = None) -> str:
    """A reproducible timestamp: SOURCE_DATE_EPOCH when set, else the Unix epoch (never the clock)."""
    moment = source_date_epoch(environ) or datetime.fromtimestamp(0, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")


def build_index(rows: list[dict[str, Any]], timestamp: str) -> dict[str, Any]:
    return {
        "version": INDEX_VERSION,
        "generatedAt": timestamp,
        "enabledLayers": [],
        "knowledgeAllow": [],
        "knowledgeDeny": [],
        "articleCount": len(rows),
        "articles": rows,
    }


def index_document(row_texts: list[bytes], timestamp: str) -> bytes:
    """knowledge-index.json (compact, UTF-8) from rows already encoded compactly, in index order.

    Equal to encoding `build_index(rows, timestamp)` in one go; assembling it from per-row bytes lets
    an incremental run skip decoding and re-encoding every row of a large corpus.
    """
    header = {**build_index([], timestamp), "articleCount": len(row_texts)}
    empty = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return empty[: -len(b"]}")] + b",".join(row_texts) + b"]}\n"


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def domain_articles(rows: list[dict[str, Any]], domain: str) -> list[dict[str, Any]]:
    """Rows of one domain, one per file name with the highest layer winning, sorted by path."""
    return candidates_by_domain(rows, [domain])[domain]


def candidates_by_domain(rows: list[dict[str, Any]], domains: list[str]) -> dict[str, list[dict[str, Any]]]:
    """`domain_articles` for many domains in one pass over the rows."""
    by_path = {row["path"]: row for row in rows}
    chosen = candidate_paths(((row["path"], row["domain"]) for row in rows), domains)
    return {domain: [by_path[path] for path in paths] for domain, paths in chosen.items()}


def candidate_paths(domain_of: Iterable[tuple[str, str]], domains: list[str]) -> dict[str, list[str]]:
    """Per leaf domain, the article paths whose row domain matches it ignoring case, one per file name
    (the highest layer wins, then the first path), sorted by path."""
    by_domain: dict[str, list[str]] = {}
    for path, domain in domain_of:
        by_domain.setdefault(domain.lower(), []).append(path)
    result = {}
    for domain in domains:
        paths = sorted_texts(by_domain.get(domain.lower(), []))
        by_layer: dict[str, list[str]] = {layer: [] for layer in LAYERS}
        for path in paths:
            by_layer[layer_of(path)].append(path)
        winners: dict[str, str] = {}
        for layer in reversed(LAYERS):  # highest layer first, each in path order
            for path in by_layer[layer]:
                winners.setdefault(_file_name(path), path)
        result[domain] = paths if len(winners) == len(paths) else sorted_texts(winners.values())
    return result
