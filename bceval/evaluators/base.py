"""The protocol every evaluator keeps, and the records it answers with (bceval.evaluators.registry lists them).

An evaluator turns a manifest into cases, prepares the answer-free questions, knows the known-good answer of
every case (what the oracle agent reports) and scores answers into per-case outcomes. Each is a thin adapter
over its core (bceval.evaluators.review, bceval.evaluators.guidance); the core does the work.

Agents answer one of two shapes of question: a review question (a prepared request and a case file, answered
with findings) or a guidance question (a request about a workspace, answered with a guidance report).

What an experiment (or the graph) needs to know of an evaluator is in its Traits record: the rest of bceval
asks the record, never the evaluator's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

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


@dataclass(frozen=True)
class CaseOutcome:
    """One case's verdict: its manifest id, whether it passed, and why not (bceval's words)."""

    case: str
    passed: bool
    problems: tuple[str, ...] = ()


class Evaluator(Protocol):
    name: str  # "review", "plan", "implementation"
    question: str  # REVIEW or GUIDANCE: which agents can answer it
    traits: Traits  # what the runs that use it must do

    def load(self, root: Any, manifest: Any) -> Any:
        """The checked manifest (with the corpus it is read against)."""
        ...

    def cases(self, loaded: Any) -> list[Any]:
        """The cases of a loaded manifest, in manifest order."""
        ...

    def model_id(self, case: Any) -> str:
        """The only id of a case its agent sees (its result and transcript files are named by it)."""
        ...

    def case_kind(self, case: Any) -> str:
        """Either "positive" (the case expects something found) or "clean" (a control that expects nothing)."""
        ...

    def prepare(self, *inputs: Any) -> Any:
        """The answer-free request files."""
        ...

    def oracle_answer(self, *question: Any) -> Any:
        """The known-good answer of one case: what the oracle agent reports, so every case passes."""
        ...

    def score(self, *answers: Any) -> list[CaseOutcome]:
        """Per-case outcomes of the answers."""
        ...

    def measures(self, loaded: Any, results_dir: Any) -> dict[str, Any] | None:
        """Per case id, what the evaluator measures of an answer besides passing (results_dir None: no answers
        yet); None when it measures nothing else."""
        ...


class RunEvaluator(Evaluator, Protocol):
    """An evaluator whose unit of work is a whole run (Traits.unit == RUN): its run records its problems."""

    def outcomes(self, loaded: Any, problems: list[str]) -> list[CaseOutcome]:
        """Per-case outcomes of a finished run, from the problems its run.json records."""
        ...
