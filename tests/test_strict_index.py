"""The strict knowledge index (upstream-2026-09.md §2): invalid articles skipped with one warning each, rows with
`sourceSha256`, the header's `sourceSnapshot`, the ranking gate of a skipped selected article, and health."""

from __future__ import annotations

import hashlib
import json

import pytest
from cliutil import run_cli
from conftest import SHARED_CORPUS, article_text, requires_shared

from bceval.corpus.layers import knowledge_markdown, scan_corpus
from bceval.corpus.models import KnowledgeIndex
from bceval.corpus.strict import skipped_articles, strict_row
from bceval.evaluators.review.documents import LeafRequest

FIELDS = {
    "bc-version": "[all]",
    "domain": "performance",
    "keywords": "[findset]",
    "technologies": "[al]",
    "countries": "[w1]",
    "application-area": "[all]",
}
BODY = "# Title\n\n## Description\n\nDoes a thing.\n"


def text(body: str = BODY, **changes: str | None) -> str:
    fields = {**FIELDS, **changes}
    lines = "".join(f"{key}: {value}\n" for key, value in fields.items() if value is not None)
    return f"---\n{lines}---\n{body}"


# Each invalid article (file name -> bytes) and the reason the strict builder gives, in its check order.
INVALID = {
    "bad-utf8": (b"---\ndomain: performance\n---\n# T \xff\n", "invalid UTF-8"),
    "no-frontmatter": (b"# Title\n", "missing or unterminated frontmatter"),
    "unterminated": (b"---\ndomain: performance\n# Title\n", "missing or unterminated frontmatter"),
    "scalar-version": (
        text(**{"bc-version": "all"}),
        "frontmatter field 'bc-version' must use non-empty bracket-array syntax",
    ),
    "empty-keywords": (text(keywords="[]"), "frontmatter field 'keywords' must use non-empty bracket-array syntax"),
    "blank-item": (
        text(Keywords="[a, ]", keywords=None),
        "frontmatter field 'Keywords' must use non-empty bracket-array syntax",
    ),
    "no-countries": (text(countries=None), "frontmatter field 'countries' must use non-empty bracket-array syntax"),
    "no-domain": (text(domain=None), "missing domain"),
    "no-title": (text(body="## Description\n\nText.\n"), "missing H1 title"),
    "no-description": (text(body="# Title\n\nText.\n"), "missing Description"),
    "upper-domain": (text(domain="Performance"), "missing/invalid domain"),
    "list-domain": (text(domain="[performance]"), "missing/invalid domain"),
    "mixed-all": (text(**{"bc-version": "[all, 27]"}), "mixed bc-version sentinel"),
    "zero-bound": (text(**{"bc-version": "[0..]"}), "invalid bc-version range bound"),
    "descending": (text(**{"bc-version": '["30..27"]'}), "descending bc-version range"),
    "word-version": (text(**{"bc-version": "[27, latest]"}), "invalid bc-version"),
    "upper-tech": (text(technologies="[AL]"), "invalid technologies"),
    "all-tech": (text(technologies="[all]"), "invalid technologies sentinel"),
    "mixed-w1": (text(countries="[w1, us]"), "mixed countries sentinel"),
    "long-country": (text(countries="[usa]"), "invalid countries"),
    "upper-area": (text(**{"application-area": "[All]"}), "invalid application-area"),
    "mixed-area": (text(**{"application-area": "[all, sales]"}), "mixed application-area sentinel"),
    "bad-keyword": (text(keywords="[Bad_Token]"), "invalid keywords"),
}
VALID = {
    "quoted-range": text(**{"bc-version": '["27.."]'}),
    "versions": text(**{"bc-version": "[27, 28]"}, countries="[us, dk]", **{"application-area": "[sales, finance]"}),
    "bom": "\ufeff" + text(),
}


def as_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


@pytest.mark.parametrize("name", sorted(INVALID))
def test_each_invalid_article_is_skipped_with_its_reason(name):
    data, reason = INVALID[name]
    assert strict_row(f"microsoft/knowledge/performance/{name}.md", as_bytes(data)) == (None, reason)


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_articles_get_a_row_with_the_hash_of_their_bytes(name):
    data = as_bytes(VALID[name])
    row, reason = strict_row(f"microsoft/knowledge/performance/{name}.md", data)
    assert reason is None
    assert list(row)[-3:] == ["description", "parsed", "sourceSha256"]
    assert row["parsed"] is True and row["sourceSha256"] == hashlib.sha256(data).hexdigest()
    if name == "quoted-range":
        assert row["bc-version"] == ['"27.."']  # items keep their quotes


@pytest.fixture
def mixed(small_corpus):
    """The small corpus plus every invalid article of INVALID, unpaired (no case selects one)."""
    for name, (data, _) in INVALID.items():
        small_corpus.write(f"community/knowledge/performance/{name}.md", as_bytes(data))
    return small_corpus


def test_the_strict_index_skips_exactly_the_invalid_articles(mixed):
    rels = knowledge_markdown(scan_corpus(mixed.root))
    expected = {f"community/knowledge/performance/{name}.md": reason for name, (_, reason) in INVALID.items()}
    assert skipped_articles(mixed.root, rels) == expected


def snapshot_of(rows: list[dict]) -> str:
    manifest = [{"path": row["path"], "sha256": row["sourceSha256"]} for row in sorted(rows, key=lambda r: r["path"])]
    return hashlib.sha256(json.dumps(manifest, separators=(",", ":")).encode()).hexdigest()


def test_prepare_with_the_strict_index(mixed, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run_cli(capsys, "prepare", "--corpus", mixed.root, "--out", out, "--index", "strict")
    assert code == 0, err
    warnings = [line for line in err if "Skipping invalid knowledge article" in line]
    assert sorted(warnings) == sorted(
        f"bceval: warning: Skipping invalid knowledge article 'community/knowledge/performance/{name}.md': {reason}."
        for name, (_, reason) in INVALID.items()
    )
    index = json.loads((out / "review" / "knowledge-index.json").read_text())
    assert list(index) == [
        "version",
        "generatedAt",
        "enabledLayers",
        "knowledgeAllow",
        "knowledgeDeny",
        "articleCount",
        "sourceSnapshot",
        "articles",
    ]
    assert [row["path"] for row in index["articles"]] == [
        "microsoft/knowledge/performance/alpha-check.md",
        "microsoft/knowledge/performance/beta-loop.md",
        "community/knowledge/security/gamma-secret.md",
    ]
    assert index["sourceSnapshot"] == snapshot_of(index["articles"])
    article = mixed.root / "microsoft/knowledge/performance/alpha-check.md"
    assert index["articles"][0]["sourceSha256"] == hashlib.sha256(article.read_bytes()).hexdigest()
    request = json.loads(next((out / "review").glob("request-case-*.json")).read_text())
    assert all(len(row["sourceSha256"]) == 64 for row in request["candidateArticles"])
    KnowledgeIndex.model_validate(index)  # the committed schemas allow both
    LeafRequest.model_validate(request)
    (mixed.root / "community/knowledge/performance/bad-utf8.md").unlink()  # the lenient index refuses it
    code, _, err = run_cli(capsys, "prepare", "--corpus", mixed.root, "--out", out)  # back to the lenient index
    assert code == 0 and not [line for line in err if "Skipping" in line]
    index = json.loads((out / "review" / "knowledge-index.json").read_text())
    assert "sourceSnapshot" not in index and index["articleCount"] == 3 + len(INVALID) - 1
    assert all("sourceSha256" not in row for row in index["articles"])


def test_a_selected_article_the_strict_index_skips_fails_the_ranking_gate(small_corpus, tmp_path, capsys):
    small_corpus.write("microsoft/knowledge/performance/alpha-check.md", text(keywords="[IsEmpty]"))
    out = tmp_path / "out"
    code, stdout, _ = run_cli(capsys, "prepare", "--corpus", small_corpus.root, "--out", out, "--index", "strict")
    assert code == 1
    assert (
        "performance-bad: ranking gate failed: the strict index skips microsoft/knowledge/performance/alpha-check.md "
        "(invalid keywords), so no ranking can select it; fix the article, or select another with an 'article' "
        "override" in "\n".join(stdout)
    )
    code, _, _ = run_cli(capsys, "prepare", "--corpus", small_corpus.root, "--out", out)
    assert code == 0  # the lenient index keeps it


@pytest.mark.parametrize("index", ["lenient", "strict"])
def test_health_lists_skipped_articles_and_the_cases_they_break_in_any_mode(small_corpus, tmp_path, capsys, index):
    small_corpus.write("microsoft/knowledge/performance/alpha-check.md", text(keywords="[IsEmpty]"))
    small_corpus.write("microsoft/knowledge/performance/zeta.md", article_text("Performance", "Zeta", ["zeta"]))
    out = tmp_path / "out"
    run_cli(capsys, "health", "--corpus", small_corpus.root, "--out", out, "--index", index)
    findings = json.loads((out / "health.json").read_text())["findings"]
    strict = [(f["kind"], f["severity"], f["path"], f["case"]) for f in findings if f["kind"].startswith("strict")]
    severity = "error" if index == "strict" else "warning"
    alpha = "microsoft/knowledge/performance/alpha-check.md"
    assert sorted(strict) == [
        ("strict-gate", severity, alpha, "performance-bad"),
        ("strict-gate", severity, alpha, "performance-good"),
        ("strict-skip", "warning", alpha, None),
        ("strict-skip", "warning", "microsoft/knowledge/performance/zeta.md", None),
    ]


@requires_shared
def test_the_strict_index_skips_nothing_of_the_shared_corpus():
    assert skipped_articles(SHARED_CORPUS, knowledge_markdown(scan_corpus(SHARED_CORPUS))) == {}


@pytest.mark.parametrize("index", ["lenient", "strict"])
def test_an_article_that_is_no_utf8_is_an_error_only_for_the_lenient_index(small_corpus, tmp_path, capsys, index):
    small_corpus.write("microsoft/knowledge/performance/broken.md", INVALID["bad-utf8"][0])
    out = tmp_path / "out"
    run_cli(capsys, "health", "--corpus", small_corpus.root, "--out", out, "--index", index)
    findings = json.loads((out / "health.json").read_text())["findings"]
    kinds = {f["kind"] for f in findings if f.get("path") == "microsoft/knowledge/performance/broken.md"}
    assert kinds == ({"strict-skip"} if index == "strict" else {"strict-skip", "unreadable-file"})
