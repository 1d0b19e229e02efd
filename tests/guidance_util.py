"""Helpers for the guidance tests: synthetic knowledge checkouts and target repositories built with
git in a temporary directory, controlled reports, and an in-process driver of `bceval guidance`.

Every report carries SENTINEL in its free text; every CLI call asserts it never reaches the output.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import hashlib
import io
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import REPO
from graphutil import run_graph

from bceval.config import Settings
from bceval.evaluators.guidance.cli import add_parser, run

SENTINEL = "MODEL_SECRET_SENTINEL"
SHARED = REPO.parent / "shared"
SHARED_CORPUS = SHARED / "corpus" / "bcquality-841b4e7"
REFERENCE = SHARED / "reference"
PLAN_SKILL = "microsoft/skills/development/al-development-plan.md"
IMPLEMENTATION_SKILL = "microsoft/skills/development/al-implementation-guidance.md"
PAIR = "microsoft/knowledge/performance/pair-findset-with-next-loop.md"
PAIR_GOOD = "microsoft/knowledge/performance/pair-findset-with-next-loop.good.al"
UPDLOCK = "microsoft/knowledge/performance/findset-true-applies-updlock-on-read.md"
UPDLOCK_GOOD = "microsoft/knowledge/performance/findset-true-applies-updlock-on-read.good.al"
STAND_INS = (
    "microsoft/knowledge/performance/pass-var-record-to-preserve-partial-load-enumerator.md",
    "microsoft/knowledge/upgrade/appversion-meaning-depends-on-execution-context.md",
)
_GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "bceval tests",
    "GIT_AUTHOR_EMAIL": "tests@bceval.invalid",
    "GIT_COMMITTER_NAME": "bceval tests",
    "GIT_COMMITTER_EMAIL": "tests@bceval.invalid",
}


def hashed(case_id: str) -> str:
    """Independent of bceval: `case-` + 8 hex digits of SHA-256 of the id."""
    return "case-" + hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:8]


def git(cwd: Path, *args: str) -> str:
    command = ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", "-c", "init.defaultBranch=main"]
    done = subprocess.run([*command, *args], cwd=cwd, env=_GIT_ENV, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def article(title: str, best: bool = True, anti: bool = True, domain: str = "performance") -> str:
    text = (
        f"---\nbc-version: [all]\ndomain: {domain}\nkeywords: [findset]\n---\n\n# {title}\n\n## Description\n\nWhy.\n"
    )
    if best:
        text += "\n## Best Practice\n\nDo this.\n"
    if anti:
        text += "\n## Anti Pattern\n\nNot that.\n"
    return text


def commit_all(root: Path, message: str = "initial") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)
    return git(root, "rev-parse", "HEAD")


def init_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")


# --- manifests and reports --------------------------------------------------------------------


def context(bc_version: str = "28", unknown: list[str] | None = None) -> dict[str, Any]:
    return {
        "bc-version": bc_version,
        "technologies": ["al"],
        "countries": ["w1"],
        "application-area": ["all"],
        "unknown": list(unknown or []),
    }


def plan_case(case_id: str = "synthetic-case", outcome: str = "completed", **overrides: Any) -> dict[str, Any]:
    case = {
        "id": case_id,
        "expectedKind": "bug",
        "expectedOutcome": outcome,
        "expectedUnknown": [],
        "requiresUnresolved": False,
        "requiresMaterialUnresolved": False,
        "development-plan": {"kind": "bug", "request": "Update every selected entry with a FindSet loop."},
        "context": context(),
        "requiredKnowledge": [PAIR] if outcome in ("completed", "partial") else [],
        "optionalKnowledge": [],
    }
    case.update(overrides)
    return case


def manifest(cases: list[dict[str, Any]], skill: str = PLAN_SKILL, **overrides: Any) -> dict[str, Any]:
    data = {
        "version": 1,
        "skill": skill,
        "minimumKnowledgeRecall": 1.0,
        "minimumKnowledgePrecision": 1.0,
        "cases": cases,
    }
    data.update(overrides)
    return data


def knowledge_entry(path: str = PAIR, samples: list[str] | None = None) -> dict[str, Any]:
    return {
        "path": path,
        "used-for": f"the update loop {SENTINEL}",
        "constraints": [f"Open the loop with FindSet {SENTINEL}"],
        "sample-paths": [path[: -len(".md")] + ".good.al"] if samples is None else samples,
    }


def plan_report(
    case_id: str = "synthetic-case",
    outcome: str = "completed",
    knowledge: list[dict[str, Any]] | None = None,
    kind: str = "bug",
    unknown: list[str] | None = None,
    unresolved: list[str] | None = None,
    reason: str | None = None,
    bc_version: str = "28",
) -> dict[str, Any]:
    if knowledge is None:
        knowledge = [knowledge_entry()] if outcome in ("completed", "partial") else []
    report: dict[str, Any] = {
        "skill": {"id": "al-development-plan", "version": 1},
        "outcome": outcome,
        "summary": {
            "request": f"Update every selected entry {SENTINEL}",
            "kind": kind,
            "candidates": len(knowledge),
            "selected": len(knowledge),
        },
        "context": context(bc_version, unknown),
        "knowledge": knowledge,
        "validation-considerations": [
            {"id": "selected-rows-updated", "reason": f"proof {SENTINEL}", "evidence": f"a test {SENTINEL}"}
        ],
        "suppressed": [],
        "unresolved": list(unresolved or []),
    }
    if reason is not None:
        report["outcome-reason"] = reason
    return {"caseId": hashed(case_id), "guidanceReport": report}


# --- the CLI ----------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bceval")
    add_parser(parser.add_subparsers(dest="subcommand", required=True))
    return parser


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def cli(*argv: str | Path) -> Result:
    """Run `bceval guidance ...` in-process through its real parser; the sentinel must never leak."""
    args = _parser().parse_args(["guidance", *map(str, argv)])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(args)
    lines = err.getvalue().splitlines(keepends=True)
    if lines and lines[0].startswith("bceval: corpus "):  # the line every command prints first
        lines = lines[1:]
    result = Result(code, out.getvalue(), "".join(lines))
    assert SENTINEL not in result.text, result.text
    assert "Traceback" not in result.text
    return result


def assert_passes(result: Result, word: str = "PASSED") -> None:
    assert result.code == 0, result.text
    assert word in result.out and "FAILED" not in result.text, result.text


def assert_fails(result: Result, key: str) -> None:
    assert result.code == 1, result.text
    assert "FAILED" in result.err, result.text
    assert key in result.err, f"expected {key!r} in: {result.err}"


def run_guidance_graph(settings: Settings, *tasks: str) -> tuple[int, list[str]]:
    """Run guidance doit tasks in-process through the real graph; the exit code and the tasks that executed
    (no group tasks)."""
    settings.out.mkdir(parents=True, exist_ok=True)
    code, executed = run_graph(settings, *tasks)
    return code, [name for name in executed if name != "guidance"]


# --- scenarios --------------------------------------------------------------------------------


def build_knowledge(
    root: Path, data: dict[str, Any], extra: dict[str, str] | None = None, use_git: bool = True
) -> Path:
    """A synthetic knowledge checkout: two performance articles with samples, the plan skill, the manifest."""
    write(root, PAIR, article("Pair FindSet with Next"))
    write(root, PAIR_GOOD, "codeunit 50100 Loop { }\n")
    write(root, PAIR[: -len(".md")] + ".bad.al", "codeunit 50101 Loop { }\n")
    write(root, UPDLOCK, article("FindSet(true) locks"))
    write(root, UPDLOCK_GOOD, "codeunit 50102 Lock { }\n")
    write(root, PLAN_SKILL, "---\nid: al-development-plan\nversion: 1\n---\n\n# Plan guidance\n")
    write(root, IMPLEMENTATION_SKILL, "---\nid: al-implementation-guidance\n---\n\n# Implementation guidance\n")
    for rel, text in (extra or {}).items():
        write(root, rel, text)
    write(root, "evaluation/guidance-fixtures.json", json.dumps(data, indent=2))
    if use_git:
        init_repo(root)
        commit_all(root)
    return root


def build_target(root: Path, files: dict[str, str] | None = None, dirty: bool = True) -> Path:
    """A standalone target: committed app.json, tracked.al, .gitignore; then untracked and ignored files."""
    init_repo(root)
    write(root, "app.json", '{"id": "00000000-0000-0000-0000-000000000001", "name": "Target"}\n')
    write(root, "tracked.al", "codeunit 50200 Tracked { }\n")
    write(root, ".gitignore", "ignored.txt\nignored-directory/\n")
    for rel, text in (files or {}).items():
        write(root, rel, text)
    commit_all(root)
    if dirty:
        write(root, "untracked.txt", "untracked\n")
        write(root, "ignored.txt", "ignored\n")
        write(root, "ignored-directory/child.txt", "child\n")
    return root


class Scenario:
    """A knowledge checkout, one target per case, a workspace map, and the evidence paths of one run."""

    def __init__(
        self, base: Path, data: dict[str, Any], extra: dict[str, str] | None = None, linked_knowledge: bool = False
    ) -> None:
        self.base = base
        self.data = copy.deepcopy(data)
        if linked_knowledge:  # the knowledge checkout is a linked worktree of another clone
            build_knowledge(base / "knowledge-main", self.data, extra)
            git(base / "knowledge-main", "worktree", "add", "-q", "--detach", str(base / "knowledge"))
            self.root = base / "knowledge"
        else:
            self.root = build_knowledge(base / "knowledge", self.data, extra)
        targets = {case["id"]: build_target(base / f"target-{i}") for i, case in enumerate(self.data["cases"])}
        self._assemble(base, self.root, self.root / "evaluation" / "guidance-fixtures.json", targets)

    def _assemble(self, base: Path, root: Path, manifest_path: Path, targets: dict[str, Path]) -> None:
        self.base, self.root, self.manifest, self.targets = base, root, manifest_path, targets
        self.evidence = base / "evidence"
        self.map = write(self.evidence, "workspace-map.json", json.dumps({k: str(v) for k, v in targets.items()}))
        self.baseline = self.evidence / "baseline.json"
        self.results = base / "results"
        self.digest = ""

    @classmethod
    def assemble(cls, base: Path, root: Path, manifest_path: Path, targets: dict[str, Path]) -> Scenario:
        """A scenario over a knowledge checkout and targets that the caller built."""
        scenario = cls.__new__(cls)
        scenario.data = json.loads(manifest_path.read_text(encoding="utf-8"))
        scenario._assemble(base, root, manifest_path, targets)
        return scenario

    @property
    def target(self) -> Path:
        return next(iter(self.targets.values()))

    def cli(self, mode: str, *extra: str | Path) -> Result:
        return cli(mode, "--root", self.root, "--manifest", self.manifest, *extra)

    def capture(self) -> Result:
        result = self.cli("capture", "--workspace-map", self.map, "--baseline", self.baseline)
        if result.code == 0:
            self.digest = result.out.strip().rsplit(" ", 1)[-1]
        return result

    def score(self, results: Path | None = None, digest: str | None = None) -> Result:
        return self.cli(
            "score",
            "--results",
            results or self.results,
            "--baseline",
            self.baseline,
            "--baseline-sha256",
            self.digest if digest is None else digest,
        )

    def write_result(self, document: Any, case_id: str = "synthetic-case", results: Path | None = None) -> Path:
        data = document if isinstance(document, bytes) else json.dumps(document, indent=2).encode("utf-8")
        return write(results or self.results, f"result-{hashed(case_id)}.json", data)


def copy_files(source: Path, destination: Path, rels: list[str]) -> None:
    """Copy files without their (read-only) modes, so the copy can be removed again."""
    for rel in rels:
        target = destination / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target)


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
