"""Manifest checks (spec §2) and case derivation with its problems (§4-§9)."""

from __future__ import annotations

import json

import pytest

from bceval.corpus.layers import scan_corpus
from bceval.evaluators.base import model_id
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest

VALID = {
    "version": 2,
    "selection": "first-paired-al-article",
    "minimumExpectedRecall": 0.75,
    "minimumCleanRate": 1,
}


def manifest(**changes) -> dict:
    data = dict(VALID)
    for key, value in changes.items():
        if value is ...:
            data.pop(key)
        else:
            data[key] = value
    return data


def derive(corpus):
    listing = scan_corpus(corpus.root)
    return derive_cases(listing, check_manifest(json.loads(corpus.manifest.read_text())))


def ids(derivation) -> list[str]:
    return [case.id for case in derivation.cases]


# --- manifest ---------------------------------------------------------------------------------------


def test_valid_manifest_has_no_problems_and_float_thresholds():
    checked = check_manifest(manifest())
    assert checked.problems == []
    assert checked.thresholds == {"minimumExpectedRecall": 0.75, "minimumCleanRate": 1.0}
    assert isinstance(checked.thresholds["minimumCleanRate"], float)


def test_all_top_level_problems_are_listed_in_order():
    checked = check_manifest(
        manifest(version=3, selection="best-article", minimumExpectedRecall=1.5, minimumCleanRate=-0.25)
    )
    assert len(checked.problems) == 4
    assert "version" in checked.problems[0] and "3" in checked.problems[0]
    assert "selection" in checked.problems[1] and "best-article" in checked.problems[1]
    assert checked.problems[2].startswith("minimumExpectedRecall") and "1.5" in checked.problems[2]
    assert checked.problems[3].startswith("minimumCleanRate") and "-0.25" in checked.problems[3]
    assert checked.thresholds == {"minimumExpectedRecall": None, "minimumCleanRate": None}


@pytest.mark.parametrize("version", ["3", 3, 1, None, True, "two"])
def test_version_other_than_number_two_is_rejected(version):
    problems = check_manifest(manifest(version=version)).problems
    assert len(problems) == 1
    assert problems[0].startswith("Unsupported review fixture manifest version")


def test_loose_values_the_reference_accepts():
    """PowerShell compares loosely: "2" is version 2, selection ignores case, "0.5" casts to a threshold,
    and a single additionalArticles slug is a one-item list."""
    checked = check_manifest(
        manifest(
            version="2",
            selection="First-Paired-AL-Article",
            minimumCleanRate="0.5",
            overrides={"performance": {"additionalArticles": "beta-loop"}},
        )
    )
    assert checked.problems == []
    assert checked.thresholds["minimumCleanRate"] == 0.5
    assert checked.overrides["performance"][1].additionalArticles == ["beta-loop"]


@pytest.mark.parametrize("threshold", ["high", "NaN", True, False, None, [1], {"v": 1}])
def test_threshold_must_be_a_number(threshold):
    problems = check_manifest(manifest(minimumCleanRate=threshold)).problems
    assert len(problems) == 1
    assert problems[0].startswith("minimumCleanRate must be a number")


@pytest.mark.parametrize("threshold", [1.0000001, -0.0001, 2, -1])
def test_threshold_outside_unit_interval_is_rejected(threshold):
    checked = check_manifest(manifest(minimumExpectedRecall=threshold))
    assert len(checked.problems) == 1
    assert checked.problems[0].startswith("minimumExpectedRecall must be between 0 and 1")
    assert checked.thresholds["minimumExpectedRecall"] is None


@pytest.mark.parametrize("threshold", [0, 1, 0.0, 1.0])
def test_threshold_bounds_are_inclusive(threshold):
    checked = check_manifest(manifest(minimumExpectedRecall=threshold, minimumCleanRate=threshold))
    assert checked.problems == []
    assert checked.thresholds["minimumCleanRate"] == float(threshold)


def test_missing_members_are_all_reported_in_order():
    problems = check_manifest({}).problems
    assert problems == [
        "The manifest has no 'version' member.",
        "The manifest has no 'selection' member.",
        "The manifest has no 'minimumExpectedRecall' member.",
        "The manifest has no 'minimumCleanRate' member.",
    ]


def test_non_object_manifest_is_one_problem():
    assert check_manifest([VALID]).problems == ["The manifest must be a JSON object."]


def test_unknown_top_level_members_are_reported_sorted_after_thresholds():
    problems = check_manifest(manifest(zeta=1, Alpha=2, minimumCleanRate=5)).problems
    assert problems[0].startswith("minimumCleanRate")
    assert problems[1:] == [
        "The manifest has unknown member 'Alpha'.",
        "The manifest has unknown member 'zeta'.",
    ]


def test_overrides_must_be_an_object():
    problems = check_manifest(manifest(overrides=["performance"])).problems
    assert problems == ["'overrides' must be a JSON object keyed by domain."]


def test_override_value_must_be_an_object():
    problems = check_manifest(manifest(overrides={"performance": "beta"})).problems
    assert problems == ["Override 'performance' must be a JSON object."]


def test_unknown_override_member_is_reported():
    checked = check_manifest(manifest(overrides={"performance": {"slugs": ["x"], "context": "c"}}))
    assert checked.problems == ["Override 'performance' has unknown member 'slugs'."]
    assert "performance" not in checked.overrides


def test_override_member_types_are_checked():
    checked = check_manifest(
        manifest(overrides={"a": {"article": ["x"]}, "b": {"context": 1}, "c": {"additionalArticles": ["x", " "]}})
    )
    assert len(checked.problems) == 3
    assert checked.problems[0].startswith("Override 'a': 'article' must be a string")
    assert checked.problems[1].startswith("Override 'b': 'context' must be a string")
    assert checked.problems[2].startswith("Override 'c': 'additionalArticles' must be a list")


def test_override_keys_differing_only_by_case_are_reported():
    checked = check_manifest(manifest(overrides={"Performance": {}, "performance": {"context": "x"}}))
    assert len(checked.problems) == 1
    assert "'Performance'" in checked.problems[0] and "'performance'" in checked.problems[0]
    assert checked.overrides["performance"][0] == "Performance"


def test_overrides_are_keyed_by_lowercased_domain():
    checked = check_manifest(manifest(overrides={"Data-Modeling": {"article": "x"}}))
    key, override = checked.overrides["data-modeling"]
    assert key == "Data-Modeling"
    assert override.article == "x"


# --- default selection ------------------------------------------------------------------------------


def test_small_corpus_cases_ids_and_model_ids(small_corpus):
    derivation = derive(small_corpus)
    assert derivation.problems == []
    assert ids(derivation) == ["performance-bad", "performance-good", "security-bad", "security-good"]
    assert [c.modelId for c in derivation.cases] == [model_id(i) for i in ids(derivation)]
    assert derivation.cases[0].modelId == "case-0ad1f118"


def test_primary_case_fields(small_corpus):
    bad, good = derive(small_corpus).cases_of("performance")
    assert bad.input == "microsoft/knowledge/performance/alpha-check.bad.al"
    assert bad.expected == ["microsoft/knowledge/performance/alpha-check.md"]
    assert good.input == "microsoft/knowledge/performance/alpha-check.good.al"
    assert good.expected == []
    assert bad.context is None and good.context is None
    assert bad.domain == good.domain == "performance"


def test_default_primary_is_first_slug_so_prefix_wins(corpus):
    corpus.leaf("p")
    corpus.article("p", "foo-bar")
    corpus.article("p", "foo")
    assert derive(corpus).cases[0].input == "microsoft/knowledge/p/foo.bad.al"


def test_default_primary_is_sorted_across_layers(corpus):
    corpus.leaf("p")
    corpus.article("p", "b-micro", layer="microsoft")
    corpus.article("p", "a-custom", layer="custom")
    bad = derive(corpus).cases[0]
    assert bad.input == "custom/knowledge/p/a-custom.bad.al"
    assert bad.expected == ["custom/knowledge/p/a-custom.md"]


def test_input_lives_in_the_selected_articles_own_layer(small_corpus):
    bad, good = derive(small_corpus).cases_of("security")
    assert bad.input == "community/knowledge/security/gamma-secret.bad.al"
    assert good.input == "community/knowledge/security/gamma-secret.good.al"
    assert bad.expected == ["community/knowledge/security/gamma-secret.md"]


def test_unpaired_custom_copy_does_not_hide_paired_microsoft_copy(corpus):
    corpus.leaf("p")
    corpus.article("p", "x", layer="microsoft")
    corpus.article("p", "x", layer="custom", paired=False)
    derivation = derive(corpus)
    assert derivation.problems == []
    assert derivation.cases[0].input == "microsoft/knowledge/p/x.bad.al"


def test_paired_community_copy_overrides_microsoft_copy(corpus):
    corpus.leaf("p")
    corpus.article("p", "x", layer="microsoft")
    corpus.article("p", "x", layer="community")
    assert derive(corpus).cases[0].expected == ["community/knowledge/p/x.md"]


def test_case_ids_use_the_leaf_file_spelling(corpus):
    corpus.leaf("Perf")
    corpus.article("Perf", "x")
    assert ids(derive(corpus)) == ["Perf-bad", "Perf-good"]


# --- article override -------------------------------------------------------------------------------


@pytest.mark.parametrize("article", ["beta-loop", "beta-loop.md", "BETA-Loop", "Beta-LOOP.md"])
def test_article_override_with_or_without_md_case_insensitively(small_corpus, article):
    small_corpus.overrides({"performance": {"article": article}})
    derivation = derive(small_corpus)
    assert derivation.problems == []
    bad, good = derivation.cases_of("performance")
    assert bad.input == "microsoft/knowledge/performance/beta-loop.bad.al"
    assert bad.expected == ["microsoft/knowledge/performance/beta-loop.md"]
    assert good.input == "microsoft/knowledge/performance/beta-loop.good.al"


def test_article_override_md_suffix_is_stripped_case_sensitively(small_corpus):
    small_corpus.overrides({"performance": {"article": "beta-loop.MD"}})
    assert derive(small_corpus).problems[0] == "performance: override article does not exist: beta-loop.MD.md"


def test_override_domain_is_matched_case_insensitively(small_corpus):
    small_corpus.overrides({"PERFORMANCE": {"article": "beta-loop"}})
    derivation = derive(small_corpus)
    assert derivation.problems == []
    assert derivation.cases[0].input.endswith("beta-loop.bad.al")


def test_missing_override_article_skips_domain(small_corpus):
    small_corpus.overrides({"performance": {"article": "nope", "additionalArticles": ["beta-loop"]}})
    derivation = derive(small_corpus)
    assert derivation.problems == [
        "performance: override article does not exist: nope.md",
        "performance: no positive review fixture",
        "performance: no clean control fixture",
    ]
    assert ids(derivation) == ["security-bad", "security-good"]


def test_unpaired_override_article_skips_domain(small_corpus):
    small_corpus.article("performance", "lonely", layer="custom", paired=False)
    small_corpus.overrides({"performance": {"article": "lonely.md"}})
    derivation = derive(small_corpus)
    assert derivation.problems == [
        "performance: override article does not have both good/bad companion samples: lonely.md",
        "performance: no positive review fixture",
        "performance: no clean control fixture",
    ]
    assert derivation.cases_of("performance") == []


# --- context ----------------------------------------------------------------------------------------


def test_context_attaches_to_primary_cases_only(small_corpus):
    small_corpus.overrides({"performance": {"context": "Runs in a job queue.", "additionalArticles": ["beta-loop"]}})
    cases = derive(small_corpus).cases_of("performance")
    assert [c.context for c in cases] == ["Runs in a job queue.", "Runs in a job queue.", None, None]
    assert all(c.context is None for c in derive(small_corpus).cases_of("security"))


def test_empty_context_attaches_nothing(small_corpus):
    small_corpus.overrides({"performance": {"context": ""}})
    assert [c.context for c in derive(small_corpus).cases_of("performance")] == [None, None]


# --- additionalArticles -----------------------------------------------------------------------------


def test_additional_articles_follow_the_primary_pair(small_corpus):
    small_corpus.article("performance", "Gamma-Extra", layer="community")
    small_corpus.overrides({"performance": {"additionalArticles": ["gamma-extra.md", "beta-loop"]}})
    derivation = derive(small_corpus)
    assert derivation.problems == []
    cases = derivation.cases_of("performance")
    assert [c.id for c in cases] == [
        "performance-bad",
        "performance-good",
        "performance-bad-Gamma-Extra",
        "performance-good-Gamma-Extra",
        "performance-bad-beta-loop",
        "performance-good-beta-loop",
    ]
    assert cases[2].input == "community/knowledge/performance/Gamma-Extra.bad.al"
    assert cases[2].expected == ["community/knowledge/performance/Gamma-Extra.md"]
    assert cases[3].expected == []
    assert cases[4].modelId == model_id("performance-bad-beta-loop")


def test_additional_entry_problems_are_listed_and_processing_continues(small_corpus):
    small_corpus.article("performance", "lonely", paired=False)
    small_corpus.article("performance", "delta-extra")
    small_corpus.overrides(
        {
            "performance": {
                "additionalArticles": ["missing", "lonely", "ALPHA-check", "beta-loop", "beta-loop.md", "delta-extra"]
            }
        }
    )
    derivation = derive(small_corpus)
    assert derivation.problems == [
        "performance: additionalArticles entry does not exist: missing.md",
        "performance: additionalArticles entry does not have both good/bad companion samples: lonely.md",
        "performance: additionalArticles entry duplicates the selected article: ALPHA-check",
        "performance: additionalArticles entry is listed more than once: beta-loop",
    ]
    assert ids(derivation)[:6] == [
        "performance-bad",
        "performance-good",
        "performance-bad-beta-loop",
        "performance-good-beta-loop",
        "performance-bad-delta-extra",
        "performance-good-delta-extra",
    ]


def test_additional_entry_equal_to_override_article_is_a_duplicate(small_corpus):
    small_corpus.overrides({"performance": {"article": "beta-loop", "additionalArticles": ["beta-loop.md"]}})
    assert derive(small_corpus).problems == [
        "performance: additionalArticles entry duplicates the selected article: beta-loop"
    ]


# --- domain-level problems --------------------------------------------------------------------------


def test_override_domain_without_leaf_is_reported(small_corpus):
    small_corpus.overrides({"Agents": {"context": "x"}})
    assert derive(small_corpus).problems == ["Override domain 'Agents' has no registered al-Agents-review leaf"]


def test_leaf_without_paired_knowledge_is_reported_with_coverage(corpus):
    corpus.leaf("ui")
    corpus.article("ui", "half", paired=False)
    derivation = derive(corpus)
    assert derivation.problems == [
        "ui: no enabled knowledge layer has an article with both good and bad companion samples",
        "ui: no positive review fixture",
        "ui: no clean control fixture",
    ]
    assert derivation.cases == []


def test_model_id_collision_between_cases_is_reported(corpus):
    # sha256("d14057-bad") and sha256("d65153-bad") share their first 8 hex digits
    assert model_id("d14057-bad") == model_id("d65153-bad")
    for domain in ("d14057", "d65153"):
        corpus.leaf(domain)
        corpus.article(domain, "x")
    assert derive(corpus).problems == ["d65153-bad: model id case-65f2b4e7 collides with case d14057-bad"]


def test_problem_order_top_level_overrides_domains_cases_coverage(corpus):
    corpus.leaf("case-0ad1f118")  # the model id of performance-bad
    corpus.leaf("performance")
    corpus.article("performance", "alpha-check")
    corpus.leaf("security")
    corpus.article("security", "gamma")
    corpus.write_manifest(manifest(version=3, overrides={"zeta": {}, "Alpha": {}, "security": {"article": "nope"}}))
    assert derive(corpus).problems == [
        "Unsupported review fixture manifest version: 3 (expected 2).",
        "Override domain 'Alpha' has no registered al-Alpha-review leaf",
        "Override domain 'zeta' has no registered al-zeta-review leaf",
        "case-0ad1f118: no enabled knowledge layer has an article with both good and bad companion samples",
        "security: override article does not exist: nope.md",
        "performance-bad: model id case-0ad1f118 collides with the leaf domain of the same name",
        "case-0ad1f118: no positive review fixture",
        "case-0ad1f118: no clean control fixture",
        "security: no positive review fixture",
        "security: no clean control fixture",
    ]


def test_leaves_and_cases_follow_leaf_order(corpus):
    for domain, layer in (("ui", "custom"), ("appsource", "microsoft"), ("data-modeling", "community")):
        corpus.leaf(domain, layer=layer)
        corpus.article(domain, "x", layer=layer)
    derivation = derive(corpus)
    assert [leaf.domain for leaf in derivation.leaves] == ["appsource", "data-modeling", "ui"]
    assert ids(derivation) == [
        "appsource-bad",
        "appsource-good",
        "data-modeling-bad",
        "data-modeling-good",
        "ui-bad",
        "ui-good",
    ]


def test_duplicate_case_ids_across_domains_are_reported(corpus):
    corpus.leaf("p")
    corpus.article("p", "a")
    corpus.article("p", "good")
    corpus.leaf("p-bad")
    corpus.article("p-bad", "z")
    corpus.overrides({"p": {"additionalArticles": ["good"]}})
    derivation = derive(corpus)
    assert ids(derivation).count("p-bad-good") == 2
    assert derivation.problems == ["Duplicate case id: p-bad-good"]


def test_unknown_override_domain_is_reported_even_when_its_value_is_invalid(small_corpus):
    small_corpus.overrides({"Agents": {"slugs": ["x"]}})
    assert derive(small_corpus).problems == [
        "Override 'Agents' has unknown member 'slugs'.",
        "Override domain 'Agents' has no registered al-Agents-review leaf",
    ]


def test_the_schema_model_and_the_checks_name_the_same_members():
    from bceval.evaluators.review.documents import DomainOverride, ReviewManifest
    from bceval.evaluators.review.manifest import MANIFEST_MEMBERS, OVERRIDE_MEMBERS

    assert tuple(field.alias or name for name, field in ReviewManifest.model_fields.items()) == MANIFEST_MEMBERS
    assert tuple(DomainOverride.model_fields) == OVERRIDE_MEMBERS


def test_the_cases_of_a_domain_follow_the_cases_as_they_change():
    from bceval.evaluators.review.cases import Derivation, ReviewCase

    def case(name, domain):
        return ReviewCase(name, model_id(name), domain, f"{domain}/{name}.al", [])

    derivation = Derivation(leaves=[], cases=[case("a", "ui"), case("b", "perf"), case("c", "ui")])
    assert [c.id for c in derivation.cases_of("ui")] == ["a", "c"] and derivation.cases_of("none") == []
    derivation.cases.append(case("d", "ui"))  # grown
    assert [c.id for c in derivation.cases_of("ui")] == ["a", "c", "d"]
    derivation.cases = [case("e", "perf")]  # replaced
    assert derivation.cases_of("ui") == [] and [c.id for c in derivation.cases_of("perf")] == ["e"]
    derivation.cases_of("perf").clear()  # a caller's list is its own
    assert [c.id for c in derivation.cases_of("perf")] == ["e"]
