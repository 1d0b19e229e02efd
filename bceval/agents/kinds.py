"""The kinds of agent bceval has, each registered once with what it can do. A factory imports its agent only
when one is made, so asking what a kind can do never loads the process runner."""

from __future__ import annotations

from bceval.agents.registry import Agent, GuidanceSetup, ReviewSetup, Setup, agent
from bceval.evaluators.base import GUIDANCE, REVIEW


@agent("baseline")
def baseline(setup: ReviewSetup) -> Agent:
    """A deterministic lexical reviewer with no model: the floor any real model has to beat."""
    from bceval.agents.baseline import BaselineAdapter

    return BaselineAdapter(setup.corpus)


@agent("oracle", knows_answers=True, questions=(REVIEW, GUIDANCE))
def oracle(setup: Setup) -> Agent:
    """The known-good control: the evaluator's own answers, so every case must pass."""
    from bceval.agents.oracle import OracleAgent

    return OracleAgent(setup.cases if isinstance(setup, ReviewSetup) else setup.manifest)


@agent("command", live=True, needs_view=True, reports_usage=True, questions=(REVIEW, GUIDANCE))
def command(setup: Setup) -> Agent:
    """A live agent behind any command line; one process runner (bceval.agents.process) for both questions."""
    assert setup.agent is not None  # make_agent refuses a live kind without its settings
    if isinstance(setup, GuidanceSetup):
        from bceval.agents.guidance_command import GuidanceCommandAdapter

        return GuidanceCommandAdapter(setup.agent, setup.manifest, setup.run_dir, dict(setup.hidden))
    from bceval.agents.command import CommandAdapter

    return CommandAdapter(setup.agent, setup.cache_dir, setup.hidden)


@agent("api", live=True, needs_view=True, reports_usage=True, questions=(REVIEW, GUIDANCE), endpoint=True)
def api(setup: Setup) -> Agent:
    """bceval's own agent over a chat-completions endpoint, its read-only tools confined to the case's view (or,
    for guidance, to the workspace and the knowledge view)."""
    assert setup.agent is not None  # make_agent refuses a live kind without its settings
    if isinstance(setup, GuidanceSetup):
        from bceval.agents.api import ApiGuidanceAgent

        return ApiGuidanceAgent(setup.agent, setup.manifest, setup.run_dir, dict(setup.hidden))
    from bceval.agents.api import ApiReviewAgent

    return ApiReviewAgent(setup.agent, setup.cache_dir, setup.hidden)
