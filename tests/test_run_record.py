"""run.json, one versioned record from one home (bceval.runs.record): an answered run's record (identity,
selection) and an evaluator's verdict record, written by one writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bceval.errors import BcevalError
from bceval.layout import RUN_RECORD as RECORD_NAME
from bceval.runs.identity import Asking
from bceval.runs.record import RUN_RECORD_VERSION, RunFacts, new_record, run_record, write_record


def facts(tmp_path: Path, **asked: object) -> RunFacts:
    return RunFacts(
        name="r",
        directory=tmp_path / "runs" / "r",
        asked=Asking(**{"adapter": "oracle", **asked}),  # type: ignore[arg-type]
        pinned=True,
        shard=None,
        corpus=str(tmp_path / "corpus"),
        manifest=None,
    )


def test_a_review_record_holds_the_identity_in_order_and_selections_add_up(tmp_path):
    record = new_record(facts(tmp_path), ["b"], None)
    assert list(record) == [
        "schemaVersion",
        "name",
        "adapter",
        "command",
        "model",
        "isolation",
        "sandbox",
        "sandboxAllow",
        "epoch",
        "pinned",
        "modelIsLabelOnly",
        "shard",
        "selection",
        "corpus",
        "manifest",
    ]
    assert new_record(facts(tmp_path), ["a"], record)["selection"] == ["a", "b"]
    assert new_record(facts(tmp_path), ["a"], record, total=2)["selection"] is None  # every case now
    with pytest.raises(BcevalError, match="answered with another epoch"):
        new_record(facts(tmp_path, epoch=2), ["a"], record)


def test_a_live_model_without_the_placeholder_is_only_a_label(tmp_path):
    run = facts(tmp_path, adapter="command", live=True, command="agent", model="m", isolation="view", sandbox="none")
    record = new_record(RunFacts(**{**run.__dict__, "pinned": False}), None, None)
    assert (record["pinned"], record["modelIsLabelOnly"]) == (False, True)


def test_every_run_record_carries_one_version_and_a_verdict_is_written_exclusively(tmp_path):
    # the guidance evaluator's members and their order are pinned by the golden run.json bytes
    plain = run_record("bceval-guidance-run", {"adapter": "oracle", "cases": 2, "passed": False, "problems": ["one"]})
    assert list(plain) == ["kind", "version", "adapter", "cases", "passed", "problems"]
    assert (plain["kind"], plain["version"], plain["cases"]) == ("bceval-guidance-run", 1, 2)
    assert new_record(facts(tmp_path), None, None)["schemaVersion"] == RUN_RECORD_VERSION == 1
    live = run_record("bceval-guidance-run", {"adapter": "command", "agent": {"pinned": False}, "usage": {}})
    assert list(live)[:5] == ["kind", "version", "adapter", "agent", "usage"]

    run = tmp_path / "run"
    assert write_record(run, plain, exclusive=True)
    first = (run / RECORD_NAME).read_bytes()
    assert json.loads(first) == plain and first.endswith(b"]\n}\n")
    assert not write_record(run, live, exclusive=True)  # a run's verdict is never replaced
    assert (run / RECORD_NAME).read_bytes() == first
    assert write_record(run, live) and json.loads((run / RECORD_NAME).read_bytes()) == live  # a review record is
