"""The four arms of spec §12: each arm's request carries only its guidance, and arms that differ in anything
but guidance are refused, naming the field."""

from __future__ import annotations

import pytest
from conftest import DEMO_CORPUS

from bceval.development import DevelopmentError
from bceval.development.arms import CHECKPOINTS, GUIDANCE_ARMS, NEUTRAL_PROMPT, arm_request, unmatched

BASE = {"startingRepositories": {"a": "1" * 64}, "checks": "c" * 64, "model": "m", "checkout": "k" * 40}
REQUEST = {
    "protocol": "p",
    "caseId": "case-00000000",
    "skill": "s.md",
    "skillInstructions": "skill text",
    "knowledgeIndex": "knowledge-index.json",
    "task-context": {},
    "development-request": {},
    "resultSchema": {},
}


@pytest.mark.parametrize(
    ("field", "label"),
    [
        ("startingRepositories", "starting repository"),
        ("checks", "gate configuration"),
        ("model", "model"),
        ("checkout", "checkout"),
    ],
)
def test_arms_differing_in_more_than_guidance_are_refused_naming_the_field(field, label):
    other = dict(BASE, **{field: "different"})
    message = unmatched([("none", BASE), ("plan", dict(BASE)), ("both", other)])
    assert message == (
        f"arm 'both' differs from arm 'none' in its {label} ({field}); the arms of a development "
        "experiment may differ only in guidance"
    )


def test_matched_arms_pass():
    assert unmatched([(arm, dict(BASE)) for arm in GUIDANCE_ARMS]) is None


def test_each_arm_gets_only_its_guidance():
    none = arm_request(REQUEST, "none", DEMO_CORPUS)
    assert (none["skill"], none["skillInstructions"]) == (
        "none",
        NEUTRAL_PROMPT,
    ) and "implementationGuidance" not in none
    assert arm_request(REQUEST, "plan", DEMO_CORPUS) == REQUEST
    both = arm_request(REQUEST, "both", DEMO_CORPUS)
    assert list(both)[:5] == ["protocol", "caseId", "skill", "skillInstructions", "implementationGuidance"]
    assert both["implementationGuidance"]["checkpoints"] == list(CHECKPOINTS) and both["skill"] == "s.md"
    implementation = arm_request(REQUEST, "implementation", DEMO_CORPUS)
    assert (
        implementation["skill"] == "none"
        and "al-implementation-guidance" in implementation["implementationGuidance"]["instructions"]
    )
    with pytest.raises(DevelopmentError, match="does not exist"):
        arm_request(REQUEST, "implementation", DEMO_CORPUS / "evaluation")


def test_an_experiment_of_development_arms_is_refused_in_one_line_for_now(tmp_path, capsys):
    from bceval.cli import main

    (tmp_path / "dev.yaml").write_text(
        f"name: dev\nepochs: 1\nseed: 1\ndefaults:\n  corpus: {DEMO_CORPUS}\n  evaluator: development\n"
        "arms:\n  - name: none\n  - name: plan\n",
        encoding="utf-8",
    )
    assert main(["experiment", "run", str(tmp_path / "dev.yaml"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "evaluator development is not available in experiments yet" in err
