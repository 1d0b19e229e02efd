"""The known-good control for every evaluator that has one: it answers exactly what the evaluator expects of each
case (its `oracle_reply`), so every case must pass. It reads the manifest on purpose; no other agent may."""

from __future__ import annotations

from typing import Any

from bceval import __version__
from bceval.agents.registry import Agent
from bceval.evaluators.registry import DEFAULT, evaluator


class OracleAgent(Agent):
    name = "oracle"
    kind = "oracle"

    def __init__(self, expected: Any) -> None:
        """`expected`: the review run's cases, or a loaded manifest whose kind names its evaluator."""
        self._expected = expected
        self._evaluator = evaluator(getattr(expected, "kind", DEFAULT))

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.name, "model": "manifest-expectations", "version": __version__, "pinned": True}

    def answer(self, question: Any) -> Any:
        return self._evaluator.oracle_reply(self._expected, question)
