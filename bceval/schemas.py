"""JSON Schemas (Draft 2020-12) generated from the models; `python -m bceval.schemas` rewrites them."""

from __future__ import annotations

import sys

from pydantic import BaseModel

from bceval.config import PACKAGE_ROOT
from bceval.corpus.models import DomainIndex, KnowledgeIndex
from bceval.evaluators.development.models import (
    DevelopmentBase,
    DevelopmentChecks,
    DevelopmentEvidence,
    DevelopmentRequest,
    DevelopmentResult,
    DevelopmentRun,
    DevelopmentVerdict,
)
from bceval.evaluators.guidance.report_models import ImplementationGuidanceReport, PlanGuidanceReport
from bceval.evaluators.review.documents import LeafRequest, ResultDocument, ReviewRequest
from bceval.evaluators.review.health.model import HealthReport
from bceval.evaluators.review.manifest_schema import ReviewManifest
from bceval.evaluators.review.scoring import ScoreReport
from bceval.experiment.model import ExperimentFile
from bceval.experiment.report_model import ExperimentReport
from bceval.jsonio import dumps, write_atomic
from bceval.scorecard.model import Scorecard

SCHEMA_DIR = PACKAGE_ROOT.parent / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

MODELS: dict[str, type[BaseModel]] = {
    "review-manifest": ReviewManifest,
    "knowledge-index": KnowledgeIndex,
    "domain-index": DomainIndex,
    "review-request": ReviewRequest,
    "leaf-request": LeafRequest,
    "review-result": ResultDocument,
    "score": ScoreReport,
    "scorecard": Scorecard,
    "health": HealthReport,
    "guidance-plan-report": PlanGuidanceReport,
    "guidance-implementation-report": ImplementationGuidanceReport,
    "experiment": ExperimentFile,
    "experiment-report": ExperimentReport,
    "development-request": DevelopmentRequest,
    "development-result": DevelopmentResult,
    "development-base": DevelopmentBase,
    "development-evidence": DevelopmentEvidence,
    "development-verdict": DevelopmentVerdict,
    "development-run": DevelopmentRun,
    "development-checks": DevelopmentChecks,
}


def schema_of(name: str) -> dict:
    schema = MODELS[name].model_json_schema(by_alias=True)
    return {"$schema": DIALECT, "$id": f"https://bceval.invalid/schemas/{name}.schema.json", **schema}


def render_all() -> dict[str, str]:
    return {f"{name}.schema.json": dumps(schema_of(name)) for name in MODELS}


def main() -> int:
    for file_name, text in render_all().items():
        if write_atomic(SCHEMA_DIR / file_name, text):
            print(f"wrote schemas/{file_name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
