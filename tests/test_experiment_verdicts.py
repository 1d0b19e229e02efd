"""Experiment verdicts that cannot mislead (issue 23): each test names the point of the issue it pins down."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest

from bceval.experiment import power
from bceval.experiment.exact import fisher_exact, holm, obrien_fleming
from bceval.experiment.model import Arm, ExperimentFile
from bceval.experiment.plan import ArmPlan, Plan
from bceval.experiment.render import document, headline, render_html, render_markdown
from bceval.experiment.report_model import (
    ArmOutcomes,
    CaseOutcome,
    EpochOutcomes,
    Look,
    build_report,
    earlier_looks,
    sequential_plan,
)
from bceval.experiment.stats import compare_arms, compare_treatments, paired_comparison, summarize_arm
from tests.cliutil import run_cli

REPO = Path(__file__).resolve().parents[1]
T, F, N = True, False, None


def kinds_of(outcomes: dict, kind: str = "positive") -> dict:
    return dict.fromkeys(outcomes, kind)


# --- a synthetic report, built in memory as `experiment report` builds it -----------------------------------------


def arm_plan(name: str, control: bool) -> ArmPlan:
    return ArmPlan(
        name=name,
        control=control,
        fields={"adapter": name},
        corpus=Path("/corpus"),
        repository=None,
        subdir="",
        commit=None,
        manifest=None,
        variant="v",
    )


def synthetic_report(
    arms: dict[str, dict[str, list]], kinds: dict[str, str], *, epochs: int, earlier=None, **experiment
) -> object:
    """A report of arms given as {arm: {case: [True/False/None per epoch]}}; None is an infra failure."""
    plan = Plan(
        experiment=ExperimentFile(name="syn", epochs=epochs, arms=[Arm(name=n) for n in arms], **experiment),
        source=None,
        out=Path("/out/experiments/syn"),
        arms=[arm_plan(name, index == 0) for index, name in enumerate(arms)],
    )
    outcomes = {}
    for name, cases in arms.items():
        units = [
            [
                CaseOutcome(case, case, "d", kinds[case], entries[epoch], infra=entries[epoch] is None, answered=True)
                for case, entries in cases.items()
            ]
            for epoch in range(epochs)
        ]
        outcomes[name] = ArmOutcomes(list(cases), [EpochOutcomes(epoch) for epoch in units])
    return build_report(plan, outcomes, "2026-01-01T00:00:00Z", earlier)


# --- 1. recall bought with clean-rate regressions is never "better" ----------------------------------------------


def test_1_a_recall_gain_with_clean_controls_going_pass_to_fail_is_mixed_not_better():
    control = {f"p{i}": [F] for i in range(16)} | {f"c{i}": [T] for i in range(5)}
    treatment = {f"p{i}": [T] for i in range(16)} | {f"c{i}": [F] for i in range(5)}
    kinds = {case: "positive" if case.startswith("p") else "clean" for case in control}
    result = compare_arms(control, treatment, kinds, seed=0)
    assert result.p_value == pytest.approx(0.0266, abs=1e-4)  # the pooled test alone would say "better"
    assert result.verdict == "mixed" and result.verdict_text == "mixed: recall better, clean rate worse"
    assert result.clean_rate.difference == -1.0 and result.clean_rate.test.p_lower == 1 / 32
    assert result.clean_rate.worse_than_control and result.recall.difference == 1.0
    for kind in (result.recall, result.clean_rate):  # each kind its own paired test and interval
        assert kind.test.method == "exact" and kind.interval is not None and kind.interval.low < kind.interval.high
    assert "not an improvement" in result.explanation


def test_1_a_gain_in_both_kinds_is_better_and_a_regression_in_both_is_worse():
    control = {f"p{i}": [F] * 3 for i in range(10)} | {f"c{i}": [F] * 3 for i in range(10)}
    treatment = {case: [T] * 3 for case in control}
    kinds = {case: "positive" if case.startswith("p") else "clean" for case in control}
    assert compare_arms(control, treatment, kinds, seed=0).verdict_text == "better"
    assert compare_arms(treatment, control, kinds, seed=0).verdict_text == "worse"


def test_1_paired_comparison_is_a_pure_function_of_any_per_case_outcome():
    gates_control = {"a": [F, F], "b": [T, F], "c": [T, T]}
    gates_treatment = {"a": [T, T], "b": [T, T], "c": [T, T]}
    gates = paired_comparison(gates_control, gates_treatment, kind="gates", label="gates passed", seed=1)
    assert (gates.label, gates.paired_cases, gates.better, gates.equal) == ("gates passed", 3, 2, 1)
    assert gates.difference == pytest.approx(0.5) and gates.test.p_upper == 0.25


# --- 2. one estimand: verdict, delta and interval agree -------------------------------------------------------------


def test_2_the_verdict_the_delta_and_its_interval_are_about_the_mean_per_case_difference():
    control = {f"up{i}": [F] * 5 for i in range(20)} | {f"down{i}": [T] * 5 for i in range(3)}
    treatment = {f"up{i}": [T, N, N, N, N] for i in range(20)} | {f"down{i}": [F] * 5 for i in range(3)}
    control |= {f"flat{i}": [F, N, N, N, N] for i in range(40)}
    treatment |= {f"flat{i}": [F] * 5 for i in range(40)}
    result = compare_arms(control, treatment, kinds_of(control), seed=0)
    assert result.overall.difference == pytest.approx(17 / 63)  # the pooled recall delta was -0.012
    assert result.recall.difference == result.overall.difference > 0
    assert result.recall.interval.low <= result.recall.difference <= result.recall.interval.high
    assert result.overall.test.statistic > 0
    # and with missing answers this lopsided there is no verdict at all (point 3)
    assert result.verdict == "no verdict" and "lost answers at different rates" in result.verdict_text


def test_2_the_report_names_the_estimand_where_it_shows_it():
    arms = {"a": {f"c{i}": [F, F] for i in range(20)}, "b": {f"c{i}": [T, T] for i in range(20)}}
    report = synthetic_report(arms, dict.fromkeys(arms["a"], "positive"), epochs=2)
    assert "mean per-case difference +1.000" in headline(report)[0]
    assert "Mean per-case difference" in render_markdown(report)


# --- 3. missing answers ---------------------------------------------------------------------------------------------


def test_3_pass_hat_k_is_over_answered_epochs_as_every_other_statistic():
    summary = summarize_arm({"a": [T, N, T]}, {"a": "positive"}, seed=0)
    assert (summary.recall.passed, summary.recall.total) == (2, 2)
    assert (summary.pass_at_k.all.passed, summary.pass_at_k.all.total) == (1, 1)
    assert (summary.pass_hat_k.all.passed, summary.pass_hat_k.all.total) == (1, 1)
    assert (summary.answered, summary.unanswered) == (2, 1)


def test_3_missing_rates_that_differ_beyond_chance_refuse_a_verdict():
    control = {f"c{i}": [F] * 5 for i in range(32)}
    treatment = {f"c{i}": [T, T, T, N, N] for i in range(32)}
    result = compare_arms(control, treatment, kinds_of(control), seed=0)
    assert result.p_value < 1e-9  # the test alone is sure
    assert (result.missing.control_missing, result.missing.treatment_missing) == (0, 64)
    assert result.missing.p_value < 0.05 and result.verdict == "no verdict"
    # a few missing answers on both sides, at rates chance explains, leave the verdict alone
    control["c0"], treatment["c1"] = [F, F, F, F, N], [T, T, T, T, N]
    treatment = {case: [T] * 5 for case in treatment} | {"c1": [T, T, T, T, N]}
    assert compare_arms(control, treatment, kinds_of(control), seed=0).verdict == "better"


def test_3_a_case_without_an_answered_epoch_in_one_arm_refuses_a_verdict():
    control = {f"c{i}": [F] * 3 for i in range(20)}
    treatment = {f"c{i}": [T] * 3 for i in range(20)} | {"c0": [N, N, N]}
    result = compare_arms(control, treatment, kinds_of(control), seed=0)
    assert result.verdict == "no verdict"
    assert "1 case(s) have no answered epoch in one arm (c0)" in result.verdict_text


def test_3_fisher_exact_against_hand_counts():
    # [[1, 9], [11, 3]]: the classic tea-tasting-like table; two-sided p from the hypergeometric weights
    assert fisher_exact(1, 9, 11, 3) == pytest.approx(0.002759, abs=1e-6)
    assert fisher_exact(0, 10, 0, 10) == 1.0 and fisher_exact(3, 7, 3, 7) == 1.0


def test_3_a_report_with_missing_answers_is_partial_and_shows_answered_and_unanswered_per_arm():
    cases = {f"c{i}": [T, F, T] for i in range(4)}
    arms = {"a": cases, "b": cases | {"c0": [T, N, N]}}
    report = synthetic_report(arms, dict.fromkeys(cases, "positive"), epochs=3)
    assert report.partial
    b = report.arms[1]
    assert (b.summary.answered, b.unanswered, b.infrastructureFailures) == (10, 2, 2)
    md = render_markdown(report)
    assert "Partial: 2 of 24 (case, epoch) answers have no outcome (2 infra failures, 0 missing)" in md
    assert "| b | " in md and "| 10 / 2 |" in md and "| 0/12 / 2/12 |" in md
    assert headline(report)[0].endswith("; unanswered (case, epoch) answers: control 0/12, treatment 2/12")


# --- 4. several treatment arms ----------------------------------------------------------------------------------


def test_4_holm_adjusts_across_treatment_arms_and_both_p_values_are_shown():
    control = {f"c{i}": [F] for i in range(8)}
    treatments = {
        "all": {case: [T] for case in control},  # p = 2/256
        "six": {case: [T] if index < 6 else [F] for index, case in enumerate(control)},  # p = 2/64
        "none": dict(control),  # p = 1
    }
    results = compare_treatments(control, treatments, kinds_of(control), seed=0)
    assert {name: r.p_value for name, r in results.items()} == {"all": 2 / 256, "six": 2 / 64, "none": 1.0}
    assert results["all"].p_adjusted == pytest.approx(3 * 2 / 256) and results["all"].verdict == "better"
    assert (
        results["six"].p_adjusted == pytest.approx(2 * 2 / 64) and results["six"].verdict == "no detectable difference"
    )
    assert results["none"].p_adjusted == 1.0
    assert "Holm-adjusted 0.0625 over 3 treatment arms" in results["six"].explanation
    assert holm({"x": 0.01, "y": 0.04, "z": 0.03}) == pytest.approx({"x": 0.03, "y": 0.06, "z": 0.06})

    report = synthetic_report({"ctl": control, **treatments}, kinds_of(control), epochs=1)
    md = render_markdown(report)
    assert "| six | **no detectable difference** |" in md and "0.0625 (Holm over 3 treatment arms)" in md


# --- 5. no zero-width interval, the method where the number is -----------------------------------------------------


def test_5_all_cases_passing_gives_a_wilson_interval_of_nonzero_width():
    arm = {f"c{i}": [T] * 5 for i in range(32)}
    interval = summarize_arm(arm, kinds_of(arm), seed=0).recall.interval
    assert interval.low < interval.high == 1.0 and interval.low == pytest.approx(0.8928, abs=1e-3)
    assert interval.method == "Wilson score interval over 32 cases (the bootstrap has no spread here)"
    assert interval.reliable


def test_5_no_case_moving_gives_a_nonzero_width_difference_interval():
    arm = {f"c{i}": [T, F] for i in range(32)}
    difference = compare_arms(arm, arm, kinds_of(arm), seed=0).recall
    assert difference.difference == 0 and difference.interval.low < 0 < difference.interval.high
    assert difference.interval.method.startswith("Wilson score interval over 32 cases")


def test_5_fewer_than_fifteen_cases_of_a_kind_are_marked_unreliable_where_shown():
    arms = {"a": {f"c{i}": [T, F, i % 2 == 0] for i in range(8)}, "b": {f"c{i}": [T, T, T] for i in range(8)}}
    report = synthetic_report(arms, dict.fromkeys(arms["a"], "positive"), epochs=3)
    assert not report.arms[0].summary.recall.interval.reliable
    md = render_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| a (control) |"))
    assert "percentile cluster bootstrap over 8 cases, 2,000 resamples; unreliable: fewer than 15 cases" in row
    assert " 1.000 to 1.000" not in md and "CI 1.000–1.000" not in md


# --- 6. peeking ----------------------------------------------------------------------------------------------------


def test_6_earlier_reports_with_fewer_epochs_are_looks_and_an_unplanned_test_says_so():
    previous = {
        "reportId": "r2",
        "createdAt": "t2",
        "epochs": 2,
        "earlierLooks": [{"reportId": "r1", "createdAt": "t1", "epochs": 1}],
    }
    looks = earlier_looks(previous, 3)
    assert [(look.reportId, look.epochs) for look in looks] == [("r1", 1), ("r2", 2)]
    assert earlier_looks(previous, 2) == [Look(reportId="r1", createdAt="t1", epochs=1)]  # a rerun is no new look
    assert earlier_looks("not a report", 3) == []
    unplanned = sequential_plan(None, looks, 0.05)
    assert (unplanned.look, unplanned.planned) == (3, False) and "not planned in advance" in unplanned.note


def test_6_looks_in_the_file_spend_alpha_by_obrien_fleming_and_refuse_beyond_the_plan():
    shares = [obrien_fleming(0.05, look, 5) for look in range(1, 6)]
    assert sum(shares) == pytest.approx(0.05) and shares == sorted(shares) and shares[0] < 1e-4
    first = sequential_plan(5, [], 0.05)
    assert first.planned and first.alphaUsed == pytest.approx(shares[0])
    arms = {"a": {f"c{i}": [F] for i in range(20)}, "b": {f"c{i}": [T] for i in range(20)}}
    kinds = dict.fromkeys(arms["a"], "positive")
    early = synthetic_report(arms, kinds, epochs=1, looks=2)
    assert early.comparisons[0].result.alpha_used == pytest.approx(obrien_fleming(0.05, 1, 2))
    looks = [Look(reportId="x", createdAt="t", epochs=1), Look(reportId="y", createdAt="t", epochs=1)]
    beyond = synthetic_report(arms, kinds, epochs=1, looks=2, earlier=looks)
    assert beyond.comparisons[0].result.verdict == "no verdict" and "beyond the plan" in beyond.sequential.note


def test_6_adding_epochs_after_a_report_records_the_earlier_look(tmp_path, capsys):
    demo = REPO / "evaluation" / "demo-corpus"
    file = tmp_path / "peek.yaml"
    out = tmp_path / "out"
    for epochs in (1, 2):
        file.write_text(
            f"name: peek\nepochs: {epochs}\ndefaults:\n  corpus: {demo}\n  adapter: baseline\narms:\n"
            "  - name: baseline\n  - name: oracle\n    adapter: oracle\n",
            encoding="utf-8",
        )
        code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out)
        assert code == 0, lines + err
    report = json.loads((out / "experiments" / "peek" / "report.json").read_text(encoding="utf-8"))
    assert [look["epochs"] for look in report["earlierLooks"]] == [1]
    assert report["sequential"]["planned"] is False
    md = (out / "experiments" / "peek" / "report.md").read_text(encoding="utf-8")
    assert "## Earlier looks" in md and "not planned in advance" in md


# --- 7. planning ----------------------------------------------------------------------------------------------------


def test_7_plan_prints_the_power_of_each_design_and_the_smallest_that_reaches_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(power, "SIMULATIONS", 60)
    monkeypatch.setattr(power, "CASE_COUNTS", (8, 32))
    monkeypatch.setattr(power, "EPOCH_COUNTS", (5,))
    file = REPO / "evaluation" / "experiments" / "demo.yaml"
    code, lines, err = run_cli(capsys, "experiment", "plan", file, "--effect", "0.2", "--out", tmp_path / "out")
    assert code == 0, lines + err
    assert lines[0] == "Plan for experiment demo: a mean per-case difference of +0.2, power 0.8, alpha 0.05"
    assert lines[1].startswith("Control pass rates: no report yet: every case assumed to pass half the time")
    assert lines[2] == "Power (share of 60 seeded simulated experiments whose verdict is 'better'):"
    assert re.fullmatch(r"Smallest design: 32 cases x 5 epochs \(power 0\.\d\d, 160 answers per arm\)", lines[-1])
    again = run_cli(capsys, "experiment", "plan", file, "--effect", "0.2", "--out", tmp_path / "out")[1]
    assert again == lines  # seeded


@pytest.mark.parametrize(("flags", "message"), [(["--effect", "1.5"], "--effect: must lie strictly between 0 and 1")])
def test_7_plan_refuses_an_effect_outside_0_to_1_in_one_line(tmp_path, capsys, flags, message):
    file = REPO / "evaluation" / "experiments" / "demo.yaml"
    code, lines, err = run_cli(capsys, "experiment", "plan", file, *flags, "--out", tmp_path / "out")
    assert code == 2 and len(err) == 1 and message in err[0]


def test_7_plan_uses_the_control_pass_rates_of_an_existing_report():
    from bceval.steps.experiment_report import control_base_rates

    report = {
        "cases": [
            {"kind": "positive", "outcomes": {"ctl": [True, False, None]}},
            {"kind": "clean", "outcomes": {"ctl": [None]}},
        ]
    }
    assert control_base_rates(report, "ctl") == [power.BaseRate("positive", 0.5)]
    assert power.shifted([0.9, 0.1], 0.2) == pytest.approx([1.0, 0.4])  # clipped at 1, so the rest moves more
    assert not power.reachable([power.BaseRate("positive", 0.95)], 0.1)


# --- 8. words and units --------------------------------------------------------------------------------------------


def test_8_k_is_labelled_counts_say_what_they_count_and_infra_failures_are_named():
    arms = {"a": {"p": [T, F, T], "c": [T, T, T]}, "b": {"p": [T, T, T], "c": [T, T, F]}}
    report = synthetic_report(arms, {"p": "positive", "c": "clean"}, epochs=3)
    md = render_markdown(report)
    assert "pass@3 (cases, positive and clean together)" in md and "pass^3 (cases, positive and clean together)" in md
    assert "| Infra failures |" in md and "| Failed |" not in md
    assert "(2/3 answers)" in md  # recall of a: answers, not cases
    assert "0.500 (1/2 cases)" in md  # pass^3 of a: cases
    assert "recall 1.00 (1/1), clean 1.00 (1/1)" in md  # a per-epoch cell with its denominator
    assert "| p | positive | 2/3 (flaky) |" in md


# --- 9. the HTML has everything the Markdown has -------------------------------------------------------------------


def test_9_the_html_report_has_every_heading_table_row_and_line_of_the_markdown():
    arms = {
        "a": {f"p{i}": [T, F] for i in range(4)} | {"c": [T, T]},
        "b": {f"p{i}": [T, T] for i in range(4)} | {"c": [T, N]},
        "z": {f"p{i}": [F, F] for i in range(4)} | {"c": [T, T]},
    }
    report = synthetic_report(arms, {**{f"p{i}": "positive" for i in range(4)}, "c": "clean"}, epochs=2)
    html = unescape(re.sub(r"<[^>]+>", "\n", render_html(report)))
    html_lines = {line.strip() for line in html.splitlines()}
    blocks = document(report)
    kinds = {block.kind for block in blocks}
    assert {"h1", "h2", "list", "para", "table"} <= kinds
    for block in blocks:
        for text in (block.text, *block.items, *block.header):
            assert not text or text in html_lines, text
        for row in block.rows:
            for cell in row:
                shown = cell if isinstance(cell, str) else cell.text
                assert shown.strip("*") in html or shown in html, shown
    for heading in ("Against the control", "Per epoch", "Flaky cases", "Method", "Cases"):
        assert f"## {heading}" in render_markdown(report) and heading in html_lines
    assert 'title="epoch 2"' in render_html(report)


def test_9_text_from_results_is_escaped_in_both_formats():
    arms = {"a": {"<b>|x": [T]}, "b": {"<b>|x": [F]}}
    report = synthetic_report(arms, {"<b>|x": "positive"}, epochs=1)
    assert "<b>" not in render_html(report) and "&lt;b&gt;|x" in render_html(report)
    assert "| <b>\\|x | positive |" in render_markdown(report)


def test_publishing_a_report_of_an_older_schema_is_one_line(tmp_path, capsys):
    file = REPO / "evaluation" / "experiments" / "demo.yaml"
    report = tmp_path / "out" / "experiments" / "demo" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text('{"schemaVersion": 1, "name": "demo"}', encoding="utf-8")
    code, _, err = run_cli(
        capsys, "experiment", "publish", file, "--out", tmp_path / "out", "--page", tmp_path / "p.md"
    )
    assert code == 2 and err == [
        f"bceval: {report}: written with report schema 1, this bceval writes 2; run bceval experiment report again"
    ]
    assert not (tmp_path / "p.md").exists()
