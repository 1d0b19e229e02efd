"""An evaluator from outside bceval: tests/plugins/example-evaluator, installed into a fresh venv, works through
bceval's uniform verbs and experiments with no edit to bceval (issue 45, item 4).

The venv has neither the dev install nor its console scripts: bceval and its dependencies are importable there
only through a .pth file naming this checkout and the running interpreter's site-packages, and the plugin is
installed into it with pip (from a copy, so no build files land in the checkout)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "tests" / "plugins" / "example-evaluator"
DEMO = PLUGIN / "demo"
NAME = "python-tasks"

# The fake live agent: it reads the prompt on stdin and writes a solution.py that fails at a known stage.
FAKE_AGENT = r"""
import re, sys
task = re.search(r"^Task (\S+):", sys.stdin.read(), re.M).group(1)
programs = {
    "collatz": "print('never closed'\n",
    "primes": "raise SystemExit('primes: gave up')\n",
    "sum-of-squares": 'import json\nprint(json.dumps({"sum": "<script>alert(1)</script>"}))\n',
    "word-count": (
        "import json\nfrom collections import Counter\n"
        "words = [w.strip('.,;:!?').lower() for w in open('words.txt').read().split()]\n"
        "c = Counter(w for w in words if w)\n"
        "print(json.dumps({'words': sum(c.values()), 'distinct': len(c), 'top': min(c, key=lambda w: (-c[w], w))}))\n"
    ),
}
open("solution.py", "w").write(programs[task])
print("wrote solution.py")
"""
STAGES = {"collatz": "compile", "primes": "run", "sum-of-squares": "output", "word-count": None}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv's python with the plugin installed (pip, offline: setuptools from the configured index)."""
    folder = tmp_path_factory.mktemp("plugin")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    where = [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    purelib = Path(subprocess.run(where, check=True, capture_output=True, text=True).stdout.strip())
    (purelib / "bceval-dev.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n", encoding="utf-8")
    source = shutil.copytree(PLUGIN, folder / "source", ignore=shutil.ignore_patterns("demo", "*.egg-info", "build"))
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(source)]
    done = subprocess.run(install, capture_output=True, text=True)
    assert done.returncode == 0, f"pip could not install the plugin: {done.stderr}"
    return python


def bceval(python: Path, cwd: Path, *args: str, live: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    env.update({"BCEVAL_LIVE": "1"} if live else {})
    return subprocess.run([str(python), "-m", "bceval", *args], cwd=cwd, env=env, capture_output=True, text=True)


def scored(out: Path, run: str) -> dict[str, dict]:
    document = json.loads((out / "runs" / run / "score.json").read_text(encoding="utf-8"))
    return {case["id"]: case for case in document["cases"]}


def test_bceval_lists_the_plugin_by_its_distribution(venv: Path, tmp_path: Path) -> None:
    done = bceval(venv, tmp_path, "evaluators")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith(NAME))
    assert line.split()[1] == "bceval-python-tasks"
    assert "built-in" not in line
    assert not list(REPO.joinpath("bceval").rglob("*python_tasks*"))


def test_the_oracle_passes_every_task_and_a_wrong_program_fails_at_its_stage(venv: Path, tmp_path: Path) -> None:
    corpus = ("--corpus", str(DEMO), "--out", str(tmp_path / "out"))
    done = bceval(venv, tmp_path, "prepare", "--evaluator", NAME, *corpus)
    assert done.returncode == 0, done.stderr
    prepared = tmp_path / "out" / NAME / "prepared"
    assert sorted(p.name for p in prepared.iterdir()) == sorted(STAGES)
    assert not list(prepared.rglob("solution.py")) and not list(prepared.rglob("known-good.py"))
    assert (prepared / "word-count" / "words.txt").is_file()  # the task's files, in its question folder

    assert bceval(venv, tmp_path, "answer", "--evaluator", NAME, "--adapter", "oracle", *corpus).returncode == 0
    done = bceval(venv, tmp_path, "score", "--evaluator", NAME, "--adapter", "oracle", *corpus)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(case["passed"] for case in scored(tmp_path / "out", "oracle-python-tasks").values())

    agent = tmp_path / "fake_agent.py"
    agent.write_text(FAKE_AGENT, encoding="utf-8")
    live = ("--adapter", "command", "--command", f"{venv} {agent}", "--timeout", "30")
    done = bceval(venv, tmp_path, "answer", "--evaluator", NAME, *live, *corpus, live=True)
    assert done.returncode == 0, done.stderr
    done = bceval(venv, tmp_path, "score", "--evaluator", NAME, "--adapter", "command", *corpus)
    assert done.returncode == 1, done.stdout + done.stderr
    cases = scored(tmp_path / "out", "command-python-tasks")
    assert {case: verdict["stage"] for case, verdict in cases.items()} == STAGES
    assert [case for case, verdict in cases.items() if verdict["passed"]] == ["word-count"]
    assert "gave up" in cases["primes"]["problems"][0]
    assert (tmp_path / "out" / "runs" / "command-python-tasks" / "transcripts" / "primes.json").is_file()

    done = bceval(venv, tmp_path, "view", "--evaluator", NAME, "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "out" / "view" / NAME / "command-python-tasks.html").read_text(encoding="utf-8")
    assert "sum-of-squares" in page and "<script>" not in page and "&lt;script&gt;" in page
    assert "compile" in page and "output" in page


def test_a_two_arm_experiment_reports_the_difference(venv: Path, tmp_path: Path) -> None:
    agent = tmp_path / "fake_agent.py"
    agent.write_text(FAKE_AGENT, encoding="utf-8")
    experiment = tmp_path / "plugin.yaml"
    experiment.write_text(
        "name: plugin-demo\nepochs: 1\n"
        f"defaults:\n  corpus: {DEMO}\n  evaluator: {NAME}\n  command: {venv} {agent}\n"
        "arms:\n  - name: oracle\n    adapter: oracle\n  - name: agent\n    adapter: command\n",
        encoding="utf-8",
    )
    done = bceval(venv, tmp_path, "experiment", "run", str(experiment), "--out", str(tmp_path / "out"), live=True)
    assert done.returncode == 0, done.stdout + done.stderr
    folder = tmp_path / "out" / "experiments" / "plugin-demo"
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    overall = report["comparisons"][0]["result"]["overall"]
    assert (overall["control_mean"], overall["treatment_mean"], overall["difference"]) == (1.0, 0.25, -0.75)
    rows = {d["case_id"]: d["difference"] for d in report["comparisons"][0]["result"]["differences"]}
    assert rows == {"collatz": -1.0, "primes": -1.0, "sum-of-squares": -1.0, "word-count": 0.0}
    markdown = (folder / "report.md").read_text(encoding="utf-8")
    assert "| oracle (control) | 1.000 (4/4 answers)" in markdown and "| agent | 0.250 (1/4 answers)" in markdown
    assert "Arms differ in: adapter" in markdown


def test_a_program_past_its_budget_fails_at_the_run_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge alone, imported from the plugin's source: a program still running at its budget is ended."""
    spec = importlib.util.spec_from_file_location("bceval_python_tasks", PLUGIN / "bceval_python_tasks.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bceval_python_tasks", plugin)  # its dataclasses look their module up
    spec.loader.exec_module(plugin)
    tasks = plugin.EVALUATOR.load(DEMO, None)
    task = next(t for t in tasks if t.id == "sum-of-squares")
    task = plugin.Task(task.id, task.folder, task.spec.model_copy(update={"budgetSeconds": 0.5}))
    (tmp_path / "solution.py").write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    verdict = plugin.EVALUATOR.judge(tasks, task, tmp_path)
    assert (verdict.passed, verdict.stage) == (False, "run")
    assert "time budget of 0.5 s" in verdict.problems[0]
