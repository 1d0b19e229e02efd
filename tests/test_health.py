"""Corpus health: each finding kind is reported where it must be and not for its look-alike."""

from __future__ import annotations

import json

import pytest
from conftest import DEMO_CORPUS
from graphutil import run_graph, settings_for

from bceval.cli import main
from bceval.evaluators.review.health.leaks import _code_and_comment, _label_hits


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("BCEVAL_CORPUS", "BCEVAL_MANIFEST", "BCEVAL_OUT", "BCEVAL_HEALTH_MARGIN", "BCEVAL_CHANGED_PATHS"):
        monkeypatch.delenv(key, raising=False)


def health(capsys, corpus, out, *extra):
    code = main(["health", "--corpus", str(corpus.root), "--out", str(out), *extra])
    err = capsys.readouterr().out  # the findings and the summary are the command's result
    report = json.loads((out / "health.json").read_text()) if (out / "health.json").exists() else None
    return code, err, report


def kinds(report, kind):
    return [f for f in report["findings"] if f["kind"] == kind]


def test_clean_small_corpus_has_no_errors_and_full_coverage_table(small_corpus, tmp_path, capsys):
    code, err, report = health(capsys, small_corpus, tmp_path / "out", "--strict")
    assert code == 0 and report["errors"] == 0
    assert "Corpus health OK" in err.strip().splitlines()[-1]
    assert [(d["domain"], d["paired"], d["exercised"]) for d in report["coverage"]["domains"]] == [
        ("performance", 2, 1),
        ("security", 1, 1),
    ]
    assert report["coverage"]["domains"][0]["unexercised"] == ["microsoft/knowledge/performance/beta-loop.md"]
    assert (tmp_path / "out" / "health.md").read_text().startswith("# Corpus health: corpus")


def test_unpaired_odd_extension_and_orphan_samples(small_corpus, tmp_path, capsys):
    folder = "microsoft/knowledge/performance"
    small_corpus.write(f"{folder}/half.md", "---\ndomain: performance\n---\n# Half\n")
    small_corpus.write(f"{folder}/half.good.al", "codeunit 1 X {}\n")
    small_corpus.write(f"{folder}/js-sample.md", "---\ndomain: performance\n---\n# Js\n")
    small_corpus.write(f"{folder}/js-sample.good.js", "x\n")
    small_corpus.write(f"{folder}/lonely.bad.al", "codeunit 2 Y {}\n")
    small_corpus.write(f"{folder}/guidance-only.md", "---\ndomain: performance\n---\n# Prose only\n")  # look-alike
    _, _, report = health(capsys, small_corpus, tmp_path / "out")
    assert [f["path"] for f in kinds(report, "unpaired-article")] == [f"{folder}/half.md"]
    assert [f["path"] for f in kinds(report, "sample-extension")] == [f"{folder}/js-sample.good.js"]
    assert [f["path"] for f in kinds(report, "orphan-sample")] == [f"{folder}/lonely.bad.al"]


def test_leaf_without_knowledge_is_an_error_and_strict_fails(small_corpus, tmp_path, capsys):
    small_corpus.leaf("events")
    small_corpus.write("microsoft/knowledge/events/prose.md", "---\ndomain: events\n---\n# Prose\n")
    code = main(["health", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "out"), "--strict"])
    # validation refuses the corpus first: a leaf without paired knowledge is a validation problem too
    assert code == 1
    assert "events: no enabled knowledge layer has an article" in capsys.readouterr().out


def test_knowledge_without_leaf_and_domain_mismatch(small_corpus, tmp_path, capsys):
    small_corpus.article("orphans", "nobody-reviews-me")  # no al-orphans-review leaf
    small_corpus.article("performance", "misfiled", frontmatter_domain="security")
    code, _, report = health(capsys, small_corpus, tmp_path / "out", "--strict")
    assert [f["path"] for f in kinds(report, "knowledge-without-leaf")] == ["*/knowledge/orphans"]
    mismatch = kinds(report, "domain-mismatch")
    assert [f["path"] for f in mismatch] == ["microsoft/knowledge/performance/misfiled.md"]
    assert mismatch[0]["severity"] == "error" and code == 1
    # look-alike: an article whose frontmatter matches its folder in another case is not reported
    assert not [f for f in mismatch if "alpha-check" in f["path"]]


def test_duplicate_slug_reports_the_winner_and_the_gate_trap(small_corpus, tmp_path, capsys):
    small_corpus.article("performance", "beta-loop", layer="community")
    small_corpus.write("custom/knowledge/performance/alpha-check.md", "---\ndomain: performance\n---\n# A\n")
    code = main(["health", "--corpus", str(small_corpus.root), "--out", str(tmp_path / "out")])
    assert code == 1  # the unpaired custom copy hides the paired microsoft copy: the ranking gate fails
    capsys.readouterr()
    (small_corpus.root / "custom/knowledge/performance/alpha-check.md").unlink()
    _, _, report = health(capsys, small_corpus, tmp_path / "out")
    duplicates = kinds(report, "duplicate-slug")
    assert [(f["path"], f["severity"]) for f in duplicates] == [
        ("community/knowledge/performance/beta-loop.md", "info")
    ]
    assert "community copy wins" in duplicates[0]["message"]


def test_changed_paths_must_be_exercised(small_corpus, tmp_path, capsys):
    changed = tmp_path / "changed.txt"
    changed.write_text(
        "microsoft/knowledge/performance/beta-loop.good.al\n"  # paired, no case: reported
        "microsoft/knowledge/performance/alpha-check.md\n"  # exercised: fine
        "README.md\n"  # not knowledge: ignored
        ".\\microsoft\\knowledge\\performance\\beta-loop.md\n"  # same article, Windows style: reported once
    )
    code, err, report = health(capsys, small_corpus, tmp_path / "out", "--changed-paths", str(changed), "--strict")
    assert code == 1
    assert [f["path"] for f in kinds(report, "unexercised-change")] == ["microsoft/knowledge/performance/beta-loop.md"]
    assert "additionalArticles" in err
    code, _, _ = health(capsys, small_corpus, tmp_path / "out2", "--changed-paths", str(tmp_path / "absent.txt"))
    assert code == 2


def test_ranking_margin_warns_only_close_cases(corpus, tmp_path, capsys):
    corpus.leaf("performance")
    for number in range(12):
        corpus.article("performance", f"rule-{number:02d}", keywords=[f"token{number}"])
    # rule-00's sample carries its own keyword and one other's: its margin over the first excluded is 8+
    corpus.write("microsoft/knowledge/performance/rule-00.bad.al", "codeunit 1 X { token0 token5 }\n")
    corpus.write("microsoft/knowledge/performance/rule-00.good.al", "codeunit 1 X { token0 }\n")
    _, _, report = health(capsys, corpus, tmp_path / "out")
    margins = {m["case"]: m for m in report["margins"]}
    assert margins["performance-bad"]["ranked"] and margins["performance-bad"]["rank"] == 1
    assert margins["performance-bad"]["margin"] >= 8
    assert not kinds(report, "ranking-margin")
    _, _, tight = health(capsys, corpus, tmp_path / "out2", "--margin", "100")
    assert {f["case"] for f in kinds(tight, "ranking-margin")} == {"performance-bad", "performance-good"}


def test_small_domains_say_ranking_does_not_run(small_corpus, tmp_path, capsys):
    _, _, report = health(capsys, small_corpus, tmp_path / "out")
    assert {f["message"].split(":")[0] for f in kinds(report, "ranking-not-run")} == {"performance", "security"}
    assert all(not m["ranked"] for m in report["margins"])


def test_leak_audit_finds_labels_trailing_comments_answer_words_and_identical_pairs(corpus, tmp_path, capsys):
    corpus.leaf("performance")
    corpus.leaf("security")
    corpus.article(
        "performance",
        "zebra-stripes",
        keywords=["zebra"],
        bad="codeunit 1 \"GoodCustomer\" { x := zebra; // note here\n  y := 'wrong total'; }\n",
        good="codeunit 2 \"Goods Badge Correction\" { x := 'http://a'; }\n",
    )
    corpus.article("performance", "zz-other-rule", keywords=["other"])
    same = 'codeunit 3 "Same" { }\n'
    corpus.article("security", "twin-rule", keywords=["twin"], bad=same, good=same)
    _, _, report = health(capsys, corpus, tmp_path / "out", "--strict")
    labels = kinds(report, "label-leak")
    assert [(f["case"], f["line"]) for f in labels] == [("performance-bad", 1), ("performance-bad", 2)]
    assert [(f["case"], f["line"]) for f in kinds(report, "trailing-comment")] == [("performance-bad", 1)]
    answer_words = kinds(report, "answer-word")
    assert {(f["case"], f["message"].split("'")[1]) for f in answer_words} == {("performance-bad", "zebra")}
    identical = kinds(report, "identical-pair")
    assert [(f["case"], f["severity"]) for f in identical] == [("security-bad", "error")]


def test_comment_and_label_helpers_respect_strings():
    assert _code_and_comment("x := 'a // b'; // note") == ("x := 'a // b'; ", " note")
    assert _code_and_comment('"Odd // Name".Get();') == ('"Odd // Name".Get();', None)
    assert _label_hits("BadRecord.Anti_Pattern := IncorrectValue;") == ["BadRecord", "Anti_Pattern", "IncorrectValue"]
    assert _label_hits("Goods.Badge := Correction + Goodwill;") == []


def test_health_is_incremental(tmp_path):
    settings = settings_for(DEMO_CORPUS, tmp_path / "out")
    code, executed = run_graph(settings, "health_files")
    assert code == 0 and "health_files" in executed
    assert run_graph(settings, "health_files") == (0, [])
    assert run_graph(settings, "health") == (0, ["health"])  # `doit health` reports even when up to date


def test_demo_corpus_health(tmp_path, capsys):
    code = main(["health", "--out", str(tmp_path / "out"), "--strict"])
    assert code == 0
    report = json.loads((tmp_path / "out" / "health.json").read_text())
    assert report["errors"] == 0
    assert report["coverage"]["exercised"] == 8 and report["coverage"]["paired"] > 25


def test_domain_case_difference_is_not_a_mismatch(small_corpus, tmp_path, capsys):
    small_corpus.article("performance", "cased", frontmatter_domain="Performance")
    _, _, report = health(capsys, small_corpus, tmp_path / "out")
    assert kinds(report, "domain-mismatch") == []


PASTED = [
    'codeunit 50100 "Alpha Bad"',
    "{",
    "    procedure Run()",
    "    var",
    "        Customer: Record Customer;",
    "    begin",
    "        if Customer.Count() > 0 then",
    "            exit;",
    "    end;",
    "}",
]


def test_an_article_that_pastes_its_sample_gives_the_answer_away(small_corpus, tmp_path, capsys):
    folder = small_corpus.root / "microsoft/knowledge/performance"
    (folder / "alpha-check.bad.al").write_text("\n".join(PASTED) + "\n")
    md = folder / "alpha-check.md"
    # an article that quotes its own anti-pattern, re-indented and with another blank line: still the same code
    quoted = "\n".join(["```al", *[line.replace("    ", "  ") for line in PASTED[2:8]], "", "```"])
    md.write_text(md.read_text() + "\n## Anti Pattern\n\n" + quoted + "\n")
    # a look-alike: four shared lines are not enough
    beta = folder / "beta-loop.md"
    beta.write_text(beta.read_text() + "\n```al\n" + "\n".join(PASTED[3:7]) + "\n```\n")
    code, out, report = health(capsys, small_corpus, tmp_path / "out", "--strict")
    found = kinds(report, "reachable-answer")
    assert [(f["case"], f["path"], f["severity"]) for f in found] == [
        ("performance-bad", "microsoft/knowledge/performance/alpha-check.md", "error")
    ]
    assert "holds 5 or more consecutive lines of performance-bad's code" in found[0]["message"]
    assert code == 1 and "performance-bad" in out


def test_reachable_answers_are_rechecked_when_an_article_body_changes(small_corpus, tmp_path, capsys):
    out = tmp_path / "out"
    folder = small_corpus.root / "microsoft/knowledge/performance"
    (folder / "alpha-check.bad.al").write_text("\n".join(PASTED) + "\n")
    _, _, report = health(capsys, small_corpus, out)
    assert kinds(report, "reachable-answer") == []
    md = folder / "beta-loop.md"
    md.write_text(md.read_text() + "\n```al\n" + "\n".join(PASTED) + "\n```\n")  # body only: same index row
    _, _, report = health(capsys, small_corpus, out)
    assert [f["path"] for f in kinds(report, "reachable-answer")] == ["microsoft/knowledge/performance/beta-loop.md"]
