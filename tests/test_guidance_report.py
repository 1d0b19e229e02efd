"""Plan-report checks and metrics through the real CLI (spec §3, §4, §6 items 34-70, 75-78).

Mutations of one completed report share one captured scenario (scoring is read-only); each test
writes its results into its own directory.
"""

from __future__ import annotations

import copy
import json

import pytest
from guidance_util import (
    PAIR,
    PAIR_GOOD,
    SENTINEL,
    UPDLOCK,
    UPDLOCK_GOOD,
    Scenario,
    article,
    assert_fails,
    assert_passes,
    cli,
    git,
    knowledge_entry,
    manifest,
    plan_case,
    plan_report,
    remove,
    write,
)

from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.paths import resolve_reference


@pytest.fixture(scope="module")
def completed(tmp_path_factory):
    base = tmp_path_factory.mktemp("completed")
    scenario = Scenario(base / "run", manifest([plan_case()]))
    assert_passes(scenario.capture(), "captured")
    scenario.head = git(scenario.root, "rev-parse", "HEAD")
    yield scenario
    remove(base)


def score_report(scenario, tmp_path, document):
    results = tmp_path / "results"
    scenario.write_result(document, results=results)
    return scenario.score(results=results)


def mutated(change):
    document = plan_report()
    change(document["guidanceReport"])
    return document


def test_the_controlled_report_passes(completed, tmp_path):
    assert_passes(score_report(completed, tmp_path, plan_report()))


MUTATIONS = {
    "outcome-success": (lambda r: r.update(outcome="success"), "outcome enum"),  # 47
    "knowledge-removed": (lambda r: r.pop("knowledge"), "missing required field 'knowledge'"),  # 48
    "skill-version-string": (lambda r: r["skill"].update(version="1"), "identity/version"),  # 50
    "skill-version-float": (lambda r: r["skill"].update(version=1.0), "identity/version"),
    "skill-version-bool": (lambda r: r["skill"].update(version=True), "identity/version"),
    "skill-other-id": (lambda r: r["skill"].update(id="al-implementation-guidance"), "identity/version"),
    "skill-id-array": (lambda r: r["skill"].update(id=["al-development-plan"]), "non-empty string"),  # 51
    "summary-kind-array": (lambda r: r["summary"].update(kind=["bug"]), "non-empty string"),  # 52
    "summary-kind-other": (lambda r: r["summary"].update(kind="feature"), "intended change"),
    "summary-array": (lambda r: r.update(summary=[SENTINEL]), "JSON object"),  # 53
    "candidates-float": (lambda r: r["summary"].update(candidates=1.5), "non-negative integer"),  # 54
    "selected-negative": (lambda r: r["summary"].update(selected=-1), "non-negative integer"),  # 55
    "selected-bool": (lambda r: r["summary"].update(selected=True), "non-negative integer"),
    "selected-zero": (lambda r: r["summary"].update(selected=0), "Summary counts"),  # 56
    "candidates-below-selected": (lambda r: r["summary"].update(candidates=0), "Summary counts"),  # 57
    "technologies-string": (lambda r: r["context"].update(technologies="al"), "JSON array"),  # 58
    "constraints-empty": (lambda r: r["knowledge"][0].update(constraints=[]), "must not be empty"),  # 59
    "constraints-object": (
        lambda r: r["knowledge"][0].update(constraints=[{"text": SENTINEL}]),
        "non-empty string",
    ),  # 60
    "sample-paths-removed": (lambda r: r["knowledge"][0].pop("sample-paths"), "missing required field"),  # 61
    "duplicate-knowledge": (
        lambda r: (
            r["knowledge"].append(copy.deepcopy(r["knowledge"][0])),
            r["summary"].update(candidates=2, selected=2),
        ),
        "Duplicate knowledge",
    ),  # 62
    "validation-evidence-false": (
        lambda r: r["validation-considerations"][0].update(evidence=False),
        "non-empty string",
    ),  # 63
    "suppressed-without-reference": (
        lambda r: r.update(suppressed=[{"path": UPDLOCK, "reason": "layer-precedence"}]),
        "missing required field",
    ),  # 64
    "unresolved-object": (lambda r: r.update(unresolved=[{"gap": SENTINEL}]), "non-empty string"),  # 65
    "sha-zeros": (lambda r: r["knowledge"][0].update(sha="0" * 40), "recorded live checkout"),  # 66
    "sha-short": (lambda r: r["knowledge"][0].update(sha="abc123"), "full commit object id"),
    "sha-null": (lambda r: r["knowledge"][0].update(sha=None), "full commit object id"),
    "used-for-blank": (lambda r: r["knowledge"][0].update(**{"used-for": "  "}), "non-empty string"),
    "duplicate-samples": (
        lambda r: r["knowledge"][0].update(**{"sample-paths": [PAIR_GOOD, PAIR_GOOD.upper()]}),
        "contains duplicates",
    ),
    "duplicate-validation-ids": (
        lambda r: r["validation-considerations"].append(copy.deepcopy(r["validation-considerations"][0])),
        "ids must be unique",
    ),
    "validation-missing-reason": (lambda r: r["validation-considerations"][0].pop("reason"), "missing required field"),
    "suppressed-bad-reason": (
        lambda r: r.update(suppressed=[{"reference": {"path": UPDLOCK}, "reason": SENTINEL}]),
        "layer-precedence or configuration",
    ),
    "suppressed-also-selected": (
        lambda r: r.update(suppressed=[{"reference": {"path": PAIR}, "reason": "configuration"}]),
        "Duplicate or selected suppressed",
    ),
    "suppressed-twice": (
        lambda r: r.update(suppressed=[{"reference": {"path": UPDLOCK}, "reason": "configuration"}] * 2),
        "Duplicate or selected suppressed",
    ),
    "suppressed-sha-zeros": (
        lambda r: r.update(suppressed=[{"reference": {"path": UPDLOCK, "sha": "0" * 64}, "reason": "configuration"}]),
        "recorded live checkout",
    ),
    "context-dimension": (lambda r: r["context"].update(unknown=["region"]), "invalid dimension"),
    "context-duplicates": (lambda r: r["context"].update(countries=["w1", "W1"]), "contains duplicates"),
    "context-empty-countries": (lambda r: r["context"].update(countries=[]), "Unavailable applicability dimensions"),
    "context-unknown-version": (
        lambda r: r["context"].update(**{"bc-version": "Unknown"}),
        "Unavailable applicability dimensions",
    ),
    "reason-blank": (lambda r: r.update(**{"outcome-reason": ""}), "outcome-reason"),
    "completed-without-knowledge": (
        lambda r: (r.update(knowledge=[]), r["summary"].update(selected=0, candidates=0)),
        "requires at least one knowledge entry",
    ),
    "unknown-not-explained": (
        lambda r: r["context"].update(unknown=["countries"]),
        "Unknown dimensions require",
    ),
    "knowledge-null": (lambda r: r.update(knowledge=None), "JSON array"),
    "knowledge-entry-string": (lambda r: r.update(knowledge=[PAIR]), "JSON object"),
}


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_report_mutations_fail_with_their_key(completed, tmp_path, name):
    change, key = MUTATIONS[name]
    result = score_report(completed, tmp_path, mutated(change))
    assert_fails(result, key)
    assert "  - synthetic-case: " in result.err


def test_guidance_report_null_fails(completed, tmp_path):
    document = plan_report()
    document["guidanceReport"] = None
    assert_fails(score_report(completed, tmp_path, document), "JSON object")  # 49


def test_sha_equal_to_the_real_head_passes(completed, tmp_path):
    for sha in (completed.head, completed.head.upper()):  # 67; compared ignoring case
        document = mutated(lambda r, sha=sha: r["knowledge"][0].update(sha=sha))
        document["guidanceReport"]["suppressed"] = [
            {"reference": {"path": UPDLOCK, "sha": sha}, "reason": "layer-precedence"}
        ]
        assert_passes(score_report(completed, tmp_path, document))


@pytest.mark.parametrize(
    "path",
    [
        "../outside.md",
        "/absolute.md",
        "C:/external.md",
        PAIR.replace("/", "\\"),
        "microsoft/knowledge/performance/../performance/pair-findset-with-next-loop.md",
        "https://example.invalid/article.md",
        "microsoft/knowledge/performance/missing.md",
        "microsoft/skills/development/al-development-plan.md",
        "microsoft/knowledge/performance/Pair-Findset-With-Next-Loop.md",
        "microsoft/knowledge/performance/pair-findset-with-next-loop.good.al",
        "microsoft/knowledge/performance/./pair-findset-with-next-loop.md",
        f"microsoft/knowledge/performance/{SENTINEL}.md",
    ],
)
def test_knowledge_paths_are_rejected(completed, tmp_path, path):
    document = mutated(lambda r: r["knowledge"][0].update(path=path, **{"sample-paths": []}))
    assert_fails(score_report(completed, tmp_path, document), "knowledge.path")  # 68


@pytest.mark.parametrize(
    "sample",
    [
        "../outside.al",
        PAIR,
        UPDLOCK_GOOD,
        "microsoft/knowledge/performance/other.good.al",
        PAIR_GOOD.replace("/", "\\"),
        "microsoft/knowledge/performance/pair-findset-with-next-loop.txt.al",
    ],
)
def test_sample_paths_are_rejected(completed, tmp_path, sample):
    document = mutated(lambda r: r["knowledge"][0].update(**{"sample-paths": [sample]}))
    assert_fails(score_report(completed, tmp_path, document), "knowledge.sample-paths entry")  # 69


def test_existing_bad_sample_is_accepted(completed, tmp_path):
    bad = PAIR[: -len(".md")] + ".bad.al"
    document = mutated(lambda r: r["knowledge"][0].update(**{"sample-paths": [PAIR_GOOD, bad]}))
    assert_passes(score_report(completed, tmp_path, document))


@pytest.mark.parametrize(
    "content",
    [b"{", b"null", b"[]", f'{{"caseId": "{SENTINEL}", "caseId": "x"}}'.encode(), b'{"caseId": "a",}', b"// c\n{}"],
    ids=["open-brace", "null", "array", "duplicate-members", "trailing-comma", "comment"],
)
def test_malformed_result_files_fail_cleanly(completed, tmp_path, content):
    result = score_report(completed, tmp_path, content)
    assert result.code == 1  # 70
    assert "synthetic-case: result" in result.err
    assert "strict JSON" in result.err or "JSON object" in result.err


def test_extra_members_are_tolerated_by_the_scorer(completed, tmp_path):
    document = plan_report()
    document["note"] = SENTINEL
    document["guidanceReport"]["extra"] = SENTINEL
    document["guidanceReport"]["knowledge"][0]["extra"] = SENTINEL
    assert_passes(score_report(completed, tmp_path, document))


# --- outcomes (34-46) ------------------------------------------------------------------------

EXPLAINED = ["bc-version cannot be established from the plan"]
UNKNOWN_VERSION = {
    "bc-version": "unknown",
    "technologies": ["al"],
    "countries": ["w1"],
    "application-area": ["all"],
    "unknown": ["bc-version"],
}


def outcome_case(outcome, **overrides):
    return plan_case(outcome=outcome, **overrides)


OUTCOME_SCENARIOS = {
    "honest-no-knowledge": (outcome_case("no-knowledge"), plan_report(outcome="no-knowledge"), None),  # 34
    "honest-partial": (
        outcome_case("partial", requiresUnresolved=True),
        plan_report(outcome="partial", reason=f"caller intent {SENTINEL}", unresolved=["intent is open"]),
        None,
    ),  # 35
    "honest-failed": (
        outcome_case("failed"),
        plan_report(outcome="failed", reason="the index could not be read"),
        None,
    ),  # 36
    "honest-not-applicable": (outcome_case("not-applicable"), plan_report(outcome="not-applicable"), None),  # 37
    "partial-material-unknown-version": (
        outcome_case(
            "partial",
            expectedUnknown=["bc-version"],
            requiresUnresolved=True,
            requiresMaterialUnresolved=True,
            context=UNKNOWN_VERSION,
        ),
        plan_report(
            outcome="partial", reason="version", bc_version="unknown", unknown=["bc-version"], unresolved=EXPLAINED
        ),
        None,
    ),  # 38
    "material-unknown-reported-completed": (
        outcome_case(
            "partial",
            expectedUnknown=["bc-version"],
            requiresUnresolved=True,
            requiresMaterialUnresolved=True,
            context=UNKNOWN_VERSION,
        ),
        plan_report(outcome="completed", bc_version="unknown", unknown=["bc-version"], unresolved=EXPLAINED),
        "expectedOutcome",
    ),  # 39
    "completed-immaterial-unknown": (
        outcome_case("completed", expectedUnknown=["bc-version"], context=UNKNOWN_VERSION),
        plan_report(bc_version="unknown", unknown=["bc-version"], unresolved=["BC-VERSION unknown; immaterial"]),
        None,
    ),  # 40
    "completed-immaterial-unknown-unexplained": (
        outcome_case("completed", expectedUnknown=["bc-version"], context=UNKNOWN_VERSION),
        plan_report(bc_version="unknown", unknown=["bc-version"], unresolved=[]),
        "unresolved gaps",
    ),  # 41
    "no-knowledge-unknown-version": (
        outcome_case("no-knowledge", expectedUnknown=["bc-version"], context=UNKNOWN_VERSION),
        plan_report(outcome="no-knowledge", bc_version="unknown", unknown=["bc-version"], unresolved=EXPLAINED),
        None,
    ),  # 42
    "partial-without-reason": (
        outcome_case("partial", requiresUnresolved=True),
        plan_report(outcome="partial", unresolved=["intent is open"]),
        "outcome-reason",
    ),  # 43
    "failed-without-reason": (outcome_case("failed"), plan_report(outcome="failed"), "outcome-reason"),  # 44
    "no-knowledge-reported-completed": (outcome_case("no-knowledge"), plan_report(), "expectedOutcome"),  # 45
    "no-knowledge-with-filler": (
        outcome_case("no-knowledge"),
        plan_report(outcome="no-knowledge", knowledge=[knowledge_entry()]),
        "requires empty knowledge",
    ),  # 46
    "expected-unknown-silently-resolved": (
        outcome_case("completed", expectedUnknown=["countries"]),
        plan_report(),
        "silently resolved",
    ),
    "partial-without-unresolved": (
        outcome_case("partial", requiresUnresolved=True),
        plan_report(outcome="partial", reason="open"),
        "unresolved gaps",
    ),
    "required-unresolved-missing": (
        outcome_case("completed", requiresUnresolved=True),
        plan_report(),
        "unresolved gaps",
    ),
    "failed-with-knowledge-passes-the-scorer": (  # spec §7.17: only the schema rejects it
        outcome_case("failed", optionalKnowledge=[PAIR]),
        plan_report(outcome="failed", reason="integrity", knowledge=[knowledge_entry()]),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(OUTCOME_SCENARIOS))
def test_outcomes_are_scored_exactly(tmp_path, name):
    case, report, key = OUTCOME_SCENARIOS[name]
    scenario = Scenario(tmp_path / "run", manifest([case]))
    assert_passes(scenario.cli("validate"))
    assert_passes(scenario.capture(), "captured")
    scenario.write_result(report)
    result = scenario.score()
    if key is None:
        assert_passes(result)
    else:
        assert_fails(result, key)
    remove(tmp_path / "run")


# --- metrics (§4) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("required", "optional", "cited", "precision", "key"),
    [
        ([PAIR, UPDLOCK], [], [PAIR], 0.67, "recall is below"),
        ([PAIR], [], [PAIR, UPDLOCK], 0.67, "precision is below"),  # one unlisted extra: 1/2
        ([PAIR], [UPDLOCK], [PAIR, UPDLOCK], 1.0, None),  # an optional extra is accepted
        ([PAIR, UPDLOCK], [], [PAIR, UPDLOCK, "microsoft/knowledge/performance/third.md"], 0.67, "precision is below"),
        (
            [PAIR, UPDLOCK, "microsoft/knowledge/performance/third.md"],
            [],
            [PAIR, UPDLOCK, "microsoft/knowledge/performance/third.md", "microsoft/knowledge/performance/fourth.md"],
            0.67,
            None,
        ),  # 3/4 = 0.75
    ],
    ids=["recall", "precision-half", "optional-extra", "two-of-three", "three-of-four"],
)
def test_recall_and_precision_thresholds(tmp_path, required, optional, cited, precision, key):
    extra = {
        "microsoft/knowledge/performance/third.md": article("Third"),
        "microsoft/knowledge/performance/fourth.md": article("Fourth"),
    }
    data = manifest(
        [plan_case(requiredKnowledge=required, optionalKnowledge=optional)], minimumKnowledgePrecision=precision
    )
    scenario = Scenario(tmp_path / "run", data, extra)
    assert_passes(scenario.capture(), "captured")
    scenario.write_result(plan_report(knowledge=[knowledge_entry(path, samples=[]) for path in cited]))
    result = scenario.score()
    if key is None:
        assert_passes(result)
    else:
        assert_fails(result, key)
    remove(tmp_path / "run")


def test_only_the_first_failure_of_a_case_is_listed(completed, tmp_path):
    document = mutated(lambda r: (r.update(outcome="success"), r["summary"].update(kind=[])))
    result = score_report(completed, tmp_path, document)
    assert_fails(result, "outcome enum")
    assert "FAILED with 1 problem(s)" in result.err


# --- sha content checks (§3.5) ---------------------------------------------------------------


def test_sha_requires_the_committed_article_to_be_the_live_one(tmp_path):
    scenario = Scenario(tmp_path / "run", manifest([plan_case(optionalKnowledge=[UPDLOCK])]))
    head = git(scenario.root, "rev-parse", "HEAD")
    write(scenario.root, UPDLOCK, article("Changed but not committed"))
    (scenario.root / PAIR).write_bytes((scenario.root / PAIR).read_bytes().replace(b"\n", b"\r\n"))
    assert_passes(scenario.capture(), "captured")
    crlf_only = knowledge_entry()
    crlf_only["sha"] = head
    scenario.write_result(plan_report(knowledge=[crlf_only]))
    assert_passes(scenario.score())  # CRLF is normalised on both sides
    changed = knowledge_entry(UPDLOCK, samples=[])
    changed["sha"] = head
    scenario.write_result(plan_report(knowledge=[knowledge_entry(), changed]))
    assert_fails(scenario.score(), "differs from the live knowledge article")
    remove(tmp_path / "run")


def test_sha_of_an_uncommitted_article_fails_through_git(tmp_path):
    extra_path = "microsoft/knowledge/performance/new-article.md"
    scenario = Scenario(tmp_path / "run", manifest([plan_case(optionalKnowledge=[])]))
    head = git(scenario.root, "rev-parse", "HEAD")
    write(scenario.root, extra_path, article("New"))
    data = json.loads(scenario.manifest.read_text())
    data["cases"][0]["optionalKnowledge"] = [extra_path]
    scenario.manifest.write_text(json.dumps(data))
    assert_passes(scenario.capture(), "captured")
    entry = knowledge_entry(extra_path, samples=[])
    entry["sha"] = head
    scenario.write_result(plan_report(knowledge=[knowledge_entry(), entry]))
    assert_fails(scenario.score(), "Git evidence could not be read")
    remove(tmp_path / "run")


# --- links in the knowledge checkout (75, 76) and normative articles (77, 78) --------------


@pytest.fixture
def linked_checkout(tmp_path):
    outside = tmp_path / "outside"
    write(outside, "linked-article.md", article("Linked"))
    write(outside, "linked-article.good.al", "codeunit 1 X { }\n")
    scenario = Scenario(tmp_path / "run", manifest([plan_case()]))
    (scenario.root / "custom" / "knowledge").mkdir(parents=True)
    yield scenario, outside
    remove(tmp_path / "run")


def test_knowledge_reference_through_a_linked_directory_is_rejected(linked_checkout):
    scenario, outside = linked_checkout
    (scenario.root / "custom/knowledge/performance").symlink_to(outside)
    data = json.loads(scenario.manifest.read_text())
    data["cases"][0]["optionalKnowledge"] = ["custom/knowledge/performance/linked-article.md"]
    scenario.manifest.write_text(json.dumps(data))
    assert_fails(scenario.cli("validate"), "Links, junctions")  # 75


def test_sample_reference_through_a_linked_directory_is_rejected(linked_checkout):
    scenario, outside = linked_checkout
    assert_passes(scenario.capture(), "captured")
    (scenario.root / "custom/knowledge/performance").symlink_to(outside)
    with pytest.raises(GuidanceError, match="Links, junctions"):  # 76: the resolver itself
        resolve_reference(
            scenario.root,
            "custom/knowledge/performance/linked-article.good.al",
            "knowledge.sample-paths entry",
            mode="sample",
            article="custom/knowledge/performance/linked-article.md",
        )
    entry = knowledge_entry(PAIR, samples=["custom/knowledge/performance/linked-article.good.al"])
    scenario.write_result(plan_report(knowledge=[entry]))
    assert_fails(scenario.score(), "Links, junctions")  # the checkout snapshot refuses the link first


@pytest.mark.parametrize(("best", "anti"), [(True, False), (False, True)], ids=["best-only", "anti-only"])
def test_either_normative_heading_suffices(tmp_path, best, anti):
    rel = "custom/knowledge/data/nested/one-heading.md"
    scenario_root = tmp_path / "k"
    data = manifest([plan_case(optionalKnowledge=[rel])])
    from guidance_util import build_knowledge

    build_knowledge(scenario_root, data, {rel: article("One heading", best=best, anti=anti)}, use_git=False)
    result = cli("validate", "--root", scenario_root, "--manifest", scenario_root / "evaluation/guidance-fixtures.json")
    assert_passes(result)  # 77, 78 (nested domain folders are allowed too)


@pytest.mark.parametrize(
    "text",
    [
        "# No front matter\n\n## Best Practice\n\nx\n",
        "---\ndomain: data\n---\n\n# No heading\n\n## Description\n",
        "---\ntitle: x\n---\n\n# No domain\n\n## Best Practice\n",
        "---\ndomain: data\n---\n\n# Heading with suffix\n\n## Best Practices\n",
    ],
    ids=["no-front-matter", "no-heading", "no-domain", "heading-suffix"],
)
def test_non_normative_articles_are_rejected(tmp_path, text):
    rel = "custom/knowledge/data/weak-article.md"
    from guidance_util import build_knowledge

    build_knowledge(tmp_path / "k", manifest([plan_case(optionalKnowledge=[rel])]), {rel: text}, use_git=False)
    result = cli("validate", "--root", tmp_path / "k", "--manifest", tmp_path / "k/evaluation/guidance-fixtures.json")
    assert_fails(result, "normative knowledge article")
