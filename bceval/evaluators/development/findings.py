"""The findings-report contract (spec §7.2, §11.5.4) the runner's review must answer in."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft7Validator

_KEBAB = "^[a-z0-9]+(-[a-z0-9]+)*$"
_NO_BACKSLASH = r"^[^\\]+$"
_COUNT = {"type": "integer", "minimum": 0}
_LINE = {"type": "integer", "minimum": 1}


def closed(required: list[str], properties: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": required, "properties": properties, **more}


_SKILL = closed(["id", "version"], {"id": {"type": "string", "pattern": _KEBAB}, "version": _LINE})
_REFERENCE = closed(
    ["path"],
    {
        "path": {"type": "string", "minLength": 1, "pattern": _NO_BACKSLASH},
        "sha": {"type": "string", "pattern": "^[0-9a-fA-F]{40}$"},
    },
)
_FINDING = closed(
    ["id", "severity", "message", "references", "confidence"],
    {
        "id": {"type": "string", "minLength": 1},
        "severity": {"enum": ["blocker", "major", "minor", "info"]},
        "message": {"type": "string", "minLength": 1},
        "location": closed(
            ["file", "line"],
            {
                "file": {"type": "string", "minLength": 1, "pattern": _NO_BACKSLASH},
                "line": _LINE,
                "range": closed(["start-line", "end-line"], {"start-line": _LINE, "end-line": _LINE}),
            },
        ),
        "references": {"type": "array", "items": _REFERENCE},
        "confidence": {"enum": ["high", "medium", "low"]},
        "from-sub-skill": {"type": "string", "minLength": 1},
        "domain": {"type": "string", "minLength": 1, "pattern": "^[^\\r\\n]+$"},
        "suggested-code": {"type": "string", "minLength": 1},
        "suggested-code-omission-reason": {"type": "string", "minLength": 1},
    },
    # the agent's own finding (nothing cited) never gates
    **{
        "if": {"properties": {"references": {"maxItems": 0}}},
        "then": {
            "properties": {
                "id": {"pattern": "^(?:[a-z0-9]+(?:-[a-z0-9]+)*:)?agent:[a-z0-9]+(?:-[a-z0-9]+)*$"},
                "confidence": {"enum": ["medium", "low"]},
                "severity": {"enum": ["minor", "info"]},
            }
        },
    },
)
SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "findings report (the quality skill's answer)",
    **closed(
        ["skill", "outcome", "summary", "findings", "suppressed"],
        {
            "skill": _SKILL,
            "outcome": {"enum": ["completed", "not-applicable", "no-knowledge", "partial", "failed"]},
            "outcome-reason": {"type": "string", "minLength": 1},
            "summary": closed(
                ["counts", "coverage"],
                {
                    "counts": closed(
                        ["blocker", "major", "minor", "info"],
                        {"blocker": _COUNT, "major": _COUNT, "minor": _COUNT, "info": _COUNT},
                    ),
                    "coverage": closed(
                        ["worklist-size", "items-evaluated"], {"worklist-size": _COUNT, "items-evaluated": _COUNT}
                    ),
                },
            ),
            "findings": {"type": "array", "items": _FINDING},
            "suppressed": {
                "type": "array",
                "items": closed(
                    ["reference", "reason"],
                    {"reference": _REFERENCE, "reason": {"enum": ["layer-precedence", "configuration"]}},
                ),
            },
            "sub-results": {"type": "array", "items": {"$ref": "#"}},
            "skipped-sub-skills": {
                "type": "array",
                "items": closed(
                    ["skill", "reason"], {"skill": _SKILL, "reason": {"enum": ["configuration", "not-applicable"]}}
                ),
            },
        },
    ),
    "allOf": [
        {
            "if": {"properties": {"outcome": {"enum": ["partial", "failed"]}}},
            "then": {"required": ["outcome-reason"]},
        },
        {
            "if": {"properties": {"outcome": {"enum": ["not-applicable", "no-knowledge", "failed"]}}},
            "then": {"properties": {"findings": {"maxItems": 0}}},
        },
    ],
}


def findings_report_errors(answer: Any) -> list[str]:
    """Why `answer` is not a findings-report (each error with where it is), or [] when it is one."""
    errors = sorted(
        Draft7Validator(SCHEMA).iter_errors(answer), key=lambda e: ([str(p) for p in e.absolute_path], e.message)
    )
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(top level)'}: {error.message}" for error in errors]
