"""File names of answered cases: cheap helpers the graph needs without loading agents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bceval.errors import BcevalError
from bceval.ordering import sort_key

if TYPE_CHECKING:
    pass

CASE_PATTERN = "result-case-*.json"
ANY_PATTERN = "result-*.json"
INFRA_PATTERN = "infra-case-*.json"


def result_name(model_id: str) -> str:
    return f"result-{model_id}.json"


def infra_name(model_id: str) -> str:
    return f"infra-{model_id}.json"


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
