"""bceval's own development artifacts as pydantic models (their JSON schemas are generated from these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from bceval.models import StrictModel


class TaskContext(StrictModel):
    goal: str | None
    inputs_available: list[str] = Field(alias="inputs-available")
    technologies: list[Any]
    countries: list[Any]
    application_area: list[Any] = Field(alias="application-area")


class RequestBody(StrictModel):
    kind: str
    description: str | None
    plan: str | None
    acceptance_criteria: list[Any] = Field(alias="acceptance-criteria")


class ImplementationGuidance(StrictModel):
    skill: str
    instructions: str
    checkpoints: list[str]


class DevelopmentRequest(StrictModel):
    """request-case-<hash>.json (spec §6.3); a run's arm may give the neutral skill "none" and add the
    implementation guidance with the runner's checkpoints (§12)."""

    protocol: str
    caseId: str = Field(pattern=r"^case-[0-9a-f]{8}$")
    skill: str
    skillInstructions: str
    implementationGuidance: ImplementationGuidance | None = None
    knowledgeIndex: Literal["knowledge-index.json"]
    task_context: TaskContext = Field(alias="task-context")
    development_request: RequestBody = Field(alias="development-request")
    resultSchema: dict[str, Any]


class DevelopmentResult(StrictModel):
    """result.json: the wrapper the runner writes (§11.3); the report is the agent's, kept as it answered."""

    caseId: str
    workspaceRoot: str
    implementationReport: Any = None


class DevelopmentBase(StrictModel):
    """base.json: where a case's fresh copy came from."""

    source: str
    baseCommit: str = Field(pattern=r"^[0-9a-f]{40}$")
    treeId: str = Field(pattern=r"^[0-9a-f]{40}$")
    digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class RunnerEntry(StrictModel):
    id: Literal["compile", "tests", "review"]
    command: str
    status: Literal["passed", "failed", "not-run"]
    details: str = Field(min_length=1)
    exitCode: int | None
    durationS: float
    logPath: str | None


class Capture(StrictModel):
    patchSha256: str
    head: str
    refs: list[str]


class ReadRecord(StrictModel):
    path: str = Field(description="relative to the knowledge root")
    complete: bool = Field(description="every line of the file was returned to the agent, across offsets")
    bytes: int
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ReadEvidence(StrictModel):
    """Spec §13 for the development runner: the run, the request file's SHA-256, the knowledge files read."""

    runId: str
    requestSha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    reads: list[ReadRecord]


class DevelopmentEvidence(StrictModel):
    """evidence.json: the runner's entries, the agent's claims, and where they disagree (§11.7)."""

    runner: list[RunnerEntry]
    agent: Any = None
    disagreements: list[str]
    overclaims: list[str]
    underclaims: list[str]
    capture: Capture
    readEvidence: ReadEvidence | None = Field(
        default=None, description="bceval's read evidence (api adapter only: its own tool results); null otherwise"
    )
    refusedOutside: list[str] = Field(
        default_factory=list, description="write paths the api agent gave that leave the copy (refused, never written)"
    )


class Measures(StrictModel):
    knowledgeRecall: float
    knowledgePrecision: float
    knowledgeEvidence: Literal["claimed", "read"] = Field(
        description="read: only entries bceval saw read completely count (api adapter); claimed: the report's"
    )
    claimedKnowledgeRecall: float | None = None
    claimedKnowledgePrecision: float | None = None


class DevelopmentVerdict(StrictModel):
    """verdict.json: one case's verdict in runner mode (§11.10)."""

    case: str
    caseId: str
    verdict: Literal["pass", "fail", "error"]
    infrastructure: str | None
    gatesPassed: bool
    overclaims: int
    problems: list[str]
    diagnostics: list[str]
    measures: Measures | dict[str, Any]


class CheckoutComparison(StrictModel):
    before: dict[str, str]
    after: dict[str, str]
    unchanged: bool


class CaseLine(StrictModel):
    case: str
    caseId: str
    verdict: Literal["pass", "fail", "error"]
    gatesPassed: bool
    overclaims: int


class DevelopmentRun(StrictModel):
    """run.json of a development run."""

    kind: Literal["bceval-development-run"]
    version: Literal[1]
    evaluator: Literal["development"]
    guidance: Literal["none", "plan", "implementation", "both"]
    checkpoints: list[str]
    adapter: str
    model: str | None
    epoch: int
    checksDigest: str
    knowledgeCheckout: CheckoutComparison
    verdict: Literal["PASS", "FAIL"]
    problems: list[str] = Field(
        description="what fails the whole run (the knowledge checkout changed) or a case's primary outcome (its "
        "gates did not all pass), one line each, the case's manifest id first"
    )
    counts: dict[Literal["pass", "fail", "error"], int]
    overclaims: int
    cases: list[CaseLine]


class CheckSettings(StrictModel):
    kind: Literal["command", "review"] | None = None
    argv: list[str] = Field(min_length=1)
    timeout_s: float | str | None = None
    env: dict[str, str] | None = None
    pass_exit_codes: list[int | str] | None = None


class CaseChecks(StrictModel):
    checks: dict[Literal["compile", "tests", "review"], CheckSettings] | None = None
    workspace: str | None = None


class DevelopmentChecks(StrictModel):
    """evaluation/development-checks.yaml (§11.6), as bceval reads it."""

    version: Literal[1, "1"]
    toolchain: Literal["available", "unavailable"] | None = None
    checks: dict[Literal["compile", "tests", "review"], CheckSettings] | None = None
    workspaces: dict[str, str] | None = None
    cases: dict[str, CaseChecks] | None = None
