"""What every page kind shares: relative links, rates as text and the text files a page shows."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from bceval.scorecard.stats import wilson_interval
from bceval.viewer.html import safe_name


def up(key: str) -> str:
    """From a page in folder `key` back to the root ('runs/x' -> '../..')."""
    return "/".join(".." for _ in key.split("/")) if key else ""


def case_href(run_key: str, model_id: str) -> str:
    return f"{run_key}/cases/{safe_name(model_id)}.html"


def short_rate(passed: int, total: int) -> str:
    return f"{passed / total:.3f} ({passed}/{total})" if total else "-"


def rate_text(passed: int, total: int) -> str:
    if not total:
        return "-"
    low, high = wilson_interval(passed, total)
    return f"{short_rate(passed, total)}, Wilson 95% {low:.2f}–{high:.2f}"


def ratio(passed: int, total: int) -> float | None:
    return passed / total if total else None


@lru_cache(maxsize=4096)
def cached_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
