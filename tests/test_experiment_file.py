"""The experiment file's two checks agree: the plain one bceval reads a file with (no pydantic) and the pydantic
model it falls back to (and the JSON Schema comes from). Whatever the plain checks accept, the model accepts with
the same values; anything else is the model's to convert or refuse."""

from __future__ import annotations

import copy
import datetime
import json
import random
from dataclasses import MISSING, asdict, fields

import pytest
from pydantic import ValidationError

from bceval.experiment import file_schema, model
from bceval.experiment.model import Arm, ArmSettings, ExperimentFile, InvalidExperiment, check_experiment

T, F = True, False

PAIRS = [
    (ArmSettings, file_schema.ArmSettings),
    (Arm, file_schema.Arm),
    (ExperimentFile, file_schema.ExperimentFile),
]

BASE = {
    "name": "compare",
    "epochs": 3,
    "alpha": 0.1,
    "seed": 7,
    "cases": ["security-bad", "performance-good"],
    "k": ["security*"],
    "defaults": {"adapter": "command", "command": "python agent.py", "model": "m-1", "sandboxAllow": ["/opt"]},
    "arms": [
        {"name": "control", "corpus": "../corpus"},
        {"name": "treatment", "ref": "main", "isolation": "view", "requireRead": True, "guidance": "plan"},
    ],
}
# Values of YAML's own types and a few it can give that need converting (or cannot be converted).
POOL = [
    None, True, False, 0, 1, 2, 20, 21, 1000, 1001, -1, 2.0, 2.5, 0.5, 0.05, 1e-9, float("inf"), float("nan"),
    "2", " 3 ", "0.5", "x", "plan", "command", "view", "bwrap", "review", "development", "a name", "ok-name",
    "Name.1", "ok\n", "", [], ["a"], ["a", 1], [None], ("a",), {}, {"name": "z"}, b"bytes",
    datetime.date(2026, 12, 3),
]  # fmt: skip
TOP = [f.name for f in fields(ExperimentFile)]
ARM = [f.name for f in fields(Arm)]


def _default(field):
    if getattr(field, "default_factory", MISSING) not in (MISSING, None):
        return field.default_factory()
    return field.default


def _model_default(info):
    if info.default_factory is not None:
        return info.default_factory()
    return MISSING if info.is_required() else info.default


def test_both_name_the_same_fields_in_the_same_order_with_the_same_defaults():
    for plain, checked in PAIRS:
        assert [f.name for f in fields(plain)] == list(checked.model_fields)
        for f in fields(plain):
            expected = _model_default(checked.model_fields[f.name])
            if isinstance(expected, file_schema.ArmSettings):
                expected = ArmSettings()
            assert _default(f) == expected, f"{plain.__name__}.{f.name}"


def _mutated(rng: random.Random) -> dict:
    document = copy.deepcopy(BASE)
    for _ in range(rng.randint(0, 3)):
        where = rng.random()
        if where < 0.35:
            document[rng.choice([*TOP, "colour"])] = rng.choice(POOL)
        elif where < 0.55:
            document.pop(rng.choice(TOP), None)
        elif where < 0.85:
            arms = document.get("arms")
            target = rng.choice([document.get("defaults"), *(arms if isinstance(arms, list) else [])])
            if isinstance(target, dict):
                target[rng.choice([*ARM, "maxCost"])] = rng.choice(POOL)
        elif isinstance(document.get("arms"), list):
            arms = document["arms"]
            choice = rng.random()
            if choice < 0.3:
                arms.append({"name": rng.choice(["third", "Control", "x y"])})
            elif choice < 0.6 and arms:
                arms.pop()
            else:
                arms.append(rng.choice(POOL))
    return document


def _shown(experiment: ExperimentFile) -> str:
    """Values with their types: 5 and 5.0, True and 1 must not pass for each other."""
    return json.dumps(asdict(experiment), default=repr, sort_keys=True) + repr(
        [(type(getattr(experiment, f.name)).__name__) for f in fields(experiment)]
    )


def test_whatever_the_plain_checks_accept_the_model_accepts_with_the_same_values():
    rng = random.Random(20261203)
    plain_accepted = fell_back = refused = 0
    for _ in range(6000):
        document = _mutated(rng)
        plain = model._plain_experiment(document)
        try:
            checked = file_schema.ExperimentFile.model_validate(copy.deepcopy(document))
        except ValidationError as exc:
            assert plain is None, document
            with pytest.raises(InvalidExperiment) as raised:
                check_experiment(document)
            first = exc.errors()[0]
            assert [raised.value.error[key] for key in ("loc", "type", "msg")] == [
                first[k] for k in ("loc", "type", "msg")
            ]
            refused += 1
            continue
        converted = model._from_model(checked)
        if plain is None:
            fell_back += 1
        else:
            plain_accepted += 1
            assert _shown(plain) == _shown(converted), document
        assert _shown(check_experiment(document)) == _shown(converted)
        assert model.experiment_document(converted) == checked.model_dump(mode="json", exclude_defaults=True)
    # every branch was taken many times: plainly valid, valid once converted, and refused
    assert plain_accepted > 1000 and fell_back > 50 and refused > 1000, (plain_accepted, fell_back, refused)


def test_a_file_that_needs_converting_is_converted_as_the_model_does():
    document = {**copy.deepcopy(BASE), "epochs": "4", "maxCost": 5, "seed": True}
    assert model._plain_experiment(document) is None
    experiment = check_experiment(document)
    assert (experiment.epochs, experiment.maxCost, experiment.seed) == (4, 5.0, 1)
    assert type(experiment.maxCost) is float


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"epochs": 0}, "Input should be greater than or equal to 1"),
        ({"alpha": 1.5}, "Input should be less than 1"),
        ({"name": "ok\n"}, "String should match pattern"),
        ({"arms": [{"name": "a"}, {"name": "A"}]}, "arm name 'a' is used twice"),
        ({"defaults": {"adapter": "gpt"}}, "must be one of baseline, oracle, command, api"),
    ],
)
def test_a_file_the_plain_checks_refuse_gets_the_models_message(change, message):
    with pytest.raises(InvalidExperiment) as raised:
        check_experiment({**copy.deepcopy(BASE), **change})
    assert message in raised.value.error["msg"]


# --- the report: bceval's plain records and the schema's pydantic models ------------------------------------------

REPORT_PAIRS = [
    "ArmUsage",
    "MeasureRate",
    "MeasureMean",
    "GuidanceMeasures",
    "ArmReport",
    "ComparisonReport",
    "CaseLine",
    "Look",
    "Sequential",
    "BudgetReport",
    "ExperimentReport",
]


def test_the_report_records_and_the_schema_models_name_the_same_fields_with_the_same_defaults():
    from bceval.experiment import report_model, report_schema

    for name in REPORT_PAIRS:
        plain, checked = getattr(report_model, name), getattr(report_schema, name)
        assert [f.name for f in fields(plain)] == list(checked.model_fields), name
        for f in fields(plain):
            assert _default(f) == _model_default(checked.model_fields[f.name]), f"{name}.{f.name}"


def test_a_report_as_bceval_writes_it_reads_back_unchanged_through_the_schema_model():
    """The pydantic model (what the report's JSON Schema says) would write exactly the same JSON, numbers' types
    included (5.0, not 5, in a float field), and `publish` reads it back."""
    from test_experiment_verdicts import synthetic_report

    from bceval.experiment.report_model import Look
    from bceval.experiment.report_schema import read_report
    from bceval.jsonio import dumps

    earlier = [Look(reportId="a" * 64, createdAt="2026-01-01T00:00:00Z", epochs=1)]
    control = {f"p{i}": [F, T] for i in range(8)} | {f"c{i}": [T, None] for i in range(8)}
    treatment = {f"p{i}": [T, T] for i in range(8)} | {f"c{i}": [T, F] for i in range(8)}
    kinds = {case: "positive" if case.startswith("p") else "clean" for case in control}
    report = synthetic_report({"a": control, "b": treatment}, kinds, epochs=2, earlier=earlier, looks=3, maxCost=2.0)
    written = report.to_json()
    assert type(written["sequential"]["alphaUsed"]) is float and written["earlierLooks"][0]["epochs"] == 1
    read = read_report(json.loads(dumps(written)), "report.json")
    assert dumps(read.model_dump(mode="json")) == dumps(written)


def test_a_whole_number_in_a_float_field_is_written_as_a_float():
    from bceval.experiment.report_model import ArmUsage, BudgetReport

    assert BudgetReport(maxCost=2, knownCost=0, reached=False, notStarted=0).to_json() == {
        "maxCost": 2.0,
        "knownCost": 0.0,
        "reached": False,
        "notStarted": 0,
    }
    usage = ArmUsage(costKnown=1, costUsd=1, inputTokens=5).to_json()
    assert type(usage["costUsd"]) is float and type(usage["inputTokens"]) is int and type(usage["costKnown"]) is int
