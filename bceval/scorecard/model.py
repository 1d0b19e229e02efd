"""out/runs/<run>/scorecard.json: the versioned, schema-checked record of one scored run."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, ValidationError

from bceval import __version__
from bceval.errors import BcevalError
from bceval.jsonio import parse_json, read_regular_bytes
from bceval.models import DropUnset, ReadSummary, StrictModel

if TYPE_CHECKING:  # annotations only: a review run's score report
    from bceval.evaluators.review.scoring import ScoreReport
from bceval.scorecard.stats import wilson_interval
from bceval.usage import Usage, cached_share

SCORECARD_SCHEMA_VERSION = 2  # 2: run, usage and per-case records; version 1 scorecards still read
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
        description="True only when the model was named and reached the agent's command line through {model}."
    )
    command: str | None = None
    isolation: str | None = Field(
        default=None, description="view (each case in a folder of its own) or none (not isolated); live runs only."
    )
    sandbox: str | None = Field(default=None, description="none or bwrap; live runs only.")


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
    usage: dict[str, float | int | None] | None = Field(default=None, description="What the answer cost, if known.")
    transcript: str | None = Field(default=None, description="The answer's transcript, relative to the run folder.")
    cached: bool | None = None


class RunInfo(StrictModel):
    name: str
    epoch: int = Field(ge=1)
    selectedCases: int = Field(ge=0)
    totalCases: int = Field(ge=0)
    partial: bool = Field(description="Only some cases were selected: never a gate result for the corpus.")


class UsageTotals(StrictModel):
    """Sums over the run's answers; a figure no answer reported stays null, never 0."""

    answers: int = Field(ge=0, description="Cases with an answer record.")
    costKnown: int = Field(ge=0, description="Answers whose agent reported a cost.")
    costUsd: float | None = None
    costPerPassedCase: float | None = Field(default=None, description="Total cost over the cases that passed.")
    wallSeconds: float | None = None
    agentSeconds: float | None = None
    inputTokens: int | None = None
    outputTokens: int | None = None
    cacheCreationTokens: int | None = None
    cacheReadTokens: int | None = None
    turns: int | None = None
    cached: int = Field(ge=0, description="Answers served from the answer cache.")
    uncachedCostUsd: float | None = Field(
        default=None, description="The cost had no prompt token been read from the provider's cache (the api agent)."
    )
    cachedShare: float | None = Field(
        default=None, description="The share of prompt tokens read from the provider's cache, where it was reported."
    )


class Scorecard(DropUnset):
    OPTIONAL: ClassVar[tuple[str, ...]] = ("readEvidence",)  # absent for runs without it: their cards stay as they were
    schemaVersion: Literal[1, 2] = SCORECARD_SCHEMA_VERSION
    runId: str = Field(description="sha256 of inputs, adapter and verdicts; equal runs have equal ids.")
    createdAt: str = Field(description="UTC creation time; the only wall-clock field.")
    tool: ToolInfo
    corpus: CorpusInfo
    adapter: AdapterInfo
    run: RunInfo | None = Field(default=None, description="The run scored (version 2).")
    thresholds: dict[str, float]
    verdict: Literal["passed", "failed", "partial"]
    recall: Rate
    cleanRate: Rate
    infrastructureFailures: int = Field(ge=0)
    problems: list[str]
    domains: list[DomainTotals]
    cases: list[CaseRow]
    usage: UsageTotals | None = Field(default=None, description="Time, cost and tokens of the run (version 2).")
    readEvidence: ReadSummary | None = Field(
        default=None, description="What the run's answers read, where bceval recorded it (the api agent)."
    )


def sha256_file(path: Path) -> str:
    return hashlib.sha256(read_regular_bytes(path)).hexdigest()


def request_set_sha256(prepare_dir: Path) -> str:
    """One digest for the whole request set, so two runs can prove they saw the same inputs."""
    digest = hashlib.sha256()
    for path in sorted(p for p in prepare_dir.iterdir() if p.is_file() and not p.name.startswith(".")):
        digest.update(f"{path.name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def git_state(path: Path, ignore: Path | None = None) -> tuple[str, bool | None]:
    """HEAD commit and dirty flag of the checkout holding `path`; read-only (no optional locks). `ignore` (bceval's
    own output directory) does not count as a change when it lies in the checkout."""
    try:
        import git  # here, not at the top: GitPython fails to import where no git executable is installed

        with git.Repo(path, search_parent_directories=True) as repo:
            repo.git.update_environment(GIT_OPTIONAL_LOCKS="0")
            commit = repo.head.commit.hexsha
            top = Path(repo.working_tree_dir).resolve()
            spec = [os.path.relpath(path.resolve(), top).replace(os.sep, "/")]
            if ignore is not None and ignore.resolve().is_relative_to(top):
                spec.append(":(exclude)" + os.path.relpath(ignore.resolve(), top).replace(os.sep, "/"))
            changes = repo.git.status("--porcelain", "--untracked-files=all", "--", *spec)
            return commit, bool(changes.strip())
    except Exception:  # not a repository, git missing or unreadable: all mean "unknown"
        return "unknown", None


def tool_info() -> ToolInfo:
    packages = {}
    for name in KEY_PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = "missing"
    return ToolInfo(bceval=__version__, python=platform.python_version(), platform=sys.platform, packages=packages)


def adapter_info(report: ScoreReport) -> AdapterInfo:
    """From the answeredBy blocks of the results; several different ones mean a mixed run."""
    blocks = report.answeredBy
    if not blocks:
        return AdapterInfo(name="external", model="unknown", version="unknown", pinned=False)
    if len(blocks) > 1:
        return AdapterInfo(name="mixed", model="mixed", version="mixed", pinned=all(b.get("pinned") for b in blocks))
    first = blocks[0]
    return AdapterInfo(
        name=str(first.get("adapter", "external")),
        model=str(first.get("model", "unknown")),
        version=str(first.get("version", "unknown")),
        pinned=bool(first.get("pinned")),
        command=first.get("command"),
        isolation=first.get("isolation"),
        sandbox=first.get("sandbox"),
    )


def usage_totals(report: ScoreReport) -> UsageTotals:
    """The run's time, cost and tokens from its answer records; unknown stays unknown."""
    total, answers, cost_known, cached, usages = Usage(), 0, 0, 0, []
    for verdict in report.cases:
        if verdict.usage is None:
            continue
        usage = Usage.from_record(verdict.usage)
        usages.append(usage)
        total = total.plus(usage)
        answers += 1
        cost_known += usage.costUsd is not None
        cached += bool(verdict.cached)
    passed = sum(verdict.passed for verdict in report.cases)
    cost = total.costUsd
    return UsageTotals(
        answers=answers,
        costKnown=cost_known,
        costPerPassedCase=cost / passed if cost is not None and passed else None,
        cached=cached,
        cachedShare=cached_share(usages),
        **total.as_record(),
    )


def _rate(passed: int, total: int) -> Rate:
    return Rate(
        value=passed / total if total else 0.0, passed=passed, total=total, wilson95=wilson_interval(passed, total)
    )


def build_scorecard(
    report: ScoreReport,
    corpus: Path,
    manifest: Path | None,
    prepare_dir: Path,
    timestamp: str,
    out: Path | None = None,
    run: tuple[str, int] = ("external", 1),
) -> Scorecard:
    """`run` is the run's name and epoch."""
    commit, dirty = git_state(corpus, ignore=out)
    rows = [CaseRow(**{name: getattr(v, name) for name in CaseRow.model_fields}) for v in report.cases]
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
        # what was decided, not what it cost: equal runs have equal ids however long they took
        "cases": [row.model_dump(exclude={"usage", "transcript", "cached"}) for row in rows],
        **({"selected": report.selectedCases} if report.partial else {}),
    }
    run_id = hashlib.sha256(json.dumps(identity, sort_keys=True).encode("utf-8")).hexdigest()
    return Scorecard(
        runId=run_id,
        createdAt=timestamp,
        tool=tool_info(),
        corpus=corpus_info,
        adapter=adapter,
        thresholds=report.thresholds,
        run=RunInfo(
            name=run[0], epoch=run[1], **{n: getattr(report, n) for n in ("selectedCases", "totalCases", "partial")}
        ),
        verdict="partial" if report.partial else "passed" if report.passed else "failed",
        recall=_rate(report.positive.passed, report.positive.total),
        cleanRate=_rate(report.clean.passed, report.clean.total),
        infrastructureFailures=report.infrastructureFailures,
        problems=report.problems,
        domains=_domain_totals(report),
        cases=rows,
        usage=usage_totals(report),
        readEvidence=report.readEvidence,
    )


def _domain_totals(report: ScoreReport) -> list[DomainTotals]:
    domains: dict[str, DomainTotals] = {}
    zero = {name: 0 for name in DomainTotals.model_fields if name != "domain"}
    for verdict in report.cases:
        totals = domains.setdefault(verdict.domain, DomainTotals(domain=verdict.domain, **zero))
        totals.infrastructureFailures += verdict.infrastructureFailure is not None
        if not verdict.answered:
            totals.unanswered += 1  # like the rates: reported, not counted
        elif verdict.kind == "positive":
            totals.positiveTotal += 1
            totals.positivePassed += verdict.passed
        else:
            totals.cleanTotal += 1
            totals.cleanPassed += verdict.passed
    return sorted(domains.values(), key=lambda d: (d.domain.lower(), d.domain))


def read_scorecard(path: Path) -> Scorecard:
    """A scorecard from disk: ours, complete, and not from a newer bceval."""
    if not path.is_file():
        raise BcevalError(f"{path}: scorecard not found")
    document = parse_json(read_regular_bytes(path), str(path))
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
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "$"
        raise BcevalError(f"{path}: not a valid bceval scorecard: {where}: {first['msg']}") from None
