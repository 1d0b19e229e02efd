"""Guidance answer adapters: what the runner asks once per case, after capture and before scoring.

The runner hands an adapter a GuidanceCaseInput and nothing else: the prepared request file, the
hashed case id, the runner-bound workspace (an agent's working directory), the knowledge view it
may read, and the environment a process-based adapter passes on. Manifest expectations are not in
it. The answer is the result document (`{caseId, guidanceReport}`) or a NoReport.

`oracle` is the known-good control: built from the manifest on purpose (like the review oracle),
it reports exactly what each case expects, so every case must pass scoring. The live `command`
adapter (live.py) runs an agent once per case with `workspace` as its working directory and the prompt
(the report contract and the request) on stdin.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bceval.guidance import IMPLEMENTATION, IMPLEMENTATION_SKILL_ID, PLAN_SKILL_ID, GuidanceError
from bceval.guidance.evidence import run_git
from bceval.guidance.manifest import GuidanceCase, GuidanceManifest
from bceval.guidance.prepare import goal_of

NO_REPORT_KINDS = (
    "no-answer",
    "not-an-object",
    "not-json",
    "adapter-error",
    # a live agent's last failed attempt, in bceval's words
    "timeout",
    "crash",
    "invalid-output",
    "spawn-error",
    "too-large",
    "agent-error",
)
ORACLE_CONSTRAINT = "Follow the article's Best Practice and avoid its Anti Pattern."


@dataclass(frozen=True)
class GuidanceCaseInput:
    """Everything an adapter may use for one case; the manifest expectations are not in here."""

    case_id: str  # the hashed id, as in the request
    request_path: Path  # <run>/requests/request-<caseId>.json
    workspace: Path  # the runner-bound workspace: the agent's working directory, read-only
    knowledge: Path  # the knowledge view the agent reads (today: the knowledge checkout itself)
    environment: Mapping[str, str]  # what a process-based adapter gives the agent; never the digest

    def request(self) -> dict[str, Any]:
        return json.loads(self.request_path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class NoReport:
    """The adapter has no report for the case. `kind` is one of NO_REPORT_KINDS: bceval's words,
    safe to print, never the agent's output."""

    kind: str = "no-answer"


class GuidanceAdapter(Protocol):
    name: str

    def answer(self, case: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        """The result document for the case, or why there is none."""
        ...


def _unresolved(case: GuidanceCase, unknown: list[str]) -> list[str]:
    gaps = [f"{dimension} is not known for this case; which guidance applies depends on it" for dimension in unknown]
    if not gaps and (case.expected_outcome == "partial" or case.requires_unresolved):
        gaps = ["The evaluation is incomplete for this case."]
    return gaps


def _knowledge(
    case: GuidanceCase, knowledge_root: Path, head: str, used_for: str, samples: bool
) -> list[dict[str, Any]]:
    entries = []
    for path in case.required + case.optional:
        good = path[: -len(".md")] + ".good.al"
        entries.append(
            {
                "path": path,
                "sha": head,
                "used-for": used_for,
                "constraints": [ORACLE_CONSTRAINT],
                "sample-paths": [good] if samples and (knowledge_root / good).is_file() else [],
            }
        )
    return entries


def _outcome(case: GuidanceCase) -> dict[str, Any]:
    outcome: dict[str, Any] = {"outcome": case.expected_outcome}
    if case.expected_outcome in ("partial", "failed"):
        outcome["outcome-reason"] = f"The fixture expects {case.expected_outcome} for this case."
    return outcome


def oracle_plan_report(case: GuidanceCase, knowledge_root: Path, head: str) -> dict[str, Any]:
    context = dict(case.raw["context"])
    unknown = list(dict.fromkeys([*context["unknown"], *case.expected_unknown]))
    context["unknown"] = unknown
    knowledge = _knowledge(case, knowledge_root, head, "the change this plan describes", samples=True)
    return {
        "skill": {"id": PLAN_SKILL_ID, "version": 1},
        **_outcome(case),
        "summary": {
            "request": goal_of(case.raw["development-plan"]),
            "kind": case.expected_kind,
            "candidates": len(knowledge),
            "selected": len(knowledge),
        },
        "context": context,
        "knowledge": knowledge,
        "validation-considerations": [],
        "suppressed": [],
        "unresolved": _unresolved(case, unknown),
    }


def _omitted_entry(case: GuidanceCase, path: str) -> dict[str, str]:
    """The consumed entry that exactly matches the current decision; without one the fixture cannot
    pass, and the scorer (not the oracle) says so."""
    key = case.decision_context.get("decision-key", "")
    fingerprint = case.decision_context.get("evidence-fingerprint", "")
    for entry in case.consumed:
        if (entry["path"], entry["decision-key"], entry["evidence-fingerprint"]) == (path, key, fingerprint):
            return dict(entry)
    return {"path": path, "decision-key": key, "evidence-fingerprint": fingerprint, "prior-decision": "none"}


def oracle_implementation_report(case: GuidanceCase, knowledge_root: Path, head: str) -> dict[str, Any]:
    decision = case.decision_context
    applicable = case.expected_outcome != "not-applicable"

    def current(name: str) -> Any:
        # A not-applicable case has no decision to copy: placeholders and empty lists are free there.
        if applicable:
            return decision[name]
        return [] if name in ("affected-files", "affected-symbols", "changed-tokens") else "unavailable"

    knowledge = _knowledge(case, knowledge_root, head, current("decision"), samples=False)
    omitted = [_omitted_entry(case, path) for path in case.expected_omitted]
    context = dict(case.raw["context"])
    context.update({name: current(name) for name in ("affected-files", "affected-symbols", "changed-tokens")})
    return {
        "skill": {"id": IMPLEMENTATION_SKILL_ID, "version": 1},
        **_outcome(case),
        "summary": {
            "request": goal_of(case.raw["development-plan"]),
            "phase": current("phase"),
            "decision": current("decision"),
            "decision-key": current("decision-key"),
            "evidence-fingerprint": current("evidence-fingerprint"),
            "candidates": len(knowledge) + len(omitted),
            "selected": len(knowledge),
            "omitted-consumed": len(omitted),
        },
        "pins": {
            "knowledge-checkout": head if applicable else "unpinned",
            "development-plan": current("development-plan-pin") if applicable else "unpinned",
            "implementation-evidence": current("implementation-evidence-pin") if applicable else "unpinned",
        },
        "context": context,
        "knowledge": knowledge,
        "validation-considerations": [],
        "deduplication": {"strategy": "omit-exact-consumed-match", "omitted": omitted},
        "suppressed": [],
        "unresolved": _unresolved(case, list(context["unknown"])),
    }


class OracleGuidanceAdapter:
    """The known-good control: answers exactly what the manifest expects."""

    name = "oracle"

    def __init__(self, manifest: GuidanceManifest) -> None:
        self._kind = manifest.kind
        self._cases = {case.hashed: case for case in manifest.cases}

    def answer(self, case: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        expected = self._cases.get(case.case_id)
        if expected is None:
            return NoReport()
        # Pinned to the view's HEAD like a careful agent; a read-only git query.
        head = run_git(case.knowledge, "rev-parse", "--verify", "HEAD")
        build = oracle_implementation_report if self._kind == IMPLEMENTATION else oracle_plan_report
        return {"caseId": case.case_id, "guidanceReport": build(expected, case.knowledge, head)}


ADAPTERS = ("oracle", "command")


def make_adapter(
    name: str, manifest: GuidanceManifest, agent: Any = None, run_dir: Path | None = None, hidden: Any = None
) -> GuidanceAdapter:
    """`agent` (bceval.agents.process.AgentSettings) and the run directory are the command adapter's."""
    if name == "oracle":
        return OracleGuidanceAdapter(manifest)
    if name == "command":
        from bceval.agents.guidance_command import GuidanceCommandAdapter

        if agent is None or run_dir is None:
            raise GuidanceError("the command adapter needs --command (the agent command line)")
        return GuidanceCommandAdapter(agent, manifest, Path(run_dir), hidden or {})
    raise GuidanceError(f"unknown guidance adapter '{name}' (available: {', '.join(ADAPTERS)})")
