"""Experiments end to end: experiment files and their errors, the demo, `experiment ab` between two commits,
sharing, epochs as fresh samples, resuming after a kill, shards, reports and publishing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS, REPO
from guidance_util import git

from bceval.cli import main

CASES = 16
REPORT_FILES = ("report.json", "report.md", "report.html")
ARTICLE = "microsoft/knowledge/performance/filter-before-findset.md"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


@pytest.fixture
def repo(tmp_path) -> tuple[Path, str, str]:
    """A corpus repository (the corpus in a subfolder) with two commits: the second edits one article body."""
    root = tmp_path / "repo"
    shutil.copytree(DEMO_CORPUS, root / "corpus")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    article = root / "corpus" / ARTICLE
    article.write_text(article.read_text(encoding="utf-8") + "\nAlso filter before CalcSums.\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "clarify one article")
    head = git(root, "rev-parse", "HEAD")
    return root / "corpus", base, head


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def report_of(out: Path, name: str) -> dict:
    return json.loads((out / "experiments" / name / "report.json").read_text(encoding="utf-8"))


def arm(report: dict, name: str) -> dict:
    return next(a for a in report["arms"] if a["name"] == name)


# --- experiment files: every error names the file, the line and the field -----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: broken\narms: [\n  - name: a\n", ", line 3: not valid YAML"),
        (
            "name: x\narms:\n  - name: a\n  - name: b\n    colour: red\n",
            ", line 5: unknown field 'arms[1].colour'",
        ),
        ("name: x\narms:\n  - name: only\n", ", line 3: field 'arms': List should have at least 2 items"),
        ("name: x\nepochs: 0\narms:\n  - name: a\n  - name: b\n", ", line 2: field 'epochs': Input should be greater"),
        ("name: x\narms:\n  - name: a\n  - name: a\n", ", line 3: field 'arms': arm name 'a' is used twice"),
        ("epochs: 2\narms:\n  - name: a\n  - name: b\n", ", line 1: field 'name' is missing"),
        (
            "name: x\narms:\n  - name: a\n  - name: b\n    adapter: gpt\n",
            ", line 5: field 'arms[1].adapter': must be one of baseline, oracle, command, api",
        ),
        (
            "name: x\narms:\n  - name: a\n  - name: b\n    adapter: command\n    command: a\n    sandboxAllow: [/]\n",
            ", line 4: field 'arms[1].name': arm 'b': --sandbox-allow only applies under --sandbox bwrap",
        ),
        (
            "name: x\narms:\n  - name: a\n  - name: b\n    adapter: command\n",
            ", line 4: field 'arms[1].name': arm 'b': the command adapter needs --command",
        ),
    ],
)
def test_a_bad_experiment_file_is_one_line_naming_file_line_and_field(tmp_path, capsys, text, expected):
    file = write(tmp_path / "exp.yaml", text)
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 2 and lines == []
    assert len(err) == 1 and err[0].startswith(f"bceval: {file}{expected}"), err
    assert not (tmp_path / "out" / "experiments").exists()


def test_a_ref_that_does_not_resolve_or_a_corpus_outside_git_is_one_line(repo, tmp_path, capsys):
    corpus, _, _ = repo
    file = write(
        tmp_path / "exp.yaml",
        f"name: x\ndefaults:\n  corpus: {corpus}\narms:\n  - name: a\n  - name: b\n    ref: nosuch\n",
    )
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 2 and err == [
        f"bceval: {file}, line 7: field 'arms[1].ref': 'nosuch' does not name a commit in {corpus.parent}"
    ]
    plain = tmp_path / "plain"
    shutil.copytree(DEMO_CORPUS, plain)
    file = write(
        tmp_path / "exp2.yaml",
        f"name: x\narms:\n  - name: a\n    corpus: {plain}\n  - name: b\n    corpus: {plain}\n    ref: HEAD\n",
    )
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 2 and err == [
        f"bceval: {file}, line 7: field 'arms[1].ref': {plain} is not in a git repository, so a ref cannot be resolved"
    ]
    assert not (tmp_path / "out" / "experiments").exists()


# --- the demo -----------------------------------------------------------------------------------------------------


def test_the_demo_experiment_runs_out_of_the_box_with_doit(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    env["BCEVAL_OUT"] = str(tmp_path / "out")
    doit = Path(sys.executable).parent / "doit"
    done = subprocess.run([str(doit), "experiment"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith(
        "Experiment demo: oracle vs baseline (control): better; mean per-case difference +0.500, 95% CI "
    )
    assert "sign-flip p = 0.007812 (exact), 16 paired cases, alpha 0.05" in done.stdout.splitlines()[0]
    report = report_of(tmp_path / "out", "demo")
    schema = json.loads((REPO / "schemas" / "experiment-report.schema.json").read_text())
    jsonschema.validate(report, schema)
    assert report["differing"] == ["adapter"] and report["warnings"] == []
    assert (arm(report, "baseline")["answered"], arm(report, "oracle")["answered"]) == (48, 48)
    assert arm(report, "baseline")["summary"]["pass_hat_k"]["all"]["passed"] == 8
    again = subprocess.run([str(doit), "experiment"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "everything is up to date" in again.stderr
    md = (tmp_path / "out/experiments/demo/report.md").read_text()
    assert "| oracle | all cases | 16 (8 / 0 / 8) | 0.500 | 1.000 | +0.500, 95% CI " in md and "**better**" in md


def test_an_experiment_prepares_its_variants_in_process_even_beside_a_bceval_folder(tmp_path, capsys, monkeypatch):
    """A `bceval/` folder where the command runs shadows nothing: no `python -m bceval` is started for a variant
    (one started there imported that folder and failed with an ImportError traceback)."""
    work = tmp_path / "work"
    (work / "bceval").mkdir(parents=True)
    monkeypatch.chdir(work)
    out = tmp_path / "out"
    code, lines, err = run_cli(
        capsys, "experiment", "run", REPO / "evaluation" / "experiments" / "demo.yaml", "--out", out
    )
    assert code == 0, lines + err
    assert lines[0].startswith("Experiment demo: oracle vs baseline (control): better; mean per-case difference")
    assert not any("Traceback" in line or "does not prepare" in line for line in lines + err)
    assert [a["cases"] for a in report_of(out, "demo")["arms"]] == [CASES, CASES]
    variant = out / "experiments" / "demo" / "variants" / "baseline"
    assert (variant / "review" / "review-request.json").is_file() and (variant / ".bceval.doit.db").is_file()


def test_a_variant_is_prepared_again_only_when_what_it_reads_or_wrote_changed(agent, tmp_path, capsys, monkeypatch):
    from bceval.evaluators.review import steps as review_steps
    from bceval.steps import prepare as prepare_steps

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    prepared: list[str] = []

    def counted(module, name: str):  # a task of the variant's prepare, run when what it reads or wrote changed
        real = getattr(module, name)
        return lambda *args: prepared.append(name) or real(*args)

    for name in ("write_cases", "write_domain", "finish_prepare"):
        monkeypatch.setattr(review_steps, name, counted(review_steps, name))
    for name in ("write_group_rows", "write_index"):
        monkeypatch.setattr(prepare_steps, name, counted(prepare_steps, name))
    out = tmp_path / "out"
    text = two_arms("v").replace(str(DEMO_CORPUS), str(corpus)).replace("{arm}", "b")
    file = write(tmp_path / "v.yaml", text)

    def rerun() -> int:
        before = len(prepared)
        assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
        return int(len(prepared) > before)

    assert rerun() == 1 and len(agent.calls()) == 2 * CASES
    assert rerun() == 0  # nothing changed: not prepared, nothing asked
    article = corpus / ARTICLE
    article.write_text(article.read_text(encoding="utf-8") + "\nAlso filter before CalcSums.\n", encoding="utf-8")
    assert rerun() == 1 and len(agent.calls()) > 2 * CASES  # the views holding the article are asked again
    assert rerun() == 0
    request = next((out / "experiments" / "v" / "variants").glob("*/review/request-case-*.json"))
    request.unlink()
    assert rerun() == 1 and request.is_file()  # what it wrote, taken away: prepared again
    assert rerun() == 0


def test_a_variant_that_does_not_prepare_fails_the_experiment_with_its_own_lines(tmp_path, capsys):
    bad = tmp_path / "bad"
    shutil.copytree(DEMO_CORPUS, bad)
    manifest = json.loads((bad / "evaluation" / "review-fixtures.json").read_text())
    manifest["overrides"] = {"nosuch": {"article": "x"}}
    write(bad / "evaluation" / "review-fixtures.json", json.dumps(manifest))
    file = write(
        tmp_path / "bad.yaml",
        f"name: bad\ndefaults:\n  corpus: {DEMO_CORPUS}\narms:\n  - name: a\n  - name: b\n    corpus: {bad}\n"
        "  - name: c\n    manifest: nosuch.json\n",
    )
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 1
    assert lines == [
        "Experiment bad: arm 'b' does not prepare:",
        "  - Review fixture validation FAILED with 1 problem(s):",
        "  -   - Override domain 'nosuch' has no registered al-nosuch-review leaf",
    ]
    file.write_text(file.read_text().replace(f"    corpus: {bad}\n", ""))
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 1
    assert lines == [
        "Experiment bad: arm 'c' does not prepare:",
        f"  - bceval: {DEMO_CORPUS / 'nosuch.json'}: review fixture manifest not found",
    ]


# --- a pull request's question: did this article change make reviews better? --------------------------------------


def test_ab_between_two_commits_answers_only_the_views_that_hold_the_changed_article(repo, agent, tmp_path, capsys):
    corpus, base, head = repo
    out = tmp_path / "out"
    args = ["experiment", "ab", "--base", base, "--head", head, "--epochs", "2", "--corpus", corpus, "--out", out]
    args += ["--adapter", "command", "--command", "fake-agent", "--jobs", "4"]
    code, lines, err = run_cli(capsys, *args)
    assert code == 0, lines + err
    name = f"ab-{base}-{head}"[:100]
    report = report_of(out, name)
    holding = set()
    for transcript in (out / "experiments" / name / "variants" / "head" / "runs" / "head-e1" / "transcripts").glob("*"):
        record = json.loads(transcript.read_text())
        if any(f["path"] == ARTICLE for f in record["view"]["files"]):
            holding.add(record["case"])
    assert 0 < len(holding) < CASES
    calls = agent.calls()
    assert len(calls) == 2 * (CASES + len(holding))  # base: every case; head: only the changed views; per epoch
    assert (arm(report, "base")["answered"], arm(report, "base")["shared"]) == (2 * CASES, 0)
    assert arm(report, "head")["answered"] == 2 * len(holding)
    assert arm(report, "head")["shared"] == 2 * (CASES - len(holding))
    assert [a["commit"] for a in report["arms"]] == [base, head]  # the commit is recorded, not only the ref
    assert report["differing"] == ["ref"]
    assert (out / "corpora").is_dir() and len(list((out / "corpora").iterdir())) == 2  # exported once per commit
    assert git(corpus.parent, "status", "--porcelain") == ""  # read-only: nothing checked out
    comparison = report["comparisons"][0]["result"]
    assert comparison["verdict"] == "no detectable difference" and comparison["p_value"] == 1.0
    # epochs are fresh samples: each asked the agent again
    per_case = {}
    for call in calls:
        per_case[call["case"]] = per_case.get(call["case"], 0) + 1
    assert min(per_case.values()) >= 2

    code, lines, err = run_cli(capsys, *args)  # nothing changed: nothing is asked again
    assert code == 0 and len(agent.calls()) == len(calls)
    code, lines, err = run_cli(capsys, *args, "--no-share")
    assert code == 0
    assert len(agent.calls()) == len(calls) + 2 * CASES  # head asks every question under a key of its own


def test_an_answer_the_sharing_arm_failed_to_get_is_paid_and_counted_by_the_arm_that_got_it(
    repo, agent, tmp_path, capsys
):
    corpus, base, head = repo
    out = tmp_path / "out"
    agent.mode("flaky")  # the first call of each case fails, every later one answers
    args = ["experiment", "ab", "--base", base, "--head", head, "--corpus", corpus, "--out", out]
    code, _, _ = run_cli(capsys, *args, "--adapter", "command", "--command", "fake-agent", "--retries", "0")
    report = report_of(out, f"ab-{base}-{head}")
    base_arm, head_arm = arm(report, "base"), arm(report, "head")
    assert len(agent.calls()) == 2 * CASES  # base failed every case, so head asked each question itself
    assert (base_arm["answered"], base_arm["infrastructureFailures"]) == (0, CASES)
    assert (head_arm["answered"], head_arm["shared"]) == (CASES, 0)
    assert head_arm["usage"]["wallSeconds"] > 0  # what head paid is on its bill


def test_under_isolation_none_arms_reading_different_corpora_share_nothing(repo, agent, tmp_path, capsys):
    corpus, base, head = repo
    args = ["experiment", "ab", "--base", base, "--head", head, "--corpus", corpus, "--out", tmp_path / "out"]
    code, lines, err = run_cli(capsys, *args, "--adapter", "command", "--command", "fake-agent", "--isolation", "none")
    assert code == 0, lines + err
    assert len(agent.calls()) == 2 * CASES  # the agent could read each arm's whole corpus: different questions
    assert arm(report_of(tmp_path / "out", f"ab-{base}-{head}"), "head")["shared"] == 0


def test_ab_checks_its_refs_before_writing_anything(repo, tmp_path, capsys):
    corpus, base, _ = repo
    out = tmp_path / "out"
    code, _, err = run_cli(
        capsys, "experiment", "ab", "--base", "nosuch", "--head", base, "--corpus", corpus, "--out", out
    )
    assert code == 2 and err == [f"bceval: --base: 'nosuch' does not name a commit in {corpus.parent}"]
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--adapter", "gpt", "must be one of baseline, oracle, command, api"),
        ("--isolation", "nah", "must be one of view, none"),
        ("--sandbox", "zz", "must be one of none, bwrap"),
    ],
)
def test_ab_with_a_bad_agent_flag_is_one_line_naming_it(repo, tmp_path, capsys, flag, value, expected):
    corpus, base, head = repo
    out = tmp_path / "out"
    code, _, err = run_cli(
        capsys, "experiment", "ab", "--base", base, "--head", head, "--corpus", corpus, "--out", out, flag, value
    )
    assert code == 2 and err == [f"bceval: {flag}: {expected}"]
    assert not out.exists()


def test_ab_with_a_manifest_outside_the_corpus_reads_that_one_file_in_both_arms(repo, tmp_path, capsys, monkeypatch):
    corpus, base, head = repo
    manifest = write(tmp_path / "m.json", (corpus / "evaluation" / "review-fixtures.json").read_text())
    monkeypatch.setenv("BCEVAL_MANIFEST", str(manifest))
    out = tmp_path / "out"
    code, lines, err = run_cli(
        capsys, "experiment", "ab", "--base", base, "--head", head, "--corpus", corpus, "--out", out
    )
    assert code == 0, lines + err
    written = (out / "experiments" / f"ab-{base}-{head}" / "experiment.yaml").read_text()
    assert f"manifest: {manifest}" in written
    assert all(a["cases"] == CASES for a in report_of(out, f"ab-{base}-{head}")["arms"])


def test_ab_shards_on_separate_machines_merge_into_one_report_as_the_workflow_does(repo, tmp_path, capsys):
    corpus, base, head = repo
    name = f"ab-{base}-{head}"
    ab = ["experiment", "ab", "--base", base, "--head", head, "--epochs", "2", "--corpus", corpus]
    merged = tmp_path / "merged"
    for shard in (1, 2):  # each machine its own folder, then one artifact folder (download-artifact merge-multiple)
        machine = tmp_path / f"machine-{shard}"
        assert run_cli(capsys, *ab, "--out", machine, "--shard", f"{shard}/2", "--jobs", "4")[0] == 0
        for part in ("experiments", "corpora"):
            shutil.copytree(machine / part, merged / part, dirs_exist_ok=True)
    code, lines, err = run_cli(capsys, *ab, "--out", merged, "--report")
    assert code == 0, lines + err
    assert lines[-1] == f"Report: {merged / 'experiments' / name / 'report.md'}"
    report = report_of(merged, name)
    assert report["file"] == str(merged / "experiments" / name / "experiment.yaml")
    for arm_name in ("base", "head"):
        numbers = arm(report, arm_name)
        assert numbers["missing"] == 0 and numbers["answered"] + numbers["shared"] == 2 * CASES


def two_arms(name: str) -> str:
    """An experiment of two command arms over the demo corpus; `{arm}` in it is arm b's argument."""
    return (
        f"name: {name}\nepochs: 1\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\narms:\n"
        "  - name: a\n    command: fake-agent --arm a\n  - name: b\n    command: fake-agent --arm {arm}\n"
    )


def test_changing_one_arm_reruns_only_that_arm(agent, tmp_path, capsys):
    out = tmp_path / "out"
    text = two_arms("two")
    file = write(tmp_path / "two.yaml", text.replace("{arm}", "b"))
    assert run_cli(capsys, "experiment", "run", file, "--out", out, "--jobs", "4")[0] == 0
    assert len(agent.calls()) == 2 * CASES
    write(file, text.replace("{arm}", "b2"))
    assert run_cli(capsys, "experiment", "run", file, "--out", out, "--jobs", "4")[0] == 0
    fresh = agent.calls()[2 * CASES :]
    assert len(fresh) == CASES and {tuple(call["argv"]) for call in fresh} == {("--arm", "b2")}


def test_a_rerun_with_nothing_new_keeps_its_report_and_one_with_anything_new_writes_it_again(agent, tmp_path, capsys):
    out = tmp_path / "out"
    text = two_arms("kept")
    file = write(tmp_path / "kept.yaml", text.replace("{arm}", "b"))
    folder = out / "experiments" / "kept"
    code, lines, _ = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 0 and lines[-1] == f"Report: {folder / 'report.md'}"
    written = {name: (folder / name).stat().st_mtime_ns for name in ("report.json", "report.md", "report.html")}
    # what a killed run left in a variant is swept (by the experiment's graph: the variant's own, inside it, is not)
    gone = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True).stdout)
    left = next(folder.glob("variants/*/review")) / f".bceval-tmp-{gone}-k1ll3dxx"
    left.write_text("half", encoding="utf-8")
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[:2] == (0, lines)  # the same lines, again
    assert {name: (folder / name).stat().st_mtime_ns for name in written} == written  # and the report kept
    assert not left.exists()
    # a result that changed (here: edited in place, so nothing is answered again) is in the next report
    positive = next(line for line in report_of(out, "kept")["cases"] if line["kind"] == "positive")
    assert positive["outcomes"]["b"] == [True]
    result = next(folder.glob(f"variants/*/runs/b-e1/results/result-{positive['modelId']}.json"))
    document = json.loads(result.read_text(encoding="utf-8"))
    document["cases"][0]["findings"] = []
    result.write_text(json.dumps(document), encoding="utf-8")
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(agent.calls()) == 2 * CASES
    edited = next(line for line in report_of(out, "kept")["cases"] if line["id"] == positive["id"])
    assert edited["outcomes"]["b"] == [False]
    # a report file that went away is written again
    (folder / "report.md").unlink()
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert (folder / "report.md").is_file()
    # an arm that changed answers again and its report says so
    write(file, text.replace("{arm}", "b2"))
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(agent.calls()) == 3 * CASES
    assert arm(report_of(out, "kept"), "b")["settings"]["command"] == "fake-agent --arm b2"


def test_a_rerun_with_nothing_new_does_not_build_its_report_yet_says_its_verdict(agent, tmp_path, capsys, monkeypatch):
    from bceval.steps import experiment as steps

    built = []
    build = steps.load_report
    monkeypatch.setattr(steps, "load_report", lambda *args: built.append(args) or build(*args))
    out = tmp_path / "out"
    text = two_arms("fresh")
    file = write(tmp_path / "fresh.yaml", text.replace("{arm}", "b"))
    folder = out / "experiments" / "fresh"
    first = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert first[0] == 0 and first[1][-1] == f"Report: {folder / 'report.md'}" and len(built) == 1

    def files() -> dict[str, tuple[int, int]]:
        return {name: ((folder / name).stat().st_ino, (folder / name).stat().st_mtime_ns) for name in REPORT_FILES}

    written = files()
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[:2] == first[:2]  # the same verdict
    assert len(built) == 1 and files() == written  # from the report there, not built again
    # one result changed: built again
    result = next(folder.glob("variants/*/runs/a-e1/results/result-*.json"))
    result.write_text(result.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0 and len(built) == 2
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0 and len(built) == 2
    # the plan changed (its alpha: nothing is answered again): built again, and it says so
    write(file, "alpha: 0.1\n" + text.replace("{arm}", "b"))
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0 and len(built) == 3
    assert report_of(out, "fresh")["alpha"] == 0.1 and len(agent.calls()) == 2 * CASES


def test_shards_answer_apart_and_the_report_merges_them(agent, tmp_path, capsys):
    out = tmp_path / "out"
    file = write(
        tmp_path / "s.yaml",
        f"name: s\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\n  command: fake-agent\narms:\n"
        "  - name: a\n  - name: b\n    command: fake-agent --other\n",
    )
    assert run_cli(capsys, "experiment", "run", file, "--out", out, "--shard", "1/2")[0] == 0
    report = report_of(out, "s")
    assert arm(report, "a")["missing"] == CASES // 2  # the other shard's cases have no answer yet
    assert run_cli(capsys, "experiment", "run", file, "--out", out, "--shard", "2/2")[0] == 0
    assert len(agent.calls()) == 2 * CASES
    code, lines, _ = run_cli(capsys, "experiment", "report", file, "--out", out)
    assert code == 0 and lines[-1] == f"Report: {out / 'experiments' / 's' / 'report.md'}"
    report = report_of(out, "s")
    assert arm(report, "a")["missing"] == 0 and arm(report, "b")["answered"] == CASES


SLOW = """#!{python}
import json, os, sys, time
if sys.argv[1:] == ["--version"]:
    print("slow 1")
    sys.exit(0)
prompt = sys.stdin.read()
start = prompt.index("\\n", prompt.index("=== request ")) + 1
case = json.loads(prompt[start:prompt.index("\\n=== file ", start)])["cases"][0]["id"]
with open(os.path.join({log!r}, case + "-" + str(os.getpid())), "w") as handle:
    handle.write("asked")
time.sleep(0.3)
print(json.dumps({{"cases": [{{"id": case, "findings": []}}]}}))
"""


def test_an_interrupted_experiment_resumes_where_it_stopped(tmp_path):
    log = tmp_path / "asked"
    log.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "slow-agent"
    agent.write_text(SLOW.format(python=sys.executable, log=str(log)))
    agent.chmod(0o755)
    out = tmp_path / "out"
    file = write(
        tmp_path / "k.yaml",
        f"name: k\nepochs: 2\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\n  command: slow-agent\n"
        "arms:\n  - name: a\n  - name: b\n    command: slow-agent --b\n",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BCEVAL_", "FAKE_"))}
    env.update(BCEVAL_LIVE="1", PATH=f"{bin_dir}{os.pathsep}{env['PATH']}")
    command = [sys.executable, "-m", "bceval", "experiment", "run", str(file), "--out", str(out), "--jobs", "2"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(log.iterdir())) < 12:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)  # not even a chance to save doit's state
    process.wait()
    asked_first = len(list(log.iterdir()))
    stored = len(list((out / "cache" / "answers").glob("*.json")))
    assert 0 < stored < 4 * CASES
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(list(log.iterdir())) - asked_first == 4 * CASES - stored  # only what was missing
    report = report_of(out, "k")
    assert all(a["missing"] == 0 and a["answered"] == 2 * CASES for a in report["arms"])


def test_publish_adds_one_history_row_per_experiment_run(tmp_path, capsys):
    out = tmp_path / "out"
    file = REPO / "evaluation" / "experiments" / "demo.yaml"
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    page = tmp_path / "experiments.md"
    code, lines, _ = run_cli(capsys, "experiment", "publish", file, "--out", out, "--page", page)
    assert code == 0 and lines[-1].endswith(f"to {page}: updated.")
    text = page.read_text()
    assert "<!-- bceval:experiment:latest:begin -->" in text and "### Experiment demo" in text
    rows = [line for line in text.splitlines() if line.startswith("| 20") or line.startswith("| 19")]
    assert len(rows) == 1 and "oracle: better (p = 0.00781)" in rows[0]
    code, lines, _ = run_cli(capsys, "experiment", "publish", file, "--out", out, "--page", page)
    assert code == 0 and lines[-1].endswith("already up to date.") and page.read_text() == text


# --- guidance arms -----------------------------------------------------------------------------------------------


def guidance_demo_with_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The guidance demo workspaces, and the fake guidance agent on PATH as `guidance-agent`."""
    from test_guidance_live import GUIDANCE_AGENT

    demo = tmp_path / "demo"
    assert main(["guidance", "demo-workspaces", "--out", str(demo)]) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    agent = bin_dir / "guidance-agent"
    agent.write_text(GUIDANCE_AGENT.replace("{python}", sys.executable), encoding="utf-8")
    agent.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    return demo


def test_guidance_arms_compare_case_by_case_with_outcome_agreement_and_citations(tmp_path, capsys, monkeypatch):
    demo = guidance_demo_with_agent(tmp_path, monkeypatch)
    monkeypatch.setenv("FAKE_LOG", str(tmp_path / "log.jsonl"))
    monkeypatch.setenv("FAKE_GUIDANCE_MODE", "read-manifest")  # it can only guess: no expectations in its view
    file = write(
        tmp_path / "g.yaml",
        f"name: guidance\nepochs: 2\ndefaults:\n  corpus: {demo / 'knowledge'}\n  evaluator: plan\n"
        f"  workspaceMap: {demo / 'workspace-map.plan.json'}\narms:\n  - name: oracle\n"
        "  - name: guessing\n    adapter: command\n    command: guidance-agent\n"
        "  - name: at-head\n    ref: HEAD\n",
    )
    out = tmp_path / "out"
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 0, lines + err
    report = report_of(out, "guidance")
    oracle, guessing, at_head = (arm(report, name) for name in ("oracle", "guessing", "at-head"))
    assert oracle["evaluator"] == "plan" and oracle["cases"] == 4 and oracle["answered"] == 8
    assert oracle["guidance"]["outcomeAgreement"] == {"passed": 8, "total": 8, "value": 1.0}
    assert oracle["guidance"]["citedRecall"] == {"mean": 1.0, "reports": 8}
    assert oracle["summary"]["pass_hat_k"]["all"]["passed"] == 4
    assert guessing["summary"]["recall"]["passed"] == 0  # guesses never pass scoring
    assert guessing["guidance"]["outcomeAgreement"]["value"] < 1 and guessing["guidance"]["citedRecall"]["mean"] < 1
    assert at_head["commit"] is not None and at_head["summary"]["pass_hat_k"]["all"]["passed"] == 4  # an exported ref
    comparison = next(c["result"] for c in report["comparisons"] if c["arm"] == "guessing")
    assert comparison["paired_cases"] == 4 and comparison["overall"]["worse"] == 4
    runs = sorted((out / "experiments" / "guidance" / "variants").glob("*/guidance/*/run-*"))
    assert len(runs) == 6 and all((run / "run.json").is_file() for run in runs)  # 3 arms x 2 epochs, fresh evidence
    md = (out / "experiments" / "guidance" / "report.md").read_text()
    assert "| oracle | plan | 1.000 (8/8) | 1.000 over 8 report(s) |" in md
    code, _, _ = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 0 and len(sorted((out / "experiments" / "guidance" / "variants").glob("*/guidance/*/run-*"))) == 6


def test_a_guidance_arm_answers_only_with_an_agent_that_answers_guidance_questions(tmp_path, capsys):
    demo = tmp_path / "demo"
    assert main(["guidance", "demo-workspaces", "--out", str(demo)]) == 0
    file = write(
        tmp_path / "g.yaml",
        f"name: g\ndefaults:\n  corpus: {demo / 'knowledge'}\n  evaluator: plan\n"
        f"  workspaceMap: {demo / 'workspace-map.plan.json'}\narms:\n  - name: oracle\n"
        "  - name: base\n    adapter: baseline\n",
    )
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", tmp_path / "out")
    assert code == 2 and "bceval: arm 'base': a guidance arm answers with oracle or command or api, not baseline" in err
    assert "[oracle e1] guidance run run-0001: passed" in err  # the oracle is the arm's default agent


def test_a_guidance_arm_runs_again_when_its_knowledge_checkout_changes(tmp_path, capsys):
    demo = tmp_path / "demo"
    assert main(["guidance", "demo-workspaces", "--out", str(demo)]) == 0
    file = write(
        tmp_path / "g.yaml",
        f"name: g\ndefaults:\n  corpus: {demo / 'knowledge'}\n  evaluator: plan\n"
        f"  workspaceMap: {demo / 'workspace-map.plan.json'}\narms:\n  - name: a\n  - name: b\n",
    )
    out = tmp_path / "out"

    def runs() -> list[Path]:
        return sorted((out / "experiments" / "g" / "variants").glob("*/guidance/*/run-*"))

    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(runs()) == 2
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(runs()) == 2  # nothing changed: both epochs stand
    manifest = demo / "knowledge" / "evaluation" / "development-guidance-fixtures.json"
    manifest.write_text(manifest.read_text().replace('"completed"', '"partial"'))
    git(demo / "knowledge", "commit", "-qam", "expect partial plans")
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    assert len(runs()) == 4  # the knowledge moved on: each arm's epoch ran again


def test_an_a_a_arm_of_a_live_agent_is_told_to_use_no_share_and_with_it_asks_again(agent, tmp_path, capsys):
    file = write(
        tmp_path / "aa.yaml",
        f"name: aa\ndefaults:\n  corpus: {DEMO_CORPUS}\n  adapter: command\n  command: fake-agent\n"
        "arms:\n  - name: a\n  - name: b\n",
    )
    out = tmp_path / "out"
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 0 and len(agent.calls()) == CASES  # b shares every answer: it cannot differ
    assert any("shares every answer with it and cannot differ: run with --no-share" in line for line in err), err
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--no-share")
    assert code == 0 and len(agent.calls()) == 2 * CASES  # now b samples the agent itself
    assert any("set up exactly like the control: any difference is noise" in line for line in err), err
    assert arm(report_of(out, "aa"), "b")["shared"] == 0


def test_a_guidance_arm_cannot_grant_its_agent_the_experiments_output(tmp_path, capsys, monkeypatch):
    """Earlier epochs' results and scores live there: a sandbox grant over it is refused, as for review arms."""
    from test_guidance_live import bwrap_or_skip

    bwrap_or_skip()
    demo = guidance_demo_with_agent(tmp_path, monkeypatch)
    out = tmp_path / "out"
    others = out / "experiments" / "g" / "variants" / "oracle" / "guidance" / "oracle-e1"  # the other arm's runs
    others.mkdir(parents=True)
    file = write(
        tmp_path / "g.yaml",
        f"name: g\ndefaults:\n  corpus: {demo / 'knowledge'}\n  evaluator: plan\n"
        f"  workspaceMap: {demo / 'workspace-map.plan.json'}\narms:\n  - name: oracle\n"
        f"  - name: agent\n    adapter: command\n    command: guidance-agent\n    sandbox: bwrap\n"
        f"    sandboxAllow: [{others}]\n",
    )
    code, _, err = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code != 0
    assert f"Experiment g: arm 'agent', epoch 1: --sandbox-allow {others} would expose bceval's output" in (
        "\n".join(err)
    ), err
    assert not list((out / "experiments" / "g" / "variants").glob("agent/guidance/*/run-*/results/*"))


def test_once_builds_a_value_once_when_threads_ask_for_it_together():
    import threading

    from bceval.graph.doitlib import once

    built = []
    start = threading.Barrier(8)

    @once
    def value(key: str) -> list[str]:
        built.append(key)
        time.sleep(0.05)  # wide enough for every thread to arrive while the first is still building
        return [key]

    def ask() -> None:
        start.wait()
        results.append(value("run"))

    results: list[list[str]] = []
    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert built == ["run"] and all(result is results[0] for result in results)
