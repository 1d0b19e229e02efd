"""Issue 47, "First hour, polished": the traps a newcomer still hit, each answered in one clear line."""

from __future__ import annotations

import errno
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from agents import clean_environment
from catalogue import run_bceval
from catalogue_security import LIVE
from cliutil import run_cli
from conftest import DEMO_CORPUS
from guidance_util import git
from test_scoring import THRESHOLDS, case

from bceval.cli import main
from bceval.evaluators.review.scoring import aggregate, failed_header, passed_line, read_result_document


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def test_the_quickstart_verdict_says_the_baseline_floor_is_expected_and_what_to_try_next(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "score", "--no-gate", "--corpus", DEMO_CORPUS, "--out", tmp_path / "out")
    assert code == 0 and any(line.startswith("Review evaluation FAILED with ") for line in out)
    assert out[-2].startswith("The baseline is a lexical floor, not a model: FAILED is expected")
    assert "`bceval view`" in out[-1] and "--adapter oracle" in out[-1] and "live agent" in out[-1]


def test_view_of_a_read_only_output_folder_is_one_line_and_site_writes_elsewhere(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert run_cli(capsys, "score", "--no-gate", "--corpus", DEMO_CORPUS, "--out", out)[0] == 0
    real = tempfile.mkstemp

    def read_only(*args, **kwargs):  # a downloaded CI artifact, a read-only mount
        if Path(kwargs["dir"]).is_relative_to(out):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    code, _, err = run_cli(capsys, "view", "--out", out)
    assert (code, err) == (
        2,
        [f"bceval: {out / 'view'}: cannot write the site (Read-only file system); write it elsewhere with --site DIR"],
    )
    code, printed, _ = run_cli(capsys, "view", "--out", out, "--site", tmp_path / "site")
    assert code == 0 and printed == [str(tmp_path / "site" / "index.html")] and not (out / "view").exists()
    assert "baseline" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_experiment_ab_in_a_fresh_git_checkout_writes_out_gitignore(tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(DEMO_CORPUS, root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    ab = ("experiment", "ab", "--base", "HEAD", "--head", "HEAD", "--adapter", "oracle", "--corpus", root)
    assert run_cli(capsys, *ab, "--out", root / "out")[0] == 0
    assert (root / "out" / ".gitignore").is_file() and git(root, "status", "--porcelain") == ""


def test_a_selection_without_clean_cases_has_no_clean_rate_to_fail():
    bad = case("perf-bad", ["microsoft/knowledge/perf/a.md"])
    found = {"cases": [{"id": bad.modelId, "findings": ["microsoft/knowledge/perf/a.md"]}]}
    report = aggregate([bad], [read_result_document(json.dumps(found).encode(), "result-x.json")], THRESHOLDS)
    assert report.passed and report.problems == []
    assert passed_line(report) == "Review evaluation PASSED: recall=1 (1/1), no clean cases selected."
    good = case("perf-good", [])
    report = aggregate([good], [read_result_document(b'{"cases": []}', "result-x.json")], THRESHOLDS)
    assert "Expected-finding recall" not in " ".join(report.problems)  # a selected clean case without an answer fails
    header = failed_header(report.model_copy(update={"partial": True}))
    assert "no expected-finding cases selected, clean-rate=0 (0/0)" in header


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (bwrap) on PATH")
def test_tmpdir_inside_the_output_folder_under_bwrap_is_one_bceval_line(tmp_path):
    agent = tmp_path / "bin" / "agent"
    agent.parent.mkdir()
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho '{\"findings\": []}'\n", encoding="utf-8")
    agent.chmod(0o755)
    out = tmp_path / "out"
    (out / "tmp").mkdir(parents=True)
    args = ["answer", "--corpus", str(DEMO_CORPUS), "--out", str(out), "--adapter", "command", "--command", str(agent)]
    ran = run_bceval(
        [*args, "--sandbox", "bwrap", "--case", "ui-bad"], tmp_path, env=LIVE | {"TMPDIR": str(out / "tmp")}
    )
    last = ran.stderr.strip().splitlines()[-1]
    assert ran.code == 2 and not ran.traceback, ran.stderr
    assert last.startswith(f"bceval: the read-only path {out / 'tmp'}/bceval-") and last.endswith(
        "set TMPDIR outside it"
    )


def test_a_mistyped_flag_case_id_pattern_or_manifest_member_names_the_closest(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["answer", "--adaptr", "oracle"])
    assert capsys.readouterr().err == (
        "bceval: unrecognized arguments: --adaptr oracle; did you mean --adapter? (see bceval --help)\n"
    )
    with pytest.raises(SystemExit):
        main(["experiment", "ab", "--base", "a", "--head", "b", "--jobz=2"])
    assert "did you mean --jobs?" in capsys.readouterr().err
    demo = ("--corpus", DEMO_CORPUS, "--out", tmp_path / "out")
    for flags, said in (
        (("--case", "perfromance-bad"), "--case perfromance-bad: no case has that manifest or model id"),
        (("-k", "perfromance"), "-k perfromance: the pattern matches no case id or domain"),
    ):
        assert run_cli(capsys, "answer", "--adapter", "oracle", *flags, *demo)[2] == [
            f"bceval: {said}; did you mean {flags[1].replace('fro', 'for')}?"
        ]
    manifest = tmp_path / "m.json"
    manifest.write_text('{"version": 2, "overides": {}}', encoding="utf-8")
    code, out, _ = run_cli(capsys, "validate", *demo, "--manifest", manifest)
    assert code == 1 and "  - The manifest has unknown member 'overides'; did you mean overrides?" in out


def test_score_before_answer_says_to_answer_first(tmp_path, capsys):
    code, _, err = run_cli(capsys, "score", "--adapter", "api", "--corpus", DEMO_CORPUS, "--out", tmp_path / "out")
    results = tmp_path / "out" / "runs" / "api" / "results"
    assert (code, err) == (2, [f"bceval: {results}: results directory does not exist; run bceval answer first"])


def test_a_command_not_on_path_is_reported_before_a_clash_with_the_run(agent, tmp_path, capsys):
    base = ["answer", "--adapter", "command", "--case", "ui-bad", "--corpus", DEMO_CORPUS, "--out", tmp_path / "out"]
    assert run_cli(capsys, *base, "--command", "fake-agent")[0] == 0
    code, _, err = run_cli(capsys, *base, "--command", "claude-code -p")
    assert (code, err) == (
        2,
        ["bceval: --command: 'claude-code' was not found on PATH; install it or give a full path"],
    )


def committed_demo(root: Path) -> Path:
    """The demo corpus in a git repository of its own, one commit."""
    shutil.copytree(DEMO_CORPUS, root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_experiment_ab_takes_a_name(tmp_path, capsys):
    root = committed_demo(tmp_path / "repo")
    ab = ("experiment", "ab", "--base", "HEAD", "--head", "HEAD", "--corpus", root, "--out", tmp_path / "out")
    assert run_cli(capsys, *ab, "--adapter", "oracle", "--name", "oracle-try")[0] == 0
    assert (tmp_path / "out" / "experiments" / "oracle-try" / "report.json").is_file()


def test_experiments_take_the_agent_and_selection_flags_answer_takes(tmp_path, capsys):
    root = committed_demo(tmp_path / "repo")
    out = tmp_path / "out"
    api = ("--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "NO_KEY", "--temperature", "0", "--seed", "1")
    rest = ("--max-cost", "1", "--prices", DEMO_CORPUS / "nope.yaml", "--sandbox-network", "none")
    ab = ("experiment", "ab", "--base", "HEAD", "--head", "HEAD", "--corpus", root, "--out", out, "--adapter", "oracle")
    code, _, err = run_cli(capsys, *ab, *api, *rest, "--case", "ui-bad")
    assert code == 2 and err == [f"bceval: {DEMO_CORPUS / 'nope.yaml'}: price file not found"]
    assert (
        run_cli(capsys, *ab, *api, "--max-cost", "1", "--sandbox-network", "none", "--case", "ui-bad", "-k", "ui-g*")[0]
        == 0
    )
    name = "ab-HEAD-HEAD"
    report = json.loads((out / "experiments" / name / "report.json").read_text(encoding="utf-8"))
    assert report["arms"][0]["answered"] == 2  # ui-bad and ui-good only
    file = tmp_path / "e.yaml"
    file.write_text(f"name: e\narms:\n  - name: a\n    corpus: {root}\n  - name: b\n    corpus: {root}\n")
    run = ("experiment", "run", file, "--out", out, "--adapter", "oracle", *api, "--sandbox-network", "none")
    assert run_cli(capsys, *run, "-k", "security-*")[0] == 0
    report = json.loads((out / "experiments" / "e" / "report.json").read_text(encoding="utf-8"))
    assert report["arms"][0]["answered"] == 2


def test_common_options_are_taken_before_the_subcommand_and_view_takes_corpus(tmp_path, capsys):
    out = tmp_path / "out"
    code, printed, _ = run_cli(capsys, "--corpus", DEMO_CORPUS, f"--out={out}", "-v", "prepare")
    assert code == 0 and printed[0] == f"Prepared 16 neutral fixture(s) in {out / 'review'}."
    assert run_cli(capsys, "--out", out, "view", "--corpus", DEMO_CORPUS)[1] == [str(out / "view" / "index.html")]
    with pytest.raises(SystemExit):
        main(["--out", str(out), "runs", "--corpus", str(DEMO_CORPUS)])  # a command without --corpus refuses it
    assert "unrecognized arguments: --corpus" in capsys.readouterr().err
