"""JSON Schemas (Draft 2020-12) generated from the models; `python -m bceval.schemas` rewrites them."""

from __future__ import annotations

import sys

from pydantic import BaseModel

from bceval.config import PACKAGE_ROOT
from bceval.corpus.models import DomainIndex, KnowledgeIndex
from bceval.evaluators.registry import BUILT_IN, evaluator, registered
from bceval.experiment.model import ExperimentFile
from bceval.experiment.report_model import ExperimentReport
from bceval.jsonio import dumps, write_atomic
from bceval.scorecard.model import Scorecard

SCHEMA_DIR = PACKAGE_ROOT.parent / "schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# the frame's own artifacts, then each built-in evaluator's (a plugin's schemas are its own business)
MODELS: dict[str, type[BaseModel]] = {
    "knowledge-index": KnowledgeIndex,
    "domain-index": DomainIndex,
    "scorecard": Scorecard,
    "experiment": ExperimentFile,
    "experiment-report": ExperimentReport,
}
for _own in registered():
    if _own.origin == BUILT_IN:
        MODELS.update(evaluator(_own.name).schemas())


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
