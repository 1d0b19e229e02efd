"""The review fixture manifest (`evaluation/review-fixtures.json`): problem-listing checks."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bceval.errors import did_you_mean
from bceval.evaluators.review import documents as schema
from bceval.jsonio import parse_json, read_json_bytes

MANIFEST_VERSION = 2
SELECTION = "first-paired-al-article"
THRESHOLDS = ("minimumExpectedRecall", "minimumCleanRate")
THRESHOLD_LABELS = {"minimumExpectedRecall": "Expected-finding recall", "minimumCleanRate": "Clean-control rate"}
# The members the manifest, an override and a waiver may have: the schema model's fields
MANIFEST_MEMBERS = tuple(field.alias or name for name, field in schema.ReviewManifest.model_fields.items())
OVERRIDE_MEMBERS = tuple(schema.DomainOverride.model_fields)
WAIVER_MEMBERS = tuple(schema.CoverageWaiver.model_fields)
STARTER_MANIFEST = {  # what `bceval init` writes: the convention alone, with the strict thresholds
    "$schema": "./review-fixtures.schema.json",
    "version": MANIFEST_VERSION,
    "selection": SELECTION,
    "minimumExpectedRecall": 1.0,
    "minimumCleanRate": 1.0,
    "overrides": {},
    "coverageWaivers": [],
}
# The manifest dialects (review-dialects.md): the layered reference's `additionalArticles`, the forks' `articles`,
# neither (both harnesses derive the same cases) or both (refused).
PLAIN, LAYERED, FORK, MIXED = "plain", "additionalArticles", "articles", "mixed"
WAIVER_PROBLEM = "Each coverage waiver requires non-empty path and reason values."
CURABIS, MICROSOFT = "curabis", "microsoft"  # the case-id schemes of `additionalArticles` (docs/review.md)


@dataclass
class CheckedManifest:
    """What survived the checks: thresholds (None when invalid) and overrides by lower-cased domain."""

    thresholds: dict[str, float | None] = field(default_factory=dict)
    overrides: dict[str, tuple[str, schema.DomainOverride]] = field(default_factory=dict)
    override_keys: list[str] = field(default_factory=list)  # every key, valid or not, in file order
    problems: list[str] = field(default_factory=list)
    waivers: list[str] = field(default_factory=list)  # accepted coverage waiver paths, as written
    # problems of the coverage waivers: they come after the unknown-override-domain problems (cases.py)
    waiver_problems: list[str] = field(default_factory=list)
    dialect: str = PLAIN


def by_convention() -> CheckedManifest:
    """No manifest: the corpus's conventions alone, judged by the strictest thresholds (1 and 1)."""
    return CheckedManifest(thresholds={name: 1.0 for name in THRESHOLDS})


def read_manifest(path: Path | None, additional_ids: str = CURABIS) -> CheckedManifest:
    """The checked manifest file (errors name it); None, no manifest file, is the conventions alone."""
    if path is None:
        return by_convention()
    return check_manifest(parse_json(read_json_bytes(path), str(path)), additional_ids)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _as_number(value: Any) -> float | None:
    """A JSON number, or a string that reads as one (the reference casts with [double]); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _unknown(value: dict[str, Any], members: tuple[str, ...], what: str) -> list[str]:
    unknown = [member for member in sorted(value) if member not in members]
    return [f"{what} has unknown member '{member}'{did_you_mean(member, members) or '.'}" for member in unknown]


def _check_override(key: str, value: Any, problems: list[str], additional_ids: str) -> schema.DomainOverride | None:
    """The override's members as the schema model names them, unvalidated: the fork dialect's `articles` stay
    raw (a scalar is a one-entry list), every entry is checked per domain (cases.py), and so are microsoft's
    `additionalArticles` (any value, read as a list)."""
    if not isinstance(value, dict):
        problems.append(f"Override '{key}' must be a JSON object.")
        return None
    before = len(problems)
    problems += _unknown(value, OVERRIDE_MEMBERS, f"Override '{key}'")
    for member in ("article", "context"):
        if member in value and not isinstance(value[member], str):
            problems.append(f"Override '{key}': '{member}' must be a string, got {_show(value[member])}.")
    extra = value.get("additionalArticles")
    if additional_ids == MICROSOFT and "additionalArticles" in value:
        value = {**value, "additionalArticles": extra if isinstance(extra, list) else [extra]}  # null: [null]
    elif isinstance(extra, str):
        value = {**value, "additionalArticles": [extra]}  # a single slug, as the reference wraps scalars
        extra = value["additionalArticles"]
    if (
        additional_ids != MICROSOFT
        and "additionalArticles" in value
        and not (isinstance(extra, list) and all(isinstance(item, str) and item.strip() for item in extra))
    ):
        problems.append(f"Override '{key}': 'additionalArticles' must be a list of non-empty slug strings.")
    if "articles" in value and not isinstance(value["articles"], list):
        value = {**value, "articles": [value["articles"]]}  # a scalar (null too) is a one-entry list
    return schema.DomainOverride.model_construct(**value) if len(problems) == before else None


def _has_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_waivers(raw: Any, checked: CheckedManifest) -> None:
    """`coverageWaivers` (review-dialects.md §5, §11.6): accepted paths, and problems in entry order."""
    entries = raw if isinstance(raw, list) else [raw]
    accepted: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            checked.waiver_problems.append(WAIVER_PROBLEM)
            continue
        checked.waiver_problems += _unknown(entry, WAIVER_MEMBERS, f"Coverage waiver {number}")
        path = entry.get("path")
        if not (_has_text(path) and _has_text(entry.get("reason"))):
            checked.waiver_problems.append(WAIVER_PROBLEM)
        elif path.lower() in accepted:
            checked.waiver_problems.append(f"Duplicate coverage waiver: {path}")
        else:
            accepted.add(path.lower())
            checked.waivers.append(path)


def _dialect(overrides: dict[str, Any], problems: list[str]) -> str:
    """Which dialect the overrides use; a manifest using both gets the one problem of review-dialects.md §11.2."""
    keys = {
        member: [key for key, value in overrides.items() if isinstance(value, dict) and member in value]
        for member in (LAYERED, FORK)
    }
    if keys[LAYERED] and keys[FORK]:
        problems.append(
            f"The manifest mixes the 'additionalArticles' and 'articles' dialects (additionalArticles: "
            f"{', '.join(keys[LAYERED])}; articles: {', '.join(keys[FORK])}); use one of them."
        )
        return MIXED
    return LAYERED if keys[LAYERED] else FORK if keys[FORK] else PLAIN


def check_manifest(raw: Any, additional_ids: str = CURABIS) -> CheckedManifest:
    """All top-level problems at once (the reference stops at the first missing member; we list them)."""
    checked = CheckedManifest(thresholds={name: None for name in THRESHOLDS})
    problems = checked.problems
    if not isinstance(raw, dict):
        problems.append("The manifest must be a JSON object.")
        return checked
    if "version" not in raw:
        problems.append("The manifest has no 'version' member.")
    elif _as_number(raw["version"]) != MANIFEST_VERSION:  # loose like the reference: "2" is 2
        problems.append(f"Unsupported review fixture manifest version: {_show(raw['version'])} (expected 2).")
    if "selection" not in raw:
        problems.append("The manifest has no 'selection' member.")
    elif not isinstance(raw["selection"], str) or raw["selection"].lower() != SELECTION:
        problems.append(f"Unsupported selection strategy: {_show(raw['selection'])} (expected '{SELECTION}').")
    for name in THRESHOLDS:
        number = _as_number(raw.get(name))
        if name not in raw:
            problems.append(f"The manifest has no '{name}' member.")
        elif number is None:
            problems.append(f"{name} must be a number, got {_show(raw[name])}.")
        elif not 0 <= number <= 1:
            problems.append(f"{name} must be between 0 and 1, got {_show(raw[name])}.")
        else:
            checked.thresholds[name] = number
    problems += _unknown(raw, MANIFEST_MEMBERS, "The manifest")
    if "coverageWaivers" in raw:
        _check_waivers(raw["coverageWaivers"], checked)
    overrides = raw.get("overrides", {})
    if not isinstance(overrides, dict):
        problems.append("'overrides' must be a JSON object keyed by domain.")
        return checked
    checked.override_keys = list(overrides)
    for key, value in overrides.items():
        if key.lower() in checked.overrides:
            first = checked.overrides[key.lower()][0]
            problems.append(f"Override domains '{first}' and '{key}' name the same domain (case is ignored).")
            continue
        override = _check_override(key, value, problems, additional_ids)
        if override is not None:
            checked.overrides[key.lower()] = (key, override)
    checked.dialect = _dialect(overrides, problems)
    return checked
