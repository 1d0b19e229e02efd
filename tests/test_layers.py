"""Corpus listing, leaves, paired articles, the index header and a domain's candidates (spec §3-§5, §12, §13.1)."""

from __future__ import annotations

import os
import sys

import pytest

from bceval.clock import generated_at
from bceval.corpus.index import build_index, domain_articles
from bceval.corpus.layers import (
    Leaf,
    PairedArticle,
    discover_leaves,
    knowledge_markdown,
    paired_articles,
    scan_corpus,
    sort_key,
)
from bceval.errors import BcevalError


def leaf_domains(corpus) -> list[str]:
    return [leaf.domain for leaf in discover_leaves(scan_corpus(corpus.root))]


def touch(corpus, *rels: str) -> None:
    for rel in rels:
        corpus.write(rel, "x\n")


# --- sort key ---------------------------------------------------------------------------------------


def test_sort_key_is_ordinal_lowercase_then_original():
    names = ["b", "B", "a-c", "ab", "A", "a_b", "a.b"]
    assert sorted(names, key=sort_key) == ["A", "a-c", "a.b", "a_b", "ab", "B", "b"]


# --- scan -------------------------------------------------------------------------------------------


def test_scan_lists_knowledge_recursively_and_review_folder_flat(corpus):
    touch(
        corpus,
        "microsoft/skills/review/al-x-review.md",
        "microsoft/skills/review/sub/al-y-review.md",
        "microsoft/knowledge/x/a.md",
        "microsoft/knowledge/x/deep/b.md",
        "microsoft/other/c.md",
    )
    files = scan_corpus(corpus.root).files
    assert files == (
        "microsoft/knowledge/x/a.md",
        "microsoft/knowledge/x/deep/b.md",
        "microsoft/skills/review/al-x-review.md",
    )


def test_scan_ignores_hidden_files_and_folders(corpus):
    touch(
        corpus,
        "microsoft/knowledge/x/.hidden.md",
        "microsoft/knowledge/x/.drafts/a.md",
        "microsoft/skills/review/.al-x-review.md",
        "microsoft/knowledge/x/seen.md",
    )
    assert scan_corpus(corpus.root).files == ("microsoft/knowledge/x/seen.md",)


def test_scan_ignores_unknown_layers(corpus):
    touch(corpus, "vendor/knowledge/x/a.md", "custom/knowledge/x/a.md")
    assert scan_corpus(corpus.root).files == ("custom/knowledge/x/a.md",)


def test_scan_of_missing_layers_is_empty(corpus):
    assert scan_corpus(corpus.root).files == ()


def _symlink(target, link) -> None:
    try:
        os.symlink(target, link)
    except (OSError, NotImplementedError) as exc:  # pragma: no cover - platform dependent
        pytest.skip(f"symlinks not supported: {exc}")


def test_symlink_leading_outside_the_corpus_is_refused(corpus, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n", encoding="utf-8")
    folder = corpus.root / "microsoft" / "knowledge" / "x"
    folder.mkdir(parents=True)
    link = folder / "leak.md"
    _symlink(outside, link)
    with pytest.raises(BcevalError) as info:
        scan_corpus(corpus.root)
    assert str(link) in str(info.value)
    assert "outside the corpus" in str(info.value)


def test_symlinked_folder_leading_outside_the_corpus_is_refused(corpus, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.md").write_text("x\n", encoding="utf-8")
    (corpus.root / "community" / "knowledge").mkdir(parents=True)
    link = corpus.root / "community" / "knowledge" / "linked"
    _symlink(outside, link)
    with pytest.raises(BcevalError, match="outside the corpus"):
        scan_corpus(corpus.root)


def test_symlink_inside_the_corpus_is_listed(corpus):
    real = corpus.write("microsoft/knowledge/x/real.md", "x\n")
    _symlink(real, real.parent / "alias.md")
    assert scan_corpus(corpus.root).files == ("microsoft/knowledge/x/alias.md", "microsoft/knowledge/x/real.md")


def test_symlink_loop_inside_the_corpus_is_a_clean_error_or_skipped(corpus):
    folder = corpus.root / "microsoft" / "knowledge" / "x"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("x\n", encoding="utf-8")
    _symlink("..", folder / "loop")
    try:
        listing = scan_corpus(corpus.root)
    except BcevalError as exc:
        assert "loop" in str(exc)
        return
    assert "microsoft/knowledge/x/a.md" in listing.files


# --- leaves -----------------------------------------------------------------------------------------


def test_leaves_are_al_star_review_files_directly_in_review_folder(corpus):
    touch(
        corpus,
        "microsoft/skills/review/al-performance-review.md",
        "microsoft/skills/review/al-code-review.md",
        "microsoft/skills/review/al-foo-reviewer.md",
        "microsoft/skills/review/nested/al-nested-review.md",
        "microsoft/skills/review/bc-x-review.md",
        "microsoft/skills/review/al-upper-review.MD",
        "microsoft/skills/review/al-extended-review.md",
        "microsoft/knowledge/al-knowledge-review.md",
    )
    assert leaf_domains(corpus) == ["extended", "performance"]


def test_super_skill_is_excluded_case_insensitively(corpus):
    touch(corpus, "custom/skills/review/al-Code-review.md")
    assert leaf_domains(corpus) == []


def test_leaf_patterns_are_case_sensitive(corpus):
    touch(corpus, "microsoft/skills/review/AL-x-review.md", "microsoft/skills/review/al-y-Review.md")
    assert leaf_domains(corpus) == []


def test_highest_layer_leaf_wins_and_its_path_is_recorded(corpus):
    corpus.leaf("performance", layer="microsoft")
    corpus.leaf("performance", layer="custom")
    corpus.leaf("performance", layer="community")
    corpus.leaf("security", layer="microsoft")
    corpus.leaf("security", layer="community")
    leaves = discover_leaves(scan_corpus(corpus.root))
    assert leaves == [
        Leaf("performance", "custom", "custom/skills/review/al-performance-review.md"),
        Leaf("security", "community", "community/skills/review/al-security-review.md"),
    ]


def test_leaves_sorted_by_domain_across_layers(corpus):
    corpus.leaf("ui", layer="microsoft")
    corpus.leaf("Agents", layer="custom")
    corpus.leaf("data-modeling", layer="community")
    corpus.leaf("appsource", layer="microsoft")
    assert leaf_domains(corpus) == ["Agents", "appsource", "data-modeling", "ui"]


def test_leaf_domain_strips_prefix_and_suffix(corpus):
    corpus.leaf("data-modeling")
    leaf = discover_leaves(scan_corpus(corpus.root))[0]
    assert leaf.domain == "data-modeling"
    assert leaf.path == "microsoft/skills/review/al-data-modeling-review.md"


# --- paired articles --------------------------------------------------------------------------------


def test_paired_article_needs_both_samples_in_the_same_folder(corpus):
    touch(
        corpus,
        "microsoft/knowledge/p/both.md",
        "microsoft/knowledge/p/both.good.al",
        "microsoft/knowledge/p/both.bad.al",
        "microsoft/knowledge/p/only-good.md",
        "microsoft/knowledge/p/only-good.good.al",
        "microsoft/knowledge/p/only-bad.md",
        "microsoft/knowledge/p/only-bad.bad.al",
        "microsoft/knowledge/p/split.md",
        "microsoft/knowledge/p/split.good.al",
        "community/knowledge/p/split.bad.al",
    )
    paired = paired_articles(scan_corpus(corpus.root), "p")
    assert paired == [PairedArticle("both", "microsoft", "microsoft/knowledge/p/both.md")]


def test_sample_patterns_are_case_sensitive(corpus):
    touch(corpus, "microsoft/knowledge/p/a.md", "microsoft/knowledge/p/a.Good.al", "microsoft/knowledge/p/a.bad.al")
    assert paired_articles(scan_corpus(corpus.root), "p") == []


def test_paired_articles_sorted_by_slug_so_prefix_comes_first(corpus):
    corpus.article("p", "foo-bar")
    corpus.article("p", "foo")
    corpus.article("p", "Alpha")
    assert [a.slug for a in paired_articles(scan_corpus(corpus.root), "p")] == ["Alpha", "foo", "foo-bar"]


def test_unpaired_higher_copy_does_not_hide_paired_lower_copy(corpus):
    corpus.article("p", "x", layer="microsoft")
    corpus.article("p", "x", layer="custom", paired=False)
    paired = paired_articles(scan_corpus(corpus.root), "p")
    assert paired == [PairedArticle("x", "microsoft", "microsoft/knowledge/p/x.md")]


def test_paired_higher_copy_overrides_lower_copy(corpus):
    corpus.article("p", "x", layer="microsoft")
    corpus.article("p", "x", layer="community")
    paired = paired_articles(scan_corpus(corpus.root), "p")
    assert paired == [PairedArticle("x", "community", "community/knowledge/p/x.md")]


def test_precedence_groups_slugs_case_insensitively(corpus):
    corpus.article("p", "X-Thing", layer="custom")
    corpus.article("p", "x-thing", layer="microsoft")
    paired = paired_articles(scan_corpus(corpus.root), "p")
    assert paired == [PairedArticle("X-Thing", "custom", "custom/knowledge/p/X-Thing.md")]


def test_subfolder_articles_are_never_paired_but_listed_for_the_index(corpus):
    touch(corpus, "microsoft/knowledge/p/sub/deep.md", "microsoft/knowledge/p/sub/deep.good.al")
    touch(corpus, "microsoft/knowledge/p/sub/deep.bad.al")
    listing = scan_corpus(corpus.root)
    assert paired_articles(listing, "p") == []
    assert knowledge_markdown(listing) == ["microsoft/knowledge/p/sub/deep.md"]


def test_paired_articles_use_the_domain_folder_case_sensitively(corpus):
    corpus.article("Perf", "x")
    listing = scan_corpus(corpus.root)
    assert paired_articles(listing, "perf") == []
    assert [a.slug for a in paired_articles(listing, "Perf")] == ["x"]


def test_paired_article_folder_is_its_layer_folder(corpus):
    corpus.article("p", "x", layer="community")
    assert paired_articles(scan_corpus(corpus.root), "p")[0].folder == "community/knowledge/p"


# --- knowledge markdown -----------------------------------------------------------------------------


def test_knowledge_markdown_is_layer_order_then_path(corpus):
    touch(
        corpus,
        "custom/knowledge/a/z.md",
        "community/knowledge/b/b.md",
        "community/knowledge/a/sub/c.md",
        "microsoft/knowledge/z/y.md",
        "microsoft/knowledge/B/x.md",
        "microsoft/knowledge/top.md",
        "microsoft/knowledge/z/y.good.al",
        "microsoft/skills/review/al-z-review.md",
    )
    assert knowledge_markdown(scan_corpus(corpus.root)) == [
        "microsoft/knowledge/B/x.md",
        "microsoft/knowledge/top.md",
        "microsoft/knowledge/z/y.md",
        "community/knowledge/a/sub/c.md",
        "community/knowledge/b/b.md",
        "custom/knowledge/a/z.md",
    ]


def test_knowledge_markdown_skips_hidden_files(corpus):
    touch(corpus, "microsoft/knowledge/p/.draft.md", "microsoft/knowledge/p/ok.md")
    assert knowledge_markdown(scan_corpus(corpus.root)) == ["microsoft/knowledge/p/ok.md"]


# --- index header -----------------------------------------------------------------------------------


def test_generated_at_defaults_to_unix_epoch():
    assert generated_at({}) == "1970-01-01T00:00:00.0000000Z"


def test_generated_at_uses_source_date_epoch():
    assert generated_at({"SOURCE_DATE_EPOCH": "1700000000"}) == "2023-11-14T22:13:20.0000000Z"


def test_generated_at_blank_source_date_epoch_is_epoch():
    assert generated_at({"SOURCE_DATE_EPOCH": "  "}) == "1970-01-01T00:00:00.0000000Z"


def test_generated_at_rejects_non_integer():
    with pytest.raises(BcevalError, match="SOURCE_DATE_EPOCH"):
        generated_at({"SOURCE_DATE_EPOCH": "yesterday"})


def test_build_index_header_order_and_empty_lists():
    rows = [{"path": "a"}, {"path": "b"}]
    index = build_index(rows, "T")
    assert list(index) == [
        "version",
        "generatedAt",
        "enabledLayers",
        "knowledgeAllow",
        "knowledgeDeny",
        "articleCount",
        "articles",
    ]
    assert index == {
        "version": 1,
        "generatedAt": "T",
        "enabledLayers": [],
        "knowledgeAllow": [],
        "knowledgeDeny": [],
        "articleCount": 2,
        "articles": rows,
    }


# --- domain articles --------------------------------------------------------------------------------


def row(path: str, domain: str) -> dict:
    return {"path": path, "layer": path.split("/", 1)[0], "domain": domain}


def test_domain_articles_match_domain_case_insensitively():
    rows = [row("microsoft/knowledge/p/a.md", "Performance"), row("microsoft/knowledge/s/b.md", "security")]
    assert domain_articles(rows, "performance") == [rows[0]]


def test_domain_articles_use_row_domain_not_folder():
    rows = [row("microsoft/knowledge/security/a.md", "performance")]
    assert domain_articles(rows, "security") == []
    assert domain_articles(rows, "performance") == rows


def test_domain_articles_dedupe_by_file_name_higher_layer_wins():
    ms = row("microsoft/knowledge/p/x.md", "p")
    community = row("community/knowledge/p/x.md", "p")
    custom = row("custom/knowledge/p/X.md", "p")
    assert domain_articles([ms, community, custom], "p") == [custom]
    assert domain_articles([ms, community], "p") == [community]


def test_domain_articles_dedupe_crosses_folders_within_a_layer_first_path_wins():
    a = row("microsoft/knowledge/p/sub/x.md", "p")
    b = row("microsoft/knowledge/p/x.md", "p")
    assert domain_articles([b, a], "p") == [a]


def test_domain_articles_sorted_by_path_community_custom_microsoft():
    rows = [
        row("microsoft/knowledge/p/a.md", "p"),
        row("custom/knowledge/p/c.md", "p"),
        row("community/knowledge/p/z.md", "p"),
        row("microsoft/knowledge/p/B.md", "p"),
    ]
    assert [r["path"] for r in domain_articles(rows, "p")] == [
        "community/knowledge/p/z.md",
        "custom/knowledge/p/c.md",
        "microsoft/knowledge/p/a.md",
        "microsoft/knowledge/p/B.md",
    ]


def test_listing_digest_changes_with_names_only(corpus):
    from bceval.corpus.layers import Listing

    first = Listing(root=corpus.root, by_dir={"microsoft/knowledge/x": frozenset({"a.md", "b.md"})})
    same = Listing(root=corpus.root, by_dir={"microsoft/knowledge/x": frozenset({"b.md", "a.md"})})
    renamed = Listing(root=corpus.root, by_dir={"microsoft/knowledge/x": frozenset({"a.md", "c.md"})})
    moved = Listing(root=corpus.root, by_dir={"microsoft/knowledge/y": frozenset({"a.md", "b.md"})})
    assert first.digest == same.digest
    assert len({first.digest, renamed.digest, moved.digest}) == 3


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="these file systems only store Unicode names")
def test_a_file_name_that_is_not_utf8_is_refused_in_one_line(corpus, tmp_path):
    corpus.article("perf", "fine")
    folder = os.fsencode(corpus.root / "microsoft/knowledge/perf")
    with open(folder + b"/caf\xe9.md", "w") as handle:  # Latin-1 bytes
        handle.write("---\ndomain: perf\n---\n")
    with pytest.raises(BcevalError) as caught:
        scan_corpus(corpus.root)
    assert str(caught.value).endswith("microsoft/knowledge/perf/caf\udce9.md: file name is not valid UTF-8; rename it")
    corpus.article("perf", "caf\u00e9-ok")  # proper UTF-8 non-ASCII names are fine
    (corpus.root / "microsoft/knowledge/perf").joinpath(os.fsdecode(b"caf\xe9.md")).unlink()
    assert "caf\u00e9-ok.md" in scan_corpus(corpus.root).names_in("microsoft/knowledge/perf")
