"""docs/settings.md's table, made from the options table: every option a variable or pyproject.toml can set.

Regenerate the page with `python -m bceval.config.table docs/settings.md`; tests/test_docs.py fails when it drifts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bceval.config.commands import COMMANDS
from bceval.config.options import OPTIONS, Option

BEGIN = "<!-- bceval:settings:begin -->"
END = "<!-- bceval:settings:end -->"


def _help(option: Option) -> str:
    """The option's own help, else the first help line a command shows for it."""
    if option.help:
        return option.help
    uses = (use.help for uses in COMMANDS.values() for use in uses if use.name == option.name and use.help)
    return next(uses, "")


def _key(option: Option) -> str:
    if not option.pyproject:
        return ""
    if option.part == "development":
        return f"`development.{option.name.removeprefix('development_')}`"
    return f"`{option.pyproject_key()}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def settings_table() -> str:
    """The Markdown table: one row per option with a variable or a `[tool.bceval]` key, in the table's order."""
    rows = [
        "| setting | flag | environment | `[tool.bceval]` | default | meaning |",
        "|---|---|---|---|---|---|",
    ]
    taken = {use.name for uses in COMMANDS.values() for use in uses}
    for option in OPTIONS.values():
        if not (option.env or option.pyproject):
            continue
        flags = ", ".join(f"`{flag}`" for flag in option.flags) if option.name in taken else ""
        default = "" if option.default in (None, ()) else f"`{option.default}`"
        env = f"`{option.env}`" if option.env else ""
        cells = (f"`{option.name}`", flags, env, _key(option), default)
        meaning = _cell(_help(option)).replace("<", "&lt;")  # `<root>` is no HTML tag
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + f" | {meaning} |")
    return "\n".join(rows) + "\n"


def settings_page(text: str) -> str:
    """`text` with the part between the settings markers replaced by today's table."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{settings_table()}{END}{tail}"


if __name__ == "__main__":  # python -m bceval.config.table docs/settings.md
    page = Path(sys.argv[1])
    page.write_text(settings_page(page.read_text(encoding="utf-8")), encoding="utf-8")
