"""Rows files: one knowledge group's index rows, one compact JSON array, read back by the index task."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.corpus.layers import index_order
from bceval.corpus.strict import STRICT, source_snapshot
from bceval.errors import BcevalError
from bceval.jsonio import read_regular_bytes

FORMAT = 3  # part of the rows tasks' configuration: a new layout rebuilds every rows file


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode_group(rows: list[dict[str, Any]]) -> bytes:
    """The rows file of one group."""
    return _compact(rows) + b"\n"


@dataclass(frozen=True)
class GroupRows:
    rows: list[dict[str, Any]]

    def entries(self) -> list[tuple[str, str, bytes]]:
        """(path, row domain, row JSON) per row."""
        return [(row["path"], row["domain"], _compact(row)) for row in self.rows]


def read_group(path: Path) -> GroupRows:
    try:
        rows = json.loads(read_regular_bytes(path))
        if not isinstance(rows, list) or not all(isinstance(r["path"] + r["domain"], str) for r in rows):
            raise ValueError
    except (OSError, ValueError, TypeError, KeyError):
        raise BcevalError(f"{path}: out of date or damaged; run prepare with --force") from None
    return GroupRows(rows)


def index_chunks(groups: list[GroupRows]) -> list[bytes]:
    """Every row's compact JSON, in index order (joined by "," they are the index's articles)."""
    texts = {path: text for group in groups for path, _, text in group.entries()}
    return [texts[path] for path in index_order(texts)]


def row_count(groups: list[GroupRows]) -> int:
    return sum(len(group.rows) for group in groups)


def snapshot(groups: list[GroupRows], index: str) -> str | None:
    """The strict index's `sourceSnapshot` over every group's rows; None for the lenient one, which has none."""
    return source_snapshot([row for group in groups for row in group.rows]) if index == STRICT else None
