"""Result scoring (§14): load answers, map ids, judge each case with the strict gate and what its answer read,
aggregate (every case from all entries, in sorted file order)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, ValidationError

from bceval.errors import BcevalError
from bceval.escape import console, finding_id, token
from bceval.evaluators.review.cases import ReviewCase
from bceval.evaluators.review.entries import ResultEntry, answered_cases
from bceval.evaluators.review.manifest import THRESHOLD_LABELS
from bceval.jsonio import MAX_JSON_BYTES, parse_json, read_json_bytes, read_regular_bytes
from bceval.models import CaseReads, DropUnset, InfraFailure, ReadSummary, StrictModel
from bceval.ordering import sort_key

SCORE_SCHEMA_VERSION = 1
Article = Callable[[str], tuple[int, str] | None]  # a corpus path -> (its size, its SHA-256), None when absent


class CaseVerdict(DropUnset):
    OPTIONAL: ClassVar[tuple[str, ...]] = ("reads", "notAnswered")
    id: str = Field(description="Manifest case id.")
    modelId: str
    domain: str
    kind: Literal["positive", "clean"]
    passed: bool
    expected: list[str]
    findings: list[str]
    missing: list[str]
    unexpected: list[str]
    answered: bool = Field(description="False when no result was found for the case.")
    infrastructureFailure: str | None = Field(default=None, description="Why no answer could be obtained.")
    usage: dict[str, float | int | None] | None = Field(
        default=None, description="Time, cost and tokens of the answer, as far as the agent reported them."
    )
    transcript: str | None = Field(default=None, description="The answer's transcript, relative to the run.")
    cached: bool | None = Field(default=None, description="True when a live answer came from the answer cache.")
    sharedFrom: str | None = Field(
        default=None, description="Experiments: the arm whose identical question this answer was shared from."
    )
    reads: CaseReads | None = Field(default=None, description="What the answer read (live answers with evidence).")
    notAnswered: Literal["budget"] | None = Field(
        default=None, description="Why a case was never asked: 'budget' (the run reached its --max-cost first)."
    )


class FileReading(StrictModel):
    """What one result file contributed: entries, or the problems that made it unusable."""

    file: str
    entries: list[ResultEntry] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    answeredBy: dict[str, Any] | None = None
    record: dict[str, Any] | None = Field(default=None, description="The answer record bceval's runs add.")


class Tally(StrictModel):
    passed: int = Field(ge=0)
    total: int = Field(ge=0)


class ScoreReport(DropUnset):
    """out/runs/<run>/score.json: every case's verdict, the metrics and the gate."""

    OPTIONAL: ClassVar[tuple[str, ...]] = ("readEvidence", "notStarted")

    schemaVersion: Literal[1] = SCORE_SCHEMA_VERSION
    passed: bool
    recall: float = Field(ge=0, le=1)
    cleanRate: float = Field(ge=0, le=1)
    positive: Tally
    clean: Tally
    thresholds: dict[str, float]
    infrastructureFailures: int = Field(ge=0)
    answeredBy: list[dict[str, Any]]
    problems: list[str]
    cases: list[CaseVerdict]
    selectedCases: int = Field(ge=0, description="Cases the run was asked to answer.")
    totalCases: int = Field(ge=0, description="Cases the corpus has.")
    partial: bool = Field(description="True when only some cases were selected: never a gate result.")
    readEvidence: ReadSummary | None = Field(
        default=None, description="Read evidence of the run (when any answer has it, or --require-read)."
    )
    notStarted: int | None = Field(
        default=None, ge=0, description="Cases never asked because the run reached its budget (--max-cost)."
    )


def read_result_document(data: bytes, name: str) -> FileReading:
    """Parse one result file's bytes; every defect becomes a problem line, never an exception."""
    reading = FileReading(file=name)
    try:
        document = parse_json(data, name)
    except BcevalError as exc:
        reading.problems.append(str(exc))
        return reading
    answered = answered_cases(document, name, reading.problems)
    if answered is not None:
        reading.entries = answered
        reading.answeredBy = document["answeredBy"] if isinstance(document.get("answeredBy"), dict) else None
        reading.record = document["record"] if isinstance(document.get("record"), dict) else None
    return reading


def read_result_file(path: Path) -> FileReading:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return FileReading(file=path.name, problems=[f"{path.name}: larger than {MAX_JSON_BYTES >> 20} MiB"])
        data = read_regular_bytes(path)
    except OSError as exc:
        return FileReading(file=path.name, problems=[f"{path.name}: cannot read: {exc.strerror}"])
    return read_result_document(data, path.name)


def read_infra_file(path: Path) -> InfraFailure:
    """An infrastructure-failure record written by `bceval answer`; anything else is refused in one line."""
    try:
        return InfraFailure.model_validate(parse_json(read_json_bytes(path), str(path)))
    except ValidationError:
        raise BcevalError(f"{path}: not an infrastructure-failure record written by bceval answer") from None


def format_rate(value: float) -> str:
    """Invariant shortest round-trip form; an exact integer prints without a fraction ("1", "0")."""
    return str(int(value)) if value == int(value) else repr(value)


def judge(case: ReviewCase, findings: list[str] | None, infra: InfraFailure | None = None) -> CaseVerdict:
    """The strict gate for one case: exact set equality (ci) for positives, silence for clean controls."""
    positive = bool(case.expected)
    got = findings or []
    lowered_got = {path.lower() for path in got}
    lowered_expected = {path.lower() for path in case.expected}
    missing = [path for path in case.expected if path.lower() not in lowered_got]
    unexpected = [path for path in got if path.lower() not in lowered_expected]
    return CaseVerdict(
        id=case.id,
        modelId=case.modelId,
        domain=case.domain,
        kind="positive" if positive else "clean",
        passed=findings is not None and not missing and not unexpected,
        expected=list(case.expected),
        findings=got,
        missing=missing,
        unexpected=unexpected,
        answered=findings is not None,
        infrastructureFailure=(
            f"{infra.kind} after {infra.attempts} attempt(s): {console(infra.detail)}"
            if infra is not None and findings is None
            else None
        ),
    )


def verdict_problems(verdict: CaseVerdict) -> list[str]:
    if verdict.notAnswered == "budget":
        return [f"{verdict.id}: not answered (budget): the run reached its --max-cost before this case started"]
    if not verdict.answered:
        if verdict.infrastructureFailure:
            return [f"{token(verdict.id)}: infrastructure failure ({console(verdict.infrastructureFailure)})"]
        return [f"Results missing case: {token(verdict.id)}"]
    problems = [f"{token(verdict.id)}: missing expected finding(s): {_ids(verdict.missing)}"] if verdict.missing else []
    if verdict.unexpected:
        what = "clean control produced" if verdict.kind == "clean" else "unexpected"
        problems.append(f"{token(verdict.id)}: {what} finding(s): {_ids(verdict.unexpected)}")
    return problems


def _ids(ids: list[str]) -> str:
    """Finding ids for a problem line: candidate paths as they are, anything a model made up quoted and cut."""
    return ", ".join(finding_id(i) for i in ids)


def _with_record(verdict: CaseVerdict, record: dict[str, Any] | None) -> CaseVerdict:
    """A verdict with the usage, transcript and cache flags its answer record carries."""
    if not isinstance(record, dict):
        return verdict
    kinds = {"usage": dict, "transcript": str, "cached": bool, "sharedFrom": str}
    update = {key: record[key] if isinstance(record.get(key), kind) else None for key, kind in kinds.items()}
    return verdict.model_copy(update=update)


def case_reads(findings: list[str], record: dict[str, Any] | None, article: Article | None) -> CaseReads:
    """What an answered case read, from the evidence bceval recorded itself; "unknown" without it. A citation is
    backed only by a complete read whose bytes and SHA-256 match the article (when `article` can tell). An agent's
    trace of its Read calls ("agent-trace") names the candidates it asked for, but bceval never saw what it got, so
    none of its citations is backed."""
    record = record if isinstance(record, dict) else {}
    source = record.get("readBy")
    evidence = record.get("readEvidence" if source == "bceval" else "agentTrace")
    raw = evidence.get("reads") if isinstance(evidence, dict) else None
    if source not in ("bceval", "agent-trace") or (source == "bceval" and not isinstance(raw, list)):
        return CaseReads(source="unknown", cited=list(findings))
    raw = raw if isinstance(raw, list) else []
    reads = [item for item in raw if isinstance(item, dict) and isinstance(item.get("path"), str)]
    candidates = [path for path in record.get("candidates") or [] if isinstance(path, str)]
    lowered = {path.lower(): path for path in candidates}
    if source == "bceval":  # the paths as the reads spell them
        opened = sorted({item["path"] for item in reads if item["path"].lower() in lowered}, key=sort_key)
    else:  # the paths as the candidates spell them
        opened = sorted(
            (lowered[path] for path in {item["path"].lower() for item in reads} if path in lowered), key=sort_key
        )
    backed = {
        item["path"].lower()
        for item in reads
        if source == "bceval"
        and item.get("complete") is True  # and the article as the corpus holds it:
        and (article is None or article(item["path"]) == (item.get("bytes"), item.get("sha256")))
    }
    cited = {finding.lower() for finding in findings}
    return CaseReads(
        source=source,
        opened=opened,
        cited=list(findings),
        citedWithoutCompleteRead=[finding for finding in findings if finding.lower() not in backed],
        readNotCited=[path for path in opened if path.lower() not in cited],
        candidates=len(candidates),
    )


def read_problems(verdict: CaseVerdict, require_read: bool) -> list[str]:
    """Under --require-read: every citation without a complete read is an error of its case."""
    reads = verdict.reads
    if not require_read or reads is None or not verdict.answered:
        return []
    if reads.source == "bceval":
        return [f"{verdict.id}: cited {path} without reading it" for path in reads.citedWithoutCompleteRead]
    if not reads.cited:
        return []
    if reads.source == "agent-trace":
        return [
            f"{verdict.id}: --require-read needs bceval's own read evidence, and this answer has only its agent's "
            "trace of the reads it asked for, which is no proof"
        ]
    return [f"{verdict.id}: --require-read needs read evidence, and this answer has none (its agent records no reads)"]


def read_summary(verdicts: list[CaseVerdict], require_read: bool) -> ReadSummary | None:
    known = [v.reads for v in verdicts if v.answered and v.reads is not None and v.reads.source == "bceval"]
    if not known and not require_read:
        return None
    citations = sum(len(reads.cited) for reads in known)
    backed = citations - sum(len(reads.citedWithoutCompleteRead) for reads in known)
    opened = sum(len(reads.opened) for reads in known)
    return ReadSummary(
        requireRead=require_read,
        casesWithEvidence=len(known),
        casesWithoutEvidence=sum(v.answered for v in verdicts) - len(known),
        citations=citations,
        citationsBacked=backed,
        backedShare=backed / citations if citations else None,
        meanOpened=opened / len(known) if known else None,
        candidatesOpened=opened,
        candidates=sum(reads.candidates or 0 for reads in known),
    )


def _with_reads(verdict: CaseVerdict, record: Any, require_read: bool, article: Article | None) -> CaseVerdict:
    """The verdict with what its answer read, where that is known (or asked for); an unbacked citation under
    --require-read fails the case."""
    if not verdict.answered:
        return verdict
    reads = case_reads(verdict.findings, record if isinstance(record, dict) else None, article)
    if reads.source == "unknown" and not require_read:
        return verdict  # nothing to say: the record stays as it always was
    update: dict[str, Any] = {"reads": reads}
    if require_read and (reads.citedWithoutCompleteRead if reads.source == "bceval" else reads.cited):
        update["passed"] = False
    return verdict.model_copy(update=update)


def aggregate(
    cases: list[ReviewCase],
    readings: list[FileReading],
    thresholds: dict[str, float],
    infra: list[InfraFailure] | None = None,
    selected: set[str] | None = None,
    require_read: bool = False,
    article: Article | None = None,
) -> ScoreReport:
    """Every case's verdict (the first answer in file order wins) and the metrics against the thresholds.

    `selected` (manifest ids) limits the evaluation to some cases; the report is then partial, as it is when a
    budget stopped some cases, and a partial report never passes the gate. `require_read`: a citation that no
    complete read backs fails its case; `article` tells a read of the corpus's article from another."""
    problems: list[str] = []
    total = len(cases)
    if selected is not None:
        cases = [case for case in cases if case.id in selected]
    # model ids and manifest ids both map to the case, case-insensitively (§14.2)
    lookup = {key.lower(): case for case in cases for key in (case.modelId, case.id)}
    answered_by: list[dict[str, Any]] = []
    for reading in readings:  # loading problems first (§14.1), then id mapping (§14.2)
        problems.extend(reading.problems)
        if reading.answeredBy is not None and reading.answeredBy not in answered_by:
            answered_by.append(reading.answeredBy)
    chosen = _first_answers(readings, lookup, require_read, article, problems)
    failures, budget = {}, {}
    for failure in infra or []:
        case = lookup.get(failure.id.lower())
        if case is not None and case.id not in chosen:
            (budget if failure.kind == "budget" else failures)[case.id] = failure
    verdicts = [
        chosen.get(case.id)
        or (judge(case, None).model_copy(update={"notAnswered": "budget"}) if case.id in budget else None)
        or _with_record(judge(case, None, failures.get(case.id)), getattr(failures.get(case.id), "record", None))
        for case in cases
    ]
    for verdict in verdicts:
        problems.extend(verdict_problems(verdict))
        problems.extend(read_problems(verdict, require_read))
    # As in the reference, a case without an answer is reported but not counted in the rates.
    positive, clean = _tally(verdicts, "positive"), _tally(verdicts, "clean")
    recall = positive.passed / positive.total if positive.total else 0.0
    clean_rate = clean.passed / clean.total if clean.total else 0.0
    for name, value, tally in (("minimumExpectedRecall", recall, positive), ("minimumCleanRate", clean_rate, clean)):
        kind = "positive" if name == "minimumExpectedRecall" else "clean"
        if value < thresholds[name] and any(case.kind == kind for case in verdicts):  # no case selected: no rate
            short = f"{value:.4f}".rstrip("0").rstrip(".") or "0"  # at most four decimals: "0.0909", "0.5", "1"
            counts = f"({tally.passed}/{tally.total})"
            problems.append(f"{THRESHOLD_LABELS[name]} {short} {counts} is below {format_rate(thresholds[name])}.")
    partial = len(cases) < total or bool(budget)
    return ScoreReport(
        passed=not problems and not partial,
        recall=recall,
        cleanRate=clean_rate,
        positive=positive,
        clean=clean,
        thresholds=thresholds,
        infrastructureFailures=len(failures),
        answeredBy=answered_by,
        problems=problems,
        cases=verdicts,
        selectedCases=len(cases),
        totalCases=total,
        partial=partial,
        readEvidence=read_summary(verdicts, require_read),
        notStarted=len(budget) or None,
    )


def _first_answers(
    readings: list[FileReading],
    lookup: dict[str, ReviewCase],
    require_read: bool,
    article: Article | None,
    problems: list[str],
) -> dict[str, CaseVerdict]:
    """Each case's verdict from the first answer in file order; unknown and duplicate ids are problems."""
    chosen: dict[str, CaseVerdict] = {}
    for reading in readings:
        record = reading.record if len(reading.entries) == 1 else None  # a record describes one answer
        for entry in reading.entries:
            case = lookup.get(entry.id.lower())
            if case is None:
                problems.append(f"Results contain unknown case id: {token(entry.id)}")
            elif case.id in chosen:
                problems.append(f"Results contain duplicate case id: {token(entry.id)}")
            else:
                verdict = _with_record(judge(case, entry.findings), record)
                chosen[case.id] = _with_reads(verdict, record, require_read, article)
    return chosen


def _tally(verdicts: list[CaseVerdict], kind: str) -> Tally:
    answered = [v for v in verdicts if v.answered and v.kind == kind]
    return Tally(passed=sum(v.passed for v in answered), total=len(answered))


def _rates(report: ScoreReport) -> str:
    kinds = {case.kind for case in report.cases}
    recall = f"recall={format_rate(report.recall)} ({report.positive.passed}/{report.positive.total})"
    clean = f"clean-rate={format_rate(report.cleanRate)} ({report.clean.passed}/{report.clean.total})"
    return ", ".join(
        (
            recall if "positive" in kinds else "no expected-finding cases selected",
            clean if "clean" in kinds else "no clean cases selected",
        )
    )


def passed_line(report: ScoreReport) -> str:
    return f"Review evaluation PASSED: {_rates(report)}."


def failed_header(report: ScoreReport) -> str:
    if report.partial:
        return (
            f"Review evaluation PARTIAL: {report.selectedCases} of {report.totalCases} case(s) selected, "
            f"{_rates(report)}; a partial run is not a gate result for the corpus"
            + (f", and it has {len(report.problems)} problem(s):" if report.problems else ".")
        )
    return f"Review evaluation FAILED with {len(report.problems)} problem(s):"


def failure_notes(report: ScoreReport) -> list[str]:
    """Lines after the problems: infrastructure failures are not model misses, and neither are cases a budget
    never started."""
    notes = []
    if report.infrastructureFailures:
        notes.append(
            f"{report.infrastructureFailures} case(s) had infrastructure failures, not model misses; rerun to retry"
        )
    if report.notStarted:
        notes.append(
            f"{report.notStarted} case(s) were not started: the run reached its budget; rerun with a larger "
            "--max-cost to answer only those"
        )
    return notes


def score_files(
    cases: list[ReviewCase],
    thresholds: dict[str, float],
    results: list[Path],
    infra: list[Path],
    require_read: bool = False,
    article: Article | None = None,
    selected: set[str] | None = None,
) -> ScoreReport:
    """The score of a run's result and infra files (see aggregate)."""
    failures = [read_infra_file(path) for path in infra]
    readings = [read_result_file(path) for path in results]  # aggregate judges them, with one case lookup
    return aggregate(cases, readings, thresholds, failures, selected, require_read, article)
