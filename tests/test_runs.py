"""Runs: named answer+score cycles that own their folder, their record, their selection and their listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS

from bceval.evaluators.base import model_id

CASES = 16


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def demo(out: Path) -> list[str]:
    return ["--corpus", str(DEMO_CORPUS), "--out", str(out)]


def files(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file below a folder with its modification time and bytes: a run that touched it would show."""
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_two_runs_in_one_output_folder_never_touch_each_others_files(agent, tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(capsys, "score", "--adapter", "oracle", *demo(out))[0] == 0
    oracle = files(out / "runs" / "oracle")
    assert {"run.json", "score.json", "scorecard.json", "scorecard.md", "scorecard.html"} <= set(oracle)
    assert sum(name.startswith("results/result-case-") for name in oracle) == CASES

    assert run_cli(capsys, "score", "--adapter", "baseline", "--no-gate", *demo(out))[0] == 0
    code, lines, err = run_cli(
        capsys,
        "answer",
        "--adapter",
        "command",
        "--command",
        "fake-agent --model {model}",
        "--model",
        "m-1",
        "--jobs",
        "4",
        *demo(out),
    )
    assert code == 0, lines + err
    assert run_cli(capsys, "score", "--adapter", "command", "--model", "m-1", *demo(out))[0] == 0
    assert run_cli(capsys, "answer", "--adapter", "oracle", "--run", "oracle-again", *demo(out))[0] == 0
    assert run_cli(capsys, "score", "--run", "oracle-again", *demo(out))[0] == 0  # scored as it was answered
    assert files(out / "runs" / "oracle") == oracle  # not one byte or mtime of the first run changed
    assert sorted(p.name for p in (out / "runs").iterdir()) == ["baseline", "command-m-1", "oracle", "oracle-again"]
    assert not (out / "score.json").exists() and not (out / "scorecard.json").exists()

    code, lines, _ = run_cli(capsys, "runs", "--out", str(out))
    assert code == 0
    table = {line.split(" | ")[0].strip("| "): line for line in lines[2:]}
    assert sorted(table) == ["baseline", "command-m-1", "oracle", "oracle-again"]
    assert "| oracle | oracle | manifest-expectations | 16 | 1 (8/8) | 1 (8/8) | passed | unknown |" in table["oracle"]
    assert "| baseline | baseline |" in table["baseline"] and "| failed |" in table["baseline"]
    assert "| command-m-1 | command | m-1 | 16 |" in table["command-m-1"]


def test_runs_before_any_run_says_so(tmp_path, capsys):
    code, lines, _ = run_cli(capsys, "runs", "--out", str(tmp_path / "out"))
    assert code == 0 and lines == [
        f"No runs in {tmp_path / 'out' / 'runs'} yet: `bceval answer` or `bceval score` makes one."
    ]


def test_compare_takes_run_names_and_scorecard_paths(tmp_path, capsys):
    out = tmp_path / "out"
    assert run_cli(capsys, "score", "--adapter", "oracle", *demo(out))[0] == 0
    assert run_cli(capsys, "score", "--adapter", "baseline", "--no-gate", *demo(out))[0] == 0
    code, lines, _ = run_cli(capsys, "compare", "baseline", "oracle", "--out", str(out))
    assert code == 0 and any(line.startswith("- Fixed 8, regressed 0") for line in lines)
    path = str(out / "runs" / "oracle" / "scorecard.json")
    code, same, _ = run_cli(capsys, "compare", "baseline", path, "--out", str(out))
    assert code == 0 and same == lines
    code, lines, err = run_cli(capsys, "compare", "baseline", "nosuch", "--out", str(out))
    assert (
        code == 2
        and lines == []
        and err == [f"bceval: nosuch: no run of that name in {out / 'runs'}; the runs there: baseline, oracle"]
    )


# --- case selection ------------------------------------------------------------------------------------------------


def test_case_and_k_select_the_cases_a_run_answers_and_a_partial_run_never_passes(tmp_path, capsys):
    out = tmp_path / "out"
    code, lines, err = run_cli(
        capsys,
        "answer",
        "--adapter",
        "oracle",
        "--run",
        "some",
        "--case",
        "events-bad",
        "--case",
        model_id("ui-good"),
        "-k",
        "secur*",
        *demo(out),
    )
    assert code == 0, lines + err
    results = out / "runs" / "some" / "results"
    chosen = {"events-bad", "ui-good", "security-bad", "security-good"}
    assert {p.stem.removeprefix("result-") for p in results.glob("result-*.json")} == {model_id(c) for c in chosen}
    record = json.loads((out / "runs" / "some" / "run.json").read_text())
    assert record["selection"] == sorted(chosen)
    code, lines, _ = run_cli(capsys, "score", "--run", "some", "--adapter", "oracle", *demo(out))
    assert code == 1  # everything selected passed, and still no gate PASS for the corpus
    assert lines[-1] == (
        "Review evaluation PARTIAL: 4 of 16 case(s) selected, recall=1 (2/2), clean-rate=1 (2/2); "
        "a partial run is not a gate result for the corpus."
    )
    report = json.loads((out / "runs" / "some" / "score.json").read_text())
    assert (report["passed"], report["partial"], report["selectedCases"], len(report["cases"])) == (False, True, 4, 4)
    card = json.loads((out / "runs" / "some" / "scorecard.json").read_text())
    assert card["verdict"] == "partial" and card["run"]["partial"] is True
    assert "partial: 4 of 16 cases, not a gate result" in (out / "runs" / "some" / "scorecard.md").read_text()
    assert run_cli(capsys, "score", "--run", "some", "--adapter", "oracle", "--no-gate", *demo(out))[0] == 0
    # more cases extend the run; once it covers every case it is whole again
    assert run_cli(capsys, "answer", "--adapter", "oracle", "--run", "some", "-k", "*", *demo(out))[0] == 0
    assert json.loads((out / "runs" / "some" / "run.json").read_text())["selection"] is None
    code, lines, _ = run_cli(capsys, "score", "--run", "some", "--adapter", "oracle", *demo(out))
    assert code == 0 and lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."


def test_failed_from_reruns_the_failures_into_the_run_and_keeps_the_rest(agent, tmp_path, capsys):
    out = tmp_path / "out"
    failing = model_id("events-bad")
    agent.modes({failing: "crash"})
    base = ["answer", "--adapter", "command", "--command", "fake-agent", "--retries", "0", "--jobs", "4", *demo(out)]
    assert run_cli(capsys, *base)[0] == 0
    code, lines, _ = run_cli(capsys, "score", "--adapter", "command", *demo(out))
    assert code == 1 and any("events-bad: infrastructure failure (crash" in line for line in lines)
    calls = len(agent.calls())

    agent.modes({})
    code, lines, err = run_cli(capsys, *base, "--failed-from", "command")
    assert code == 0, lines + err
    assert [call["case"] for call in agent.calls()[calls:]] == [failing]  # only the failed case was asked again
    record = json.loads((out / "runs" / "command" / "run.json").read_text())
    assert record["selection"] is None  # the run still covers every case
    code, lines, _ = run_cli(capsys, "score", "--adapter", "command", *demo(out))
    assert code == 0 and lines[-1] == "Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."

    scorecard = out / "runs" / "command" / "scorecard.json"
    code, lines, err = run_cli(capsys, *base, "--run", "again", "--failed-from", str(scorecard))
    assert (
        code == 2
        and lines == []
        and err == ["bceval: the selection matches no case (--failed-from found no failed case)"]
    )
    assert not (out / "runs" / "again").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--case", "nosuch-bad"], "--case nosuch-bad: no case has that manifest or model id"),
        (["-k", "zzz*"], "-k zzz*: the pattern matches no case id or domain"),
        (["--failed-from", "ghost"], "--failed-from ghost: no run of that name in {runs} and no such score file"),
        (
            ["--failed-from", "gone.json"],
            "--failed-from gone.json: no run of that name in {runs} and no such score file",
        ),
        (["--run", "../escape"], "invalid run name '../escape': use letters, digits, '.', '_' and '-'"),
        (["--isolation", "chroot"], "--isolation: unknown isolation 'chroot'; choose one of: view, none"),
        (["--sandbox", "docker"], "--sandbox: unknown sandbox 'docker'; choose one of: none, bwrap"),
        (["--epoch", "0"], "--epoch must be at least 1"),
    ],
)
def test_bad_selection_and_run_flags_are_one_line_exit_2_nothing_written(tmp_path, capsys, flags, message):
    out = tmp_path / "out"
    code, lines, err = run_cli(capsys, "answer", "--adapter", "oracle", *flags, *demo(out))
    assert code == 2 and lines == []
    assert len(err) == 1 and err[0].startswith("bceval: " + message.format(runs=out / "runs"))
    assert not (out / "runs").exists()


def test_a_run_answered_with_other_agent_settings_is_refused_not_mixed(agent, tmp_path, capsys):
    out = tmp_path / "out"
    base = ["answer", "--adapter", "command", "--run", "mine", "--jobs", "4", *demo(out)]
    assert run_cli(capsys, *base, "--command", "fake-agent")[0] == 0
    before = files(out / "runs" / "mine")
    code, lines, err = run_cli(capsys, *base, "--command", "fake-agent --temperature 0")
    assert code == 2 and lines == []
    assert err == [
        f"bceval: run 'mine' in {out / 'runs' / 'mine'} was answered with another command ('fake-agent', now "
        "'fake-agent --temperature 0'); name this one with --run, or remove that run"
    ]
    assert files(out / "runs" / "mine") == before
