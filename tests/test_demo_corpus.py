"""The embedded demo corpus exercises the whole convention and prepares cleanly."""

from __future__ import annotations

import json

from conftest import DEMO_CORPUS

from bceval.corpus.articles import index_row
from bceval.corpus.index import domain_articles
from bceval.corpus.layers import LAYERS, discover_leaves, knowledge_markdown, scan_corpus
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest


def derivation():
    manifest = json.loads((DEMO_CORPUS / "evaluation/review-fixtures.json").read_text())
    return derive_cases(scan_corpus(DEMO_CORPUS), check_manifest(manifest))


def test_demo_corpus_covers_the_convention():
    listing = scan_corpus(DEMO_CORPUS)
    result = derivation()
    assert result.problems == []
    assert {rel.split("/", 1)[0] for rel in listing.files} == set(LAYERS)
    leaves = discover_leaves(listing)
    assert len(leaves) >= 5
    assert any(
        leaf.layer != "microsoft" and listing.has_file(f"microsoft/skills/review/al-{leaf.domain}-review.md")
        for leaf in leaves
    ), "a higher-layer leaf must override a microsoft leaf"
    articles = knowledge_markdown(listing)
    assert len(articles) >= 30
    rows = [index_row(rel, (DEMO_CORPUS / rel).read_text(encoding="utf-8-sig")) for rel in articles]
    assert all(row["parsed"] for row in rows)
    assert max(len(domain_articles(rows, leaf.domain)) for leaf in leaves) > 10
    names = [rel.rsplit("/", 1)[1] for rel in articles]
    assert len(names) > len(set(names)), "a higher-layer article must override a lower-layer slug"
    overrides = json.loads((DEMO_CORPUS / "evaluation/review-fixtures.json").read_text())["overrides"]
    members = {member for value in overrides.values() for member in value}
    assert members == {"article", "context", "additionalArticles"}
    assert any("-bad-" in case.id for case in result.cases)


def test_demo_corpus_has_crlf_and_bom_files():
    files = [p for p in DEMO_CORPUS.rglob("*") if p.is_file() and p.suffix in {".md", ".al"}]
    raw = {p: p.read_bytes() for p in files}
    for suffix in (".md", ".al"):
        assert any(p.suffix == suffix and b"\r\n" in data for p, data in raw.items())
        assert any(p.suffix == suffix and data.startswith(b"\xef\xbb\xbf") for p, data in raw.items())
