"""What the super-skill checks of the findings-report contract (spec upstream-2026-09.md §3.3, §3.4) rest on: the
coordinator's expected composition, the outcome derived from sub-results, and whether a rolled-up finding
represents (or owns) a leaf finding."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.development import DevelopmentError
from bceval.evaluators.development.findings import contract_errors, findings_report_errors
from bceval.jsonio import read_json

SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
SEVERITY_RANK = {"info": 0, "minor": 1, "major": 2, "blocker": 3}
CONFIDENCE_RANK = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True)
class Composition:
    """What the coordinator selected (leaf id -> version, in worklist order), skipped (id -> (version, reason)) and
    captured as accepted leaf reports (id -> report)."""

    super_skill: tuple[str, int]
    leaves: dict[str, int]
    skips: dict[str, tuple[int, str]]
    accepted: dict[str, dict[str, Any]]


def load_composition(path: Path) -> Composition:
    """An expected composition file (§3.4); a DevelopmentError naming the file when it breaks its contract."""

    def invalid(message: str) -> DevelopmentError:
        return DevelopmentError(f"{path}: Invalid expected composition: {message}")

    document = read_json(path)
    if contract_errors("expected-composition", document):
        raise invalid("Expected composition does not satisfy its input contract.")
    leaves: dict[str, int] = {}
    for leaf in document["subSkills"]:
        if leaf["id"] in leaves:
            raise invalid(f"Duplicate expected skill id '{leaf['id']}'.")
        leaves[leaf["id"]] = leaf["version"]
    skips: dict[str, tuple[int, str]] = {}
    for skip in document["skipped"]:
        if skip["id"] in leaves or skip["id"] in skips:
            raise invalid(f"Duplicate or selected-and-skipped expected skill id '{skip['id']}'.")
        skips[skip["id"]] = (skip["version"], skip["reason"])
    accepted: dict[str, dict[str, Any]] = {}
    for item in document["acceptedResults"]:
        name = item["id"]
        if name not in leaves or item["version"] != leaves[name] or name in accepted:
            raise invalid(f"Accepted result '{name}' must uniquely match a selected leaf and version.")
        try:
            report = read_json(path.parent / item["reportPath"])  # an absolute reportPath stays as it is
        except BcevalError as exc:
            raise invalid(f"Accepted result '{name}': {exc}") from None
        if findings_report_errors(report):
            raise invalid(f"Accepted result '{name}' does not satisfy the report schema.")
        composed = {"sub-results", "skipped-sub-skills"} & report.keys()
        if (report["skill"]["id"], report["skill"]["version"]) != (name, item["version"]) or composed:
            raise invalid(f"Accepted result '{name}' must be a leaf report with the captured identity.")
        accepted[name] = report
    superskill = document["superSkill"]
    return Composition((superskill["id"], superskill["version"]), leaves, skips, accepted)


def same_json(first: Any, second: Any) -> bool:
    """Deep equality as upstream compares a sub-result with its accepted report: objects by member set in any
    order, arrays in order, numbers of the same type (1 is not 1.0, true is not 1)."""
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(same_json(value, second[key]) for key, value in first.items())
    if isinstance(first, list):
        return len(first) == len(second) and all(map(same_json, first, second))
    return bool(first == second)


def derived_outcome(outcomes: list[str], missing: int) -> str:
    """The outcome a super-skill report must have, from its sub-results' outcomes and its missing selected leaves."""
    running = [outcome for outcome in outcomes if outcome != "failed"]
    if missing:
        return "partial" if running else "failed"
    if not outcomes:
        return "not-applicable"
    if not running:
        return "failed"
    if "partial" in outcomes or len(running) < len(outcomes):
        return "partial"
    if all(outcome == "not-applicable" for outcome in outcomes):
        return "not-applicable"
    if "no-knowledge" in outcomes and all(outcome in ("no-knowledge", "not-applicable") for outcome in outcomes):
        return "no-knowledge"
    return "completed"


def overlap(first: dict[str, Any], second: dict[str, Any]) -> bool:
    """Both located in the same file, and their [line, range end or line] spans intersect."""
    if "location" not in first or "location" not in second:
        return False
    a, b = first["location"], second["location"]
    if a["file"] != b["file"]:
        return False
    return (
        a["line"] <= b.get("range", {"end-line": b["line"]})["end-line"]
        and b["line"] <= a.get("range", {"end-line": a["line"]})["end-line"]
    )


def same_correction(first: dict[str, Any], second: dict[str, Any]) -> bool:
    if "suggested-code" in first or "suggested-code" in second:
        return first.get("suggested-code") == second.get("suggested-code")
    return first["message"] == second["message"]


def _includes(rolled: list[dict[str, Any]], leaf: list[dict[str, Any]]) -> bool:
    """Every leaf reference is among the rolled references (same path, same sha or both without)."""
    return all(any(r["path"] == ref["path"] and r.get("sha") == ref.get("sha") for r in rolled) for ref in leaf)


def represents(rolled: dict[str, Any], leaf: dict[str, Any], producer: str, owner: bool = False) -> bool:
    """Whether rolled-up finding `rolled` represents finding `leaf` of sub-skill `producer` (§3.3 "Represents");
    with `owner`, also whether it is that finding's own roll-up (same producer, id, primary path and domain)."""
    rolled_refs, leaf_refs = rolled["references"], leaf["references"]
    by = rolled.get("from-sub-skill")
    if "location" not in rolled and "location" not in leaf:
        same = ("severity", "confidence", "message", "domain", "suggested-code", "suggested-code-omission-reason")
        return (
            by == producer
            and rolled["id"] == (leaf["id"] if leaf_refs else f"{producer}:{leaf['id']}")
            and all(rolled.get(name) == leaf.get(name) for name in same)
            and len(rolled_refs) == len(leaf_refs)
            and _includes(rolled_refs, leaf_refs)
        )
    if (
        not overlap(rolled, leaf)
        or SEVERITY_RANK[rolled["severity"]] < SEVERITY_RANK[leaf["severity"]]
        or CONFIDENCE_RANK[rolled["confidence"]] < CONFIDENCE_RANK[leaf["confidence"]]
    ):
        return False
    conflict = (
        "suggested-code" in rolled and "suggested-code" in leaf and rolled["suggested-code"] != leaf["suggested-code"]
    )
    merged = (
        bool(leaf_refs) and len(rolled_refs) > len(leaf_refs) and not conflict and _includes(rolled_refs, leaf_refs)
    )
    if not same_correction(rolled, leaf) and not merged:
        return False
    if not leaf_refs:  # an agent finding: rolled up under its producer's prefix, still without citations
        return by == producer and rolled["id"] == f"{producer}:{leaf['id']}" and not rolled_refs
    if not _includes(rolled_refs, leaf_refs):
        return False
    if owner:
        return (
            by == producer
            and rolled["id"] == leaf["id"]
            and rolled_refs[0]["path"] == leaf_refs[0]["path"]
            and rolled.get("domain") == leaf.get("domain")
        )
    return True
