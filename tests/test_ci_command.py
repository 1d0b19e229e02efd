"""`bceval ci`, the one command the repository's GitHub Action (action.yml) runs: on a corpus git checkout with a
base and a head commit it validates, gates, runs the experiment on request and writes the job summary, JUnit XML,
the pull-request comment and the viewer."""

from __future__ import annotations

import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from agents import clean_environment
from guidance_util import commit_all, git

from bceval.cli import main
from bceval.cli.main import _parser
from bceval.layout import OutDir
from bceval.steps.ci import _checks

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "evaluation" / "demo-corpus"
SELECTED = "microsoft/knowledge/error-handling/error-text-in-labels.md"  # a case selects it
UNSELECTED = "microsoft/knowledge/error-handling/testfield-for-required-values.md"  # paired, no case selects it


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A corpus repository (the demo corpus at its top) with its base commit; returns (folder, base sha)."""
    clean_environment(monkeypatch)
    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO, corpus)
    git(corpus, "init", "-q")
    return corpus, commit_all(corpus, "base")


def _head(corpus: Path, article: str) -> str:
    path = corpus / article
    path.write_text(path.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    return commit_all(corpus, "head")


def _ci(corpus: Path, tmp_path: Path, *flags: str) -> int:
    outputs = ["--summary", str(tmp_path / "summary.md"), "--junit", str(tmp_path / "junit.xml")]
    outputs += ["--comment", str(tmp_path / "comment.md")]
    return main(["ci", "--corpus", str(corpus), "--out", str(tmp_path / "out"), *outputs, *flags])


def test_ci_on_a_pull_request_writes_the_summary_junit_comment_and_viewer(checkout, tmp_path, monkeypatch, capsys):
    corpus, base = checkout
    head = _head(corpus, SELECTED)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))  # as the action passes it: once, not per check
    assert _ci(corpus, tmp_path, "--base", base, "--head", head, "--experiment") == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## bceval: PASSED\n") and text.count("## bceval:") == 1
    assert "| Coverage gate | passed |" in text and "| Deterministic gate (the oracle passes) | passed |" in text
    assert f"# Experiment ab-{base}-{head}" in text and "# PASSED: oracle" not in text  # no scorecard of its own
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert comment.startswith("<!-- bceval-ci -->\n## bceval: PASSED\n")
    suites = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures")) for s in suites] == [
        ("bceval ci", "5", "0"),
        ("bceval run oracle", "16", "0"),
    ]
    assert (OutDir(tmp_path / "out").view / "index.html").is_file()
    assert (OutDir(tmp_path / "out").view / "experiments" / f"ab-{base}-{head}" / "index.html").is_file()
    # the next push: the comment body is written anew (one comment, updated), the summary appended to
    assert _ci(corpus, tmp_path, "--base", base, "--head", head) == 0
    assert (tmp_path / "comment.md").read_text(encoding="utf-8").count("<!-- bceval-ci -->") == 1


def test_ci_fails_the_coverage_gate_and_says_which_article(checkout, tmp_path, capsys):
    corpus, base = checkout
    _head(corpus, UNSELECTED)
    assert _ci(corpus, tmp_path, "--base", base) == 1
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert "## bceval: FAILED" in comment and "| Coverage gate | failed |" in comment and UNSELECTED in comment
    ci = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    gate = next(case for case in ci if case.get("name") == "Coverage gate")
    assert gate.find("failure").get("message") == "Coverage gate: failed" and UNSELECTED in gate.find("failure").text


def test_ci_without_a_base_runs_the_checks_of_a_push_and_refuses_an_experiment(checkout, tmp_path, capsys):
    corpus, _ = checkout
    assert _ci(corpus, tmp_path) == 0
    assert "Coverage gate" not in (tmp_path / "comment.md").read_text(encoding="utf-8")
    assert _ci(corpus, tmp_path, "--experiment") == 2
    assert capsys.readouterr().err.strip().endswith("bceval: --experiment needs --base (the control of the experiment)")


def test_the_action_is_thin_and_documented():
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    commands = [
        line.strip()
        for step in action["runs"]["steps"]
        for line in step.get("run", "").splitlines()
        if "bceval " in line and not line.strip().startswith(("echo", "if"))
    ]
    assert commands == ['bceval ci "$@" || code=$?']  # the one command that does the work
    words = shlex.split(commands[0].split("||")[0])
    _parser().parse_args([*words[1:-1], "--base", "main", "--experiment", "--agent-command", "claude -p"])
    documented = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    for name in action["inputs"]:
        assert f"`{name}`" in documented, name
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "uses: " in readme and "bceval@" in readme


def test_the_experiment_takes_an_agent_preset_or_a_command_line(tmp_path):
    def experiment(*flags: str) -> list[str]:
        args = _parser().parse_args(["ci", "--base", "main", "--experiment", *flags])
        return next(check.argv for check in _checks(args, tmp_path) if check.name.startswith("Experiment"))

    assert experiment("--agent", "codex")[-4:] == ["--adapter", "command", "--agent", "codex"]
    assert experiment("--agent-command", "claude -p")[-4:] == ["--adapter", "command", "--command", "claude -p"]
    assert "--adapter" not in experiment()  # the baseline
