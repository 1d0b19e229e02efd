"""out/scorecard.json: the versioned, schema-checked record of one scored run."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import Field

from bceval import __version__
from bceval.config import source_date_epoch
from bceval.errors import BcevalError
from bceval.jsonio import parse_json
from bceval.models import StrictModel
from bceval.review.scoring import ScoreReport
from bceval.scorecard.stats import wilson_interval

SCORECARD_SCHEMA_VERSION = 1
KEY_PACKAGES = ("doit", "pydantic", "jsonschema", "gitpython", "pyyaml")


class ToolInfo(StrictModel):
    bceval: str
    python: str
    platform: str
    packages: dict[str, str]


class CorpusInfo(StrictModel):
    name: str = Field(description="The corpus root's folder name.")
    commit: str = Field(description="HEAD of the git checkout holding the corpus, or 'unknown' outside git.")
    dirty: bool | None = Field(description="Uncommitted changes under the corpus root; null outside git.")
    manifestSha256: str | None = Field(description="sha256 of the manifest; null when there is none (convention).")
    requestSetSha256: str = Field(description="sha256 over every file of the prepare directory (name + bytes).")


class AdapterInfo(StrictModel):
    name: str
    model: str
    version: str = Field(description="Model or CLI version as reported; 'unknown' when it could not be read.")
    pinned: bool = Field(
        description="False when the model was not named explicitly (a live run that cannot be reproduced)."
    )
    command: str | None = None


class Rate(StrictModel):
    value: float = Field(ge=0, le=1)
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    wilson95: tuple[float, float] = Field(description="Wilson score 95% interval.")


class DomainTotals(StrictModel):
    domain: str
    positivePassed: int = Field(ge=0)
    positiveTotal: int = Field(ge=0)
    cleanPassed: int = Field(ge=0)
    cleanTotal: int = Field(ge=0)
    unanswered: int = Field(ge=0, description="Cases without an answer; reported, not counted in the totals.")
    infrastructureFailures: int = Field(ge=0)


class CaseRow(StrictModel):
    id: str
    modelId: str
    domain: str
    kind: Literal["positive", "clean"]
    passed: bool
    missing: list[str]
    unexpected: list[str]
    infrastructureFailure: str | None


class Scorecard(StrictModel):
    schemaVersion: Literal[1] = SCORECARD_SCHEMA_VERSION
    runId: str = Field(description="sha256 of inputs, adapter and verdicts; equal runs have equal ids.")
    createdAt: str = Field(description="UTC creation time; the only wall-clock field.")
    tool: ToolInfo
    corpus: CorpusInfo
    adapter: AdapterInfo
    thresholds: dict[str, float]
    verdict: Literal["passed", "failed"]
    recall: Rate
    cleanRate: Rate
    infrastructureFailures: int = Field(ge=0)
    problems: list[str]
    domains: list[DomainTotals]
    cases: list[CaseRow]


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def request_set_sha256(prepare_dir: Path) -> str:
    """One digest for the whole request set, so two runs can prove they saw the same inputs."""
    digest = hashlib.sha256()
    for path in sorted(p for p in prepare_dir.iterdir() if p.is_file() and not p.name.startswith(".")):
        digest.update(f"{path.name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def git_state(path: Path) -> tuple[str, bool | None]:
    """HEAD commit and dirty flag of the checkout holding `path`; read-only (no optional locks)."""
    try:
        import git

        repo = git.Repo(path, search_parent_directories=True)
    except Exception:  # not a repository, or git missing: both mean "unknown"
        return "unknown", None
    try:
        repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
        commit = repo.head.commit.hexsha
        relative = os.path.relpath(path, repo.working_tree_dir)
        dirty = repo.is_dirty(untracked_files=True, path=None if relative == "." else relative)
        return commit, dirty
    except Exception:
        return "unknown", None
    finally:
        repo.close()


def tool_info() -> ToolInfo:
    packages = {}
    for name in KEY_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = "missing"
    return ToolInfo(
        bceval=__version__,
        python=platform.python_version(),
        platform=sys.platform,
        packages=packages,
    )


def created_at() -> str:
    """The scorecard's one wall-clock field; SOURCE_DATE_EPOCH pins it for reproducible builds."""
    moment = source_date_epoch() or datetime.now(tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def adapter_info(report: ScoreReport) -> AdapterInfo:
    """From the answeredBy blocks of the results; several different ones mean a mixed run."""
    blocks = report.answeredBy
    if not blocks:
        return AdapterInfo(name="external", model="unknown", version="unknown", pinned=False)
    first = blocks[0]
    mixed = len(blocks) > 1
    return AdapterInfo(
        name="mixed" if mixed else str(first.get("adapter", "external")),
        model="mixed" if mixed else str(first.get("model", "unknown")),
        version="mixed" if mixed else str(first.get("version", "unknown")),
        pinned=all(bool(block.get("pinned")) for block in blocks),
        command=None if mixed else first.get("command"),
    )


def _rate(passed: int, total: int) -> Rate:
    return Rate(
        value=passed / total if total else 0.0, passed=passed, total=total, wilson95=wilson_interval(passed, total)
    )


def build_scorecard(
    report: ScoreReport, corpus: Path, manifest: Path | None, prepare_dir: Path, timestamp: str
) -> Scorecard:
    commit, dirty = git_state(corpus)
    domains: dict[str, DomainTotals] = {}
    for verdict in report.cases:
        totals = domains.setdefault(
            verdict.domain,
            DomainTotals(
                domain=verdict.domain,
                positivePassed=0,
                positiveTotal=0,
                cleanPassed=0,
                cleanTotal=0,
                unanswered=0,
                infrastructureFailures=0,
            ),
        )
        totals.infrastructureFailures += verdict.infrastructureFailure is not None
        if not verdict.answered:
            totals.unanswered += 1  # like the rates: reported, not counted
        elif verdict.kind == "positive":
            totals.positiveTotal += 1
            totals.positivePassed += verdict.passed
        else:
            totals.cleanTotal += 1
            totals.cleanPassed += verdict.passed
    rows = [
        CaseRow(
            id=v.id,
            modelId=v.modelId,
            domain=v.domain,
            kind=v.kind,
            passed=v.passed,
            missing=v.missing,
            unexpected=v.unexpected,
            infrastructureFailure=v.infrastructureFailure,
        )
        for v in report.cases
    ]
    corpus_info = CorpusInfo(
        name=corpus.name,
        commit=commit,
        dirty=dirty,
        manifestSha256=sha256_file(manifest) if manifest is not None else None,
        requestSetSha256=request_set_sha256(prepare_dir),
    )
    adapter = adapter_info(report)
    identity = {
        "requests": corpus_info.requestSetSha256,
        "manifest": corpus_info.manifestSha256,
        "commit": commit,
        "adapter": adapter.model_dump(),
        "cases": [row.model_dump() for row in rows],
    }
    run_id = hashlib.sha256(json.dumps(identity, sort_keys=True).encode("utf-8")).hexdigest()
    return Scorecard(
        runId=run_id,
        createdAt=timestamp,
        tool=tool_info(),
        corpus=corpus_info,
        adapter=adapter,
        thresholds=report.thresholds,
        verdict="passed" if report.passed else "failed",
        recall=_rate(report.positive.passed, report.positive.total),
        cleanRate=_rate(report.clean.passed, report.clean.total),
        infrastructureFailures=report.infrastructureFailures,
        problems=report.problems,
        domains=sorted(domains.values(), key=lambda d: (d.domain.lower(), d.domain)),
        cases=rows,
    )


def read_scorecard(path: Path) -> Scorecard:
    """A scorecard from disk: ours, complete, and not from a newer bceval."""
    if not path.is_file():
        raise BcevalError(f"{path}: scorecard not found")
    document = parse_json(path.read_bytes(), str(path))
    if not isinstance(document, dict) or "schemaVersion" not in document or "runId" not in document:
        raise BcevalError(f"{path}: not a bceval scorecard")
    version = document["schemaVersion"]
    if isinstance(version, int) and not isinstance(version, bool) and version > SCORECARD_SCHEMA_VERSION:
        raise BcevalError(
            f"{path}: scorecard schema version {version} is newer than this bceval reads "
            f"({SCORECARD_SCHEMA_VERSION}); upgrade bceval"
        )
    try:
        return Scorecard.model_validate(document)
    except ValueError as exc:
        first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
        where = ".".join(str(part) for part in first["loc"]) or "$"
        raise BcevalError(f"{path}: not a valid bceval scorecard: {where}: {first['msg']}") from None
