"""Helpers of the development-fixtures tests: the test corpus of spec §15 (the 841b4e7 snapshot plus the
reference skill and stubs for the six missing articles), temporary git workspaces, and a passing result."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_CORPUS

REFERENCE = SHARED_CORPUS.parent.parent / "reference" / "development"
MANIFEST = "evaluation/development-fixtures.json"
CAPABILITIES = "coverage/development-capabilities.json"
SKILL = "microsoft/skills/development/al-development.md"
MISSING_ARTICLES = (  # spec §4.4: named by the manifest, absent from 841b4e7
    "microsoft/knowledge/data-modeling/initialize-document-defaults-in-initrecord.md",
    "microsoft/knowledge/ui/updatepropagation-both-refreshes-main-page.md",
    "microsoft/knowledge/upgrade/appversion-meaning-depends-on-execution-context.md",
    "microsoft/knowledge/upgrade/install-and-upgrade-codeunits-have-no-order.md",
    "microsoft/knowledge/ui/showmandatory-on-code-required-page-fields.md",
    "microsoft/knowledge/performance/pass-var-record-to-preserve-partial-load-enumerator.md",
)
MODEL_IDS = {
    "setup-backed-master-data": "case-bd8727e6",
    "document-header-and-lines": "case-f787883b",
    "versioned-master-data-api": "case-050de3f2",
    "fix-filtered-batch-processing": "case-887b550e",
    "versioned-data-upgrade": "case-355d946a",
}

requires_reference = pytest.mark.skipif(
    not (SHARED_CORPUS.is_dir() and REFERENCE.is_dir()),
    reason=f"needs the public BCQuality corpus at {SHARED_CORPUS} and the reference data at {REFERENCE}",
)


def bare_corpus(target: Path) -> Path:
    """841b4e7 plus the reference manifest and capability file, nothing else."""
    shutil.copytree(SHARED_CORPUS, target)
    for name in (MANIFEST, CAPABILITIES):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REFERENCE / name, target / name)
    return target


def reference_corpus(target: Path) -> Path:
    bare_corpus(target)
    (target / SKILL).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REFERENCE / SKILL, target / SKILL)
    for path in MISSING_ARTICLES:
        (target / path).write_text("# stub: upstream checks only that the article exists\n", encoding="utf-8")
    return target


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}


def git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True)


def workspace(target: Path) -> Path:
    """A committed repository (app.json, one .al file) with one uncommitted edit of the .al file."""
    target.mkdir(parents=True)
    (target / "app.json").write_text('{"name": "Demo"}\n', encoding="utf-8")
    (target / "src").mkdir()
    (target / "src" / "Member.Table.al").write_text('table 50100 "Member" { }\n', encoding="utf-8")
    (target / ".gitignore").write_text("*.app\n", encoding="utf-8")
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "start")
    (target / "src" / "Member.Table.al").write_text('table 50100 "Member" { fields { } }\n', encoding="utf-8")
    return target


def passing_report(case: dict[str, Any]) -> dict[str, Any]:
    """§15.6: the controlled passing report of one reference case."""
    return {
        "skill": {"id": "al-development", "version": 1},
        "outcome": "completed",
        "summary": {"request": "Added the member table.", "files-created": 0, "files-modified": 1, "files-deleted": 0},
        "plan": {"kind": case["expectedKind"], "assumptions": [], "decisions": [], "objects": []},
        "knowledge": [{"path": p, "used-for": "shaped the table"} for p in case["requiredKnowledge"]],
        "changes": [{"path": "src/Member.Table.al", "action": "modified", "purpose": "the feature"}],
        "validation": [
            {"id": check, "command": f"run {check}", "status": "passed", "details": f"{check} exit 0"}
            for check in ("compile", "tests", "review")
        ],
        "review": {
            "skill": {"id": "al-code-review", "version": 1},
            "outcome": "completed",
            "summary": {
                "counts": {"blocker": 0, "major": 0, "minor": 0, "info": 0},
                "coverage": {"worklist-size": 1, "items-evaluated": 1},
            },
            "findings": [],
            "suppressed": [],
        },
        "review-rounds": [{"round": 1, "outcome": "clean", "gating-finding-ids": []}],
        "suppressed": [],
        "remaining": [],
    }


def wrapper(model_id: str, ws: Path, report: Any) -> dict[str, Any]:
    return {"caseId": model_id, "workspaceRoot": str(ws), "implementationReport": copy.deepcopy(report)}
