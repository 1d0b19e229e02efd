"""The hand-written draft-07 contracts in data/ (from the spec, not from a model) and their validators; the
semantic half of the findings-report contract is bceval.evaluators.development.contract."""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft7Validator

from bceval.evaluators.development import DATA_DIR
from bceval.jsonio import read_json


@cache
def _validator(name: str) -> Draft7Validator:
    return Draft7Validator(read_json(DATA_DIR / f"{name}.json"))


def contract_errors(name: str, document: Any) -> list[tuple[str, str]]:
    """(path, message) of every way `document` breaks data/<name>.json, in path then message order."""
    found = sorted(_validator(name).iter_errors(document), key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    return [("/".join(str(p) for p in error.absolute_path), error.message) for error in found]


def findings_report_errors(answer: Any) -> list[str]:
    """Why `answer` is not a findings-report (spec §7.2, §11.5.4), each error with where it is, or [] when it is one."""
    return [f"{path or '(top level)'}: {message}" for path, message in contract_errors("findings-report", answer)]
