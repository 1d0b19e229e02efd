"""The super-skill half of the findings-report contract (spec upstream-2026-09.md §3.3's SUPER_* codes, §3.4): the
coordinator's expected composition, the outcome and coverage derived from sub-results, and whether each rolled-up
finding is owned by, and represents, the leaf findings it claims."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from jsonschema import Draft7Validator

from bceval.errors import BcevalError
from bceval.evaluators.development import DevelopmentError
from bceval.evaluators.development.findings import findings_report_errors
from bceval.jsonio import read_json

SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
SEVERITY_RANK = {"info": 0, "minor": 1, "major": 2, "blocker": 3}
CONFIDENCE_RANK = {"low": 0, "medium": 1, "high": 2}
_IDENTITY = {
    "type": "object",
    "required": ["id", "version"],
    "properties": {"id": {"type": "string", "pattern": f"^{SLUG}$"}, "version": {"type": "integer", "minimum": 1}},
}
_ID, _VERSION = _IDENTITY["properties"]["id"], _IDENTITY["properties"]["version"]  # type: ignore[index]
# the input contract of an expected composition (members beyond these are allowed)
_COMPOSITION = Draft7Validator(
    {
        "type": "object",
        "required": ["superSkill", "subSkills", "skipped", "acceptedResults"],
        "properties": {
            "superSkill": _IDENTITY,
            "subSkills": {"type": "array", "items": _IDENTITY},
            "skipped": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "version", "reason"],
                    "properties": {
                        "id": _ID,
                        "version": _VERSION,
                        "reason": {"enum": ["configuration", "not-applicable"]},
                    },
                },
            },
            "acceptedResults": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "version", "reportPath"],
                    "properties": {"id": _ID, "version": _VERSION, "reportPath": {"type": "string", "minLength": 1}},
                },
            },
        },
    }
)
Add = Callable[[str, str, str], None]  # (code, JSON path, message)


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
    if not _COMPOSITION.is_valid(document):
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
        skill = report["skill"]
        if (skill["id"], skill["version"]) != (name, item["version"]) or {"sub-results", "skipped-sub-skills"} & set(
            report
        ):
            raise invalid(f"Accepted result '{name}' must be a leaf report with the captured identity.")
        accepted[name] = report
    superskill = document["superSkill"]
    return Composition((superskill["id"], superskill["version"]), leaves, skips, accepted)


def same_json(first: Any, second: Any) -> bool:
    """Deep equality as upstream compares a sub-result with its accepted report: objects by member set in any
    order, arrays in order, numbers of the same type (1 is not 1.0, true is not 1)."""
    if isinstance(first, dict) or isinstance(second, dict):
        return (
            isinstance(first, dict)
            and isinstance(second, dict)
            and first.keys() == second.keys()
            and all(same_json(value, second[key]) for key, value in first.items())
        )
    if isinstance(first, list) or isinstance(second, list):
        return (
            isinstance(first, list)
            and isinstance(second, list)
            and len(first) == len(second)
            and all(same_json(a, b) for a, b in zip(first, second, strict=True))
        )
    return type(first) is type(second) and first == second


def composition_problems(add: Add, current: dict[str, Any], prefix: str, composition: Composition) -> int:
    """The checks against the coordinator's composition (codes marked ¹ in §3.3); returns how many selected leaves
    the report does not return."""
    if (current["skill"]["id"], current["skill"]["version"]) != composition.super_skill:
        add("SUPER_IDENTITY_MISMATCH", f"{prefix}.skill", "Super-skill identity differs from expected composition.")
    order = list(composition.leaves)
    previous = -1
    for index, sub in enumerate(current["sub-results"]):
        name, where = sub["skill"]["id"], f"{prefix}.sub-results[{index}]"
        if name not in composition.leaves:
            add("SUPER_UNEXPECTED_SUB_RESULT", f"{where}.skill", f"Skill '{name}' was not selected.")
            continue
        if sub["skill"]["version"] != composition.leaves[name]:
            add("SUPER_LEAF_VERSION_MISMATCH", f"{where}.skill.version", f"Unexpected version for '{name}'.")
        if name not in composition.accepted:
            add("SUPER_LEAF_NOT_ACCEPTED", where, f"Leaf '{name}' has no host-captured accepted result.")
        elif not same_json(sub, composition.accepted[name]):
            add("SUPER_LEAF_CONTENT_MISMATCH", where, f"Leaf '{name}' differs from its host-captured accepted result.")
        if order.index(name) <= previous:
            add("SUPER_SUB_RESULT_ORDER", f"{where}.skill", "Sub-results must preserve the selected worklist order.")
        previous = order.index(name)
    returned = {sub["skill"]["id"] for sub in current["sub-results"]}
    missing = [name for name in order if name not in returned]
    reason = current.get("outcome-reason", "")
    for name in missing:
        if name in composition.accepted:
            add(
                "SUPER_ACCEPTED_LEAF_MISSING",
                f"{prefix}.sub-results",
                f"Host-captured accepted leaf '{name}' must be included.",
            )
        if not re.search(rf"(?<![a-zA-Z0-9_-]){re.escape(name)}(?![a-zA-Z0-9_-])", reason):
            add(
                "SUPER_MISSING_LEAF_REASON",
                f"{prefix}.outcome-reason",
                f"The reason must name missing selected leaf '{name}'.",
            )
    skips = current.get("skipped-sub-skills", [])
    for skip in skips:
        name = skip["skill"]["id"]
        if name not in composition.skips:
            add(
                "SUPER_UNEXPECTED_SKIP",
                f"{prefix}.skipped-sub-skills",
                f"Skill '{name}' was not excluded by the coordinator.",
            )
        elif (skip["skill"]["version"], skip["reason"]) != composition.skips[name]:
            add("SUPER_SKIP_MISMATCH", f"{prefix}.skipped-sub-skills", f"Skip identity or reason differs for '{name}'.")
    skipped = {skip["skill"]["id"] for skip in skips}
    for name in composition.skips:
        if name not in skipped:
            add("SUPER_SKIP_MISSING", f"{prefix}.skipped-sub-skills", f"Expected exclusion '{name}' is missing.")
    return len(missing)


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


def _overlap(first: dict[str, Any], second: dict[str, Any]) -> bool:
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


def _same_correction(first: dict[str, Any], second: dict[str, Any]) -> bool:
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
        not _overlap(rolled, leaf)
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
    if not _same_correction(rolled, leaf) and not merged:
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


def super_problems(
    add: Add,
    check_leaf: Callable[[dict[str, Any], str], None],
    current: dict[str, Any],
    prefix: str,
    composition: Composition | None,
) -> None:
    """The checks of a super-skill report that has sub-results, in upstream's order; each sub-result is checked as a
    leaf report of its own (`check_leaf`) right after its duplicate test."""
    subs = current["sub-results"]
    returned: set[str] = set()
    for index, sub in enumerate(subs):
        if sub["skill"]["id"] in returned:
            add(
                "SUPER_DUPLICATE_SUB_RESULT",
                f"{prefix}.sub-results[{index}].skill.id",
                "A leaf may appear only once in sub-results.",
            )
        returned.add(sub["skill"]["id"])
        check_leaf(sub, f"{prefix}.sub-results[{index}]")
    skipped: set[str] = set()
    for skip in current.get("skipped-sub-skills", []):
        name = skip["skill"]["id"]
        if name in skipped or name in returned:
            add(
                "SUPER_SKIP_CONFLICT",
                f"{prefix}.skipped-sub-skills",
                f"Skill '{name}' is duplicated or both returned and skipped.",
            )
        skipped.add(name)
    missing = composition_problems(add, current, prefix, composition) if composition is not None else 0
    expected = derived_outcome([sub["outcome"] for sub in subs], missing)
    if current["outcome"] != expected:
        add("SUPER_OUTCOME_MISMATCH", f"{prefix}.outcome", f"Expected '{expected}' from sub-results.")
    included = [sub for sub in subs if sub["outcome"] != "failed"]
    size = sum(sub["summary"]["coverage"]["worklist-size"] for sub in included)
    done = sum(sub["summary"]["coverage"]["items-evaluated"] for sub in included)
    coverage = current["summary"]["coverage"]
    if (coverage["worklist-size"], coverage["items-evaluated"]) != (size, done):
        message = f"Expected worklist-size {size} and items-evaluated {done} from non-failed sub-results."
        add("SUPER_COVERAGE_MISMATCH", f"{prefix}.summary.coverage", message)
    leaves = _Leaves(
        [(sub["skill"]["id"], finding) for sub in included for finding in sub["findings"]],
        {sub["skill"]["id"] for sub in subs if sub["outcome"] == "failed"},
        {sub["skill"]["id"] for sub in included},
        missing,
    )
    for index, finding in enumerate(current["findings"]):
        _rolled_problems(add, finding, f"{prefix}.findings[{index}]", leaves)
    _represented_problems(add, current["findings"], leaves.findings, prefix)


class _Leaves(NamedTuple):
    """What the sub-results give the top-level findings: (producer, finding) of every non-failed sub-result, the
    failed and the non-failed producers, and how many selected leaves are missing."""

    findings: list[tuple[str, dict[str, Any]]]
    failed: set[str]
    producers: set[str]
    missing: int


def _rolled_problems(add: Add, finding: dict[str, Any], where: str, leaves: _Leaves) -> None:
    """One top-level finding of a super-skill report: its own agent finding, or a roll-up its producer owns."""
    producer = finding.get("from-sub-skill", "")
    if producer == "agent":
        if leaves.missing:
            add(
                "SUPER_AGENT_REVIEW_INCOMPLETE",
                where,
                "Super-skill self-review is forbidden while selected leaf results are missing.",
            )
        if finding["references"] or not re.match(f"^agent:{SLUG}$", finding["id"]) or finding.get("domain") != "Agent":
            message = "A super-skill agent finding must use an agent: id, Agent domain, and no references."
            add("SUPER_AGENT_FINDING_INVALID", where, message)
        return
    if producer in leaves.failed:
        add(
            "SUPER_FAILED_FINDING_LEAKAGE",
            f"{where}.from-sub-skill",
            f"Finding is attributed to failed sub-skill '{producer}'.",
        )
        return
    if producer not in leaves.producers:
        add("SUPER_PRODUCER_INVALID", f"{where}.from-sub-skill", f"Sub-skill '{producer}' has no non-failed result.")
        return
    eligible = leaves.findings
    rolled_id = finding["id"]
    if not any(name == producer and represents(finding, leaf, name, owner=True) for name, leaf in eligible):
        add(
            "SUPER_FINDING_MISMATCH",
            where,
            f"Rolled-up finding '{rolled_id}' is not owned by a matching finding from '{producer}'.",
        )
        return
    represented = [leaf for name, leaf in eligible if represents(finding, leaf, name)]
    if len({leaf["suggested-code"] for leaf in represented if "suggested-code" in leaf}) > 1:
        message = (
            f"Rolled-up finding '{rolled_id}' represents leaf findings with conflicting suggested-code replacements."
        )
        add("SUPER_FINDING_MISMATCH", where, message)
        return
    severity = max(SEVERITY_RANK[leaf["severity"]] for leaf in represented)
    confidence = max(CONFIDENCE_RANK[leaf["confidence"]] for leaf in represented)
    if (SEVERITY_RANK[finding["severity"]], CONFIDENCE_RANK[finding["confidence"]]) != (severity, confidence):
        message = (
            f"Rolled-up finding '{rolled_id}' must retain the highest severity and confidence justified by its "
            "represented leaf findings."
        )
        add("SUPER_FINDING_MISMATCH", where, message)


def _represented_problems(
    add: Add, findings: list[dict[str, Any]], eligible: list[tuple[str, dict[str, Any]]], prefix: str
) -> None:
    """Top-level findings that should have been merged, and leaf findings no rolled-up finding represents (a
    locationless one needs a distinct locationless roll-up of its own)."""
    for first in range(len(findings)):
        for second in range(first + 1, len(findings)):
            if _overlap(findings[first], findings[second]) and _same_correction(findings[first], findings[second]):
                message = (
                    f"Top-level findings {first} and {second} overlap and prescribe the same correction; they must be "
                    "merged."
                )
                add("SUPER_DUPLICATE_FINDINGS", f"{prefix}.findings[{second}]", message)
    used: set[int] = set()
    for producer, leaf in eligible:
        if "location" in leaf:
            continue
        match = next(
            (
                index
                for index, rolled in enumerate(findings)
                if index not in used and "location" not in rolled and represents(rolled, leaf, producer)
            ),
            None,
        )
        if match is None:
            message = f"No distinct rolled-up finding represents a locationless finding from '{producer}'."
            add("SUPER_FINDING_MISSING", f"{prefix}.findings", message)
        else:
            used.add(match)
    for index, rolled in enumerate(findings):
        if rolled.get("from-sub-skill") != "agent" and "location" not in rolled and index not in used:
            message = "No distinct locationless leaf finding corresponds to this rolled-up finding."
            add("SUPER_FINDING_MISMATCH", f"{prefix}.findings[{index}]", message)
    for producer, leaf in eligible:
        if "location" in leaf and not any(
            rolled.get("from-sub-skill") != "agent" and represents(rolled, leaf, producer) for rolled in findings
        ):
            message = f"No valid rolled-up finding represents a finding from '{producer}' at its source location."
            add("SUPER_FINDING_MISSING", f"{prefix}.findings", message)
