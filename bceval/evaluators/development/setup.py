"""What an agent answering development requests is made from (bceval.agents.registry.make_agent takes it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from bceval.agents.registry import Shape
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.evaluators.base import DEVELOPMENT


@dataclass(frozen=True)
class DevelopmentSetup:
    """What an agent answering development requests is made from: the development evaluator's shape."""

    question: ClassVar[str] = DEVELOPMENT
    shape: Shape
    agent: AgentSettings | None = None

    def unknown(self, name: str) -> BcevalError:
        return BcevalError(f"--adapter {name}: development runs take the command or the api adapter")

    def missing_command(self, name: str) -> BcevalError:
        if name == "api":
            return BcevalError("run --adapter api needs its endpoint settings (--model, --base-url, ...)")
        return BcevalError("run --adapter command needs --command (or BCEVAL_COMMAND), the agent command line")
