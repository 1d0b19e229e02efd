"""The development-fixtures evaluator as a plugin: its unit of work is a whole run."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bceval.evaluators.base import DEVELOPMENT, RUN, CaseMeasures, Command, Evaluator, TaskGenerators, Traits
from bceval.evaluators.development import MANIFEST_RELATIVE
from bceval.evaluators.development.arms import check_arms, development_inputs
from bceval.evaluators.development.cli import DEVELOPMENT_COMMAND, EVIDENCE_COMMAND, FINDINGS_COMMAND, development_verb
from bceval.evaluators.development.manifest import Case, Loaded, load
from bceval.evaluators.development.models import (
    DevelopmentBase,
    DevelopmentChecks,
    DevelopmentEvidence,
    DevelopmentRequest,
    DevelopmentResult,
    DevelopmentRun,
    DevelopmentVerdict,
)
from bceval.evaluators.development.report import knowledge_measures, parse_result
from bceval.evaluators.development.runner import development_unit
from bceval.evaluators.development.tasks import development_tasks
from bceval.evaluators.development.values import member, same
from bceval.jsonio import read_json_or_none
from bceval.layout import DevelopmentRunDir, result_name

DEVELOPMENT_TRAITS = Traits(
    unit=RUN,
    default_agent="command",
    default_manifest=MANIFEST_RELATIVE,
    needs_workspaces=False,  # its starting repositories come from the checks file, or an arm's workspaceMap
    needs_checkout=False,
    prepares_in_run=True,
    shares_answers=False,
)


@dataclass(frozen=True)
class DevelopmentEvaluator(Evaluator):  # every case is positive: it expects a completed change
    name: str = DEVELOPMENT
    description: str = "AL authoring: a coding agent changes a repository, judged by runner-owned gates"
    question: str = DEVELOPMENT
    traits: Traits = DEVELOPMENT_TRAITS

    def load(self, root: Path | str, manifest: Path | str | None = None) -> Loaded:
        return load(Path(root), Path(manifest) if manifest else None)

    def cases(self, loaded: Loaded) -> list[Case]:
        return list(loaded.cases)

    def model_id(self, case: Case) -> str:
        return case.model_id

    def measures(self, loaded: Loaded, results_dir: Path | None) -> dict[str, Any] | None:
        """Per case id: whether the report completed, and its knowledge recall and precision (read, else claimed)."""
        if results_dir is None:
            return {}
        found: dict[str, Any] = {}
        for case in loaded.cases:
            path = results_dir / result_name(case.model_id)
            if not path.is_file():
                continue
            report = member(parse_result(path.read_bytes())[0], "implementationReport")  # unparsable: no report
            if isinstance(report, dict):
                recall, precision = _read_backed(results_dir, case) or knowledge_measures(case, report)
                found[case.id] = CaseMeasures(same(member(report, "outcome"), "completed"), recall, precision)
        return found

    def commands(self) -> tuple[Command, ...]:
        return (DEVELOPMENT_COMMAND, EVIDENCE_COMMAND, FINDINGS_COMMAND)

    def tasks(self, inputs: Any) -> TaskGenerators:
        return development_tasks(inputs.settings)

    def schemas(self) -> dict[str, type[BaseModel]]:
        return {
            "development-request": DevelopmentRequest,
            "development-result": DevelopmentResult,
            "development-base": DevelopmentBase,
            "development-evidence": DevelopmentEvidence,
            "development-verdict": DevelopmentVerdict,
            "development-run": DevelopmentRun,
            "development-checks": DevelopmentChecks,
        }

    def verb(self, verb: str, args: argparse.Namespace) -> int:
        return development_verb(verb, args)

    def check_arms(self, arms: list[Any], settings: Any) -> tuple[int, str] | None:
        return check_arms(arms, settings.model)

    def run_unit(self, plan: Any, arm: Any, run: Any, epoch: int, settings: Any) -> None:
        development_unit(plan, arm, run, epoch)

    def unit_inputs(self, arm: Any) -> dict[str, Any]:
        return development_inputs(arm)


def _read_backed(results_dir: Path, case: Any) -> tuple[float, float] | None:
    """The recall and precision the runner measured from its own read evidence (the api agent), if it did."""
    verdict = read_json_or_none(DevelopmentRunDir(results_dir.parent).case(case.model_id).verdict)
    measures = (verdict.get("measures") if isinstance(verdict, dict) else None) or {}
    if measures.get("knowledgeEvidence") != "read":
        return None
    return measures["knowledgeRecall"], measures["knowledgePrecision"]


DEVELOPMENT_EVALUATOR = DevelopmentEvaluator()
