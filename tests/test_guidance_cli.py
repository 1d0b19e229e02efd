"""`bceval guidance` as a program: only bceval's own one-line messages, exit codes, help, wiring."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest
from guidance_util import (
    SENTINEL,
    Scenario,
    assert_fails,
    assert_passes,
    build_knowledge,
    cli,
    manifest,
    plan_case,
    plan_report,
    remove,
    write,
)

from bceval.evaluators.guidance import cli as guidance_cli
from bceval.evaluators.guidance import scoring


@pytest.fixture
def plain(tmp_path):
    root = build_knowledge(tmp_path / "k", manifest([plan_case()]), use_git=False)
    yield root, root / "evaluation/guidance-fixtures.json"
    remove(tmp_path / "k")


def test_foreign_exceptions_become_one_fixed_line(plain, monkeypatch):
    root, manifest_path = plain

    def explode(*_args, **_kwargs):
        raise RuntimeError(f"{SENTINEL} from a library")

    monkeypatch.setattr(guidance_cli, "load_manifest", explode)
    result = cli("validate", "--root", root, "--manifest", manifest_path)  # cli() asserts the sentinel stays out
    assert_fails(result, "could not be read safely")
    assert result.err.count("\n") == 1


def test_foreign_exceptions_while_scoring_a_case_stay_in_that_case(tmp_path, monkeypatch):
    scenario = Scenario(tmp_path / "run", manifest([plan_case(), plan_case("second-case")]))
    assert_passes(scenario.capture(), "captured")
    scenario.write_result(plan_report())
    scenario.write_result(plan_report("second-case"), "second-case")
    original = scoring.check_report

    def explode_first(report, case, checkout, implementation):
        if case.id == "synthetic-case":
            raise KeyError(SENTINEL)
        return original(report, case, checkout, implementation)

    monkeypatch.setattr(scoring, "check_report", explode_first)
    result = scenario.score()
    assert_fails(result, "synthetic-case: the result could not be read safely")
    assert "second-case" not in result.err
    remove(tmp_path / "run")


def test_prepare_link_scans_the_whole_knowledge_checkout(plain, tmp_path):
    root, manifest_path = plain
    (root / ".git-like").mkdir()
    (root / ".git-like" / "link").symlink_to(tmp_path)
    out = tmp_path / "prepared"
    assert_fails(cli("prepare", "--root", root, "--manifest", manifest_path, "--out", out), "Links, junctions")
    assert not out.exists()


def test_prepare_refuses_hard_links_in_the_knowledge_checkout(plain, tmp_path):
    root, manifest_path = plain
    os.link(write(tmp_path, "outside.txt", "x"), root / "notes.txt")
    out = tmp_path / "prepared"
    assert_fails(cli("prepare", "--root", root, "--manifest", manifest_path, "--out", out), "Links, junctions")
    assert not out.exists()


def test_root_with_a_component_ending_in_a_dot_is_refused(tmp_path):
    root = build_knowledge(tmp_path / "k.", manifest([plan_case()]), use_git=False)
    assert_fails(cli("validate", "--root", root, "--manifest", root / "evaluation/guidance-fixtures.json"), "dot")
    remove(root)


def test_help_lists_the_modes():
    parser = argparse.ArgumentParser(prog="bceval")
    guidance_cli.add_parser(parser.add_subparsers(dest="subcommand"))
    text = parser._subparsers._group_actions[0].choices["guidance"].format_help()
    for word in ("validate", "prepare", "capture", "score", "--workspace-map", "--baseline-sha256", "--results"):
        assert word in text
    args = parser.parse_args(["guidance"])
    assert args.guidance_mode == "validate" and args.subcommand == "guidance"


def test_wired_into_the_bceval_program(plain, tmp_path):
    root, manifest_path = plain
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    command = [sys.executable, "-m", "bceval", "guidance", "--root", str(root), "--manifest", str(manifest_path)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0 and "PASSED: 1 case(s)" in done.stdout, done.stderr
    done = subprocess.run([*command, "score"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"bceval: corpus {root} (--root); manifest {manifest_path}",
        "Development guidance scoring FAILED: capture and score require BaselinePath (--baseline FILE)",
    ]
