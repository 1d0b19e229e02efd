"""The plugin protocol of an evaluator (docs/contributing.md), and the records it answers with. The frame reaches
an evaluator package only through this protocol (registered in bceval.evaluators.registry); bceval's own
evaluators also give `schemas()` and `oracle_reply`, and the default one (review) is the frame's own pipeline."""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

REVIEW = "review"  # the question shape of the review evaluator
GUIDANCE = "guidance"  # the question shape of the plan and implementation evaluators
DEVELOPMENT = "development"  # the development evaluator's: a request answered by changing a workspace

CASE = "case"  # unit of work: one answer per (arm, epoch, case), each a task of its own
RUN = "run"  # unit of work: one whole run per (arm, epoch) that prepares, answers and scores every case


@dataclass(frozen=True)
class Traits:
    """What an evaluator asks of the runs that use it: everything an experiment decides by the evaluator is
    decided here (the defaults are the review evaluator's)."""

    unit: str = CASE  # CASE or RUN: what one unit of an experiment's work is; a RUN answers its whole manifest
    default_agent: str | None = None  # the agent of an arm that names none; None: bceval's --adapter
    default_manifest: str | None = None  # relative to the corpus; None: the corpus's own review manifest, if any
    needs_workspaces: bool = False  # its arms name a workspace map (manifest id -> workspace)
    needs_checkout: bool = False  # reads its corpus as a git checkout (a ref's export keeps its git state)
    prepares_in_run: bool = False  # each run prepares its own requests: no shared prepare variant
    shares_answers: bool = True  # an identical question asked by two arms gets one answer
    needs_leaves: bool = False  # its corpus must hold review leaves (checked when an arm names a folder)


@dataclass(frozen=True)
class CaseOutcome:
    """One case's verdict: its manifest id, whether it passed, and why not (bceval's words)."""

    case: str
    passed: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class CaseMeasures:
    """What one case's report says, as an experiment counts it: whether its outcome is the expected one, and
    the recall and precision of what it cited (None when no report could be read)."""

    outcome_agrees: bool | None
    recall: float | None
    precision: float | None


@dataclass(frozen=True)
class Command:
    """A CLI subcommand an evaluator adds: `add` declares its parser on bceval's subparsers, `run` runs it (its
    exit code); `help_for`, when given, answers `bceval NAME ... --help` itself (None: argparse's own help)."""

    name: str
    add: Callable[[argparse._SubParsersAction], argparse.ArgumentParser]
    run: Callable[[argparse.Namespace], int]
    help_for: Callable[[list[str]], str | None] | None = None


TaskGenerators = Mapping[str, Callable[[], Any]]  # doit's `task_<name>` functions of one graph


@runtime_checkable
class Evaluator(Protocol):
    """A subclass inherits the defaults given here (a positive case, outcomes from problems, no extras)."""

    name: str  # its registered name: "review", "plan", "implementation", "development", a plugin's own
    description: str  # one line: what it evaluates
    question: str  # the shape of question its agents answer (REVIEW, GUIDANCE, DEVELOPMENT or its own)
    traits: Traits

    def load(self, root: Path, manifest: Path | None) -> Any:
        """The checked manifest of a corpus (a BcevalError naming the file when it is not usable)."""

    def cases(self, loaded: Any) -> list[Any]:
        """The cases of a loaded manifest, in manifest order (each has an `id`)."""

    def model_id(self, case: Any) -> str:
        """The only id of a case its agent sees (its result and transcript files are named by it)."""

    def case_kind(self, case: Any) -> str:
        """Either "positive" (the case expects something found) or "clean" (a control that expects nothing)."""
        return "positive"

    def outcomes(self, loaded: Any, problems: list[str]) -> list[CaseOutcome]:
        """Per-case outcomes of a finished run, from the problems its run record holds."""
        return outcomes_from_problems([case.id for case in self.cases(loaded)], problems)

    def measures(self, loaded: Any, results_dir: Path | None) -> Mapping[str, CaseMeasures] | None:
        """Per case id, what it measures of an answer besides passing (results_dir None: no answers yet); None
        when it measures nothing else."""

    def commands(self) -> tuple[Command, ...]:
        """The CLI subcommands it adds (evaluators of one package return the same ones; they are added once)."""
        return ()

    def tasks(self, inputs: Any) -> TaskGenerators:
        """The doit task generators it adds to a graph (bceval.graph.inputs.GraphInputs: its settings and the
        corpus listing); cheap, as they run on every command."""
        return {}

    def verb(self, verb: str, args: argparse.Namespace) -> int:
        """`bceval prepare|answer|score|publish|view --evaluator NAME ...`: its exit code."""

    def check_arms(self, arms: list[Any], settings: Any) -> tuple[int, str] | None:
        """Its own rules for an experiment's arms (bceval.experiment.plan.ArmPlan): the index of the first arm
        that breaks one and why, else None."""

    def run_unit(self, plan: Any, arm: Any, run: Any, epoch: int, settings: Any) -> None:
        """One experiment unit of a RUN evaluator: the arm's whole run of this epoch (`run`: the arm's settings,
        `settings`: the experiment's) into a new folder of plan.run_folders."""

    def unit_inputs(self, arm: Any) -> dict[str, Any]:
        """What a RUN evaluator's unit reads besides the arm's fields (digests of its checkouts and files)."""


def outcomes_from_problems(case_ids: list[str], problems: list[str]) -> list[CaseOutcome]:
    """Per case, the problems of a finished run that are about it ("<case id>: ..."); a problem about no case (a
    changed knowledge checkout, say) fails every case."""
    shared = tuple(p for p in problems if not any(p.startswith(f"{case}: ") for case in case_ids))
    outcomes = []
    for case in case_ids:
        own = tuple(p for p in problems if p.startswith(f"{case}: "))
        outcomes.append(CaseOutcome(case, not (shared or own), shared + own))
    return outcomes


def model_id(case_id: str) -> str:
    """The only id of a case its agent sees: `case-` plus the first 8 hex digits of the SHA-256 of the manifest
    id (the evaluators that hash ids share it)."""
    return "case-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:8]
