"""How the reference (PowerShell) reads values (spec §3.3): list wrapping, casts, blank and number text."""

from __future__ import annotations

import math
import re
from typing import Any

from bceval.evaluators.development import DevelopmentError

MISSING = object()  # a member the document does not have (None is JSON null)


def member(value: Any, name: str) -> Any:
    """`value.name`, or MISSING when value is no object or has no such member (names are read exactly)."""
    return value.get(name, MISSING) if isinstance(value, dict) else MISSING


def wrap(value: Any) -> list[Any]:
    """A list stays a list; anything else (null included) is one item; a missing member is no item."""
    if value is MISSING:
        return []
    return value if isinstance(value, list) else [value]


def number_text(value: float | int | bool) -> str:
    """Invariant-culture shortest round-trip text: whole numbers without a decimal, `1E-05` with a capital E."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value).upper() if "e" in repr(value) else repr(value)


def text(value: Any) -> str:
    """PowerShell's [string] cast: null and missing are '', a list its items joined by spaces."""
    if value is MISSING or value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return number_text(value)
    if isinstance(value, list):
        return " ".join(text(item) for item in value)
    return "System.Management.Automation.PSCustomObject"  # what PowerShell prints for an object


def blank(value: Any) -> bool:
    """IsNullOrWhiteSpace of the value's string cast."""
    return text(value).strip() == ""


def same(a: Any, b: Any) -> bool:
    """PowerShell's -eq on two values cast to strings: ignores case."""
    return text(a).lower() == text(b).lower()


def one_of(value: Any, allowed: tuple[str, ...]) -> bool:
    return text(value).lower() in allowed


_NUMERIC = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


def as_double(value: Any, where: str) -> float:
    """[double]: numbers, numeric strings, true (1), null or missing (0); anything else is the reference's crash."""
    if value is MISSING or value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and _NUMERIC.match(value):
        return float(value)
    raise DevelopmentError(f"{where} is not a number")


def as_int(value: Any, where: str) -> int:
    """[int]: [double] rounded half to even (2.5 -> 2, 3.5 -> 4), as PowerShell converts."""
    return round(as_double(value, where))
