"""The four arms of spec §12: each arm's request carries only its guidance, and arms that differ in anything
but guidance are refused, naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DEMO_CORPUS

from bceval.evaluators.development import DevelopmentError
from bceval.evaluators.development.arms import CHECKPOINTS, GUIDANCE_ARMS, NEUTRAL_PROMPT, arm_request, unmatched

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


FOUR_ARMS = Path(__file__).resolve().parents[1] / "evaluation" / "experiments" / "development-four-arms.yaml"


def _experiment(tmp_path: Path, epochs: int = 1, extra: str = "") -> Path:
    """The demo four-arm experiment with the corpus given absolutely (and fewer epochs: each is 8 case runs)."""
    text = FOUR_ARMS.read_text(encoding="utf-8").replace("corpus: ../demo-corpus", f"corpus: {DEMO_CORPUS}")
    text = text.replace("epochs: 2", f"epochs: {epochs}") + extra
    (tmp_path / "four.yaml").write_text(text, encoding="utf-8")
    return tmp_path / "four.yaml"


def test_the_four_arm_demo_experiment_compares_gates_passed_paired_per_case(tmp_path, capsys):
    from bceval.cli import main

    out = tmp_path / "out"
    assert main(["experiment", "run", str(_experiment(tmp_path)), "--out", str(out)]) == 0
    folder = out / "experiments" / "development-four-arms"
    report = json.loads((folder / "report.json").read_text())
    markdown = (folder / "report.md").read_text()
    assert "Arms differ in: guidance" in markdown
    assert "| courier-deactivate-batch | positive | 0/1 | 0/1 | 1/1 | 1/1 |" in markdown
    assert "| courier-rating-field | positive | 0/1 | 1/1 | 0/1 | 1/1 |" in markdown
    assert [arm["name"] for arm in report["arms"]] == ["baseline", "plan-only", "implementation-only", "combined"]
    summary = json.loads((folder / "development-summary.json").read_text())
    by_arm = {arm["arm"]: arm for arm in summary["arms"]}
    assert [by_arm[a]["gatesPassed"] for a in ("baseline", "plan-only", "implementation-only", "combined")] == [
        0,
        1,
        1,
        2,
    ]
    assert by_arm["baseline"]["overclaimRate"] == 1.0 and by_arm["combined"]["overclaimRate"] == 0.0
    assert by_arm["baseline"]["findings"]["major"] == 2 and by_arm["combined"]["findings"]["major"] == 0
    assert "Gates passed" in (folder / "development-summary.md").read_text()


@pytest.mark.parametrize(
    ("arm_line", "label"),
    [
        ("    model: other-model\n", "model (model)"),
        ("    checks: evaluation/development-checks-other.yaml\n", "gate configuration (checks)"),
    ],
)
def test_an_experiment_whose_arms_differ_in_more_than_guidance_is_refused(tmp_path, capsys, arm_line, label):
    import shutil

    from bceval.cli import main

    corpus = tmp_path / "corpus"
    shutil.copytree(DEMO_CORPUS, corpus)
    other = (corpus / "evaluation/development-checks.yaml").read_text().replace("timeout_s: 60", "timeout_s: 61")
    (corpus / "evaluation/development-checks-other.yaml").write_text(other)
    path = _experiment(tmp_path)
    path.write_text(
        path.read_text()
        .replace(str(DEMO_CORPUS), str(corpus))
        .replace("    guidance: both\n", "    guidance: both\n" + arm_line)
    )
    assert main(["experiment", "run", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"arm 'combined' differs from arm 'baseline' in its {label}" in err
    assert not (tmp_path / "out" / "experiments").exists()


def test_infrastructure_errors_are_counted_apart_never_as_failed_gates(tmp_path):
    from bceval.cli import main

    checks = (DEMO_CORPUS / "evaluation" / "development-checks.yaml").read_text(encoding="utf-8")
    checks = checks.replace(
        "workspace: development-workspaces", f"workspace: {DEMO_CORPUS}/evaluation/development-workspaces"
    )
    checks = checks.replace("{checks_dir}", f"{DEMO_CORPUS}/evaluation") + "toolchain: unavailable\n"
    (tmp_path / "checks.yaml").write_text(checks, encoding="utf-8")
    path = _experiment(tmp_path)
    path.write_text(
        path.read_text().replace(
            "  evaluator: development\n", f"  evaluator: development\n  checks: {tmp_path}/checks.yaml\n"
        )
    )
    out = tmp_path / "out"
    assert main(["experiment", "run", str(path), "--out", str(out)]) == 0
    report = json.loads((out / "experiments" / "development-four-arms" / "report.json").read_text())
    for arm in report["arms"]:
        assert arm["infrastructureFailures"] == 2 and arm["unanswered"] == 2, arm
    for line in report["cases"]:
        assert all(outcome == [None] for outcome in line["outcomes"].values()), line
