"""The experiment file as pydantic models: the source of schemas/experiment.schema.json, and the checks of a file
that is not plainly valid.

bceval reads an experiment file with `bceval.experiment.model`, whose plain checks take a file with the field
types YAML gives; anything else (a missing or unknown field, a value of another type, one out of range) comes
here, so such a file is accepted, converted or refused exactly as this model does, with its messages. A test
checks both name the same fields with the same defaults, and agree on every file the plain checks accept.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from bceval.config import ADAPTERS, ARM_CHOICES, ISOLATIONS, RUN_NAME, SANDBOXES
from bceval.evaluators.registry import evaluator_names
from bceval.models import StrictModel

NAME_PATTERN = RUN_NAME.pattern

EVALUATORS = Literal[evaluator_names()]  # type: ignore[valid-type]  # the registered evaluators, in their order


class ArmSettings(StrictModel):
    """What an arm (or `defaults`) sets; anything unset comes from `defaults`, then from bceval's settings."""

    corpus: str | None = Field(default=None, description="Corpus root, relative to the experiment file's folder.")
    ref: str | None = Field(
        default=None,
        description="A git ref of the corpus repository; resolved to its commit and exported once (the repository "
        "is only read).",
    )
    manifest: str | None = Field(
        default=None, description="Review (or guidance) manifest, relative to the corpus (or absolute)."
    )
    evaluator: EVALUATORS | None = Field(
        default=None, description="review (default), a guidance evaluator (needs workspaceMap), or development."
    )
    workspaceMap: str | None = Field(default=None, description="Guidance arms: manifest id -> workspace map.")
    adapter: str | None = Field(default=None, description=f"One of {', '.join(ADAPTERS)}.")
    command: str | None = None
    model: str | None = None
    isolation: str | None = Field(default=None, description=f"One of {', '.join(ISOLATIONS)}.")
    sandbox: str | None = Field(default=None, description=f"One of {', '.join(SANDBOXES)}.")
    sandboxAllow: list[str] | None = None
    guidance: Literal["none", "plan", "implementation", "both"] | None = Field(
        default=None,
        description="Development arms: the guidance the agent gets (none, plan (default), implementation, both).",
    )
    checks: str | None = Field(
        default=None,
        description="Development arms: the gate configuration, relative to the corpus (default "
        "evaluation/development-checks.yaml).",
    )
    baseUrl: str | None = Field(default=None, description="The api adapter's chat-completions endpoint.")
    requireRead: bool | None = Field(
        default=None, description="A citation without a complete read of the article fails its case."
    )

    @field_validator("adapter", "isolation", "sandbox")
    @classmethod
    def _one_of(cls, value: str | None, info: ValidationInfo) -> str | None:
        allowed = ARM_CHOICES[info.field_name]
        if value is not None and value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value


class Arm(ArmSettings):
    name: str = Field(pattern=NAME_PATTERN, description="Letters, digits, '.', '_' and '-'; unique.")


class ExperimentFile(StrictModel):
    name: str = Field(pattern=NAME_PATTERN)
    cases: list[str] = Field(default_factory=list, description="Case ids, as --case takes them.")
    k: list[str] = Field(default_factory=list, description="Globs over case id and domain, as -k takes them.")
    epochs: int = Field(default=1, ge=1, le=1000, description="Samples per case and arm.")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Significance level of the paired test.")
    seed: int = Field(default=0, description="Seed of every bootstrap and Monte Carlo draw.")
    looks: int | None = Field(
        default=None,
        ge=1,
        le=20,
        description="Planned reports as epochs are added (O'Brien-Fleming alpha spending over them); unset: one look.",
    )
    maxCost: float | None = Field(
        default=None,
        ge=0,
        description="Budget in USD of the whole experiment (every arm and epoch; default: --max-cost): no new case "
        "of a live arm starts once the experiment's known cost reaches it.",
    )
    defaults: ArmSettings = Field(default_factory=ArmSettings)
    arms: list[Arm] = Field(min_length=2, description="The first arm is the control.")

    @field_validator("arms")
    @classmethod
    def _unique_names(cls, arms: list[Arm]) -> list[Arm]:
        names = [arm.name.lower() for arm in arms]
        repeated = next((name for name in names if names.count(name) > 1), None)
        if repeated:
            raise ValueError(f"arm name '{repeated}' is used twice")
        return arms
