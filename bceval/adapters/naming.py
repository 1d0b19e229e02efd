"""File names and shards of answered cases: cheap helpers the graph needs without loading adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bceval.config import parse_shard

if TYPE_CHECKING:
    from bceval.review.cases import ReviewCase


def result_name(model_id: str) -> str:
    return f"result-{model_id}.json"


def infra_name(model_id: str) -> str:
    return f"infra-{model_id}.json"


def shard_cases(cases: list[ReviewCase], shard: str | None) -> list[ReviewCase]:
    """Shard K of N: every N-th case by model id, starting at the K-th. Shards never overlap."""
    if not shard:
        return list(cases)
    index, count = parse_shard(shard)
    ordered = sorted(cases, key=lambda case: case.modelId)
    return [case for position, case in enumerate(ordered) if position % count == index - 1]
