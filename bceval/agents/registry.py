"""One Agent protocol for every question an evaluator asks, and the registry of agent kinds: a kind registers once
(a decorator on its factory) with its Capabilities, which the rest of bceval asks instead of the kind's name."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.evaluators.base import REVIEW
from bceval.usage import Usage

if TYPE_CHECKING:  # annotations only: every command imports this registry (through config)
    from bceval.evaluators.review.cases import ReviewCase

REVIEW_NEEDS_COMMAND = "the command adapter needs --command (or BCEVAL_COMMAND), e.g. --command 'claude -p'"


@dataclass(frozen=True)
class Capabilities:
    """What a kind of agent can do: everything bceval decides by the kind of agent is decided here."""

    live: bool = False  # calls a live model: spends money, opt-in (BCEVAL_LIVE=1), answers only when asked
    needs_view: bool = False  # answers a review question from the case's agent view (its digest is the question)
    reports_usage: bool = False  # records what its answers cost (tokens, money, time)
    knows_answers: bool = False  # answers from the manifest's expectations: they are an input of its answers
    questions: tuple[str, ...] = (REVIEW,)  # the question shapes it answers (bceval.evaluators.registry)
    endpoint: bool = False  # bceval's own loop over a chat-completions endpoint: needs a model, not a command


class Agent:
    """One way to answer an evaluator's questions; unless a kind says otherwise nothing starts, closes or is cached,
    and no cost is kept."""

    name: ClassVar[str]  # how messages and records name it
    kind: ClassVar[str]  # the registered kind it is one of (its capabilities)
    usage: Usage = Usage()  # what its answers have cost so far (kept by kinds that report usage)

    def describe(self) -> dict[str, Any]:  # the `answeredBy` block: adapter, model, version, pinned
        raise NotImplementedError

    def answer(self, question: Any) -> Any:  # the answer to one question of its shape, or why there is none
        raise NotImplementedError

    def close(self) -> None:  # release what it holds between answers (a guidance agent's knowledge view)
        return None

    def in_cache(self, question: Any) -> bool:  # answering it would ask no model
        return False

    def read_evidence(self) -> dict[str, dict[str, Any]]:  # per guidance case: the reads bceval recorded
        return {}


class Shape:
    """A question shape as the live kinds answer it: through a command's process or the api agent's conversation.
    Unless it says otherwise nothing is cached, added, closed or reported."""

    hidden: Mapping[str, Path]  # what the agent must never reach, by what it is
    in_case_view: bool  # a command agent runs in the case's view unless --isolation none (else in a folder of its own)
    checks_command: bool  # the command line is checked when the agent is made (and the live opt-in asked)
    tools: tuple[Any, ...]  # the api agent's tools (bceval.agents.api_tools): read-only, or with write tools

    def by_process(self, agent: Any, question: Any) -> Any:
        raise NotImplementedError

    def by_endpoint(self, agent: Any, question: Any) -> Any:
        raise NotImplementedError

    def in_cache(self, agent: Any, question: Any) -> bool:
        return False

    def described(self, agent: Any, described: dict[str, Any]) -> dict[str, Any]:
        return described

    def close(self) -> None:
        return None

    def read_evidence(self) -> dict[str, dict[str, Any]]:
        return {}


class Setup:
    """What an agent is made from: the shape of question it answers, a live kind's settings, the errors to give (an
    evaluator's own setup may give its own)."""

    question: str
    agent: AgentSettings | None

    def unknown(self, name: str) -> BcevalError:
        raise NotImplementedError

    def missing_command(self, name: str) -> BcevalError:
        return BcevalError(REVIEW_NEEDS_COMMAND)


@dataclass(frozen=True)
class ReviewSetup(Setup):
    """What an agent answering review questions is made from."""

    question: ClassVar[str] = REVIEW
    cases: Sequence[ReviewCase]  # the run's cases (the oracle answers what they expect)
    corpus: Path
    cache_dir: Path
    hidden: Mapping[str, Path] = field(default_factory=dict)  # what the agent must never reach, by what it is
    agent: AgentSettings | None = None  # a live kind's settings

    def unknown(self, name: str) -> BcevalError:
        return BcevalError(f"unknown adapter '{name}'; choose one of: {', '.join(agent_names(REVIEW))}")


@dataclass(frozen=True)
class ShapedSetup(Setup):
    """What a live agent answering a plugin evaluator's questions is made from (a kind with ANY_SHAPE answers it)."""

    question: str
    shape: Shape
    agent: AgentSettings | None = None

    def unknown(self, name: str) -> BcevalError:
        return BcevalError(f"--adapter {name}: a {self.question} question is answered by a live kind (command)")


ANY_SHAPE = "*"  # in a kind's questions: it answers any question whose setup brings its own Shape


_KINDS: dict[str, tuple[Capabilities, Callable[[Any], Agent]]] = {}  # name -> what it can do, its factory


def agent(name: str, **can: Any) -> Callable[[Callable[[Any], Agent]], Callable[[Any], Agent]]:
    """Register the decorated factory (setup -> agent) as the kind `name`; `can`: the fields of Capabilities."""

    def register(make: Callable[[Any], Agent]) -> Callable[[Any], Agent]:
        if name in _KINDS:
            raise ValueError(f"agent kind '{name}' is registered twice")
        _KINDS[name] = (Capabilities(**can), make)
        return make

    return register


def agent_names(question: str = REVIEW) -> tuple[str, ...]:
    """The registered kinds that answer `question`, in registration order."""
    return tuple(name for name, (can, _) in _KINDS.items() if question in can.questions)


def capabilities(name: str) -> Capabilities:
    return _KINDS[name][0] if name in _KINDS else Capabilities(questions=())  # an unknown name can do nothing


def make_agent(name: str, setup: Setup) -> Agent:
    """The one factory: an agent of kind `name` for the setup's question shape."""
    can = capabilities(name)
    if not (setup.question in can.questions or (ANY_SHAPE in can.questions and isinstance(setup, ShapedSetup))):
        raise setup.unknown(name)
    if can.live and setup.agent is None:
        raise setup.missing_command(name)
    return _KINDS[name][1](setup)
