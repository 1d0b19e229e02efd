"""The line-based article parser, the lean description and the index row (spec §12.3-§12.6)."""

from __future__ import annotations

import pytest

from bceval.corpus.articles import index_row, lean_description, parse_article, unparsed_domain
from bceval.jsonio import decode_utf8

ELLIPSIS = "\u2026"
ROW_ORDER = [
    "path",
    "layer",
    "domain",
    "bc-version",
    "technologies",
    "countries",
    "application-area",
    "keywords",
    "title",
    "description",
    "parsed",
]
LISTS = ["bc-version", "technologies", "countries", "application-area", "keywords"]

ARTICLE = (
    "---\n"
    "domain: performance\n"
    "keywords: [setloadfields, partial records]\n"
    "technologies: [al]\n"
    "---\n"
    "\n"
    "# Use SetLoadFields  \n"
    "\n"
    "## Description\n"
    "\n"
    "First line of text.\n"
    "   Second line.   \n"
    "\n"
    "## Best Practice\n"
    "\n"
    "Not description.\n"
)


def fm(*lines: str, body: str = "# T\n") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n" + body


def fields_of(text: str) -> dict:
    parsed = parse_article(text)
    assert parsed is not None
    return parsed["fields"]


# --- frontmatter delimiters -----------------------------------------------------------------------


def test_frontmatter_is_parsed_into_fields_title_and_description():
    parsed = parse_article(ARTICLE)
    assert parsed == {
        "fields": {"domain": "performance", "keywords": ["setloadfields", "partial records"], "technologies": ["al"]},
        "title": "Use SetLoadFields",
        "description": "First line of text. Second line.",
    }


def test_first_line_delimiter_is_trimmed():
    assert fields_of("  ---  \ndomain: x\n---\n") == {"domain": "x"}


def test_text_not_starting_with_delimiter_is_unparsed():
    assert parse_article("\n---\ndomain: x\n---\n# T\n") is None


def test_first_line_with_other_text_is_unparsed():
    assert parse_article("--- x\ndomain: x\n---\n") is None


def test_frontmatter_without_closing_delimiter_is_unparsed():
    assert parse_article("---\ndomain: x\n# T\n") is None


def test_closing_delimiter_must_be_a_later_line():
    # a single '---' line opens but cannot also close the frontmatter
    assert parse_article("---") is None


def test_closing_delimiter_line_is_trimmed():
    assert fields_of("---\ndomain: x\n   ---   \ndomain: y\n") == {"domain": "x"}


def test_crlf_lone_cr_and_bom_input_parse_the_same():
    crlf = ARTICLE.replace("\n", "\r\n")
    lone_cr = ARTICLE.replace("\n", "\r")
    with_bom = decode_utf8(("\ufeff" + ARTICLE).encode("utf-8"), "x.md")
    expected = parse_article(ARTICLE)
    assert parse_article(crlf) == expected
    assert parse_article(lone_cr) == expected
    assert parse_article(with_bom) == expected


# --- key lines --------------------------------------------------------------------------------------


def test_keys_are_case_insensitive():
    assert fields_of(fm("Domain: security", "KEYWORDS: [a]")) == {"domain": "security", "keywords": ["a"]}


def test_later_key_wins():
    assert fields_of(fm("domain: first", "Domain: second"))["domain"] == "second"


def test_key_line_allows_leading_whitespace_and_spaces_around_colon():
    assert fields_of(fm("   domain   :   spaced   "))["domain"] == "spaced"


def test_key_must_start_with_a_letter():
    assert fields_of(fm("1domain: x", "_x: y")) == {}


def test_bracket_value_becomes_trimmed_list():
    assert fields_of(fm("keywords: [ a ,b,   c d  ]"))["keywords"] == ["a", "b", "c d"]


def test_empty_brackets_give_empty_list():
    assert fields_of(fm("keywords: []"))["keywords"] == []
    assert fields_of(fm("keywords: [   ]"))["keywords"] == []


def test_quotes_are_kept_in_list_items_and_scalars():
    fields = fields_of(fm("keywords: ['a', \"b\"]", "domain: 'x'"))
    assert fields["keywords"] == ["'a'", '"b"']
    assert fields["domain"] == "'x'"


def test_yaml_block_list_leaves_key_unset():
    fields = fields_of(fm("keywords:", "  - one", "  - two", "domain: d"))
    assert fields == {"domain": "d"}


def test_yaml_block_list_gives_empty_list_in_row():
    row = index_row("microsoft/knowledge/d/a.md", fm("domain: d", "keywords:", "  - one"))
    assert row["keywords"] == []


# --- title and description ------------------------------------------------------------------------


def test_title_is_first_h1_with_trailing_whitespace_trimmed():
    parsed = parse_article(fm("domain: d", body="text\n# First title \t\n# Second\n"))
    assert parsed["title"] == "First title"


def test_h2_is_not_a_title():
    parsed = parse_article(fm("domain: d", body="## Not a title\n"))
    assert parsed["title"] == ""


def test_hash_without_space_is_not_a_title():
    parsed = parse_article(fm("domain: d", body="#NoSpace\n# Real\n"))
    assert parsed["title"] == "Real"


def test_missing_h1_gives_empty_title():
    assert parse_article(fm("domain: d", body="no heading\n"))["title"] == ""


def test_description_heading_is_case_insensitive_with_trailing_spaces():
    parsed = parse_article(fm(body="# T\n## DESCRIPTION   \nInside.\n"))
    assert parsed["description"] == "Inside."


def test_description_heading_with_extra_text_does_not_open():
    parsed = parse_article(fm(body="# T\n## Description of things\nOutside.\n"))
    assert parsed["description"] == ""


def test_text_before_description_heading_is_not_collected():
    parsed = parse_article(fm(body="# T\nIntro.\n## Description\nInside.\n"))
    assert parsed["description"] == "Inside."


def test_h2_heading_closes_the_description():
    parsed = parse_article(fm(body="# T\n## Description\nIn.\n## Other\nOut.\n"))
    assert parsed["description"] == "In."


def test_h3_heading_does_not_close_the_description():
    parsed = parse_article(fm(body="# T\n## Description\nIn.\n### Sub\nStill in.\n"))
    assert parsed["description"] == "In. ### Sub Still in."


def test_h1_inside_description_before_title_becomes_title():
    parsed = parse_article(fm(body="## Description\nLine one.\n# Late Title\nLine two.\n"))
    assert parsed["title"] == "Late Title"
    assert parsed["description"] == "Line one. Line two."


def test_h1_inside_description_after_title_is_description_text():
    parsed = parse_article(fm(body="# T\n## Description\nLine one.\n# Another\n"))
    assert parsed["title"] == "T"
    assert parsed["description"] == "Line one. # Another"


def test_description_lines_are_trimmed_and_joined_with_single_spaces():
    parsed = parse_article(fm(body="# T\n## Description\n  a  \n\n\n\t b\n"))
    assert parsed["description"] == "a b"


def test_body_reading_stops_where_the_description_ends():
    parsed = parse_article(fm(body="## Description\nA.\n## Other\n# Late Title\n## Description\nB.\n"))
    assert (parsed["description"], parsed["title"]) == ("A.", "")


def test_description_heading_allows_any_spacing_and_a_blank_h1_leaves_the_title_open():
    parsed = parse_article(fm(body="#   \n# Real  \n##\tdescription  \nText.\n"))
    assert (parsed["title"], parsed["description"]) == ("Real", "Text.")


# --- lean description -------------------------------------------------------------------------------


def test_lean_collapses_whitespace():
    assert lean_description("  a \t b\n\n c  ") == "a b c"


def test_lean_keeps_first_sentence_only():
    assert lean_description("One thing. Two things.") == "One thing."


@pytest.mark.parametrize("mark", ["!", "?"])
def test_lean_sentence_ends_at_exclamation_and_question(mark):
    assert lean_description(f"Stop{mark} More text.") == f"Stop{mark}"


def test_lean_period_not_followed_by_whitespace_is_not_sentence_end():
    assert lean_description("Use Rec.SetLoadFields first. Then.") == "Use Rec.SetLoadFields first."


def test_lean_sentence_end_across_collapsed_newline():
    assert lean_description("First.\nSecond.") == "First."


def test_lean_abbreviation_cuts_early():
    assert lean_description("Use helpers (e.g. foo) when needed.") == "Use helpers (e.g."


def test_lean_keeps_text_without_sentence_end():
    assert lean_description("no terminal punctuation here") == "no terminal punctuation here"


def test_lean_keeps_exactly_120_units():
    text = "a" * 120
    assert lean_description(text) == text


def test_lean_cuts_at_last_space_beyond_index_40():
    words = " ".join(["word"] * 30)  # 149 characters
    result = lean_description(words)
    head = words[:120]
    assert result == head[: head.rfind(" ")] + ELLIPSIS
    assert len(result) <= 121


def test_lean_collapses_whitespace_before_measuring_the_limit():
    text = "a" + " \t\n " * 100 + "b"
    assert lean_description(text) == "a b"


def test_lean_hard_cut_when_no_space_after_index_40():
    text = "a" * 30 + " " + "b" * 200
    assert lean_description(text) == text[:120] + ELLIPSIS


def test_lean_space_exactly_at_index_40_is_a_hard_cut():
    text = "a" * 40 + " " + "b" * 200
    assert lean_description(text) == text[:120] + ELLIPSIS


def test_lean_space_at_index_41_is_a_word_cut():
    text = "a" * 41 + " " + "b" * 200
    assert lean_description(text) == "a" * 41 + ELLIPSIS


def test_lean_no_space_at_all_is_a_hard_cut():
    assert lean_description("z" * 200) == "z" * 120 + ELLIPSIS


@pytest.mark.parametrize("text", ["", "   ", "\n\t \r\n"])
def test_lean_empty_or_whitespace_gives_empty(text):
    assert lean_description(text) == ""


def test_lean_astral_characters_count_two_units_for_the_limit():
    assert lean_description("\U0001f600" * 60) == "\U0001f600" * 60  # 120 units: kept
    assert lean_description("\U0001f600" * 61) == "\U0001f600" * 60 + ELLIPSIS  # 122 units: cut


def test_lean_astral_characters_count_two_units_for_the_cut_index():
    # the space sits at code point 21 but at UTF-16 index 41, which is above 40: a word cut
    text = "\U0001f600" * 20 + "a " + "b" * 200
    assert lean_description(text) == "\U0001f600" * 20 + "a" + ELLIPSIS


# --- unparsed domain and rows -----------------------------------------------------------------------


def test_unparsed_domain_is_folder_after_knowledge():
    assert unparsed_domain("community/knowledge/security/sub/x.md") == "security"


def test_unparsed_domain_is_empty_for_file_directly_in_knowledge():
    assert unparsed_domain("custom/knowledge/x.md") == ""


def test_parsed_row_member_order_and_values():
    row = index_row("community/knowledge/performance/use-slf.md", ARTICLE)
    assert list(row) == ROW_ORDER
    assert row == {
        "path": "community/knowledge/performance/use-slf.md",
        "layer": "community",
        "domain": "performance",
        "bc-version": [],
        "technologies": ["al"],
        "countries": [],
        "application-area": [],
        "keywords": ["setloadfields", "partial records"],
        "title": "Use SetLoadFields",
        "description": "First line of text.",
        "parsed": True,
    }


def test_unparsed_row_member_order_and_values():
    row = index_row("custom/knowledge/ui/sub/broken.md", "# No frontmatter\n")
    assert list(row) == ROW_ORDER
    assert row == {
        "path": "custom/knowledge/ui/sub/broken.md",
        "layer": "custom",
        "domain": "ui",
        **{name: [] for name in LISTS},
        "title": "",
        "description": "",
        "parsed": False,
    }


def test_unparsed_row_directly_in_knowledge_has_empty_domain():
    row = index_row("microsoft/knowledge/readme.md", "no frontmatter")
    assert row["domain"] == ""
    assert row["parsed"] is False


def test_absent_lists_are_empty_not_null():
    row = index_row("microsoft/knowledge/d/a.md", fm("domain: d"))
    assert all(row[name] == [] for name in LISTS)


def test_absent_domain_is_empty_string_in_parsed_row():
    row = index_row("microsoft/knowledge/d/a.md", fm("keywords: [k]"))
    assert row["domain"] == ""
    assert row["parsed"] is True


def test_scalar_list_field_becomes_one_element_list():
    row = index_row("microsoft/knowledge/d/a.md", fm("keywords: single value", "countries: w1"))
    assert row["keywords"] == ["single value"]
    assert row["countries"] == ["w1"]


def test_row_description_is_lean_unless_full():
    long = "First sentence. Second sentence."
    text = fm("domain: d", body=f"# T\n## Description\n{long}\n")
    assert index_row("microsoft/knowledge/d/a.md", text)["description"] == "First sentence."
    assert index_row("microsoft/knowledge/d/a.md", text, full_description=True)["description"] == long
