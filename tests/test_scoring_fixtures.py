"""The test-of-the-test: known-good result sets pass, every known-bad set fails with exactly its problems."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import REPO

from bceval.cli import main

FIXTURES = REPO / "evaluation" / "fixtures" / "review"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("BCEVAL_CORPUS", "BCEVAL_MANIFEST", "BCEVAL_OUT", "BCEVAL_RESULTS", "BCEVAL_ADAPTER"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("fixtures-out")


def score(capsys, out, results) -> tuple[int, list[str]]:
    code = main(["score", "--corpus", str(REPO / MANIFEST["corpus"]), "--out", str(out), "--results", str(results)])
    lines = capsys.readouterr().out.strip().splitlines()
    # Scoring prepares the requests first (incrementally); keep only the scoring verdict.
    return code, [line for line in lines if not line.startswith(("Prepared ", "Review fixture validation"))]


def snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("name", sorted(MANIFEST["pass"]))
def test_known_good_sets_pass(capsys, out, name):
    code, err = score(capsys, out, FIXTURES / name)
    assert (code, err) == (0, ["Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."])


@pytest.mark.parametrize("name", sorted(MANIFEST["knownBad"]))
def test_known_bad_sets_fail_with_exactly_their_problems(capsys, out, name):
    expected = MANIFEST["knownBad"][name]["problems"]
    results = FIXTURES / "known-bad" / name
    before = snapshot(results)
    code, err = score(capsys, out, results)
    assert code == 1
    assert err == [f"Review evaluation FAILED with {len(expected)} problem(s):"] + [f"  - {p}" for p in expected]
    assert snapshot(results) == before, "scoring must never modify results"


def test_every_known_bad_set_is_recorded_and_differs_from_known_good():
    on_disk = {p.name for p in (FIXTURES / "known-bad").iterdir()}
    assert on_disk == set(MANIFEST["knownBad"]) and len(on_disk) >= 10
    good = snapshot(FIXTURES / "known-good")
    for name in on_disk:
        assert snapshot(FIXTURES / "known-bad" / name) != good, name


def test_score_json_records_every_verdict(capsys, out):
    score(capsys, out, FIXTURES / "known-bad" / "extra-valid-finding")
    report = json.loads((out / "runs/external/score.json").read_text())
    assert report["passed"] is False
    assert (report["positive"], report["clean"]) == ({"passed": 7, "total": 8}, {"passed": 8, "total": 8})
    failing = [case for case in report["cases"] if not case["passed"]]
    assert [(c["id"], c["kind"], c["missing"], c["unexpected"]) for c in failing] == [
        ("events-bad", "positive", [], ["microsoft/knowledge/events/no-commit-in-subscribers.md"])
    ]
    assert len(report["cases"]) == 16
    schema = json.loads((REPO / "schemas" / "score.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
