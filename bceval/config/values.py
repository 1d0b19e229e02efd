"""Settings' values as their kinds want them, from flags, the environment and pyproject.toml's [tool.bceval]."""

from __future__ import annotations

import math
import os
import tomllib
from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.jsonio import read_regular_text
from bceval.prices import price_table, read_price_file

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


def convert(value: Any, kind: str, base: Path, where: str) -> Any:
    """A setting's value of `kind` from a flag, the environment or pyproject.toml (`where` names it in errors);
    relative paths resolve against `base`."""
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise BcevalError(f"{where} must be true or false, got '{value}'")
    if kind == "prices":
        if isinstance(value, dict):  # [tool.bceval.prices."<model>"] tables
            return price_table(value, where)
        if not isinstance(value, str) or not value:
            raise BcevalError(f"{where} must be a price file (YAML) or, in pyproject.toml, a table of models")
        return read_price_file((base / value).resolve())
    if kind == "path":
        if not isinstance(value, str) or not value:
            raise BcevalError(f"{where} must be a non-empty path")
        return (base / value).resolve()
    if kind == "text":
        if not isinstance(value, str):
            raise BcevalError(f"{where} must be a string")
        return value
    if kind in ("texts", "paths"):
        # a list from a flag or pyproject.toml; one string from the environment, split on , (texts) or the
        # platform's path separator (paths, so Windows drive letters survive)
        if isinstance(value, str):
            value = [part.strip() for part in value.split("," if kind == "texts" else os.pathsep) if part.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(item, str) and item for item in value):
            raise BcevalError(f"{where} must be a list of non-empty strings")
        return tuple((base / item).resolve() for item in value) if kind == "paths" else tuple(value)
    # a whole number for an int setting, a finite one for a float setting; true/false are no numbers
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or (kind == "int" and not float(number).is_integer()):
        wanted = "a whole number" if kind == "int" else "a number"
        raise BcevalError(f"{where} must be {wanted}, got '{value}'")
    return int(number) if kind == "int" else float(number)


def bceval_table(cwd: Path) -> tuple[Path, dict[str, Any]]:
    """(cwd/pyproject.toml, its [tool.bceval] table: {} when there is no file or no table)."""
    pyproject = cwd / "pyproject.toml"
    if not pyproject.is_file():
        return pyproject, {}
    try:
        data = tomllib.loads(read_regular_text(pyproject, "utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BcevalError(f"{pyproject}: cannot read [tool.bceval]: {exc}") from None
    return pyproject, data.get("tool", {}).get("bceval", {})
