"""The cases of one result document as plain values, without the result models (pydantic).

Every live answer is read with this: loading the models costs about 0.2 s of one core, and on the answering side
nothing needs them. `review.scoring` reads result files with the same rules and turns what it finds into
its models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bceval.ordering import sort_key


@dataclass(frozen=True)
class AnsweredCase:
    """One case an answer gave: its id and its finding ids, normalized (see finding_ids)."""

    id: str
    findings: list[str]

    def as_record(self) -> dict[str, Any]:
        """The case as an answer cache entry keeps it (what the result model's dump gives)."""
        return {"id": self.id, "findings": list(self.findings)}


def answered_cases(document: Any, name: str, problems: list[str]) -> list[AnsweredCase] | None:
    """The cases of a parsed result document; every defect is a line added to `problems` (a case with one is
    left out), and a document with no `cases` at all gives None."""
    if not isinstance(document, dict) or "cases" not in document:
        problems.append(f"{name}: result must contain a 'cases' array.")
        return None
    cases = document["cases"] if isinstance(document["cases"], list) else [document["cases"]]
    found: list[AnsweredCase] = []
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
            found.append(AnsweredCase(str(raw_id), findings))
    return found


def finding_ids(raw: Any, where: str, problems: list[str]) -> list[str] | None:
    """Finding ids as the reference reads them: a scalar or object `findings` is one finding, a string is
    used as is, an object gives its `id` as text (null is empty), blanks are dropped, repeats (ignoring
    case) collapse to the first spelling, and the rest is sorted."""
    items = raw if isinstance(raw, list) else [raw]
    ids: list[str] = []
    for number, item in enumerate(items):
        if isinstance(item, str):
            value = item
        elif isinstance(item, dict) and "id" in item and (item["id"] is None or _is_scalar_id(item["id"])):
            value = "" if item["id"] is None else str(item["id"])
        else:
            problems.append(f"{where}: finding {number} must be a string or an object with a string 'id'")
            return None
        if value.strip():
            ids.append(value)
    unique: dict[str, str] = {}
    for value in ids:
        unique.setdefault(value.lower(), value)  # first spelling wins
    return sorted(unique.values(), key=sort_key)


def _is_scalar_id(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def stored_case(value: Any) -> AnsweredCase:
    """A case as an answer cache entry holds it (see AnsweredCase.as_record): exactly a string `id` and a list of
    string `findings`; anything else raises ValueError (the entry is not ours: the case is answered again)."""
    if type(value) is not dict or value.keys() != {"id", "findings"}:
        raise ValueError("not a cached case")
    case_id, findings = value["id"], value["findings"]
    if type(case_id) is not str or type(findings) is not list or any(type(f) is not str for f in findings):
        raise ValueError("not a cached case")
    return AnsweredCase(case_id, list(findings))
