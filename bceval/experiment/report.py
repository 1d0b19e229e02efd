"""The experiment report: what each arm scored over its epochs, how sure that is, and whether a treatment
arm did better than the control case by case (`out/experiments/<name>/report.{json,md,html}`)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from html import escape
from typing import Any, Literal

from pydantic import Field

from bceval.config import Settings
from bceval.experiment.plan import Plan, arm_settings
from bceval.experiment.stats import ArmComparison, ArmSummary, compare_arms, summarize_arm
from bceval.models import StrictModel
from bceval.review.cases import ReviewCase
from bceval.usage import Usage

REPORT_SCHEMA_VERSION = 1


class ArmUsage(StrictModel):
    """What an arm's own answers cost (answers shared from another arm cost it nothing); null is unknown."""

    costUsd: float | None = None
    costKnown: int = Field(ge=0, description="Answers whose agent reported a cost.")
    wallSeconds: float | None = None
    agentSeconds: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None


class MeasureRate(StrictModel):
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    value: float | None


class MeasureMean(StrictModel):
    mean: float | None = Field(description="Mean over the (case, epoch) reports that could be read; null without any.")
    reports: int = Field(ge=0)


class GuidanceMeasures(StrictModel):
    """A guidance arm's reports over every epoch: the outcome the fixture expects, and what they cited."""

    outcomeAgreement: MeasureRate
    citedRecall: MeasureMean = Field(description="Required articles cited, over the required ones.")
    citedPrecision: MeasureMean = Field(description="Cited articles that are required or optional, over the cited.")


class ArmReport(StrictModel):
    name: str
    control: bool
    evaluator: str = Field(default="review", description="review, or a guidance evaluator (plan, implementation).")
    settings: dict[str, Any] = Field(description="The arm's effective settings; null where bceval's default applies.")
    corpus: str = Field(description="The folder the arm's cases were read from (an export for a ref).")
    commit: str | None = Field(description="The commit a ref named when the experiment ran.")
    variant: str = Field(description="The prepare folder, shared by arms that read the same corpus and manifest.")
    cases: int = Field(ge=0)
    answered: int = Field(ge=0, description="(case, epoch) answers asked of this arm's agent.")
    shared: int = Field(ge=0, description="Answers shared from an earlier arm that asked the identical question.")
    fromCache: int = Field(ge=0, description="Answers an earlier invocation had already paid for.")
    infrastructureFailures: int = Field(ge=0)
    missing: int = Field(ge=0, description="(case, epoch) pairs without a result yet (e.g. another shard's).")
    usage: ArmUsage
    summary: ArmSummary
    guidance: GuidanceMeasures | None = None


class ComparisonReport(StrictModel):
    arm: str
    control: str
    result: ArmComparison


class CaseLine(StrictModel):
    id: str
    modelId: str
    domain: str
    kind: Literal["positive", "clean"]
    outcomes: dict[str, list[bool | None]] = Field(description="Per arm, per epoch: passed, failed, or null.")
    transcripts: dict[str, list[str | None]] = Field(description="Per arm, per epoch, relative to the report.")


class ExperimentReport(StrictModel):
    schemaVersion: Literal[1] = REPORT_SCHEMA_VERSION
    name: str
    file: str | None
    reportId: str = Field(description="sha256 of the arms, commits and outcomes: equal experiments, equal ids.")
    createdAt: str
    epochs: int
    alpha: float
    seed: int
    differing: list[str] = Field(description="The fields in which an arm differs from the control.")
    warnings: list[str]
    arms: list[ArmReport]
    comparisons: list[ComparisonReport]
    cases: list[CaseLine]


@dataclass
class Unit:
    """One (arm, epoch, case) as the scorer saw it."""

    passed: bool | None
    verdict: Any  # bceval.review.scoring.CaseVerdict, or None when there is no result yet


def variant_cases(settings: Settings) -> tuple[list[ReviewCase], dict[str, float]]:
    """The cases (and thresholds) an arm's prepare variant recorded."""
    from bceval.steps.prepare import cases_file

    recorded = json.loads(cases_file(settings).read_text(encoding="utf-8"))
    return [ReviewCase.from_record(case) for case in recorded["cases"]], recorded["thresholds"]


def selected_cases(plan: Plan, settings: Settings) -> dict[str, list[ReviewCase]]:
    """Per arm, the cases of its variant that the experiment's `cases` and `k` select (all without them)."""
    from bceval.errors import BcevalError
    from bceval.runs.selection import select_cases

    experiment = plan.experiment
    chosen: dict[str, list[ReviewCase]] = {}
    for arm in plan.arms:
        if arm.guidance:  # a guidance run answers its whole manifest
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


def epoch_units(settings: Settings, cases: list[ReviewCase], thresholds: dict[str, float]) -> dict[str, Unit]:
    """Every case of one arm in one epoch, judged from whatever results its run holds."""
    from bceval.errors import BcevalError
    from bceval.layout import infra_files, result_files
    from bceval.review.scoring import aggregate, judge_reading, read_infra_file, read_result_file

    directory = settings.results_dir
    try:
        files = result_files(directory)
    except BcevalError:
        files = []
    infra = [read_infra_file(path) for path in infra_files(directory)] if directory.is_dir() else []
    readings = [judge_reading(read_result_file(path), cases) for path in files]
    report = aggregate(cases, readings, thresholds, infra)
    return {
        v.id: Unit(v.passed if v.answered else None, v if (v.answered or v.infrastructureFailure) else None)
        for v in report.cases
    }


@dataclass
class ArmTally:
    """What one arm's epochs add up to, before the statistics."""

    per_case: dict[str, list[bool | None]]
    counts: dict[str, int]
    usage: Usage = field(default_factory=Usage)
    cost_known: int = 0  # answers whose agent reported a cost
    guidance: GuidanceMeasures | None = None

    def add_usage(self, record: Any) -> None:
        """One answer's usage record (None or not a record: nothing is known of it)."""
        if isinstance(record, dict) and record:
            usage = Usage.from_record(record)
            self.usage = self.usage.plus(usage)
            self.cost_known += usage.costUsd is not None

    def arm_usage(self) -> ArmUsage:
        kept = ("costUsd", "wallSeconds", "agentSeconds", "inputTokens", "outputTokens")
        return ArmUsage(costKnown=self.cost_known, **{name: getattr(self.usage, name) for name in kept})


def _line(lines: dict[str, dict[str, Any]], case_id: str, model_id: str, domain: str, kind: str) -> dict[str, Any]:
    return lines.setdefault(
        case_id,
        {"id": case_id, "modelId": model_id, "domain": domain, "kind": kind, "outcomes": {}, "transcripts": {}},
    )


def review_tally(
    plan: Plan, settings: Settings, arm: Any, wanted_ids: list[str], kinds: dict[str, str], lines: dict
) -> ArmTally:
    """A review arm: each epoch's run judged from its result files."""
    cases, thresholds = variant_cases(arm_settings(plan, arm, settings, 1))
    wanted = [case for case in cases if case.id in set(wanted_ids)]
    tally = ArmTally({case.id: [] for case in wanted}, {k: 0 for k in COUNTS})
    for epoch in range(1, plan.experiment.epochs + 1):
        run = arm_settings(plan, arm, settings, epoch)
        units = epoch_units(run, wanted, thresholds)
        for case in wanted:
            unit = units[case.id]
            tally.per_case[case.id].append(unit.passed)
            kinds.setdefault(case.id, "positive" if case.expected else "clean")
            line = _line(lines, case.id, case.modelId, case.domain, kinds[case.id])
            line["outcomes"].setdefault(arm.name, []).append(unit.passed)
            verdict = unit.verdict
            link = None
            if verdict is not None and verdict.transcript:
                link = (run.run_dir / verdict.transcript).relative_to(plan.out).as_posix()
            line["transcripts"].setdefault(arm.name, []).append(link)
            if verdict is None:
                tally.counts["missing"] += 1
                continue
            if verdict.infrastructureFailure:
                tally.counts["infra"] += 1
            if verdict.sharedFrom:
                tally.counts["shared"] += 1
                continue
            if verdict.answered:
                tally.counts["answered"] += 1
                tally.counts["fromCache"] += bool(verdict.cached)
            tally.add_usage(verdict.usage)
    return tally


def guidance_tally(plan: Plan, arm: Any, kinds: dict[str, str], lines: dict) -> ArmTally:
    """A guidance arm: each epoch's finished guidance run; a case passes when scoring raised no problem about it
    (a changed knowledge checkout fails every case). Outcome agreement and cited-article recall and precision
    are read from its reports."""
    from bceval.guidance.manifest import EMPTY_OUTCOMES, load_manifest
    from bceval.guidance.scoring import case_measures
    from bceval.steps.experiment import completed_guidance_run, guidance_folder

    manifest = load_manifest(arm.corpus, arm.manifest)
    tally = ArmTally({case.id: [] for case in manifest.cases}, {k: 0 for k in COUNTS})
    agreed, recalls, precisions = [], [], []
    for epoch in range(1, plan.experiment.epochs + 1):
        run_dir = completed_guidance_run(guidance_folder(plan, arm.name, epoch))
        record = json.loads((run_dir / "run.json").read_text(encoding="utf-8")) if run_dir else None
        problems = record["problems"] if record else []
        everything_failed = any(not any(p.startswith(f"{c.id}: ") for c in manifest.cases) for p in problems)
        measures = case_measures(manifest, run_dir / "results") if run_dir else {}
        if record:
            tally.add_usage(record.get("usage"))
        for case in manifest.cases:
            passed = (
                None
                if record is None
                else not (everything_failed or any(p.startswith(f"{case.id}: ") for p in problems))
            )
            tally.per_case[case.id].append(passed)
            kinds.setdefault(case.id, "clean" if case.expected_outcome in EMPTY_OUTCOMES else "positive")
            line = _line(lines, case.id, case.hashed, arm.evaluator, kinds[case.id])
            line["outcomes"].setdefault(arm.name, []).append(passed)
            transcript = run_dir / "transcripts" / f"{case.hashed}.json" if run_dir else None
            link = transcript.relative_to(plan.out).as_posix() if transcript and transcript.is_file() else None
            line["transcripts"].setdefault(arm.name, []).append(link)
            if record is None:
                tally.counts["missing"] += 1
                continue
            tally.counts["answered"] += 1
            measure = measures.get(case.id)
            if measure is not None and measure.outcome_agrees is not None:
                agreed.append(measure.outcome_agrees)
                recalls.append(measure.recall)
                precisions.append(measure.precision)
    tally.guidance = GuidanceMeasures(
        outcomeAgreement=MeasureRate(
            passed=sum(agreed), total=len(agreed), value=sum(agreed) / len(agreed) if agreed else None
        ),
        citedRecall=MeasureMean(mean=sum(recalls) / len(recalls) if recalls else None, reports=len(recalls)),
        citedPrecision=MeasureMean(
            mean=sum(precisions) / len(precisions) if precisions else None, reports=len(precisions)
        ),
    )
    return tally


COUNTS = ("answered", "shared", "fromCache", "infra", "missing")


def build_report(plan: Plan, settings: Settings, selected: dict[str, list[str]], created: str) -> ExperimentReport:
    """`selected`: per review arm, the manifest ids the experiment covers (guidance arms run their manifest)."""
    experiment = plan.experiment
    outcomes: dict[str, dict[str, list[bool | None]]] = {}
    kinds: dict[str, str] = {}
    lines: dict[str, dict[str, Any]] = {}
    arms = []
    for arm in plan.arms:
        if arm.guidance:
            tally = guidance_tally(plan, arm, kinds, lines)
        else:
            tally = review_tally(plan, settings, arm, selected[arm.name], kinds, lines)
        outcomes[arm.name] = tally.per_case
        arms.append(
            ArmReport(
                name=arm.name,
                control=arm.control,
                evaluator=arm.evaluator,
                settings={k: v for k, v in arm.fields.items()},
                corpus=str(arm.corpus),
                commit=arm.commit,
                variant=arm.variant,
                cases=len(tally.per_case),
                answered=tally.counts["answered"],
                shared=tally.counts["shared"],
                fromCache=tally.counts["fromCache"],
                infrastructureFailures=tally.counts["infra"],
                missing=tally.counts["missing"],
                usage=tally.arm_usage(),
                summary=summarize_arm(tally.per_case, {c: kinds[c] for c in tally.per_case}, seed=experiment.seed),
                guidance=tally.guidance,
            )
        )
    control = plan.control.name
    comparisons = [
        ComparisonReport(
            arm=arm.name,
            control=control,
            result=compare_arms(
                outcomes[control],
                outcomes[arm.name],
                kinds,  # type: ignore[arg-type]
                alpha=experiment.alpha,
                seed=experiment.seed,
            ),
        )
        for arm in plan.arms[1:]
    ]
    identity = {
        "name": experiment.name,
        "arms": [(arm.name, arm.fields, arm.commit) for arm in plan.arms],
        "outcomes": outcomes,
    }
    report_id = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return ExperimentReport(
        name=experiment.name,
        file=str(plan.source) if plan.source else None,
        reportId=report_id,
        createdAt=created,
        epochs=experiment.epochs,
        alpha=experiment.alpha,
        seed=experiment.seed,
        differing=plan.differing,
        warnings=plan.warnings,
        arms=arms,
        comparisons=comparisons,
        cases=[CaseLine(**lines[key]) for key in sorted(lines, key=lambda k: (lines[k]["domain"], k))],
    )


# --- rendering ---------------------------------------------------------------------------------------------------


def _rate(rate: Any) -> str:
    if rate.value is None:
        return "n/a"
    text = f"{rate.value:.3f} ({rate.passed}/{rate.total})"
    if rate.interval is not None:
        text += f", {rate.interval.level:.0%} CI {rate.interval.low:.3f}–{rate.interval.high:.3f}"
    return text


def _difference(diff: Any) -> str:
    if diff.difference is None:
        return "n/a"
    text = f"{diff.difference:+.3f}"
    if diff.interval is not None:
        text += f" ({diff.interval.level:.0%} CI {diff.interval.low:+.3f} to {diff.interval.high:+.3f})"
    return text


def _cost(arm: ArmReport) -> str:
    if arm.usage.costUsd is None:
        return "unknown"
    known = "" if arm.usage.costKnown == arm.answered else f" ({arm.usage.costKnown} of {arm.answered} reported)"
    return f"${arm.usage.costUsd:.4f}{known}"


def headline(report: ExperimentReport) -> list[str]:
    """One line per treatment arm: the verdict in words, with its test."""
    lines = []
    for comparison in report.comparisons:
        result = comparison.result
        test = result.test
        method = "exact" if test.method == "exact" else f"Monte Carlo, {test.draws} draws"
        lines.append(
            f"Experiment {report.name}: {comparison.arm} vs {comparison.control} (control): {result.verdict}; "
            f"sign-flip p = {test.p_value:.4g} ({method}, {result.paired_cases} paired cases, alpha {result.alpha:g}); "
            f"recall {_difference(result.recall)}, clean rate {_difference(result.clean_rate)}"
        )
    return lines


def render_markdown(report: ExperimentReport) -> str:
    arms = report.arms
    lines = [f"# Experiment {report.name}", ""]
    lines += [f"- {line.removeprefix(f'Experiment {report.name}: ')}" for line in headline(report)]
    lines += [
        f"- {report.epochs} epoch(s) × {max((a.cases for a in arms), default=0)} case(s) × {len(arms)} arms; "
        f"seed {report.seed}; alpha {report.alpha:g}",
        f"- Arms differ in: {', '.join(report.differing) or 'nothing'}",
        *[f"- **Warning:** {warning}" for warning in report.warnings],
        f"- Report `{report.reportId[:16]}`, created {report.createdAt}",
        "",
        "## Arms",
        "",
        "| Arm | Recall | Clean rate | pass@k | pass^k | Flaky | Answered | Shared | Failed | Cost |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for arm in arms:
        summary = arm.summary
        label = f"{arm.name} (control)" if arm.control else arm.name
        lines.append(
            f"| {label} | {_rate(summary.recall)} | {_rate(summary.clean_rate)} | {_rate(summary.pass_at_k.all)} | "
            f"{_rate(summary.pass_hat_k.all)} | {len(summary.flaky_cases)} | {arm.answered} | {arm.shared} | "
            f"{arm.infrastructureFailures} | {_cost(arm)} |"
        )
    guided = [arm for arm in arms if arm.guidance is not None]
    if guided:
        lines += [
            "",
            "| Guidance arm | Evaluator | Outcome agreement | Cited recall (mean) | Cited precision (mean) |",
            "|---|---|---|---|---|",
        ]
        for arm in guided:
            g = arm.guidance
            agreement = g.outcomeAgreement
            share = (
                f"{agreement.value:.3f} ({agreement.passed}/{agreement.total})"
                if agreement.value is not None
                else "n/a"
            )
            lines.append(
                f"| {arm.name} | {arm.evaluator} | {share} | {_mean(g.citedRecall)} | {_mean(g.citedPrecision)} |"
            )
    lines += [
        "",
        "Recall and clean rate pool every epoch; their intervals come from a bootstrap over cases (a case's "
        "epochs move together). pass@k: a case passed in at least one epoch; pass^k: in every epoch. For a "
        "guidance arm a case with no expected knowledge (no-knowledge, not-applicable) counts as a clean control.",
        "",
        "## Per epoch",
        "",
        "| Arm | " + " | ".join(f"epoch {e}" for e in range(1, report.epochs + 1)) + " |",
        "|---|" + "---|" * report.epochs,
    ]
    for arm in arms:
        cells = [f"recall {_short(e.recall)}, clean {_short(e.clean_rate)}" for e in arm.summary.per_epoch]
        lines.append(f"| {arm.name} | " + " | ".join(cells) + " |")
    if report.comparisons:
        lines += [
            "",
            "## Against the control",
            "",
            "| Arm | Better / worse / equal cases | Mean difference per case | Sign-flip p | Recall Δ | Clean rate Δ | "
            "Verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for comparison in report.comparisons:
            result = comparison.result
            mean = f"{result.mean_difference:+.3f}" if result.mean_difference is not None else "n/a"
            lines.append(
                f"| {comparison.arm} | {result.better} / {result.worse} / {result.equal} | {mean} | "
                f"{result.test.p_value:.4g} ({result.test.method}) | {_difference(result.recall)} | "
                f"{_difference(result.clean_rate)} | **{result.verdict}** |"
            )
        lines += [""] + [f"- {comparison.result.explanation}" for comparison in report.comparisons]
    lines += [
        "",
        "## Cases",
        "",
        "| Case | Kind | " + " | ".join(a.name for a in arms) + " |",
        "|---|---|" + "---|" * len(arms),
    ]
    for case in report.cases:
        cells = []
        for arm in arms:
            results = case.outcomes.get(arm.name, [])
            answered = [r for r in results if r is not None]
            cells.append(
                f"{sum(answered)}/{len(answered)}" + (" (flaky)" if case.id in arm.summary.flaky_cases else "")
            )
        lines.append(f"| {case.id} | {case.kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _mean(measure: Any) -> str:
    return f"{measure.mean:.3f} over {measure.reports} report(s)" if measure.mean is not None else "n/a"


def _short(rate: Any) -> str:
    return f"{rate.value:.2f}" if rate.value is not None else "n/a"


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:64rem;color:#1b1f24}"
    "table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}"
    "th{background:#f6f8fa}.better{color:#1a7f37}.worse{color:#cf222e}.warn{color:#9a6700}"
)


def render_html(report: ExperimentReport) -> str:
    e = escape
    arms = report.arms
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>bceval experiment {e(report.name)}</title>',
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Experiment {e(report.name)}</h1><ul>",
    ]
    for comparison, line in zip(report.comparisons, headline(report), strict=True):
        parts.append(f'<li class="{e(comparison.result.verdict.split()[0])}">{e(line)}</li>')
    parts += [f'<li class="warn">{e(w)}</li>' for w in report.warnings]
    parts.append(f"<li>Arms differ in: {e(', '.join(report.differing) or 'nothing')}</li></ul>")
    parts.append(
        "<h2>Arms</h2><table><tr><th>Arm</th><th>Recall</th><th>Clean rate</th><th>pass@k</th><th>pass^k</th>"
        "<th>Answered</th><th>Shared</th><th>Failed</th><th>Cost</th></tr>"
    )
    for arm in arms:
        s = arm.summary
        parts.append(
            f"<tr><td>{e(arm.name)}{' (control)' if arm.control else ''}</td><td>{e(_rate(s.recall))}</td>"
            f"<td>{e(_rate(s.clean_rate))}</td><td>{e(_rate(s.pass_at_k.all))}</td><td>{e(_rate(s.pass_hat_k.all))}</td>"
            f"<td>{arm.answered}</td><td>{arm.shared}</td><td>{arm.infrastructureFailures}</td><td>{e(_cost(arm))}</td></tr>"
        )
    parts.append(
        "</table><h2>Cases</h2><table><tr><th>Case</th><th>Kind</th>"
        + "".join(f"<th>{e(a.name)}</th>" for a in arms)
        + "</tr>"
    )
    for case in report.cases:
        cells = []
        for arm in arms:
            marks = []
            for number, (result, link) in enumerate(
                zip(case.outcomes.get(arm.name, []), case.transcripts.get(arm.name, []), strict=True), start=1
            ):
                symbol = "✓" if result else ("✗" if result is False else "–")
                marks.append(f'<a href="{e(link)}" title="epoch {number}">{symbol}</a>' if link else symbol)
            cells.append(f"<td>{' '.join(marks)}</td>")
        parts.append(f"<tr><td>{e(case.id)}</td><td>{e(case.kind)}</td>{''.join(cells)}</tr>")
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


# --- the published page ------------------------------------------------------------------------------------------

EXPERIMENT_MARKERS = (
    "<!-- bceval:experiment:latest:begin -->",
    "<!-- bceval:experiment:latest:end -->",
    "<!-- bceval:experiment:history:begin -->",
    "<!-- bceval:experiment:history:end -->",
)
EXPERIMENT_HEADER = (
    "| Date | Experiment | Arms | Epochs | Cases | Verdicts against the control | Report |\n"
    "|---|---|---|---|---|---|---|"
)


def experiment_page():  # noqa: ANN201 - a PageFormat (imported here so reports need no publishing code)
    from bceval.scorecard.publish import MAX_HISTORY_ROWS, PageFormat

    begin, end, history_begin, history_end = EXPERIMENT_MARKERS
    new_page = (
        "# bceval experiments\n\nPublished with `bceval experiment publish`. Text outside bceval's marker comments is "
        f"yours to edit; the latest experiment and the history rows are maintained by bceval.\n\n{begin}\n{end}\n\n"
        f"## History\n\nNewest first; at most {MAX_HISTORY_ROWS} rows.\n\n{history_begin}\n{history_end}\n"
    )
    return PageFormat(EXPERIMENT_MARKERS, new_page, EXPERIMENT_HEADER, "| Date |")


def experiment_entry(report: ExperimentReport):  # noqa: ANN201 - an Entry
    from bceval.scorecard.publish import Entry

    verdicts = "; ".join(f"{c.arm}: {c.result.verdict} (p = {c.result.test.p_value:.3g})" for c in report.comparisons)
    cell = f"`{report.reportId[:16]}`"
    row = (
        f"| {report.createdAt[:10]} | {report.name} | {', '.join(a.name for a in report.arms)} | {report.epochs} | "
        f"{max((a.cases for a in report.arms), default=0)} | {verdicts} | {cell} |"
    )
    latest = render_markdown(report).replace("# Experiment", "### Experiment", 1).replace("\n## ", "\n#### ")
    return Entry(latest, row, f"Report `{report.reportId[:16]}`", cell)
