"""Integration on the real public corpus (skipped when ../shared is absent)."""

from __future__ import annotations

import json

import pytest
from conftest import SHARED_CORPUS, requires_shared
from graphutil import run_graph, settings_for

from bceval.corpus.layers import scan_corpus
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest

pytestmark = requires_shared


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    out = tmp_path_factory.mktemp("shared") / "out"
    code, executed = run_graph(settings_for(SHARED_CORPUS, out), "prepare")
    assert code == 0
    return out / "review"


def test_32_cases_over_16_leaf_domains():
    manifest = json.loads((SHARED_CORPUS / "evaluation/review-fixtures.json").read_text())
    derivation = derive_cases(scan_corpus(SHARED_CORPUS), check_manifest(manifest))
    assert derivation.problems == []
    assert len(derivation.cases) == 32
    assert len(derivation.leaves) == 16
    by_id = {case.id: case for case in derivation.cases}
    assert by_id["performance-bad"].modelId == "case-0ad1f118"
    assert by_id["appsource-bad"].modelId == "case-a8ae3082"
    assert by_id["upgrade-bad"].context.startswith("The extended table existed in the previous app version")
    assert by_id["performance-bad"].expected == ["microsoft/knowledge/performance/use-isempty-for-existence-check.md"]


def test_index_has_255_parsed_rows_and_130_lean_cuts(prepared):
    index = json.loads((prepared / "knowledge-index.json").read_text())
    assert index["articleCount"] == len(index["articles"]) == 255
    assert all(row["parsed"] for row in index["articles"])
    assert sum(row["description"].endswith("\u2026") for row in index["articles"]) == 130


def test_every_case_passes_the_gate_and_has_its_files(prepared):
    request = json.loads((prepared / "review-request.json").read_text())
    assert len(request["cases"]) == 32
    for case in request["cases"]:
        single = json.loads((prepared / f"request-{case['id']}.json").read_text())
        assert single["cases"] == [case]
        assert 1 <= len(single["candidateArticles"]) <= 10
        assert (prepared / case["file"]).is_file()
    assert len(list(prepared.glob("index-*.json"))) == 16
    assert (prepared / "case-0ad1f118.al").is_file() and (prepared / "case-a8ae3082.al").is_file()


def test_community_rows_join_their_domain_candidates(prepared):
    rows = json.loads((prepared / "index-ui.json").read_text())["articles"]
    paths = [row["path"] for row in rows]
    assert paths == sorted(paths, key=lambda p: (p.lower(), p))
    assert any(path.startswith("community/") for path in paths)


def test_case_text_never_reveals_the_answer(prepared):
    for case_file in prepared.glob("case-*.al"):
        text = case_file.read_text()
        assert not any(line.lstrip().startswith("//") for line in text.splitlines())
        assert ' Bad"' not in text and ' Good"' not in text
