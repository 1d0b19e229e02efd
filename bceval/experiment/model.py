"""Experiment files (`evaluation/experiments/<name>.yaml`): matched arms x repeated epochs over the same cases.

Read with PyYAML's safe loader. A file whose values are of the types YAML gives and in range is checked here in
plain Python (no pydantic to import: `experiment run` and `report` start sooner); any other goes to the pydantic
model of `bceval.experiment.file_schema` (the source of the JSON Schema in `schemas/`), which converts or refuses
it. Every error names the file, the line and the field.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from bceval.config import ARM_CHOICES, RUN_NAME
from bceval.errors import BcevalError
from bceval.evaluators.registry import evaluator_names
from bceval.jsonio import read_regular_text

# The arm fields that make one arm's question different from another's (the report names those that differ).
ARM_FIELDS = (
    "corpus",
    "ref",
    "manifest",
    "evaluator",
    "workspaceMap",
    "adapter",
    "command",
    "model",
    "isolation",
    "sandbox",
    "sandboxAllow",
    "guidance",
    "checks",
)
# Arm fields an arm's settings carry only when given, so the records of experiments without them stay as they were.
OPTIONAL_ARM_FIELDS = ("baseUrl", "requireRead")


@dataclass(frozen=True, kw_only=True)
class ArmSettings:
    """What an arm (or `defaults`) sets; anything unset (None) comes from `defaults`, then from bceval's settings.
    The fields, what they mean and their checks: `bceval.experiment.file_schema`."""

    corpus: str | None = None
    ref: str | None = None
    manifest: str | None = None
    evaluator: str | None = None
    workspaceMap: str | None = None
    adapter: str | None = None
    command: str | None = None
    model: str | None = None
    isolation: str | None = None
    sandbox: str | None = None
    sandboxAllow: list[str] | None = None
    guidance: str | None = None
    checks: str | None = None
    baseUrl: str | None = None
    requireRead: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Arm(ArmSettings):
    name: str


@dataclass(frozen=True, kw_only=True)
class ExperimentFile:
    name: str
    cases: list[str] = field(default_factory=list)
    k: list[str] = field(default_factory=list)
    epochs: int = 1
    alpha: float = 0.05
    seed: int = 0
    looks: int | None = None
    maxCost: float | None = None
    defaults: ArmSettings = field(default_factory=ArmSettings)
    arms: list[Arm]


GUIDANCE_CHOICES = ("none", "plan", "implementation", "both")
_TEXT_FIELDS = tuple(f.name for f in fields(ArmSettings) if f.type == "str | None")


def _is_int(value: Any) -> bool:
    return type(value) is int  # not bool, which pydantic would turn into 0 or 1


def _text_list(value: Any) -> bool:
    return type(value) is list and all(type(item) is str for item in value)


def _plain_settings(data: Any, kind: type[ArmSettings]) -> Any:
    """The arm (or defaults) a mapping of YAML's own types describes when it is plainly valid, else None."""
    if type(data) is not dict or not set(data) <= {f.name for f in fields(kind)}:
        return None
    if kind is Arm and not (type(data.get("name")) is str and RUN_NAME.fullmatch(data["name"])):
        return None
    known_evaluators = evaluator_names()
    for name, value in data.items():
        if value is None or name == "name":
            continue
        if name in _TEXT_FIELDS:
            if type(value) is not str or (name in ARM_CHOICES and value not in ARM_CHOICES[name]):
                return None
            if (name == "evaluator" and value not in known_evaluators) or (
                name == "guidance" and value not in GUIDANCE_CHOICES
            ):
                return None
        elif name == "sandboxAllow":
            if not _text_list(value):
                return None
        elif name == "requireRead":
            if type(value) is not bool:
                return None
    return kind(**data)


def _plain_experiment(data: dict[Any, Any]) -> ExperimentFile | None:
    """The experiment a mapping of YAML's own types describes when it is plainly valid (nothing to convert, nothing
    out of range), else None: then the pydantic model decides, with its conversions and messages."""
    if not set(data) <= {f.name for f in fields(ExperimentFile)}:
        return None
    name = data.get("name")
    if type(name) is not str or not RUN_NAME.fullmatch(name):
        return None
    if not all(_text_list(data.get(key, [])) for key in ("cases", "k")):
        return None
    epochs, alpha, seed = data.get("epochs", 1), data.get("alpha", 0.05), data.get("seed", 0)
    looks, limit = data.get("looks"), data.get("maxCost")
    if not (_is_int(epochs) and 1 <= epochs <= 1000 and type(alpha) is float and 0 < alpha < 1 and _is_int(seed)):
        return None
    if not (looks is None or (_is_int(looks) and 1 <= looks <= 20)):
        return None
    if not (limit is None or (type(limit) is float and limit >= 0)):
        return None
    defaults = _plain_settings(data.get("defaults", {}), ArmSettings)
    arms = data.get("arms")
    if defaults is None or type(arms) is not list or len(arms) < 2:
        return None
    checked = [_plain_settings(arm, Arm) for arm in arms]
    names = [arm.name.lower() for arm in checked if arm is not None]
    if len(names) != len(arms) or len(set(names)) != len(names):
        return None
    values = {key: value for key, value in data.items() if key not in ("defaults", "arms")}
    return ExperimentFile(**values, defaults=defaults, arms=checked)


def _from_model(model: Any) -> ExperimentFile:
    """The pydantic model's experiment (its values as it converted them) as bceval's own."""
    values = {f.name: getattr(model, f.name) for f in fields(ExperimentFile)}

    def settings(kind: type[ArmSettings], item: Any) -> Any:
        return kind(**{f.name: getattr(item, f.name) for f in fields(kind)})

    values["defaults"] = settings(ArmSettings, model.defaults)
    values["arms"] = [settings(Arm, arm) for arm in model.arms]
    return ExperimentFile(**values)


def experiment_document(experiment: ExperimentFile) -> dict[str, Any]:
    """The fields of `experiment` that differ from their defaults, nested ones too, as a file would give them."""

    def differing(item: Any) -> dict[str, Any]:
        document = {}
        for f in fields(item):
            value = getattr(item, f.name)
            default = f.default_factory() if f.default_factory is not MISSING else f.default
            if value == default:
                continue
            if isinstance(value, ArmSettings):
                value = differing(value)
            elif isinstance(value, list):
                value = [differing(entry) if isinstance(entry, ArmSettings) else entry for entry in value]
            document[f.name] = value
        return document

    return differing(experiment)


class InvalidExperiment(Exception):
    """The first problem the pydantic model found: its error record (loc, type, msg)."""

    def __init__(self, error: Any) -> None:
        super().__init__(error["msg"])
        self.error = error


def check_experiment(data: dict[Any, Any]) -> ExperimentFile:
    """The experiment a parsed file (or the document `experiment ab` makes) describes; InvalidExperiment when it
    is not valid."""
    plain = _plain_experiment(data)
    if plain is not None:
        return plain
    from pydantic import ValidationError

    from bceval.experiment.file_schema import ExperimentFile as FileModel

    try:
        return _from_model(FileModel.model_validate(data))
    except ValidationError as exc:
        raise InvalidExperiment(exc.errors()[0]) from None


class Positions:
    """Line numbers of the YAML nodes, so an error can name the line of the field it is about."""

    def __init__(self, node: Any) -> None:
        self.node = node

    def line(self, location: tuple[Any, ...]) -> int:
        node, best = self.node, self.node
        for part in location:
            child = None
            if isinstance(node, yaml.MappingNode):
                child = next((value for key, value in node.value if key.value == part), None)
                if child is None:
                    key = next((key for key, _ in node.value if key.value == part), None)
                    child = key
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                child = node.value[part]
            if child is None:
                break
            node = best = child
        return (best.start_mark.line + 1) if best is not None else 1

    def key_line(self, location: tuple[Any, ...]) -> int:
        """The line of a mapping key itself (e.g. an unknown field)."""
        *parents, last = location
        node = self.node
        for part in parents:
            if isinstance(node, yaml.MappingNode):
                node = next((value for key, value in node.value if key.value == part), node)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
        if isinstance(node, yaml.MappingNode):
            key = next((key for key, _ in node.value if key.value == last), None)
            if key is not None:
                return key.start_mark.line + 1
        return self.line(tuple(parents))


def _field(location: tuple[Any, ...]) -> str:
    return ".".join(f"[{part}]" if isinstance(part, int) else str(part) for part in location).replace(".[", "[")


def load_experiment(path: Path) -> tuple[ExperimentFile, Positions]:
    """The checked experiment file and where its fields are; one-line errors naming file, line and field."""
    try:
        text = read_regular_text(path, "utf-8")
    except FileNotFoundError:
        raise BcevalError(f"{path}: experiment file not found") from None
    except OSError as exc:
        raise BcevalError(f"{path}: cannot read the experiment file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise BcevalError(f"{path}: cannot read the experiment file: {exc}") from None
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
    positions = Positions(node)
    try:
        return check_experiment(data), positions
    except InvalidExperiment as exc:
        first = exc.error
        location = tuple(first["loc"])
        if first["type"] == "extra_forbidden":
            line = positions.key_line(location)
            hint = ""
            if location[-1] == "maxCost":  # it was an arm's field once; it bounds the whole experiment now
                hint = ": maxCost bounds the whole experiment, so it goes at the top of the file, beside name"
            raise BcevalError(f"{path}, line {line}: unknown field '{_field(location)}'{hint}") from None
        if first["type"] == "missing":
            line = positions.line(location[:-1])
            raise BcevalError(f"{path}, line {line}: field '{_field(location)}' is missing") from None
        message = first["msg"].removeprefix("Value error, ")
        line = positions.line(location)
        raise BcevalError(f"{path}, line {line}: field '{_field(location) or 'experiment'}': {message}") from None
