"""Reading an experiment's runs for its report: the cases each variant recorded, and every (arm, epoch, case)
outcome from the result files (an evaluator answering case by case), whole runs (an evaluator whose unit is a run)
and transcripts on disk; the report itself is `bceval.experiment.report_model`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.evaluators.registry import RUN, RunEvaluator
from bceval.experiment.plan import ArmPlan, Plan, arm_settings
from bceval.experiment.report_model import (
    ArmOutcomes,
    CaseOutcome,
    EpochOutcomes,
    ExperimentReport,
    build_report,
)
from bceval.layout import RunDir, infra_files, result_files
from bceval.review.cases import ReviewCase
from bceval.steps.prepare import cases_file


def variant_cases(settings: Settings) -> tuple[list[ReviewCase], dict[str, float]]:
    """The cases (and thresholds) an arm's prepare variant recorded."""
    recorded = json.loads(cases_file(settings).read_text(encoding="utf-8"))
    return [ReviewCase.from_record(case) for case in recorded["cases"]], recorded["thresholds"]


def selected_cases(plan: Plan, settings: Settings) -> dict[str, list[ReviewCase]]:
    """Per arm, the cases of its variant that the experiment's `cases` and `k` select (all without them)."""
    from bceval.runs.selection import select_cases

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
            where = plan.source or experiment.name
            raise BcevalError(f"{where}: arm '{arm.name}': {exc}") from None
        chosen[arm.name] = picked if picked is not None else cases
    return chosen


def epoch_verdicts(settings: Settings, cases: list[ReviewCase], thresholds: dict[str, float]) -> dict[str, Any]:
    """Every case of one arm in one epoch, judged from whatever results its run holds: its verdict, or None when
    there is no result yet."""
    from bceval.review.scoring import aggregate, judge_reading, read_infra_file, read_result_file

    directory = settings.results_dir
    try:
        files = result_files(directory)
    except BcevalError:
        files = []
    infra = [read_infra_file(path) for path in infra_files(directory)] if directory.is_dir() else []
    readings = [judge_reading(read_result_file(path), cases) for path in files]
    report = aggregate(cases, readings, thresholds, infra)
    return {v.id: v if (v.answered or v.infrastructureFailure) else None for v in report.cases}


def review_outcomes(plan: Plan, settings: Settings, arm: ArmPlan, wanted_ids: list[str]) -> ArmOutcomes:
    """A review arm: each epoch's run judged from its result files."""
    judge = arm.evaluated_by
    cases, thresholds = variant_cases(arm_settings(plan, arm, settings, 1))
    wanted = [case for case in cases if case.id in set(wanted_ids)]
    epochs = []
    for epoch in range(1, plan.experiment.epochs + 1):
        run = arm_settings(plan, arm, settings, epoch)
        verdicts = epoch_verdicts(run, wanted, thresholds)
        units = []
        for case in wanted:
            verdict = verdicts[case.id]
            kind = judge.case_kind(case)
            if verdict is None:
                units.append(CaseOutcome(case.id, judge.model_id(case), case.domain, kind, None, missing=True))
                continue
            link = None
            if verdict.transcript:
                link = (run.run_dir / verdict.transcript).relative_to(plan.out).as_posix()
            units.append(
                CaseOutcome(
                    case.id,
                    judge.model_id(case),
                    case.domain,
                    kind,
                    verdict.passed if verdict.answered else None,
                    link,
                    infra=bool(verdict.infrastructureFailure),
                    shared=bool(verdict.sharedFrom),
                    answered=bool(verdict.answered),
                    cached=bool(verdict.cached),
                    usage=verdict.usage,
                )
            )
        epochs.append(EpochOutcomes(units))
    dialect = json.loads(cases_file(arm_settings(plan, arm, settings, 1)).read_text(encoding="utf-8")).get("dialect")
    return ArmOutcomes([case.id for case in wanted], epochs, dialect=dialect)


def completed_run(folder: Path) -> Path | None:
    """The newest run directory under `folder` that finished (its run.json written), or None."""
    runs = sorted((path for path in folder.glob("run-*") if RunDir(path).record.is_file()), key=lambda p: p.name)
    return runs[-1] if runs else None


def run_outcomes(plan: Plan, arm: ArmPlan) -> ArmOutcomes:
    """An arm whose unit is a whole run: each epoch's finished run, its cases' outcomes from the problems its
    run.json records and the evaluator's measures of its reports (a guidance run's: outcome agreement and
    cited-article recall and precision)."""
    judge: RunEvaluator = arm.evaluated_by  # type: ignore[assignment]  # Traits.unit == RUN
    loaded = judge.load(arm.corpus, arm.manifest)
    cases = judge.cases(loaded)
    epochs = []
    measured = False
    for epoch in range(1, plan.experiment.epochs + 1):
        found = completed_run(plan.run_folders(arm.name, epoch))
        run = RunDir(found) if found else None
        record = json.loads(run.record.read_text(encoding="utf-8")) if run else None
        passed = {o.case: o.passed for o in judge.outcomes(loaded, record["problems"] if record else [])}
        measures = judge.measures(loaded, run.results if run else None)
        measured = measures is not None
        units = []
        for case in cases:
            kind = judge.case_kind(case)
            model_id = judge.model_id(case)
            transcript = run.transcript(model_id) if run else None
            link = transcript.relative_to(plan.out).as_posix() if transcript and transcript.is_file() else None
            if record is None:
                units.append(CaseOutcome(case.id, model_id, arm.evaluator, kind, None, link, missing=True))
                continue
            measure = (measures or {}).get(case.id)
            units.append(
                CaseOutcome(
                    case.id, model_id, arm.evaluator, kind, passed[case.id], link, answered=True, measure=measure
                )
            )
        epochs.append(EpochOutcomes(units, record.get("usage") if record else None))
    return ArmOutcomes([case.id for case in cases], epochs, measured=measured)


def load_report(plan: Plan, settings: Settings, selected: dict[str, list[str]], created: str) -> ExperimentReport:
    """`selected`: per arm answering case by case, the manifest ids the experiment covers (an arm whose unit is a
    run answers its whole manifest)."""
    outcomes = {}
    for arm in plan.arms:
        if arm.evaluated_by.traits.unit == RUN:
            outcomes[arm.name] = run_outcomes(plan, arm)
        else:
            outcomes[arm.name] = review_outcomes(plan, settings, arm, selected[arm.name])
    return build_report(plan, outcomes, created)
