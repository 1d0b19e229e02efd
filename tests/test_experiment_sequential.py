"""The sequential design (issue 49): its boundaries, its repeated confidence intervals, its looks, and its
calibration on seeded simulated experiments (32 cases, no effect: the adaptive type-I error)."""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
from statistics import NormalDist

import pytest
from agents import clean_environment
from cliutil import run_cli
from conftest import DEMO_CORPUS
from guidance_util import git

from bceval.experiment.power import BaseRate
from bceval.experiment.sequential import Design, boundaries, interval, look, spent, statistic
from bceval.experiment.sequential_report import _verdict
from bceval.experiment.simulate import World, adaptive, simulate
from bceval.experiment.stats import agreeing, compare_arms

CASES = 16  # the demo corpus
DESIGN = Design(alpha=0.05, power=0.8, effect=0.2, max_epochs=4)


def test_one_look_is_the_fixed_test_and_spending_reaches_its_level_at_the_last_look():
    assert boundaries(0.05, 1, -4.0, True)[0] == pytest.approx(NormalDist().inv_cdf(0.975), abs=1e-6)
    assert boundaries(0.2, 1, 1.0, False)[0] == pytest.approx(NormalDist().inv_cdf(0.8), abs=1e-6)
    assert spent(0.05, 1.0, -4.0) == 0.05 and spent(0.05, 0.5, -4.0) < 0.05 * 0.2
    efficacy = boundaries(0.05, 5, -4.0, True)
    assert list(efficacy) == sorted(efficacy, reverse=True) and 2.0 < efficacy[-1] < 2.05  # near O'Brien-Fleming
    pocock = boundaries(0.05, 3, 1.0, True)
    assert max(pocock) - min(pocock) < 0.05 and 2.25 < pocock[0] < 2.32  # gamma 1: near Pocock's 2.29


def test_the_boundaries_hold_the_chance_of_any_crossing_to_alpha():
    rng = random.Random(7)
    efficacy = boundaries(0.05, 4, -4.0, True)
    crossed = 0
    for _ in range(20000):
        b = 0.0
        for k in range(1, 5):
            b += rng.gauss(0, 0.5)  # Brownian motion at t = k / 4
            if abs(b / math.sqrt(k / 4)) >= efficacy[k - 1]:
                crossed += 1
                break
    assert crossed / 20000 == pytest.approx(0.05, abs=0.006)


def test_the_repeated_interval_excludes_zero_exactly_when_the_statistic_crosses():
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(2, 40)
        differences = [rng.choice([-1, -0.5, 0, 0, 0.5, 1, 1]) for _ in range(n)]
        critical = rng.uniform(1.5, 4.0)
        low, high = interval(differences, critical)
        assert (low > 0 or high < 0) == (abs(statistic(differences)) > critical + 1e-12 and n > critical**2)
    assert interval([1.0] * 4, 2.5) == (-1.0, 1.0)  # 4 cases cannot say anything at |Z| 2.5


def test_identical_arms_stop_for_futility_and_a_clear_difference_for_efficacy():
    same = look(DESIGN, 1, {"b": [0.0] * 32})
    assert same.reason == "futility" and same.arms[0].decision == "futile" and same.arms[0].interval == (0.0, 0.0)
    clear = look(DESIGN, 2, {"b": [1.0] * 16 + [0.0] * 16})
    assert clear.reason == "efficacy" and clear.arms[0].decision == "better" and clear.arms[0].interval[0] > 0
    unclear = look(DESIGN, 1, {"b": [1.0, -1.0, 0.0, 0.5] * 8})
    assert unclear.reason is None and look(DESIGN, 4, {"b": [1.0, -1.0, 0.0, 0.5] * 8}).reason == "max"


def test_holm_holds_the_second_arm_to_the_whole_alpha_only_after_the_first_crossed():
    arms = {"b": [1.0] * 10 + [0.0] * 22, "c": [-1.0] * 12 + [0.0] * 20}
    result = look(DESIGN, 3, arms)
    by_name = {arm.name: arm for arm in result.arms}
    assert by_name["c"].boundary > by_name["b"].boundary  # c has the larger |Z|: held to alpha / 2
    assert [arm.name for arm in result.arms] == ["b", "c"]
    rng = random.Random(5)
    for _ in range(300):  # whatever Holm decides, no arm's verdict contradicts its repeated interval
        arms = {name: [rng.choice([-1.0, 0.0, 0.0, 1.0, 0.5]) for _ in range(24)] for name in "bcd"}
        for arm in look(DESIGN, rng.randint(1, 4), arms).arms:
            low, high = arm.interval
            assert (arm.decision in ("better", "worse")) == (low > 0 or high < 0), arm


def test_the_adaptive_type_one_error_stays_at_alpha_over_two_thousand_seeded_experiments():
    """Calibration (issue 49's done-means): 32 cases, control rates 0.3, 0.5, 0.7, no effect."""
    for rate in (0.3, 0.5, 0.7):
        world = World([BaseRate("positive", rate)], 32, 1, seed=0)
        decisions = [adaptive(world, DESIGN, 0.0, run)[1] for run in range(2000)]
        type_one = sum(decision != "none" for decision in decisions) / 2000
        assert type_one <= 0.06, (rate, type_one)  # measured: 0.018 / 0.0185 / 0.0145


def test_a_fixed_headline_never_contradicts_its_interval_four_cases_are_too_few_to_say():
    control, treatment = {f"c{i}": [False] for i in range(4)}, {f"c{i}": [True] for i in range(4)}
    before = compare_arms(control, treatment, dict.fromkeys(control, "positive"), seed=0)
    assert before.verdict == "no detectable difference" and before.overall.interval.low > 0  # the contradiction
    after = agreeing(before)
    assert after.verdict == "no verdict" and after.verdict_text == (
        "too few cases to say: the test finds no difference (p = 0.125) but the 4-case 95% interval "
        "[+0.020, +1.000] excludes 0"
    )
    many = {f"c{i}": [True] for i in range(16)}
    clear = compare_arms(dict.fromkeys(many, [False]), many, dict.fromkeys(many, "positive"), seed=0)
    assert agreeing(clear) == clear and clear.verdict == "better"


def test_simulate_is_deterministic_and_reports_both_designs():
    world = World([BaseRate("positive", 0.5)], 32, 1, seed=0)
    first = simulate(world, DESIGN, 60)
    assert json.dumps(first) == json.dumps(simulate(world, DESIGN, 60))
    assert set(first["fixed"]) >= {"answers", "power", "typeI"}
    assert set(first["adaptive"]) >= {"answersNull", "answersEffect", "power", "typeI"}
    assert first["adaptive"]["answersNull"] < first["fixed"]["answers"]


# --- live: scripted command agents answering epoch by epoch -----------------------------------------------------


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    clean_environment(monkeypatch)


LAZY = """#!{python}
import json, sys
request = json.loads(open(next(a for a in sys.argv[1:] if a.endswith(".json"))).read()) if any(
    a.endswith(".json") for a in sys.argv[1:]) else None
if request is None:
    text = sys.stdin.read()
    start = text.index("\\n", text.index("=== request ")) + 1
    request = json.loads(text[start:text.index("\\n=== file ", start)])
print(json.dumps({"cases": [{"id": request["cases"][0]["id"], "findings": []}]}))
"""


def sequential_file(tmp_path, name: str, control: str, treatment: str, stop: str = "decided"):
    text = (
        f"name: {name}\nstop:\n  when: {stop}\n  maxEpochs: 3\ndefaults:\n  corpus: {DEMO_CORPUS}\n"
        f"  adapter: command\narms:\n  - name: a\n    command: {control}\n  - name: b\n    command: {treatment}\n"
    )
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_real_difference_stops_early_for_efficacy_and_a_rerun_answers_nothing_new(agent, tmp_path, capsys):
    agent.write_script("lazy-agent", LAZY.replace("{python}", sys.executable))
    out = tmp_path / "out"
    file = sequential_file(tmp_path, "clear", "lazy-agent", "fake-agent --arm b")
    code, lines, _ = run_cli(capsys, "experiment", "run", file, "--out", out)
    assert code == 0, lines
    report = json.loads((out / "experiments" / "clear" / "report.json").read_text(encoding="utf-8"))
    stopped = report["sequential"]["stopped"]
    assert (stopped["look"], stopped["reason"], stopped["answers"]) == (1, "efficacy", 2 * CASES)
    assert stopped["arms"][0]["decision"] == "better" and stopped["arms"][0]["interval"][0] > 0
    assert report["epochs"] == 1 and report["comparisons"][0]["result"]["verdict"] == "better"
    assert "better (efficacy at look 1 of 3)" in lines[0] and "look 1 of 3, efficacy" in lines[1]
    calls = len(agent.calls())
    assert calls == CASES  # the lazy agent logs nothing; the fake one answered one epoch of three
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[:2] == (0, lines)
    assert len(agent.calls()) == calls
    # a longer design afterwards would hold look 1 to a stricter boundary: the stop it was decided under stands
    file.write_text(file.read_text(encoding="utf-8").replace("maxEpochs: 3", "maxEpochs: 12"), encoding="utf-8")
    assert run_cli(capsys, "experiment", "run", file, "--out", out)[0] == 0
    report = json.loads((out / "experiments" / "clear" / "report.json").read_text(encoding="utf-8"))
    assert report["sequential"]["stopped"]["reason"] == "efficacy" and len(agent.calls()) == calls
    assert report["sequential"]["note"].endswith("maxEpochs is 12 now, but the stop stands")


def test_identical_agents_stop_at_the_first_look_for_futility(agent, tmp_path, capsys):
    out = tmp_path / "out"
    file = sequential_file(tmp_path, "same", "fake-agent --arm a", "fake-agent --arm b", stop="never")
    code, lines, _ = run_cli(capsys, "experiment", "run", file, "--out", out, "--until-decided")
    assert code == 0, lines
    report = json.loads((out / "experiments" / "same" / "report.json").read_text(encoding="utf-8"))
    stopped = report["sequential"]["stopped"]
    assert (stopped["look"], stopped["reason"], stopped["answers"]) == (1, "futility", 2 * CASES)
    assert stopped["arms"][0]["interval"] == [0.0, 0.0] and len(agent.calls()) == 2 * CASES
    assert "no difference of 0.2 or more (futility at look 1 of 3)" in lines[0]


def test_ab_until_decided_writes_its_stop_into_the_file_and_stops_for_futility(agent, tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(DEMO_CORPUS, root / "corpus")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "commit", "-q", "--allow-empty", "-m", "nothing changed")
    base, head = git(root, "rev-parse", "HEAD~1"), git(root, "rev-parse", "HEAD")
    out = tmp_path / "out"
    args = ["experiment", "ab", "--base", base, "--head", head, "--corpus", root / "corpus", "--out", out]
    code, lines, err = run_cli(capsys, *args, "--adapter", "command", "--command", "fake-agent", "--until-decided")
    assert code == 0, lines + err
    folder = out / "experiments" / f"ab-{base}-{head}"[:100]
    assert "when: decided" in (folder / "experiment.yaml").read_text(encoding="utf-8")
    stopped = json.loads((folder / "report.json").read_text(encoding="utf-8"))["sequential"]["stopped"]
    assert (stopped["look"], stopped["reason"]) == (1, "futility") and "look 1 of 8, futility" in lines[1]


def test_a_budget_stop_continues_the_same_design_once_the_budget_allows(agent, tmp_path, capsys):
    agent.mode("json")  # 0.0125 USD per answer, as the envelope reports it
    out = tmp_path / "out"
    file = sequential_file(tmp_path, "paid", "fake-agent --model m1", "fake-agent --model m2")
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("stop:", "maxCost: 0.2\nstop:"), encoding="utf-8")
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--retry-wait", "0")
    assert code in (0, 1), lines + err
    stopped = json.loads((out / "experiments" / "paid" / "report.json").read_text())["sequential"]["stopped"]
    assert (stopped["look"], stopped["reason"]) == (0, "budget") and len(agent.calls()) == 16
    assert any("look 0 of 3, the budget; raise maxCost to continue the same design" in line for line in lines)
    file.write_text(text.replace("stop:", "maxCost: 1\nstop:"), encoding="utf-8")
    code, lines, err = run_cli(capsys, "experiment", "run", file, "--out", out, "--retry-wait", "0")
    assert code == 0, lines + err
    stopped = json.loads((out / "experiments" / "paid" / "report.json").read_text())["sequential"]["stopped"]
    assert (stopped["look"], stopped["reason"], stopped["answers"]) == (1, "futility", 2 * CASES)
    assert stopped["costUsd"] == pytest.approx(0.4) and stopped["tokens"] > 0 and len(agent.calls()) == 2 * CASES


def test_a_sequential_improvement_bought_with_harm_in_one_kind_is_mixed():
    kinds = {f"p{i}": "positive" for i in range(24)} | {f"c{i}": "clean" for i in range(8)}
    control = {case: [kind == "clean"] for case, kind in kinds.items()}
    treatment = {case: [kind == "positive"] for case, kind in kinds.items()}
    result = compare_arms(control, treatment, kinds, seed=0, resamples=50)
    arm = look(DESIGN, 2, {"b": [1.0] * 24 + [-1.0] * 8}).arms[0]
    assert arm.decision == "better"
    mixed = _verdict(result, arm, "efficacy", "look 2 of 4", 0.2)
    assert mixed.verdict == "mixed" and mixed.verdict_text.startswith("mixed: better overall, clean rate the other way")
