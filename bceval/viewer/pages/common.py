"""What every page kind shares: relative links, rates as text and the text files a page shows."""

from __future__ import annotations

from collections.abc import Sequence

from bceval.scorecard.stats import wilson_interval
from bceval.viewer.html import bullets, esc, link, safe_name


def up(key: str) -> str:
    """From a page in folder `key` back to the root ('runs/x' -> '../..')."""
    return "/".join(".." for _ in key.split("/")) if key else ""


def case_href(run_key: str, model_id: str) -> str:
    return f"{run_key}/cases/{safe_name(model_id)}.html"


def experiment_crumbs(root: str, experiment: str | None) -> list[tuple[str, str]]:
    """The way back to the experiment a run belongs to (none for a run of its own)."""
    return [(f"{root}/experiments/{safe_name(experiment)}/index.html", experiment)] if experiment else []


def problem_list(problems: list[str] | None) -> str:
    return "<h2>Problems</h2>" + bullets(map(esc, problems)) if problems else ""


def compare_links(root: str, compares: Sequence[tuple[str, str, str]], heading: str) -> str:
    """(old, new, href) pairs under `heading`, as links relative to the root."""
    items = (link(f"{root}/{href}", f"{a} → {b}") for a, b, href in compares)
    return f"<h2>{heading}</h2>" + bullets(items) if compares else ""


def short_rate(passed: int, total: int) -> str:
    return f"{passed / total:.3f} ({passed}/{total})" if total else "-"


def rate_text(passed: int, total: int) -> str:
    if not total:
        return "-"
    low, high = wilson_interval(passed, total)
    return f"{short_rate(passed, total)}, Wilson 95% {low:.2f}–{high:.2f}"


def ratio(passed: int, total: int) -> float | None:
    return passed / total if total else None
