"""The knowledge index (header + rows) and a leaf domain's candidate set."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bceval.config import source_date_epoch
from bceval.corpus.layers import LAYER_RANK, sort_key

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


def index_text(row_texts: list[str], timestamp: str) -> str:
    """knowledge-index.json (compact) from rows already encoded compactly, in index order.

    Equal to encoding `build_index(rows, timestamp)` in one go; assembling it from per-row text lets
    an incremental run skip decoding and re-encoding every row of a large corpus.
    """
    header = {**build_index([], timestamp), "articleCount": len(row_texts)}
    empty = json.dumps(header, ensure_ascii=False, separators=(",", ":"))
    return empty[: -len("]}")] + ",".join(row_texts) + "]}\n"


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1].lower()


def domain_articles(rows: list[dict[str, Any]], domain: str) -> list[dict[str, Any]]:
    """Rows of one domain, one per file name with the highest layer winning, sorted by path."""
    return candidates_by_domain(rows, [domain])[domain]


def candidates_by_domain(rows: list[dict[str, Any]], domains: list[str]) -> dict[str, list[dict[str, Any]]]:
    """`domain_articles` for many domains in one pass over the rows (domains match ignoring case)."""
    by_domain: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_domain.setdefault(row["domain"].lower(), []).append(row)
    result = {}
    for domain in domains:
        matching = sorted(
            by_domain.get(domain.lower(), []), key=lambda row: (-LAYER_RANK[row["layer"]], *sort_key(row["path"]))
        )
        winners: dict[str, dict[str, Any]] = {}
        for row in matching:
            winners.setdefault(_file_name(row["path"]), row)
        result[domain] = sorted(winners.values(), key=lambda row: sort_key(row["path"]))
    return result
