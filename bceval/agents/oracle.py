"""The known-good control for every evaluator: it answers exactly what the evaluator expects of each case
(bceval.evaluators), so every case must pass. It reads the manifest on purpose; no other agent may."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bceval import __version__
from bceval.agents.base import Answer, CaseInput
from bceval.agents.guidance import GuidanceCaseInput, NoReport
from bceval.agents.registry import AgentBase
from bceval.evaluators.guidance.evidence import run_git
from bceval.evaluators.guidance.manifest import GuidanceManifest
from bceval.evaluators.registry import evaluator
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.plugin import REVIEW_EVALUATOR


class OracleAgent(AgentBase):
    name = "oracle"
    kind = "oracle"

    def __init__(self, expected: Sequence[ReviewCase] | GuidanceManifest) -> None:
        """`expected`: the review run's cases, or the guidance manifest (its kind names the evaluator)."""
        if isinstance(expected, GuidanceManifest):
            self._evaluator = evaluator(expected.kind)
            self._guidance = {case.hashed: case for case in expected.cases}
        else:
            self._review = {case.modelId: case for case in expected}

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.name, "model": "manifest-expectations", "version": __version__, "pinned": True}

    def answer(self, question: Any) -> Any:
        if isinstance(question, CaseInput):
            return Answer(REVIEW_EVALUATOR.oracle_answer(self._review[question.model_id]))
        return self._guidance_answer(question)

    def _guidance_answer(self, case: GuidanceCaseInput) -> dict[str, Any] | NoReport:
        expected = self._guidance.get(case.case_id)
        if expected is None:
            return NoReport()
        # Pinned to the view's HEAD like a careful agent; a read-only git query.
        head = run_git(case.knowledge, "rev-parse", "--verify", "HEAD")
        return self._evaluator.oracle_answer(expected, case.knowledge, head)
