"""Rows files and the knowledge index assembled from them (bceval.corpus.rows)."""

from __future__ import annotations

import json

import pytest
from graphutil import run_graph, settings_for, snapshot

from bceval.clock import generated_at
from bceval.corpus.articles import index_row
from bceval.corpus.index import build_index
from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.corpus.rows import encode_group, index_chunks, read_group
from bceval.errors import BcevalError
from bceval.graph.inputs import GraphInputs
from bceval.layout import BuildDir
from bceval.steps import prepare as steps


def row(path: str, domain: str = "perf", title: str = "T") -> dict:
    return {"path": path, "layer": path.split("/", 1)[0], "domain": domain, "title": title, "description": "d√"}


def write_group(tmp_path, name: str, rows: list[dict]):
    path = tmp_path / f"{name}.json"
    path.write_bytes(encode_group(rows))
    return read_group(path)


def test_a_rows_file_reads_back_each_row(tmp_path):
    rows = [row("microsoft/knowledge/perf/a.md"), row("microsoft/knowledge/perf/b.md", domain="Security")]
    group = write_group(tmp_path, "g", rows)
    assert [(p, d, json.loads(t)) for p, d, t in group.entries()] == [
        (rows[0]["path"], "perf", rows[0]),
        (rows[1]["path"], "Security", rows[1]),
    ]


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data + b'"x"\n',  # a line appended
        lambda data: data[:-5] + b"\n",  # rows cut short
        lambda data: b"{}\n",  # no array of rows
        lambda data: b"",
        lambda data: data.replace(b'"path"', b'"file"', 1),  # a row without its path
        lambda data: data.replace(b'"domain":"perf"', b'"domain":7', 1),  # a domain of the wrong type
    ],
)
def test_a_damaged_rows_file_is_refused_in_one_line(tmp_path, damage):
    path = tmp_path / "g.json"
    path.write_bytes(damage(encode_group([row("microsoft/knowledge/perf/a.md"), row("microsoft/knowledge/perf/b.md")])))
    with pytest.raises(BcevalError) as caught:
        read_group(path).entries()
    assert str(caught.value) == f"{path}: out of date or damaged; run prepare with --force"


def _joined(chunks: list[bytes]) -> list[str]:
    return [r["path"] for r in json.loads(b"[" + b",".join(chunks) + b"]")]


def test_groups_in_separate_runs_of_the_index_order_join_in_index_order(tmp_path):
    groups = [
        write_group(tmp_path, "c", [row("community/knowledge/perf/a.md")]),
        write_group(tmp_path, "m2", [row("microsoft/knowledge/perf-x/a.md")]),
        write_group(tmp_path, "m1", [row("microsoft/knowledge/perf/a.md"), row("microsoft/knowledge/perf/Z.md")]),
    ]
    assert _joined(index_chunks(groups)) == [  # '-' sorts before '/'
        "microsoft/knowledge/perf-x/a.md",
        "microsoft/knowledge/perf/a.md",
        "microsoft/knowledge/perf/Z.md",
        "community/knowledge/perf/a.md",
    ]


def test_interleaving_groups_fall_back_to_sorting_every_row(tmp_path):
    # Folders that differ only in case, and articles directly under knowledge/, interleave.
    groups = [
        write_group(tmp_path, "upper", [row("microsoft/knowledge/Perf/b.md"), row("microsoft/knowledge/Perf/d.md")]),
        write_group(tmp_path, "lower", [row("microsoft/knowledge/perf/a.md"), row("microsoft/knowledge/perf/c.md")]),
        write_group(tmp_path, "top", [row("microsoft/knowledge/a.md"), row("microsoft/knowledge/zz.md")]),
    ]
    assert _joined(index_chunks(groups)) == [
        "microsoft/knowledge/a.md",
        "microsoft/knowledge/perf/a.md",
        "microsoft/knowledge/Perf/b.md",
        "microsoft/knowledge/perf/c.md",
        "microsoft/knowledge/Perf/d.md",
        "microsoft/knowledge/zz.md",
    ]


@pytest.fixture
def interleaved(small_corpus):
    """A corpus whose knowledge groups interleave in the index order."""
    small_corpus.article("Performance", "aaa-case", keywords=["delta"], frontmatter_domain="performance")
    for name in ("overview", "zeta"):
        small_corpus.write(
            f"microsoft/knowledge/{name}.md", "---\ndomain: performance\n---\n\n# Top\n\n## Description\n\nAll.\n"
        )
    return small_corpus


def expected_index(root) -> bytes:
    listing = scan_corpus(root)
    rows = [index_row(rel, steps.read_text(root / rel)) for rel in knowledge_markdown(listing)]
    document = build_index(rows, generated_at())
    return (json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def test_the_index_equals_encoding_every_row_at_once(interleaved, tmp_path):
    settings = settings_for(interleaved.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    assert (settings.prepare_dir / "knowledge-index.json").read_bytes() == expected_index(interleaved.root)
    groups = GraphInputs(settings).groups
    assert len(index_chunks([read_group(BuildDir(settings.build_dir).rows(g)) for g in groups])) == 6  # row by row


def test_the_index_of_the_demo_corpus_equals_encoding_every_row_at_once(tmp_path):
    from conftest import DEMO_CORPUS

    settings = settings_for(DEMO_CORPUS, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    assert (settings.prepare_dir / "knowledge-index.json").read_bytes() == expected_index(DEMO_CORPUS)


def test_an_article_moving_domain_updates_both_candidate_files(small_corpus, tmp_path):
    from test_graph import cold_snapshot

    small_corpus.article("security", "alpha-guard", keywords=["guard"])  # the security cases' article
    settings = settings_for(small_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    moved = "community/knowledge/security/gamma-secret.md"  # the only article of its folder
    small_corpus.article(
        "security", "gamma-secret", "community", keywords=["secrettext"], frontmatter_domain="Performance"
    )
    code, executed = run_graph(settings, "prepare")
    assert code == 0
    assert {"index", "domain:performance", "domain:security"} <= set(executed)
    performance = json.loads(BuildDir(settings.build_dir).domain_articles("performance").read_text())
    security = json.loads(BuildDir(settings.build_dir).domain_articles("security").read_text())
    assert moved in [r["path"] for r in performance] and moved not in [r["path"] for r in security]
    assert snapshot(settings.prepare_dir) == cold_snapshot(small_corpus.root, tmp_path)


def record_candidate_requests(monkeypatch) -> list[list[str]]:
    """The domain lists the index task asks candidate lists for, in call order."""
    asked: list[list[str]] = []
    real = steps.candidate_paths
    monkeypatch.setattr(steps, "candidate_paths", lambda rows, domains: asked.append(domains) or real(rows, domains))
    return asked


def test_a_missing_candidate_file_is_rebuilt_and_force_rebuilds_them_all(small_corpus, tmp_path, monkeypatch):
    from bceval.graph.loader import run_graph as cli_run_graph

    settings = settings_for(small_corpus.root, tmp_path / "out")
    assert run_graph(settings, "prepare")[0] == 0
    right = BuildDir(settings.build_dir).domain_articles("security").read_bytes()
    BuildDir(settings.build_dir).domain_articles("security").unlink()
    assert run_graph(settings, "prepare")[0] == 0
    assert BuildDir(settings.build_dir).domain_articles("security").read_bytes() == right
    asked = record_candidate_requests(monkeypatch)
    assert cli_run_graph(settings, ["prepare"], force=True) == 0
    assert asked == [["performance", "security"]]
