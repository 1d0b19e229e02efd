"""Sequential experiments on disk: the look after each answered epoch (bceval.experiment.sequential) from the
runs' result files, and `bceval experiment simulate` of a file's design."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bceval.config import Settings
from bceval.errors import BcevalError
from bceval.experiment.plan import Plan
from bceval.experiment.power import BaseRate
from bceval.experiment.report_model import ArmOutcomes
from bceval.experiment.sequential import Design, Look, design_of, look, until_decided
from bceval.experiment.sequential_report import sequential_report
from bceval.experiment.simulate import World, simulate
from bceval.jsonio import dumps, read_json_or_none, write_atomic
from bceval.steps.experiment_report import control_base_rates, load_report, review_outcomes

STOP_RECORD = "sequential-stop.json"  # the design an efficacy or futility stop was decided under
BINDING = ("efficacy", "futility")


@dataclass(frozen=True)
class State:
    epochs: int  # the epochs every arm answered for every case, up to the look that stopped
    look: Look | None  # the look after them (None before the first epoch is complete)
    reason: str | None  # efficacy, futility, max, budget; None: answer the next epoch
    design: Design  # the design the looks were held to

    @property
    def decided(self) -> bool:
        """Nothing more to answer: a rerun answers nothing new (a budget stop goes on once the budget allows)."""
        return self.reason in ("efficacy", "futility", "max")


def per_case(outcomes: ArmOutcomes, epochs: int) -> dict[str, list[bool | None]]:
    cases: dict[str, list[bool | None]] = {case: [] for case in outcomes.case_ids}
    for epoch in outcomes.epochs[:epochs]:
        for unit in epoch.cases:
            cases[unit.id].append(unit.passed)
    return cases


def differences(control: dict[str, list[Any]], treatment: dict[str, list[Any]]) -> list[float]:
    """Per case both arms answered at least once, by case id: treatment's pass rate minus the control's."""
    found = []
    for case in sorted(set(control) & set(treatment)):
        ours = [entry for entry in treatment[case] if entry is not None]
        theirs = [entry for entry in control[case] if entry is not None]
        if ours and theirs:
            found.append(sum(ours) / len(ours) - sum(theirs) / len(theirs))
    return found


def sequential_state(plan: Plan, settings: Settings, selected: dict[str, list[str]], design: Design) -> State:
    """Where the experiment stands under the design a stop for efficacy or futility was decided under (recorded,
    so that raising maxEpochs afterwards does not move it), else under `design`."""
    held = _held(plan, design)
    state = _looks(plan, settings, selected, held)
    if held != design and state.reason not in BINDING:  # the recorded stop no longer holds (its answers changed)
        state = _looks(plan, settings, selected, design)
    if state.reason in BINDING:
        write_atomic(plan.folder.path / STOP_RECORD, dumps({"maxEpochs": state.design.max_epochs}))
    return state


def _looks(plan: Plan, settings: Settings, selected: dict[str, list[str]], design: Design) -> State:
    """The looks after each epoch every arm answered completely, up to the first that stops; an epoch with an
    answer the budget kept from starting stops at the look before it."""
    wide = replace(plan, experiment=plan.experiment.model_copy(update={"epochs": design.max_epochs}))
    outcomes = {arm.name: review_outcomes(wide, settings, arm, selected[arm.name]) for arm in plan.arms}
    state = State(0, None, None, design)
    for epoch in range(1, design.max_epochs + 1):
        units = [unit for arm in outcomes.values() for unit in arm.epochs[epoch - 1].cases]
        if any(unit.not_started for unit in units):
            return replace(state, reason="budget")
        if not units or any(unit.missing for unit in units):
            return state
        control = per_case(outcomes[plan.control.name], epoch)
        arms = {arm.name: differences(control, per_case(outcomes[arm.name], epoch)) for arm in plan.arms[1:]}
        found = look(design, epoch, arms)
        state = State(epoch, found, found.reason, design)
        if found.stopped:
            break
    return state


def _held(plan: Plan, design: Design) -> Design:
    """The design a stop for efficacy or futility was decided under, as recorded; else `design`."""
    record = read_json_or_none(plan.folder.path / STOP_RECORD)
    held = record.get("maxEpochs") if isinstance(record, dict) else None
    return replace(design, max_epochs=held) if isinstance(held, int) and held >= 1 else design


def sequential_load(plan: Plan, settings: Settings, selected: dict[str, list[str]], created: str) -> Any:
    """The report of a sequential experiment: over the epochs up to its last look, with the look's verdicts."""
    design = design_of(plan.experiment)
    assert design is not None
    state = sequential_state(plan, settings, selected, design)
    looked = replace(plan, experiment=plan.experiment.model_copy(update={"epochs": max(state.epochs, 1)}))
    report = load_report(looked, settings, selected, created)
    report = sequential_report(report, state.design, state.look, state.epochs, state.reason)
    if state.design != design:
        note = f"{report.sequential.note}; maxEpochs is {design.max_epochs} now, but the stop stands"
        report = report.model_copy(update={"sequential": report.sequential.model_copy(update={"note": note})})
    return report


def base_rates(text: str | None, plan: Plan) -> tuple[list[BaseRate], str]:
    """The control's pass rates to simulate: --base-rates, else its per-case rates in the last report, else 0.5."""
    if text:
        try:
            rates = [float(part) for part in text.split(",")]
        except ValueError:
            rates = [-1.0]
        if not all(0 <= rate <= 1 for rate in rates):
            raise BcevalError(f"--base-rates: pass rates between 0 and 1, separated by commas, got {text!r}")
        return [BaseRate("positive", rate) for rate in rates], "--base-rates"
    path = plan.folder.report("json")
    found = control_base_rates(read_json_or_none(path), plan.control.name)
    return (found, str(path)) if found else ([BaseRate("positive", 0.5)], "every case passing half the time")


def simulate_experiment(plan: Plan, cases: int, seeds: int, out: Path, rates: str | None) -> None:
    """`bceval experiment simulate`: the file's design (its `stop`, else stop's defaults) under no effect and its
    planned effect, against the fixed design of the same power; the figures go to `out` as JSON."""
    if seeds < 1:
        raise BcevalError(f"--seeds must be at least 1, got {seeds}")
    if cases < 1:
        raise BcevalError(f"{plan.source}: the experiment covers no case, so there is nothing to simulate")
    experiment = plan.experiment
    design = design_of(until_decided(experiment))
    assert design is not None
    base, source = base_rates(rates, plan)
    world = World(base, cases, len(plan.arms) - 1, experiment.seed)
    figures = simulate(world, design, seeds)
    shape = {"alpha": design.alpha, "power": design.power, "effect": design.effect, "maxEpochs": design.max_epochs}
    document = {**figures, "design": {**shape, "cases": cases, "seeds": seeds, "baseRates": source}}
    write_atomic(out, dumps(document))
    fixed, adaptive = figures["fixed"], figures["adaptive"]
    print(
        f"Simulated {seeds} experiments of {cases} cases: fixed design {fixed['answers']} answers (power "
        f"{fixed['power']:.3f}, type I {fixed['typeI']:.3f}); stopping once decided {adaptive['answersEffect']:.0f} "
        f"answers under the effect and {adaptive['answersNull']:.0f} under none (power {adaptive['power']:.3f}, "
        f"type I {adaptive['typeI']:.3f}); figures in {out}"
    )
