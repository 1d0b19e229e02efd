"""The pr-review evaluator through bceval's uniform verbs: the views (a git working tree with the patch as uncommitted
changes, nothing naming the entry or its gold), the oracle, a silent agent, re-scoring under another provider, the
viewer; and, on BC-Bench's 144 entries, the oracle, `[]` and shifted-line answers through the scoring core."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from agents import clean_environment
from cliutil import run_cli

from bceval.evaluators.pr_review.answers import parse_review
from bceval.evaluators.pr_review.entries import read_dataset
from bceval.evaluators.pr_review.matching import score_entry
from bceval.evaluators.pr_review.plugin import PR_REVIEW_EVALUATOR, Case
from bceval.evaluators.pr_review.providers import verdicts

BCBENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "bc-bench"
requires_bcbench = pytest.mark.skipif(not BCBENCH.is_dir(), reason=f"needs BC-Bench's code-review data at {BCBENCH}")
SECRET = "Hardcoded token in GetToken: store it in IsolatedStorage"
SILENT_AGENT = "open('review.json', 'w').write('[]')\n"


def new_file_patch(path: str, lines: list[str]) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    return f"{head}@@ -0,0 +1,{len(lines)} @@\n{body}"


def entry(instance: str, patch: str, gold: list[dict], base: str = "0" * 40, **more) -> dict:
    return {
        "repo": "microsoft/BCApps",
        "instance_id": instance,
        "base_commit": base,
        "patch": patch,
        "created_at": "2026-05-15T00:00:00Z",
        "environment_setup_version": "27.0",
        "project_paths": [],
        "metadata": {"area": "security", **more.pop("metadata", {})},
        "expected_comments": gold,
        "description": f"the answer of {instance} is line 3",
        **more,
    }


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    code = ["codeunit 50100 Tokens", "{", "    procedure GetToken(): Text", "    begin", "    end;", "}"]
    gold = {
        "file": "src/Tokens.Codeunit.al",
        "line_start": 3,
        "line_end": 3,
        "severity": "critical",
        "domain": "security",
        "body": SECRET,
        "articles": ["security/secrettext-for-credentials"],
    }
    lines = [
        entry("synthetic__secret-leak-1", new_file_patch("src/Tokens.Codeunit.al", code), [gold]),
        entry(
            "synthetic__clean-decoy-2",
            new_file_patch("src/Decoy.Table.al", ["table 50101 Decoy", "{", "}"]),
            [],
            metadata={"articles": ["security/permission-set-avoid-wildcard-grants"]},
        ),
    ]
    path = tmp_path / "codereview.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def every_byte(folder: Path) -> bytes:
    """Every file of a folder, git objects decompressed."""
    data = b""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        data += path.as_posix().encode() + b"\0" + (zlib.decompress(raw) if "objects" in path.parts else raw)
    return data


def test_views_show_the_patch_as_uncommitted_changes_and_nothing_of_the_entry(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    out = tmp_path / "out"
    code, printed, _ = run_cli(capsys, "prepare", "--evaluator", "pr-review", "--manifest", dataset, "--out", out)
    assert code == 0 and printed[-1].startswith("Prepared 2 case(s) of pr-review")
    views = sorted((out / "pr-review" / "prepared").iterdir())
    assert [v.name.startswith("pr-") for v in views] == [True, True]
    for view in views:
        log = subprocess.run(["git", "log", "--format=%s"], cwd=view, capture_output=True, text=True, check=True)
        assert log.stdout == "base\n"  # one commit, no history
        diff = subprocess.run(["git", "diff", "HEAD"], cwd=view, capture_output=True, text=True, check=True).stdout
        assert "new file mode" in diff and ("GetToken" in diff or "Decoy" in diff)
        data = every_byte(view)
        for secret in (
            b"synthetic__",
            b"secret-leak",
            b"clean-decoy",
            b"the answer of",
            SECRET.encode(),
            b'articles":',
        ):
            assert secret not in data, (view, secret)


def test_the_oracle_passes_a_silent_agent_passes_only_the_silent_entry(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    out = tmp_path / "out"
    common = ("--evaluator", "pr-review", "--manifest", dataset, "--out", out)
    assert run_cli(capsys, "answer", *common, "--adapter", "oracle")[0] == 0
    code, printed, _ = run_cli(capsys, "score", *common, "--adapter", "oracle")
    assert code == 0 and "micro F1 1.000" in printed[-1]
    agent = tmp_path / "silent.py"
    agent.write_text(SILENT_AGENT, encoding="utf-8")
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    live = ("--adapter", "command", "--command", f"{sys.executable} {agent}", "--timeout", "30")
    assert run_cli(capsys, "answer", *common, *live)[0] == 0
    assert run_cli(capsys, "score", *common, "--adapter", "command")[0] == 0
    run = out / "runs" / "command-pr-review"
    score = json.loads((run / "score.json").read_text(encoding="utf-8"))
    assert [(e["kind"], e["clean"], e["recall"]) for e in score["entries"]] == [
        ("positive", False, 0.0),
        ("negative", True, 1.0),
    ]
    assert score["numbers"]["silent"] == {"passed": 1, "entries": 1, "rate": 1.0}
    assert score["by_area"]["security"] == {
        "entries": 2,
        "precision": 1.0,
        "recall": 0.0,
        "f1": 0.0,
        "f0_5": 0.0,
        "f2": 0.0,
    }
    articles = {a["article"]: (a["recall"], a["n"], a["guard"], a["guard_n"]) for a in score["articles"]}
    assert articles == {
        "security/permission-set-avoid-wildcard-grants": (None, 0, 1.0, 1),
        "security/secrettext-for-credentials": (0.0, 1, None, 0),
    }
    assert score["verdicts"]["provider"] == "articles@5"
    record = json.loads((run / "run.json").read_text(encoding="utf-8"))
    assert [line["verdict"] for line in record["cases"]] == ["failed", "passed"]
    assert (run / "bcbench.jsonl").read_text(encoding="utf-8").count("\n") == 2

    code, printed, _ = run_cli(
        capsys,
        "pr-review",
        "score",
        "--manifest",
        dataset,
        "--out",
        out,
        "--adapter",
        "oracle",
        "--verdicts",
        "location@0",
    )
    assert code == 0 and "(location@0): micro F1 1.000" in printed[-1]
    code, _, error = run_cli(capsys, "pr-review", "score", "--manifest", dataset, "--out", out, "--verdicts", "vibes")
    assert code == 2 and error == ["bceval: --verdicts vibes: expected articles[@T], location[@T] or replay:FILE"]

    assert run_cli(capsys, "view", "--evaluator", "pr-review", "--out", out)[0] == 0
    site = out / "view" / "pr-review"
    page = next((site / "oracle-pr-review").glob("*.html")).read_text(encoding="utf-8")
    assert "GetToken" in page or "Decoy" in page
    assert "micro F1" in (site / "index.html").read_text(encoding="utf-8")


def test_a_run_of_unreadable_reviews_says_so_and_a_broken_score_is_one_line(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    out = tmp_path / "out"
    agent = tmp_path / "garbage.py"
    agent.write_text("open('review.json', 'w').write('{not json')\n", encoding="utf-8")
    common = ("--evaluator", "pr-review", "--manifest", dataset, "--out", out, "--adapter", "command")
    assert run_cli(capsys, "answer", *common, "--command", f"{sys.executable} {agent}", "--timeout", "30")[0] == 0
    code, printed, _ = run_cli(capsys, "score", *common)
    assert code == 0 and "micro F1 0.000, P 1.000, R 0.000 over 2 entries (2 without a readable review)" in printed[-1]
    run = out / "runs" / "command-pr-review"
    (run / "answers.json").write_text("[]", encoding="utf-8")
    code, _, error = run_cli(capsys, "score", *common)
    assert code == 2 and error == [
        f"bceval: {run / 'answers.json'}: not the answers of a run (agent, failures); answer the run again"
    ]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "score.json").write_text('{"kind": "bceval-pr-review-score"}', encoding="utf-8")
    code, _, error = run_cli(capsys, "pr-review", "compare", "--control", run, "--treatment", broken)
    assert code == 2 and error == [f"bceval: {broken / 'score.json'}: not the score.json of a pr-review run"]
    shutil.copytree(broken, out / "runs" / "broken")
    code, _, error = run_cli(capsys, "view", "--evaluator", "pr-review", "--out", out)
    broken_score = out / "runs" / "broken" / "score.json"
    assert code == 2 and error == [
        f"bceval: {broken_score}: not a whole pr-review score (KeyError 'dataset'); score it again"
    ]
    code, _, error = run_cli(capsys, "pr-review", "coverage", "--manifest", dataset, "--corpus", tmp_path / "none")
    knowledge = tmp_path / "none" / "microsoft" / "knowledge"
    assert code == 2 and error == [
        f"bceval: {knowledge}: no such folder: coverage counts a BCQuality checkout's articles"
    ]


def test_an_entry_changing_existing_files_needs_a_bcapps_checkout(tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    repo = tmp_path / "bcapps"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "Old.Codeunit.al").write_text("codeunit 1 Old\n{\n}\n", encoding="utf-8")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], cwd=repo, check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    (repo / "src" / "Old.Codeunit.al").write_text("codeunit 1 Old\n{\n    // changed\n}\n", encoding="utf-8")
    patch = subprocess.run([*git, "diff"], cwd=repo, capture_output=True, text=True, check=True).stdout
    subprocess.run([*git, "checkout", "-q", "--", "."], cwd=repo, check=True)
    gold = [{"file": "src/Old.Codeunit.al", "line_start": 3, "severity": "low", "body": "a comment"}]
    manifest = tmp_path / "set.jsonl"
    manifest.write_text(json.dumps(entry("synthetic__upgrade-1", patch, gold, base)) + "\n", encoding="utf-8")
    common = ("--evaluator", "pr-review", "--manifest", manifest, "--out", tmp_path / "out")
    code, printed, _ = run_cli(capsys, "prepare", *common)
    assert (
        code == 0
        and "skipped, no view can be built: synthetic__upgrade-1 (" in printed[0]
        and "BCEVAL_BCAPPS" in printed[0]
    )
    monkeypatch.setenv("BCEVAL_BCAPPS", str(repo))
    assert run_cli(capsys, "prepare", *common)[1] == [
        "Prepared 1 case(s) of pr-review in " + str(tmp_path / "out" / "pr-review" / "prepared")
    ]
    view = next((tmp_path / "out" / "pr-review" / "prepared").iterdir())
    diff = subprocess.run(["git", "diff", "HEAD"], cwd=view, capture_output=True, text=True, check=True).stdout
    assert "+    // changed" in diff and "new file" not in diff


@requires_bcbench
def test_on_bcbench_the_oracle_scores_1_silence_passes_the_negatives_and_lines_shift_within_tolerance() -> None:
    loaded = PR_REVIEW_EVALUATOR.load(Path("."), BCBENCH / "codereview.jsonl")
    entries = read_dataset(BCBENCH / "codereview.jsonl").entries
    assert len(entries) == 144
    for spec in ("articles", "articles@0", "location", "location@0"):
        for one in entries:
            answer = PR_REVIEW_EVALUATOR.known_answer(loaded, Case("x", one, "minimal"))["review.json"]
            found = parse_review(answer.decode()).findings
            assert score_entry(one.expected_comments, one.ignored_comments, found, verdicts(spec)).score.f(1) == 1.0
    silent = [score_entry(e.expected_comments, [], [], verdicts("articles")).score for e in entries]
    assert sum(s.f(1) == 1.0 for s in silent) == sum(not e.expected_comments for e in entries) == 37
    assert all(s.recall == 0 for s, e in zip(silent, entries, strict=True) if e.expected_comments)
    matched = {3: 0, 10: 0}  # gold comments matched; at 10, to their own shifted copy
    for e in entries:
        for shift in matched:
            found = [c.model_copy(update={"line_start": c.line_start + shift}) for c in e.expected_comments]
            scored = score_entry(e.expected_comments, [], found, verdicts("location@5"))
            matched[shift] += scored.score.matched if shift == 3 else sum(p.gold == p.found for p in scored.chosen)
    # at 10 lines only a gold range of 5 or more lines still reaches its copy (the distance is to the range)
    ranges = sum((c.line_end or c.line_start) - c.line_start >= 5 for e in entries for c in e.expected_comments)
    assert matched == {3: 235, 10: ranges} and ranges == 4


def test_a_two_arm_experiment_compares_the_oracle_with_a_silent_reviewer(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    agent = tmp_path / "silent.py"
    agent.write_text(SILENT_AGENT, encoding="utf-8")
    experiment = tmp_path / "pr.yaml"
    experiment.write_text(
        f"name: pr-demo\nepochs: 1\ndefaults:\n  corpus: {tmp_path}\n  manifest: {dataset}\n  evaluator: pr-review\n"
        f"  command: {sys.executable} {agent}\narms:\n  - name: oracle\n    adapter: oracle\n"
        "  - name: silent\n    adapter: command\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run_cli(capsys, "experiment", "run", experiment, "--out", out)[0] == 0
    report = json.loads((out / "experiments" / "pr-demo" / "report.json").read_text(encoding="utf-8"))
    overall = report["comparisons"][0]["result"]["overall"]
    assert (overall["control_mean"], overall["treatment_mean"], overall["difference"]) == (1.0, 0.5, -0.5)
    code, printed, _ = run_cli(capsys, "view", "--evaluator", "pr-review", "--out", out)
    assert code == 0 and printed[-1].endswith("(2 run(s))")
    arms = out / "experiments" / "pr-demo" / "variants"
    control, treatment = (next(arms.glob(f"*/*/{arm}-e1/run-0001")) for arm in ("oracle", "silent"))
    code, printed, _ = run_cli(capsys, "pr-review", "compare", "--control", control, "--treatment", treatment)
    compared = json.loads("\n".join(printed))
    assert (compared["entries"], compared["control_f1"], compared["treatment_f1"]) == (2, 1.0, 0.5)
    assert (compared["difference"], compared["micro_difference"]) == (-0.5, -1.0)
    rescored = ("pr-review", "score", "--manifest", dataset, "--run", "x", "--verdicts", "location@0")
    shutil.copytree(treatment, out / "runs" / "x")
    assert run_cli(capsys, *rescored, "--out", out)[0] == 0
    code, _, error = run_cli(capsys, "pr-review", "compare", "--control", control, "--treatment", out / "runs" / "x")
    assert code == 2 and error == [
        "bceval: compare: the runs differ in dataset, verdict provider or prompt; they do not compare"
    ]


PRINTING_AGENT = """
import json, subprocess
diff = subprocess.run(["git", "diff", "HEAD"], capture_output=True, text=True, check=True).stdout
found = [{"file": "src/Tokens.Codeunit.al", "line_start": 4, "severity": "high", "body": "a secret",
          "articles": ["security/secrettext-for-credentials"]}] if "GetToken" in diff else []
print("My review:\\n```json\\n" + json.dumps(found) + "\\n```")
"""


def test_an_answer_printed_on_stdout_is_read_when_no_review_json_is_written(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    monkeypatch.setenv("BCEVAL_LIVE", "1")
    agent = tmp_path / "printing.py"
    agent.write_text(PRINTING_AGENT, encoding="utf-8")
    common = ("--evaluator", "pr-review", "--manifest", dataset, "--out", tmp_path / "out")
    assert run_cli(capsys, "answer", *common, "--adapter", "command", "--command", f"{sys.executable} {agent}")[0] == 0
    assert run_cli(capsys, "score", *common, "--adapter", "command")[0] == 0
    score = json.loads((tmp_path / "out" / "runs" / "command-pr-review" / "score.json").read_text(encoding="utf-8"))
    assert [e["clean"] for e in score["entries"]] == [True, True]
    assert score["numbers"]["severity"] == {"mae_weighted": 1.0, "mae_pooled": 1.0, "exact": 0.0, "pairs": 1}
    assert score["verdicts"]["by_article"] == 1


def test_an_experiment_refuses_arms_reading_different_datasets(tmp_path, capsys, monkeypatch, dataset):
    clean_environment(monkeypatch)
    other = tmp_path / "other.jsonl"
    other.write_text(dataset.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    experiment = tmp_path / "pr.yaml"
    experiment.write_text(
        f"name: pr-pins\nepochs: 1\ndefaults:\n  corpus: {tmp_path}\n  evaluator: pr-review\n  adapter: oracle\n"
        f"arms:\n  - name: a\n    manifest: {dataset}\n  - name: b\n    manifest: {other}\n",
        encoding="utf-8",
    )
    code, _, error = run_cli(capsys, "experiment", "run", experiment, "--out", tmp_path / "out")
    assert code == 2 and error[-1].endswith("arm 'b' reads another dataset than arm 'a'")


@requires_bcbench
def test_no_byte_of_a_bcbench_view_names_its_entry_or_gold(tmp_path, capsys, monkeypatch):
    clean_environment(monkeypatch)
    lines = (BCBENCH / "codereview.jsonl").read_text(encoding="utf-8").splitlines()[::12]  # 12 entries
    manifest = tmp_path / "some.jsonl"
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert run_cli(capsys, "prepare", "--evaluator", "pr-review", "--manifest", manifest, "--out", out)[0] == 0
    data = every_byte(out / "pr-review" / "prepared")
    entries = [json.loads(line) for line in lines]
    secrets = {e["instance_id"] for e in entries} | {e["description"] for e in entries}
    secrets |= {c["body"] for e in entries for c in e["expected_comments"]}
    assert len(secrets) > 24 and not [s for s in secrets if s.encode() in data]
