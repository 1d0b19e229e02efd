"""Reviewer hand-over: failing reproductions of review findings (each should pass once its finding is fixed)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import FakeAgent, clean_environment
from cliutil import run_cli
from test_experiment import CASES, arm, report_of, repo, agent, write  # noqa: F401

from bceval.cli import main


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def test_shared_answer_whose_owner_failed_is_paid_but_reported_as_shared(repo, agent, tmp_path, capsys):
    corpus, base, head = repo
    out = tmp_path / "out"
    agent.mode("flaky")  # first call of each case fails (exit 1), every later one answers
    args = ["experiment", "ab", "--base", base, "--head", head, "--corpus", corpus, "--out", out]
    args += ["--adapter", "command", "--command", "fake-agent", "--retries", "0"]
    code, lines, err = run_cli(capsys, *args)
    name = f"ab-{base}-{head}"[:100]
    report = report_of(out, name)
    calls = agent.calls()
    b, h = arm(report, "base"), arm(report, "head")
    print(len(calls), {k: b[k] for k in ("answered", "shared", "infrastructureFailures")},
          {k: h[k] for k in ("answered", "shared", "infrastructureFailures")}, h["usage"])
    # every case was asked twice: once by base (failed), once by head (answered, not shared)
    assert len(calls) == 2 * CASES
    assert h["answered"] + b["answered"] == CASES, "head's own paid answers are counted as shared"


def test_guidance_arm_is_not_rerun_when_its_knowledge_changes(tmp_path, capsys):
    import subprocess
    demo = tmp_path / "demo"
    assert main(["guidance", "demo-workspaces", "--out", str(demo)]) == 0
    file = write(
        tmp_path / "g.yaml",
        f"name: g\ndefaults:\n  corpus: {demo / 'knowledge'}\n  evaluator: plan\n"
        f"  workspaceMap: {demo / 'workspace-map.plan.json'}\narms:\n  - name: a\n  - name: b\n",
    )
    out = tmp_path / "out"
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    runs = lambda: sorted((out / "experiments" / "g" / "variants").glob("*/guidance/*/run-*"))
    first = runs()
    # the knowledge checkout changes: the manifest now expects something else for every case
    knowledge = demo / "knowledge"
    manifest = knowledge / "evaluation" / "development-guidance-fixtures.json"
    manifest.write_text(manifest.read_text().replace('"completed"', '"partial"'))
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qam", "edit"], cwd=knowledge, check=True)
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(runs()) > len(first), "knowledge/manifest changed, yet every guidance epoch stayed 'up to date'"


def test_ab_with_a_ref_that_does_not_resolve_writes_nothing(repo, tmp_path, capsys):
    corpus, base, _ = repo
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "experiment", "ab", "--base", "nosuch", "--head", base, "--corpus", corpus, "--out", out)
    assert code == 2 and len(err) == 1
    assert not out.exists(), sorted(str(p.relative_to(out)) for p in out.rglob("*"))


def test_ab_with_a_manifest_outside_the_corpus_is_one_line(repo, tmp_path, capsys, monkeypatch):
    corpus, base, head = repo
    manifest = tmp_path / "m.json"
    manifest.write_text((corpus / "evaluation" / "review-fixtures.json").read_text())
    monkeypatch.setenv("BCEVAL_MANIFEST", str(manifest))
    code, _, err = run_cli(capsys, "experiment", "ab", "--base", base, "--head", head, "--corpus", corpus,
                           "--out", tmp_path / "out")
    assert code == 2 and len(err) == 1


def test_sandbox_allow_that_does_not_exist_is_refused_without_bwrap(agent, tmp_path, capsys):
    code, _, err = run_cli(capsys, "answer", "--adapter", "command", "--command", "fake-agent",
                           "--sandbox-allow", str(tmp_path / "nope"), "--out", tmp_path / "out")
    assert code == 2 and not (tmp_path / "out").exists()
