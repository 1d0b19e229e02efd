"""The live guidance agent, end to end through `bceval guidance run --adapter command`, with fake agents that
(a) answer correctly, (b) write into the workspace, (c) commit in it, (d) touch the knowledge checkout and
(e) look for the manifest to copy its expectations. (a) passes; (b)-(d) fail with the evidence problem they
cause, and under bwrap cannot write at all; (e) finds no manifest in its view."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from agents import clean_environment

from bceval.cli import main
from bceval.errors import BcevalError

PLAN = "evaluation/development-guidance-fixtures.json"
IMPLEMENTATION = "evaluation/implementation-guidance-fixtures.json"

GUIDANCE_AGENT = r'''#!{python}
"""A fake guidance agent: FAKE_GUIDANCE_MODE says how it misbehaves before answering."""
import json
import os
import subprocess
import sys

argv = sys.argv[1:]
if argv[:1] == ["--version"]:
    print("guidance-agent 0.1")
    sys.exit(0)
prompt = sys.stdin.read()
start = prompt.index("\n", prompt.index("=== request ")) + 1
request = json.loads(prompt[start:])
case = request["caseId"]
mode = os.environ.get("FAKE_GUIDANCE_MODE", "answer")
entry = {"case": case, "mode": mode, "cwd": os.getcwd(), "knowledgeRoot": request["knowledgeRoot"]}


def attempt(action):
    try:
        action()
        return "done"
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"failed: {type(exc).__name__}"


if mode == "write":
    entry["write"] = attempt(lambda: open("agent-notes.txt", "w").write("my notes"))
if mode == "commit":
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b"}
    command = ["git", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "agent was here"]
    entry["write"] = attempt(lambda: subprocess.run(command, check=True, env=env, capture_output=True))
if mode == "touch-knowledge":
    checkout = argv[argv.index("--checkout") + 1]
    target = os.path.join(checkout, "microsoft", "knowledge", "agent-notes.md")
    entry["write"] = attempt(lambda: open(target, "w").write("# notes"))
if mode == "read-manifest":
    found = []
    for folder, _, files in os.walk(request["knowledgeRoot"]):
        for name in files:
            if "fixtures" in name or os.sep + "evaluation" in folder:
                found.append(os.path.join(folder, name))
    entry["found"] = found
    entry["folders"] = sorted(os.listdir(request["knowledgeRoot"]))
with open(os.environ["FAKE_LOG"], "a", encoding="utf-8") as handle:
    handle.write(json.dumps(entry) + "\n")
if mode == "silent":
    print("I looked around and have nothing to say.")
    sys.exit(0)
if mode == "read-manifest":  # without the expectations it can only guess
    print(json.dumps({"caseId": case, "guidanceReport": {"outcome": "completed"}}))
    sys.exit(0)
with open(os.path.join(os.environ["FAKE_GUIDANCE_ANSWERS"], f"result-{case}.json"), encoding="utf-8") as handle:
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": handle.read(),
                      "total_cost_usd": 0.02, "usage": {"input_tokens": 500, "output_tokens": 100}}))
'''


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


def cli(capsys, *argv) -> tuple[int, str, list[str]]:
    code = main(["guidance", *map(str, argv)])
    captured = capsys.readouterr()
    err = [line for line in captured.err.splitlines() if not line.startswith("bceval: corpus ")]
    return code, captured.out, err


class Demo:
    """Fresh demo workspaces, the oracle's answers for them, and the fake agent on PATH."""

    def __init__(self, tmp_path: Path, monkeypatch, capsys) -> None:
        self.dir = tmp_path / "demo"
        code, _, err = cli(capsys, "demo-workspaces", "--out", self.dir)
        assert code == 0, err
        self.knowledge = self.dir / "knowledge"
        self.tmp = tmp_path
        self.data = tmp_path / "agent-data"
        self.data.mkdir()
        self.log = self.data / "log.jsonl"
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        agent = self.bin / "guidance-agent"
        agent.write_text(GUIDANCE_AGENT.replace("{python}", sys.executable), encoding="utf-8")
        agent.chmod(0o755)
        monkeypatch.setenv("PATH", f"{self.bin}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("BCEVAL_LIVE", "1")
        monkeypatch.setenv("FAKE_LOG", str(self.log))
        self.answers = {}
        for kind in ("plan", "implementation"):
            run = tmp_path / f"oracle-{kind}"
            code, _, err = cli(capsys, "run", *self.base(kind), "--adapter", "oracle", "--out", run)
            assert code == 0, err
            self.answers[kind] = run / "results"

    def base(self, kind: str) -> list:
        manifest = PLAN if kind == "plan" else IMPLEMENTATION
        return [
            "--root",
            self.knowledge,
            "--manifest",
            self.knowledge / manifest,
            "--workspace-map",
            self.dir / f"workspace-map.{kind}.json",
        ]

    def entries(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []


@pytest.fixture
def demo(tmp_path, monkeypatch, capsys) -> Demo:
    return Demo(tmp_path, monkeypatch, capsys)


def live_run(capsys, demo: Demo, kind: str, mode: str, monkeypatch, *extra) -> tuple[int, str, list[str], Path]:
    monkeypatch.setenv("FAKE_GUIDANCE_MODE", mode)
    monkeypatch.setenv("FAKE_GUIDANCE_ANSWERS", str(demo.answers[kind]))
    run = demo.tmp / f"run-{kind}-{mode}"
    command = f"guidance-agent --checkout {demo.knowledge}"
    code, out, err = cli(
        capsys,
        "run",
        *demo.base(kind),
        "--adapter",
        "command",
        "--command",
        command,
        "--retries",
        "0",
        "--out",
        run,
        *extra,
    )
    return code, out, err, run


def bwrap_or_skip() -> None:
    from bceval.agents.sandbox import require_bwrap

    try:
        require_bwrap()
    except BcevalError as exc:
        pytest.skip(f"the bwrap sandbox cannot run here: {exc}")


@pytest.mark.parametrize("kind", ["plan", "implementation"])
def test_a_correct_agent_passes_with_transcripts_cost_and_a_run_record(demo, capsys, monkeypatch, kind):
    code, out, err, run = live_run(capsys, demo, kind, "answer", monkeypatch)
    assert code == 0, err
    assert out.strip() == f"Development guidance run PASSED: 4 case(s) in {run}"
    entries = demo.entries()
    assert len(entries) == 4
    workspaces = json.loads((demo.dir / f"workspace-map.{kind}.json").read_text()).values()
    assert {entry["cwd"] for entry in entries} == set(workspaces)  # each case in its own workspace
    for entry in entries:  # a view of skills/ and knowledge/, never the checkout with its evaluation/
        view = Path(entry["knowledgeRoot"])
        assert view != demo.knowledge and view.name.startswith("bceval-knowledge-") and not view.exists()
    record = json.loads((run / "run.json").read_text())
    assert record["passed"] and record["agent"]["adapter"] == "command" and record["agent"]["pinned"] is False
    assert record["usage"]["costUsd"] == pytest.approx(0.08) and record["usage"]["inputTokens"] == 2000
    transcripts = sorted((run / "transcripts").glob("*.json"))
    assert len(transcripts) == 4
    transcript = json.loads(transcripts[0].read_text())
    assert transcript["outcome"] == "answered" and transcript["attempts"][0]["format"] == "json"
    # the one transcript format of every run (bceval.runs.record)
    assert list(transcript)[:3] == ["schemaVersion", "run", "answeredBy"] and list(transcript)[-1] == "usage"
    assert transcript["schemaVersion"] == 1 and transcript["run"] == run.name


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("write", "target workspace identity/content changed since the baseline was captured"),
        ("commit", "target workspace identity/content changed since the baseline was captured"),
        ("touch-knowledge", "Knowledge checkout identity/content changed since the baseline was captured"),
    ],
)
def test_an_agent_that_changes_anything_fails_with_the_evidence_it_left(demo, capsys, monkeypatch, mode, problem):
    code, out, err, run = live_run(capsys, demo, "plan", mode, monkeypatch)
    assert code == 1 and out == ""
    assert err[0] == f"Development guidance run FAILED with {len(err) - 1} problem(s):"
    assert any(problem in line for line in err[1:])
    assert {entry["write"] for entry in demo.entries()} == {"done"}


@pytest.mark.parametrize("mode", ["write", "commit", "touch-knowledge"])
def test_under_bwrap_the_agent_cannot_write_at_all_and_the_evidence_still_runs(demo, capsys, monkeypatch, mode):
    bwrap_or_skip()
    grants = ["--sandbox", "bwrap", "--sandbox-allow-rw", demo.data, "--sandbox-allow", demo.answers["plan"]]
    code, out, err, run = live_run(capsys, demo, "plan", mode, monkeypatch, *grants)
    assert code == 0, err  # nothing changed, so the (correct) answers pass
    writes = {entry["write"] for entry in demo.entries()}
    assert len(demo.entries()) == 4 and all(result.startswith("failed: ") for result in writes), writes
    assert (run / "evidence" / "baseline.json").is_file()
    assert not (demo.knowledge / "microsoft" / "knowledge" / "agent-notes.md").exists()


def test_an_agent_looking_for_the_expectations_finds_no_manifest_in_its_view(demo, capsys, monkeypatch):
    code, _, err, _ = live_run(capsys, demo, "plan", "read-manifest", monkeypatch)
    assert code == 1  # guessing does not pass
    for entry in demo.entries():
        assert entry["found"] == [] and "evaluation" not in entry["folders"]
        assert set(entry["folders"]) <= {"microsoft", "community", "custom", "knowledge-index.json"}
    assert (demo.knowledge / PLAN).is_file()  # it exists, just not where the agent can look


def test_an_agent_that_prints_no_report_is_one_line_naming_the_case(demo, capsys, monkeypatch):
    code, out, err, _ = live_run(capsys, demo, "plan", "silent", monkeypatch)
    assert code == 1 and out == ""
    assert len(err) == 1 and err[0].startswith("Development guidance run FAILED: ")
    assert err[0].endswith(": the command adapter produced no report (invalid-output)")
    assert "nothing to say" not in err[0]  # never the agent's own words


def test_without_bceval_live_the_command_adapter_refuses_in_one_line(demo, capsys, monkeypatch):
    monkeypatch.delenv("BCEVAL_LIVE")
    code, out, err, run = live_run(capsys, demo, "plan", "answer", monkeypatch)
    assert code == 1 and err == [
        "Development guidance run FAILED: the command adapter calls a live model and is opt-in: set BCEVAL_LIVE=1 "
        "to allow it"
    ]
    assert not run.exists()
