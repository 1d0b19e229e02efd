"""The two guidance manifests (spec §1.4-§1.6) and the workspace map (§2.3); fail-fast, as the reference."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bceval.evaluators.base import model_id
from bceval.evaluators.guidance import IMPLEMENTATION, IMPLEMENTATION_SKILL_PATH, PLAN, GuidanceError
from bceval.evaluators.guidance.paths import (
    DIMENSIONS,
    check_context,
    parse_strict,
    read_limited,
    read_strict,
    require_array,
    require_bool,
    require_object,
    require_string,
    resolve_reference,
    safe_path,
)

KINDS = ("feature", "bug", "refactor", "upgrade", "maintenance")
OUTCOMES = ("completed", "not-applicable", "no-knowledge", "partial", "failed")
EMPTY_OUTCOMES = ("no-knowledge", "not-applicable")
_KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
TOP_LEVEL = ("version", "minimumKnowledgeRecall", "minimumKnowledgePrecision", "skill", "cases")
PLAN_FIELDS = (
    "id",
    "expectedKind",
    "expectedOutcome",
    "development-plan",
    "context",
    "requiredKnowledge",
    "optionalKnowledge",
    "expectedUnknown",
    "requiresUnresolved",
    "requiresMaterialUnresolved",
)
IMPLEMENTATION_FIELDS = (
    "id",
    "expectedOutcome",
    "development-plan",
    "implementation-diff",
    "decision-context",
    "consumed-guidance",
    "context",
    "requiredKnowledge",
    "optionalKnowledge",
    "expectedOmitted",
    "requiresUnresolved",
)
DECISION_TEXT = (
    "phase",
    "decision",
    "decision-key",
    "evidence-fingerprint",
    "development-plan-pin",
    "implementation-evidence-pin",
)
DECISION_LISTS = ("affected-files", "affected-symbols", "changed-tokens", "tests", "acceptance-criteria")
CONSUMED_FIELDS = ("path", "decision-key", "evidence-fingerprint", "prior-decision")


@dataclass(frozen=True)
class GuidanceCase:
    id: str
    hashed: str
    raw: dict[str, Any]  # the case as read; requests copy members from it verbatim
    expected_outcome: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    requires_unresolved: bool
    expected_kind: str = ""
    expected_unknown: tuple[str, ...] = ()
    expected_omitted: tuple[str, ...] = ()
    consumed: tuple[dict[str, str], ...] = ()

    @property
    def decision_context(self) -> dict[str, Any]:
        return self.raw.get("decision-context", {})


@dataclass(frozen=True)
class GuidanceManifest:
    root: Path
    path: Path
    sha256: str  # uppercase hex of the manifest bytes
    kind: str  # PLAN or IMPLEMENTATION
    skill: str
    skill_file: Path
    minimum_recall: float
    minimum_precision: float
    cases: tuple[GuidanceCase, ...]


def _threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise GuidanceError("Manifest thresholds must be numbers between 0 and 1")
    return float(value)


def _enum(value: Any, allowed: tuple[str, ...], label: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise GuidanceError(f"{label} must be one of: {', '.join(allowed)}")
    return value


def _check_decision_context(value: Any, label: str) -> dict[str, Any]:
    context = require_object(value, label)
    if not context:
        return context
    require_object(context, label, DECISION_TEXT[:4] + DECISION_LISTS + DECISION_TEXT[4:])
    for name in DECISION_TEXT:
        require_string(context[name], f"{label}.{name}")
    for name in DECISION_LISTS:
        require_array(context[name], f"{label}.{name}", strings=True)
    return context


def _check_consumed(value: Any, label: str) -> list[dict[str, str]]:
    entries = require_array(value, label)
    seen: set[tuple[str, str, str]] = set()
    for entry in entries:
        require_object(entry, f"{label} entry", CONSUMED_FIELDS)
        for name in CONSUMED_FIELDS:
            require_string(entry[name], f"{label} entry.{name}")
        triple = (entry["path"], entry["decision-key"], entry["evidence-fingerprint"])
        if triple in seen:
            raise GuidanceError(f"{label} repeats a (path, decision-key, evidence-fingerprint) triple")
        seen.add(triple)
    return entries


def _case(root: Path, raw: Any, label: str, implementation: bool) -> GuidanceCase:
    """One case of a plan or an implementation manifest, its rules checked in the reference's order."""
    case = require_object(raw, label, IMPLEMENTATION_FIELDS if implementation else PLAN_FIELDS)
    case_id = require_string(case["id"], f"{label}.id")
    if not _KEBAB.fullmatch(case_id):
        raise GuidanceError(f"{label}.id must be a lower-case kebab-case identifier")
    label = f"Manifest case '{case_id}'"
    kind = "" if implementation else _enum(case["expectedKind"], KINDS, f"{label}.expectedKind")
    outcome = _enum(case["expectedOutcome"], OUTCOMES, f"{label}.expectedOutcome")
    plan = case["development-plan"]
    if isinstance(plan, str):
        require_string(plan, f"{label}.development-plan")
    elif isinstance(plan, dict):
        require_object(plan, f"{label}.development-plan", ("request",))
        require_string(plan["request"], f"{label}.development-plan.request")
    else:
        raise GuidanceError(f"{label}.development-plan must be a non-empty string or a JSON object with a request")
    consumed: list[dict[str, str]] = []
    if implementation:
        diff = case["implementation-diff"]
        if not isinstance(diff, str):
            raise GuidanceError(f"{label}.implementation-diff must be a JSON string (it may be empty)")
        decision = _check_decision_context(case["decision-context"], f"{label}.decision-context")
        consumed = _check_consumed(case["consumed-guidance"], f"{label}.consumed-guidance")
    check_context(case["context"], f"{label}.context")
    required = require_array(case["requiredKnowledge"], f"{label}.requiredKnowledge", strings=True)
    optional = require_array(case["optionalKnowledge"], f"{label}.optionalKnowledge", strings=True)
    duplicates = len({path.lower() for path in required + optional}) != len(required) + len(optional)
    if not implementation and duplicates:
        raise GuidanceError(f"{label}: requiredKnowledge and optionalKnowledge contain duplicate paths")
    listed = "expectedOmitted" if implementation else "expectedUnknown"
    expected = require_array(case[listed], f"{label}.{listed}", strings=True)
    if not implementation and any(item not in DIMENSIONS for item in expected):
        raise GuidanceError(f"{label}.expectedUnknown entry must name a valid dimension")
    requires_unresolved = require_bool(case["requiresUnresolved"], f"{label}.requiresUnresolved")
    if not implementation:
        material = require_bool(case["requiresMaterialUnresolved"], f"{label}.requiresMaterialUnresolved")
        if material and (outcome != "partial" or not requires_unresolved):
            raise GuidanceError(
                f"{label}: requiresMaterialUnresolved needs expectedOutcome partial and requiresUnresolved true"
            )
    if outcome in EMPTY_OUTCOMES and (required or optional):
        raise GuidanceError(f"{label}: expectedOutcome {outcome} requires empty required and optional knowledge")
    if implementation and outcome == "not-applicable" and diff.strip() and decision:
        raise GuidanceError(f"{label}: a not-applicable case must lack its implementation-diff or decision-context")
    references = "requiredKnowledge/optionalKnowledge" + ("/expectedOmitted" if implementation else "")
    for path in dict.fromkeys(required + optional + (expected if implementation else [])):
        resolve_reference(root, path, f"{label}.{references} entry", mode="knowledge")
    return GuidanceCase(
        id=case_id,
        hashed=model_id(case_id),
        raw=case,
        expected_outcome=outcome,
        required=tuple(required),
        optional=tuple(optional),
        requires_unresolved=requires_unresolved,
        expected_kind=kind,
        expected_unknown=() if implementation else tuple(expected),
        expected_omitted=tuple(expected) if implementation else (),
        consumed=tuple(consumed),
    )


def check_manifest(root: Path, manifest_path: Path, data: bytes) -> GuidanceManifest:
    """Validate manifest bytes against the knowledge checkout `root` (both already safe-checked)."""
    document = require_object(parse_strict(data, "Manifest"), "Manifest", TOP_LEVEL)
    version = document["version"]
    if type(version) is not int or version != 1:
        raise GuidanceError("Manifest version must be the integer 1")
    minimum_recall = _threshold(document["minimumKnowledgeRecall"])
    minimum_precision = _threshold(document["minimumKnowledgePrecision"])
    skill_file = resolve_reference(root, document["skill"], "Manifest skill")
    skill = document["skill"]
    kind = IMPLEMENTATION if skill == IMPLEMENTATION_SKILL_PATH else PLAN
    raw_cases = require_array(document["cases"], "Manifest cases", non_empty=True)
    cases: list[GuidanceCase] = []
    for index, raw in enumerate(raw_cases):
        case = _case(root, raw, f"Manifest cases[{index}]", kind == IMPLEMENTATION)
        if any(case.id == seen.id or case.hashed == seen.hashed for seen in cases):
            raise GuidanceError(f"Manifest case '{case.id}': Duplicate fixture or model case identity")
        cases.append(case)
    return GuidanceManifest(
        root=root,
        path=manifest_path,
        sha256=hashlib.sha256(data).hexdigest().upper(),
        kind=kind,
        skill=skill,
        skill_file=skill_file,
        minimum_recall=minimum_recall,
        minimum_precision=minimum_precision,
        cases=tuple(cases),
    )


def load_manifest(root: Path | str, manifest_path: Path | str) -> GuidanceManifest:
    """Safe-check the knowledge checkout and the manifest, read it once, validate it."""
    checked_root = safe_path(root, f"Knowledge checkout {root}", kind="dir")
    checked_manifest, data = read_limited(manifest_path, f"Manifest {manifest_path}", "Manifest")
    return check_manifest(checked_root, checked_manifest, data)


def load_workspace_map(path: Path | str, manifest: GuidanceManifest) -> dict[str, Path]:
    """Manifest id -> absolute, safe workspace directory; exactly one entry per case (§2.3)."""
    document = require_object(read_strict(Path(path), f"Workspace map {path}"), "Workspace map")
    if len(document) != len(manifest.cases):
        missing = [case.id for case in manifest.cases if case.id not in document]
        detail = f": '{missing[0]}' is missing" if missing else " (one entry per case id)"  # a manifest id
        raise GuidanceError(f"Workspace map must bind exactly every manifest case{detail}")
    bound: dict[str, Path] = {}
    for case in manifest.cases:
        label = f"Workspace map value for '{case.id}'"
        value = require_string(document.get(case.id), label)
        if not Path(value).is_absolute():
            raise GuidanceError(f"{label} must be absolute")
        bound[case.id] = safe_path(value, label, kind="dir")
    return bound
