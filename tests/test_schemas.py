"""Committed schemas match the models, and everything prepare writes validates against them."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import DEMO_CORPUS, REPO
from graphutil import run_graph, settings_for

from bceval.schemas import MODELS, SCHEMA_DIR, render_all


def load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text())


def test_committed_schemas_do_not_drift():
    rendered = render_all()
    committed = {path.name: path.read_text() for path in SCHEMA_DIR.glob("*.schema.json")}
    assert committed == rendered, "schemas/ is stale: run `python -m bceval.schemas` and commit"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schemas_are_valid_draft_2020_12(name):
    schema = load(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def validate(name: str, document) -> None:
    jsonschema.Draft202012Validator(load(name)).validate(document)


def test_prepared_demo_files_validate(tmp_path):
    settings = settings_for(DEMO_CORPUS, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    review = settings.prepare_dir
    validate("review-manifest", json.loads(settings.manifest.read_text()))
    validate("knowledge-index", json.loads((review / "knowledge-index.json").read_text()))
    validate("review-request", json.loads((review / "review-request.json").read_text()))
    for path in review.glob("index-*.json"):
        validate("domain-index", json.loads(path.read_text()))
    requests = list(review.glob("request-*.json"))
    assert len(requests) == 16 + 6
    for path in requests:
        validate("leaf-request", json.loads(path.read_text()))


def test_schemas_reject_what_the_harness_rejects():
    with pytest.raises(jsonschema.ValidationError):
        validate(
            "review-manifest",
            {"version": 2, "selection": "first-paired-al-article", "minimumExpectedRecall": 1.5, "minimumCleanRate": 1},
        )
    with pytest.raises(jsonschema.ValidationError):
        validate("review-result", {"cases": [{"id": "case-0ad1f118"}]})
    validate("review-result", {"cases": [{"id": "case-0ad1f118", "findings": ["a.md", {"id": "b.md", "note": 1}]}]})


def test_schema_dir_is_top_level():
    assert SCHEMA_DIR == REPO / "schemas"
