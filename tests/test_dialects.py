"""The two manifest dialects (review-dialects.md): the forks' `articles` override and `coverageWaivers` beside the
layered `additionalArticles`, the mixing refusal, and the problems, their texts and their order (§3-§5, §11)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from cliutil import run_cli
from conftest import SHARED_CORPUS, requires_shared
from fork_manifests import RS_TVE, UPGRADE_CONTEXT, cut_down, fork_selections, short_fork_selections

from bceval.corpus.layers import scan_corpus
from bceval.evaluators.base import model_id
from bceval.evaluators.review.cases import derive_cases
from bceval.evaluators.review.manifest import check_manifest

WAIVER = "Each coverage waiver requires non-empty path and reason values."


def derive(corpus, data=None):
    if data is not None:
        corpus.write_manifest(data)
    return derive_cases(scan_corpus(corpus.root), check_manifest(json.loads(corpus.manifest.read_text())))


def cases_of(derivation):
    return [(case.id, case.input, case.expected, case.context) for case in derivation.cases]


@pytest.fixture
def perf(corpus):
    """One leaf domain `perf` with three paired microsoft articles, an unpaired one and a community article."""
    corpus.leaf("perf")
    for slug in ("alpha", "beta", "gamma"):
        corpus.article("perf", slug)
    corpus.article("perf", "half", paired=False)
    corpus.article("perf", "Delta", layer="community")
    return corpus


# --- the articles override (§3, §4, §11.3) ------------------------------------------------------------------------


def test_every_listed_article_gets_a_pair_and_the_first_keeps_the_plain_ids(perf):
    perf.overrides({"perf": {"articles": ["gamma", "alpha.md", "delta"], "context": "Rows exist."}})
    derivation = derive(perf)
    assert derivation.problems == []
    m, c = "microsoft/knowledge/perf", "community/knowledge/perf"
    assert cases_of(derivation) == [
        ("perf-bad", f"{m}/gamma.bad.al", [f"{m}/gamma.md"], "Rows exist."),
        ("perf-good", f"{m}/gamma.good.al", [], "Rows exist."),
        ("perf-alpha-bad", f"{m}/alpha.bad.al", [f"{m}/alpha.md"], "Rows exist."),
        ("perf-alpha-good", f"{m}/alpha.good.al", [], "Rows exist."),
        # the slug in the id is the on-disk spelling, not the manifest's
        ("perf-Delta-bad", f"{c}/Delta.bad.al", [f"{c}/Delta.md"], "Rows exist."),
        ("perf-Delta-good", f"{c}/Delta.good.al", [], "Rows exist."),
    ]
    assert [case.modelId for case in derivation.cases] == [model_id(case.id) for case in derivation.cases]


def test_articles_replaces_the_convention_and_a_scalar_is_one_name(perf):
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": "beta"}}})
    assert [case.id for case in derivation.cases] == ["perf-bad", "perf-good"]
    assert derivation.cases[0].expected == ["microsoft/knowledge/perf/beta.md"]  # alpha is not implied
    assert derivation.cases[0].context is None  # no context member, none on the cases


def test_an_empty_context_adds_nothing(perf):
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": ["beta"], "context": ""}}})
    assert [case.context for case in derivation.cases] == [None, None]


def test_article_and_articles_together_is_one_problem_and_no_case(perf):
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"article": "alpha", "articles": ["beta"]}}})
    assert derivation.problems == [
        "perf: override must specify either 'article' or 'articles', not both",
        "perf: no positive review fixture",
        "perf: no clean control fixture",
    ]
    assert derivation.cases == []


def test_an_empty_list_is_a_problem(perf):
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": []}}})
    assert derivation.problems[0] == "perf: override 'articles' must contain at least one article"
    assert derivation.cases == []


@pytest.mark.parametrize("value", [None, 7, True, {"slug": "alpha"}])
def test_a_value_that_is_no_string_or_list_is_one_invalid_entry(perf, value):
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": value}}})
    assert derivation.problems[0] == "perf: override article names must be non-empty strings"
    assert derivation.problems[1:] == ["perf: no positive review fixture", "perf: no clean control fixture"]


def test_names_are_independent_and_each_problem_is_in_list_order(perf):
    names = ["", "nope", "half", 3, "alpha", "ALPHA.md", "nope", "  ", "beta"]
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": names}}})
    assert derivation.problems == [
        "perf: override article names must be non-empty strings",
        "perf: override article does not exist: nope.md",
        "perf: override article does not have both good/bad companion samples: half.md",
        "perf: override article names must be non-empty strings",
        "perf: override contains duplicate article: ALPHA.md",
        "perf: override contains duplicate article: nope.md",  # the duplicate test comes before the lookup
        "perf: override article names must be non-empty strings",
    ]
    # the first name that resolves takes the plain ids
    assert [case.id for case in derivation.cases] == ["perf-bad", "perf-good", "perf-beta-bad", "perf-beta-good"]


def test_only_a_final_md_is_removed_and_a_folder_part_stays(perf):
    names = ["alpha.MD", "microsoft/knowledge/perf/beta.md", "gamma.md.md"]
    derivation = derive(perf, {**perf.manifest_data, "overrides": {"perf": {"articles": names}}})
    assert derivation.problems[:3] == [
        "perf: override article does not exist: alpha.MD.md",
        "perf: override article does not exist: microsoft/knowledge/perf/beta.md",  # exact (§11.6 #5)
        "perf: override article does not exist: gamma.md.md",
    ]


def test_names_resolve_through_layer_precedence(corpus):
    corpus.leaf("perf")
    corpus.article("perf", "shared")
    corpus.article("perf", "shared", layer="custom")  # paired higher: the custom copy
    corpus.article("perf", "lower")
    corpus.article("perf", "lower", layer="community", paired=False)  # higher copy without samples: the lower one
    derivation = derive(corpus, {**corpus.manifest_data, "overrides": {"perf": {"articles": ["shared", "lower"]}}})
    assert derivation.problems == []
    assert [case.expected for case in derivation.cases if case.expected] == [
        ["custom/knowledge/perf/shared.md"],
        ["microsoft/knowledge/perf/lower.md"],
    ]


def test_a_domain_without_paired_articles_skips_its_override_but_keeps_its_paired_list(perf):
    perf.leaf("empty")
    data = {**perf.manifest_data, "overrides": {"empty": {"article": "x", "articles": []}}}
    derivation = derive(perf, data)
    assert derivation.problems[0] == (
        "empty: no enabled knowledge layer has an article with both good and bad companion samples"
    )
    assert "empty: override must specify either 'article' or 'articles', not both" not in derivation.problems
    assert derivation.paired["empty"] == []


def test_a_second_article_can_collide_with_another_leafs_primary_id(corpus):
    corpus.leaf("a")
    corpus.article("a", "first")
    corpus.article("a", "b")
    corpus.leaf("a-b")
    corpus.article("a-b", "zeta")
    derivation = derive(corpus, {**corpus.manifest_data, "overrides": {"a": {"articles": ["first", "b"]}}})
    assert "Duplicate case id: a-b-bad" in derivation.problems


# --- the layered dialect keeps its rules (§10, §11.7) and says that a slug is wanted (issue 20 item 14) --------


def test_additional_articles_keep_their_ids_context_and_messages(perf):
    data = {
        **perf.manifest_data,
        "overrides": {"perf": {"article": "beta", "context": "C", "additionalArticles": ["alpha"]}},
    }
    derivation = derive(perf, data)
    assert [(case.id, case.context) for case in derivation.cases] == [
        ("perf-bad", "C"),
        ("perf-good", "C"),
        ("perf-bad-alpha", None),
        ("perf-good-alpha", None),
    ]


def test_an_additional_article_named_by_its_path_says_a_slug_is_wanted(perf):
    data = {
        **perf.manifest_data,
        "overrides": {"perf": {"additionalArticles": ["microsoft/knowledge/perf/beta.md", "nope"]}},
    }
    derivation = derive(perf, data)
    assert derivation.problems == [
        "perf: additionalArticles entry does not exist: microsoft/knowledge/perf/beta.md (an entry names an "
        "article by its slug alone, such as 'beta', not by its path)",
        "perf: additionalArticles entry does not exist: nope.md",  # a bare slug keeps the reference's words
    ]


def test_catalogue_item_14_holds(tmp_path):
    from catalogue_manifest import additional_article_named_by_its_path

    outcome = additional_article_named_by_its_path(tmp_path)
    assert outcome.held, outcome.detail


# --- mixing (§11.2) -------------------------------------------------------------------------------------------


def test_mixing_the_dialects_is_one_problem_naming_the_keys_in_manifest_order(perf):
    perf.leaf("sec")
    perf.article("sec", "s1")
    overrides = {
        "sec": {"articles": ["s1"]},
        "Perf": {"additionalArticles": ["alpha"], "articles": ["beta"]},
        "other": {"additionalArticles": []},
    }
    checked = check_manifest({**perf.manifest_data, "overrides": overrides})
    assert checked.problems == [
        "The manifest mixes the 'additionalArticles' and 'articles' dialects (additionalArticles: Perf, other; "
        "articles: sec, Perf); use one of them."
    ]
    assert checked.dialect == "mixed"


@pytest.mark.parametrize(
    ("overrides", "dialect"),
    [
        ({}, "plain"),
        ({"perf": {"article": "beta", "context": "c"}}, "plain"),
        ({"perf": {"article": "beta", "additionalArticles": ["alpha"]}}, "additionalArticles"),
        ({"perf": {"articles": ["beta"]}}, "articles"),
    ],
)
def test_each_dialect_alone_is_legal_and_named(perf, overrides, dialect):
    data = {**perf.manifest_data, "overrides": overrides, "coverageWaivers": [{"path": "p", "reason": "r"}]}
    checked = check_manifest(data)
    assert checked.problems == [] and checked.dialect == dialect


# --- coverage waivers (§5, §11.6) -----------------------------------------------------------------------------


def test_waiver_problems_in_entry_order_and_what_is_accepted(perf):
    waivers = [
        {"path": "microsoft/knowledge/perf/alpha.md", "reason": "ranked out"},
        {"path": "MICROSOFT/knowledge/perf/alpha.md", "reason": "again"},
        {"path": "x.md", "reason": "  "},
        "microsoft/knowledge/perf/beta.md",
        {"path": "y.md", "reason": "ok", "expires": "2027-01-01", "by": "me"},
        {"reason": "no path", "note": 1},
        {"path": 5, "reason": "number"},
        None,
    ]
    checked = check_manifest({**perf.manifest_data, "coverageWaivers": waivers})
    assert checked.waiver_problems == [
        "Duplicate coverage waiver: MICROSOFT/knowledge/perf/alpha.md",
        WAIVER,
        WAIVER,
        "Coverage waiver 5 has unknown member 'by'.",
        "Coverage waiver 5 has unknown member 'expires'.",
        "Coverage waiver 6 has unknown member 'note'.",
        WAIVER,
        WAIVER,
        WAIVER,
    ]
    assert checked.waivers == ["microsoft/knowledge/perf/alpha.md", "y.md"]  # 9 alone keeps the entry


def test_a_single_waiver_object_is_a_one_entry_list(perf):
    checked = check_manifest({**perf.manifest_data, "coverageWaivers": {"path": "a.md", "reason": "r"}})
    assert checked.waivers == ["a.md"] and checked.waiver_problems == []


def test_the_order_of_all_problems(perf):
    data = {
        **perf.manifest_data,
        "minimumCleanRate": 2,
        "extra": True,
        "overrides": {
            "zzz": {"articles": ["x"]},
            "perf": {"articles": ["nope", "beta"], "additionalArticles": ["alpha"]},
        },
        "coverageWaivers": [{"path": "", "reason": "r"}],
    }
    derivation = derive(perf, data)
    assert derivation.problems == [
        "minimumCleanRate must be between 0 and 1, got 2.",
        "The manifest has unknown member 'extra'.",
        "The manifest mixes the 'additionalArticles' and 'articles' dialects (additionalArticles: perf; "
        "articles: zzz, perf); use one of them.",
        "Override domain 'zzz' has no registered al-zzz-review leaf",
        WAIVER,
        "perf: override article does not exist: nope.md",
    ]


# --- the fork manifests of §12 on the shared corpus -------------------------------------------------------------


@requires_shared
@pytest.mark.parametrize("fork", sorted(fork_selections()))
def test_fork_manifests_cut_down_derive_cleanly(fork):
    listing = scan_corpus(SHARED_CORPUS)
    data = cut_down(fork_selections()[fork], listing)
    derivation = derive_cases(listing, check_manifest(data))
    assert derivation.problems == []
    assert check_manifest(data).dialect == "articles"
    by_id = {case.id: case for case in derivation.cases}
    performance = data["overrides"]["performance"]["articles"]
    first, second = performance[0], performance[1]
    assert by_id["performance-bad"].expected == [f"microsoft/knowledge/performance/{first}.md"]
    assert by_id[f"performance-{second}-bad"].input == f"microsoft/knowledge/performance/{second}.bad.al"
    assert by_id[f"performance-{second}-good"].expected == []
    # the upgrade context of the fork goes on every upgrade case
    assert {case.context for case in derivation.cases if case.domain == "upgrade"} == {UPGRADE_CONTEXT}
    domain_order = [case.domain for case in derivation.cases]
    assert domain_order == sorted(domain_order, key=lambda d: [leaf.domain for leaf in derivation.leaves].index(d))


@requires_shared
@pytest.mark.parametrize(
    ("fork", "overrides", "with_articles"), [("Continia@bec8890", 14, 5), ("demiliani@75f3863", 12, 2)]
)
def test_the_short_fork_manifests_cut_down_derive_cleanly(fork, overrides, with_articles):
    selection = short_fork_selections()[fork]
    assert (len(selection), sum(member == "articles" for member, _ in selection.values())) == (overrides, with_articles)
    listing = scan_corpus(SHARED_CORPUS)
    data = cut_down(selection, listing)
    derivation = derive_cases(listing, check_manifest(data))
    assert derivation.problems == [] and check_manifest(data).dialect == "articles"
    by_id = {case.id: case for case in derivation.cases}
    for domain, override in data["overrides"].items():
        names = override.get("articles") or [override["article"]]
        assert by_id[f"{domain}-bad"].expected == [f"microsoft/knowledge/{domain}/{names[0]}.md"]
        assert all(f"{domain}-{name}-good" in by_id for name in names[1:])
    assert {case.context for case in derivation.cases if case.domain == "upgrade"} == {UPGRADE_CONTEXT}


@requires_shared
def test_the_full_rs_tve_manifest_names_exactly_the_articles_missing_there():
    """Uncut, the fork's lists name many articles the shared corpus does not have: each is one problem, and the
    domains without a leaf there are unknown override domains."""
    listing = scan_corpus(SHARED_CORPUS)
    overrides = {
        domain: {member: names[0] if member == "article" else names} for domain, (member, names) in RS_TVE.items()
    }
    derivation = derive_cases(listing, check_manifest({**cut_down({}, listing), "overrides": overrides}))
    unknown = [p for p in derivation.problems if p.startswith("Override domain")]
    assert unknown == [
        f"Override domain '{d}' has no registered al-{d}-review leaf" for d in ("agents", "finance", "reporting", "scm")
    ]
    missing = [p for p in derivation.problems if "does not exist" in p or "does not have both" in p]
    assert len(missing) == 92 - 24  # §13: of the 92 names for domains with a leaf there, 24 are paired


# --- the schema, init, health and experiments learn the dialect --------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "evaluation" / "demo-corpus"
DEMO_ARTICLES = REPO / "evaluation" / "fixtures" / "review" / "demo-articles-manifest.json"


def schema_errors(document) -> list[str]:
    schema = json.loads((REPO / "schemas" / "review-manifest.schema.json").read_text())
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)]


def test_the_schema_describes_both_dialects_and_article_xor_articles():
    assert schema_errors(json.loads(DEMO_ARTICLES.read_text())) == []
    assert schema_errors(json.loads((DEMO / "evaluation" / "review-fixtures.json").read_text())) == []
    both = {**json.loads(DEMO_ARTICLES.read_text()), "overrides": {"ui": {"article": "a", "articles": ["b"]}}}
    assert len(schema_errors(both)) == 1
    empty = {**both, "overrides": {"ui": {"articles": []}}}
    assert len(schema_errors(empty)) == 1
    waiver = {**both, "overrides": {}, "coverageWaivers": [{"path": "p", "reason": "r", "until": "2027"}]}
    assert len(schema_errors(waiver)) == 1


def test_init_writes_the_waivers_member_and_a_schema_that_knows_articles(small_corpus, monkeypatch, capsys):
    small_corpus.manifest.unlink()
    monkeypatch.chdir(small_corpus.root)
    code, _, _ = run_cli(capsys, "init")
    manifest = json.loads(small_corpus.manifest.read_text())
    schema = json.loads((small_corpus.manifest.parent / manifest["$schema"]).read_text())
    assert code == 0 and manifest["coverageWaivers"] == []
    assert "articles" in schema["$defs"]["DomainOverride"]["properties"] and "coverageWaivers" in schema["properties"]
    assert run_cli(capsys, "validate")[0] == 0


def test_health_prints_coverage_per_domain(small_corpus, tmp_path, capsys):
    small_corpus.overrides({"performance": {"articles": ["beta-loop", "alpha-check"]}})
    small_corpus.article("orphaned", "lonely")  # knowledge without a leaf: listed, never evaluated
    code, out, _ = run_cli(capsys, "health", "--corpus", small_corpus.root, "--out", tmp_path / "out")
    assert code == 0
    start = out.index("Coverage per domain (selected/paired articles):")
    assert [line.split() for line in out[start + 1 : start + 4]] == [
        ["orphaned", "0/1", "0%", "(no", "leaf:", "never", "evaluated)"],
        ["performance", "2/2", "100%"],
        ["security", "1/1", "100%"],
    ]
    assert (
        "| performance | `microsoft/skills/review/al-performance-review.md` | 2 | 2 | 100% |"
        in (tmp_path / "out" / "health.md").read_text()
    )


def test_experiment_ab_across_dialects_names_each_arms(tmp_path, capsys, monkeypatch):
    for name in [n for n in os.environ if n.startswith("BCEVAL_")]:
        monkeypatch.delenv(name)
    root = tmp_path / "repo"
    shutil.copytree(DEMO, root / "corpus")
    manifest = root / "corpus" / "evaluation" / "review-fixtures.json"

    def commit(message: str) -> str:
        for args in (["add", "-A"], ["commit", "-qm", message], ["rev-parse", "HEAD"]):
            done = subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
                cwd=root, check=True, capture_output=True, text=True,
            )  # fmt: skip
        return done.stdout.strip()

    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    base = commit("layered")
    manifest.write_bytes(DEMO_ARTICLES.read_bytes())
    head = commit("fork dialect")
    out = tmp_path / "out"
    code, lines, err = run_cli(
        capsys, "experiment", "ab", "--base", base, "--head", head, "--corpus", root / "corpus", "--out", out
    )
    assert code == 0, lines + err
    folder = next((out / "experiments").iterdir())
    report = json.loads((folder / "report.json").read_text())
    assert [(a["name"], a["manifestDialect"], a["cases"]) for a in report["arms"]] == [
        ("base", "additionalArticles", 16),
        ("head", "articles", 18),
    ]
    text = (folder / "report.md").read_text()
    assert "- Manifest dialect: base additionalArticles, head articles (the dialects differ, so one case id" in text
    assert "Manifest dialect: base additionalArticles, head articles" in (folder / "report.html").read_text()
