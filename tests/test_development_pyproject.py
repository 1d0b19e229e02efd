"""[tool.bceval.development] in pyproject.toml (spec §11.6): a project's manifest, checks (a file or inline
tables, with their gate timeouts) and starting repositories; flags win over it; every problem is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DEMO_CORPUS
from test_development_run import AGENT, CHECKS_DIR, RATING, one_case

from bceval.cli import main

DEMO = CHECKS_DIR / "development-demo"


def project(tmp_path: Path, monkeypatch, body: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(body, encoding="utf-8")


def test_inline_checks_timeouts_and_workspaces_come_from_pyproject(tmp_path, monkeypatch, capsys):
    one_case(tmp_path)  # m.json and c.json: only the rating case
    shutil.copytree(CHECKS_DIR / "development-workspaces" / RATING, tmp_path / "apps" / "rating")
    project(
        tmp_path,
        monkeypatch,
        f"""
[tool.bceval.development]
root = "{DEMO_CORPUS}"
manifest = "m.json"
capabilities = "c.json"

[tool.bceval.development.workspaces]
{RATING} = "apps/rating"

[tool.bceval.development.checks.compile]
argv = ["{{python}}", "{DEMO}/compile.py"]
timeout_s = 60
[tool.bceval.development.checks.tests]
argv = ["{{python}}", "-c", "import time; time.sleep(30)"]
timeout_s = 1
[tool.bceval.development.checks.review]
kind = "review"
argv = ["{{python}}", "{DEMO}/review.py"]
timeout_s = 60
""",
    )
    out = tmp_path / "run"
    code = main(["development", "run", "--out", str(out), "--command", f"{AGENT} good"])
    printed = capsys.readouterr().out
    assert code == 1, printed
    folder = next(out.glob("development/case-*"))
    runner = json.loads((folder / "evidence.json").read_text())["runner"]
    assert [e["status"] for e in runner] == ["passed", "failed", "passed"]
    assert runner[1]["details"].startswith("timed out after 1 s")  # the inline gate timeout
    assert json.loads((folder / "base.json").read_text())["source"] == str((tmp_path / "apps" / "rating").resolve())
    assert json.loads((out / "run.json").read_text())["cases"][0]["case"] == RATING


def test_a_checks_file_from_pyproject_and_a_flag_that_wins(tmp_path, monkeypatch, capsys):
    case_args = one_case(tmp_path)
    project(tmp_path, monkeypatch, '[tool.bceval.development]\nmanifest = "missing.json"\nfail_on_overclaim = true\n')
    assert main(["development", "validate", "--root", str(DEMO_CORPUS)]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert main(["development", "validate", "--root", str(DEMO_CORPUS), *case_args]) == 0
    assert capsys.readouterr().out.startswith("Development fixture validation PASSED: 1 cases")
    # checks = a file, fail_on_overclaim and the adapter from pyproject; a flag wins over each
    (tmp_path / "pyproject.toml").write_text(
        '[tool.bceval.development]\nchecks = "gates/checks.yaml"\nfail_on_overclaim = true\nguidance = "both"\n'
    )
    from bceval.cli.main import _parser
    from bceval.config import load_settings
    from bceval.evaluators.development.cli import with_pyproject
    from bceval.evaluators.development.runner import RunOptions

    def options(*flags: str) -> RunOptions:
        args = _parser().parse_args(["development", "run", "--out", "x", *flags])
        found = with_pyproject(args)
        return RunOptions.from_args(args, DEMO_CORPUS, load_settings(cwd=tmp_path), found)

    chosen = options()
    assert chosen.checks == tmp_path / "gates" / "checks.yaml" and chosen.inline_checks is None
    assert chosen.fail_on_overclaim and chosen.guidance == "both"
    assert options("--checks", "other.yaml", "--guidance", "none").checks == Path("other.yaml")
    assert options("--guidance", "none").guidance == "none"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("colour = 'red'", "[tool.bceval.development] has unknown key 'colour'"),
        ("toolchain = 'unavailable'", "toolchain applies to inline checks only"),
        ("guidance = 'lots'", "guidance must be one of none, plan, implementation, both"),
        ("fail_on_overclaim = 'yes'", "fail_on_overclaim must be true or false"),
        ("workspaces = 'apps'", "workspaces must be a table"),
        ("checks = {compile = {argv = []}}", "check 'compile' needs argv, a non-empty list of strings"),
        ("checks = {lint = {argv = ['x']}}", "unsupported check 'lint'"),
    ],
)
def test_bad_pyproject_settings_are_one_line_naming_the_file(tmp_path, monkeypatch, capsys, body, message):
    project(tmp_path, monkeypatch, f"[tool.bceval.development]\n{body}\n")
    case_args = one_case(tmp_path)
    code = main(["development", "run", "--root", str(DEMO_CORPUS), "--out", str(tmp_path / "run"), *case_args])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "pyproject.toml" in err and message in err, err
    assert not (tmp_path / "run").exists()


def test_the_development_table_does_not_disturb_the_other_settings(tmp_path, monkeypatch):
    from bceval.config import load_settings

    project(tmp_path, monkeypatch, '[tool.bceval]\nmodel = "m1"\n[tool.bceval.development]\nadapter = "api"\n')
    assert load_settings(cwd=tmp_path).model == "m1"
