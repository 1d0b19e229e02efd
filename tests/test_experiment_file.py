"""The experiment file and the report as pydantic models: what a file converts to or is refused with, and a report
as bceval writes it reading back unchanged."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from bceval.experiment.model import ExperimentFile
from bceval.experiment.report_model import ArmUsage, BudgetReport, Look, read_report
from bceval.jsonio import dumps

T, F = True, False

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


def test_a_file_that_needs_converting_is_converted_as_the_model_does():
    document = {**copy.deepcopy(BASE), "epochs": "4", "maxCost": 5, "seed": True}
    experiment = ExperimentFile.model_validate(document)
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
def test_a_file_the_model_refuses_gets_its_message(change, message):
    with pytest.raises(ValidationError) as raised:
        ExperimentFile.model_validate({**copy.deepcopy(BASE), **change})
    assert message in raised.value.errors()[0]["msg"]


def test_a_report_as_bceval_writes_it_reads_back_unchanged():
    """The report's model writes numbers with their schema's types (5.0, not 5, in a float field), and `publish`
    reads it back."""
    from test_experiment_verdicts import synthetic_report

    earlier = [Look(reportId="a" * 64, createdAt="2026-01-01T00:00:00Z", epochs=1)]
    control = {f"p{i}": [F, T] for i in range(8)} | {f"c{i}": [T, None] for i in range(8)}
    treatment = {f"p{i}": [T, T] for i in range(8)} | {f"c{i}": [T, F] for i in range(8)}
    kinds = {case: "positive" if case.startswith("p") else "clean" for case in control}
    report = synthetic_report({"a": control, "b": treatment}, kinds, epochs=2, earlier=earlier, looks=3, maxCost=2.0)
    written = report.model_dump(mode="json")
    assert type(written["sequential"]["alphaUsed"]) is float and written["earlierLooks"][0]["epochs"] == 1
    read = read_report(json.loads(dumps(written)), "report.json")
    assert dumps(read.model_dump(mode="json")) == dumps(written)


def test_a_whole_number_in_a_float_field_is_written_as_a_float():
    assert BudgetReport(maxCost=2, knownCost=0, reached=False, notStarted=0).model_dump(mode="json") == {
        "maxCost": 2.0,
        "knownCost": 0.0,
        "reached": False,
        "notStarted": 0,
    }
    usage = ArmUsage(costKnown=1, costUsd=1, inputTokens=5).model_dump(mode="json")
    assert type(usage["costUsd"]) is float and type(usage["inputTokens"]) is int and type(usage["costKnown"]) is int
