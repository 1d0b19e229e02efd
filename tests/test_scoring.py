"""Result scoring (§14): loading, id mapping, per-case judgement, metrics, and bad result files."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
from conftest import DEMO_CORPUS, SHARED_CORPUS, requires_shared
from graphutil import run_graph, settings_for, snapshot

from bceval import jsonio
from bceval.cli import main
from bceval.errors import BcevalError
from bceval.evaluators.base import model_id
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.scoring import (
    aggregate,
    format_rate,
    read_result_document,
)
from bceval.layout import result_files
from bceval.models import InfraFailure

THRESHOLDS = {"minimumExpectedRecall": 1.0, "minimumCleanRate": 1.0}


def case(case_id: str, expected: list[str]) -> ReviewCase:
    domain = case_id.rsplit("-", 1)[0]
    return ReviewCase(id=case_id, modelId=model_id(case_id), domain=domain, input=f"x/{case_id}.al", expected=expected)


CASES = [case("perf-bad", ["microsoft/knowledge/perf/a.md"]), case("perf-good", [])]


def reading(document, name="result-x.json"):
    raw = document if isinstance(document, bytes) else json.dumps(document).encode()
    return read_result_document(raw, name)


def score(*documents, thresholds=THRESHOLDS, infra=None):
    return aggregate(CASES, [reading(d, f"result-{i}.json") for i, d in enumerate(documents)], thresholds, infra)


def answers(bad=("microsoft/knowledge/perf/a.md",), good=()):
    return {
        "cases": [{"id": CASES[0].modelId, "findings": list(bad)}, {"id": CASES[1].modelId, "findings": list(good)}]
    }


def test_exact_answers_pass_with_the_reference_line():
    from bceval.evaluators.review.scoring import passed_line

    report = score(answers())
    assert report.passed and report.problems == []
    assert passed_line(report) == "Review evaluation PASSED: recall=1 (1/1), clean-rate=1 (1/1)."


def test_manifest_ids_and_model_ids_map_case_insensitively():
    document = {
        "cases": [
            {"id": "PERF-BAD", "findings": ["MICROSOFT/knowledge/perf/A.md"]},
            {"id": CASES[1].modelId.upper(), "findings": []},
        ]
    }
    assert score(document).passed


def test_findings_strings_objects_blanks_and_repeats_normalize():
    document = {
        "cases": [
            {
                "id": "perf-bad",
                "findings": [" ", {"id": "microsoft/knowledge/perf/a.md"}, "Microsoft/knowledge/perf/a.md", ""],
            },
            {"id": "perf-good", "findings": []},
        ]
    }
    report = score(document)
    assert report.passed
    assert report.cases[0].findings == ["microsoft/knowledge/perf/a.md"]


def test_extra_valid_article_fails_a_positive_exact_set_equality():
    report = score(answers(bad=("microsoft/knowledge/perf/a.md", "microsoft/knowledge/perf/b.md")))
    assert report.problems == [
        "perf-bad: unexpected finding(s): microsoft/knowledge/perf/b.md",
        "Expected-finding recall 0 (0/1) is below 1.",
    ]


def test_missing_and_unexpected_are_both_listed_sorted():
    report = score(answers(bad=("z.md", "b.md")))
    assert report.problems[:2] == [
        "perf-bad: missing expected finding(s): microsoft/knowledge/perf/a.md",
        "perf-bad: unexpected finding(s): b.md, z.md",
    ]


def test_clean_control_must_be_silent():
    report = score(answers(good=("x.md",)))
    assert report.problems == [
        "perf-good: clean control produced finding(s): x.md",
        "Clean-control rate 0 (0/1) is below 1.",
    ]
    assert (report.recall, report.cleanRate) == (1.0, 0.0)


def test_unknown_and_duplicate_ids_first_one_wins():
    first = answers()
    second = {"cases": [{"id": "perf-bad", "findings": []}, {"id": "nope", "findings": []}]}
    report = score(first, second)
    assert report.problems == ["Results contain duplicate case id: perf-bad", "Results contain unknown case id: nope"]


def test_missing_case_and_thresholds():
    report = score(
        {"cases": [{"id": "perf-good", "findings": []}]},
        thresholds={"minimumExpectedRecall": 0.5, "minimumCleanRate": 1.0},
    )
    assert report.problems == ["Results missing case: perf-bad", "Expected-finding recall 0 (0/0) is below 0.5."]


def test_lower_thresholds_let_a_partial_run_pass():
    report = score(answers(good=("x.md",)), thresholds={"minimumExpectedRecall": 1.0, "minimumCleanRate": 0.0})
    assert report.problems == ["perf-good: clean control produced finding(s): x.md"]
    assert not report.passed  # a per-case problem still fails the run, as in the reference


def test_rates_print_in_shortest_round_trip_form():
    assert [format_rate(v) for v in (1.0, 0.0, 0.5, 2 / 3)] == ["1", "0", "0.5", "0.6666666666666666"]


def test_no_cases_of_a_kind_gives_rate_zero():
    report = aggregate([CASES[1]], [reading({"cases": [{"id": "perf-good", "findings": []}]})], THRESHOLDS)
    assert (report.recall, report.cleanRate, report.positive.total) == (0.0, 1.0, 0)


def test_scalar_findings_and_null_ids_read_like_the_reference():
    document = {"cases": [{"id": "a", "findings": "x.md"}, {"id": "b", "findings": [{"id": None}, "  ", {"id": 7}]}]}
    entries = read_result_document(json.dumps(document).encode(), "r.json").entries
    assert [(e.id, e.findings) for e in entries] == [("a", ["x.md"]), ("b", ["7"])]


def test_loading_problems_come_before_id_problems():
    unknown = reading({"cases": [{"id": "nope", "findings": []}]}, "result-a.json")
    broken = reading(b"{oops", "result-b.json")
    report = aggregate(CASES, [unknown, broken], THRESHOLDS)
    assert report.problems[:2] == [
        "result-b.json: invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2",
        "Results contain unknown case id: nope",
    ]


def test_unanswered_cases_are_reported_but_not_counted():
    report = score({"cases": [{"id": "perf-bad", "findings": ["microsoft/knowledge/perf/a.md"]}]})
    # no clean case counted: the rate is 0 as in the reference, which the threshold then reports
    assert report.problems == ["Results missing case: perf-good", "Clean-control rate 0 (0/0) is below 1."]
    assert (report.positive.total, report.clean.total, report.recall, report.cleanRate) == (1, 0, 1.0, 0.0)


def test_scalar_cases_member_is_wrapped_as_one_case():
    document = {"cases": {"id": "perf-bad", "findings": ["microsoft/knowledge/perf/a.md"]}}
    assert [e.id for e in read_result_document(json.dumps(document).encode(), "r.json").entries] == ["perf-bad"]


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"[1, 2]", "r.json: result must contain a 'cases' array."),
        (b'{"other": 1}', "r.json: result must contain a 'cases' array."),
        (b'{"cases": [1]}', "r.json: cases[0]: must be an object with 'id' and 'findings'"),
        (b'{"cases": [{"findings": []}]}', "r.json: cases[0]: has no 'id'"),
        (b'{"cases": [{"id": "a"}]}', "r.json: cases[0]: has no 'findings'"),
        (
            b'{"cases": [{"id": "a", "findings": [{"path": "x"}]}]}',
            "r.json: cases[0]: finding 0 must be a string or an object with a string 'id'",
        ),
        (b'{"cases": [], "cases": []}', "r.json: invalid JSON: duplicate key 'cases' at $"),
        (b'{"cases": [NaN]}', "r.json: invalid JSON: NaN is not valid JSON"),
        (b'{"cases": "\xff"}', "r.json: not valid UTF-8 (byte 0xFF at offset 11)"),
    ],
)
def test_bad_result_documents_become_problems_not_crashes(raw, problem):
    assert read_result_document(raw, "r.json").problems == [problem]


def test_result_over_the_size_cap_is_a_problem(monkeypatch):
    monkeypatch.setattr(jsonio, "MAX_JSON_BYTES", 10)
    assert read_result_document(b'{"cases": []}    ', "r.json").problems == ["r.json: larger than 0 MiB"]


def test_case_files_are_preferred_then_any_result_files_sorted(tmp_path):
    for name in ("result-b.json", "result-A.json"):
        (tmp_path / name).write_text("{}")
    assert [p.name for p in result_files(tmp_path)] == ["result-A.json", "result-b.json"]
    (tmp_path / "result-case-2.json").write_text("{}")
    (tmp_path / "result-case-1.json").write_text("{}")
    assert [p.name for p in result_files(tmp_path)] == ["result-case-1.json", "result-case-2.json"]


@pytest.mark.parametrize("make", [lambda p: p / "absent", lambda p: p])
def test_missing_or_empty_results_directory_is_an_error(tmp_path, make):
    with pytest.raises(BcevalError, match="results directory does not exist|no result files"):
        result_files(make(tmp_path))


def test_infrastructure_failures_are_reported_apart_from_misses():
    failure = InfraFailure(id=CASES[1].modelId, kind="timeout", detail="no answer within 5 s", attempts=3)
    report = score({"cases": [{"id": "perf-bad", "findings": ["microsoft/knowledge/perf/a.md"]}]}, infra=[failure])
    assert report.infrastructureFailures == 1
    assert report.problems[0] == "perf-good: infrastructure failure (timeout after 3 attempt(s): no answer within 5 s)"
    assert report.cases[1].infrastructureFailure == "timeout after 3 attempt(s): no answer within 5 s"


# --- through the CLI and the graph ------------------------------------------------------------


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in (
        "BCEVAL_CORPUS",
        "BCEVAL_MANIFEST",
        "BCEVAL_OUT",
        "BCEVAL_RESULTS",
        "BCEVAL_RESULTS_PATH",
        "BCEVAL_ADAPTER",
        "BCEVAL_LIVE",
        "BCEVAL_MODEL",
        "BCEVAL_SHARD",
    ):
        monkeypatch.delenv(key, raising=False)


def cli(capsys, *argv):
    """(exit code, lines): the verdict lines on stdout when there are any, else the one-line error on stderr
    (the corpus line every graph command prints first is dropped)."""
    code = main(list(argv))
    captured = capsys.readouterr()
    out = [line for line in captured.out.strip().splitlines() if not line.startswith(("Prepared ", "Review fixture"))]
    err = [line for line in captured.err.strip().splitlines() if not line.startswith("bceval: corpus ")]
    return code, out or err


def test_both_result_sources_is_usage_error(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["score", "--results", str(tmp_path), "--results-path", str(tmp_path / "r.json")])
    assert exit_info.value.code == 2


def test_results_directory_errors_are_one_line_exit_2(capsys, tmp_path):
    out = ["--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out")]
    code, err = cli(capsys, "score", *out, "--results", str(tmp_path / "absent"))
    assert code == 2 and err == [f"bceval: {tmp_path / 'absent'}: results directory does not exist"]
    (tmp_path / "empty").mkdir()
    code, err = cli(capsys, "score", *out, "--results", str(tmp_path / "empty"))
    assert code == 2 and err == [f"bceval: {tmp_path / 'empty'}: no result files (result-case-*.json or result-*.json)"]


def test_combined_results_file(capsys, tmp_path):
    out = ["--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out")]
    assert cli(capsys, "answer", "--adapter", "oracle", *out)[0] == 0
    combined = {"cases": []}
    for path in sorted((tmp_path / "out/runs/oracle/results").glob("result-*.json")):
        combined["cases"] += json.loads(path.read_text())["cases"]
    target = tmp_path / "all.json"
    target.write_text(json.dumps(combined))
    assert cli(capsys, "score", *out, "--results-path", str(target)) == (
        0,
        ["Review evaluation PASSED: recall=1 (8/8), clean-rate=1 (8/8)."],
    )
    target.write_text("{broken")
    code, err = cli(capsys, "score", *out, "--results-path", str(target))
    assert code == 2 and len(err) == 1 and err[0].startswith("bceval: all.json: invalid JSON")


def test_default_main_job_reports_baseline_without_failing(tmp_path):
    settings = settings_for(DEMO_CORPUS, tmp_path / "out")
    code, executed = run_graph(settings)
    assert code == 0
    assert {"prepare", "run_record", "answered", "score_json", "summary"} <= set(executed)
    assert "answer" in executed and len(list(settings.results_dir.glob("result-case-*.json"))) == 16
    report = json.loads(settings.score_file.read_text())
    assert report["answeredBy"][0]["adapter"] == "baseline"
    assert run_graph(settings, "score")[0] == 1  # `score` is the gate


def test_changing_one_result_scores_the_run_again(tmp_path):
    settings = replace(settings_for(DEMO_CORPUS, tmp_path / "out"), adapter="oracle")
    assert run_graph(settings, "score")[0] == 0
    # the reports (answers, scorecard, verdict) run each time; nothing else reruns
    assert run_graph(settings, "score")[1] == ["answered", "scorecard", "score"]
    target = settings.results_dir / f"result-{model_id('events-good')}.json"
    document = json.loads(target.read_text())
    document["cases"][0]["findings"] = [{"id": "microsoft/knowledge/events/no-commit-in-subscribers.md"}]
    target.write_text(json.dumps(document))
    code, executed = run_graph(settings, "score")
    assert code == 2  # the run's own result is no longer what bceval wrote: refused, not scored
    assert executed == ["answered", "score_json"]

    external = replace(settings, results=tmp_path / "mine")  # the same answers as results from outside
    shutil.copytree(settings.results_dir, external.results)
    assert run_graph(external, "score")[0] == 1
    edited = external.results / target.name
    edited.write_text(json.dumps({**document, "cases": [{**document["cases"][0], "findings": []}]}))
    code, executed = run_graph(external, "score")
    assert code == 0
    assert "score_json" in executed


def test_oracle_passes_and_baseline_is_deterministic_on_demo(tmp_path):
    for adapter in ("oracle", "baseline"):
        outputs = []
        for attempt in range(2):
            settings = replace(settings_for(DEMO_CORPUS, tmp_path / f"{adapter}{attempt}"), adapter=adapter)
            run_graph(settings, "summary")
            outputs.append(snapshot(settings.results_dir))
            report = json.loads(settings.score_file.read_text())
            assert report["passed"] is (adapter == "oracle")
        assert outputs[0] == outputs[1]


@requires_shared
def test_oracle_passes_the_gate_on_the_shared_corpus(tmp_path):
    settings = replace(settings_for(SHARED_CORPUS, tmp_path / "out"), adapter="oracle")
    assert run_graph(settings, "score")[0] == 0
    report = json.loads(settings.score_file.read_text())
    assert (report["positive"], report["clean"]) == ({"passed": 16, "total": 16}, {"passed": 16, "total": 16})


def test_lone_surrogate_in_a_result_is_a_problem():
    raw = b'{"cases": [{"id": "perf-good", "findings": ["a\\ud800"]}]}'
    assert read_result_document(raw, "r.json").problems == [
        "r.json: invalid JSON: string with an unpaired surrogate escape at $.cases[0].findings[0]"
    ]


def test_foreign_infra_record_is_one_line(capsys, tmp_path):
    out = ["--corpus", str(DEMO_CORPUS), "--out", str(tmp_path / "out")]
    assert cli(capsys, "answer", "--adapter", "oracle", *out)[0] == 0
    results = tmp_path / "out/runs/oracle/results"
    (results / "infra-case-00000000.json").write_text("{}")
    code, err = cli(capsys, "score", *out, "--results", str(results))
    assert code == 2
    infra = results / "infra-case-00000000.json"
    assert err[-1] == f"bceval: {infra}: not an infrastructure-failure record written by bceval answer"


def test_baseline_answers_follow_article_body_edits(tmp_path):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    settings = settings_for(corpus, tmp_path / "out")
    run_graph(settings, "summary")
    article = corpus / "microsoft/knowledge/ui/tooltips-on-page-fields.md"
    text = article.read_text(encoding="utf-8-sig")
    article.write_text(
        text.replace("## Anti Pattern", "## Anti Pattern\n\nZzqx unusual words only.\n\n## Old"), encoding="utf-8"
    )
    run_graph(settings, "summary")
    incremental = snapshot(settings.results_dir)
    cold = settings_for(corpus, tmp_path / "cold")
    run_graph(cold, "summary")
    assert snapshot(cold.results_dir) == incremental
