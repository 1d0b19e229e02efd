"""JSON Schemas of the plan and implementation reports: generated from the models, valid Draft
2020-12, drift-checked against schemas/ once committed, and consistent with the scorer."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from guidance_util import PAIR, PAIR_GOOD, plan_report

from bceval.evaluators.guidance.report_models import ImplementationGuidanceReport, PlanGuidanceReport
from bceval.jsonio import dumps
from bceval.schemas import DIALECT, SCHEMA_DIR

SCHEMAS = {"guidance-plan-report": PlanGuidanceReport, "guidance-implementation-report": ImplementationGuidanceReport}


def generated(name):
    return {"$schema": DIALECT, **SCHEMAS[name].model_json_schema(by_alias=True)}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_generated_schema_is_valid_draft_2020_12(name):
    jsonschema.Draft202012Validator.check_schema(generated(name))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_committed_schema_matches_the_model(name):
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert path.exists(), f"schemas/{name}.schema.json is not committed: run `python -m bceval.schemas`"
    from bceval.schemas import MODELS, schema_of

    assert MODELS.get(name) is SCHEMAS[name]
    assert path.read_text() == dumps(schema_of(name)), "run `python -m bceval.schemas`"


def plan():
    return plan_report()["guidanceReport"]


def implementation():
    return {
        "skill": {"id": "al-implementation-guidance", "version": 1},
        "outcome": "completed",
        "summary": {
            "request": "r",
            "phase": "p",
            "decision": "d",
            "decision-key": "k",
            "evidence-fingerprint": "f",
            "candidates": 2,
            "selected": 1,
            "omitted-consumed": 1,
        },
        "pins": {"knowledge-checkout": "unpinned", "development-plan": "plan:1", "implementation-evidence": "diff:1"},
        "context": {
            "bc-version": "28",
            "technologies": ["al"],
            "countries": ["w1"],
            "application-area": ["all"],
            "unknown": [],
            "affected-files": ["a.al"],
            "affected-symbols": [],
            "changed-tokens": ["field"],
        },
        "knowledge": [
            {"path": PAIR, "sha": "a" * 40, "used-for": "u", "constraints": ["c"], "sample-paths": [PAIR_GOOD]}
        ],
        "validation-considerations": [],
        "deduplication": {
            "strategy": "omit-exact-consumed-match",
            "omitted": [
                {
                    "path": "custom/knowledge/a/b/c.md",
                    "decision-key": "k",
                    "evidence-fingerprint": "f",
                    "prior-decision": "p",
                }
            ],
        },
        "suppressed": [],
        "unresolved": [],
    }


def check(name, report):
    """Both the JSON Schema and the pydantic model must agree on every document."""
    schema_ok = jsonschema.Draft202012Validator(generated(name)).is_valid(report)
    try:
        SCHEMAS[name].model_validate(report)
        model_ok = True
    except ValueError:
        model_ok = False
    assert schema_ok == model_ok, (schema_ok, model_ok)
    return schema_ok


def test_controlled_reports_are_valid():
    assert check("guidance-plan-report", plan())
    assert check("guidance-implementation-report", implementation())
    for outcome, reason in (("no-knowledge", None), ("not-applicable", None), ("failed", "could not read")):
        document = plan_report(outcome=outcome, reason=reason)["guidanceReport"]
        assert check("guidance-plan-report", document)


def mutate(report, change):
    copied = copy.deepcopy(report)
    change(copied)
    return copied


# Everything the scorer rejects in shape, the schema rejects too.
SCORER_REJECTS = [
    lambda r: r.update(outcome="success"),
    lambda r: r.pop("knowledge"),
    lambda r: r["skill"].update(version="1"),
    lambda r: r["skill"].update(id=["x"]),
    lambda r: r["summary"].update(candidates=1.5),
    lambda r: r["summary"].update(selected=-1),
    lambda r: r["context"].update(technologies="al"),
    lambda r: r["knowledge"][0].update(constraints=[]),
    lambda r: r["knowledge"][0].update(constraints=[{"x": 1}]),
    lambda r: r["knowledge"][0].pop("sample-paths"),
    lambda r: r["knowledge"][0].update(sha=None),
    lambda r: r["knowledge"][0].update(sha="abc"),
    lambda r: r.update(unresolved=[{}]),
    lambda r: r.update(suppressed=[{"path": PAIR, "reason": "configuration"}]),
    lambda r: r.update(suppressed=[{"reference": {"path": PAIR}, "reason": "other"}]),
    lambda r: r["knowledge"][0].update(path="../outside.md"),
    lambda r: r.update(**{"outcome-reason": " "}),
    lambda r: r.update(**{"outcome-reason": None}),
    lambda r: r["context"].update(unknown=["region"]),
    lambda r: r.update(outcome="partial"),  # partial without outcome-reason
    lambda r: r.update(outcome="no-knowledge"),  # with knowledge
    lambda r: r.update(knowledge=[]),  # completed without knowledge
]

# Stricter than the scorer (the schema is an optional lint).
ONLY_SCHEMA_REJECTS = [
    lambda r: r.update(extra=1),
    lambda r: r["validation-considerations"][0].update(id="Not Kebab"),
    lambda r: r.update(unresolved=["same", "same"]),
]


@pytest.mark.parametrize("index", range(len(SCORER_REJECTS)))
def test_plan_schema_rejects_what_the_scorer_rejects(index):
    assert not check("guidance-plan-report", mutate(plan(), SCORER_REJECTS[index]))


@pytest.mark.parametrize("index", range(len(SCORER_REJECTS)))
def test_implementation_schema_rejects_what_the_scorer_rejects(index):
    change = SCORER_REJECTS[index]
    report = implementation()
    report["validation-considerations"] = [{"id": "x", "reason": "r", "evidence": "e"}]
    assert not check("guidance-implementation-report", mutate(report, change))


@pytest.mark.parametrize("index", range(len(ONLY_SCHEMA_REJECTS)))
def test_schemas_are_stricter_lints(index):
    assert not check("guidance-plan-report", mutate(plan(), ONLY_SCHEMA_REJECTS[index]))


def test_plan_schema_follows_the_reference_where_the_scorer_is_looser():
    failed = plan_report(outcome="failed", reason="integrity")["guidanceReport"]
    failed["knowledge"] = plan()["knowledge"]
    failed["summary"].update(selected=1, candidates=1)
    assert not check("guidance-plan-report", failed)  # §7.17: only the schema rejects failed + knowledge
    nested = mutate(
        plan(), lambda r: r["knowledge"][0].update(path="custom/knowledge/a/b/c.md", **{"sample-paths": []})
    )
    assert not check("guidance-plan-report", nested)  # one domain folder, as the reference schema
    assert check("guidance-implementation-report", implementation())  # nested omitted path: as the scorer


def test_implementation_pin_is_lower_case_like_git():
    upper = mutate(implementation(), lambda r: r["pins"].update(**{"knowledge-checkout": "A" * 40}))
    assert not check("guidance-implementation-report", upper)
    lower = mutate(implementation(), lambda r: r["pins"].update(**{"knowledge-checkout": "a" * 40}))
    assert check("guidance-implementation-report", lower)


def test_json_schema_cannot_tell_1_0_from_1():
    # JSON Schema compares numbers mathematically, so `version: 1.0` passes the lint; the scorer and
    # the model, which follow the spec's integer rule, reject it.
    report = mutate(plan(), lambda r: r["skill"].update(version=1.0))
    assert jsonschema.Draft202012Validator(generated("guidance-plan-report")).is_valid(report)
    with pytest.raises(ValueError):
        PlanGuidanceReport.model_validate(report)
