"""One option of bceval: its flag(s), environment variable, `[tool.bceval]` key, kind, default, choices, range and
help. The table of every option is `bceval.config.options`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# kinds: path, text, int, float, bool (a flag without a value; true/false in the environment and pyproject.toml),
# prices (a YAML file, or in pyproject.toml the table itself: bceval.prices), texts (a list: repeatable flag,
# comma-separated environment), paths (a list: repeatable flag, os.pathsep-separated environment), switch (a flag
# without a value), positional.
# part: the group of settings the option belongs to (bceval.config.Settings), or the command family it serves
# when it is no setting (command, bench, guidance).


@dataclass(frozen=True)
class Option:
    name: str  # the Settings field, or the argparse destination of an option that is no setting
    flags: tuple[str, ...] = ()  # () for a positional argument
    env: str | None = None  # the environment variable, if any
    kind: str = "text"
    part: str = "command"
    default: Any = None  # the value when no source gives one (Settings' defaults come from here)
    choices: tuple[str, ...] | Callable[[], tuple[str, ...]] | None = None
    range: tuple[float, float | None, bool] | None = None  # (lowest, highest, whether the lowest is allowed)
    help: str | None = None
    metavar: str | None = None
    pyproject: bool | str = False  # whether [tool.bceval] may set it (under its name, or this key when a string;
    # part development: the name without development_ under [tool.bceval.development])
    parser_default: bool = False  # argparse fills in the default (the command reads no other source for it)

    def pyproject_key(self) -> str:
        return self.pyproject if isinstance(self.pyproject, str) else self.name

    def allowed(self) -> tuple[str, ...] | None:
        return self.choices() if callable(self.choices) else self.choices
