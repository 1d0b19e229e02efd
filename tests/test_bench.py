"""Smoke test of `bceval bench` at a tiny size: the JSON report has the promised shape (times are not checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bceval.bench import generate_corpus
from bceval.cli import main
from bceval.corpus.layers import discover_leaves, scan_corpus
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest

MEASUREMENTS = {
    "cold prepare",
    "no-op rerun",
    "touch one article",
    "touch one leaf",
    "score cold",
    "score after one result changed",
    "I/O floor",
}


def test_generated_corpus_is_deterministic_and_valid(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    generate_corpus(first, 120)
    generate_corpus(second, 120)
    files = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second).as_posix() for p in second.rglob("*") if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    listing = scan_corpus(first)
    layers = {f.split("/", 1)[0] for f in listing.files}
    assert layers == {"microsoft", "community", "custom"}
    assert len([f for f in files if f.endswith(".md") and "/knowledge/" in f]) == 120
    assert any(leaf.layer == "community" for leaf in discover_leaves(listing))
    manifest = json.loads((first / "evaluation/review-fixtures.json").read_text())
    assert derive_cases(listing, check_manifest(manifest)).problems == []


def test_bench_smoke_writes_the_report(tmp_path, capsys):
    out = tmp_path / "bench.json"
    args = ["bench", "--sizes", "50", "--repeat", "1", "--live", "8,4,0.2", "--experiment", "2,2,8,4,0.2"]
    args += ["--api", "8,4,0.05", "--view", "2,2,3"]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["benchVersion"] == 2 and report["growth"] == []
    (size,) = report["sizes"]
    assert size["articles"] == 50 and size["files"] > 50 and size["bytes"] > 0
    assert set(size["results"]) == MEASUREMENTS
    for result in size["results"].values():
        assert len(result["runsSeconds"]) == 1 and result["medianSeconds"] > 0
    (live,) = report["live"]
    assert (live["answers"], live["answered"], live["jobs"], live["secondsPerAnswer"]) == (8, 8, 4, 0.2)
    assert live["idealSeconds"] == 0.4 and live["wallSeconds"] >= 0.4  # no agent answers faster than it sleeps
    assert live["ratioToIdeal"] == pytest.approx(live["wallSeconds"] / 0.4, abs=0.01)
    # the plain launcher runs the same agent as often: it cannot beat the ideal either
    assert live["floorSeconds"] >= 0.4 and live["ratioToFloor"] == pytest.approx(
        live["wallSeconds"] / live["floorSeconds"], abs=0.01
    )
    assert live["cpuPerAnswerSeconds"] > 0 and live["floorCpuPerAnswerSeconds"] > 0
    assert size["coldToFloorRatio"] > 0
    table = capsys.readouterr().out
    assert "| cold prepare |" in table and "50 articles" in table
    assert "Live throughput: 8 of 8 answers at --jobs 4" in table and "the plain launcher's floor" in table
    experiment = report["experiment"]
    assert (experiment["units"], experiment["answered"], experiment["idealSeconds"]) == (32, 32, 1.6)
    assert experiment["wallSeconds"] >= 1.6 and "Experiment: 2 arms × 2 epochs × 8 cases" in table
    assert experiment["floorSeconds"] >= 1.6 and experiment["noOpRerunSeconds"] > 0
    # the first agent starts after the command does, and well before it ends
    assert 0 < experiment["firstAgentSeconds"] < experiment["wallSeconds"]
    assert 0 < experiment["stateBytesPerAnswer"] < 1024
    assert [step["answers"] for step in experiment["report"]] == [8, 16, 32]
    assert all(step["medianSeconds"] > 0 for step in experiment["report"])
    api = report["api"]
    if "skipped" not in api:  # the openai package is in the test extra
        assert (api["answered"], api["jobs"], api["idealSeconds"]) == (8, 4, 0.3)  # 3 responses of 0.05 s a case
        assert api["wallSeconds"] >= 0.3 and api["cpuMsPerAnswer"] > 0
        # the floor: the same conversations through the bare client, in a process of its own, beside bceval's
        assert api["floorSeconds"] >= 0.3 and api["floorCpuPerAnswerSeconds"] > 0
        own = api["cpuPerAnswerSeconds"] - api["floorCpuPerAnswerSeconds"]
        assert api["ownCpuPerAnswerSeconds"] == pytest.approx(own, abs=1e-5)
        assert "API agent throughput: 8 of 8 answers over a local endpoint" in table
    view = report["view"]
    assert view["answers"] == 12 and view["pages"] == 1 + 1 + 4 * (1 + 3) + 2  # index, experiment, runs, compares
    assert view["coldBuildSeconds"] > 0 and "Viewer: 2 arms × 2 epochs × 3 cases = 12 answers" in table


def test_bench_rejects_bad_sizes(capsys):
    assert main(["bench", "--sizes", "x", "--out", str(Path("unused.json"))]) == 2
    assert "--sizes" in capsys.readouterr().err


def test_bench_measures_a_private_copy_of_a_real_corpus(tmp_path, capsys):
    from conftest import DEMO_CORPUS

    before = sorted(p.stat().st_mtime_ns for p in DEMO_CORPUS.rglob("*") if p.is_file())
    out = tmp_path / "bench.json"
    flags = ["--repeat", "1", "--live", "none", "--api", "none", "--view", "none", "--out", str(out)]
    assert main(["bench", "--corpus", str(DEMO_CORPUS), *flags]) == 0
    (size,) = json.loads(out.read_text())["sizes"]
    assert size["articles"] == len(list(DEMO_CORPUS.glob("*/knowledge/**/*.md")))
    assert before == sorted(p.stat().st_mtime_ns for p in DEMO_CORPUS.rglob("*") if p.is_file())


def test_measured_processes_keep_python_bytecode_caching_on(monkeypatch):
    from bceval.bench import measured_environment

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("BCEVAL_OUT", "elsewhere")
    monkeypatch.setenv("PATH", "/usr/bin")
    env = measured_environment()
    assert "PYTHONDONTWRITEBYTECODE" not in env and "BCEVAL_OUT" not in env
    assert env["PATH"] == "/usr/bin"


def test_bench_live_flag_is_checked(capsys):
    assert main(["bench", "--live", "lots"]) == 2
    assert "--live must be ANSWERS,JOBS,SECONDS" in capsys.readouterr().err
    assert main(["bench", "--live", "8,4,0.2+8,4"]) == 2
    assert "several joined by '+'" in capsys.readouterr().err


def test_bench_live_takes_several_measurements():
    from bceval.bench import parse_points

    assert parse_points("256,16,0.2+1024,32,0.2", "live", "--live") == [(256, 16, 0.2), (1024, 32, 0.2)]
    assert parse_points("none", "live", "--live") is None
