"""Model ids and neutral samples (§10, §11.3), ranking and the gate (§13.2-§13.4), request files (§11.6)."""

from __future__ import annotations

import json

import pytest

from bceval.corpus.articles import index_row
from bceval.corpus.index import domain_articles
from bceval.corpus.layers import discover_leaves, knowledge_markdown, scan_corpus, sort_key
from bceval.errors import EvaluationFailed
from bceval.evaluators.base import model_id
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest
from bceval.evaluators.review.neutral import neutral_file_text, neutralize
from bceval.evaluators.review.ranking import expected_article, gate_problem, rank_candidates
from bceval.evaluators.review.requests import OUTPUT_LINE, RESULT_SCHEMA, domain_files, leaf_instructions

# --- model ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [
        ("performance-bad", "case-0ad1f118"),
        ("performance-good", "case-7f25e261"),
        ("appsource-bad", "case-a8ae3082"),
        ("data-modeling-bad", "case-636b164b"),
        ("data-modeling-bad-owning-table-must-delete-dependents-in-ondelete", "case-1b2b4d8e"),
    ],
)
def test_model_id_matches_spec_table(case_id, expected):
    assert model_id(case_id) == expected


def test_model_id_is_case_sensitive_on_input():
    assert model_id("Performance-bad") != model_id("performance-bad")


# --- neutralize: comments ---------------------------------------------------------------------------


def test_full_line_comment_is_removed_with_its_line_break():
    assert neutralize("a\n// comment\nb\n") == "a\nb\n"


def test_indented_comment_line_is_removed():
    assert neutralize("a\n    // indented\n\tb\n") == "a\n\tb\n"


def test_doc_comment_line_is_removed():
    assert neutralize("/// <summary>doc</summary>\nprocedure X();\n") == "procedure X();\n"


def test_blank_lines_right_before_a_comment_line_vanish():
    assert neutralize("a\n\n   \n// c\nb\n") == "a\nb\n"


def test_blank_lines_not_before_a_comment_are_kept():
    assert neutralize("a\n\nb\n") == "a\n\nb\n"


def test_crlf_comment_line_is_removed_with_its_crlf():
    assert neutralize("a\r\n// c\r\nb\r\n") == "a\r\nb\r\n"


def test_comment_on_last_line_without_newline_is_removed():
    assert neutralize("a\n// last") == "a\n"


def test_trailing_code_comment_is_kept():
    assert neutralize("x := 1; // keep me\n") == "x := 1; // keep me\n"


def test_comment_marker_inside_string_at_line_start_is_removed_too():
    assert neutralize("Msg('\n// looks like a comment\n');\n") == "Msg('\n');\n"


# --- neutralize: labels -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('codeunit 50100 "Perf Bad"', 'codeunit 50100 "Perf Eval"'),
        ("Good", "Eval"),
        ("Bad-Example", "Eval-Example"),
        ("'Good Customer'", "'Eval Customer'"),
        ("Good.Bad", "Eval.Eval"),
    ],
)
def test_whole_word_good_and_bad_become_eval(source, expected):
    assert neutralize(source) == expected


@pytest.mark.parametrize("source", ["good", "BAD", "GoodCustomer", "Good_x", "Goods", "NotBad", "bad", "GOOD"])
def test_label_rule_is_case_sensitive_and_whole_word(source):
    assert neutralize(source) == source


def test_labels_inside_removed_comment_do_not_matter():
    assert neutralize("// Bad example\nGood;\n") == "Eval;\n"


def test_neutral_file_text_appends_exactly_one_lf():
    assert neutral_file_text("a\n") == "a\n\n"
    assert neutral_file_text("a") == "a\n"
    assert neutral_file_text("a\r\n") == "a\r\n\n"


# --- ranking ----------------------------------------------------------------------------------------


def art(name: str, keywords=(), title: str = "", description: str = "") -> dict:
    return {
        "path": f"microsoft/knowledge/p/{name}.md",
        "title": title,
        "description": description,
        "keywords": list(keywords),
    }


FILLERS = [art(f"zz-filler-{i:02d}") for i in range(10)]


def ranked_names(rows: list[dict], text: str) -> list[str]:
    """Rank the rows plus 10 zero-score fillers (so scoring happens); names of the non-fillers in rank order."""
    result = rank_candidates(rows + FILLERS, text)
    assert len(result) == 10
    return [r["path"].rsplit("/", 1)[1][:-3] for r in result if "zz-filler" not in r["path"]][: len(rows)]


def test_ten_or_fewer_candidates_are_returned_unchanged():
    rows = [art("z-last"), art("a-first", keywords=["setloadfields"]), art("m-mid")]
    rows = rows + [art(f"x{i}") for i in range(7)]
    result = rank_candidates(rows, "Rec.SetLoadFields(Name);")
    assert result == rows
    assert [r["path"] for r in result] == [r["path"] for r in rows]


def test_ten_or_fewer_candidates_are_a_copy():
    rows = [art("b"), art("a")]
    result = rank_candidates(rows, "text")
    result.append(art("c"))
    assert len(rows) == 2


def test_more_than_ten_keeps_the_ten_best():
    rows = [art(f"n{i:02d}") for i in range(11)] + [art("zzz-winner", keywords=["setloadfields"])]
    result = rank_candidates(rows, "Rec.SetLoadFields();")
    assert len(result) == 10
    assert result[0]["path"].endswith("zzz-winner.md")
    assert "microsoft/knowledge/p/n10.md" not in [r["path"] for r in result]


def test_ties_are_broken_by_path_case_insensitively():
    rows = [art("C"), art("b"), art("A")] + [art(f"d{i:02d}") for i in range(9)]
    result = rank_candidates(rows, "nothing matches")
    assert [r["path"] for r in result] == sorted((r["path"] for r in rows), key=sort_key)[:10]


PART_WORDS = ["alpha", "bravo", "charlie", "delta", "foxtrot", "golf", "hotel", "india"]


def test_squeezed_keyword_match_weighs_eight_part_matches():
    text = "Rec.SetLoadFields(); " + " ".join(PART_WORDS)
    squeeze = art("b-squeeze", keywords=["Set-Load Fields"])
    eight_parts = art("a-parts", keywords=[f"{w} qqqq" for w in PART_WORDS])
    seven_parts = art("a-parts", keywords=[f"{w} qqqq" for w in PART_WORDS[:7]])
    assert ranked_names([squeeze, eight_parts], text) == ["a-parts", "b-squeeze"]  # 8 == 8: path decides
    assert ranked_names([squeeze, seven_parts], text) == ["b-squeeze", "a-parts"]  # 8 > 7


def test_squeezed_keyword_matches_across_separators_in_case_text():
    row = art("z-hit", keywords=["setloadfields"])
    assert ranked_names([art("a-zero"), row], "Rec.Set_Load-Fields();") == ["z-hit", "a-zero"]


def test_keyword_part_counts_only_as_whole_token():
    row = art("z-part", keywords=["load qqqq"])
    assert ranked_names([art("a-zero"), row], "download") == ["a-zero", "z-part"]
    assert ranked_names([art("a-zero"), row], "down load") == ["z-part", "a-zero"]


def test_keyword_parts_shorter_than_four_do_not_count():
    row = art("z-short", keywords=["abc qqqq"])
    assert ranked_names([art("a-zero"), row], "abc") == ["a-zero", "z-short"]


def test_repeated_keyword_parts_count_each_time():
    twice = art("b-twice", keywords=["load qqqq", "load rrrr"])
    once = art("a-once", keywords=["load qqqq"])
    assert ranked_names([once, twice], "load") == ["b-twice", "a-once"]


def test_topic_terms_weigh_a_quarter():
    text = "alpha bravo charlie delta foxtrot"
    part = art("a-part", keywords=["alpha qqqq"])
    four_terms = art("b-terms", title="bravo charlie delta foxtrot")
    five_terms = art("b-terms", title="alpha bravo charlie delta foxtrot")
    assert ranked_names([part, four_terms], text) == ["a-part", "b-terms"]  # 1 == 4 * 0.25
    assert ranked_names([part, five_terms], text) == ["b-terms", "a-part"]  # 1 < 5 * 0.25


def test_topic_terms_shorter_than_five_do_not_count():
    row = art("z-short", title="echo golf")
    assert ranked_names([art("a-zero"), row], "echo golf") == ["a-zero", "z-short"]


def test_topic_term_matches_as_substring_of_description():
    row = art("z-desc", description="Avoid reorder loops.")
    assert ranked_names([art("a-zero"), row], "order") == ["z-desc", "a-zero"]


def test_topic_includes_the_path():
    assert ranked_names([art("a-zero"), art("z-setloadfields")], "SetLoadFields") == ["z-setloadfields", "a-zero"]


def test_non_ascii_letters_act_as_separators():
    row = art("z-order", keywords=["order qqqq"])
    assert ranked_names([art("a-zero"), row], "Kunde\u00f1order") == ["z-order", "a-zero"]


def test_null_keyword_counts_as_empty():
    row = art("z-null", keywords=[None])
    assert ranked_names([art("a-zero"), row], "anything") == ["a-zero", "z-null"]


# --- gate -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case_input", "expected"),
    [
        ("microsoft/knowledge/p/x.bad.al", "microsoft/knowledge/p/x.md"),
        ("custom/knowledge/p/x.good.al", "custom/knowledge/p/x.md"),
        ("custom/knowledge/p/x.GOOD.AL", "custom/knowledge/p/x.md"),
        ("custom/knowledge/p/x.al", "custom/knowledge/p/x.al"),
    ],
)
def test_expected_article_replaces_sample_suffix(case_input, expected):
    assert expected_article(case_input) == expected


def test_gate_passes_when_own_article_is_ranked_case_insensitively():
    ranked = [art("other"), {"path": "microsoft/knowledge/P/X.md"}]
    assert gate_problem("p-bad", "microsoft/knowledge/p/x.bad.al", ranked) is None


def test_gate_fails_with_one_line_naming_case_and_article():
    problem = gate_problem("p-good", "community/knowledge/p/x.good.al", [art("other")])
    assert problem is not None
    assert problem.startswith("p-good: ")
    assert "community/knowledge/p/x.md" in problem
    assert "\n" not in problem


def test_gate_compares_whole_paths_not_layers_alone():
    ranked = [{"path": "custom/knowledge/p/x.md"}]
    assert gate_problem("p-bad", "microsoft/knowledge/p/x.bad.al", ranked) is not None


# --- leaf instructions ------------------------------------------------------------------------------

SUFFIX = "\n## Output\n" + OUTPUT_LINE


def test_leaf_instructions_cut_at_output_heading_and_append_contract():
    leaf = "# Leaf\n\nDo things.\n\n## Output\n\nOld format.\n## Later\nMore.\n"
    assert leaf_instructions(leaf) == "# Leaf\n\nDo things.\n\n" + SUFFIX


def test_leaf_instructions_heading_is_case_insensitive_with_trailing_whitespace():
    assert leaf_instructions("Body\n## OUTPUT \t\nold\n") == "Body\n" + SUFFIX


def test_leaf_instructions_heading_with_crlf():
    assert leaf_instructions("Body\r\n## Output\r\nold\r\n") == "Body\r\n" + SUFFIX


def test_leaf_instructions_cut_at_first_output_heading():
    assert leaf_instructions("A\n## Output\nB\n## Output\nC\n") == "A\n" + SUFFIX


def test_leaf_instructions_heading_needs_a_line_break():
    leaf = "Body\n## Output"
    assert leaf_instructions(leaf) == leaf + SUFFIX


@pytest.mark.parametrize("heading", ["### Output\n", " ## Output\n", "## Output format\n", "## Outputs\n"])
def test_leaf_instructions_other_headings_do_not_cut(heading):
    leaf = f"Body\n{heading}rest\n"
    assert leaf_instructions(leaf) == leaf + SUFFIX


def test_leaf_instructions_without_output_heading_keep_everything():
    leaf = "# Leaf\n\nNo output section.\n"
    assert leaf_instructions(leaf) == leaf + SUFFIX


# --- domain files -----------------------------------------------------------------------------------


def prepare_inputs(corpus, domain: str):
    listing = scan_corpus(corpus.root)
    derivation = derive_cases(listing, check_manifest(json.loads(corpus.manifest.read_text())))
    assert derivation.problems == []
    leaf = next(leaf for leaf in discover_leaves(listing) if leaf.domain == domain)
    rows = [index_row(rel, (corpus.root / rel).read_text(encoding="utf-8")) for rel in knowledge_markdown(listing)]
    cases = derivation.cases_of(domain)
    samples = {case.input: (corpus.root / case.input).read_text(encoding="utf-8") for case in cases}
    leaf_text = (corpus.root / leaf.path).read_text(encoding="utf-8")
    return leaf, leaf_text, domain_articles(rows, domain), cases, samples


def prepare_files_for(corpus, domain: str) -> dict[str, str]:
    leaf, leaf_text, articles, cases, samples = prepare_inputs(corpus, domain)
    return domain_files(domain, leaf.path, leaf_text, articles, cases, samples)


def test_domain_files_are_exactly_index_request_and_per_case_files(small_corpus):
    leaf, leaf_text, articles, cases, samples = prepare_inputs(small_corpus, "performance")
    files = domain_files("performance", leaf.path, leaf_text, articles, cases, samples)
    assert sorted(files) == sorted(
        [
            "index-performance.json",
            "request-performance.json",
            "case-0ad1f118.al",
            "request-case-0ad1f118.json",
            "case-7f25e261.al",
            "request-case-7f25e261.json",
        ]
    )


def test_case_files_hold_the_neutral_sample_text(small_corpus):
    leaf, leaf_text, articles, cases, samples = prepare_inputs(small_corpus, "performance")
    files = domain_files("performance", leaf.path, leaf_text, articles, cases, samples)
    bad = samples["microsoft/knowledge/performance/alpha-check.bad.al"]
    assert files["case-0ad1f118.al"] == neutral_file_text(bad)
    assert files["case-0ad1f118.al"] == 'codeunit 50100 "alpha-check Eval"\n{\n}\n\n'


def test_domain_index_file_members(small_corpus):
    articles = prepare_inputs(small_corpus, "performance")[2]
    index = json.loads(prepare_files_for(small_corpus, "performance")["index-performance.json"])
    assert list(index) == ["version", "domain", "articleCount", "articles"]
    assert index == {"version": 1, "domain": "performance", "articleCount": 2, "articles": articles}


def test_domain_request_member_order_and_values(small_corpus):
    leaf, leaf_text, articles, cases, samples = prepare_inputs(small_corpus, "performance")
    text = domain_files("performance", leaf.path, leaf_text, articles, cases, samples)["request-performance.json"]
    request = json.loads(text)
    assert list(request) == [
        "protocol",
        "skill",
        "leafInstructions",
        "knowledgeIndex",
        "candidateArticles",
        "resultSchema",
        "cases",
    ]
    assert leaf.path in request["protocol"]
    assert request["skill"] == "microsoft/skills/review/al-performance-review.md"
    assert request["leafInstructions"] == leaf_instructions(leaf_text)
    assert request["knowledgeIndex"] == "index-performance.json"
    assert request["candidateArticles"] == articles
    assert request["resultSchema"] == RESULT_SCHEMA
    assert request["cases"] == [
        {"id": "case-0ad1f118", "file": "case-0ad1f118.al"},
        {"id": "case-7f25e261", "file": "case-7f25e261.al"},
    ]
    assert text.startswith('{\n  "protocol": ')
    assert text.endswith("}\n")


def test_case_request_holds_one_case_and_same_member_order(small_corpus):
    leaf, leaf_text, articles, cases, samples = prepare_inputs(small_corpus, "performance")
    files = domain_files("performance", leaf.path, leaf_text, articles, cases, samples)
    request = json.loads(files["request-case-7f25e261.json"])
    assert list(request) == list(json.loads(files["request-performance.json"]))
    assert request["cases"] == [{"id": "case-7f25e261", "file": "case-7f25e261.al"}]
    assert request["knowledgeIndex"] == "index-performance.json"
    assert request["protocol"] != json.loads(files["request-performance.json"])["protocol"]


def test_context_is_added_to_request_cases_only_when_present(small_corpus):
    small_corpus.overrides({"performance": {"context": "Runs nightly."}})
    leaf, leaf_text, articles, cases, samples = prepare_inputs(small_corpus, "performance")
    files = domain_files("performance", leaf.path, leaf_text, articles, cases, samples)
    entries = json.loads(files["request-performance.json"])["cases"]
    assert entries[0] == {"id": "case-0ad1f118", "file": "case-0ad1f118.al", "context": "Runs nightly."}
    assert list(entries[0]) == ["id", "file", "context"]
    plain = json.loads(prepare_files_for(small_corpus, "security")["request-security.json"])["cases"]
    assert all("context" not in entry for entry in plain)


def crowded_corpus(corpus, primary_keywords: list[str]):
    """A performance domain with 12 articles: 11 rank well on the samples' text, plus the primary."""
    corpus.leaf("performance")
    corpus.article("performance", "alpha-check", keywords=primary_keywords)
    for i in range(11):
        corpus.article("performance", f"other-{i:02d}", keywords=["codeunit"])
    return corpus


def test_case_request_candidates_are_ranked_top_ten_sorted_by_path(corpus):
    crowded_corpus(corpus, ["alpha check"])
    files = prepare_files_for(corpus, "performance")
    request = json.loads(files["request-case-0ad1f118.json"])
    paths = [row["path"] for row in request["candidateArticles"]]
    assert len(paths) == 10
    assert paths == sorted(paths, key=sort_key)
    assert "microsoft/knowledge/performance/alpha-check.md" in paths
    assert len(json.loads(files["request-performance.json"])["candidateArticles"]) == 12


def test_gate_failure_lists_every_failing_case_and_returns_nothing(corpus):
    crowded_corpus(corpus, ["zzznomatch"])
    with pytest.raises(EvaluationFailed) as info:
        prepare_files_for(corpus, "performance")
    problems = info.value.problems
    assert len(problems) == 2
    assert problems[0].startswith("performance-bad: ")
    assert problems[1].startswith("performance-good: ")
    assert all("microsoft/knowledge/performance/alpha-check.md" in p for p in problems)
    assert "2 problem(s)" in info.value.header


def test_context_takes_part_in_ranking(corpus):
    crowded_corpus(corpus, ["zzznomatch"])
    corpus.overrides({"performance": {"context": "zzznomatch"}})
    files = prepare_files_for(corpus, "performance")
    assert "request-case-0ad1f118.json" in files


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("Good\u0301x", "Good\u0301x"),  # a combining mark is a .NET word character
        ("Good\u203fx", "Good\u203fx"),  # so is connector punctuation
        ("Bad\u200dx", "Bad\u200dx"),  # and ZWJ, for .NET's \b
        ("Good\u00b2", "Eval\u00b2"),  # a superscript digit is not (Python's \b would disagree)
    ],
)
def test_label_boundaries_follow_dotnet_word_characters(source, expected):
    assert neutralize(source) == expected


def test_comment_lines_use_dotnet_whitespace():
    assert (
        neutralize("a\n\x1c// kept: U+001C is not .NET whitespace\n")
        == "a\n\x1c// kept: U+001C is not .NET whitespace\n"
    )
    assert neutralize("a\n\u3000// ideographic space is\nb") == "a\nb"
