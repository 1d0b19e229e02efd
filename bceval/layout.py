"""File names and shards of answered cases: cheap helpers the graph needs without loading adapters."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from bceval.config import parse_shard
from bceval.corpus.layers import sort_key
from bceval.errors import BcevalError

if TYPE_CHECKING:
    from bceval.review.cases import ReviewCase

CASE_PATTERN = "result-case-*.json"
ANY_PATTERN = "result-*.json"
INFRA_PATTERN = "infra-case-*.json"


def result_name(model_id: str) -> str:
    return f"result-{model_id}.json"


def infra_name(model_id: str) -> str:
    return f"infra-{model_id}.json"


def shard_of(model_id: str, count: int) -> int:
    """The shard (1..count) a case belongs to: a hash of its id alone, so adding or removing other cases never
    moves it, and two arms with different case sets still answer a shared case on the same machine."""
    return int.from_bytes(hashlib.sha256(model_id.encode("utf-8")).digest()[:8], "big") % count + 1


def shard_cases(cases: list[ReviewCase], shard: str | None) -> list[ReviewCase]:
    """Shard K of N: the cases whose id hashes to K, in model-id order. Shards never overlap."""
    if not shard:
        return list(cases)
    index, count = parse_shard(shard)
    ordered = sorted(cases, key=lambda case: case.modelId)
    return [case for case in ordered if shard_of(case.modelId, count) == index]


def result_files(directory: Path) -> list[Path]:
    """`result-case-*.json` when any exist, else every `result-*.json`; sorted, never empty."""
    if not directory.is_dir():
        raise BcevalError(f"{directory}: results directory does not exist")
    for pattern in (CASE_PATTERN, ANY_PATTERN):
        found = sorted((p for p in directory.glob(pattern) if p.is_file()), key=lambda p: sort_key(p.name))
        if found:
            return found
    raise BcevalError(f"{directory}: no result files ({CASE_PATTERN} or {ANY_PATTERN})")


def infra_files(directory: Path) -> list[Path]:
    return sorted((p for p in directory.glob(INFRA_PATTERN) if p.is_file()), key=lambda p: sort_key(p.name))
