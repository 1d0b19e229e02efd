"""The registered evaluators: bceval's own, then those other distributions declare in the entry-point group
`bceval.evaluators` (the protocol is bceval.evaluators.base). The frame finds every evaluator here."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points

from bceval.errors import BcevalError
from bceval.evaluators.base import Command, Evaluator

GROUP = "bceval.evaluators"
BUILT_IN = "built-in"
DEFAULT = "review"

# bceval's own, in the order they are listed: name -> ("module:attribute", the CLI subcommands it adds), each
# imported when first asked for; naming the subcommands here lets a command load only the evaluator it runs (a
# test keeps them equal to each one's `commands()`)
_OWN = {
    "review": ("bceval.evaluators.review.plugin:REVIEW_EVALUATOR", ("health", "skills")),
    "plan": ("bceval.evaluators.guidance.plugin:PLAN_EVALUATOR", ("guidance",)),
    "implementation": ("bceval.evaluators.guidance.plugin:IMPLEMENTATION_EVALUATOR", ("guidance",)),
    "development": (
        "bceval.evaluators.development.plugin:DEVELOPMENT_EVALUATOR",
        ("development", "evidence", "findings"),
    ),
    "pr-review": ("bceval.evaluators.pr_review.plugin:PR_REVIEW_EVALUATOR", ("pr-review", "judge")),
}


@dataclass(frozen=True)
class Registered:
    name: str
    origin: str  # BUILT_IN, or the distribution that provides it
    where: str  # "module:attribute"
    commands: tuple[str, ...] | None = None  # its CLI subcommands; None: a plugin's, known once it is loaded


@cache
def registered() -> tuple[Registered, ...]:
    """Every evaluator bceval can use: its own first, then the entry points (a plugin cannot take a built-in's
    name, and two plugins cannot take the same one)."""
    found = [Registered(name, BUILT_IN, where, commands) for name, (where, commands) in _OWN.items()]
    for point in entry_points(group=GROUP):
        origin = point.dist.name if point.dist is not None else "unknown distribution"
        clash = next((r for r in found if r.name == point.name), None)
        if clash is not None:
            raise BcevalError(
                f"evaluator '{point.name}' of {origin} clashes with the one of {clash.origin}: uninstall one of them"
            )
        found.append(Registered(point.name, origin, point.value))
    return tuple(found)


def evaluator_names() -> tuple[str, ...]:
    return tuple(r.name for r in registered())


@cache
def evaluator(name: str) -> Evaluator:
    """The registered evaluator of that name (a BcevalError naming the known ones when there is none)."""
    entry = next((r for r in registered() if r.name == name), None)
    if entry is None:
        raise BcevalError(f"no evaluator named '{name}' (registered: {', '.join(evaluator_names())})")
    module, _, attribute = entry.where.partition(":")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise BcevalError(f"evaluator '{name}' of {entry.origin} cannot be loaded from {entry.where}: {exc}") from None
    if not isinstance(found, Evaluator):
        raise BcevalError(f"evaluator '{name}' of {entry.origin} ({entry.where}) does not keep the Evaluator protocol")
    return found


@cache
def usable() -> tuple[Evaluator, ...]:
    """Every evaluator that loads. One that does not is left out of the other commands (`bceval evaluators` lists it
    with why, and a command naming it gives the error), so a broken plugin breaks only itself."""
    found = []
    for name in evaluator_names():
        try:
            found.append(evaluator(name))
        except BcevalError:
            continue
    return tuple(found)


def all_commands() -> dict[str, Command]:
    """Every evaluator's CLI subcommands by name, each once (evaluators of one package share theirs)."""
    seen: dict[str, Command] = {}
    for found in usable():
        for command in found.commands():
            seen.setdefault(command.name, command)
    return seen


def commands_for(name: str) -> dict[str, Command]:
    """The CLI subcommand `name` when one of bceval's own evaluators adds it (only that evaluator is loaded), else
    every evaluator's: a plugin's subcommands are known only once it is loaded."""
    owner = next((r.name for r in registered() if r.commands is not None and name in r.commands), None)
    if owner is None:
        return all_commands()
    return {command.name: command for command in evaluator(owner).commands() if command.name == name}


def all_tasks(inputs: object) -> dict[str, object]:
    """Every evaluator's doit task generators for a graph (bceval.graph.inputs.GraphInputs), each once."""
    made: dict[str, object] = {}
    for found in usable():
        for task, make in found.tasks(inputs).items():
            made.setdefault(task, make)
    return made
