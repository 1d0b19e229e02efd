"""Strict JSON for guidance inputs (spec §1.1) and the common field validators (§1.2). Messages name a label
chosen by bceval, never the offending value, so a model's text never reaches the console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bceval.errors import BcevalError
from bceval.evaluators.guidance import GuidanceError
from bceval.evaluators.guidance.paths import safe_path
from bceval.jsonio import MAX_JSON_BYTES, parse_json, read_regular_bytes

DIMENSIONS = ("bc-version", "technologies", "countries", "application-area")
CONTEXT_LISTS = ("technologies", "countries", "application-area", "unknown")


def _strict_problem(label: str) -> GuidanceError:
    return GuidanceError(f"{label} must be strict JSON with unique members (UTF-8, at most 32 MiB, depth 64)")


def _has_folded_duplicate(value: Any) -> bool:
    """Member names must be unique ignoring case, in every object (exact repeats are caught earlier)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len({key.lower() for key in item}) != len(item):
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def parse_strict(data: bytes, label: str) -> Any:
    """Parse untrusted bytes; any problem becomes the one `strict JSON` message for `label`."""
    try:
        value = parse_json(data, label)  # size, UTF-8, unique members, depth
    except BcevalError:  # its message may quote a member name from the document: never show it
        raise _strict_problem(label) from None
    if _has_folded_duplicate(value):
        raise _strict_problem(label)
    return value


def read_strict(path: Path, label: str) -> Any:
    """A safe, regular file of at most 32 MiB, parsed strictly."""
    checked = safe_path(path, label, kind="file")
    try:
        if checked.stat().st_size > MAX_JSON_BYTES:
            raise _strict_problem(label)
        data = read_regular_bytes(checked)
    except OSError:
        raise GuidanceError(f"{label} could not be read safely") from None
    return parse_strict(data, label)


def require_object(value: Any, label: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise GuidanceError(f"{label} must be a JSON object")
    for name in required:
        if name not in value:  # a null value counts as present, as in the reference
            raise GuidanceError(f"{label} is missing required field '{name}'")
    return value


def is_text(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def require_string(value: Any, label: str) -> str:
    if not is_text(value):
        raise GuidanceError(f"{label} must be a non-empty string")
    return value


def require_array(value: Any, label: str, *, strings: bool = False, non_empty: bool = False) -> list[Any]:
    if not isinstance(value, list):
        raise GuidanceError(f"{label} must be a JSON array")
    if non_empty and not value:
        raise GuidanceError(f"{label} must not be empty")
    if strings:
        for item in value:
            require_string(item, f"{label} entry")
    return value


def require_int(value: Any, label: str) -> int:
    if type(value) is not int or value < 0:  # JSON true is not an integer, nor is 1.0
        raise GuidanceError(f"{label} must be a non-negative integer")
    return value


def require_bool(value: Any, label: str) -> bool:
    if not isinstance(value, bool):
        raise GuidanceError(f"{label} must be a JSON boolean")
    return value


def check_context(value: Any, label: str, extra_lists: tuple[str, ...] = ()) -> dict[str, Any]:
    """The applicability context of a manifest case or a report (§1.2)."""
    context = require_object(value, label, ("bc-version", *CONTEXT_LISTS, *extra_lists))
    bc_version = require_string(context["bc-version"], f"{label}.bc-version")
    for name in CONTEXT_LISTS:
        items = require_array(context[name], f"{label}.{name}", strings=True)
        if len({item.lower() for item in items}) != len(items):
            raise GuidanceError(f"{label}.{name} contains duplicates (compared ignoring case)")
    for name in extra_lists:
        require_array(context[name], f"{label}.{name}", strings=True)
    unknown = context["unknown"]
    for item in unknown:
        if item not in DIMENSIONS:
            raise GuidanceError(f"{label}.unknown entry must name a valid dimension; it has an invalid dimension")
    missing = []
    if bc_version.lower() == "unknown" and "bc-version" not in unknown:
        missing.append("bc-version")
    for name in DIMENSIONS[1:]:
        items = context[name]
        if (not items or any(item.lower() == "unknown" for item in items)) and name not in unknown:
            missing.append(name)
    if missing:
        raise GuidanceError(
            f"{label}: Unavailable applicability dimensions must be listed in {label}.unknown ({', '.join(missing)})"
        )
    return context
