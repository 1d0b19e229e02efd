"""argparse from the options table (bceval.config.options and .commands): every command's flags as declared."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from bceval.config import SOURCES
from bceval.config.commands import COMMANDS
from bceval.config.options import OPTIONS
from bceval.errors import did_you_mean


class Parser(argparse.ArgumentParser):
    """--help opens with the one-line description, then the usage; a usage error is one line naming the flag."""

    def error(self, message: str) -> NoReturn:
        # argparse prints the whole usage block first; the line that names the flag is all a user needs
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """As argparse's, and a mistyped flag names the closest flag the chosen (sub)command takes."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen: argparse.ArgumentParser | None = self
            while chosen is not None:  # down to the subcommand (and mode) given
                parser, chosen = chosen, None
                for action in parser._actions:
                    if isinstance(action, argparse._SubParsersAction):
                        chosen = action.choices.get(getattr(parsed, action.dest, None))
            guess = did_you_mean(extras[0].split("=")[0], parser._option_string_actions)
            self.error(f"unrecognized arguments: {' '.join(extras)}{guess}")
        return parsed

    def format_help(self) -> str:
        text = super().format_help()
        if not self.description:
            return text
        return self.description + "\n\n" + text.replace(self.description + "\n\n", "", 1)


_TYPES: dict[str, Any] = {"int": int, "float": float}


def add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add the options `command` takes (a key of COMMANDS), in the table's order, with this command's help."""
    groups: dict[str, Any] = {}
    for use in COMMANDS[command]:
        option = OPTIONS[use.name]
        if use.group is not None and use.group not in groups:
            exclusive = use.group == "exclusive"
            groups[use.group] = (
                parser.add_mutually_exclusive_group() if exclusive else parser.add_argument_group(use.group)
            )
        target: Any = parser if use.group is None else groups[use.group]
        keywords: dict[str, Any] = {"help": (option.help if use.help is None else use.help) or None}
        metavar = use.metavar or option.metavar
        if metavar is not None and option.kind not in ("switch", "bool"):
            keywords["metavar"] = metavar
        if use.checked and option.choices is not None:
            keywords["choices"] = option.allowed()
        if option.parser_default:
            keywords["default"] = option.default
        if option.kind == "positional":
            target.add_argument(option.name, **keywords, **({"nargs": "?"} if option.parser_default else {}))
            continue
        if option.kind == "switch":
            keywords["action"] = "store_true"
        elif option.kind == "bool":  # a setting: not given is None, so the environment and pyproject.toml count
            keywords.update(action="store_true", default=None)
        elif option.kind in ("texts", "paths"):
            keywords["action"] = "append"
        elif option.kind in _TYPES:
            keywords["type"] = _TYPES[option.kind]
        if use.required:
            keywords["required"] = True
        target.add_argument(*option.flags, dest=option.name, **keywords)


def settings_flags(args: argparse.Namespace, names: Any = None) -> dict[str, Any]:
    """The settings among the parsed arguments (all of them, or only `names`), for load_settings."""
    wanted = SOURCES if names is None else names
    return {key: value for key, value in vars(args).items() if key in SOURCES and key in wanted}


def add_command(commands: argparse._SubParsersAction, name: str, text: str) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with its one-line description, with its options from the table."""
    parser = commands.add_parser(name, help=text, description=sentence(text))
    add_options(parser, name)
    return parser


def sentence(text: str) -> str:
    """A one-line help text as the sentence that opens the command's --help."""
    return text[0].upper() + text[1:] + "."
