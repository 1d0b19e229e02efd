"""The evaluators bceval knows, registered in one place, and the protocol each of them keeps.

An evaluator turns a manifest into cases, prepares the answer-free questions, knows the known-good answer of
every case (what the oracle agent reports) and scores answers into per-case outcomes. Each is a thin adapter
over its core (bceval.review, bceval.guidance); the core does the work.

Agents answer one of two shapes of question: a review question (a prepared request and a case file, answered
with findings) or a guidance question (a request about a workspace, answered with a guidance report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

REVIEW = "review"  # the question shape of the review evaluator
GUIDANCE = "guidance"  # the question shape of the plan and implementation evaluators
QUESTIONS = (REVIEW, GUIDANCE)


@dataclass(frozen=True)
class CaseOutcome:
    """One case's verdict: its manifest id, whether it passed, and why not (bceval's words)."""

    case: str
    passed: bool
    problems: tuple[str, ...] = ()


class Evaluator(Protocol):
    name: str  # "review", "plan", "implementation"
    question: str  # REVIEW or GUIDANCE: which agents can answer it

    def load(self, root: Any, manifest: Any) -> Any:
        """The checked manifest (with the corpus it is read against)."""
        ...

    def cases(self, loaded: Any) -> list[Any]:
        """The cases of a loaded manifest, in manifest order."""
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


def _registered() -> dict[str, Evaluator]:
    from bceval.evaluators.guidance import IMPLEMENTATION_EVALUATOR, PLAN_EVALUATOR
    from bceval.evaluators.review import REVIEW_EVALUATOR

    return {e.name: e for e in (REVIEW_EVALUATOR, PLAN_EVALUATOR, IMPLEMENTATION_EVALUATOR)}


def evaluator(name: str) -> Evaluator:
    """The registered evaluator of that name ("review", "plan", "implementation"; a guidance manifest's kind)."""
    return _registered()[name]


def evaluator_names() -> tuple[str, ...]:
    return tuple(_registered())
