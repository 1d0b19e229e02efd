"""The report of a sequential experiment (`stop: when: decided`): its design, the look it stopped at and why, what
the answers cost, and each arm's verdict from that look with its repeated confidence interval (the comparison's
fixed-design test is not valid after looking, so the look decides)."""

from __future__ import annotations

import math
from dataclasses import replace
from statistics import NormalDist

from bceval.experiment.records import ArmComparison
from bceval.experiment.report_model import ExperimentReport, Sequential, SequentialDesign, Stopped, StoppedArm
from bceval.experiment.sequential import EFFICACY_GAMMA, FUTILITY_GAMMA, ArmLook, Design, Look


def _finite(values: tuple[float, ...]) -> list[float | None]:
    return [None if math.isinf(value) else value for value in values]


def _level(critical: float) -> float:
    """The two-sided nominal level of a boundary |Z| >= critical."""
    return 0.0 if math.isinf(critical) else 2 * (1 - NormalDist().cdf(critical))


def _stopped(report: ExperimentReport, look: Look | None, epochs: int, reason: str | None) -> Stopped:
    asked = [arm.usage for arm in report.arms]
    tokens = [(usage.inputTokens or 0) + (usage.outputTokens or 0) for usage in asked if usage.inputTokens is not None]
    costs = [usage.costUsd for usage in asked if usage.costUsd is not None]
    arms = [
        StoppedArm(
            arm=arm.name,
            decision=arm.decision,  # type: ignore[arg-type]
            difference=arm.difference,
            z=arm.z,
            boundary=None if math.isinf(arm.boundary) else arm.boundary,
            interval=list(arm.interval),
        )
        for arm in (look.arms if look else ())
    ]
    return Stopped(
        look=epochs,
        reason=reason,  # type: ignore[arg-type]
        answers=sum(arm.answered + arm.shared for arm in report.arms),
        tokens=sum(tokens) if tokens else None,
        costUsd=sum(costs) if costs else None,
        arms=arms,
    )


def _verdict(result: ArmComparison, arm: ArmLook | None, reason: str | None, at: str, effect: float) -> ArmComparison:
    """The comparison with the look's verdict (one the comparison refused stays refused)."""
    if result.refusals:
        return result
    if arm is None:
        return replace(
            result, verdict="no verdict", verdict_text="no verdict: no epoch is complete yet", explanation=""
        )
    up, kinds = arm.decision == "better", (result.recall, result.clean_rate)
    against = [kind for kind in kinds if (kind.worse_than_control if up else kind.better_than_control)]
    if arm.decision not in ("better", "worse"):
        against = []
    if against:  # harm in a kind counts unadjusted, as in a fixed design: no improvement bought with it
        verdict, text = "mixed", f"mixed: {arm.decision} overall, {against[0].label} the other way (efficacy at {at})"
    elif arm.decision in ("better", "worse"):
        verdict, text = arm.decision, f"{arm.decision} (efficacy at {at})"
    elif arm.decision == "futile":
        verdict, text = "no detectable difference", f"no difference of {effect:g} or more (futility at {at})"
    elif reason == "max":
        verdict, text = "no detectable difference", f"no detectable difference (the design's last look, {at})"
    else:
        why = "the budget stopped the experiment" if reason == "budget" else "not decided yet"
        verdict, text = "no verdict", f"no verdict: {why} at {at}"
    low, high = arm.interval
    explanation = (
        f"{text}: sequential design, Z = {arm.z:.3g} against the efficacy boundary |Z| >= {arm.boundary:.3g}; "
        f"repeated confidence interval of the mean per-case difference [{low:+.3f}, {high:+.3f}]"
    )
    return replace(result, verdict=verdict, verdict_text=text, explanation=explanation, alpha_used=_level(arm.boundary))


def sequential_report(
    report: ExperimentReport, design: Design, look: Look | None, epochs: int, reason: str | None
) -> ExperimentReport:
    """The report of `epochs` epochs with the sequential design's section and each arm's verdict from `look`."""
    index = max(epochs, 1) - 1
    critical = design.efficacy(design.alpha)[index]
    at = f"look {epochs} of {design.max_epochs}"
    why = {None: "not decided yet", "max": "the design's last look"}.get(reason, reason)
    note = (
        f"{at} (stop: decided), {why}: efficacy when |Z| >= {critical:.3g} (Hwang-Shih-DeCani alpha spending, "
        f"gamma {EFFICACY_GAMMA:g}), futility when a difference of {design.effect:g} is no longer plausible "
        f"(non-binding beta spending, gamma {FUTILITY_GAMMA:g})"
    )
    shape = SequentialDesign(
        effect=design.effect,
        power=design.power,
        maxEpochs=design.max_epochs,
        efficacy=f"Hwang-Shih-DeCani, gamma {EFFICACY_GAMMA:g}, alpha {design.alpha:g}",
        futility=f"Hwang-Shih-DeCani, gamma {FUTILITY_GAMMA:g}, beta {1 - design.power:g}",
        efficacyBoundaries=_finite(design.efficacy(design.alpha)),
        futilityBoundaries=_finite(design.futility),
    )
    sequential = Sequential(
        look=max(epochs, 1),
        plannedLooks=design.max_epochs,
        planned=True,
        alphaUsed=_level(critical),
        note=note,
        design=shape,
        stopped=_stopped(report, look, epochs, reason),
    )
    arms = {arm.name: arm for arm in look.arms} if look else {}
    comparisons = [
        comparison.model_copy(
            update={"result": _verdict(comparison.result, arms.get(comparison.arm), reason, at, design.effect)}
        )
        for comparison in report.comparisons
    ]
    return report.model_copy(update={"sequential": sequential, "comparisons": comparisons})
