"""Rows files: one knowledge group's index rows, laid out so the index task can copy them whole.

A rows file has three lines:

    1. a small header: {"digest", "count", "bytes", "first", "last", "domains"}, read for every group;
    2. the entries, [[path, row domain, byte length], ...] in path order, read only when needed;
    3. the rows' compact JSON joined by ",", in the same order: copied into the index as is.

At 25,000 articles a one-article edit changes one group. Copying whole groups (when groups occupy
contiguous runs of the index order, the usual case) keeps that edit from re-reading every article.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bceval.corpus.layers import LAYER_RANK, index_order, layer_of
from bceval.errors import BcevalError
from bceval.jsonio import read_regular_bytes

FORMAT = 2  # part of the rows tasks' configuration: a new layout rebuilds every rows file
_LAYER_PATH = f"^({'|'.join(LAYER_RANK)})(/|$)"  # the first and last paths start with a layer


def _compact(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode_group(rows: list[dict[str, Any]]) -> bytes:
    """The rows file of one group; `rows` are non-empty and in path order."""
    texts = [_compact(row) for row in rows]
    entries = _compact([[row["path"], row["domain"], len(text)] for row, text in zip(rows, texts, strict=True)])
    blob = b",".join(texts)
    header = {
        "digest": hashlib.sha256(entries + b"\n" + blob).hexdigest(),
        "count": len(rows),
        "bytes": len(blob),
        "first": rows[0]["path"],
        "last": rows[-1]["path"],
        "domains": sorted({row["domain"].lower() for row in rows}),
    }
    return _compact(header) + b"\n" + entries + b"\n" + blob + b"\n"


@dataclass(frozen=True)
class GroupRows:
    """A rows file as read back: the header parsed, the entries and rows still bytes."""

    source: Path
    header: dict[str, Any]
    entries_text: bytes
    blob: bytes

    @property
    def digest(self) -> str:
        return self.header["digest"]

    @property
    def domains(self) -> list[str]:
        return self.header["domains"]

    def order_key(self, end: str) -> tuple[int, str, str]:
        path = self.header[end]
        return LAYER_RANK[layer_of(path)], path.lower(), path

    def entries(self) -> list[tuple[str, str, bytes]]:
        """(path, row domain, row JSON) per row, in path order."""
        try:
            listed = json.loads(self.entries_text)
            result, offset = [], 0
            for path, domain, length in listed:
                result.append((path, domain, self.blob[offset : offset + length]))
                offset += length + 1  # the "," between rows
        except (ValueError, TypeError):
            raise damaged(self.source) from None
        if len(result) != self.header["count"] or offset != len(self.blob) + 1:
            raise damaged(self.source)
        return result


def damaged(path: Path) -> BcevalError:
    return BcevalError(f"{path}: out of date or damaged; run prepare with --force")


class _Header(BaseModel):
    """A rows file's first line, as encode_group writes it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    digest: str
    count: int = Field(ge=1)
    bytes: int = Field(ge=0)
    first: str = Field(pattern=_LAYER_PATH)
    last: str = Field(pattern=_LAYER_PATH)
    domains: list[str]


def read_group(path: Path) -> GroupRows:
    try:
        parts = read_regular_bytes(path).split(b"\n", 2)
        header = json.loads(parts[0])
        _Header.model_validate(header)
    except (OSError, ValueError):
        raise damaged(path) from None
    if len(parts) != 3:
        raise damaged(path)
    blob = parts[2]
    # compact JSON has no raw line breaks: one "\n", at the end, and the recorded size
    if len(blob) != header["bytes"] + 1 or blob.find(b"\n") != len(blob) - 1:
        raise damaged(path)
    return GroupRows(path, header, parts[1], blob[:-1])


def index_chunks(groups: list[GroupRows]) -> list[bytes]:
    """Pieces that, joined by ",", are every row in index order.

    Whole groups when each occupies a contiguous run of the index order (checked at the seams);
    otherwise (folders whose names differ only in case, articles directly under knowledge/) the
    rows are re-sorted one by one.
    """
    ordered = sorted(groups, key=lambda group: group.order_key("first"))
    if all(a.order_key("last") < b.order_key("first") for a, b in pairwise(ordered)):
        return [group.blob for group in ordered]
    texts = {path: text for group in groups for path, _, text in group.entries()}
    return [texts[path] for path in index_order(texts)]


def row_count(groups: list[GroupRows]) -> int:
    return sum(group.header["count"] for group in groups)
