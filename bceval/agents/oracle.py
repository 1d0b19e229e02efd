"""The known-good control: answers exactly what the manifest expects, so every case must pass."""

from __future__ import annotations

from typing import Any

from bceval import __version__
from bceval.agents.base import Answer, CaseInput
from bceval.review.cases import ReviewCase
from bceval.review.scoring import ResultEntry


class OracleAdapter:
    name = "oracle"

    def __init__(self, cases: list[ReviewCase]) -> None:
        self._expected = {case.modelId: list(case.expected) for case in cases}

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.name, "model": "manifest-expectations", "version": __version__, "pinned": True}

    def answer(self, case: CaseInput) -> Answer:
        return Answer([ResultEntry(id=case.model_id, findings=self._expected[case.model_id])])
