"""The cases of one result document: what every live answer and every result file holds, read by the same rules."""

from __future__ import annotations

from typing import Any

from bceval.models import StrictModel
from bceval.ordering import sort_key


class ResultEntry(StrictModel):
    """One case answer as read from a result file, findings already normalized (an answer cache entry keeps its
    model_dump)."""

    id: str
    findings: list[str]


def answered_cases(document: Any, name: str, problems: list[str]) -> list[ResultEntry] | None:
    """The cases of a parsed result document; every defect is a line added to `problems` (a case with one is
    left out), and a document with no `cases` at all gives None."""
    if not isinstance(document, dict) or "cases" not in document:
        problems.append(f"{name}: result must contain a 'cases' array.")
        return None
    cases = document["cases"] if isinstance(document["cases"], list) else [document["cases"]]
    found: list[ResultEntry] = []
    for number, case in enumerate(cases):
        where = f"{name}: cases[{number}]"
        if not isinstance(case, dict):
            problems.append(f"{where}: must be an object with 'id' and 'findings'")
            continue
        raw_id = case.get("id")
        if not isinstance(raw_id, str | int) or isinstance(raw_id, bool) or not str(raw_id).strip():
            problems.append(f"{where}: has no 'id'")
            continue
        if "findings" not in case:
            problems.append(f"{where}: has no 'findings'")
            continue
        findings = finding_ids(case["findings"], where, problems)
        if findings is not None:
            found.append(ResultEntry(id=str(raw_id), findings=findings))
    return found


def finding_ids(raw: Any, where: str, problems: list[str]) -> list[str] | None:
    """Finding ids as the reference reads them: a scalar or object `findings` is one finding, a string is
    used as is, an object gives its `id` as text (null is empty), blanks are dropped, repeats (ignoring
    case) collapse to the first spelling, and the rest is sorted."""
    items = raw if isinstance(raw, list) else [raw]
    unique: dict[str, str] = {}  # lower-cased -> the first spelling
    for number, item in enumerate(items):
        if isinstance(item, str):
            value = item
        elif isinstance(item, dict) and "id" in item and not isinstance(item["id"], bool | list | dict):  # a scalar
            value = "" if item["id"] is None else str(item["id"])
        else:
            problems.append(f"{where}: finding {number} must be a string or an object with a string 'id'")
            return None
        if value.strip():
            unique.setdefault(value.lower(), value)
    return sorted(unique.values(), key=sort_key)


def stored_case(value: Any) -> ResultEntry:
    """A case as an answer cache entry holds it (see ResultEntry); anything else raises ValueError (the
    entry is not ours: the case is answered again)."""
    return ResultEntry.model_validate(value, strict=True)
