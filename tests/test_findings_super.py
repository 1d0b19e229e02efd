"""The super-skill half of the findings-report contract (spec upstream-2026-09.md §3.3, §3.4): every SUPER_* code
from a known-bad report next to the known-good roll-up that yields nothing, and the expected composition's own
contract."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from findings_util import (
    CONSENT,
    PRIVACY,
    RETENTION,
    STYLE,
    TESTING,
    changed,
    cited,
    codes,
    composition,
    leaf,
    lines,
    make_world,
    rolled,
    style,
    super_scope,
)

from bceval.errors import BcevalError
from bceval.evaluators.development.superskill import derived_outcome, load_composition, same_json


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    return make_world(tmp_path)


def _failed_style(document: dict) -> dict:
    document["sub-results"][1] = {**style(), "outcome": "failed", "outcome-reason": "the model stopped"}
    return changed(document, "findings.1.from-sub-skill", STYLE)


def _drop_style(document: dict) -> dict:
    document["sub-results"].pop()
    return document


def _conflict(document: dict) -> dict:
    """Two leaf findings on one line with different suggested code, rolled up into one citing both."""
    sub = document["sub-results"][0]
    sub["findings"] = [
        cited(**{"suggested-code": "A"}),
        cited(id=RETENTION, references=[{"path": RETENTION}], **{"suggested-code": "B"}),
    ]
    both = cited(references=[{"path": CONSENT}, {"path": RETENTION}], **{"from-sub-skill": PRIVACY})
    document["findings"] = [both]
    return document


SUPER_CASES = [
    (
        "SUPER_SUB_RESULTS_REQUIRED",
        lambda d: changed(d, "sub-results", None),
        {},
        "at $: A super-skill report must contain sub-results.",
    ),
    (
        "SUPER_PRODUCER_REQUIRED",
        lambda d: changed(d, "findings.0.from-sub-skill", None),
        {},
        "at $.findings[0]: A super-skill finding must identify its producer in from-sub-skill.",
    ),
    (
        "SUPER_DUPLICATE_SUB_RESULT",
        lambda d: changed(d, "sub-results", [leaf(), style(), style()]),
        {},
        "at $.sub-results[2].skill.id: A leaf may appear only once in sub-results.",
    ),
    (
        "SUPER_SKIP_CONFLICT",
        lambda d: changed(d, "skipped-sub-skills.0.skill.id", STYLE),
        {},
        "Skill 'al-style-review' is duplicated or both returned and skipped.",
    ),
    (
        "SUPER_IDENTITY_MISMATCH",
        lambda d: d,
        {"superSkill": {"id": "al-code-review", "version": 2}},
        "at $.skill: Super-skill identity differs from expected composition.",
    ),
    (
        "SUPER_UNEXPECTED_SUB_RESULT",
        lambda d: d,
        {"subSkills": [{"id": PRIVACY, "version": 1}], "acceptedResults": []},
        "at $.sub-results[1].skill: Skill 'al-style-review' was not selected.",
    ),
    (
        "SUPER_LEAF_VERSION_MISMATCH",
        lambda d: d,
        {"subSkills": [{"id": PRIVACY, "version": 1}, {"id": STYLE, "version": 2}], "acceptedResults": []},
        "at $.sub-results[1].skill.version: Unexpected version for 'al-style-review'.",
    ),
    (
        "SUPER_LEAF_NOT_ACCEPTED",
        lambda d: d,
        {"acceptedResults": []},
        "at $.sub-results[1]: Leaf 'al-style-review' has no host-captured accepted result.",
    ),
    (
        "SUPER_LEAF_CONTENT_MISMATCH",
        lambda d: changed(
            d, "sub-results.1.suppressed", [{"reference": {"path": RETENTION}, "reason": "configuration"}]
        ),
        {},
        "at $.sub-results[1]: Leaf 'al-style-review' differs from its host-captured accepted result.",
    ),
    (
        "SUPER_SUB_RESULT_ORDER",
        lambda d: d,
        {"subSkills": [{"id": STYLE, "version": 1}, {"id": PRIVACY, "version": 1}]},
        "at $.sub-results[1].skill: Sub-results must preserve the selected worklist order.",
    ),
    ("SUPER_ACCEPTED_LEAF_MISSING", _drop_style, {}, "Host-captured accepted leaf 'al-style-review' must be included."),
    ("SUPER_MISSING_LEAF_REASON", _drop_style, {}, "The reason must name missing selected leaf 'al-style-review'."),
    (
        "SUPER_UNEXPECTED_SKIP",
        lambda d: d,
        {"skipped": []},
        "Skill 'al-testing-review' was not excluded by the coordinator.",
    ),
    (
        "SUPER_SKIP_MISMATCH",
        lambda d: d,
        {"skipped": [{"id": TESTING, "version": 1, "reason": "not-applicable"}]},
        "Skip identity or reason differs for 'al-testing-review'.",
    ),
    (
        "SUPER_SKIP_MISSING",
        lambda d: d,
        {
            "skipped": [
                {"id": TESTING, "version": 1, "reason": "configuration"},
                {"id": "al-ui-review", "version": 1, "reason": "configuration"},
            ]
        },
        "at $.skipped-sub-skills: Expected exclusion 'al-ui-review' is missing.",
    ),
    (
        "SUPER_OUTCOME_MISMATCH",
        lambda d: {**d, "outcome": "partial", "outcome-reason": "why"},
        {},
        "at $.outcome: Expected 'completed' from sub-results.",
    ),
    (
        "SUPER_COVERAGE_MISMATCH",
        lambda d: changed(d, "summary.coverage", {"worklist-size": 2, "items-evaluated": 2}),
        {},
        "Expected worklist-size 1 and items-evaluated 1 from non-failed sub-results.",
    ),
    (
        "SUPER_AGENT_REVIEW_INCOMPLETE",
        _drop_style,
        {},
        "Super-skill self-review is forbidden while selected leaf results are missing.",
    ),
    (
        "SUPER_AGENT_FINDING_INVALID",
        lambda d: changed(d, "findings.2.domain", "Privacy"),
        {},
        "A super-skill agent finding must use an agent: id, Agent domain, and no references.",
    ),
    (
        "SUPER_FAILED_FINDING_LEAKAGE",
        _failed_style,
        {},
        "at $.findings[1].from-sub-skill: Finding is attributed to failed sub-skill 'al-style-review'.",
    ),
    (
        "SUPER_PRODUCER_INVALID",
        lambda d: changed(d, "findings.0.from-sub-skill", "al-ui-review"),
        {},
        "Sub-skill 'al-ui-review' has no non-failed result.",
    ),
    (
        "SUPER_FINDING_MISMATCH",
        lambda d: changed(d, "findings.0.message", "Something else."),
        {},
        "is not owned by a matching finding from 'al-privacy-review'.",
    ),
    (
        "SUPER_FINDING_MISMATCH",
        lambda d: changed(d, "findings.0.severity", "blocker"),
        {},
        "must retain the highest severity and confidence justified by its represented leaf findings.",
    ),
    ("SUPER_FINDING_MISMATCH", _conflict, {}, "represents leaf findings with conflicting suggested-code replacements."),
    (
        "SUPER_DUPLICATE_FINDINGS",
        lambda d: changed(d, "findings", [*d["findings"], d["findings"][0]]),
        {},
        "Top-level findings 0 and 3 overlap and prescribe the same correction; they must be merged.",
    ),
    (
        "SUPER_FINDING_MISSING",
        lambda d: changed(d, "findings", d["findings"][1:]),
        {},
        "No valid rolled-up finding represents a finding from 'al-privacy-review' at its source location.",
    ),
    (
        "SUPER_FINDING_MISSING",
        lambda d: changed(d, "findings", [d["findings"][0], d["findings"][2]]),
        {},
        "No distinct rolled-up finding represents a locationless finding from 'al-privacy-review'.",
    ),
]


@pytest.mark.parametrize(("code", "change", "expected", "text"), SUPER_CASES, ids=[c[0] for c in SUPER_CASES])
def test_each_super_code_comes_from_its_known_bad_report(world, code, change, expected, text):
    found = lines(change(rolled()), super_scope(world, **expected))
    assert any(line.startswith(f"{code} at $") and line.endswith(text) for line in found), found
    assert code not in codes(rolled(), super_scope(world))


def test_super_messages_name_what_is_wrong(world):
    scope = super_scope(world)
    assert lines(_drop_style(rolled()), scope) == [
        f"SUPER_ACCEPTED_LEAF_MISSING at $.sub-results: Host-captured accepted leaf '{STYLE}' must be included.",
        f"SUPER_MISSING_LEAF_REASON at $.outcome-reason: The reason must name missing selected leaf '{STYLE}'.",
        "SUPER_OUTCOME_MISMATCH at $.outcome: Expected 'partial' from sub-results.",
        "SUPER_AGENT_REVIEW_INCOMPLETE at $.findings[2]: Super-skill self-review is forbidden while selected leaf "
        "results are missing.",
    ]
    owned = changed(rolled(), "findings.0.message", "Something else.")
    assert lines(owned, super_scope(world))[0] == (
        f"SUPER_FINDING_MISMATCH at $.findings[0]: Rolled-up finding '{CONSENT}' is not owned by a matching finding "
        f"from '{PRIVACY}'."
    )


def test_a_missing_leaf_must_be_named_as_a_whole_token_in_the_reason(world):
    scope = super_scope(world, acceptedResults=[{"id": PRIVACY, "version": 1, "reportPath": "privacy.json"}])
    missing = {**_drop_style(rolled()), "outcome": "partial", "findings": rolled()["findings"][:2]}
    missing["summary"]["counts"]["info"] = 0
    assert lines({**missing, "outcome-reason": f"{STYLE}-2 timed out"}, scope) == [
        f"SUPER_MISSING_LEAF_REASON at $.outcome-reason: The reason must name missing selected leaf '{STYLE}'."
    ]
    assert lines({**missing, "outcome-reason": f"{STYLE} timed out"}, scope) == []


def test_sub_results_are_checked_as_leaves_with_their_own_prefix(world):
    nested = changed(rolled(), "sub-results.0.summary.counts.major", 3)
    assert "COUNT_MISMATCH at $.sub-results[0].summary.counts.major: Expected 1." in lines(nested, super_scope(world))


@pytest.mark.parametrize(
    ("outcomes", "missing", "expected"),
    [
        ([], 0, "not-applicable"),
        (["failed", "failed"], 0, "failed"),
        (["completed", "failed"], 0, "partial"),
        (["completed", "partial"], 0, "partial"),
        (["not-applicable", "not-applicable"], 0, "not-applicable"),
        (["no-knowledge", "not-applicable"], 0, "no-knowledge"),
        (["completed", "no-knowledge"], 0, "completed"),
        (["completed"], 1, "partial"),
        (["failed"], 1, "failed"),
        ([], 1, "failed"),
    ],
)
def test_the_super_outcome_is_derived_from_the_sub_results(outcomes, missing, expected):

    assert derived_outcome(outcomes, missing) == expected


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"subSkills": "none"}, "Expected composition does not satisfy its input contract."),
        (
            {"subSkills": [{"id": STYLE, "version": 1}] * 2, "acceptedResults": []},
            f"Duplicate expected skill id '{STYLE}'.",
        ),
        (
            {"skipped": [{"id": STYLE, "version": 1, "reason": "configuration"}]},
            f"Duplicate or selected-and-skipped expected skill id '{STYLE}'.",
        ),
        (
            {"acceptedResults": [{"id": STYLE, "version": 2, "reportPath": "style.json"}]},
            f"Accepted result '{STYLE}' must uniquely match a selected leaf and version.",
        ),
        (
            {"acceptedResults": [{"id": STYLE, "version": 1, "reportPath": "privacy.json"}]},
            f"Accepted result '{STYLE}' must be a leaf report with the captured identity.",
        ),
    ],
)
def test_an_expected_composition_that_breaks_its_contract_is_refused(tmp_path, changes, message):
    with pytest.raises(BcevalError) as refused:
        load_composition(composition(tmp_path, **changes))
    assert str(refused.value) == f"{tmp_path / 'composition.json'}: Invalid expected composition: {message}"


def test_an_accepted_result_that_is_no_report_is_refused(tmp_path):
    path = composition(tmp_path)
    (tmp_path / "style.json").write_text('{"skill": {}}', encoding="utf-8")
    with pytest.raises(BcevalError, match=f"Accepted result '{STYLE}' does not satisfy the report schema."):
        load_composition(path)


def test_a_report_with_a_copy_of_itself_as_accepted_leaf_keeps_number_types(world):

    assert same_json({"a": [1, "x"]}, {"a": [1, "x"]}) and not same_json({"a": 1}, {"a": 1.0})
    assert not same_json({"a": True}, {"a": 1}) and not same_json({"a": 1}, {"a": 1, "b": 2})
    assert same_json({"a": 1, "b": 2}, {"b": 2, "a": 1}) and not same_json([1, 2], [2, 1])
    doubled = copy.deepcopy(rolled())
    assert same_json(doubled, rolled())
