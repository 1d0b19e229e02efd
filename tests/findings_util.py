"""Small findings-reports of the contract tests, in bceval's own words: a privacy leaf report with one cited,
located finding and one agent finding, a style leaf with nothing to say, and a super-skill report rolling both up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bceval.evaluators.development.contract import SUPER, Scope, judge
from bceval.evaluators.development.superskill import load_composition

CONSENT = "microsoft/knowledge/privacy/ask-consent-before-sending-data.md"
RETENTION = "community/knowledge/privacy/keep-logs-under-a-retention-policy.md"
SOURCE = "app/Sync.Codeunit.al"
OTHER = "app/Other.Codeunit.al"
PRIVACY, STYLE, TESTING = "al-privacy-review", "al-style-review", "al-testing-review"


def make_world(tmp_path: Path) -> dict[str, Any]:
    """A checkout with two articles, a source tree with a 12-line file and a 3-line file, and the scope of a leaf
    report that retrieved only the first article and may point at the first file."""
    for article in (CONSENT, RETENTION):
        (tmp_path / "bcq" / article).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "bcq" / article).write_text("# rule\n", encoding="utf-8")
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "src" / SOURCE).write_bytes(b"".join(b"line %d\r\n" % n for n in range(1, 13)))
    (tmp_path / "src" / OTHER).write_text("a\nb\nc\n", encoding="utf-8")
    scope = Scope(tmp_path / "bcq", frozenset({CONSENT}), tmp_path / "src", frozenset({SOURCE}))
    return {"root": tmp_path, "scope": scope}


def cited(**extra: Any) -> dict[str, Any]:
    location = {"file": SOURCE, "line": 4, "range": {"start-line": 4, "end-line": 6}}
    finding = {"id": CONSENT, "severity": "major", "message": "Telemetry sends the customer's e-mail."}
    return {**finding, "references": [{"path": CONSENT}], "confidence": "high", "location": location, **extra}


def agent(**extra: Any) -> dict[str, Any]:
    finding = {"id": "agent:unclear-retention", "severity": "minor", "message": "No retention period is documented."}
    return {**finding, "references": [], "confidence": "medium", **extra}


def report(findings: list[dict[str, Any]], skill: str = PRIVACY, outcome: str = "completed", size: int = 1) -> dict:
    counts = {s: sum(1 for f in findings if f["severity"] == s) for s in ("blocker", "major", "minor", "info")}
    return {
        "skill": {"id": skill, "version": 1},
        "outcome": outcome,
        "summary": {"counts": counts, "coverage": {"worklist-size": size, "items-evaluated": size}},
        "findings": findings,
        "suppressed": [],
    }


def leaf() -> dict[str, Any]:
    return report([cited(), agent()])


def style() -> dict[str, Any]:
    return report([], STYLE, "not-applicable", 0)


def rolled() -> dict[str, Any]:
    """A super-skill report that rolls up leaf() and style() faithfully, skips the testing leaf, and adds one
    finding of its own."""
    own = agent(id="agent:cross-cutting", severity="info", confidence="low", domain="Agent")
    findings = [
        cited(**{"from-sub-skill": PRIVACY}),
        agent(id=f"{PRIVACY}:agent:unclear-retention", **{"from-sub-skill": PRIVACY}),
        {**own, "from-sub-skill": "agent"},
    ]
    skipped = [{"skill": {"id": TESTING, "version": 1}, "reason": "configuration"}]
    return {**report(findings, "al-code-review"), "sub-results": [leaf(), style()], "skipped-sub-skills": skipped}


def composition(root: Path, **changes: Any) -> Path:
    (root / "privacy.json").write_text(json.dumps(leaf()), encoding="utf-8")
    (root / "style.json").write_text(json.dumps(style()), encoding="utf-8")
    document = {
        "superSkill": {"id": "al-code-review", "version": 1},
        "subSkills": [{"id": PRIVACY, "version": 1}, {"id": STYLE, "version": 1}],
        "skipped": [{"id": TESTING, "version": 1, "reason": "configuration"}],
        "acceptedResults": [
            {"id": PRIVACY, "version": 1, "reportPath": "privacy.json"},
            {"id": STYLE, "version": 1, "reportPath": "style.json"},
        ],
        **changes,
    }
    (root / "composition.json").write_text(json.dumps(document), encoding="utf-8")
    return root / "composition.json"


def lines(document: Any, scope: Scope, normalize: bool = False) -> list[str]:
    return [str(problem) for problem in judge(document, scope, normalize).problems]


def codes(document: Any, scope: Scope) -> set[str]:
    return {problem.code for problem in judge(document, scope).problems}


def changed(document: dict, path: str, value: Any) -> dict:
    """`document` with the member at a dotted path (list indexes as numbers) replaced; value None deletes it."""
    *parents, last = path.split(".")
    target: Any = document
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return document


def super_scope(world: dict, composed: bool = True, **changes: Any) -> Scope:
    chosen = load_composition(composition(world["root"], **changes)) if composed else None
    return Scope(**{**world["scope"].__dict__, "kind": SUPER, "composition": chosen})
