"""Experiment files (`evaluation/experiments/<name>.yaml`), checked by the pydantic models below (the source of
schemas/experiment.schema.json); every error names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, ValidationInfo, field_validator

from bceval.config import ADAPTERS, ARM_CHOICES, ISOLATIONS, RUN_NAME, SANDBOXES
from bceval.errors import BcevalError
from bceval.evaluators.registry import evaluator_names
from bceval.jsonio import read_regular_text
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
    agent: str | None = Field(default=None, description="claude-code or codex: the command adapter with that CLI.")
    model: str | None = None
    isolation: str | None = Field(default=None, description=f"One of {', '.join(ISOLATIONS)}.")
    sandbox: str | None = Field(default=None, description=f"One of {', '.join(SANDBOXES)}.")
    sandboxAllow: list[str] | None = None
    sandboxAllowRw: list[str] | None = None
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
    knowledge: Literal["embedded", "bounded"] | None = Field(
        default=None,
        description="The api adapter: embedded (default: the request holds the candidate articles) or bounded (the "
        "agent finds them with its search_knowledge and get_articles tools).",
    )

    @field_validator("adapter", "isolation", "sandbox", "agent")
    @classmethod
    def _one_of(cls, value: str | None, info: ValidationInfo) -> str | None:
        allowed = ARM_CHOICES[info.field_name]
        if value is not None and value not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return value


# Arm fields an arm's settings carry only when given, so the records of experiments without them stay as they were.
OPTIONAL_ARM_FIELDS = ("baseUrl", "requireRead", "knowledge", "agent")
# The arm fields that make one arm's question different from another's (the report names those that differ).
ARM_FIELDS = tuple(name for name in ArmSettings.model_fields if name not in OPTIONAL_ARM_FIELDS)


class Arm(ArmSettings):
    name: str = Field(pattern=NAME_PATTERN, description="Letters, digits, '.', '_' and '-'; unique.")


class Stop(StrictModel):
    """When an experiment may stop before its last epoch (a group sequential design: docs/experiments.md)."""

    when: Literal["decided", "never"] = Field(
        default="never",
        description="decided: answer epoch by epoch and stop once the verdict is clear; never: answer every epoch.",
    )
    effect: float = Field(default=0.2, gt=0, lt=1, description="The smallest mean per-case difference worth finding.")
    power: float = Field(default=0.8, gt=0, lt=1, description="The chance of finding it; futility spends 1 - power.")
    maxEpochs: int = Field(default=8, ge=1, le=100, description="The most epochs the design may use (its last look).")


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
    stop: Stop | None = Field(default=None, description="Stop early once the verdict is clear; unset: never.")
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


class Positions:
    """Line numbers of the YAML nodes, so an error can name the line of the field it is about."""

    def __init__(self, node: Any, path: Path) -> None:
        self.node = node
        self.path = path

    def line(self, location: tuple[Any, ...], key: bool = False) -> int:
        """The line of the node `location` leads to (with `key`, of its mapping key, e.g. an unknown field), or of
        the last node it reaches."""
        node = self.node
        for index, part in enumerate(location):
            if isinstance(node, yaml.MappingNode):
                pair = next(((k, v) for k, v in node.value if k.value == part), None)
                if pair is not None and key and index == len(location) - 1:
                    return pair[0].start_mark.line + 1
                child = pair and pair[1]
            else:
                fits = isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
                child = node.value[part] if fits else None
            if child is None:
                break
            node = child
        return node.start_mark.line + 1

    def where(self, location: tuple[Any, ...]) -> str:
        """Where a value is: its file and line, and the field."""
        return f"{self.path}, line {self.line(location)}: field '{field_path(location)}'"


def field_path(location: tuple[Any, ...]) -> str:
    return ".".join(f"[{part}]" if isinstance(part, int) else str(part) for part in location).replace(".[", "[")


def load_experiment(path: Path) -> tuple[ExperimentFile, Positions]:
    """The checked experiment file and where its fields are; one-line errors naming file, line and field."""
    try:
        text = read_regular_text(path, "utf-8")
    except FileNotFoundError:
        raise BcevalError(f"{path}: experiment file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BcevalError(f"{path}: cannot read the experiment file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BcevalError(f"{path}{line}: not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise BcevalError(f"{path}, line 1: an experiment file is a mapping with name, arms, ... at the top")
    positions = Positions(node, path)
    try:
        return ExperimentFile.model_validate(data), positions
    except ValidationError as exc:
        first = exc.errors()[0]
        location = tuple(first["loc"])
        field, message = field_path(location), first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            line, text = positions.line(location, key=True), f"unknown field '{field}'"
            if location[-1] == "maxCost":  # it was an arm's field once; it bounds the whole experiment now
                text += ": maxCost bounds the whole experiment, so it goes at the top of the file, beside name"
        elif first["type"] == "missing":
            line, text = positions.line(location[:-1]), f"field '{field}' is missing"
        else:
            line, text = positions.line(location), f"field '{field or 'experiment'}': {message}"
        raise BcevalError(f"{path}, line {line}: {text}") from None
