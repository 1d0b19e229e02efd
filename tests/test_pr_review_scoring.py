"""The pr-review evaluator's deterministic core: the worked examples of the spec's §5.4, the edge cases, the
lenient answer parser and the entry reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bceval.errors import BcevalError
from bceval.evaluators.pr_review.answers import parse_review
from bceval.evaluators.pr_review.entries import Comment, read_dataset
from bceval.evaluators.pr_review.matching import score_entry
from bceval.evaluators.pr_review.providers import pair_key, verdicts

BCBENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "bc-bench"
requires_bcbench = pytest.mark.skipif(not BCBENCH.is_dir(), reason=f"needs BC-Bench's code-review data at {BCBENCH}")


def c(line: int, file: str = "src/P.al", severity: str | None = "medium", end: int | None = None, **more) -> Comment:
    return Comment(
        file=file, line_start=line, line_end=end, body=more.pop("body", f"at {line}"), severity=severity, **more
    )


def judge(*confirmed: tuple[int, int, bool]):
    """A scripted judge confirming exactly these (gold, finding, ignored) pairs."""

    def provider(expected, ignored, found, pairs):
        return [(p.gold, p.found, p.ignored) in confirmed for p in pairs]

    return provider


def test_a_basic_with_severity() -> None:
    gold = [c(6, severity="critical"), c(7, severity="high")]
    found = [c(7, severity="high"), c(6, severity="high"), c(20, severity="low"), c(6, file="src/Q.al")]
    scored = score_entry(gold, [], found, judge((0, 1, False), (1, 0, False)))
    assert len(scored.pairs) == 6  # {E1, E2} x {G1, G2, G3}: G4 is in another file
    s = scored.score
    assert (s.matched, s.generated, s.incorrect, s.missed) == (2, 4, 2, 0)
    assert (s.precision, s.recall) == (0.5, 1.0)
    assert (round(s.f(1), 3), round(s.f(0.5), 3), round(s.f(2), 3)) == (0.667, 0.556, 0.833)
    assert (s.severity_mae, s.severity_pairs, s.severity_exact) == (0.5, 2, 0.5)


def test_b_semantic_first_and_the_location_proxy() -> None:
    gold = [c(10)]
    found = [c(10, body="unrelated"), c(14, body="the same issue")]
    semantic = score_entry(gold, [], found, judge((0, 1, False)))
    assert [(p.gold, p.found) for p in semantic.chosen] == [(0, 1)]
    assert (semantic.score.matched, semantic.score.precision, semantic.score.recall) == (1, 0.5, 1.0)
    located = score_entry(gold, [], found, verdicts("location@5"))
    assert [(p.gold, p.found) for p in located.chosen] == [(0, 0)]  # credited to the wrong comment


def test_c_ignored_comments_and_the_reward_arithmetic() -> None:
    gold, ignored = [c(10, end=12)], [c(11)]
    found = [c(11), c(30), c(50)]
    scored = score_entry(gold, ignored, found, judge((0, 0, False), (0, 0, True), (0, 1, True)))
    assert sorted((p.ignored, p.found) for p in scored.chosen) == [(False, 0), (True, 1)]
    s = scored.score
    assert (s.matched, s.ignored, s.generated, s.incorrect, s.precision, s.recall) == (1, 1, 3, 1, 0.5, 1.0)
    rejected = score_entry(gold, ignored, found, judge((0, 0, True), (0, 1, True))).score
    assert (rejected.matched, rejected.ignored, rejected.precision, rejected.recall) == (0, 1, 0.0, 0.0)


def test_d_e_negative_and_silent_entries() -> None:
    silent = score_entry([], [], [], verdicts("location")).score
    assert (silent.precision, silent.recall, silent.f(1)) == (1.0, 1.0, 1.0)
    noisy = score_entry([], [], [c(3)], verdicts("location")).score
    assert (noisy.precision, noisy.recall, noisy.f(1)) == (0.0, 1.0, 0.0)
    quiet = score_entry([c(3)], [], [], verdicts("location")).score
    assert (quiet.precision, quiet.recall, quiet.f(1)) == (1.0, 0.0, 0.0)


def test_f_a_tie_keeps_the_counts() -> None:
    scored = score_entry([c(10), c(14)], [], [c(12)], judge((0, 0, False), (1, 0, False)))
    assert [(p.gold, p.found) for p in scored.chosen] == [(0, 0)]
    assert (scored.score.matched, scored.score.missed) == (1, 1)


def test_edge_cases_invalid_and_all_ignored() -> None:
    invalid = score_entry([c(1), c(2)], [], None, verdicts("location")).score
    assert (invalid.valid, invalid.precision, invalid.recall, invalid.f(1), invalid.expected) == (False, 0, 0, 0, 2)
    all_ignored = score_entry([], [c(5)], [c(5)], verdicts("location")).score
    assert (all_ignored.ignored, all_ignored.precision) == (1, 1.0)


def test_paths_pair_after_normalising_a_set_of_characters() -> None:
    scored = score_entry([c(4, file="../src\\P.al")], [], [c(4, file="src/P.al")], verdicts("location@0"))
    assert scored.score.matched == 1


def test_the_articles_provider_needs_a_shared_article_when_the_gold_names_one() -> None:
    gold = [c(5, articles=["security/a-b"]), c(40)]
    found = [c(6, articles=["security/other"]), c(41)]
    provider = verdicts("articles")
    assert score_entry(gold, [], found, provider).score.matched == 1  # only the gold naming no article
    linked = c(6, body="see https://x/microsoft/knowledge/security/a-b.md")
    cited = parse_review(json.dumps([linked.model_dump()])).findings
    assert score_entry(gold, [], cited, provider).score.matched == 1
    assert (provider.by_article, provider.by_location) == (1, 1)
    assert verdicts("articles@2").label == "articles@2" and not verdicts("location").comparable


def test_replay_reads_one_judge_pin(tmp_path: Path) -> None:
    gold, found = [c(5)], [c(9), c(5, body="other")]
    stored = tmp_path / "verdicts.jsonl"
    line = {"pair": pair_key(gold[0], found[0]), "match": True, "judge_model": "m1", "judge_prompt_version": "1"}
    stored.write_text(json.dumps(line) + "\n", encoding="utf-8")
    provider = verdicts(f"replay:{stored}")
    scored = score_entry(gold, [], found, provider)
    assert ([(p.gold, p.found) for p in scored.chosen], provider.unjudged, provider.label) == (
        [(0, 0)],
        1,
        "replay:m1/1",
    )
    stored.write_text(json.dumps(line) + "\n" + json.dumps({**line, "judge_model": "m2"}) + "\n", encoding="utf-8")
    with pytest.raises(BcevalError, match="2 judge pins"):
        verdicts(f"replay:{stored}")
    with pytest.raises(BcevalError, match="--verdicts judge-x"):
        verdicts("judge-x")


@pytest.mark.parametrize(
    ("text", "count", "valid"),
    [
        ('[{"file": "a.al", "line_start": 3, "body": "x"}]', 1, True),
        ('{"findings": [{"filePath": "a.al", "lineNumber": "3", "issue": "x"}]}', 1, True),
        ('{"file": "a.al", "line": 3, "body": "x"}', 1, True),
        ('Here:\n```json\n[{"file": "a.al", "line_start": 3, "body": "x"}]\n```\nbye', 1, True),
        ("prose ```\n[]\n``` more", 0, True),
        ("[]", 0, True),
        ("", 0, False),
        ("not json", 0, False),
        ('{"other": 1}', 0, False),
        ("3", 0, False),
    ],
)
def test_the_answer_parser_is_lenient(text: str, count: int, valid: bool) -> None:
    review = parse_review(text)
    assert (len(review.findings), review.valid) == (count, valid)


def test_unusable_findings_are_dropped_and_recorded() -> None:
    items = [
        {"file": "src/a.al", "line_start": 0, "line": 4, "body": "x", "severity": "Warning", "domain": " style "},
        {"file": "./src/a.al", "line_start": 1, "body": "x"},
        {"file": "src/a.al", "line_start": 2.0, "body": "x"},
        {"file": "src/a.al", "line_start": True, "body": "x"},
        {"file": "src/a.al", "line_start": 2, "body": ""},
        {"file": "src/a.al", "line_start": 2, "body": "x", "severity": "catastrophic"},
        "text",
    ]
    review = parse_review(json.dumps(items))
    assert review.valid and len(review.findings) == 2 and len(review.dropped) == 5
    first, last = review.findings
    assert (first.line_start, first.severity, first.domain) == (4, "medium", "style")
    assert last.severity is None
    assert parse_review(None).problem == "no review.json"


@requires_bcbench
def test_the_reader_takes_the_shared_dataset_as_it_is() -> None:
    dataset = read_dataset(BCBENCH / "codereview.jsonl")
    assert len(dataset.entries) == 144
    assert sum(len(e.expected_comments) for e in dataset.entries) == 235
    assert sum(not e.expected_comments for e in dataset.entries) == 37  # 38 at the #811 head
    assert len({dataset.task_id(e) for e in dataset.entries}) == 144


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instance_id": "no-separator"}, "instance_id"),
        ({"expected_comments": [{"file": "a.al", "line_start": 1, "body": "x", "article": "a/b"}]}, "article"),
        ({"expected_comments": [{"file": "a.al", "line_start": 1, "body": "x", "severity": "huge"}]}, "severity"),
        ({"base_commit": "abc"}, "base_commit"),
    ],
)
def test_a_broken_entry_is_one_line_naming_the_file_and_line(tmp_path: Path, change: dict, message: str) -> None:
    entry = {
        "instance_id": "synthetic__x-1",
        "base_commit": "0" * 40,
        "patch": "diff",
        "created_at": "t",
        "environment_setup_version": "27.0",
        **change,
    }
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    with pytest.raises(BcevalError, match=f"set.jsonl: line 1: .*{message}"):
        read_dataset(path)


def test_one_json_document_is_named_as_not_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "review-fixtures.json"  # the review evaluator's manifest, given to pr-review by mistake
    path.write_text(json.dumps({"cases": [{"id": "x"}]}, indent=2) + "\n", encoding="utf-8")
    with pytest.raises(BcevalError, match=r"review-fixtures.json: one JSON document, not JSON lines \(one code-review"):
        read_dataset(path)
