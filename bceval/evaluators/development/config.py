"""`[tool.bceval.development]` in pyproject.toml (spec §11.6); paths are relative to pyproject.toml's folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bceval.config import bceval_table
from bceval.config.options import OPTIONS
from bceval.errors import BcevalError
from bceval.evaluators.development import anchored  # not .checks: settings are read by every command, yaml need not be

PREFIX = "development_"
TABLE = "[tool.bceval.development]"


def development_pyproject(cwd: Path) -> dict[str, Any]:
    """The [tool.bceval.development] values by key (without `development_`), converted; {} without the table."""
    pyproject, found = bceval_table(cwd)
    table = found.get("development")
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise BcevalError(f"{pyproject}: {TABLE} must be a table")
    keys = {o.name.removeprefix(PREFIX): o for o in OPTIONS.values() if o.part == "development" and o.pyproject}
    unknown = sorted(set(table) - set(keys))
    if unknown:
        raise BcevalError(f"{pyproject}: {TABLE} has unknown key '{unknown[0]}' (known: {', '.join(sorted(keys))})")
    base = pyproject.parent.resolve()
    values: dict[str, Any] = {"pyproject": pyproject.resolve()}
    for key, value in table.items():
        option, where = keys[key], f"{pyproject}: {TABLE} {key}"
        if key == "checks" and isinstance(value, dict):  # inline checks, read by the checks file's rules
            values["inline_checks"] = {"checks": value}
        elif key == "workspaces":
            if not isinstance(value, dict):
                raise BcevalError(f"{where} must be a table of manifest id -> starting repository")
            for case, source in value.items():
                if not isinstance(source, str) or not source:
                    raise BcevalError(f"{where}.{case} must be a folder or a git repository@commit")
            values[key] = {case: anchored(source, base) for case, source in value.items()}
        elif option.kind == "table":
            if not isinstance(value, dict):
                raise BcevalError(f"{where} must be a table")
            values[key] = value
        elif option.kind == "path":
            if not isinstance(value, str) or not value:
                raise BcevalError(f"{where} must be a non-empty path")
            values[key] = (base / value).resolve()
        elif option.kind == "switch":
            if not isinstance(value, bool):
                raise BcevalError(f"{where} must be true or false")
            values[key] = value
        else:
            allowed = option.allowed()
            if not isinstance(value, str) or (allowed is not None and value not in allowed):
                wanted = f"one of {', '.join(allowed)}" if allowed else "a string"
                raise BcevalError(f"{where} must be {wanted}")
            values[key] = value
    for key in ("toolchain", "cases"):
        if key in values and "inline_checks" not in values:
            raise BcevalError(f"{pyproject}: {TABLE} {key} applies to inline checks only (checks = {{...}})")
        if key in values:
            values["inline_checks"][key] = values.pop(key)
    return values
