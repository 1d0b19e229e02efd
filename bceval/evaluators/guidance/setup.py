"""What an agent answering guidance questions is made from (bceval.agents.registry.make_agent takes it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from bceval.agents.registry import Shape, agent_names
from bceval.agents.settings import AgentSettings
from bceval.errors import BcevalError
from bceval.evaluators.base import GUIDANCE
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.manifest import GuidanceManifest


@dataclass(frozen=True)
class GuidanceSetup:
    """What an agent answering guidance questions is made from."""

    question: ClassVar[str] = GUIDANCE
    manifest: GuidanceManifest
    run_dir: Path
    hidden: Mapping[str, Path] = field(default_factory=dict)
    agent: AgentSettings | None = None
    shape: Shape | None = None  # how a live agent is asked (the guidance evaluator's)

    def unknown(self, name: str) -> BcevalError:
        return GuidanceError(f"unknown guidance adapter '{name}' (available: {', '.join(agent_names(GUIDANCE))})")

    def missing_command(self, name: str) -> BcevalError:
        return GuidanceError("the command adapter needs --command (the agent command line)")
