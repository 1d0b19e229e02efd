"""Reading an experiment's runs for its report: the cases each variant recorded, and every (arm, epoch, case)
outcome from the result files (an evaluator answering case by case), whole runs (an evaluator whose unit is a run)
and transcripts on disk; the report itself is `bceval.experiment.report_model`'s."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.evaluators.base import RUN, Evaluator
from bceval.evaluators.registry import DEFAULT, evaluator
from bceval.experiment import power as simulation  # its SIMULATIONS read when used (the tests lower it)
from bceval.experiment.plan import ArmPlan, Plan, arm_settings
from bceval.experiment.power import BaseRate, power_table, reachable, smallest
from bceval.experiment.report_model import (
    ArmOutcomes,
    CaseOutcome,
    EpochOutcomes,
    ExperimentReport,
    build_report,
    earlier_looks,
)
from bceval.jsonio import read_json_or_none, read_regular_text
from bceval.layout import BuildDir, RunDir, run_entries
from bceval.runs.selection import select_cases
from bceval.steps.budget import experiment_ledger
from bceval.steps.scoring import corpus_article

if TYPE_CHECKING:  # annotations only: the frame reaches the review evaluator through its plugin
    from bceval.evaluators.review.cases import ReviewCase


def variant_cases(settings: Settings) -> tuple[list[ReviewCase], dict[str, float]]:
    """The cases (and thresholds) an arm's prepare variant recorded; none before it was prepared (the graph's
    task generators run for `doit list` too, before any variant is)."""
    try:
        return evaluator(DEFAULT).recorded_plan(settings)
    except OSError:
        return [], {}


def selected_cases(plan: Plan, settings: Settings) -> dict[str, list[ReviewCase]]:
    """Per arm, the cases of its variant that the experiment's `cases` and `k` select (all without them)."""
    experiment = plan.experiment
    chosen: dict[str, list[ReviewCase]] = {}
    for arm in plan.arms:
        if arm.evaluated_by.traits.unit == RUN:  # a whole run answers its whole manifest
            chosen[arm.name] = []
            continue
        cases, _ = variant_cases(arm_settings(plan, arm, settings, 1))
        try:
            picked = select_cases(cases, tuple(experiment.cases), tuple(experiment.k), None)
        except BcevalError as exc:
            raise BcevalError(f"{plan.source or experiment.name}: arm '{arm.name}': {exc}") from None
        chosen[arm.name] = picked if picked is not None else cases
    return chosen


def review_outcomes(plan: Plan, settings: Settings, arm: ArmPlan, wanted_ids: list[str]) -> ArmOutcomes:
    """A review arm: each epoch's run judged from its result files."""
    judge = arm.evaluated_by
    cases, thresholds = variant_cases(arm_settings(plan, arm, settings, 1))
    wanted_set = set(wanted_ids)
    wanted = [case for case in cases if case.id in wanted_set]
    epochs = []
    for epoch in range(1, plan.experiment.epochs + 1):
        run = arm_settings(plan, arm, settings, epoch)
        try:
            files, infra = run_entries(run.results_dir)
        except BcevalError:  # no results folder yet
            files, infra = [], []
        article = corpus_article(run.corpus)
        scored = evaluator(DEFAULT).score_files(wanted, thresholds, files, infra, run.require_read, article)
        # a case without an answer, an infrastructure failure or a reason it was not answered has no result yet
        verdicts = {v.id: v if (v.answered or v.infrastructureFailure or v.notAnswered) else None for v in scored.cases}
        run_link = run.run_dir.relative_to(plan.out).as_posix()  # once per epoch: transcripts are relative to it
        units = []
        for case in wanted:
            verdict = verdicts[case.id]
            named = (case.id, judge.model_id(case), case.domain, judge.case_kind(case))
            if verdict is None:
                units.append(CaseOutcome(*named, None, missing=True))
                continue
            units.append(
                CaseOutcome(
                    *named,
                    verdict.passed if verdict.answered else None,
                    posixpath.normpath(f"{run_link}/{verdict.transcript}") if verdict.transcript else None,
                    infra=bool(verdict.infrastructureFailure),
                    not_started=verdict.notAnswered == "budget",
                    shared=bool(verdict.sharedFrom),
                    answered=bool(verdict.answered),
                    cached=bool(verdict.cached),
                    usage=verdict.usage,
                )
            )
        epochs.append(EpochOutcomes(units))
    dialect = json.loads(
        read_regular_text(BuildDir(arm_settings(plan, arm, settings, 1).build_dir).cases, "utf-8")
    ).get("dialect")
    return ArmOutcomes([case.id for case in wanted], epochs, dialect=dialect)


def completed_run(folder: Path) -> Path | None:
    """The newest run directory under `folder` that finished (its run.json written), or None."""
    runs = sorted((path for path in folder.glob("run-*") if RunDir(path).record.is_file()), key=lambda p: p.name)
    return runs[-1] if runs else None


def run_outcomes(plan: Plan, arm: ArmPlan) -> ArmOutcomes:
    """An arm whose unit is a whole run: each epoch's finished run, its cases' outcomes from the problems its
    run.json records and the evaluator's measures of its reports (a guidance run's: outcome agreement and
    cited-article recall and precision)."""
    judge: Evaluator = arm.evaluated_by  # type: ignore[assignment]  # Traits.unit == RUN
    loaded = judge.load(arm.corpus, arm.manifest)
    cases = judge.cases(loaded)
    epochs = []
    measured = False
    for epoch in range(1, plan.experiment.epochs + 1):
        found = completed_run(plan.run_folders(arm.name, epoch))
        run = RunDir(found) if found else None
        record = json.loads(read_regular_text(run.record, "utf-8")) if run else None
        passed = {o.case: o.passed for o in judge.outcomes(loaded, record["problems"] if record else [])}
        # a case the run could not judge is counted apart, never a failure: a run record may list its cases as
        # lines, where `"verdict": "error"` marks one (a record whose `cases` is a count marks none)
        listed = (record or {}).get("cases")
        errors = {
            c.get("case")
            for c in (listed if isinstance(listed, list) else [])
            if isinstance(c, dict) and c.get("verdict") == "error"
        }
        measures = judge.measures(loaded, run.results if run else None)
        measured = measures is not None
        units = []
        for case in cases:
            model_id = judge.model_id(case)
            named = (case.id, model_id, arm.evaluator, judge.case_kind(case))
            transcript = run.transcript(model_id) if run else None
            link = transcript.relative_to(plan.out).as_posix() if transcript and transcript.is_file() else None
            if record is None:
                stopped = plan.budget_stop(arm.name, epoch).is_file()  # the budget kept it from starting
                units.append(CaseOutcome(*named, None, link, missing=not stopped, not_started=stopped))
                continue
            infra = case.id in errors
            outcome = None if infra else passed[case.id]
            measure = (measures or {}).get(case.id)
            units.append(CaseOutcome(*named, outcome, link, infra=infra, answered=True, measure=measure))
        epochs.append(EpochOutcomes(units, record.get("usage") if record else None))
    return ArmOutcomes([case.id for case in cases], epochs, measured=measured)


def load_report(plan: Plan, settings: Settings, selected: dict[str, list[str]], created: str) -> ExperimentReport:
    """`selected`: per arm answering case by case, the manifest ids the experiment covers (an arm whose unit is a
    run answers its whole manifest)."""
    outcomes = {}
    # an unreadable last report is none (no earlier look is known): a broken file must not stop a new report
    earlier = earlier_looks(read_json_or_none(plan.folder.report("json")), plan.experiment.epochs)
    for arm in plan.arms:
        if arm.evaluated_by.traits.unit == RUN:
            outcomes[arm.name] = run_outcomes(plan, arm)
        else:
            outcomes[arm.name] = review_outcomes(plan, settings, arm, selected[arm.name])
    budget = experiment_ledger(plan, settings)
    spent = None if budget is None else (budget.limit, budget.known())
    return build_report(plan, outcomes, created, earlier, spent)


def control_base_rates(report: Any, control: str) -> list[Any]:
    """Per case of an earlier report, the control's kind and pass rate over its answered epochs (cases it never
    answered are left out); [] when there is no usable report."""
    if not isinstance(report, dict) or not isinstance(report.get("cases"), list):
        return []
    base = []
    for line in report["cases"]:
        outcomes = line.get("outcomes", {}).get(control) if isinstance(line, dict) else None
        answered = [entry for entry in outcomes or [] if isinstance(entry, bool)]
        if answered and line.get("kind") in ("positive", "clean"):
            base.append(BaseRate(line["kind"], sum(answered) / len(answered)))
    return base


def plan_experiment(plan: Plan, effect: float, power: float) -> None:
    """`bceval experiment plan`: the power of each design for `effect`, and the smallest that reaches `power`."""
    for flag, value in (("--effect", effect), ("--power", power)):
        if not 0 < value < 1:
            raise BcevalError(f"{flag}: must lie strictly between 0 and 1, got {value:g}")
    experiment = plan.experiment
    path = plan.folder.report("json")
    base = control_base_rates(read_json_or_none(path), plan.control.name)
    if base:
        source = f"the control's per-case pass rates in {path} ({len(base)} cases of arm '{plan.control.name}')"
    else:
        base = [BaseRate("positive", 0.5), BaseRate("clean", 0.5)]
        source = "no report yet: every case assumed to pass half the time (the noisiest a case can be)"
    if not reachable(base, effect):
        raise BcevalError(
            f"--effect: the control's cases cannot pass {effect:g} more often on average (they pass "
            "too often already); ask for a smaller difference"
        )
    arms = len(plan.arms) - 1
    print(
        f"Plan for experiment {experiment.name}: a mean per-case difference of +{effect:g}, power {power:g}, "
        f"alpha {experiment.alpha:g}" + (f" (held to alpha / {arms}: {arms} treatment arms)" if arms > 1 else "")
    )
    print(f"Control pass rates: {source}")
    cells = power_table(
        base, effect=effect, power=power, alpha=experiment.alpha, treatment_arms=arms, seed=experiment.seed
    )
    print(f"Power (share of {simulation.SIMULATIONS} seeded simulated experiments whose verdict is 'better'):")
    print("  epochs  cases  power")
    for cell in cells:
        print(f"  {cell.epochs:>6}  {cell.cases:>5}  {cell.power:.2f}")
    best = smallest(cells, power)
    if best is None:
        top = max(cells, key=lambda cell: cell.power)
        print(
            f"No design here reaches power {power:g}; the best is {top.cases} cases x {top.epochs} epochs "
            f"({top.power:.2f}): look for a larger difference or more cases"
        )
    else:
        print(
            f"Smallest design: {best.cases} cases x {best.epochs} epochs (power {best.power:.2f}, "
            f"{best.cases * best.epochs} answers per arm)"
        )
