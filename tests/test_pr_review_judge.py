"""The pr-review judge against a scripted chat-completions server (never a real model): `bceval judge calibrate`
gives the numbers the labels imply, and `bceval pr-review score --verdicts judge:MODEL` scores a run, stores its
verdicts and replays them."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from agents import clean_environment
from apiserver import ChatServer
from cliutil import run_cli
from test_pr_review_run import BCBENCH, dataset, requires_bcbench  # noqa: F401 - the fixture

from bceval.evaluators.pr_review.judge import calibration_numbers

PAIR = re.compile(r"Pair (\d+):\nExpected: (.*)\nCandidate: (.*)")


def judging(decide):
    """A scripted judge model: `decide(expected, candidate, call)` per pair, answered as one JSON array."""
    calls = []

    def model(body):
        calls.append(1)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        verdicts = [
            {"pair": int(n), "match": decide(e, c, len(calls)), "reasoning": "scripted"}
            for n, e, c in PAIR.findall(user)
        ]
        return {"content": json.dumps(verdicts)}

    return model


def same_body(expected: str, candidate: str, call: int) -> bool:
    return expected.split(": ", 1)[1] == candidate.split(": ", 1)[1]


@pytest.fixture
def live(monkeypatch):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    monkeypatch.setenv("JUDGE_KEY", "local")


def test_cohen_and_fleiss_kappa_follow_their_definitions() -> None:
    labels = [True] * 13 + [False] * 11
    truth = list(labels)
    flipped = [not labels[0], *labels[1:]]
    numbers = calibration_numbers(labels, [truth, flipped, truth])
    assert (numbers["accuracy"], numbers["cohen_kappa"], numbers["flip_rate"]) == (1.0, 1.0, round(1 / 24, 6))
    assert round(numbers["fleiss_kappa"], 3) == 0.944
    yes = calibration_numbers(labels, [[True] * 24])
    assert (yes["accuracy"], yes["precision"], yes["recall"], yes["cohen_kappa"]) == (0.541667, 0.541667, 1.0, 0.0)


@requires_bcbench
def test_judge_calibrate_reports_what_the_labels_imply(tmp_path, capsys, live) -> None:
    labels = {}
    for line in (BCBENCH / "judge_calibration.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        labels[(item["expected"]["body"], item["candidate"]["body"])] = item["should_match"]

    def truthful(expected: str, candidate: str, call: int) -> bool:
        answer = labels[(expected.split(": ", 1)[1], candidate.split(": ", 1)[1])]
        return (
            not answer
            if call == 2 and candidate.endswith("Use SetLoadFields to limit the columns read for this query.")
            else answer
        )

    with ChatServer({}) as server:
        server.models["truthful"] = judging(truthful)
        server.models["yes"] = judging(lambda *_: True)
        common = (
            "--calibration",
            BCBENCH / "judge_calibration.jsonl",
            "--base-url",
            server.base_url,
            "--api-key-env",
            "JUDGE_KEY",
            "--out",
            tmp_path / "out",
        )
        code, printed, _ = run_cli(capsys, "judge", "calibrate", "--model", "truthful", "--repeats", "3", *common)
        assert code == 0, "\n".join(_)
        assert printed[-1].startswith(
            "Judge truthful: accuracy 1.000 (24 of 24), precision 1.0, recall 1.0, Cohen's kappa 1.0, "
            "flip rate 0.041667"
        )
        code, printed, _ = run_cli(capsys, "judge", "calibrate", "--model", "yes", *common)
        assert code == 1 and "accuracy 0.542 (13 of 24)" in printed[-1] and "Cohen's kappa 0.0" in printed[-1]
    assert json.loads((tmp_path / "out" / "pr-review" / "calibration" / "yes.json").read_text())["fp"] == 11


def test_a_run_scored_by_the_judge_stores_its_verdicts_for_replay(tmp_path, capsys, live, dataset) -> None:  # noqa: F811
    out = tmp_path / "out"
    common = ("--manifest", dataset, "--out", out)
    assert run_cli(capsys, "answer", "--evaluator", "pr-review", *common, "--adapter", "oracle")[0] == 0
    with ChatServer({}) as server:
        server.models["judge"] = judging(same_body)
        endpoint = ("--base-url", server.base_url, "--api-key-env", "JUDGE_KEY")
        code, printed, _ = run_cli(capsys, "pr-review", "score", *common, "--verdicts", "judge:judge", *endpoint)
        assert code == 0 and "(judge:judge/pr-review-judge-1): micro F1 1.000" in printed[-1]
        assert len(server.requests("judge")) == 1  # one call per entry with candidates; none for the silent one
        server.models["never"] = judging(lambda *_: False)
        never = ("--run", "never", "--verdicts", "judge:never", *endpoint)
        shutil.copytree(out / "runs" / "oracle-pr-review", out / "runs" / "never")
        assert run_cli(capsys, "pr-review", "score", *common, *never)[1][-1].count("micro F1 0.000") == 1
    never_score = json.loads((out / "runs" / "never" / "score.json").read_text(encoding="utf-8"))
    assert never_score["sensitivity"] == {
        "provider": "location@5",
        "micro": {**never_score["sensitivity"]["micro"], "f1": 1.0},
    }
    assert run_cli(capsys, "view", "--evaluator", "pr-review", "--out", out)[0] == 0
    pages = "".join(p.read_text(encoding="utf-8") for p in (out / "view" / "pr-review" / "never").glob("*.html"))
    assert "the judge says no match, location@5 (distance 0) the opposite" in pages
    run = out / "runs" / "oracle-pr-review"
    stored = [json.loads(line) for line in (run / "verdicts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(line["match"], line["judge_model"]) for line in stored] == [(True, "judge")]
    score = json.loads((run / "score.json").read_text(encoding="utf-8"))
    assert score["verdicts"]["comparable_with_bcbench"] and score["judge_calibration"] is None
    code, printed, _ = run_cli(capsys, "pr-review", "score", *common, "--verdicts", f"replay:{run / 'verdicts.jsonl'}")
    assert code == 0 and "(replay:judge/pr-review-judge-1): micro F1 1.000" in printed[-1]
    unreachable = run_cli(
        capsys,
        "pr-review",
        "score",
        *common,
        "--verdicts",
        "judge:judge",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "JUDGE_KEY",
    )
    assert unreachable[0] == 2 and unreachable[2][-1].startswith("bceval: judge judge: agent-error: cannot reach")
