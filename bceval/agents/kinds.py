"""The kinds of agent bceval has, each registered once with what it can do; a factory imports its agent only when
one is made, so asking what a kind can do never loads the process runner."""

from __future__ import annotations

from typing import Any

from bceval import __version__
from bceval.agents.registry import ANY_SHAPE, Agent, ReviewSetup, Setup, Shape, agent
from bceval.evaluators.base import DEVELOPMENT, GUIDANCE, REVIEW
from bceval.evaluators.registry import DEFAULT, evaluator

LIVE_QUESTIONS = (REVIEW, GUIDANCE, DEVELOPMENT, ANY_SHAPE)


@agent("baseline")
def baseline(setup: ReviewSetup) -> Agent:
    """A deterministic lexical reviewer with no model: the floor any real model has to beat."""
    return evaluator(DEFAULT).baseline_agent(setup.corpus)  # the review evaluator's own reviewer


class OracleAgent(Agent):
    """The known-good control for every evaluator that has one: it answers exactly what the evaluator expects of
    each case (its `oracle_reply`), so every case must pass. It reads the manifest on purpose; no other agent may."""

    name = kind = "oracle"

    def __init__(self, expected: Any) -> None:
        """`expected`: the review run's cases, or a loaded manifest whose kind names its evaluator."""
        self._expected = expected
        self._evaluator = evaluator(getattr(expected, "kind", DEFAULT))

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.name, "model": "manifest-expectations", "version": __version__, "pinned": True}

    def answer(self, question: Any) -> Any:
        return self._evaluator.oracle_reply(self._expected, question)


@agent("oracle", knows_answers=True, questions=(REVIEW, GUIDANCE))
def oracle(setup: Setup) -> Agent:
    return OracleAgent(setup.cases if isinstance(setup, ReviewSetup) else setup.manifest)  # type: ignore[union-attr]


def shape_of(setup: Setup) -> Shape:
    """How a live agent is asked the setup's questions: the evaluator's shape, else the review one."""
    if not isinstance(setup, ReviewSetup):
        assert setup.shape is not None, "a guidance or development setup of a live agent names its shape"
        return setup.shape
    return evaluator(DEFAULT).question_shape(setup.cache_dir, setup.hidden)


@agent("command", live=True, needs_view=True, reports_usage=True, questions=LIVE_QUESTIONS)
def command(setup: Setup) -> Agent:
    """A live agent behind any command line, one process per attempt, for every question shape."""
    from bceval.agents.command import CommandAgent

    assert setup.agent is not None  # make_agent refuses a live kind without its settings
    return CommandAgent(setup.agent, shape_of(setup))


@agent("api", live=True, needs_view=True, reports_usage=True, questions=LIVE_QUESTIONS, endpoint=True)
def api(setup: Setup) -> Agent:
    """bceval's own agent over a chat-completions endpoint, its tools confined to what the question shape names."""
    from bceval.agents.api import ApiAgent

    assert setup.agent is not None  # make_agent refuses a live kind without its settings
    return ApiAgent(setup.agent, shape_of(setup))
