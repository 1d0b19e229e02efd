"""Bad input through the real CLI: one clear line naming the file, the right exit code, nothing lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cliutil import run_cli
from graphutil import snapshot


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("BCEVAL_CORPUS", "BCEVAL_MANIFEST", "BCEVAL_OUT", "SOURCE_DATE_EPOCH"):
        monkeypatch.delenv(key, raising=False)


def prepare(capsys, corpus, out):
    return run_cli(capsys, "prepare", "--corpus", str(corpus), "--out", str(out))


def test_validate_prints_the_passed_line(small_corpus, tmp_path, capsys):
    code, out, err = run_cli(capsys, "validate", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o"))
    assert code == 0
    assert out == ["Review fixture validation PASSED: 4 cases cover 2 leaf domains."] and err == []


def test_validate_lists_every_problem_and_exits_1(small_corpus, tmp_path, capsys):
    data = dict(small_corpus.manifest_data, version=3, selection="best", minimumCleanRate=1.5)
    data["overrides"] = {"nosuch": {"article": "x"}, "performance": {"article": "missing-one"}}
    small_corpus.write_manifest(data)
    code, out, err = run_cli(capsys, "validate", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o"))
    assert code == 1
    assert out[0] == "Review fixture validation FAILED with 7 problem(s):"
    assert out[1:] == [
        "  - Unsupported review fixture manifest version: 3 (expected 2).",
        "  - Unsupported selection strategy: \"best\" (expected 'first-paired-al-article').",
        "  - minimumCleanRate must be between 0 and 1, got 1.5.",
        "  - Override domain 'nosuch' has no registered al-nosuch-review leaf",
        "  - performance: override article does not exist: missing-one.md",
        "  - performance: no positive review fixture",
        "  - performance: no clean control fixture",
    ]


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda c, t: ["--corpus", str(t / "absent")], "corpus directory does not exist"),
        (lambda c, t: ["--corpus", str(c.manifest)], "corpus path is not a directory"),
        (lambda c, t: ["--corpus", str(c.root), "--manifest", str(t / "none.json")], "manifest not found"),
    ],
)
def test_unusable_paths_are_one_line_exit_2(small_corpus, tmp_path, capsys, setup, expected):
    code, out, err = run_cli(capsys, "prepare", *setup(small_corpus, tmp_path), "--out", str(tmp_path / "o"))
    assert code == 2
    assert len(err) == 1 and expected in err[0]
    assert not (tmp_path / "o" / "review").exists()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"{not json", "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2"),
        (b'{"version": 2, "version": 2}', "invalid JSON: duplicate key 'version' at $"),
        (b'{"version": NaN}', "invalid JSON: NaN is not valid JSON"),
        (b'{"selection": "caf\xe9"}', "not valid UTF-8 (byte 0xE9 at offset 18)"),
    ],
)
def test_unreadable_manifest_is_one_line_exit_2(small_corpus, tmp_path, capsys, content, expected):
    small_corpus.manifest.write_bytes(content)
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2
    assert err == [f"bceval: {small_corpus.manifest}: {expected}"]
    assert small_corpus.manifest.read_bytes() == content


def test_threshold_that_is_not_a_number_is_a_listed_problem(small_corpus, tmp_path, capsys):
    small_corpus.write_manifest(dict(small_corpus.manifest_data, minimumExpectedRecall="high"))
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 1
    assert '  - minimumExpectedRecall must be a number, got "high".' in out


def test_non_utf8_sample_names_the_file(small_corpus, tmp_path, capsys):
    sample = small_corpus.root / "microsoft/knowledge/performance/alpha-check.bad.al"
    sample.write_bytes(b'codeunit 50100 "Caf\xe9"\n{\n}\n')
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2
    assert err == [f"bceval: {sample}: not valid UTF-8 (byte 0xE9 at offset 19)"]


def test_non_utf8_article_names_the_file(small_corpus, tmp_path, capsys):
    md = small_corpus.root / "microsoft/knowledge/performance/beta-loop.md"
    md.write_bytes(md.read_bytes().replace(b"Does a thing.", b"Does \xff thing."))
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"bceval: {md}: not valid UTF-8")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_symlink_leading_outside_the_corpus_is_refused(small_corpus, tmp_path, capsys):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\ndomain: performance\n---\n")
    os.symlink(outside, small_corpus.root / "microsoft/knowledge/performance/sneaky.md")
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2
    assert len(err) == 1 and err[0].endswith("sneaky.md: symbolic link leads outside the corpus")


def test_foreign_non_empty_prepare_directory_is_refused_and_untouched(small_corpus, tmp_path, capsys):
    review = tmp_path / "o" / "review"
    review.mkdir(parents=True)
    (review / "notes.txt").write_text("mine")
    (review / "request-x.json").write_text("{}")
    before = snapshot(review)
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2
    assert err == [
        f"bceval: {review}: prepare directory is not empty and has no .bcquality-evaluation marker; "
        "choose an empty or new directory"
    ]
    assert snapshot(review) == before


def test_ranking_gate_failure_names_case_and_article_and_writes_nothing_for_the_domain(corpus, tmp_path, capsys):
    corpus.leaf("performance")
    for number in range(11):
        corpus.article("performance", f"rule-{number:02d}", keywords=[f"token{number}"])
    # every other article's keyword is in the sample, the selected article's is not
    sample = " ".join(f"token{n}" for n in range(1, 11))
    corpus.write("microsoft/knowledge/performance/rule-00.bad.al", f"codeunit 50100 X {{ {sample} }}\n")
    code, out, err = prepare(capsys, corpus.root, tmp_path / "o")
    assert code == 1
    assert out[0] == "Review fixture preparation FAILED with 1 problem(s):"
    assert out[1].startswith(
        "  - performance-bad: ranking gate failed: microsoft/knowledge/performance/rule-00.md is not among the 10"
    )
    assert "override" in out[1]
    assert not list((tmp_path / "o" / "review").glob("*performance*"))


def test_malformed_frontmatter_becomes_an_unparsed_row(small_corpus, tmp_path, capsys):
    small_corpus.write("microsoft/knowledge/performance/broken.md", "no frontmatter here\n# Title\n")
    code, _, _ = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 0
    index = json.loads((tmp_path / "o/review/knowledge-index.json").read_text())
    broken = [row for row in index["articles"] if row["path"].endswith("broken.md")]
    assert broken == [
        {
            "path": "microsoft/knowledge/performance/broken.md",
            "layer": "microsoft",
            "domain": "performance",
            "bc-version": [],
            "technologies": [],
            "countries": [],
            "application-area": [],
            "keywords": [],
            "title": "",
            "description": "",
            "parsed": False,
        }
    ]


def test_force_rebuild_and_module_entry_point(small_corpus, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BCEVAL_")}
    args = [sys.executable, "-m", "bceval", "prepare", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "o")]
    first = subprocess.run(args, capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([*args, "--force"], capture_output=True, text=True, env=env)
    assert again.returncode == 0
    assert ".  cases" not in again.stdout + again.stderr  # the build steps are listed only with -v
    assert "Prepared 4 neutral fixture(s)" in again.stdout
    verbose = subprocess.run([*args, "--force", "-v"], capture_output=True, text=True, env=env)
    assert ".  cases" in verbose.stderr and ".  prepare" in verbose.stderr and ".  cases" not in verbose.stdout


def test_line_separator_characters_in_a_title_do_not_break_prepare(small_corpus, tmp_path, capsys):
    md = small_corpus.root / "microsoft/knowledge/performance/beta-loop.md"
    md.write_text(md.read_text().replace("# Beta Loop", "# Beta\u2028Loop\u0085end"), encoding="utf-8")
    code, _, _ = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 0
    index = json.loads((tmp_path / "o/review/knowledge-index.json").read_text(encoding="utf-8"))
    assert any(row["title"] == "Beta\u2028Loop\u0085end" for row in index["articles"])


@pytest.mark.parametrize("value", ["abc", "99999999999999999"])
def test_bad_source_date_epoch_is_one_line(small_corpus, tmp_path, capsys, monkeypatch, value):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2 and len(err) == 1 and "SOURCE_DATE_EPOCH" in err[0] and value in err[0]


def test_out_that_is_a_file_is_one_line(small_corpus, tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("mine")
    code, out, err = prepare(capsys, small_corpus.root, target)
    assert code == 2 and err == [f"bceval: {target}: output path exists and is not a directory"]
    assert target.read_text() == "mine"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_layer_folder_linked_outside_the_corpus_is_refused(small_corpus, tmp_path, capsys):
    outside = tmp_path / "elsewhere"
    (outside / "knowledge" / "performance").mkdir(parents=True)
    os.symlink(outside, small_corpus.root / "custom")
    code, out, err = prepare(capsys, small_corpus.root, tmp_path / "o")
    assert code == 2 and len(err) == 1 and "custom/knowledge: leads outside the corpus" in err[0]


def test_outputs_get_ordinary_file_modes(small_corpus, tmp_path, capsys):
    old = os.umask(0o022)
    try:
        assert prepare(capsys, small_corpus.root, tmp_path / "o")[0] == 0
    finally:
        os.umask(old)
    modes = {p.stat().st_mode & 0o777 for p in (tmp_path / "o/review").iterdir()}
    assert modes == {0o644}
