"""Every built-in evaluator through the uniform verbs: `bceval prepare|answer|score|publish --evaluator NAME`."""

from __future__ import annotations

import pytest
from cliutil import run_cli
from conftest import DEMO_CORPUS


@pytest.mark.parametrize("kind", ["plan", "implementation"])
def test_a_guidance_evaluator_prepares_answers_and_scores_through_the_uniform_verbs(tmp_path, capsys, kind):
    out = tmp_path / "out"
    common = ("--evaluator", kind, "--corpus", DEMO_CORPUS, "--out", out)
    code, printed = run_cli(capsys, "prepare", *common)[:2]
    assert code == 0 and printed[-1].endswith(f"prepared in {out / 'guidance' / kind}")
    code, printed = run_cli(capsys, "answer", *common)[:2]  # the evaluator's default agent: the oracle
    assert code == 0 and printed[-1].endswith(f"PASSED: 4 case(s) in {out / 'guidance-runs' / kind / 'run-0001'}")
    code, printed = run_cli(capsys, "score", *common)[:2]
    assert code == 0 and printed == [f"Development guidance run PASSED: {out / 'guidance-runs' / kind / 'run-0001'}"]


def test_a_guidance_evaluator_refuses_an_agent_that_cannot_answer_it_and_publishing(tmp_path, capsys):
    common = ("--evaluator", "plan", "--corpus", DEMO_CORPUS, "--out", tmp_path / "out")
    code, _, error = run_cli(capsys, "answer", *common, "--adapter", "baseline")
    assert code == 2 and error == ["bceval: the plan evaluator answers with oracle or command or api, not baseline"]
    code, _, error = run_cli(capsys, "publish", *common)
    assert code == 2 and "the scorecard page holds review runs and experiments" in error[-1]
    code, _, error = run_cli(capsys, "score", *common)
    assert code == 2 and "no plan run yet" in error[-1]


def test_the_development_evaluator_runs_the_demo_through_the_uniform_verbs(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("BCEVAL_COMMAND", raising=False)
    out = tmp_path / "out"
    common = ("--evaluator", "development", "--corpus", DEMO_CORPUS, "--out", out)
    assert run_cli(capsys, "prepare", *common)[0] == 0
    assert (out / "development").is_dir()
    code, printed = run_cli(capsys, "answer", *common)[:2]  # the demo's scripted agent: its known-good patch
    assert code == 0 and printed[-1].startswith("Development run PASSED: 2 passed")
    code, printed = run_cli(capsys, "score", *common)[:2]
    assert code == 0 and printed == [f"Development run PASSED: {out / 'development-runs' / 'run-0001'}"]
