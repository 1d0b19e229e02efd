"""Preparation (spec §2): the knowledge index and one answer-free request per case, computed in memory first so
a failure writes nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bceval.corpus.index import knowledge_index_text
from bceval.errors import BcevalError
from bceval.evaluators.guidance import IMPLEMENTATION, IMPLEMENTATION_SKILL_ID, PLAN_SKILL_ID, GuidanceError
from bceval.evaluators.guidance.manifest import GuidanceCase, GuidanceManifest
from bceval.evaluators.guidance.paths import DIMENSIONS, safe_path, scan_links
from bceval.jsonio import create_exclusive, decode_utf8, dumps, read_regular_bytes, write_atomic
from bceval.layout import KNOWLEDGE_INDEX, GuidancePrepareDir, case_request_name

PLAN_INPUTS = ["development-plan", "repository"]
IMPLEMENTATION_PASSTHROUGH = ["implementation-diff", "decision-context", "consumed-guidance"]
OUTCOME_TEXT = "completed | not-applicable | no-knowledge | partial | failed"

_PROTOCOL = (
    "Read-only {what} guidance run. Using the {context}, select the BCQuality knowledge that constrains it: "
    "follow skillInstructions, start from the knowledge index at knowledgeIndex and open the articles you cite "
    "under knowledgeRoot. Inspect the runner-assigned repository read-only: do not edit, stage, commit, create "
    "or delete anything in it or in the knowledge checkout, and leave no scratch files there. Return one JSON "
    "object with only caseId and guidanceReport, shaped like resultSchema. The runner captures the read-only "
    "evidence itself; write no other artifacts."
)


_IMPLEMENTATION_CONTEXT = (
    "supplied development context (plan, implementation diff, decision context and consumed guidance)"
)


_ARTICLE = "<layer>/knowledge/<domain>/<article>.md"
_CONTEXT = {"bc-version": "28", "technologies": ["al"], "countries": ["w1"], "application-area": ["all"], "unknown": []}
_KNOWLEDGE = {
    "path": _ARTICLE,
    "sha": "optional: the full commit id of the knowledge checkout HEAD",
    "used-for": "the concrete decision or affected surface this article constrains",
    "constraints": ["a short normative constraint taken from the article"],
    "sample-paths": [],
}
_CONSIDERATION = {"id": "kebab-case-id", "reason": "why evidence is needed", "evidence": "the evidence to obtain"}
_OUTCOME = {"outcome": OUTCOME_TEXT, "outcome-reason": "required for partial and failed: what is missing or went wrong"}
_REQUEST = "the intended change, in one sentence"


# The illustrative resultSchema of §2.4 for each kind; placeholders are prose, not values to copy.
_PLAN_TEMPLATE = {
    "skill": {"id": PLAN_SKILL_ID, "version": 1},
    **_OUTCOME,
    "summary": {
        "request": _REQUEST,
        "kind": "feature | bug | refactor | upgrade | maintenance",
        "candidates": 0,
        "selected": 0,
    },
    "context": _CONTEXT,
    "knowledge": [_KNOWLEDGE],
    "validation-considerations": [_CONSIDERATION],
    "suppressed": [{"reference": {"path": _ARTICLE}, "reason": "layer-precedence | configuration"}],
    "unresolved": ["each unknown dimension or material gap, named"],
}


_FROM_DECISION = ["from decision-context"]
_IMPLEMENTATION_TEMPLATE = {
    "skill": {"id": IMPLEMENTATION_SKILL_ID, "version": 1},
    **_OUTCOME,
    "summary": {
        "request": _REQUEST,
        "phase": "the current phase from decision-context",
        "decision": "the current decision from decision-context",
        "decision-key": "the decision-key from decision-context",
        "evidence-fingerprint": "the evidence-fingerprint from decision-context",
        "candidates": 0,
        "selected": 0,
        "omitted-consumed": 0,
    },
    "pins": {
        "knowledge-checkout": "unpinned, or the full commit id of the knowledge checkout HEAD",
        "development-plan": "development-plan-pin from decision-context",
        "implementation-evidence": "implementation-evidence-pin from decision-context",
    },
    "context": {
        **_CONTEXT,
        "affected-files": _FROM_DECISION,
        "affected-symbols": _FROM_DECISION,
        "changed-tokens": _FROM_DECISION,
    },
    "knowledge": [_KNOWLEDGE],
    "validation-considerations": [_CONSIDERATION],
    "deduplication": {
        "strategy": "omit-exact-consumed-match",
        "omitted": [
            {
                "path": "a consumed article whose path, decision-key and evidence-fingerprint all still match",
                "decision-key": "the current decision-key",
                "evidence-fingerprint": "the current evidence-fingerprint",
                "prior-decision": "the consumed prior decision",
            }
        ],
    },
    "suppressed": [],
    "unresolved": [],
}


def goal_of(plan: Any) -> str:
    """An object plan's request; a string plan is the goal as a whole, even serialized JSON."""
    return plan["request"] if isinstance(plan, dict) else plan


def request_document(
    manifest: GuidanceManifest, case: GuidanceCase, skill_text: str, index_path: Path, repository: Path | None
) -> dict[str, Any]:
    """One request, members in the reference's order; nothing that reveals the expected answer."""
    raw = case.raw
    context = raw["context"]
    implementation = manifest.kind == IMPLEMENTATION
    template = _IMPLEMENTATION_TEMPLATE if implementation else _PLAN_TEMPLATE
    document: dict[str, Any] = {
        "protocol": _PROTOCOL.format(
            what=manifest.kind, context=_IMPLEMENTATION_CONTEXT if implementation else "supplied development plan"
        ),
        "caseId": case.hashed,
        "skill": manifest.skill,
        "skillInstructions": skill_text,
        "knowledgeIndex": str(index_path),
        "knowledgeRoot": str(manifest.root),
        "task-context": {
            "goal": goal_of(raw["development-plan"]),
            "inputs-available": PLAN_INPUTS + (IMPLEMENTATION_PASSTHROUGH if implementation else []),
            **{name: context[name] for name in DIMENSIONS},
        },
        "development-plan": raw["development-plan"],
        "resultSchema": {"caseId": case.hashed, "guidanceReport": template},
    }
    if implementation:
        for name in IMPLEMENTATION_PASSTHROUGH:  # verbatim: "" and {} stay empty
            document[name] = raw[name]
    if repository is not None:
        document["repository"] = str(repository)
    return document


def prepared_files(manifest: GuidanceManifest, workspaces: dict[str, Path] | None, directory: Path) -> dict[str, str]:
    """File name -> text of everything a preparation writes, computed before anything is written."""
    scan_links(manifest.root, "Knowledge checkout")  # the index walks the whole checkout
    index_path = GuidancePrepareDir(directory).knowledge_index
    files = {KNOWLEDGE_INDEX: knowledge_index_text(manifest.root, GuidanceError)}
    try:
        instructions = decode_utf8(read_regular_bytes(manifest.skill_file), "skill")
    except (BcevalError, OSError):
        raise GuidanceError("Manifest skill must be a readable UTF-8 text file") from None
    for case in manifest.cases:
        repository = workspaces[case.id] if workspaces is not None else None
        files[case_request_name(case.hashed)] = dumps(
            request_document(manifest, case, instructions, index_path, repository)
        )
    return files


def prepare(manifest: GuidanceManifest, workspaces: dict[str, Path] | None, out: Path, replace: bool = False) -> Path:
    """Write the prepare directory; it must be new or empty (hidden entries count) and nothing is ever
    overwritten. `replace` (the graph's): it may hold only files an earlier preparation wrote; they are rewritten
    atomically and requests of vanished cases are removed. Anything else is refused."""
    directory = safe_path(out, "Prepare directory", missing_ok=True)
    if os.path.lexists(directory):
        if not directory.is_dir() or (not replace and any(directory.iterdir())):
            raise GuidanceError("Prepare directory must be new or empty")
        if replace and any(not GuidancePrepareDir.owns(p.name) for p in directory.iterdir()):
            raise GuidanceError("Prepare directory must be new or empty (or hold only an earlier preparation)")
    files = prepared_files(manifest, workspaces, directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        if replace:
            write_atomic(directory / name, text)
        elif not create_exclusive(directory / name, text.encode("utf-8")):
            raise GuidanceError("Prepare directory must be new or empty: a request file appeared during preparation")
    for stale in sorted(directory.iterdir()) if replace else ():
        if stale.name not in files and stale.is_file() and not stale.is_symlink():
            stale.unlink()  # a request of a case the manifest no longer has; we wrote it
    return directory
