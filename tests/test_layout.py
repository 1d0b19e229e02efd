"""The output folder's layout as the README documents it, spelled once in bceval.layout; Settings' paths are the
layout's."""

from __future__ import annotations

from pathlib import Path

from bceval.config import Settings
from bceval.layout import (
    EXPORT_DONE,
    BuildDir,
    GuidancePrepareDir,
    GuidanceRunDir,
    OutDir,
    PrepareDir,
    RunDir,
    cached_answer,
)


def test_the_output_folder_holds_review_build_runs_cache_health_experiments_and_corpora(tmp_path):
    out = OutDir(tmp_path)
    assert out.prepare.path == tmp_path / "review"
    assert out.build.path == tmp_path / ".build"
    assert (out.doit_db.name, out.lock.name) == (".bceval.doit.db", ".bceval.lock")
    assert out.run("baseline").path == tmp_path / "runs" / "baseline"
    assert out.answer_cache == tmp_path / "cache" / "answers"
    assert (out.health("json").name, out.health("md").name) == ("health.json", "health.md")
    assert out.guidance == tmp_path / "guidance"
    assert (out.guidance_runs, out.guidance_demo) == (tmp_path / "guidance-runs", tmp_path / "guidance-demo")
    assert out.bench_report == tmp_path / "bench.json"
    assert cached_answer(out.answer_cache, "k") == tmp_path / "cache" / "answers" / "k.json"
    experiment = out.experiment("demo")
    assert experiment.path == tmp_path / "experiments" / "demo"
    assert [experiment.report(s).name for s in ("json", "md", "html")] == ["report.json", "report.md", "report.html"]
    assert experiment.variant("a").prepare.path == tmp_path / "experiments" / "demo" / "variants" / "a" / "review"
    assert experiment.guidance_runs("a", "b", 2) == experiment.path / "variants" / "a" / "guidance" / "b-e2"
    commit = "0" * 40
    assert out.corpus_export(commit, "") == tmp_path / "corpora" / commit
    assert out.corpus_export(commit, "corpus").name.startswith(commit + "-") and EXPORT_DONE == ".bceval-export"


def test_a_prepare_directory_holds_exactly_the_request_files_of_its_domains_and_cases(tmp_path):
    prepare = PrepareDir(tmp_path)
    assert (prepare.marker.name, prepare.incomplete.name) == (".bcquality-evaluation", ".bceval-incomplete")
    assert (prepare.knowledge_index.name, prepare.review_request.name) == (
        "knowledge-index.json",
        "review-request.json",
    )
    assert prepare.domain_index("ui").name == "index-ui.json" and prepare.domain_request("ui").name == "request-ui.json"
    assert prepare.case_request("case-0ad1f118").name == "request-case-0ad1f118.json"
    assert prepare.case_file("case-0ad1f118").name == "case-0ad1f118.al"
    assert PrepareDir.expected_names(["ui"], ["case-1"]) == {
        "knowledge-index.json",
        "review-request.json",
        "index-ui.json",
        "request-ui.json",
        "case-1.al",
        "request-case-1.json",
    }


def test_a_run_and_the_build_folder_name_their_files(tmp_path):
    run = RunDir(tmp_path)
    assert (run.record.name, run.score.name) == ("run.json", "score.json")
    assert (run.results, run.transcripts, run.requests) == (
        tmp_path / "results",
        tmp_path / "transcripts",
        tmp_path / "requests",
    )
    assert run.transcript("case-1") == tmp_path / "transcripts" / "case-1.json"
    assert [run.scorecard(s).name for s in ("json", "md", "html")] == [
        "scorecard.json",
        "scorecard.md",
        "scorecard.html",
    ]
    build = BuildDir(tmp_path)
    assert build.cases == tmp_path / "review" / "cases.json"
    assert build.rows("microsoft/knowledge/ui") == tmp_path / "review" / "rows" / "microsoft__knowledge__ui.json"
    assert build.domain_cases("ui").parent.name == "cases" and build.domain_articles("ui").parent.name == "domains"


def test_settings_paths_are_the_layouts(tmp_path):
    settings = Settings(corpus=tmp_path, manifest=None, out=tmp_path / "out", adapter="oracle")
    out = OutDir(tmp_path / "out")
    assert (settings.prepare_dir, settings.build_dir, settings.doit_db) == (
        out.prepare.path,
        out.build.path,
        out.doit_db,
    )
    run = out.run("oracle")
    assert (settings.run_dir, settings.results_dir) == (run.path, run.results)
    assert (settings.score_file, settings.scorecard_json, settings.cache_dir) == (
        run.score,
        run.scorecard(),
        out.answer_cache,
    )
    assert Settings(corpus=tmp_path, manifest=None, out=tmp_path, results=Path("/r")).results_dir == Path("/r")


def test_a_guidance_preparation_holds_the_knowledge_index_and_one_request_per_case(tmp_path):
    prepared = GuidancePrepareDir(tmp_path)
    assert prepared.knowledge_index == tmp_path / "knowledge-index.json"
    assert prepared.case_request("case-0ad1f118") == tmp_path / "request-case-0ad1f118.json"
    assert GuidancePrepareDir.owns("knowledge-index.json") and GuidancePrepareDir.owns("request-case-0ad1f118.json")
    assert not any(map(GuidancePrepareDir.owns, ["request-ui.json", "request-case-0AD1F118.json", "case-1.al"]))


def test_a_guidance_run_is_a_run_with_its_requests_and_baseline_and_each_run_is_new(tmp_path):
    run = GuidanceRunDir(tmp_path / "run-0001")
    assert isinstance(run, RunDir) and run.record == tmp_path / "run-0001" / "run.json"
    assert run.prepared.knowledge_index == tmp_path / "run-0001" / "requests" / "knowledge-index.json"
    assert run.baseline == tmp_path / "run-0001" / "evidence" / "baseline.json"
    assert run.result("case-1") == tmp_path / "run-0001" / "results" / "result-case-1.json"
    assert GuidanceRunDir.next_in(tmp_path / "absent").path == tmp_path / "absent" / "run-0001"
    for name in ("run-0001", "run-0009", "run-x", "other"):
        (tmp_path / name).mkdir()
    assert GuidanceRunDir.next_in(tmp_path).path == tmp_path / "run-0010"
