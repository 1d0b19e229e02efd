"""The plan and implementation evaluators; the oracle agent answers each case's known-good report (exactly what
the case expects, so every case must pass)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bceval.agents.base import GuidanceCaseInput, NoReport
from bceval.evaluators.base import GUIDANCE, RUN, Command, Evaluator, TaskGenerators, Traits
from bceval.evaluators.guidance import IMPLEMENTATION, IMPLEMENTATION_SKILL_ID, MANIFESTS, PLAN, PLAN_SKILL_ID
from bceval.evaluators.guidance.cli import GUIDANCE_COMMAND
from bceval.evaluators.guidance.evidence import run_git
from bceval.evaluators.guidance.manifest import EMPTY_OUTCOMES, GuidanceCase, GuidanceManifest, load_manifest
from bceval.evaluators.guidance.prepare import goal_of, prepare
from bceval.evaluators.guidance.report_models import ImplementationGuidanceReport, PlanGuidanceReport
from bceval.evaluators.guidance.runner import guidance_inputs, guidance_unit
from bceval.evaluators.guidance.scoring import IMPLEMENTATION_LISTS, case_measures
from bceval.evaluators.guidance.tasks import guidance_tasks, guidance_verb

# A guidance run is a whole run per epoch (it captures its workspaces' evidence afresh, so no two arms share an
# answer); its knowledge is a git checkout; the oracle is its known-good control unless an arm names its agent.
GUIDANCE_TRAITS = Traits(
    unit=RUN,
    default_agent="oracle",
    needs_workspaces=True,
    needs_checkout=True,
    prepares_in_run=True,
    shares_answers=False,
)

ORACLE_CONSTRAINT = "Follow the article's Best Practice and avoid its Anti Pattern."


def _omitted_entry(case: GuidanceCase, path: str) -> dict[str, str]:
    """The consumed entry that exactly matches the current decision; without one the fixture cannot
    pass, and the scorer (not the oracle) says so."""
    key = case.decision_context.get("decision-key", "")
    fingerprint = case.decision_context.get("evidence-fingerprint", "")
    for entry in case.consumed:
        if (entry["path"], entry["decision-key"], entry["evidence-fingerprint"]) == (path, key, fingerprint):
            return dict(entry)
    return {"path": path, "decision-key": key, "evidence-fingerprint": fingerprint, "prior-decision": "none"}


def oracle_report(case: GuidanceCase, knowledge_root: Path, head: str, implementation: bool) -> dict[str, Any]:
    """The known-good report of a case, members in the reference's order of its kind."""
    applicable = case.expected_outcome != "not-applicable"

    def current(name: str) -> Any:
        # A not-applicable case has no decision to copy: placeholders and empty lists are free there.
        if applicable:
            return case.decision_context[name]
        return [] if name in IMPLEMENTATION_LISTS else "unavailable"

    context = dict(case.raw["context"])
    if implementation:
        context.update({name: current(name) for name in IMPLEMENTATION_LISTS})
    else:
        context["unknown"] = list(dict.fromkeys([*context["unknown"], *case.expected_unknown]))
    used_for = current("decision") if implementation else "the change this plan describes"
    knowledge = []
    for path in case.required + case.optional:
        good = path[: -len(".md")] + ".good.al"  # a plan report names the article's good sample when it has one
        samples = [good] if not implementation and (knowledge_root / good).is_file() else []
        entry = {"path": path, "sha": head, "used-for": used_for, "constraints": [ORACLE_CONSTRAINT]}
        knowledge.append({**entry, "sample-paths": samples})
    omitted = [_omitted_entry(case, path) for path in case.expected_omitted]  # none in a plan case
    summary = {"request": goal_of(case.raw["development-plan"])}
    if implementation:
        summary.update({name: current(name) for name in ("phase", "decision", "decision-key", "evidence-fingerprint")})
    else:
        summary["kind"] = case.expected_kind
    summary.update({"candidates": len(knowledge) + len(omitted), "selected": len(knowledge)})
    skill = IMPLEMENTATION_SKILL_ID if implementation else PLAN_SKILL_ID
    report: dict[str, Any] = {"skill": {"id": skill, "version": 1}, "outcome": case.expected_outcome}
    if case.expected_outcome in ("partial", "failed"):
        report["outcome-reason"] = f"The fixture expects {case.expected_outcome} for this case."
    report["summary"] = summary
    if implementation:
        summary["omitted-consumed"] = len(omitted)
        report["pins"] = {
            "knowledge-checkout": head if applicable else "unpinned",
            "development-plan": current("development-plan-pin") if applicable else "unpinned",
            "implementation-evidence": current("implementation-evidence-pin") if applicable else "unpinned",
        }
    report.update({"context": context, "knowledge": knowledge, "validation-considerations": []})
    if implementation:
        report["deduplication"] = {"strategy": "omit-exact-consumed-match", "omitted": omitted}
    gaps = [
        f"{dimension} is not known for this case; which guidance applies depends on it"
        for dimension in context["unknown"]
    ]
    if not gaps and (case.expected_outcome == "partial" or case.requires_unresolved):
        gaps = ["The evaluation is incomplete for this case."]
    return {**report, "suppressed": [], "unresolved": gaps}


@dataclass(frozen=True)
class GuidanceEvaluator(Evaluator):
    name: str  # the manifest kind: PLAN or IMPLEMENTATION
    description: str
    traits: Traits
    question: str = GUIDANCE

    # the protocol's hooks that are the package's own functions as they are
    load = staticmethod(load_manifest)
    prepare = staticmethod(prepare)
    run_unit = staticmethod(guidance_unit)
    unit_inputs = staticmethod(guidance_inputs)

    def cases(self, loaded: GuidanceManifest) -> list[GuidanceCase]:
        return list(loaded.cases)

    def model_id(self, case: GuidanceCase) -> str:
        return case.hashed

    def case_kind(self, case: GuidanceCase) -> str:
        """A case with no expected knowledge (no-knowledge, not-applicable) is a clean control."""
        return "clean" if case.expected_outcome in EMPTY_OUTCOMES else "positive"

    def oracle_reply(self, manifest: GuidanceManifest, question: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        """The oracle agent's answer to a guidance question: the known-good report of its case, if it has one."""
        expected = next((case for case in manifest.cases if case.hashed == question.case_id), None)
        if expected is None:
            return NoReport()
        # Pinned to the view's HEAD like a careful agent; a read-only git query.
        head = run_git(question.knowledge, "rev-parse", "--verify", "HEAD")
        report = oracle_report(expected, question.knowledge, head, self.name == IMPLEMENTATION)
        return {"caseId": expected.hashed, "guidanceReport": report}

    def measures(self, manifest: GuidanceManifest, results_dir: Path | None) -> dict[str, Any] | None:
        """Per case id, the CaseMeasures of its report (outcome agreement, cited recall and precision); empty
        without a finished run."""
        return case_measures(manifest, results_dir) if results_dir is not None else {}

    def commands(self) -> tuple[Command, ...]:
        return (GUIDANCE_COMMAND,)

    def tasks(self, inputs: Any) -> TaskGenerators:
        return guidance_tasks(inputs.settings)

    def schemas(self) -> dict[str, type[BaseModel]]:
        if self.name == IMPLEMENTATION:
            return {"guidance-implementation-report": ImplementationGuidanceReport}
        return {"guidance-plan-report": PlanGuidanceReport}

    def verb(self, verb: str, args: argparse.Namespace) -> int:
        return guidance_verb(self.name, verb, args)


PLAN_EVALUATOR = GuidanceEvaluator(
    PLAN,
    "plan guidance: the knowledge a plan should cite, with read-only evidence",
    replace(GUIDANCE_TRAITS, default_manifest=MANIFESTS[PLAN]),
)
IMPLEMENTATION_EVALUATOR = GuidanceEvaluator(
    IMPLEMENTATION,
    "implementation guidance: the knowledge a change should follow, with read-only evidence",
    replace(GUIDANCE_TRAITS, default_manifest=MANIFESTS[IMPLEMENTATION]),
)
