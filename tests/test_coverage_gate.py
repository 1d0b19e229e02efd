"""The coverage report (`--coverage-report`, `doit coverage`) and the changed-paths gate (`--changed-paths`,
`--changed-from`, BCEVAL_CHANGED_FROM) of review-dialects.md §6, §7, §11.4 and §11.5, for every manifest."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cliutil import run_cli
from conftest import SHARED_CORPUS, requires_shared
from fork_manifests import cut_down, fork_selections
from graphutil import run_graph

from bceval.config import load_settings
from bceval.corpus.layers import scan_corpus
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.coverage import changed_lines, coverage_document
from bceval.evaluators.review.manifest import check_manifest
from bceval.jsonio import dumps

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "evaluation" / "demo-corpus"
DEMO_ARTICLES = REPO / "evaluation" / "fixtures" / "review" / "demo-articles-manifest.json"
GATE = "Changed paired article is not selected for evaluation and has no coverage waiver: "

# The coverage report of the demo corpus under its `articles` variant, byte for byte (§11.4).
DEMO_ARTICLES_REPORT = """{
  "pairedArticles": 29,
  "selectedArticles": 9,
  "coverage": 0.3103448275862069,
  "domains": [
    {
      "domain": "error-handling",
      "pairedArticles": 3,
      "selectedArticles": 1,
      "coverage": 0.3333333333333333
    },
    {
      "domain": "events",
      "pairedArticles": 3,
      "selectedArticles": 1,
      "coverage": 0.3333333333333333
    },
    {
      "domain": "performance",
      "pairedArticles": 11,
      "selectedArticles": 3,
      "coverage": 0.2727272727272727
    },
    {
      "domain": "security",
      "pairedArticles": 4,
      "selectedArticles": 2,
      "coverage": 0.5
    },
    {
      "domain": "ui",
      "pairedArticles": 4,
      "selectedArticles": 1,
      "coverage": 0.25
    },
    {
      "domain": "upgrade",
      "pairedArticles": 4,
      "selectedArticles": 1,
      "coverage": 0.25
    }
  ]
}
"""

# §6's example, its `domains` shortened to appsource and query as the spec prints it
SPEC_EXAMPLE = """{
  "pairedArticles": 190,
  "selectedArticles": 27,
  "coverage": 0.14210526315789473,
  "domains": [
    {
      "domain": "appsource",
      "pairedArticles": 3,
      "selectedArticles": 1,
      "coverage": 0.3333333333333333
    },
    {
      "domain": "query",
      "pairedArticles": 2,
      "selectedArticles": 2,
      "coverage": 1
    }
  ]
}
"""


# --- the coverage report ---------------------------------------------------------------------------------------


def test_demo_articles_variant_report_is_byte_exact_at_a_relative_path_in_new_folders(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(
        capsys, "prepare", "--corpus", DEMO, "--manifest", DEMO_ARTICLES, "--out", tmp_path / "out",
        "--coverage-report", "reports/deep/coverage.json",
    )  # fmt: skip
    assert (code, err) == (0, [])
    assert out[-1] == "Review fixture validation PASSED: 18 cases cover 6 leaf domains."  # the line is unchanged
    assert (tmp_path / "reports" / "deep" / "coverage.json").read_bytes() == DEMO_ARTICLES_REPORT.encode()
    cases = json.loads((tmp_path / "out" / ".build" / "review" / "cases.json").read_text())["cases"]
    security = [(c["id"], c.get("context") is not None) for c in cases if c["domain"] == "security"]
    assert security == [
        ("security-bad", True),
        ("security-good", True),
        ("security-mask-credential-fields-on-pages-bad", True),
        ("security-mask-credential-fields-on-pages-good", True),
    ]
    # each request case carries the context, the non-first article's too
    from bceval.evaluators.base import model_id

    second = model_id("security-mask-credential-fields-on-pages-bad")
    request = json.loads((tmp_path / "out" / "review" / f"request-{second}.json").read_text())
    assert request["cases"] == [
        {
            "id": second,
            "file": f"{second}.al",
            "context": "The external document number is passed through unchanged from a customer portal request.",
        }
    ]


def test_the_demo_manifest_report_counts_primary_and_additional_articles(tmp_path, capsys):
    report = tmp_path / "coverage.json"
    code, _, _ = run_cli(capsys, "validate", "--corpus", DEMO, "--out", tmp_path / "out", "--coverage-report", report)
    document = json.loads(report.read_text())
    assert code == 0
    assert [(d["domain"], d["selectedArticles"]) for d in document["domains"]] == [
        ("error-handling", 1),
        ("events", 1),
        ("performance", 3),  # the convention's article and both additionalArticles
        ("security", 1),
        ("ui", 1),
        ("upgrade", 1),
    ]


def test_empty_and_failed_domains_appear_and_the_report_is_written_when_validation_fails(corpus, tmp_path, capsys):
    corpus.leaf("empty")
    corpus.leaf("full")
    corpus.article("full", "only")
    corpus.leaf("broken")
    corpus.article("broken", "b1")
    corpus.overrides({"broken": {"articles": ["nope"]}})
    report = tmp_path / "coverage.json"
    code, out, _ = run_cli(
        capsys, "validate", "--corpus", corpus.root, "--out", tmp_path / "out", "--coverage-report", report
    )
    assert code == 1 and out[0].startswith("Review fixture validation FAILED")
    assert json.loads(report.read_text()) == {
        "pairedArticles": 2,
        "selectedArticles": 1,
        "coverage": 0.5,
        "domains": [
            {"domain": "broken", "pairedArticles": 1, "selectedArticles": 0, "coverage": 0},
            {"domain": "empty", "pairedArticles": 0, "selectedArticles": 0, "coverage": 0},
            {"domain": "full", "pairedArticles": 1, "selectedArticles": 1, "coverage": 1},
        ],
    }


def test_no_report_when_the_command_stops_with_exit_2(corpus, tmp_path, capsys):
    corpus.leaf("full")
    corpus.article("full", "only")
    report = tmp_path / "coverage.json"
    base = ["validate", "--corpus", corpus.root, "--out", tmp_path / "out", "--coverage-report", report]
    code, _, err = run_cli(capsys, *base, "--changed-paths", tmp_path / "missing.txt")
    assert code == 2 and err == [f"bceval: {tmp_path / 'missing.txt'}: changed-paths file not found"]
    code, _, err = run_cli(capsys, *base, "--changed-from", "no-such-ref")
    assert code == 2 and len(err) == 1 and "--changed-from no-such-ref" in err[0]
    corpus.write("evaluation/review-fixtures.json", "{not json")
    code, _, err = run_cli(capsys, *base)
    assert code == 2 and len(err) == 1
    assert not report.exists()


def test_both_gate_flags_are_a_usage_error_naming_both(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        run_cli(capsys, "validate", "--changed-paths", "a", "--changed-from", "b")
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert "--changed-from" in err and "--changed-paths" in err


def test_doit_coverage_writes_the_report_and_its_table(corpus, tmp_path, capsys):
    corpus.leaf("perf")
    corpus.article("perf", "a")
    corpus.article("perf", "b")
    corpus.overrides({"perf": {"articles": ["b"]}})
    settings = load_settings(cwd=tmp_path, environ={}, corpus=str(corpus.root), out=str(tmp_path / "out"))
    code, executed = run_graph(settings, "coverage")
    assert code == 0 and "coverage" in executed
    document = json.loads((tmp_path / "out" / "coverage.json").read_text())
    assert document["domains"] == [{"domain": "perf", "pairedArticles": 2, "selectedArticles": 1, "coverage": 0.5}]
    table = (tmp_path / "out" / "coverage.md").read_text()
    assert "| perf | 2 | 1 | 50.0% |" in table and table in capsys.readouterr().out


def test_a_run_with_a_report_leaves_the_next_plain_run_up_to_date(small_corpus, tmp_path, capsys):
    plain = load_settings(cwd=tmp_path, environ={}, corpus=str(small_corpus.root), out=str(tmp_path / "out"))
    report = load_settings(
        cwd=tmp_path, environ={"BCEVAL_COVERAGE_REPORT": str(tmp_path / "c.json")}, corpus=str(small_corpus.root),
        out=str(tmp_path / "out"),
    )  # fmt: skip
    plain.out.mkdir()
    assert run_graph(plain, "validate")[0] == 0
    code, executed = run_graph(report, "validate")
    assert code == 0 and "cases" in executed  # a report is written every time
    code, executed = run_graph(plain, "validate")
    assert code == 0 and "cases" not in executed  # the cases themselves did not change


@requires_shared
def test_spec_example_numbers_on_the_shared_corpus():
    """§6: rs-tve@d1022f4 cut down to what is paired on 841b4e7, without the article that fails the ranking gate
    there (§13), with two more upgrade articles."""
    listing = scan_corpus(SHARED_CORPUS)
    data = cut_down(fork_selections()["rs-tve@d1022f4"], listing)
    data["overrides"]["performance"]["articles"].remove("avoid-get-inside-loop-on-large-table")
    data["overrides"]["upgrade"]["articles"] += ["upgrade-codeunit-subtype", "use-upgrade-tags-not-version-checks"]
    document = coverage_document(derive_cases(listing, check_manifest(data)))
    assert len(document["domains"]) == 16
    document["domains"] = [d for d in document["domains"] if d["domain"] in ("appsource", "query")]
    assert dumps(document) == SPEC_EXAMPLE


@requires_shared
def test_a_fork_manifest_prepares_on_the_shared_corpus(tmp_path, capsys):
    listing = scan_corpus(SHARED_CORPUS)
    data = cut_down(fork_selections()["rs-tve@d1022f4"], listing)
    data["overrides"]["performance"]["articles"].remove("avoid-get-inside-loop-on-large-table")  # §13
    data["overrides"]["events"] = {"article": "initialize-ishandled-to-false-before-publishing"}  # as 841b4e7's own
    manifest = tmp_path / "fork.json"
    manifest.write_text(json.dumps(data))
    code, out, err = run_cli(
        capsys, "prepare", "--corpus", SHARED_CORPUS, "--manifest", manifest, "--out", tmp_path / "out"
    )
    assert (code, err) == (0, [])
    assert out[-1] == "Review fixture validation PASSED: 50 cases cover 16 leaf domains."
    names = sorted(p.name for p in (tmp_path / "out" / "review").glob("request-case-*.json"))
    assert len(names) == 50


@requires_shared
def test_context_on_every_article_moves_the_ranking_gate(tmp_path, capsys):
    """§13: the upgrade context on a second article pushes datatransfer-skips-triggers-and-subscribers' good case out
    of its own candidates under `articles`; under `additionalArticles` (no context there) it prepares."""
    own = json.loads((SHARED_CORPUS / "evaluation" / "review-fixtures.json").read_text())
    context = own["overrides"]["upgrade"]["context"]
    fork = {**own, "overrides": {**own["overrides"]}}
    fork["overrides"]["upgrade"] = {
        "articles": ["initvalue-does-not-update-existing-rows", "datatransfer-skips-triggers-and-subscribers"],
        "context": context,
    }
    layered = {**own, "overrides": {**own["overrides"]}}
    layered["overrides"]["upgrade"] = {
        **own["overrides"]["upgrade"],
        "additionalArticles": ["datatransfer-skips-triggers-and-subscribers"],
    }
    results = {}
    for name, data in (("fork", fork), ("layered", layered)):
        manifest = tmp_path / f"{name}.json"
        manifest.write_text(json.dumps(data))
        results[name] = run_cli(
            capsys, "prepare", "--corpus", SHARED_CORPUS, "--manifest", manifest, "--out", tmp_path / name
        )
    code, out, _ = results["fork"]
    assert code == 1
    assert [line.split(":")[0].strip() for line in out[1:]] == [
        "- upgrade-datatransfer-skips-triggers-and-subscribers-good"
    ]
    assert results["layered"][0] == 0


# --- the changed-paths lines ----------------------------------------------------------------------------------


def test_changed_lines_are_read_exactly():
    text = "\r\n".join(
        [
            "  microsoft/knowledge/ui/a.md  ",
            "microsoft\\knowledge\\ui\\b.good.al",
            "./community/knowledge/ui/c.bad.al",
            "custom/knowledge/ui/d.good.al\rcustom/knowledge/ui/e.md\n",
            "microsoft/knowledge/ui/a.good.al",  # the same article again: once
            "microsoft/Knowledge/ui/f.md",  # bceval: case-sensitive, unlike the fork
            "Microsoft/knowledge/ui/g.md",
            "microsoft/knowledge/ui/h.MD",
            "microsoft/knowledge/ui/i.good.json",
            '"microsoft/knowledge/ui/\\303\\251.md"',  # git's quoting
            "microsoft/knowledge/README.md",
            "microsoft/skills/review/al-ui-review.md",
            "evaluation/review-fixtures.json",
            "microsoft/knowledge/ui/sub/j.md",
            "microsoft/knowledge/ui/x.good.al.md",
            "",
        ]
    )
    assert list(changed_lines(text)) == [
        "microsoft/knowledge/ui/a.md",
        "microsoft/knowledge/ui/b.md",
        "community/knowledge/ui/c.md",
        "custom/knowledge/ui/d.md",
        "custom/knowledge/ui/e.md",
        "microsoft/knowledge/ui/sub/j.md",  # a sub-folder has no paired article, so the gate never flags it
        "microsoft/knowledge/ui/x.good.al.md",
    ]


# --- the gate on a git repository -------------------------------------------------------------------------------


def git(folder: Path, *args: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environ.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=folder, env=environ, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout


@pytest.fixture
def pull_request(corpus, tmp_path):
    """A repository whose corpus lives in `corpus/`; `base` is the first commit, HEAD a branch that adds a new
    paired article, deletes one, adds an unpaired one, edits a shadowed copy, and touches files the gate ignores."""
    repo = tmp_path
    corpus.leaf("perf")
    corpus.article("perf", "alpha")
    corpus.article("perf", "old")
    corpus.article("perf", "shadowed")
    corpus.article("perf", "shadowed", layer="custom")
    corpus.overrides({"perf": {"articles": ["alpha"]}})  # the custom `shadowed` copy is not selected either
    corpus.write("README.md", "corpus\n")
    (repo / "elsewhere" / "microsoft" / "knowledge" / "perf").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "base")
    git(repo, "checkout", "-qb", "feature")
    corpus.article("perf", "fresh")  # new, paired, unselected: the one the gate must name
    for ending in (".md", ".good.al", ".bad.al"):
        (corpus.root / f"microsoft/knowledge/perf/old{ending}").unlink()  # deleted
    corpus.article("perf", "halfway", paired=False)  # not paired yet
    corpus.write("microsoft/knowledge/perf/halfway.good.al", "codeunit 1 H {}\n")
    corpus.write("microsoft/knowledge/perf/shadowed.md", "changed lower copy\n")  # the custom copy is checked
    corpus.write("microsoft/knowledge/perf/sub/deeper.md", "x\n")
    corpus.write("microsoft/knowledge/perf/sub/deeper.good.al", "x\n")
    corpus.write("microsoft/knowledge/perf/sub/deeper.bad.al", "x\n")
    corpus.write("microsoft/skills/review/al-perf-review.md", "# AL perf review\n\nChanged.\n\n## Output\n\nJSON.\n")
    corpus.write("README.md", "corpus, changed\n")
    for ending in (".md", ".good.al", ".bad.al"):  # outside the corpus folder: not the corpus's change
        (repo / "elsewhere" / "microsoft" / "knowledge" / "perf" / f"out{ending}").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "feature")
    corpus.article("perf", "uncommitted")  # a working-tree edit: --changed-from lists commits only
    return corpus


def validate(capsys, corpus, tmp_path, *gate):
    return run_cli(capsys, "validate", "--corpus", corpus.root, "--out", tmp_path / "out", *gate)


def test_the_gate_names_exactly_the_new_unselected_article_once(pull_request, tmp_path, capsys):
    code, out, err = validate(capsys, pull_request, tmp_path, "--changed-from", "base")
    assert (code, err) == (1, [])
    assert out == [
        "Review fixture validation FAILED with 1 problem(s):",
        f"  - {GATE}microsoft/knowledge/perf/fresh.md",
    ]


def test_a_waiver_lets_it_pass_ignoring_case(pull_request, tmp_path, capsys):
    pull_request.manifest_data["coverageWaivers"] = [
        {"path": "Microsoft/Knowledge/perf/FRESH.md", "reason": "reviewed by hand"}
    ]
    pull_request.write_manifest()
    code, out, _ = validate(capsys, pull_request, tmp_path, "--changed-from", "base")
    assert code == 0 and out == ["Review fixture validation PASSED: 2 cases cover 1 leaf domains."]


def test_selecting_it_lets_it_pass(pull_request, tmp_path, capsys):
    pull_request.overrides({"perf": {"articles": ["alpha", "fresh"]}})
    code, _, _ = validate(capsys, pull_request, tmp_path, "--changed-from", "base")
    assert code == 0


def test_an_additional_article_counts_as_selected(pull_request, tmp_path, capsys):
    pull_request.overrides({"perf": {"article": "alpha", "additionalArticles": ["fresh"]}})
    code, _, _ = validate(capsys, pull_request, tmp_path, "--changed-from", "base")
    assert code == 0


def test_a_changed_paths_file_with_crlf_and_a_bom_gates_the_same(pull_request, tmp_path, capsys):
    listed = git(tmp_path, "diff", "--name-only", "base", "HEAD", "--relative=corpus").split("\n")
    changed = tmp_path / "changed.txt"
    changed.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(listed).encode())
    code, out, _ = validate(capsys, pull_request, tmp_path, "--changed-paths", changed)
    assert code == 1 and out[1:] == [f"  - {GATE}microsoft/knowledge/perf/fresh.md"]


def test_gate_problems_come_last_and_prepare_writes_no_requests(pull_request, tmp_path, capsys):
    pull_request.overrides({"perf": {"articles": ["alpha", "nope"]}})
    code, out, _ = run_cli(
        capsys, "prepare", "--corpus", pull_request.root, "--out", tmp_path / "out", "--changed-from", "base"
    )
    assert code == 1
    assert out[1:] == [
        "  - perf: override article does not exist: nope.md",
        f"  - {GATE}microsoft/knowledge/perf/fresh.md",
    ]
    assert not list((tmp_path / "out" / "review").glob("request-*.json"))


def test_doit_validate_gates_when_bceval_changed_from_is_set(pull_request, tmp_path, capsys):
    environ = {"BCEVAL_CHANGED_FROM": "base"}
    settings = load_settings(cwd=tmp_path, environ=environ, corpus=str(pull_request.root), out=str(tmp_path / "o"))
    assert settings.changed_from == "base" and settings.changed_paths is None  # health's setting stays off
    settings.out.mkdir()  # as the command line's open_output does
    code, _ = run_graph(settings, "validate")
    assert code == 1 and f"{GATE}microsoft/knowledge/perf/fresh.md" in capsys.readouterr().out
    unset = load_settings(cwd=tmp_path, environ={}, corpus=str(pull_request.root), out=str(tmp_path / "o"))
    assert run_graph(unset, "validate")[0] == 0


def test_health_changed_paths_does_not_switch_the_gate_on(pull_request, tmp_path, capsys):
    changed = tmp_path / "changed.txt"
    changed.write_text("microsoft/knowledge/perf/fresh.md\n")
    environ = {"BCEVAL_CHANGED_PATHS": str(changed)}
    settings = load_settings(cwd=tmp_path, environ=environ, corpus=str(pull_request.root), out=str(tmp_path / "o"))
    assert settings.gate_paths is None and settings.changed_paths == changed
    assert run_graph(settings, "validate")[0] == 0


def test_a_corpus_outside_git_refuses_changed_from_in_one_line(small_corpus, tmp_path, capsys):
    code, _, err = validate(capsys, small_corpus, tmp_path, "--changed-from", "main")
    assert code == 2 and len(err) == 1 and err[0].startswith("bceval: --changed-from main: ")


def test_of_two_copies_the_effective_one_is_checked(corpus):
    from bceval.evaluators.review.coverage import gate_problems

    corpus.leaf("perf")
    corpus.article("perf", "alpha")
    corpus.article("perf", "twin")
    corpus.article("perf", "twin", layer="custom")
    corpus.overrides({"perf": {"articles": ["alpha"]}})
    listing = scan_corpus(corpus.root)
    checked = check_manifest(json.loads(corpus.manifest.read_text()))
    changed = list(changed_lines("microsoft/knowledge/perf/twin.md\ncustom/knowledge/perf/twin.bad.al\n"))
    assert gate_problems(derive_cases(listing, checked), checked.waivers, changed) == [
        f"{GATE}custom/knowledge/perf/twin.md"
    ]
    assert gate_problems(derive_cases(listing, checked), ["CUSTOM/knowledge/perf/twin.md"], changed) == []


# --- unusable gate and report inputs: one line, exit 2, nothing written -----------------------------------------


@pytest.mark.parametrize("ref", ["--output=leak", ""])
def test_a_ref_git_would_read_as_an_option_or_an_empty_ref_is_refused(pull_request, tmp_path, capsys, monkeypatch, ref):
    monkeypatch.chdir(tmp_path)  # git would write `--output=leak`'s file in its folder, the corpus; look in both
    code, _, err = validate(capsys, pull_request, tmp_path, f"--changed-from={ref}")
    assert code == 2 and len(err) == 1 and err[0].startswith(f"bceval: --changed-from {ref or repr('')}: ")
    assert not [*tmp_path.glob("leak*"), *pull_request.root.glob("leak*")]
    assert not (tmp_path / "out").exists()


def test_a_corpus_outside_git_is_named_as_such(small_corpus, tmp_path, capsys):
    code, _, err = validate(capsys, small_corpus, tmp_path, "--changed-from", "main")
    assert err == [f"bceval: --changed-from main: {small_corpus.root} is not in a git checkout"]


def test_a_changed_paths_fifo_is_refused_without_waiting_for_a_writer(small_corpus, tmp_path, capsys):
    import threading

    fifo = tmp_path / "changed.fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def unblock() -> None:  # a reader blocked on the FIFO gets an empty file after 3 s, so the test fails, not hangs
        while not done.wait(3):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                continue

    threading.Thread(target=unblock, daemon=True).start()
    try:
        code, _, err = validate(capsys, small_corpus, tmp_path, "--changed-paths", fifo)
    finally:
        done.set()
    assert code == 2 and err == [f"bceval: {fifo}: changed-paths file not found"]


@pytest.mark.parametrize("where", ["folder", "under-a-file"])
def test_an_unwritable_coverage_report_path_stops_before_any_work(small_corpus, tmp_path, capsys, where):
    (tmp_path / "taken").mkdir()
    (tmp_path / "plain").write_text("x\n")
    report = tmp_path / "taken" if where == "folder" else tmp_path / "plain" / "coverage.json"
    code, _, err = validate(capsys, small_corpus, tmp_path, "--coverage-report", report)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"bceval: {report}: cannot write the coverage report")
    assert not (tmp_path / "out").exists()
